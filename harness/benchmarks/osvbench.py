"""OSVBench: 245 specification-generation tasks for the Hyperkernel OS kernel.

Paper: Li, Jiang, Zhao, Shen, "OSVBench: Benchmarking LLMs on Specification Generation
Tasks for Operating System Verification" (arXiv:2504.20964;
../shared/papers/004_72c6ea11fc103012.txt). A task gives a model the functional
description and a possibly buggy C implementation of one of Hyperkernel's 49 system calls
(5 variants each: 1 correct, 4 with 1-5 injected bugs of five types); the model writes
the syscall's state-machine specification (Python 2 + Z3), which Hyperkernel's verifier
checks (:mod:`harness.verifiers.hyperkernel`). Table 1 gives pass@1 per bug type, Table 2
the "syntax" and "semantic" error rates, for 12 models with 5-shot prompts.

Dataset ``osvbench`` (lishangyu-hkust/OSVBench at 3247b75e, every data file):
``bench_prompts/benchmark.json`` (the tasks), the prompt sections, the published
Claude-3.5-sonnet specs (``results/Spec/claude3sonnet_Spec.json``) and the verifier's raw
log for them (``outputs/output_claude3sonnet_Spec``).

This module:

- loads the tasks robustly (:func:`load_benchmark`): the pinned ``benchmark.json`` is not
  valid JSON (one trailing comma); it is read with that comma skipped and a recorded
  :class:`Quirk` (the upstream file is never edited); bug types are normalised with the
  two misspellings of the file recorded (``mmeory leak``, ``buffer overlfow``);
- builds prompts exactly as upstream's ``tasks/Spec.py`` ``insert_example`` (verified
  byte for byte against ``FULL_PROMPT_EXAMPLE_5_SHOTS``), for 0/1/3/5/7/9 shots;
- rescores the published run exactly (:func:`rescore`, :func:`reproduce`) with
  upstream's ``stats.py`` rule, and classifies every log entry finer
  (:func:`harness.verifiers.hyperkernel.classify`): the paper's "syntax error" is in
  truth a Python exception class (or one real SyntaxError), "semantic error" a Z3
  counterexample;
- converts upstream's results JSON into a predictions file (:func:`convert_upstream_results`)
  and runs predictions through the Hyperkernel verifier (:func:`verify`,
  ``python -m harness.benchmarks.osvbench``).

Upstream code read (not in the pinned data; OSVBench's code files are at commit
57e3bff8, ``run_spec_check.sh`` at 3247b75e): ``stats.py`` (scoring), ``spec_util.py``
(runner), ``tasks/Spec.py`` (prompt), ``LLM_API_Invocations_passk.py`` (system prompt,
spec extraction). Task ids are upstream's: the 0-based position in ``benchmark.json`` as
a string (the key of the results JSON), ``"0"`` to ``"244"``.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import tokenize
import warnings
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from .. import datasets
from ..verifiers import hyperkernel

NAME = "osvbench"
VERSION = "1"
DATASETS = ("osvbench",)
DEFAULT_DATASET = "osvbench"
VERIFIER = "hyperkernel"
MODES = ("spec",)
N_TASKS = 245

BENCHMARK_JSON = "bench_prompts/benchmark.json"
SYSTEM_ASSUMPTION_MODEL = "bench_prompts/system_assumption_model"
SHOT_FILES = {1: "bench_prompts/1_shot_example", 3: "bench_prompts/3_shots_examples",
              5: "bench_prompts/5_shots_examples", 7: "bench_prompts/7_shots_examples",
              9: "bench_prompts/9_shots_examples"}
#: Shot counts with a prompt: 0 (no examples section) and the five upstream files.
SHOTS = (0, 1, 3, 5, 7, 9)
FULL_PROMPT_EXAMPLE = "FULL_PROMPT_EXAMPLE_5_SHOTS"
RESULTS_JSON = "results/Spec/claude3sonnet_Spec.json"
LOG = "outputs/output_claude3sonnet_Spec"
README = "README.md"

#: The five bug types (paper section 3.3, Table 1 columns), as spelled in benchmark.json.
BUG_TYPES = ("incorrect pointer", "incorrect privilege", "memory leak", "buffer overflow", "bounds checking")
CORRECT = "correct"
#: Misspellings found in the pinned benchmark.json -> the bug type meant.
MISSPELLINGS = {"mmeory leak": "memory leak", "buffer overlfow": "buffer overflow"}

#: Upstream's system message (LLM_API_Invocations_passk.py, ``system_prompt``).
SYSTEM_PROMPT = """
You are an expert specializing in operating system kernel verification. Please provide only the state-machine specification code, strictly encapsulated within the format ```python\\n{code}\\n```, without including any additional text or commentary. Please act as an expert in operating system kernel verification. Your job is to synthesize the state-machine specification to verify the functional correctness of a given system call based on its given functional description and code implementation that may contain bugs.
"""  # noqa: E501
#: Upstream's model short names -> API model (LLM_API_Invocations_passk.py ``llm_to_api``).
UPSTREAM_MODELS = {"claude3sonnet": "claude-3-5-sonnet-20241022", "gpt4o": "gpt-4o", "gpto1": "o1-2024-12-17",
                   "gpto3m": "o3-mini", "deepseekR1": "DeepSeek-R1", "deepseek": "deepseek-chat",
                   "qwenqwq": "Qwen/QwQ-32B-Preview", "qwen2_72": "qwen2.5-72b-instruct",
                   "qwen2coder": "Qwen/Qwen2.5-Coder-7B-Instruct", "gpt4om": "gpt-4o-mini"}
_FENCE = re.compile(r"```python.*?```", re.S)

#: Identifiers a candidate spec may not use (outside comments and strings): the spec
#: module's imports are fixed by the harness, and these would let a spec escape the
#: programming model or forge the checker's output (e.g. print a passing test line, then
#: raise SystemExit(0)). Fail closed: such a spec is ``rejected``.
FORBIDDEN = {
    "import": "import statement (the spec module's imports are fixed)",
    "exec": "exec", "eval": "eval", "execfile": "execfile", "compile": "compile",
    "open": "open (file access)", "file": "file (file access)", "print": "print (could forge the checker's output)",
    "globals": "globals", "locals": "locals", "vars": "vars", "getattr": "getattr", "setattr": "setattr",
    "delattr": "delattr", "reload": "reload", "exit": "exit", "quit": "quit", "SystemExit": "SystemExit",
    "KeyboardInterrupt": "KeyboardInterrupt", "os": "os module", "sys": "sys module",
    "subprocess": "subprocess module", "unittest": "unittest module", "signal": "signal module",
    "socket": "socket module", "builtins": "builtins", "__builtin__": "__builtin__",
}


class ManifestError(ValueError):
    """A pinned file is malformed; the message names ``file:line`` (and column)."""


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
class Benchmark:
    """Loaded tasks with the quirks of the files read (``tasks``, ``quirks``)."""

    tasks: list[Task]
    quirks: list[Quirk] = field(default_factory=list)


# ---------------------------------------------------------------------------------------
# Reading the pinned files
# ---------------------------------------------------------------------------------------

def _path(fetched, rel: str) -> Path:
    if isinstance(fetched, datasets.FetchedDataset):
        if rel in fetched.files:
            return fetched.files[rel]
        if fetched.root is None:
            raise ManifestError(f"osvbench: {rel} is not a file of the fetched dataset")
        return fetched.root / rel
    return Path(fetched) / rel


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


def load_benchmark(fetched: datasets.FetchedDataset | Path | str) -> Benchmark:
    """The 245 tasks of ``bench_prompts/benchmark.json`` and the quirks met reading it.

    ``fetched``: what ``datasets.fetch("osvbench")`` returns, or a directory laid out like
    the repository.

    Raises:
        ManifestError (``file:line``): not JSON (beyond trailing commas), not a list, a
            task without a string syscall/declaration/description/code, an unknown field
            or bug type, bug_type without bug_num (or the reverse), a bug_num outside 1..5.
    """
    path = _path(fetched, BENCHMARK_JSON)
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
    return Benchmark(tasks, quirks)


def load_tasks(fetched) -> list[Task]:
    """The tasks (:func:`load_benchmark`), warning (:class:`UpstreamQuirkWarning`) once
    per quirk of the file."""
    bench = load_benchmark(fetched)
    for q in bench.quirks:
        warnings.warn(str(q), UpstreamQuirkWarning, stacklevel=2)
    return bench.tasks


# ---------------------------------------------------------------------------------------
# Prompts (upstream tasks/Spec.py insert_example + LLM_API_Invocations_passk.py)
# ---------------------------------------------------------------------------------------

@dataclass
class Prompts:
    """The prompt sections: ``system_description`` (system_assumption_model: the task
    framing, verification assumption and programming model) and ``examples`` (shots ->
    text of the examples file; 0 -> "")."""

    system_description: str
    examples: dict[int, str]

    @classmethod
    def load(cls, fetched) -> "Prompts":
        """Read the prompt files of ``fetched``."""
        system = _path(fetched, SYSTEM_ASSUMPTION_MODEL).read_text(encoding="utf-8")
        examples = {0: ""}
        for n, rel in SHOT_FILES.items():
            examples[n] = _path(fetched, rel).read_text(encoding="utf-8")
        return cls(system, examples)

    def prompt(self, task: Task, shots: int = 5) -> str:
        """The user message for ``task`` with ``shots`` examples, exactly as upstream's
        ``Spec_Task.insert_example``: system_assumption_model + ``"\\n\\n"`` + examples
        file + ``"\\n### Task Question:\\nNow, given the system call `<syscall>`. \\n"`` +
        description + ``"\\n"`` + code + ``"\\n"`` + ``"[Specification]:\\n..."``.

        0 shots: upstream ships no examples file for it (the paper's Figure 5 has a
        zero-shot setting); the examples section is left empty, all else unchanged.

        Raises:
            ValueError: ``shots`` not in :data:`SHOTS`.
        """
        if shots not in self.examples:
            raise ValueError(f"shots must be one of {SHOTS}, got {shots!r}")
        p = self.system_description + "\n\n"
        p += self.examples[shots]
        p += ("\n### Task Question:\nNow, given the system call `" + task.syscall + "`. \n" + task.description
              + "\n" + task.code + "\n")
        p += ("[Specification]:\nBased on the detailed functional description and the potentially buggy code "
              "implementation of the system call `" + task.syscall + "` provided above, the state-machine "
              "specification of the system call is deduced as follows:")
        return p

    def messages(self, task: Task, shots: int = 5) -> list[dict]:
        """Chat messages as upstream sends them: ``[{"role": "system", "content":
        SYSTEM_PROMPT}, {"role": "user", "content": prompt}]``."""
        return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": self.prompt(task, shots)}]

    def example_syscalls(self, shots: int) -> list[str]:
        """The syscalls whose solved examples the ``shots`` prompt contains, in order."""
        return re.findall(r"^Given a system call `(\w+)`", self.examples[shots], re.M)


def extract_spec(output: str) -> str:
    """The spec in a model's output: upstream's rule (LLM_API_Invocations_passk.py
    ``find_spec``: the first ```` ```python ... ``` ```` block, minus its 9-character
    opening and 3-character closing fence); an output without such a block is taken as
    the spec itself (upstream's results JSON stores specs already extracted)."""
    m = _FENCE.search(output)
    return m.group()[9:-3] if m else output


def integrity_scan(spec: str) -> list[str]:
    """Forbidden identifiers (:data:`FORBIDDEN`) and dunder names used by ``spec`` outside
    comments and strings, each ``"<name>: <why> (line N)"``; [] for a clean spec. A spec
    Python cannot tokenize is scanned as raw text (fail closed)."""
    names: list[tuple[str, int]] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(spec).readline):
            if tok.type == tokenize.NAME:
                names.append((tok.string, tok.start[0]))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        names = [(m.group(), spec.count("\n", 0, m.start()) + 1) for m in re.finditer(r"[A-Za-z_]\w*", spec)]
    found = []
    for name, line in names:
        why = FORBIDDEN.get(name) or ("dunder name (reaches interpreter internals)"
                                      if len(name) > 4 and name.startswith("__") and name.endswith("__") else None)
        if why:
            found.append(f"{name}: {why} (line {line})")
    return list(dict.fromkeys(found))


# ---------------------------------------------------------------------------------------
# Rescoring the published run
# ---------------------------------------------------------------------------------------

def _pct(passed: int, total: int) -> float | None:
    return round(100.0 * passed / total, 2) if total else None


def _agg(passed: int, total: int) -> dict:
    return {"passed": passed, "total": total, "percent": _pct(passed, total)}


def read_log(fetched, tasks: list[Task], rel: str = LOG) -> list[hyperkernel.LogEntry]:
    """The entries of an upstream verifier log, one per task in benchmark order.

    Raises:
        ManifestError (``file:line``): not such a log, a different number of entries than
            tasks (with a diagnosis when the log holds several appended runs), or an entry
            whose syscall is not the task's at that position (upstream's stats.py pairs
            entries and tasks by position).
    """
    path = _path(fetched, rel)
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        entries = hyperkernel.split_upstream_log(text, rel)
    except hyperkernel.LogError as exc:
        raise ManifestError(str(exc)) from exc
    if len(entries) != len(tasks):
        runs = hyperkernel.repeated_runs(entries, [t.syscall for t in tasks])
        hint = (f"; it holds {runs} copies of the same run: upstream's runner appends to its log, so a rerun "
                f"doubles it" if runs > 1 else "")
        raise ManifestError(f"{rel}: {len(entries)} entries for {len(tasks)} tasks{hint}")
    for e, t in zip(entries, tasks):
        if e.syscall != t.syscall:
            raise ManifestError(f"{rel}:{e.line}: entry {e.index} is for {e.syscall}, but task {t.task_id} "
                                f"({BENCHMARK_JSON}:{t.line}) is {t.syscall}")
    return entries


def _kit_class(c: hyperkernel.Classification) -> str:
    """The paper's category from the kit's finer cause."""
    if c.kind == "verified":
        return "pass"
    if c.kind in ("counterexample", "timeout"):
        return "semantic"
    return "syntax"


def rescore(fetched, bench: Benchmark | None = None, log: str = LOG) -> dict:
    """Upstream's stats.py on the pinned log, plus the finer classification of every entry.

    Returns a dict:
        ``overall`` (pass), ``errors`` ({syntax, semantic}), each ``{passed, total,
        percent}`` (``passed`` = the count); ``by_bug_type`` (Table 1 columns with
        upstream's substring rule, denominators counted the same way; key ``correct``
        included); ``by_bug_type_normalized`` (misspellings read as meant: not a
        published figure); ``by_bug_num`` (upstream's rule: Figure 4, not printed in the
        paper); ``finer`` ({upstream class: {cause: n}}); ``raised_in`` ({class:
        {origin: n}}); ``per_task`` (list of dicts: task_id, syscall, upstream, kit,
        cause, kind, exception, message, raised_in, spec_line, outcome, line);
        ``checks`` (list of ``{check, ok, detail}``); ``quirks`` (list of str).
    """
    bench = bench or load_benchmark(fetched)
    tasks = bench.tasks
    entries = read_log(fetched, tasks, log)
    text = _path(fetched, log).read_text(encoding="utf-8", errors="replace")
    pieces = hyperkernel.upstream_split(text)
    per_task = []
    for e, t in zip(entries, tasks):
        c = hyperkernel.classify(e.text, t.syscall)
        per_task.append({"task_id": t.task_id, "syscall": t.syscall, "line": e.line, "upstream": c.upstream,
                         "kit": _kit_class(c), "cause": c.cause, "kind": c.kind, "exception": c.exception,
                         "message": c.message, "raised_in": c.raised_in, "spec_line": c.spec_line,
                         "outcome": c.outcome, "z3_version": c.z3_version})
    up = Counter(p["upstream"] for p in per_task)
    n = len(tasks)
    passed = {p["task_id"] for p in per_task if p["upstream"] == "pass"}
    by_type: dict[str, dict] = {}
    by_norm: dict[str, dict] = {}
    for col in BUG_TYPES + (CORRECT,):
        members = [t for t in tasks if col in t.upstream_bug_columns]
        by_type[col] = _agg(sum(t.task_id in passed for t in members), len(members))
        norm = [t for t in tasks if (t.correct if col == CORRECT else col in t.bug_types)]
        by_norm[col] = _agg(sum(t.task_id in passed for t in norm), len(norm))
    by_num: dict[str, dict] = {}
    for k in range(1, 6):
        # stats.py: if "1" in bug_num ... elif "2" ... (first digit found wins)
        members = [t for t in tasks if t.bug_num_raw is not None
                   and next((d for d in "12345" if d in t.bug_num_raw), None) == str(k)]
        by_num[str(k)] = _agg(sum(t.task_id in passed for t in members), len(members))
    finer: dict[str, Counter] = defaultdict(Counter)
    raised: dict[str, Counter] = defaultdict(Counter)
    for p in per_task:
        finer[p["upstream"]][p["cause"]] += 1
        if p["raised_in"] and p["upstream"] == "syntax":
            raised[p["upstream"]][p["raised_in"]] += 1
    checks = [
        {"check": "one log entry per task, in benchmark order (stats.py pairs them by position)", "ok": True,
         "detail": f"{len(entries)} entries, syscalls match the {n} tasks"},
        {"check": "the kit's line-anchored split gives the same entries as upstream's split('Syscall ')",
         "ok": len(pieces) == len(entries) and all(p == e.text for p, e in zip(pieces, entries)),
         "detail": f"upstream split: {len(pieces)} pieces"},
        {"check": "no entry skipped by upstream's ':' rule", "ok": None not in up,
         "detail": f"{up.get(None, 0)} skipped"},
        {"check": "pass + syntax + semantic == number of tasks (stats.py's assertion)",
         "ok": up["pass"] + up["syntax"] + up["semantic"] == n,
         "detail": f"{up['pass']} + {up['syntax']} + {up['semantic']} = {up['pass'] + up['syntax'] + up['semantic']}"},
        {"check": "the kit's finer cause gives upstream's class for every entry",
         "ok": all(p["kit"] == p["upstream"] for p in per_task),
         "detail": ", ".join(f"task {p['task_id']}: kit {p['kit']} vs upstream {p['upstream']}"
                             for p in per_task if p["kit"] != p["upstream"]) or "all agree"},
        {"check": "the finer causes add up to upstream's totals",
         "ok": all(sum(finer[k].values()) == up[k] for k in hyperkernel.UPSTREAM_CLASSES),
         "detail": "; ".join(f"{k}: {sum(finer[k].values())} = {up[k]}" for k in hyperkernel.UPSTREAM_CLASSES)},
    ]
    return {"overall": _agg(up["pass"], n),
            "errors": {"syntax": _agg(up["syntax"], n), "semantic": _agg(up["semantic"], n)},
            "by_bug_type": by_type, "by_bug_type_normalized": by_norm, "by_bug_num": by_num,
            "finer": {k: dict(finer[k].most_common()) for k in hyperkernel.UPSTREAM_CLASSES},
            "raised_in": {k: dict(v.most_common()) for k, v in raised.items()},
            "per_task": per_task, "checks": checks, "quirks": [str(q) for q in bench.quirks]}


def check_results_json(fetched, tasks: list[Task], rel: str = RESULTS_JSON) -> dict:
    """Facts about the published specs: ``{"tasks", "specs_per_task" (Counter as dict),
    "keys_match" (every key i names task i's syscall), "rejected" (task_id -> findings
    of :func:`integrity_scan`)}``. Raises ManifestError (file) when not upstream's shape."""
    data = _load_results(_path(fetched, rel), rel)
    per = Counter()
    match = True
    rejected = {}
    for i, t in enumerate(tasks):
        entry = data.get(str(i))
        if not isinstance(entry, dict):
            raise ManifestError(f"{rel}: no entry for task {i}")
        match &= list(entry) == [t.syscall]
        specs = entry.get(t.syscall)
        specs = specs if isinstance(specs, list) else []
        per[len(specs)] += 1
        for s in specs:
            found = integrity_scan(s)
            if found:
                rejected[t.task_id] = found
    return {"tasks": len(data), "specs_per_task": {str(k): v for k, v in sorted(per.items())},
            "keys_match": match, "rejected": rejected}


def load_published() -> dict:
    """``results/published/osvbench.json``."""
    from ..report import load_published as _load
    return _load(NAME)


def _figure_value(scores: dict, metric: dict) -> dict:
    scope, key = metric["scope"], metric.get("key")
    if scope == "overall":
        return scores["overall"]
    if scope == "bug_type":
        return scores["by_bug_type"][key]
    if scope == "error":
        return scores["errors"][key]
    raise ValueError(f"unknown figure scope {scope!r}")


def reproduce(fetched, published: dict | None = None) -> dict:
    """Published vs reproduced for every figure of ``results/published/osvbench.json``.

    Returns ``{"benchmark", "version", "source", "figures": [{name, table, row, column,
    published, reproduced, equal, status, notes}], "summary", "classification",
    "checks", "notes", "dataset"}``. Equality is exact on counts and on percentages to 2
    decimals. A failed consistency check counts as a difference (summary ``differs``),
    so ``verikit reproduce osvbench`` exits non-zero.
    """
    published = published or load_published()
    bench = load_benchmark(fetched)
    scores = rescore(fetched, bench)
    results = check_results_json(fetched, bench.tasks)
    figures = []
    for fig in published["figures"]:
        pub = {k: fig[k] for k in ("passed", "total", "percent") if k in fig}
        rep = _figure_value(scores, fig["metric"])
        equal = all(rep.get(k) == v if k != "percent" else round(rep[k], 2) == round(v, 2) for k, v in pub.items())
        figures.append({"name": fig["name"], "table": fig["table"], "row": fig["row"], "column": fig["column"],
                        "published": pub, "reproduced": {k: rep.get(k) for k in pub}, "equal": equal,
                        "status": "reproduced" if equal else "differs",
                        "notes": [fig["source"]] if fig.get("source") else []})
    checks = scores["checks"] + [
        {"check": "the published results JSON has one spec per task, keyed by the task's syscall",
         "ok": results["keys_match"] and results["specs_per_task"] == {"1": len(bench.tasks)},
         "detail": f"specs per task: {results['specs_per_task']}"},
    ]
    counts = Counter(f["status"] for f in figures)
    failed = [c for c in checks if not c["ok"]]
    prompts = Prompts.load(fetched)
    shown = set(prompts.example_syscalls(5))
    inside = [p for p in scores["per_task"] if p["syscall"] in shown]
    outside = [p for p in scores["per_task"] if p["syscall"] not in shown]
    f, r = scores["finer"], scores["raised_in"].get("syntax", {})
    notes = [
        *(f"quirk: {q}" for q in scores["quirks"]),
        ("rule (upstream stats.py): an entry is a pass if it contains '... ok', else a semantic error if it "
         "contains 'Could not prove, trying to find a minimal ce' or 'Timeout', else a 'syntax error'"),
        "finer causes: pass = " + ", ".join(f"{k} {v}" for k, v in f["pass"].items())
        + "; semantic = " + ", ".join(f"{k} {v}" for k, v in f["semantic"].items())
        + "; syntax = " + ", ".join(f"{k} {v}" for k, v in f["syntax"].items()),
        "'syntax' errors by where the exception was raised: " + ", ".join(f"{k} {v}" for k, v in r.items())
        + " (candidate = the spec's own code; hv6py = Hyperkernel's state classes rejecting a misuse; "
          "z3 = Z3 rejecting an ill-sorted term; libirpy/harness = Hyperkernel's checker)",
        (f"Table 1 columns follow upstream's exact-spelling rule; with the misspellings read as meant, memory "
         f"leak would be {scores['by_bug_type_normalized']['memory leak']['passed']}/"
         f"{scores['by_bug_type_normalized']['memory leak']['total']} and buffer overflow "
         f"{scores['by_bug_type_normalized']['buffer overflow']['passed']}/"
         f"{scores['by_bug_type_normalized']['buffer overflow']['total']} (not published figures)"),
        (f"the 5-shot prompt contains the solved specs of {len(shown)} of the 49 syscalls ({', '.join(sorted(shown))}): "
         f"pass rate {sum(p['upstream'] == 'pass' for p in inside)}/{len(inside)} on their tasks vs "
         f"{sum(p['upstream'] == 'pass' for p in outside)}/{len(outside)} on the others"),
        ("the released runner (spec_util.py) checks each spec with HV6.test_<syscall> on the one Hyperkernel "
         "build inside its image: the task's (possibly buggy) code variant is shown to the model but not compiled "
         "or checked by it (the paper defines a pass against all injected-bug implementations)"),
        (f"integrity scan of the published specs (forbidden names outside comments/strings): "
         f"{len(results['rejected'])} of {len(bench.tasks)} would be rejected"),
    ]
    report = {"benchmark": NAME, "version": VERSION, "source": published.get("source"), "figures": figures,
              "summary": {"reproduced": counts["reproduced"], "differs": counts["differs"] + len(failed),
                          "not_reproducible": counts["not_reproducible"],
                          "failed_checks": len(failed),
                          "all_reproducible_equal": counts["differs"] == 0 and not failed},
              "classification": {k: scores[k] for k in ("finer", "raised_in", "by_bug_type_normalized",
                                                        "by_bug_num", "per_task")},
              "checks": checks, "notes": notes}
    if isinstance(fetched, datasets.FetchedDataset):
        report["dataset"] = fetched.provenance()
    return report


# ---------------------------------------------------------------------------------------
# Predictions: conversion from upstream's results JSON, and verification
# ---------------------------------------------------------------------------------------

def _load_results(path: Path, rel: str) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ManifestError(f"{rel}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}") from exc
    if not isinstance(data, dict):
        raise ManifestError(f"{rel}:1: expected an object {{\"<task index>\": {{\"<syscall>\": [specs]}}}}")
    return data


def convert_upstream_results(path: str | Path, tasks: list[Task], *, model: str | None = None,
                             where: str | None = None) -> tuple[list[dict], list[str]]:
    """Predictions lines from an upstream results JSON (``results/<dir>/<llm>_<task>.json``
    as LLM_API_Invocations_passk.py writes it: ``{"<i>": {"<syscall>": [spec, ...]}}``,
    or ``{"<i>": {"<llm>": "Error!"}}`` when the API call failed).

    Each spec becomes ``{"task_id": "<i>", "model", "sample": j, "output": spec, "mode":
    "spec", "meta": {...}}`` (valid against schemas/predictions.schema.json). ``model``
    defaults to the ``<llm>`` part of the file name.

    Returns:
        ``(lines, notes)``: notes list tasks with no spec (failed calls, empty lists).

    Raises:
        ManifestError: not upstream's shape (names the file and the key), a key that is
            not a task index, or a syscall that is not the task's.
    """
    path = Path(path)
    rel = where or str(path)
    data = _load_results(path, rel)
    model = model or path.stem.rsplit("_", 1)[0]
    by_index = {t.task_id: t for t in tasks}
    lines, notes = [], []
    for key, entry in sorted(data.items(), key=lambda kv: int(kv[0]) if kv[0].isdigit() else -1):
        if key not in by_index:
            raise ManifestError(f"{rel}: key {key!r} is not a task index (0..{len(tasks) - 1})")
        t = by_index[key]
        if not isinstance(entry, dict) or len(entry) != 1:
            raise ManifestError(f"{rel}: entry {key!r}: expected {{\"{t.syscall}\": [specs]}}")
        (name, specs), = entry.items()
        if specs == "Error!":
            notes.append(f"task {key} ({t.syscall}): the API call failed upstream ('Error!'): no spec")
            continue
        if name != t.syscall:
            raise ManifestError(f"{rel}: entry {key!r} is for {name!r}, but task {key} is {t.syscall!r}")
        if not isinstance(specs, list) or not all(isinstance(s, str) for s in specs):
            raise ManifestError(f"{rel}: entry {key!r}: expected a list of spec strings")
        if not specs:
            notes.append(f"task {key} ({t.syscall}): no spec (no ```python block in the model's answer)")
        for j, spec in enumerate(specs):
            meta = {"source": rel, "upstream_key": key, "syscall": t.syscall}
            if model in UPSTREAM_MODELS:
                meta["api_model"] = UPSTREAM_MODELS[model]
            lines.append({"task_id": key, "model": model, "sample": j, "output": spec, "mode": "spec", "meta": meta})
    return lines, notes


def write_predictions(lines: list[dict], path: str | Path) -> None:
    """Validate every line (schemas/predictions.schema.json) and write the JSONL file
    atomically. Raises ValidationError naming ``path:line``."""
    from ..results import validate, write_text_atomic

    for i, obj in enumerate(lines, 1):
        validate("predictions", obj, f"{path}:{i}")
    write_text_atomic(Path(path), "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in lines))


def spec_jobs(tasks: list[Task], candidates) -> list[hyperkernel.SpecJob]:
    """One :class:`~harness.verifiers.hyperkernel.SpecJob` per candidate (a
    :class:`~harness.benchmarks.Candidate`): the spec extracted from its output
    (:func:`extract_spec`), ``rejected`` without running when :func:`integrity_scan`
    finds something. Raises KeyError for an unknown task id."""
    by_id = {t.task_id: t for t in tasks}
    out = []
    for c in candidates:
        t = by_id[c.task_id]
        spec = extract_spec(c.output)
        found = integrity_scan(spec)
        checks = ({"name": "forbidden_names", "ok": not found, "detail": "; ".join(found) or "none"},)
        pre = ("rejected", "spec uses forbidden names: " + "; ".join(found[:3])) if found else None
        out.append(hyperkernel.SpecJob(task_id=t.task_id, syscall=t.syscall, model=c.model, sample=c.sample,
                                       spec=spec, origin=c.origin, task_sha256=t.sha256, precheck=pre,
                                       checks=checks))
    return out


def summarize(records: list[dict], tasks: list[Task], ks: tuple[int, ...] = (1, 3, 5)) -> dict:
    """Metrics of a verification run: per model, pass@k (unbiased, from n samples per
    task), the paper's categories over all samples (``upstream_class`` of each record:
    pass / semantic / syntax, plus ``rejected``/``infra_error``), the finer causes, and
    pass@1 per Table 1 column (mean over the column's tasks of c/n)."""
    out = {"pass_at_k": hyperkernel.pass_at_k(records, ks), "per_model": {}}
    by_id = {t.task_id: t for t in tasks}
    models = sorted({r["candidate"]["model"] for r in records})
    for model in models:
        recs = [r for r in records if r["candidate"]["model"] == model]
        cls = Counter()
        causes = Counter()
        per_task: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for r in recs:
            ex = r["verifier"].get("extra", {})
            cl = ("rejected" if r["verdict"] == "rejected" else "infra_error" if r["verdict"] == "infra_error"
                  else ex.get("upstream_class") or "syntax")
            cls[cl] += 1
            causes[ex.get("cause") or r["verdict"]] += 1
            if r["verdict"] != "infra_error":
                per_task[r["task_id"]][0] += 1
                per_task[r["task_id"]][1] += r["verdict"] == "verified"
        cols = {}
        for col in BUG_TYPES + (CORRECT,):
            ids = [tid for tid in per_task if col in by_id[tid].upstream_bug_columns]
            cols[col] = (round(100 * sum(per_task[i][1] / per_task[i][0] for i in ids) / len(ids), 2)
                         if ids else None)
        out["per_model"][model] = {"samples": len(recs), "classes": dict(cls), "causes": dict(causes.most_common()),
                                   "pass_at_1_percent_by_bug_type": cols}
    return out


def verify(predictions: str | Path, out_dir: str | Path, *, data_dir=None, timeout_s: float = 600,
           parallel: int = 1, mem_mb: int = 8192, keep_going: bool = False, sandbox=None, cache=None,
           ks: tuple[int, ...] = (1, 3, 5), progress=None, toolchain=None) -> dict:
    """Check a predictions file with the Hyperkernel verifier and write ``out_dir``:
    ``records.jsonl`` (one record per candidate, resumable), ``summary.json``
    (:func:`summarize`) and ``output_upstream_format`` (an upstream-format log, one entry
    per task, for upstream's stats.py). ``sandbox``: default a container of the job image
    (:func:`harness.verifiers.hyperkernel.open_sandbox`); ``toolchain``: default probed in
    it.

    Raises:
        harness.predictions.PredictionsError: bad lines (file:line), unless keep_going.
        HyperkernelUnavailable: no engine or no job image (says how to get it).
    """
    from .. import predictions as predictions_mod
    from ..results import write_json_atomic

    fetched = datasets.fetch(DEFAULT_DATASET, data_dir=data_dir)
    tasks = load_tasks(fetched)
    preds = predictions_mod.load(predictions, {t.task_id for t in tasks}, mode="spec", keep_going=keep_going)
    items = spec_jobs(tasks, preds.candidates)
    own = sandbox is None
    sandbox = sandbox or hyperkernel.open_sandbox(slots=parallel)
    try:
        records, stats = hyperkernel.run_specs(
            items, sandbox, out_dir, benchmark=NAME, benchmark_version=VERSION,
            dataset={"name": DEFAULT_DATASET, "revision": fetched.dataset.source.revision},
            timeout_s=timeout_s, mem_mb=mem_mb, parallel=parallel, cache=cache, progress=progress,
            toolchain=toolchain)
    finally:
        if own:
            sandbox.close()
    summary = {"benchmark": NAME, "version": VERSION, "predictions": preds.manifest(), "counts": stats,
               "input_errors": [e.to_json() for e in preds.errors], **summarize(records, tasks, ks)}
    out = Path(out_dir)
    write_json_atomic(out / "summary.json", summary)
    seen = {r["task_id"] for r in records}
    hyperkernel.write_upstream_log(records, [(t.task_id, t.syscall) for t in tasks if t.task_id in seen],
                                   out / "output_upstream_format")
    return summary


# ---------------------------------------------------------------------------------------
# python -m harness.benchmarks.osvbench convert | verify | prompt
# ---------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    """Command line: ``convert`` (upstream results JSON -> predictions JSONL), ``verify``
    (predictions -> records, summary, upstream-format log; needs the job image), ``prompt``
    (print a task's prompt). Errors are one clear message and exit 2, not a traceback."""
    import argparse
    import sys

    from .. import predictions as predictions_mod

    p = argparse.ArgumentParser(prog="python -m harness.benchmarks.osvbench", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("convert", help="upstream results JSON -> predictions JSONL")
    c.add_argument("results", nargs="?", help=f"results JSON (default: the pinned {RESULTS_JSON})")
    c.add_argument("-o", "--output", type=Path, required=True)
    c.add_argument("--model", help="model name (default: from the file name)")
    v = sub.add_parser("verify", help="check predictions with the Hyperkernel verifier (container)")
    v.add_argument("predictions")
    v.add_argument("--out", type=Path, required=True)
    v.add_argument("--timeout", type=float, default=600.0, help="seconds per check (upstream: 600)")
    v.add_argument("-j", "--jobs", type=int, default=1)
    v.add_argument("--memory", type=int, default=8192, help="MiB per job")
    v.add_argument("--keep-going", action="store_true")
    pr = sub.add_parser("prompt", help="print the prompt of a task")
    pr.add_argument("task_id")
    pr.add_argument("--shots", type=int, default=5, choices=SHOTS)
    for sp in (c, v, pr):
        sp.add_argument("--data-dir", type=Path)
    args = p.parse_args(argv)
    try:
        if args.cmd == "verify":
            s = verify(args.predictions, args.out, data_dir=args.data_dir, timeout_s=args.timeout,
                       parallel=args.jobs, mem_mb=args.memory, keep_going=args.keep_going)
            print(json.dumps(s["pass_at_k"], indent=2))
            print(f"wrote {args.out}/records.jsonl, summary.json, output_upstream_format")
            return 0
        fetched = datasets.fetch(DEFAULT_DATASET, data_dir=args.data_dir)
        tasks = load_tasks(fetched)
        if args.cmd == "convert":
            src = Path(args.results) if args.results else _path(fetched, RESULTS_JSON)
            lines, notes = convert_upstream_results(src, tasks, model=args.model,
                                                    where=None if args.results else RESULTS_JSON)
            write_predictions(lines, args.output)
            for n in notes:
                print(f"note: {n}", file=sys.stderr)
            print(f"wrote {len(lines)} predictions to {args.output}")
            return 0
        by_id = {t.task_id: t for t in tasks}
        if args.task_id not in by_id:
            raise ManifestError(f"unknown task id {args.task_id!r}: expected 0..{len(tasks) - 1}")
        sys.stdout.write(Prompts.load(fetched).prompt(by_id[args.task_id], args.shots))
        return 0
    except (ManifestError, datasets.DatasetError, predictions_mod.PredictionsError, hyperkernel.HyperkernelUnavailable,
            FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
