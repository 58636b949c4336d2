"""NTP4VC's blocks of the HTML report (:meth:`harness.plugin.Benchmark.report_blocks`)."""

from __future__ import annotations

from collections import Counter, defaultdict

from ...plugin import Bars, Block, Text, VerdictBars
from ...results import is_canary
from ...model import Record


def report_blocks(report: dict, records: list[Record]) -> list[Block]:
    """Verdicts by source (pearl / frama_c), published vs reproduced pass rates by source,
    and the consistency checks of the reproduction."""
    blocks: list[Block] = []
    counts: dict[str, Counter] = defaultdict(Counter)
    for r in records:
        if not is_canary(r["candidate"]["model"]):
            counts[f"{r['task_id'].split('/', 1)[0]} ({r['mode']}, {r['candidate']['model']})"][r["verdict"]] += 1
    if counts:
        blocks.append(VerdictBars("Verdicts by source (pearl: textbook programs; frama_c: real C projects)",
                                  {k: dict(c) for k, c in sorted(counts.items())}, plot_title="verdicts by source"))
    by_source: dict[str, dict[str, float]] = defaultdict(dict)
    for f in (report.get("reproduction") or {}).get("figures") or []:
        name = f.get("name") or ""
        if ".source." in name:
            table, source = name.split(".source.")[0], name.split(".source.")[1]
            for side in ("published", "reproduced"):
                val = f.get(side)
                if isinstance(val, dict) and val.get("percent") is not None:
                    by_source[f"{table} {source}"][side] = val["percent"]
    if by_source:
        blocks.append(Bars("Pass rates by source, published vs reproduced (a missing bar: not reproducible here)",
                           dict(by_source), ylabel="pass (%)", plot_title="by source", ymax=100))
    for c in (report.get("sections") or {}).get("consistency") or []:
        blocks.append(Text(f"consistency check: {c['check']}: {'ok' if c['ok'] else 'FAILED'} "
                           f"(Sledgehammer {c.get('sledgehammer')}, union {c.get('union')})"))
    return blocks
