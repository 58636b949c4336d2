"""Result records, JSON Schema validation and stores.

A run directory holds ``run.json`` (manifest), ``records.jsonl`` (one record per job) and
``report.json`` (metrics); each is validated against ``schemas/*.schema.json`` (JSON
Schema 2020-12) before it is written. Records are also kept in a content-addressed cache
(``<cache>/<key[:2]>/<key>.json``) so a job already done anywhere is never run again.

Crash safety: records are appended to ``records.jsonl`` one line at a time and flushed;
a run killed with SIGKILL can leave at most one torn last line, which
:func:`load_records` drops. :meth:`RecordLog.finalize` rewrites the file atomically with
exactly one record per key.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import gzip
import hashlib
import json
import os
import tempfile
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path

import platformdirs
from jsonschema import Draft202012Validator, FormatChecker
from referencing import Registry, Resource

from .datasets import sha256_file
from .model import ProcResult, canonical_json, sha256_text

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS_DIR = ROOT / "schemas"
SCHEMA_VERSION = "1.0"
#: Records only: 1.1 (issue 26) adds ``tool_output``, required when the tool ran.
RECORD_SCHEMA_VERSION = "1.1"
#: The folder of tool outputs in a run directory and in the result cache.
OUTPUTS = "outputs"
KINDS = ("predictions", "record", "run", "report", "toolchain")


class ValidationError(ValueError):
    """A document does not match its schema. ``str()`` names the file/line and the field."""


@lru_cache(maxsize=1)
def _registry() -> Registry:
    resources = []
    for kind in KINDS:
        schema = json.loads((SCHEMAS_DIR / f"{kind}.schema.json").read_text())
        resources.append((schema["$id"], Resource.from_contents(schema)))
    return Registry().with_resources(resources)


@lru_cache(maxsize=None)
def validator(kind: str) -> Draft202012Validator:
    """Validator for ``schemas/<kind>.schema.json`` (kind in :data:`KINDS`)."""
    schema = json.loads((SCHEMAS_DIR / f"{kind}.schema.json").read_text())
    return Draft202012Validator(schema, registry=_registry(), format_checker=FormatChecker())


def validate(kind: str, obj, where: str = "") -> None:
    """Validate ``obj`` against the ``kind`` schema.

    Args:
        kind: one of :data:`KINDS`.
        obj: the decoded JSON document.
        where: location for the message, e.g. ``"out/records.jsonl:12"``.

    Raises:
        ValidationError: with the location, the JSON path of the offending field and the
            schema's complaint (the first three errors).
    """
    errors = sorted(validator(kind).iter_errors(obj), key=lambda e: list(e.absolute_path))
    if errors:
        parts = [f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {_message(e)}" for e in errors[:3]]
        more = f" (+{len(errors) - 3} more)" if len(errors) > 3 else ""
        raise ValidationError(f"{where or kind}: does not match {kind}.schema.json: " + "; ".join(parts) + more)


def _message(err) -> str:
    """jsonschema's message, or, when it would quote a huge value, the rule it broke."""
    if len(err.message) <= 300:
        return err.message
    return f"value ({type(err.instance).__name__} of length {len(str(err.instance)):,}) violates " \
           f"{err.validator}={err.validator_value!r}"


def write_json_atomic(path: Path, obj, *, kind: str | None = None) -> None:
    """Validate (if ``kind``) then write ``obj`` as indented JSON via temp file + rename.

    Raises:
        ValidationError: the document is invalid; nothing is written.
    """
    if kind:
        validate(kind, obj, str(path))
    write_text_atomic(path, json.dumps(obj, indent=2, sort_keys=True, allow_nan=False) + "\n")


def umask() -> int:
    """The process's umask, read without changing it (Linux: ``/proc/self/status``)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    old = os.umask(0o022)  # elsewhere: set and restore (not atomic, but only where /proc is missing)
    os.umask(old)
    return old


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temporary file in the same folder, then
    rename), with the umask's permissions."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o666 & ~umask())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (temp file in the same directory, fsync, rename),
    with the mode an ordinary ``open`` would give (0666 less the umask), not the temp
    file's 0600."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~umask())
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def record_lines(path: Path):
    """``(line number, raw bytes, record or None, problem or None)`` per non-empty line of
    a ``records.jsonl``: each line decoded as strict UTF-8, parsed as JSON and checked
    against record.schema.json; a line without a newline at the end of the file is
    reported as cut short (a killed run's last write)."""
    data = Path(path).read_bytes()
    lines = data.split(b"\n")
    for i, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            rec = json.loads(raw.decode("utf-8"))
            validate("record", rec, f"{path}:{i}")
        except UnicodeDecodeError as exc:
            yield i, raw, None, f"not UTF-8 (byte {exc.start})"
        except json.JSONDecodeError as exc:
            yield i, raw, None, ("cut short (no newline): the last write of a killed run" if i == len(lines)
                                 else f"not valid JSON: {exc.msg}")
        except ValidationError as exc:
            yield i, raw, None, str(exc).split(": ", 1)[-1]
        else:
            yield i, raw, rec, None


def load_records(path: Path) -> list[dict]:
    """Read a ``records.jsonl``, dropping a torn last line left by a killed run.

    Raises:
        ValidationError: another line is not a valid record (names the file and line).
    """
    path = Path(path)
    if not path.exists():
        return []
    out = []
    for i, _, rec, problem in record_lines(path):
        if problem and problem.startswith("cut short"):
            continue
        if problem:
            raise ValidationError(f"{path}:{i}: {problem}")
        out.append(rec)
    return out


class RecordLog:
    """Append-only ``records.jsonl`` of a run directory.

    ``done`` maps job key -> record for records already present (from an interrupted
    run); infra errors are not in ``done`` so that they are retried.
    """

    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.records: dict[str, dict] = {}
        #: ``file:line: problem`` for each line set aside (see :attr:`rejected_path`).
        self.set_aside: list[str] = []
        if self.path.exists():
            bad = []
            for i, raw, rec, problem in record_lines(self.path):
                if problem:
                    bad.append(raw)
                    self.set_aside.append(f"{self.path}:{i}: {problem}")
                else:
                    self.records[rec["key"]] = rec
            if bad:  # kept byte for byte, never rewritten: their jobs simply run again
                with open(self.rejected_path, "ab") as fh:
                    fh.write(b"".join(raw + b"\n" for raw in bad))
            self._rewrite()
        self._fh = open(self.path, "a", encoding="utf-8")

    @property
    def rejected_path(self) -> Path:
        """Where lines of records.jsonl that are not valid records are set aside."""
        return self.path.with_name("records.rejected.jsonl")

    @property
    def done(self) -> dict[str, dict]:
        """Key -> record of the jobs that need not run again."""
        return {k: r for k, r in self.records.items() if r.get("verdict") != "infra_error"}

    def append(self, record: dict) -> None:
        """Validate and append one record (flushed, so a SIGKILL after it keeps it).

        Raises:
            ValidationError: the record does not match record.schema.json.
        """
        validate("record", record, f"{self.path} (job {record.get('key', '?')[:12]})")
        self._fh.write(json.dumps(record, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n")
        self._fh.flush()
        self.records[record["key"]] = record

    def finalize(self, order: list[str] | None = None) -> list[dict]:
        """Rewrite the file atomically with one record per key (in ``order`` if given).

        Returns:
            The records written.
        """
        self._fh.close()
        self._rewrite(order)
        self._fh = open(self.path, "a", encoding="utf-8")
        return self.ordered(order)

    def ordered(self, order: list[str] | None = None) -> list[dict]:
        """Records in ``order`` (keys), then any others sorted by key."""
        order = [k for k in dict.fromkeys(order or []) if k in self.records]
        rest = sorted(set(self.records) - set(order))
        return [self.records[k] for k in order + rest]

    def _rewrite(self, order: list[str] | None = None) -> None:
        text = "".join(json.dumps(r, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n" for r in self.ordered(order))
        write_text_atomic(self.path, text)

    def close(self) -> None:
        """Close the file handle."""
        self._fh.close()


def default_cache_dir() -> Path:
    """``VERIKIT_CACHE`` or ``<user cache dir>/verikit/results``."""
    env = os.environ.get("VERIKIT_CACHE")
    return Path(env) if env else Path(platformdirs.user_cache_dir("verikit")) / "results"


class RunDirBusy(RuntimeError):
    """Another verikit process is using the run directory (message names its PID)."""


LOCK_NAME = ".verikit.lock"


@contextlib.contextmanager
def run_dir_lock(out: Path):
    """Create ``out`` if needed and hold an exclusive lock on it for the ``with`` block
    (``out/.verikit.lock``, ``flock``: released by the kernel even when the holder is
    killed), so that one run at a time writes a run directory.

    Raises:
        RunDirBusy: another process holds the lock (the message says which PID).
        OSError: ``out`` cannot be created or written (a file, a read-only filesystem).
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    fd = os.open(out / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip() or "unknown"
            raise RunDirBusy(f"{out} is in use by another verikit run (PID {holder}); wait for it to end, "
                             f"or give another --out") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield out
    finally:
        os.close(fd)  # closing the descriptor releases the lock


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
            FileNotFoundError: no such output; ValueError: the file does not decompress,
                is not an output, or its content's sha256 is not its name (edited).
        """
        try:
            raw = gzip.decompress(self._path(sha).read_bytes())
        except (OSError, EOFError) as exc:
            if isinstance(exc, FileNotFoundError):
                raise
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
        """Copy one output file from ``other`` (the cache into a run directory)."""
        if self.has(sha):
            return
        self.put(other.get(sha))


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

    def clear(self) -> int:
        """Remove every entry. Returns how many."""
        keys = self.keys()
        for key in keys:
            self._path(key).unlink(missing_ok=True)
        for f in self.outputs.root.glob("??/*.json.gz") if self.outputs.root.is_dir() else ():
            f.unlink(missing_ok=True)
        return len(keys)


def record_key(record: dict) -> str:
    """The job key a record must carry: :meth:`harness.model.Job.key` recomputed from the
    record's ``verification_key``, ``task_id`` and candidate (model, sample, origin)."""
    c = record["candidate"]
    return sha256_text(canonical_json({"verification": record["verification_key"], "task_id": record["task_id"],
                                       "model": c["model"], "sample": c["sample"], "origin": c["origin"]}))


#: Verifiers whose ``verified`` means "every goal proved" (Frama-C WP); elsewhere the
#: goal counts mean something else (Dafny intent: tests passed by a spec).
ALL_GOALS_VERIFIERS = ("framac",)


def record_inconsistencies(record: dict) -> list[str]:
    """What in one record contradicts itself: for a verifier of
    :data:`ALL_GOALS_VERIFIERS`, a ``verified`` verdict with goals left unproved.
    Returns an empty list for a consistent record."""
    goals = record.get("goals") or {}
    if (record.get("verifier", {}).get("name") in ALL_GOALS_VERIFIERS and record.get("verdict") == "verified"
            and goals and goals.get("proved") != goals.get("total")):
        return [f"verdict verified but {goals.get('proved')}/{goals.get('total')} goals proved"]
    return []


SUMS = "SHA256SUMS"
SUMMED = ("records.jsonl", "report.json", "run.json")


def write_sums(out: Path) -> None:
    """Write ``out/SHA256SUMS`` (``sha256sum`` format: ``<hex>  <name>``) for
    records.jsonl, report.json and run.json. A run writes it last: its presence says the
    run directory is complete, its hashes that nothing was edited since (``sha256sum -c``
    checks it too)."""
    out = Path(out)
    write_text_atomic(out / SUMS, "".join(f"{sha256_file(out / n)}  {n}\n" for n in SUMMED))


def check_sums(out: Path) -> list[str]:
    """Problems with ``out/SHA256SUMS``: missing (the run did not finish, or the directory
    was made by hand), an entry missing or unexpected, or a hash that differs (the file
    was edited). A listed file that is missing is left to :func:`validate_run_dir`."""
    out = Path(out)
    f = out / SUMS
    if not f.exists():
        return [f"{f}: missing (the run did not finish, or its files were not written by verikit)"]
    problems, listed = [], {}
    for i, line in enumerate(f.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        hexdigest, _, name = line.partition("  ")
        listed[name] = i
        target = out / name
        if "/" in name or name not in SUMMED:
            problems.append(f"{f}:{i}: unexpected entry {name!r}")
        elif not target.exists():
            continue  # reported as missing by validate_run_dir
        elif sha256_file(target) != hexdigest:
            problems.append(f"{target}: its sha256 differs from {SUMS} (edited after the run wrote it)")
    problems += [f"{f}: no entry for {n}" for n in SUMMED if n not in listed]
    return problems


def run_id_of(run_dir: Path, run: dict) -> str:
    """The run's id: its UTC finish time and a hash of its content (SHA256SUMS, which
    covers run.json, records.jsonl and report.json), so that the same run has the same id
    wherever it is published from. Raises OSError when SHA256SUMS is missing."""
    digest = hashlib.sha256((Path(run_dir) / SUMS).read_bytes()).hexdigest()[:10]
    finished = datetime.fromisoformat(run["finished_at"]).astimezone(timezone.utc)
    return f"{finished:%Y%m%dT%H%M%SZ}-{digest}"


def validate_run_dir(path: Path) -> list[str]:
    """Check a run directory: run.json, records.jsonl (every line), report.json.

    Returns:
        A list of problems (empty when the directory is valid): missing files, schema
        errors with file:line, duplicate job keys, records whose count disagrees with
        run.json.
    """
    path = Path(path)
    problems: list[str] = []
    docs = {}
    for name, kind in (("run.json", "run"), ("report.json", "report")):
        f = path / name
        try:
            docs[name] = json.loads(f.read_text())
            validate(kind, docs[name], str(f))
        except FileNotFoundError:
            problems.append(f"{f}: missing")
        except json.JSONDecodeError as exc:
            problems.append(f"{f}:{exc.lineno}: not valid JSON: {exc.msg}")
        except ValidationError as exc:
            problems.append(str(exc))
    rec_path = path / "records.jsonl"
    keys: dict[str, int] = {}
    if not rec_path.exists():
        problems.append(f"{rec_path}: missing")
    else:
        for i, _, rec, problem in record_lines(rec_path):
            if problem:
                problems.append(f"{rec_path}:{i}: {problem}")
                continue
            problems += [f"{rec_path}:{i}: {p}" for p in record_inconsistencies(rec)]
            if rec["key"] != record_key(rec):
                problems.append(f"{rec_path}:{i}: its key is not the one its verification key, task id and "
                                "candidate give (the record was edited)")
            if rec["key"] in keys:
                problems.append(f"{rec_path}:{i}: duplicate job key {rec['key'][:12]} (first at line {keys[rec['key']]})")
            keys.setdefault(rec["key"], i)
    problems += check_sums(path)
    run = docs.get("run.json")
    if run and rec_path.exists() and run.get("counts", {}).get("jobs") != len(keys):
        problems.append(f"{path / 'run.json'}: counts.jobs={run.get('counts', {}).get('jobs')} "
                        f"but records.jsonl has {len(keys)} distinct jobs")
    return problems


def record_identity(rec: dict) -> tuple:
    """What a record is the verdict of, whatever the toolchain or code: ``(mode,
    task_id, model, sample, origin)``."""
    c = rec["candidate"]
    return (rec["mode"], rec["task_id"], c["model"], c["sample"], c["origin"])


def record_outcome(rec: dict) -> dict:
    """What a record found: ``{"verdict", "goals.proved", "goals.total"}``."""
    goals = rec.get("goals") or {}
    return {"verdict": rec["verdict"], "goals.proved": goals.get("proved"), "goals.total": goals.get("total")}


#: Default tolerance of :func:`compare_runs` on numbers of report.json (metrics, the
#: reproduced figures): absolute. The kit's metrics are deterministic (seeded bootstrap),
#: so only float formatting across platforms may move them; a verdict or a goal count
#: is always compared exactly.
TOLERANCE = 1e-9


def _leaves(obj, prefix: str = "") -> dict[str, object]:
    """``{"a.b.0": leaf}`` of nested dicts and lists."""
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            out.update(_leaves(v, f"{prefix}{k}."))
        return out
    if isinstance(obj, list):
        out = {}
        for i, v in enumerate(obj):
            out.update(_leaves(v, f"{prefix}{i}."))
        return out
    return {prefix.rstrip("."): obj}


def _same(a, b, tolerance: float) -> bool:
    if isinstance(a, bool) or isinstance(b, bool) or not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
        return a == b
    return abs(a - b) <= tolerance


def _figure_key(f: dict) -> str:
    return str(f.get("name") or " / ".join(str(f.get(k, "")) for k in ("table", "row", "column")))


def compare_runs(expected: Path, actual: Path, *, tolerance: float = TOLERANCE,
                 subset: bool = False) -> tuple[list[tuple[str, str, str]], dict]:
    """Compare what two run directories establish: per job identity (mode, task, model,
    sample, origin) the verdict and the goals proved/total **exactly** (a canary's verdict:
    any of the verdicts its expected report allows it, e.g. a non-terminating proof's
    ``timeout`` or ``memout``, whichever limit the machine hits first), jobs present in
    only one of them, and report.json's ``metrics`` and ``reproduction`` (summary, and
    each figure's reproduced value and status) with numbers within ``tolerance``
    (absolute). Timings, keys, fingerprints, reasons and provenance are not compared
    (they change with the machine and the kit's code). With ``subset``, ``actual`` ran
    part of ``expected``'s jobs (a smoke test): only its records are compared (each must
    be in ``expected``), and report numbers are not (they are over other records).

    Returns:
        ``(differences, counts)``: differences as ``(what, expected, actual)`` strings
        (empty: the runs agree); counts ``{"records", "verdicts_equal", "goals_equal",
        "numbers", "numbers_equal"}``.

    Raises:
        ValidationError: a records.jsonl line is not JSON; OSError: a file is unreadable.
    """
    expected, actual = Path(expected), Path(actual)
    try:  # a canary's claim is that it is rejected: any verdict its expected set allows (a loop: timeout or memout)
        canaries = {(c["mode"], c["model"]): set(c["expected"]) for c in json.loads(
            (expected / "report.json").read_text(encoding="utf-8")).get("canaries", {}).get("results", [])}
    except (OSError, ValueError, KeyError, TypeError):
        canaries = {}
    ref = {record_identity(r): r for r in load_records(expected / "records.jsonl")}
    new = {record_identity(r): r for r in load_records(actual / "records.jsonl")}
    diffs: list[tuple[str, str, str]] = []
    if subset:
        ref = {k: v for k, v in ref.items() if k in new}
    diffs += [(" / ".join(map(str, k)), "present", "missing") for k in sorted(set(ref) - set(new), key=str)]
    diffs += [(" / ".join(map(str, k)), "absent", "present") for k in sorted(set(new) - set(ref), key=str)]
    counts = {"records": len(ref), "verdicts_equal": 0, "goals_equal": 0, "numbers": 0, "numbers_equal": 0}
    for k in sorted(set(ref) & set(new), key=str):
        a, b = record_outcome(ref[k]), record_outcome(new[k])
        allowed = canaries.get((k[0], k[2]))
        if allowed and a["verdict"] in allowed and b["verdict"] in allowed:
            b = {**b, "verdict": a["verdict"]}
        counts["verdicts_equal"] += a["verdict"] == b["verdict"]
        counts["goals_equal"] += (a["goals.proved"], a["goals.total"]) == (b["goals.proved"], b["goals.total"])
        for field_name in a:
            if a[field_name] != b[field_name]:
                diffs.append((f"{' / '.join(map(str, k))}: {field_name}", str(a[field_name]), str(b[field_name])))
    if subset:
        return diffs, counts
    reports = []
    for d in (expected, actual):
        try:
            reports.append(json.loads((d / "report.json").read_text(encoding="utf-8")))
        except FileNotFoundError:
            reports.append({})
    views = []
    for r in reports:
        repro = r.get("reproduction") or {}
        view = {"metrics": r.get("metrics") or {}, "reproduction.summary": repro.get("summary")}
        view["reproduction.figures"] = {_figure_key(f): {"reproduced": f.get("reproduced"), "status": f.get("status")}
                                        for f in repro.get("figures") or []}
        views.append(_leaves(view))
    for path in sorted(set(views[0]) | set(views[1])):
        if ".per_model.canary:" in path:  # a canary's verdict may be any its set allows (above)
            continue
        a, b = views[0].get(path, "absent"), views[1].get(path, "absent")
        counts["numbers"] += 1
        if _same(a, b, tolerance):
            counts["numbers_equal"] += 1
        else:
            diffs.append((f"report.json {path}", json.dumps(a), json.dumps(b)))
    return diffs, counts


# --- the S3 store ---------------------------------------------------------------------------

RUN_FILES = ("run.json", "records.jsonl", "report.json", "SHA256SUMS")


def parse_s3_uri(uri: str) -> tuple[str, str]:
    """``s3://bucket/some/prefix`` -> ``("bucket", "some/prefix")`` (no trailing slash).

    Raises:
        ValueError: not an ``s3://`` URI with a bucket.
    """
    if not uri.startswith("s3://") or not uri[5:].split("/", 1)[0]:
        raise ValueError(f"{uri!r} is not an S3 URI (s3://bucket/prefix)")
    bucket, _, prefix = uri[5:].partition("/")
    return bucket, prefix.strip("/")


class S3Store:
    """A run's objects under ``s3://bucket/prefix``: the same record format and schema
    checks as a run directory, one object per record (``records/<job key>.json``).

    An S3 PUT is atomic: an object is there whole or not at all, so a worker killed while
    writing leaves no torn record. The client is ``boto3.client("s3")`` (credentials and
    region the usual way; ``AWS_ENDPOINT_URL`` points it at a stand-in such as moto).

    Attributes:
        uri: the run's S3 URI; requests: API calls made so far (the batch benchmark
            counts S3 round trips per job with it).
    """

    def __init__(self, uri: str, client=None):
        self.bucket, self.prefix = parse_s3_uri(uri)
        self.uri = f"s3://{self.bucket}/{self.prefix}" if self.prefix else f"s3://{self.bucket}"
        if client is None:
            import boto3

            client = boto3.client("s3")
        self.client = client
        self.requests = 0

    def key(self, name: str) -> str:
        """The object key of ``name`` (relative to the run)."""
        return f"{self.prefix}/{name}" if self.prefix else name

    def put_bytes(self, name: str, data: bytes) -> None:
        self.requests += 1
        self.client.put_object(Bucket=self.bucket, Key=self.key(name), Body=data)

    def put_json(self, name: str, obj, *, kind: str | None = None) -> None:
        """Validate (if ``kind``) and upload ``obj`` as JSON. Raises ValidationError."""
        if kind:
            validate(kind, obj, f"{self.uri}/{name}")
        self.put_bytes(name, (json.dumps(obj, indent=2, sort_keys=True, allow_nan=False) + "\n").encode())

    def get_bytes(self, name: str) -> bytes | None:
        """The object's content, or None when it does not exist."""
        self.requests += 1
        try:
            return self.client.get_object(Bucket=self.bucket, Key=self.key(name))["Body"].read()
        except self.client.exceptions.NoSuchKey:
            return None

    def get_json(self, name: str):
        """The object parsed as JSON, or None when it does not exist. Raises ValueError
        (naming the URI) when it is not JSON."""
        data = self.get_bytes(name)
        if data is None:
            return None
        try:
            return json.loads(data)
        except ValueError as exc:
            raise ValueError(f"{self.uri}/{name}: not JSON: {exc}") from None

    def exists(self, name: str) -> bool:
        from botocore.exceptions import ClientError

        self.requests += 1
        try:
            self.client.head_object(Bucket=self.bucket, Key=self.key(name))
            return True
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
                return False
            raise

    def names(self, under: str = "") -> list[str]:
        """Names (relative to the run) of every object under ``under``."""
        out = []
        for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket,
                                                                          Prefix=self.key(under)):
            self.requests += 1
            out += [o["Key"][len(self.key("")):] for o in page.get("Contents", [])]
        return out

    def put_record(self, record: dict) -> str:
        """Validate ``record`` and put it as ``records/<key>.json``; returns the name.

        Raises:
            ValidationError: not a valid record, or its key is not the one its fields give.
        """
        validate("record", record, f"record {record.get('key')}")
        if record_key(record) != record["key"]:
            raise ValidationError(f"record {record['key']}: key is not the one its fields give ({record_key(record)})")
        name = f"records/{record['key']}.json"
        self.put_bytes(name, canonical_json(record).encode())
        return name

    def records(self) -> tuple[dict[str, dict], list[str]]:
        """Every record object, checked: ``({key: record}, problems)``. An object that is
        not JSON, not a valid record, whose key is not the one its fields give, or whose
        name is not its key is left out and named in ``problems``."""
        found, problems = {}, []
        for name in self.names("records/"):
            if not name.endswith(".json"):
                continue
            where = f"{self.uri}/{name}"
            try:
                rec = self.get_json(name)
                validate("record", rec, where)
            except (ValueError, ValidationError) as exc:
                problems.append(str(exc))
                continue
            key = name[len("records/"):-len(".json")]
            if rec["key"] != key or record_key(rec) != key:
                problems.append(f"{where}: the record's key {rec['key'][:12]} is not its name or not the one its "
                                f"fields give")
                continue
            found[key] = rec
        return found, problems

    def put_output(self, outputs: OutputStore, sha: str) -> None:
        """Put one tool output file of ``outputs`` as ``outputs/<sha[:2]>/<sha>.json.gz``."""
        self.put_bytes(OutputStore.name(sha), outputs.read_bytes(sha))

    def get_outputs(self, outputs: OutputStore, shas) -> list[str]:
        """Copy the tool outputs ``shas`` into ``outputs``; returns those not in the store."""
        missing = []
        for sha in sorted(set(shas)):
            data = self.get_bytes(OutputStore.name(sha))
            if data is None:
                missing.append(sha)
            else:
                outputs.write_bytes(sha, data)
        return missing

    def download_run(self, dest: Path) -> list[str]:
        """Copy the run files that exist (``RUN_FILES``) into ``dest``, and the tool outputs
        its records name; returns the run files' names."""
        dest.mkdir(parents=True, exist_ok=True)
        got = []
        for name in RUN_FILES:
            data = self.get_bytes(name)
            if data is not None:
                (dest / name).write_bytes(data)
                got.append(name)
        if (dest / "records.jsonl").exists():
            shas = [r["tool_output"]["sha256"] for r in load_records(dest / "records.jsonl") if r.get("tool_output")]
            self.get_outputs(OutputStore(dest / OUTPUTS), shas)
        return got

    def upload_run(self, src: Path) -> None:
        """Put the run files of directory ``src`` next to the records, and its report.html
        (a view, not checked by SHA256SUMS) when there is one; SHA256SUMS last."""
        outputs = OutputStore(src / OUTPUTS)
        if (src / "records.jsonl").exists():
            for r in load_records(src / "records.jsonl"):
                if r.get("tool_output") and outputs.has(r["tool_output"]["sha256"]):
                    self.put_output(outputs, r["tool_output"]["sha256"])
        for name in (*RUN_FILES[:-1], "report.html", RUN_FILES[-1]):
            if (src / name).exists():
                self.put_bytes(name, (src / name).read_bytes())
