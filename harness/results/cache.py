"""The local content-addressed stores: the tools' outputs (:class:`OutputStore`) and the
result cache of records and task runs (:class:`ResultCache`), so a job or a task run
already done anywhere is never run again."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import os
from pathlib import Path

import platformdirs

from ..model import ProcResult, canonical_json
from .files import write_bytes_atomic, write_text_atomic
from .records import record_inconsistencies
from .schema import ValidationError, validate

#: The folder of tool outputs in a run directory and in the result cache.
OUTPUTS = "outputs"
#: The folder of task-run entries in the result cache.
TASK_RUNS = "task-runs"


def default_cache_dir() -> Path:
    """``VERIKIT_CACHE`` or ``<user cache dir>/verikit/results``."""
    env = os.environ.get("VERIKIT_CACHE")
    return Path(env) if env else Path(platformdirs.user_cache_dir("verikit")) / "results"


class OutputStore:
    """The tools' own outputs, content-addressed: ``<root>/<sha[:2]>/<sha>.json.gz``.

    An output is a :class:`~harness.model.ProcResult` (argv, exit status, stdout, stderr,
    the collected files, the sandbox's own ending) as canonical JSON (files base64), stored
    gzip'd under the sha256 of the uncompressed JSON. A record names its output
    (``tool_output``: ``{"sha256", "bytes"}``), so that its verdict can be re-derived with
    the current parser and judge without running the tool (``validate``, a cache read).
    """

    def __init__(self, root: Path):
        self.root = Path(root)

    def _path(self, sha: str) -> Path:
        return self.root / sha[:2] / f"{sha}.json.gz"

    @staticmethod
    def name(sha: str) -> str:
        """The relative file name of an output: ``outputs/<sha[:2]>/<sha>.json.gz``."""
        return f"{OUTPUTS}/{sha[:2]}/{sha}.json.gz"

    def read_bytes(self, sha: str) -> bytes:
        """The stored (gzip'd) file of an output, as is. Raises OSError."""
        return self._path(sha).read_bytes()

    def write_bytes(self, sha: str, data: bytes) -> None:
        """Store an output file received as is (a batch collect); checked on read."""
        path = self._path(sha)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(path, data)

    @staticmethod
    def encode(proc: ProcResult) -> bytes:
        """The canonical JSON bytes of ``proc`` (what the sha256 is taken of)."""
        doc = {k: v for k, v in proc.__dict__.items() if k != "files"}
        doc["files"] = {n: base64.b64encode(b if isinstance(b, bytes) else str(b).encode()).decode()
                        for n, b in sorted(proc.files.items())}
        return canonical_json(doc).encode()

    def put(self, proc: ProcResult) -> dict:
        """Store ``proc``; returns the record's ``tool_output`` (``{"sha256", "bytes"}``).
        Raises OSError when the file cannot be written."""
        raw = self.encode(proc)
        sha = hashlib.sha256(raw).hexdigest()
        path = self._path(sha)
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            write_bytes_atomic(path, gzip.compress(raw, mtime=0))
        return {"sha256": sha, "bytes": len(raw)}

    def has(self, sha: str) -> bool:
        """True when an output file of that name exists (its content is not checked)."""
        return self._path(sha).exists()

    def get(self, sha: str) -> ProcResult:
        """The output stored under ``sha``.

        Raises:
            FileNotFoundError: no such output; ValueError: as :meth:`decode`.
        """
        try:
            data = self.read_bytes(sha)
        except OSError as exc:
            if isinstance(exc, FileNotFoundError):
                raise
            raise ValueError(f"{self._path(sha)}: unreadable ({exc})") from None
        return self.decode(sha, data)

    def decode(self, sha: str, data: bytes) -> ProcResult:
        """The output in ``data``, the stored (gzip'd) file of ``sha`` (:meth:`read_bytes`).

        Raises:
            ValueError: it does not decompress, is not an output, or its content's sha256
                is not ``sha`` (edited).
        """
        try:
            raw = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise ValueError(f"{self._path(sha)}: unreadable ({exc})") from None
        if hashlib.sha256(raw).hexdigest() != sha:
            raise ValueError(f"{self._path(sha)}: its content's sha256 is not its name (edited)")
        try:
            doc = json.loads(raw)
            doc["files"] = {n: base64.b64decode(b) for n, b in doc["files"].items()}
            return ProcResult(**doc)
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{self._path(sha)}: not a tool output ({exc})") from None

    def copy_from(self, other: "OutputStore", sha: str) -> None:
        """Copy one output file from ``other`` (a run directory into the cache), checked
        (:meth:`decode`) and written as is. Raises OSError, ValueError."""
        if self.has(sha):
            return
        data = other.read_bytes(sha)
        other.decode(sha, data)
        self.write_bytes(sha, data)


class ResultCache:
    """Content-addressed cache of records: ``<root>/<key[:2]>/<key>.json``.

    The cache is only a speed-up: an entry is used only when it is a schema-valid record
    of that key whose verdict agrees with its own goal counts; any other entry is
    ignored (its job re-runs) and named in :attr:`problems`. Infra errors are never
    stored (they must be retried).

    Attributes:
        problems: messages about entries ignored on read or not written (e.g. a full
            disk), for the run to show as warnings.
    """

    def __init__(self, root: Path | None = None):
        self.root = Path(root) if root else default_cache_dir()
        self.problems: list[str] = []
        #: the tool outputs the entries name (``tool_output``); an entry is used only
        #: when its verdict re-derived from its output is the one it says (the executor)
        self.outputs = OutputStore(self.root / OUTPUTS)

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict | None:
        """The cached record for ``key``, or None when there is none or the entry cannot
        be trusted (unreadable, not JSON, schema-invalid, another key, or a verdict its
        goal counts contradict: see :func:`record_inconsistencies`)."""
        path = self._path(key)
        try:
            rec = json.loads(path.read_text(encoding="utf-8"))
        except (FileNotFoundError, NotADirectoryError):  # no entry (or no cache directory)
            return None
        except (OSError, ValueError) as exc:
            self.problems.append(f"{path}: ignored, unreadable ({exc})")
            return None
        why = []
        try:
            validate("record", rec, str(path))
        except ValidationError as exc:
            why.append(str(exc).splitlines()[0])
        if not why:
            why = ([f"its key is {rec.get('key')!r}"] if rec.get("key") != key else []) + record_inconsistencies(rec)
        if why:
            self.problems.append(f"{path}: ignored, the job re-runs: {'; '.join(why)}")
            return None
        return rec

    def put(self, key: str, record: dict) -> None:
        """Store ``record`` under ``key`` atomically (skipped for ``infra_error``). A
        failure to write (full disk, read-only cache) is recorded in :attr:`problems`,
        never raised: the record itself is already in the run directory."""
        if record["verdict"] == "infra_error":
            return
        try:
            write_text_atomic(self._path(key), json.dumps({**record, "key": key}, sort_keys=True, allow_nan=False) + "\n")
        except OSError as exc:
            self.problems.append(f"result cache {self.root}: not written ({exc.strerror or exc})")

    def keys(self) -> list[str]:
        """The keys of all entries (file names ``<key>.json`` under the root)."""
        return sorted(p.stem for p in self.root.glob("??/*.json")) if self.root.is_dir() else []

    def verify(self) -> tuple[int, list[str]]:
        """Read every entry as a run would. Returns ``(good entries, problems)``."""
        self.problems = []
        good = sum(self.get(k) is not None for k in self.keys())
        return good, list(self.problems)

    def prune(self) -> int:
        """Remove the entries a run would ignore (see :meth:`get`). Returns how many."""
        removed = 0
        for key in self.keys():
            if self.get(key) is None:
                self._path(key).unlink(missing_ok=True)
                removed += 1
        return removed

    def _task_run_path(self, key: str) -> Path:
        return self.root / TASK_RUNS / key[:2] / f"{key}.json"

    def get_task_run(self, key: str) -> ProcResult | None:
        """The output of the task run ``key`` (a run that depends on the task alone, e.g.
        CASP's task-soundness smoke tests: :meth:`harness.executor.Executor.run`), or None
        when there is none or it cannot be trusted (unreadable, another key, an output
        that is missing or edited: named in :attr:`problems`, and the task run is made
        again)."""
        path = self._task_run_path(key)
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except (FileNotFoundError, NotADirectoryError):
            return None
        except (OSError, ValueError) as exc:
            self.problems.append(f"{path}: ignored, unreadable ({exc})")
            return None
        try:
            if entry.get("key") != key:
                raise ValueError(f"its key is {entry.get('key')!r}")
            return self.outputs.get(entry["tool_output"]["sha256"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            self.problems.append(f"{path}: ignored, the task run is made again: {exc}")
            return None

    def put_task_run(self, key: str, proc: ProcResult) -> None:
        """Store the output of task run ``key`` (its index entry atomically, after its
        output). A failure to write is recorded in :attr:`problems`, never raised."""
        try:
            out = self.outputs.put(proc)
            write_text_atomic(self._task_run_path(key), json.dumps({"key": key, "tool_output": out}, sort_keys=True) + "\n")
        except OSError as exc:
            self.problems.append(f"result cache {self.root}: task run not written ({exc.strerror or exc})")

    def clear(self) -> int:
        """Remove every entry (records and task runs). Returns how many records."""
        keys = self.keys()
        for key in keys:
            self._path(key).unlink(missing_ok=True)
        for f in (self.root / TASK_RUNS).glob("??/*.json") if (self.root / TASK_RUNS).is_dir() else ():
            f.unlink(missing_ok=True)
        for f in self.outputs.root.glob("??/*.json.gz") if self.outputs.root.is_dir() else ():
            f.unlink(missing_ok=True)
        return len(keys)
