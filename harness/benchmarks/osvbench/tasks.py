"""OSVBench tasks: reading ``bench_prompts/benchmark.json`` (leniently, with its quirks
recorded) and the reference specifications the dataset holds.

The pinned ``benchmark.json`` is not valid JSON (one trailing comma): it is read with that
comma skipped and a recorded :class:`Quirk` (the upstream file is never edited); bug types
are normalised with the two misspellings of the file recorded (``mmeory leak``,
``buffer overlfow``). Task ids are upstream's: the 0-based position in ``benchmark.json``
as a string (the key of the results JSON), ``"0"`` to ``"244"``.

Reference specifications: the 9-shot examples file shows Hyperkernel's own
specification of 9 of the 49 system calls (:func:`harness.benchmarks.osvbench.spec.example_specs`);
each task of those system calls carries it as :attr:`Task.reference` (its gold candidate).
"""

from __future__ import annotations

import hashlib
import json
import re
import warnings
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from .spec import example_specs

N_TASKS = 245
#: The benchmark's one mode: a specification per task.
MODES = ("spec",)

BENCHMARK_JSON = "bench_prompts/benchmark.json"
SYSTEM_ASSUMPTION_MODEL = "bench_prompts/system_assumption_model"
SHOT_FILES = {1: "bench_prompts/1_shot_example", 3: "bench_prompts/3_shots_examples",
              5: "bench_prompts/5_shots_examples", 7: "bench_prompts/7_shots_examples",
              9: "bench_prompts/9_shots_examples"}
#: The examples file whose solved specs are the tasks' references (the largest: 9 shots).
REFERENCE_FILE = SHOT_FILES[9]
FULL_PROMPT_EXAMPLE = "FULL_PROMPT_EXAMPLE_5_SHOTS"
RESULTS_JSON = "results/Spec/claude3sonnet_Spec.json"
LOG = "outputs/output_claude3sonnet_Spec"
README = "README.md"

#: The five bug types (paper section 3.3, Table 1 columns), as spelled in benchmark.json.
BUG_TYPES = ("incorrect pointer", "incorrect privilege", "memory leak", "buffer overflow", "bounds checking")
CORRECT = "correct"
#: Misspellings found in the pinned benchmark.json -> the bug type meant.
MISSPELLINGS = {"mmeory leak": "memory leak", "buffer overlfow": "buffer overflow"}


class ManifestError(ValueError):
    """A pinned file is malformed; the message names ``file:line`` (and column)."""


def check_mode(mode: str) -> None:
    """Raises ValueError: ``mode`` is not one of :data:`MODES` (names them)."""
    if mode not in MODES:
        raise ValueError(f"osvbench has no mode {mode!r}; modes: {', '.join(MODES)}")


class UpstreamQuirkWarning(UserWarning):
    """An upstream file deviates from its own format; accepted and recorded as a Quirk."""


@dataclass(frozen=True)
class Quirk:
    """A recorded deviation of an upstream file, accepted by the loader.

    Attributes:
        file: repo-relative path; line, column: 1-based position (None: whole file).
        kind: ``trailing_comma`` | ``misspelled_bug_type`` | ``bug_num_below_types``.
        message: what was found and what the kit does with it.
        task_id: the task concerned, if any.
    """

    file: str
    line: int | None
    column: int | None
    kind: str
    message: str
    task_id: str | None = None

    def __str__(self) -> str:
        where = self.file + (f":{self.line}" if self.line else "") + (f":{self.column}" if self.column else "")
        return f"{where}: {self.message}"

    def to_json(self) -> dict:
        """As a dict (the attributes)."""
        return asdict(self)


@dataclass(frozen=True)
class Task:
    """One OSVBench task.

    Attributes:
        task_id: upstream id: the 0-based position in benchmark.json, as a string.
        index: the same, as an int.
        line: 1-based line of the task's object in benchmark.json.
        syscall: the system call (e.g. ``sys_map_page_desc``).
        declaration: its C declaration; description: the functional description
            (``\\n[Functional Description]: ...``); code: the (possibly buggy)
            implementation (``[Code Implementation]: ...``), all exactly as upstream.
        bug_types: normalised bug types, in file order, each one of :data:`BUG_TYPES`
            (empty for a correct implementation).
        bug_type_raw, bug_num_raw: the upstream fields verbatim (None when absent).
        bug_num: number of injected bugs (None for a correct implementation).
        misspelled: bug-type spellings of the file that were normalised.
        reference: Hyperkernel's own specification of the system call when the dataset
            shows it (the 9-shot examples), else None; not part of :attr:`sha256`.
    """

    task_id: str
    index: int
    line: int
    syscall: str
    declaration: str
    description: str
    code: str
    bug_types: tuple[str, ...] = ()
    bug_type_raw: str | None = None
    bug_num: int | None = None
    bug_num_raw: str | None = None
    misspelled: tuple[str, ...] = ()
    reference: str | None = field(default=None, repr=False)

    @property
    def correct(self) -> bool:
        """Upstream's rule (stats.py): neither ``bug_type`` nor ``bug_num`` present."""
        return self.bug_type_raw is None and self.bug_num_raw is None

    @property
    def upstream_bug_columns(self) -> tuple[str, ...]:
        """Table 1 columns upstream's stats.py credits this task to: each bug type whose
        exact spelling is a substring of the raw ``bug_type`` (so a misspelled type is
        credited to no column), or ``("correct",)``."""
        if self.correct:
            return (CORRECT,)
        return tuple(b for b in BUG_TYPES if b in (self.bug_type_raw or ""))

    @property
    def sha256(self) -> str:
        """sha256 of the canonical JSON of the upstream fields (the job key's task hash)."""
        rec = {"syscall": self.syscall, "declaration": self.declaration, "description": self.description,
               "code": self.code, "bug_type": self.bug_type_raw, "bug_num": self.bug_num_raw}
        return hashlib.sha256(json.dumps(rec, sort_keys=True, ensure_ascii=False).encode()).hexdigest()



@dataclass
class LoadedTasks:
    """Loaded tasks with the quirks of the files read (``tasks``, ``quirks``)."""

    tasks: list[Task]
    quirks: list[Quirk] = field(default_factory=list)


def path_of(fetched, rel: str) -> Path:
    """The file ``rel`` (repository-relative) of a dataset: ``fetched`` is a fetched
    dataset (``files``: rel -> Path, ``root``) or a directory laid out like the repository.

    Raises:
        ManifestError: ``rel`` is not a file of a fetched dataset that has no root.
    """
    if isinstance(fetched, (str, Path)):
        return Path(fetched) / rel
    files = getattr(fetched, "files", None) or {}
    if rel in files:
        return Path(files[rel])
    root = getattr(fetched, "root", None)
    if root is None:
        raise ManifestError(f"osvbench: {rel} is not a file of the fetched dataset")
    return Path(root) / rel


def has_file(fetched, rel: str) -> bool:
    """Whether the dataset has the file ``rel``."""
    try:
        return path_of(fetched, rel).is_file()
    except ManifestError:
        return False


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{},]', re.S)


def read_lenient_json(path: Path, rel: str) -> tuple[object, list[Quirk], list[int]]:
    """Parse a JSON file that may have trailing commas (``[1, 2,]``, ``{"a": 1,}``).

    Each comma directly before a closing ``]`` or ``}`` (outside strings) is skipped and
    recorded as a :class:`Quirk` with its line and column; the file is not changed.
    Anything else that is not JSON raises.

    Returns:
        ``(value, quirks, element_offsets)``: offsets in the text of each element of a
        top-level array (for line numbers in messages).

    Raises:
        ManifestError: not UTF-8 or not JSON once trailing commas are skipped
            (``rel:line:column: message``).
    """
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ManifestError(f"{rel}: not UTF-8 (byte {exc.start})") from exc
    keep: list[str] = []
    quirks: list[Quirk] = []
    removed: list[int] = []
    starts: list[int] = []
    depth, last = 0, 0
    array = text.lstrip().startswith("[")
    tokens = list(_JSON_TOKEN.finditer(text))
    for i, m in enumerate(tokens):
        tok = m.group()
        if tok in "[{":
            depth += 1
            if depth == 2 and array:
                starts.append(m.start())
        elif tok in "]}":
            depth -= 1
        elif tok == ",":
            nxt = tokens[i + 1].group() if i + 1 < len(tokens) else ""
            between = text[m.end(): tokens[i + 1].start()] if i + 1 < len(tokens) else ""
            prev = tokens[i - 1] if i else None
            after_value = prev is not None and (prev.group() not in ("[", "{", ",")
                                                or text[prev.end(): m.start()].strip() != "")
            if nxt in ("]", "}") and not between.strip() and after_value:
                line, col = _line_col(text, m.start())
                keep.append(text[last:m.start()])
                last = m.end()
                removed.append(m.start())
                quirks.append(Quirk(rel, line, col, "trailing_comma",
                                    f"trailing comma before '{nxt}' (not valid JSON): skipped when reading; "
                                    "the upstream file is left unchanged"))
    keep.append(text[last:])
    try:
        value = json.loads("".join(keep))
    except json.JSONDecodeError as exc:
        pos = exc.pos  # in the text without the skipped commas: map back to the file
        for r in removed:
            if r <= pos:
                pos += 1
        line, col = _line_col(text, pos)
        raise ManifestError(f"{rel}:{line}:{col}: not valid JSON: {exc.msg}") from exc
    return value, quirks, starts


def _task(rec, i: int, rel: str, line: int) -> tuple[Task, list[Quirk]]:
    where = f"{rel}:{line}"
    if not isinstance(rec, dict):
        raise ManifestError(f"{where}: task {i} is a {type(rec).__name__}, expected an object")
    for key in ("syscall", "declaration", "description", "code"):
        if not isinstance(rec.get(key), str):
            raise ManifestError(f"{where}: task {i} has no string field {key!r}")
    unknown = set(rec) - {"syscall", "declaration", "description", "code", "bug_type", "bug_num"}
    if unknown:
        raise ManifestError(f"{where}: task {i} has unknown field(s) {sorted(unknown)}")
    if not re.match(r"^[A-Za-z_]\w*$", rec["syscall"]):
        raise ManifestError(f"{where}: task {i}: bad syscall name {rec['syscall']!r}")
    if ("bug_type" in rec) != ("bug_num" in rec):
        raise ManifestError(f"{where}: task {i} ({rec['syscall']}) has one of bug_type/bug_num without the other")
    quirks: list[Quirk] = []
    types: list[str] = []
    misspelled: list[str] = []
    num = None
    raw_type, raw_num = rec.get("bug_type"), rec.get("bug_num")
    if raw_type is not None:
        if not isinstance(raw_type, str) or not isinstance(raw_num, str) or not raw_num.strip().isdigit():
            raise ManifestError(f"{where}: task {i}: bug_type must be a string and bug_num a number as a string, "
                                f"got {raw_type!r}, {raw_num!r}")
        num = int(raw_num)
        for tok in (t.strip().lower() for t in raw_type.split(",")):
            if tok in BUG_TYPES:
                types.append(tok)
            elif tok in MISSPELLINGS:
                types.append(MISSPELLINGS[tok])
                misspelled.append(tok)
                quirks.append(Quirk(rel, line, None, "misspelled_bug_type",
                                    f"task {i} ({rec['syscall']}): bug type {tok!r} read as "
                                    f"{MISSPELLINGS[tok]!r}; upstream's stats.py matches exact spellings, so it "
                                    f"credits this task to no {MISSPELLINGS[tok]!r} column", str(i)))
            else:
                raise ManifestError(f"{where}: task {i} ({rec['syscall']}): unknown bug type {tok!r}; "
                                    f"known: {', '.join(BUG_TYPES)}")
        if not 1 <= num <= 5:
            raise ManifestError(f"{where}: task {i}: bug_num {num} outside 1..5 (paper section 3.3)")
        if len(types) > num:
            quirks.append(Quirk(rel, line, None, "bug_num_below_types",
                                f"task {i} ({rec['syscall']}): {len(types)} bug types listed but bug_num is {num}",
                                str(i)))
    task = Task(task_id=str(i), index=i, line=line, syscall=rec["syscall"], declaration=rec["declaration"],
                description=rec["description"], code=rec["code"], bug_types=tuple(types), bug_type_raw=raw_type,
                bug_num=num, bug_num_raw=raw_num, misspelled=tuple(misspelled))
    return task, quirks


def load_benchmark(fetched) -> LoadedTasks:
    """The 245 tasks of ``bench_prompts/benchmark.json`` and the quirks met reading it.

    ``fetched``: what ``datasets.fetch("osvbench")`` returns, or a directory laid out like
    the repository. When the dataset has the 9-shot examples file, the tasks of its 9
    system calls get their :attr:`Task.reference`.

    Raises:
        ManifestError (``file:line``): not JSON (beyond trailing commas), not a list, a
            task without a string syscall/declaration/description/code, an unknown field
            or bug type, bug_type without bug_num (or the reverse), a bug_num outside 1..5.
    """
    path = path_of(fetched, BENCHMARK_JSON)
    data, quirks, starts = read_lenient_json(path, BENCHMARK_JSON)
    if not isinstance(data, list):
        raise ManifestError(f"{BENCHMARK_JSON}:1: expected a JSON array of tasks, got {type(data).__name__}")
    text = path.read_text(encoding="utf-8")
    lines = [text.count("\n", 0, s) + 1 for s in starts] if len(starts) == len(data) else [0] * len(data)
    tasks = []
    for i, rec in enumerate(data):
        task, q = _task(rec, i, BENCHMARK_JSON, lines[i])
        tasks.append(task)
        quirks += q
    for k, q in enumerate(quirks):  # say which task a trailing comma is in
        inside = [t for t in tasks if t.line and t.line <= (q.line or 0)]
        if q.kind == "trailing_comma" and inside:
            t = inside[-1]
            quirks[k] = replace(q, task_id=t.task_id,
                                message=f"in task {t.task_id} ({t.syscall}): {q.message}")
    if has_file(fetched, REFERENCE_FILE):
        refs = example_specs(path_of(fetched, REFERENCE_FILE).read_text(encoding="utf-8"))
        tasks = [replace(t, reference=refs[t.syscall]) if t.syscall in refs else t for t in tasks]
    return LoadedTasks(tasks, quirks)


def load_tasks(fetched) -> list[Task]:
    """The tasks (:func:`load_benchmark`), warning (:class:`UpstreamQuirkWarning`) once
    per quirk of the file."""
    bench = load_benchmark(fetched)
    for q in bench.quirks:
        warnings.warn(str(q), UpstreamQuirkWarning, stacklevel=2)
    return bench.tasks
