"""Model-Bench's constants, its tasks (the HumanEval problems that pass the static filters
and the transformer, :func:`load_tasks`) and prompts (the Figure 14 generation prompt in
the paper's three settings, :func:`prompt`, and Figure 12's fix prompt)."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from ..prompting import load_templates, render
from .dataset import humaneval_path
from .problems import Problem, normalized_program, read_humaneval
from .stages import static_stages
from .transform import transform

NAME = "modelbench"
VERSION = "1"
MODES = ("original-fewshot", "original-zeroshot", "transformed-fewshot")
DEFAULT_MODES = ("original-fewshot",)
VERIFIER = "tlc"
CONTAINER_ONLY = True  # TLC runs in the tlaplus image, not on hosts

#: The kit's own files: oracles, bundled candidates, prompt examples, the task table (the
#: prompt templates are in ``prompts.yaml`` beside this module).
DATA_DIR = Path(__file__).resolve().parent / "data"
BUNDLED_MODEL = "bundled-imperfect"
#: The task whose oracle is mutated into the cheat canaries.
CANARY_TASK = "HumanEval/13"

NOT_REPRODUCIBLE = ("Model-Bench publishes no artifacts (no normalized or rewritten programs, oracle TLA+ "
                    "models, TLC configurations, generations or per-sample results), so Table 2 (Runnable@k, "
                    "similarity, fixes per model and prompt setting) cannot be recomputed")
TABLE1_NOT_REPRODUCIBLE = ("the paper's normalized/de-duplicated files and its LLM rewriting of programs with "
                           "filtered language features (Figure 11, several attempts) are not published; the kit "
                           "applies the filters without rewriting")


@dataclass(frozen=True)
class Task:
    """One Model-Bench task.

    Attributes:
        task_id: HumanEval id (``HumanEval/13``).
        problem: the :class:`~harness.benchmarks.modelbench.problems.Problem`.
        transformed: the transformed solution module (Section 3.2).
        module: the module name the prompt asks for (``HumanEval_13``).
        constants: values of the model's CONSTANTS (name -> TLA+ value text).
        oracle: the kit's oracle model text, or None.
        oracle_file: its path relative to the repository, or None.
        domain: the program's bounded input domain (``data/tasks.json`` ``domain``, see
            :mod:`~harness.benchmarks.modelbench.programs`), or None: no behaviour harness.
    """

    task_id: str
    problem: Problem
    transformed: str
    module: str
    constants: dict
    oracle: str | None = None
    oracle_file: str | None = None
    domain: tuple | None = None

    @property
    def sha256(self) -> str:
        """sha256 hex of the task's content: code, tests, constants, oracle text and
        input domain."""
        content = [self.problem.code, self.problem.tests, self.constants, self.oracle]
        if self.domain is not None:
            content.append(list(self.domain))
        return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()


def task_table() -> dict:
    """``data/tasks.json``: oracle modules, constants, default constant.

    Raises:
        ValueError: the file is not valid JSON (names file and line).
    """
    path = DATA_DIR / "tasks.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from None


def module_for(task_id: str) -> str:
    """TLA+ module name for a task id (``HumanEval/13`` -> ``HumanEval_13``)."""
    return re.sub(r"\W", "_", task_id)


def repo_rel(path: Path) -> str:
    root = Path(__file__).resolve().parents[3]
    return str(path.resolve().relative_to(root)) if path.resolve().is_relative_to(root) else str(path)


def load_tasks(fetched) -> list[Task]:
    """The HumanEval problems that pass the static filters and the transformer, in
    HumanEval order, with their oracles where the kit has one.

    ``fetched``: :func:`~harness.benchmarks.modelbench.dataset.fetch`'s result, or a path
    to a HumanEval ``.jsonl(.gz)``.

    Raises:
        ProblemFileError: a malformed HumanEval line (names file:line).
        ValueError: ``data/tasks.json`` is not valid JSON.
    """
    table = task_table()
    default = table.get("default_constant", "3")
    tasks = []
    for p in read_humaneval(humaneval_path(fetched)):
        st = static_stages(p)
        if st.transformed is None:
            continue
        entry = table["oracles"].get(p.task_id, {})
        oracle = oracle_file = None
        if entry:
            f = DATA_DIR / "oracles" / f"{entry['module']}.tla"
            oracle, oracle_file = f.read_text(encoding="utf-8"), repo_rel(f)
        consts = dict(entry.get("constants") or {"MaxLen": default, "MaxValue": default})
        domain = tuple(entry["domain"]) if entry.get("domain") else None
        tasks.append(Task(p.task_id, p, st.transformed, module_for(p.task_id), consts, oracle, oracle_file, domain))
    return tasks


#: The prompt templates of ``prompts.yaml`` (id -> :class:`~harness.plugin.PromptTemplate`).
TEMPLATES = load_templates(Path(__file__).resolve().parent / "prompts.yaml")
#: The Figure 14 prompt (template ``modelbench-generate``: the paper's text with its LaTeX
#: escapes resolved) with the fields {examples}, {module_name} and {code}.
PROMPT_TEMPLATE = TEMPLATES["modelbench-generate"].text
#: The paper's fix prompt (Figure 12, template ``modelbench-fix``) with the field {error}.
FIX_TEMPLATE = TEMPLATES["modelbench-fix"].text


def _example(n: int, transformed: bool) -> str:
    py = (DATA_DIR / "examples" / f"example{n}.py").read_text(encoding="utf-8")
    if transformed:
        fn = re.match(r"def (\w+)", py).group(1)
        code, _, asserts = py.partition("\n\n\n")
        py = transform(code, fn).rstrip() + "\n\n\n" + asserts
    tla = (DATA_DIR / "examples" / f"example{n}.tla").read_text(encoding="utf-8")
    return f"```python\n{py.rstrip()}\n```\n```tla\n{tla.rstrip()}\n```"


def check_mode(mode: str) -> None:
    """Raises ValueError (naming the modes) when ``mode`` is not a Model-Bench mode."""
    if mode not in MODES:
        raise ValueError(f"unknown Model-Bench mode {mode!r}; choose from {', '.join(MODES)}")


def prompt(task: Task, mode: str) -> str:
    """The generation prompt of ``task`` in a setting (Section 3.1 "Prompt derivation",
    Figure 14): ``original-fewshot`` (the normalized program, two examples),
    ``original-zeroshot`` (no examples), ``transformed-fewshot`` (the transformed program,
    two examples whose Python is transformed too). The examples are TLA+ models written
    for the kit (``data/examples``; the paper's are unpublished).

    Raises:
        ValueError: unknown mode.
    """
    check_mode(mode)
    transformed = mode == "transformed-fewshot"
    code = normalized_program(task.problem, code=task.transformed if transformed else None)
    examples = "" if mode == "original-zeroshot" else (
        " For example:\n" + _example(1, transformed) + "\n" + _example(2, transformed))
    return render(TEMPLATES["modelbench-generate"], examples=examples, module_name=task.module,
                  code=f"```python\n{code.rstrip()}\n```")


def fix_prompt(error: str) -> str:
    """The paper's fix prompt (Figure 12) for one TLC error message."""
    return render(TEMPLATES["modelbench-fix"], error=error)
