"""CASP tasks from the dataset formats a user may bring (``--dataset PATH``) and the
registry's (Hub parquet, casp_10 sample).

Formats (:data:`FORMATS`), detected from the files unless the dataset names one
(``format:`` in a YAML description, or the ``format`` argument):

- ``c-files``: a directory of annotated ``.c`` files, one task per file; task id = the
  relative path without ``.c``. ``gold`` verifies the whole file as it is (callers and
  helpers included). The candidate modes target the file's *last* function definition
  carrying an ACSL contract: ``prelude`` = the text before that contract, ``contract``,
  ``code`` = the function definition, ``suffix`` = the rest of the file after it (kept
  around the candidate). Only the file itself is verified: a ``#include`` of a header of
  the directory does not reach the verifier.
- ``pairs``: a directory of ``<id>/code.c`` + ``<id>/spec.acsl`` pairs (the casp_10
  layout of the CASP-LLM-Verification-Study); ``<id>/meta.txt`` (``key: value`` lines:
  ``file_name``, ``verified``, ``verified_goals``, ``total_goals``), when present, holds
  the published verdict. gold = ``spec.acsl + "\\n" + code.c``, as CASP stores a pair.
  Other ``.c`` files inside a pair's directory are ignored.
- ``table``: ``.parquet`` or ``.jsonl`` files with the Hub dataset's columns
  (``c_code_snippet``, ``acsl_snippet``, optional ``file_name``, ``verified``,
  ``verified_goals``, ``total_goals``); task id = the row index (0-based; prefixed with
  the file's relative path and ``/`` when there are several files).

Each task is a :class:`TaskSpec`. This module reads files only; it never verifies.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .cfront import CSyntaxError, FunctionDef, acsl_blocks, find_function, function_name, tokens

FORMATS = ("c-files", "pairs", "table")
TABLE_SUFFIXES = (".parquet", ".jsonl")
REQUIRED_COLUMNS = ("c_code_snippet", "acsl_snippet")
PUBLISHED_COLUMNS = ("file_name", "verified", "verified_goals", "total_goals")


class TaskError(ValueError):
    """A task cannot be read: the message starts with ``<file>:<line>`` (or ``<file>: row
    N``, or the dataset's directory when no task file is found) and says what is wrong."""


class _NoTasks(TaskError):
    """Internal: no task file of the format; ``tasks_from`` prefixes the dataset's place."""


@dataclass(frozen=True)
class TaskSpec:
    """One CASP task as read from a dataset.

    Attributes:
        task_id: id (see the module docstring per format).
        gold_text: the file ``gold`` verifies, exactly as stored (``c-files``: the whole
            file; ``pairs``/``table``: ``spec + "\\n" + code``).
        prelude: text before the target function's contract (dependencies, helpers).
        contract: the ACSL contract of the target function ("" when a pair has none).
        code: the target function's definition (``pairs``/``table``: the C part as stored).
        suffix: text after the function (``c-files``: e.g. callers, ``main``; else "").
        function: the target function's name.
        published: the dataset's own verdict (``file_name``, ``verified``,
            ``verified_goals``, ``total_goals``), or None when the dataset has none.
        where: ``<file>:<line>`` of the contract (``c-files``), of the function in
            ``code.c`` (``pairs``), ``<file>:<line>`` of a JSONL row or ``<file>: row N``
            of a parquet row.
    """

    task_id: str
    gold_text: str
    prelude: str
    contract: str
    code: str
    suffix: str
    function: str
    published: dict | None
    where: str


def split_spec(spec: str) -> tuple[str, str]:
    """Split a pair's ACSL part into (prelude, contract): the contract is the last ACSL
    annotation when only whitespace follows it; otherwise there is no contract ("").

    Raises:
        CSyntaxError: the text cannot be lexed.
    """
    blocks = acsl_blocks(spec)
    if blocks and not spec[blocks[-1].end:].strip():
        return spec[: blocks[-1].start], spec[blocks[-1].start:]
    return spec, ""


def parse_meta(text: str) -> dict:
    """``key: value`` lines of a casp_10 ``meta.txt``: ``True``/``False`` -> bool, digits
    -> int, anything else a stripped string."""
    meta = {}
    for line in text.splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            v = v.strip()
            meta[k.strip()] = {"True": True, "False": False}.get(v, int(v) if v.isdigit() else v)
    return meta


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def function_definitions(text: str) -> list[FunctionDef]:
    """Every function definition at file scope of C ``text``, in order of position.

    Raises:
        CSyntaxError: the text cannot be lexed (with its line).
    """
    toks = tokens(text)
    names, depth = [], 0
    for i, t in enumerate(toks):
        if t.kind == "punct" and t.text in "{}":
            depth += 1 if t.text == "{" else -1
        elif depth == 0 and t.kind == "ident" and t.text not in names:
            j = i + 1
            while j < len(toks) and toks[j].kind in ("acsl", "comment"):
                j += 1
            if j < len(toks) and toks[j].text == "(":
                names.append(t.text)
    found = (find_function(text, name) for name in names)
    return sorted((f for f in found if f is not None), key=lambda f: f.start)


def c_file_task(task_id: str, text: str, path: str | Path) -> TaskSpec:
    """The task of one annotated C file (format ``c-files``; see the module docstring).

    Raises:
        TaskError: the file cannot be lexed, or no function definition carries an ACSL
            contract (``<path>:<line>``).
    """
    try:
        defs = function_definitions(text)
    except CSyntaxError as exc:
        raise TaskError(f"{path}:{exc.line}: cannot be read as C: {exc}") from exc
    with_contract = [f for f in defs if f.contract is not None]
    if not with_contract:
        line = _line(text, defs[-1].start) if defs else 1
        found = ", ".join(f"{f.name} (line {_line(text, f.start)})" for f in defs) or "none"
        raise TaskError(f"{path}:{line}: no function definition carrying an ACSL contract "
                        f"(/*@ ... */ right before it); function definitions: {found}")
    target = with_contract[-1]
    return TaskSpec(task_id=task_id, gold_text=text, prelude=text[: target.contract_start],
                    contract=target.contract, code=text[target.start: target.end], suffix=text[target.end:],
                    function=target.name, published=None, where=f"{path}:{_line(text, target.contract_start)}")


def pair_task(task_id: str, spec: str, code: str, published: dict | None, where: str) -> TaskSpec:
    """The task of one (spec, code) pair (formats ``pairs`` and ``table``): gold =
    ``spec + "\\n" + code``, (prelude, contract) = :func:`split_spec`, the function = the
    first one ``code`` defines.

    Raises:
        TaskError: ``code`` defines no function, or a part cannot be lexed (names ``where``).
    """
    try:
        fn = function_name(code)
        prelude, contract = split_spec(spec)
    except (ValueError, CSyntaxError) as exc:
        raise TaskError(f"{where}: {exc}") from exc
    return TaskSpec(task_id=task_id, gold_text=spec + "\n" + code, prelude=prelude, contract=contract,
                    code=code, suffix="", function=fn, published=published, where=where)


def _read(path: Path) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise TaskError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc


def _published(row: dict) -> dict | None:
    """The published columns of a row, or None when it has no verdict or goal count."""
    if all(row.get(k) is None for k in PUBLISHED_COLUMNS[1:]):
        return None
    return {k: row.get(k) for k in PUBLISHED_COLUMNS}


def _rows(path: Path) -> list[tuple[dict, str]]:
    """(row, where) of a parquet or JSONL file."""
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        try:
            rows = pq.read_table(path).to_pylist()
        except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for a bad file
            raise TaskError(f"{path}: cannot be read as parquet: {exc}") from exc
        return [(row, f"{path}: row {i}") for i, row in enumerate(rows)]
    out = []
    for n, line in enumerate(_read(path).splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise TaskError(f"{path}:{n}: not valid JSON: {exc}") from exc
        if not isinstance(row, dict):
            raise TaskError(f"{path}:{n}: a JSON object per line is required")
        out.append((row, f"{path}:{n}"))
    return out


def table_tasks(tables: list[tuple[str, Path]]) -> list[TaskSpec]:
    """Tasks of the ``table`` format: ``[(relative path, path)]`` of parquet/JSONL files.

    Raises:
        TaskError: a row lacks a required column or holds a non-string snippet (names the
            file and row), or a pair is malformed.
    """
    tasks = []
    for rel, path in sorted(tables):
        prefix = f"{rel}/" if len(tables) > 1 else ""
        for i, (row, where) in enumerate(_rows(path)):
            missing = [c for c in REQUIRED_COLUMNS if c not in row]
            if missing:
                raise TaskError(f"{where}: missing column(s) {missing}")
            if not all(isinstance(row[c], str) for c in REQUIRED_COLUMNS):
                raise TaskError(f"{where}: {' and '.join(REQUIRED_COLUMNS)} must be strings")
            tasks.append(pair_task(f"{prefix}{i}", row["acsl_snippet"], row["c_code_snippet"], _published(row),
                                   where))
    return tasks


def _pair_dirs(files: dict[str, Path]) -> list[str]:
    return sorted(str(PurePosixPath(rel).parent) for rel in files
                  if PurePosixPath(rel).name == "code.c"
                  and str(PurePosixPath(rel).with_name("spec.acsl")) in files)


def pairs_tasks(files: dict[str, Path], root_name: str = "") -> list[TaskSpec]:
    """Tasks of the ``pairs`` format from ``files`` (relative POSIX path -> Path).

    Raises:
        TaskError: no pair, a ``.c`` file outside the pairs' directories, or a malformed
            pair (names the file).
    """
    dirs = _pair_dirs(files)
    if not dirs:
        raise _NoTasks("no <id>/code.c + <id>/spec.acsl pair")
    inside = set(dirs)
    stray = sorted(rel for rel in files if rel.endswith(".c") and str(PurePosixPath(rel).parent) not in inside)
    if stray:
        raise TaskError(f"{files[stray[0]]}: a .c file outside the <id>/code.c + <id>/spec.acsl pairs; "
                        f"choose one format (format: pairs or c-files in a YAML description)")
    tasks = []
    for d in dirs:
        base = "" if d == "." else f"{d}/"
        code_path = files[f"{base}code.c"]
        code = _read(code_path)
        meta = files.get(f"{base}meta.txt")
        fdef_line = 1
        try:
            fdef = find_function(code, function_name(code))
            fdef_line = _line(code, fdef.start) if fdef else 1
        except (ValueError, CSyntaxError):
            pass  # pair_task reports it
        tasks.append(pair_task(d if d != "." else root_name, _read(files[f"{base}spec.acsl"]), code,
                               parse_meta(_read(meta)) if meta else None, f"{code_path}:{fdef_line}"))
    return tasks


def c_files_tasks(files: dict[str, Path]) -> list[TaskSpec]:
    """Tasks of the ``c-files`` format: one per ``.c`` file of ``files``.

    Raises:
        TaskError: no ``.c`` file, or a file without a function carrying a contract.
    """
    cfiles = sorted(rel for rel in files if rel.endswith(".c"))
    if not cfiles:
        raise _NoTasks("no .c file")
    return [c_file_task(rel[: -len(".c")], _read(files[rel]), files[rel]) for rel in cfiles]


def detect_format(files: dict[str, Path]) -> str:
    """``table`` when there is a parquet/JSONL file, else ``pairs`` when there is an
    ``<id>/code.c`` + ``<id>/spec.acsl`` pair, else ``c-files`` when there is a ``.c``
    file.

    Raises:
        TaskError: none of these (lists what was looked for).
    """
    if any(rel.endswith(TABLE_SUFFIXES) for rel in files):
        return "table"
    if _pair_dirs(files):
        return "pairs"
    if any(rel.endswith(".c") for rel in files):
        return "c-files"
    raise _NoTasks("no CASP task files: expected annotated .c files, <id>/code.c + <id>/spec.acsl pairs, "
                    "or a .parquet/.jsonl file with the columns c_code_snippet and acsl_snippet")


def tasks_from(fetched, *, format: str | None = None, subdir: str | None = None) -> list[TaskSpec]:
    """The CASP tasks of a fetched or opened dataset (anything with ``files``: relative
    POSIX path -> Path, and ``dataset.format``/``dataset.name``).

    Args:
        format: one of :data:`FORMATS`; default ``fetched.dataset.format``, else detected
            (:func:`detect_format`).
        subdir: read only the files below this relative directory, with ids relative to
            it (e.g. ``casp_10`` for the casp-sample10 dataset entry).

    Raises:
        TaskError: an unknown format, no task file, or a malformed task (the message names
            the file, and the line or row).
    """
    files = dict(fetched.files)
    where = str(getattr(fetched, "root", None) or getattr(fetched.dataset, "name", "dataset"))
    if subdir:
        prefix = subdir.strip("/") + "/"
        files = {rel[len(prefix):]: p for rel, p in files.items() if rel.startswith(prefix)}
        where = f"{where}/{subdir}"
    chosen = format or getattr(fetched.dataset, "format", None)
    if chosen is not None and chosen not in FORMATS:
        raise TaskError(f"{where}: unknown CASP dataset format {chosen!r}; formats: {', '.join(FORMATS)}")
    try:
        chosen = chosen or detect_format(files)
        if chosen == "table":
            return table_tasks([(rel, p) for rel, p in files.items() if rel.endswith(TABLE_SUFFIXES)])
        if chosen == "pairs":
            return pairs_tasks(files, PurePosixPath(where).name)
        return c_files_tasks(files)
    except _NoTasks as exc:
        raise TaskError(f"{where}: {exc}") from None
