"""Reading a predictions JSONL file: one candidate a line, validated by
``schemas/predictions.schema.json``.

Every problem is reported with the file and the 1-based line: a line that is not JSON,
not UTF-8, binary (NUL bytes), over the size limit (:data:`MAX_LINE_BYTES` bytes a line,
checked while reading, so a huge line never sits in memory; :data:`MAX_OUTPUT_CHARS`
characters an output, checked after decoding), with a duplicate key in an object, missing
a field, naming an unknown task, or repeating a (task_id, model, sample) already seen. With ``keep_going`` the bad
lines are collected and the good ones returned; otherwise all bad lines are reported in
one :class:`PredictionsError` before anything runs.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from .datasets import sha256_file
from .model import Candidate
from .results import ValidationError, validate

MAX_OUTPUT_CHARS = 1_000_000  # same limit as predictions.schema.json "output".maxLength
#: Bytes a line may have: the worst case of a valid line, every character of the output
#: written as a \u-escaped surrogate pair (12 bytes), plus room for the other fields. The
#: character limit itself is checked on the decoded output (the schema's maxLength).
MAX_LINE_BYTES = 12 * MAX_OUTPUT_CHARS + 65536


#: The name a run directory carries the predictions file it scored under (a pulled run,
#: a committed reference).
BESIDE = "predictions.jsonl"


def scored_files(run_dir: Path, run: dict) -> list[Path]:
    """Where the predictions file that a run scored may be: the path its run.json
    ``run`` recorded, then :data:`BESIDE` in ``run_dir``, then, for predictions made by
    ``verikit generate`` (run.json ``generation``, a path relative to ``run_dir``), the
    generation's own predictions.jsonl beside its generation.json (a moved run directory of
    ``reproduce --generate``); ``[]`` for a run that scored none."""
    recorded = run.get("predictions")
    if not recorded:
        return []
    out = [Path(recorded["path"]), Path(run_dir) / BESIDE]
    link = run.get("generation") or {}
    if link.get("path") and not Path(link["path"]).is_absolute():
        out.append(Path(run_dir) / Path(link["path"]).parent / "predictions.jsonl")
    return out


def scored_file(run_dir: Path, run: dict) -> Path | None:
    """The first of :func:`scored_files` that holds the sha256 run.json recorded; None
    when none does (or the run scored none)."""
    want = (run.get("predictions") or {}).get("sha256")
    return next((p for p in scored_files(run_dir, run)
                 if p.is_file() and sha256_file(p) == want), None)


@dataclass
class InputError:
    """One bad input line: ``file``, 1-based ``line`` (None: the whole file), ``error``."""

    file: str
    line: int | None
    error: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.error}" if self.line else f"{self.file}: {self.error}"

    def to_json(self) -> dict:
        """As stored in run.json ``input_errors``."""
        return {"file": self.file, "line": self.line, "error": self.error}


class PredictionsError(ValueError):
    """Bad predictions file; ``errors`` lists every bad line."""

    def __init__(self, errors: list[InputError]):
        self.errors = errors
        shown = "\n".join(f"  {e}" for e in errors[:20])
        more = f"\n  ... and {len(errors) - 20} more" if len(errors) > 20 else ""
        super().__init__(f"{len(errors)} bad line(s) in predictions:\n{shown}{more}\n"
                         "(use --keep-going to run the good lines and record the bad ones)")


@dataclass
class Predictions:
    """A loaded predictions file: ``candidates``, ``errors`` (kept-going lines),
    ``path``, ``sha256`` of the file bytes, ``lines`` (non-empty lines read)."""

    path: str
    sha256: str
    lines: int
    candidates: list[Candidate] = field(default_factory=list)
    errors: list[InputError] = field(default_factory=list)

    def manifest(self) -> dict:
        """The run.json ``predictions`` entry."""
        return {"path": self.path, "sha256": self.sha256, "lines": self.lines,
                "candidates": len(self.candidates), "bad_lines": len(self.errors)}


class DuplicateKey(ValueError):
    """A JSON object names the same key twice (``json`` would keep the last silently)."""


def _no_duplicate_keys(pairs: list[tuple[str, object]]) -> dict:
    out = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKey(key)
        out[key] = value
    return out


def _lines(fh, digest):
    """``(line number, bytes, size)`` per line of a binary file, every byte hashed into
    ``digest``; a line longer than :data:`MAX_LINE_BYTES` is read in bounded chunks and
    given as ``b"?"`` with its real size, so memory stays bounded whatever the file."""
    lineno = 0
    while True:
        raw = fh.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        lineno += 1
        digest.update(raw)
        size = len(raw)
        if size > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            raw = b"?"
            while True:
                chunk = fh.readline(1 << 20)
                digest.update(chunk)
                size += len(chunk)
                if not chunk or chunk.endswith(b"\n"):
                    break
        yield lineno, raw, size


def load(path: str | Path, task_ids: set[str], *, mode: str | None = None, keep_going: bool = False) -> Predictions:
    """Read and validate a predictions JSONL file.

    Args:
        path: the file.
        task_ids: ids of the tasks of the dataset being run (others are errors).
        mode: the run's mode; a line whose optional ``mode`` differs is an error.
        keep_going: collect bad lines instead of raising.

    Returns:
        :class:`Predictions`.

    Raises:
        PredictionsError: bad lines and not ``keep_going`` (or no good line at all).
        FileNotFoundError: the file does not exist.
    """
    path = Path(path)
    name = str(path)
    digest = hashlib.sha256()
    preds = Predictions(path=name, sha256="", lines=0)
    seen: dict[tuple, int] = {}
    if path.is_dir():
        raise PredictionsError([InputError(name, None, "is a directory, not a predictions file")])
    with open(path, "rb") as fh:
        for lineno, raw, size in _lines(fh, digest):
            if not raw.strip():
                continue
            preds.lines += 1
            err = None
            if size > MAX_LINE_BYTES:
                err = (f"line is {size:,} bytes; a line may have at most {MAX_LINE_BYTES:,} bytes "
                       f"(an output at most {MAX_OUTPUT_CHARS:,} characters)")
            elif b"\x00" in raw:
                err = "binary data (NUL byte) in the line"
            if err is None:
                try:
                    obj = json.loads(raw.decode("utf-8"), object_pairs_hook=_no_duplicate_keys)
                except UnicodeDecodeError as exc:
                    err = f"not UTF-8 (byte {exc.start}): binary data?"
                except json.JSONDecodeError as exc:
                    err = f"not valid JSON: {exc.msg} (column {exc.colno})"
                except DuplicateKey as exc:
                    err = f"duplicate key {exc.args[0]!r} in a JSON object"
            if err is None:
                err = _check(obj, name, lineno, task_ids, mode, seen)
            if err:
                preds.errors.append(InputError(name, lineno, err))
                continue
            seen[(obj["task_id"], obj["model"], obj["sample"])] = lineno
            preds.candidates.append(Candidate(task_id=obj["task_id"], model=obj["model"], sample=obj["sample"],
                                              output=obj["output"], origin=f"predictions:{path.name}:{lineno}",
                                              meta=obj.get("meta")))
    preds.sha256 = digest.hexdigest()
    if preds.lines == 0:
        preds.errors.append(InputError(name, None, "no predictions in the file"))
    if preds.errors and (not keep_going or not preds.candidates):
        raise PredictionsError(preds.errors)
    return preds


def _check(obj, name: str, lineno: int, task_ids: set[str], mode: str | None, seen: dict) -> str | None:
    if not isinstance(obj, dict):
        return f"expected a JSON object, got {type(obj).__name__}"
    try:
        validate("predictions", obj, f"{name}:{lineno}", decoded=True)  # json.loads made it (load)
    except ValidationError as exc:
        return str(exc).split(": ", 1)[1] if ": " in str(exc) else str(exc)
    if "\x00" in obj["output"]:
        return "binary data (NUL character) in output"
    if obj["task_id"] not in task_ids:
        return f"unknown task_id {obj['task_id']!r} (not in this dataset)"
    if mode and obj.get("mode") not in (None, mode):
        return f"mode {obj['mode']!r} does not match the run's mode {mode!r}"
    key = (obj["task_id"], obj["model"], obj["sample"])
    if key in seen:
        return f"duplicate (task_id, model, sample) {key}, first at line {seen[key]}"
    return None
