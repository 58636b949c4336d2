"""A run directory as a whole: its lock (:func:`run_dir_lock`, the only one: one run at a
time writes it), ``SHA256SUMS`` (written last, checked on read), its id, and
:func:`validate_run_dir` (:func:`read_run_dir`)."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from datetime import datetime, timezone
from pathlib import Path

from ..datasets import sha256_file
from .files import write_text_atomic
from .records import record_inconsistencies, record_key, record_lines
from .schema import ValidationError, validate


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
    digest = sha256_file(Path(run_dir) / SUMS)[:10]
    finished = datetime.fromisoformat(run["finished_at"]).astimezone(timezone.utc)
    return f"{finished:%Y%m%dT%H%M%SZ}-{digest}"


def validate_run_dir(path: Path) -> list[str]:
    """Check a run directory: run.json, records.jsonl (every line), report.json.

    Returns:
        A list of problems (empty when the directory is valid): missing files, schema
        errors with file:line, duplicate job keys, records whose count disagrees with
        run.json.
    """
    return read_run_dir(path)[0]


def read_run_dir(path: Path) -> tuple[list[str], list[dict] | None]:
    """:func:`validate_run_dir`'s problems and, from the same reading of records.jsonl,
    its records as :func:`~harness.results.load_records` gives them (a torn last line
    dropped; none when the file is missing), or None where ``load_records`` would raise
    (a line that is not a valid record).

    Raises:
        OSError: records.jsonl exists but cannot be read."""
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
    records: list[dict] | None = []
    if not rec_path.exists():
        problems.append(f"{rec_path}: missing")
    else:
        for i, _, rec, problem in record_lines(rec_path):
            if problem:
                problems.append(f"{rec_path}:{i}: {problem}")
                if not problem.startswith("cut short"):
                    records = None
                continue
            if records is not None:
                records.append(rec)
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
    return problems, records
