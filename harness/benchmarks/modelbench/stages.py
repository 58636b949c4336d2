"""Model-Bench's four Section 3.1 stages on a set of problems, the Execution stage in a
sandbox, and Table 1's counts (problems left after each stage).

:func:`filter_counts` is the whole computation behind ``verikit``'s Table-1 command:
problems from HumanEval (the PyPI package) and the user's MBPP / LiveCodeBench files ->
Table 1 and the fate of every problem.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from ...model import Limits
from .dataset import fetch, humaneval_path
from .filters import feature_reasons, library_reasons, type_reasons
from .problems import Problem, load_problems, normalized_program, read_humaneval
from .transform import TransformError, transform

#: Table 1's columns: the stages a problem passes, in order.
STAGES = ("origin", "libraries", "language_features", "types", "execution")
#: Table 1 of the paper (problems left after each stage), for reference in reports.
PAPER_TABLE1 = {
    "HumanEval": {"origin": 164, "libraries": 156, "language_features": 139, "types": 122, "execution": 105},
    "MBPP": {"origin": 427, "libraries": 356, "language_features": 334, "types": 309, "execution": 262},
    "LiveCodeBench": {"origin": 92, "libraries": 73, "language_features": 55, "types": 48, "execution": 33},
}

#: Limits of one program run at the Execution stage (wall seconds, MiB).
EXEC_WALL_S = 20.0
EXEC_MEM_MB = 1024


@dataclass
class Stage:
    """The fate of one problem: ``kept_until`` (last stage it passed), ``reasons``
    (why it was dropped at the next one), ``transformed`` (the transformed code when
    the transformer accepted it)."""

    task_id: str
    kept_until: str
    reasons: list[str] = field(default_factory=list)
    transformed: str | None = None


def static_stages(p: Problem) -> Stage:
    """Filters 1-3 and the transformer (no execution). The Libraries filter reads the whole
    normalized file (function and tests: the paper filters "Python code", after
    normalization); the others read the solution code."""
    reasons = library_reasons(normalized_program(p))
    if reasons:
        return Stage(p.task_id, "origin", reasons)
    reasons = feature_reasons(p.code, p.entry_point)
    if reasons:
        return Stage(p.task_id, "libraries", reasons)
    reasons = type_reasons(p.code, p.entry_point)
    if reasons:
        return Stage(p.task_id, "language_features", reasons)
    try:
        transformed = transform(p.code, p.entry_point)
    except TransformError as exc:
        return Stage(p.task_id, "types", [f"transformer: {exc}"])
    return Stage(p.task_id, "types", [], transformed)


def execution_argv() -> list[str]:
    """Command running ``program.py`` in a sandbox (isolated mode, no site packages; the
    environment of :func:`run_program` fixes the hash seed)."""
    return [sys.executable, "-I", "-S", "program.py"]


def run_program(sandbox, program: str, *, wall_s: float = EXEC_WALL_S, mem_mb: int = EXEC_MEM_MB):
    """Run one Python file in ``sandbox`` (``HostSandbox`` or a container) with limits;
    returns the :class:`~harness.model.ProcResult` (the sandbox, not this module, starts
    the process)."""
    return sandbox.run(execution_argv(), files={"program.py": program}, env={"PYTHONHASHSEED": "0"},
                       limits=Limits(wall_s=wall_s, mem_mb=mem_mb, output_bytes=1 << 20))


def pipeline(problems: list[Problem], sandbox) -> list[Stage]:
    """All four filters (Section 3.1) on ``problems``; the Execution stage runs each
    normalized program in ``sandbox`` (it passes when it exits 0) and needs the
    transformer to accept the function."""
    out = []
    for p in problems:
        st = static_stages(p)
        if st.kept_until == "types" and not st.reasons:
            res = run_program(sandbox, normalized_program(p))
            if res.returncode == 0:
                st.kept_until = "execution"
            else:
                tail = (res.stderr.strip().splitlines() or ["no output"])[-1]
                st.reasons = ["timeout" if res.timed_out else f"execution failed: {tail[:200]}"]
        out.append(st)
    return out


def table1(problems: list[Problem], stages: list[Stage]) -> dict:
    """Table-1-shaped counts: ``{source: {stage: problems kept}}`` plus ``Total`` and,
    per stage, the drop rate against the previous stage (``drop_pct``)."""
    order = {s: i for i, s in enumerate(STAGES)}
    by_src: dict[str, dict[str, int]] = {}
    src_of = {p.task_id: p.source for p in problems}
    for st in stages:
        row = by_src.setdefault(src_of[st.task_id], {s: 0 for s in STAGES})
        for s in STAGES:
            if order[s] <= order[st.kept_until]:
                row[s] += 1
    total = {s: sum(r[s] for r in by_src.values()) for s in STAGES}
    drop = {s: (round(100.0 * (total[STAGES[i - 1]] - total[s]) / total[STAGES[i - 1]], 1)
                if i and total[STAGES[i - 1]] else None) for i, s in enumerate(STAGES)}
    return {**by_src, "Total": total, "drop_pct": drop}


def filter_counts(paths: dict[str, str | Path], sandbox, *, humaneval: bool = True) -> dict:
    """Table 1 for a set of problem files, the Execution stage run in ``sandbox``.

    Args:
        paths: source name -> problems file: ``"MBPP"`` (MBPP's own JSONL or the kit's
            generic one), ``"LiveCodeBench"`` (the kit's generic JSONL), ``"HumanEval"``
            (a ``HumanEval.jsonl(.gz)``); see :func:`.problems.load_problems`.
        sandbox: where each normalized program runs (e.g.
            :class:`harness.sandbox.local.HostSandbox`; one subprocess per program, 20 s
            and 1 GiB each).
        humaneval: add HumanEval from the pinned PyPI package (:func:`.dataset.fetch`)
            when ``paths`` has no ``"HumanEval"`` entry.

    Returns:
        ``{"table1": {source: {stage: kept}, "Total": {...}, "drop_pct": {stage: % |
        None}}, "stages": [{"task_id", "kept_until", "reasons"}]}`` (JSON-able; stages in
        the order of :data:`STAGES`; see :func:`table1`). :func:`format_table1` prints the
        table.

    Raises:
        ProblemFileError: a malformed problems file (the message names file:line).
        OSError: a file cannot be read.
        harness.datasets.DatasetError: HumanEval is wanted and the package is missing or
            differs from the pin.
    """
    problems: list[Problem] = []
    paths = dict(paths)
    if humaneval and "HumanEval" not in paths:
        paths = {"HumanEval": humaneval_path(fetch()), **paths}
    for source, path in paths.items():
        problems += load_problems(path, source)
    stages = pipeline(problems, sandbox)
    return {"table1": table1(problems, stages),
            "stages": [{"task_id": s.task_id, "kept_until": s.kept_until, "reasons": s.reasons} for s in stages]}


def format_table1(table: dict) -> str:
    """:func:`table1`'s result as a plain-text table (one row per source, ``Total`` and
    the drop rates), columns in the order of :data:`STAGES`."""
    lines = ["source".ljust(16) + "".join(s.ljust(19) for s in STAGES)]
    for src, row in table.items():
        if src != "drop_pct":
            lines.append(src.ljust(16) + "".join(str(row[s]).ljust(19) for s in STAGES))
    lines.append("drop %".ljust(16) + "".join(str(table["drop_pct"][s] or "-").ljust(19) for s in STAGES))
    return "\n".join(line.rstrip() for line in lines) + "\n"


def table1_counts(fetched, sandbox=None) -> dict:
    """Table 1 for HumanEval with the kit's filters (see :func:`table1`). ``fetched``:
    :func:`.dataset.fetch`'s result or a path to a HumanEval ``.jsonl(.gz)``. With a
    ``sandbox`` (e.g. ``HostSandbox()``), the Execution stage runs every program; without,
    the Execution column is the static stages' result (filters 1-3 and the transformer)."""
    problems = read_humaneval(humaneval_path(fetched))
    if sandbox is not None:
        stages = pipeline(problems, sandbox)
    else:
        stages = [static_stages(p) for p in problems]
        for s in stages:
            if s.transformed is not None:
                s.kept_until = "execution"
    return table1(problems, stages)
