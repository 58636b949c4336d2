"""Result records: ``records.jsonl`` read line by line (a torn last line dropped) and
appended to (:class:`RecordLog`), a record's job key and what in it contradicts itself,
what a record is the verdict of (:func:`record_identity`) and found
(:func:`record_outcome`), and whether its candidate is a canary (:func:`is_canary`)."""

from __future__ import annotations

import contextlib
import gc
import json
from pathlib import Path

from ..model import canonical_json, sha256_text
from .files import write_text_atomic
from .schema import ValidationError, validate

#: The model name of every canary candidate starts with this (``canary:<name>``): a
#: candidate whose verdict the kit knows in advance, run to show that the verifier
#: rejects what it must; it is reported on its own and left out of every metric.
CANARY_PREFIX = "canary:"


def is_canary(model: str) -> bool:
    """Whether a candidate's model name (a record's ``candidate.model``, a
    ``Candidate.model``) is a canary's: it starts with :data:`CANARY_PREFIX`.

    Raises:
        AttributeError: ``model`` is not a str (e.g. a whole record was passed).
    """
    return model.startswith(CANARY_PREFIX)


@contextlib.contextmanager
def gc_paused():
    """The cyclic garbage collector off for the ``with`` block (back on after it, if it
    was on): decoding a large records.jsonl makes millions of containers and no cycle,
    and the collector's passes over them took as long as the decoding itself."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def record_lines(path: Path):
    """``(line number, raw bytes, record or None, problem or None)`` per non-empty line of
    a ``records.jsonl``: each line decoded as strict UTF-8, parsed as JSON and checked
    against record.schema.json; a line without a newline at the end of the file is
    reported as cut short (a killed run's last write). The whole file is read and
    checked before the first line is given (:func:`gc_paused`)."""
    data = Path(path).read_bytes()
    lines = data.split(b"\n")
    out = []
    with gc_paused():
        for i, raw in enumerate(lines, 1):
            if not raw.strip():
                continue
            try:
                rec = json.loads(raw.decode("utf-8"))
                validate("record", rec, f"{path}:{i}", decoded=True)
            except UnicodeDecodeError as exc:
                out.append((i, raw, None, f"not UTF-8 (byte {exc.start})"))
            except json.JSONDecodeError as exc:
                out.append((i, raw, None, ("cut short (no newline): the last write of a killed run" if i == len(lines)
                                           else f"not valid JSON: {exc.msg}")))
            except ValidationError as exc:
                out.append((i, raw, None, str(exc).split(": ", 1)[-1]))
            else:
                out.append((i, raw, rec, None))
    yield from out


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
        self._lines: dict[str, tuple[dict, str]] = {}  # key -> (record, its line) as appended
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
        """Validate and append one record (flushed, so a SIGKILL after it keeps it). The
        record is not changed afterwards: :meth:`finalize` writes the line appended.

        Raises:
            ValidationError: the record does not match record.schema.json.
        """
        validate("record", record, f"{self.path} (job {record.get('key', '?')[:12]})")
        line = _line(record)
        self._fh.write(line)
        self._fh.flush()
        self.records[record["key"]] = record
        self._lines[record["key"]] = (record, line)

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
        write_text_atomic(self.path, "".join(self._line_of(r) for r in self.ordered(order)))
        self._lines = {}  # written: the next rewrite encodes again

    def _line_of(self, record: dict) -> str:
        """The record's line: as :meth:`append` wrote it, or encoded now (a record read
        from the file, or another object under its key)."""
        got = self._lines.get(record["key"])
        return got[1] if got is not None and got[0] is record else _line(record)

    def close(self) -> None:
        """Close the file handle."""
        self._fh.close()


def _line(record: dict) -> str:
    """A record's line in records.jsonl."""
    return json.dumps(record, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"


def record_key(record: dict) -> str:
    """The job key a record must carry: :meth:`harness.model.Job.key` recomputed from the
    record's ``verification_key``, ``task_id`` and candidate (model, sample, origin)."""
    c = record["candidate"]
    return sha256_text(canonical_json({"verification": record["verification_key"], "task_id": record["task_id"],
                                       "model": c["model"], "sample": c["sample"], "origin": c["origin"]}))


def record_inconsistencies(record: dict) -> list[str]:
    """What in one record contradicts itself: a ``verified`` verdict with goals left
    unproved, where the verifier says its ``verified`` means every goal proved (the
    record's ``verifier.all_goals``; Frama-C WP says so, Dafny intent's goal counts mean
    tests passed by a spec and do not). Records made before the flag existed are not
    checked here (``validate`` re-derives their verdicts from the tool output anyway).
    Returns an empty list for a consistent record."""
    goals = record.get("goals") or {}
    if (record.get("verifier", {}).get("all_goals") and record.get("verdict") == "verified"
            and goals and goals.get("proved") != goals.get("total")):
        return [f"verdict verified but {goals.get('proved')}/{goals.get('total')} goals proved"]
    return []


def record_identity(rec: dict) -> tuple:
    """What a record is the verdict of, whatever the toolchain or code: ``(mode,
    task_id, model, sample, origin)``."""
    c = rec["candidate"]
    return (rec["mode"], rec["task_id"], c["model"], c["sample"], c["origin"])


def record_outcome(rec: dict) -> dict:
    """What a record found: ``{"verdict", "goals.proved", "goals.total"}``."""
    goals = rec.get("goals") or {}
    return {"verdict": rec["verdict"], "goals.proved": goals.get("proved"), "goals.total": goals.get("total")}
