"""CASP's blocks of the HTML report (:meth:`harness.plugin.Benchmark.report_blocks`)."""

from __future__ import annotations

from collections import defaultdict

from ...plugin import Bars, Block, Table
from ...results import is_canary
from . import execution
from ...model import Record


def report_blocks(report: dict, records: list[Record]) -> list[Block]:
    """A bar chart: per mode, the candidates (canaries apart) whose WP goals were all
    proved vs those with some goal unproved; and a table of the candidates' second net
    (:func:`execution_table`)."""
    table = execution_table(records)
    return _goal_bars(records) + ([table] if table else [])


def execution_table(records: list[Record]) -> Table | None:
    """Per candidate-mode record (canaries apart): its verdict, what the execution
    cross-check did (``passed``, ``refuted``, ``not-run``, with the reason when it did not
    pass: a target it cannot run is named, never silent) and, spec-from-code, the spec
    strength beside ``verified``: mutants of the task's body the contract rejects at run
    time over those that change the behaviour (positive evidence only; it changes no
    verdict). None when the run has no candidate-mode record."""
    rows = []
    for r in records:
        if r["mode"] == "gold" or is_canary(r["candidate"]["model"]):
            continue
        extra = r["verifier"].get("extra", {}) if r.get("verifier") else {}
        ex = extra.get("execution") or {}
        st = extra.get("strength") or {}
        status = ex.get("status", execution.DECIDED_BEFORE)
        strength = (f"{st['score']:.2f} ({st['killed']}/{st['changed']})" if st.get("score") is not None
                    else (st.get("not_run") or "") if st else "")
        rows.append([r["task_id"], r["mode"], r["candidate"]["model"], r["candidate"]["sample"], r["verdict"], status,
                     "" if status == "passed" else (ex.get("reason") or ""), strength])
    if not rows:
        return None
    return Table("Execution cross-check and spec strength per candidate",
                 ["task", "mode", "model", "sample", "verdict", "execution", "why not passed", "spec strength (killed/changed)"],
                 rows)


def _goal_bars(records: list[Record]) -> list[Block]:
    pts = defaultdict(list)
    for r in records:
        g = r.get("goals") or {}
        if g.get("total") and not is_canary(r["candidate"]["model"]):
            pts[r["mode"]].append(g["proved"] / g["total"])
    if not pts:
        return []
    vals = {mode: {"all goals proved": sum(1 for p in ps if p == 1.0), "some goals unproved": sum(1 for p in ps if p < 1.0)}
            for mode, ps in pts.items()}
    return [Bars("WP goals per candidate", vals, ylabel="candidates", plot_title="candidates by goal outcome")]
