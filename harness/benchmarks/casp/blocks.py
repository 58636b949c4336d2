"""CASP's blocks of the HTML report (:meth:`harness.plugin.Benchmark.report_blocks`)."""

from __future__ import annotations

from collections import defaultdict

from ...plugin import Bars, Block
from .. import is_canary
from ...model import Record


def report_blocks(report: dict, records: list[Record]) -> list[Block]:
    """One bar chart: per mode, the candidates (canaries apart) whose WP goals were all
    proved vs those with some goal unproved."""
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
