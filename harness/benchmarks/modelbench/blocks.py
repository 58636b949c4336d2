"""Model-Bench's blocks of the HTML report (:meth:`harness.plugin.Benchmark.report_blocks`)."""

from __future__ import annotations

from ...plugin import Block, Table, Text
from ...model import Record


def report_blocks(report: dict, records: list[Record]) -> list[Block]:
    """Runnable@k and TLC outcomes per mode and model, Table 1's filters, and what is
    not reproducible, from report.json's sections."""
    sec = report.get("sections") or {}
    blocks: list[Block] = []
    rows = [[mode, model, e.get("tasks"), e.get("samples"), e.get("runnable"),
             ", ".join(f"@{k} {val if not isinstance(val, float) else round(val, 4)}"
                       for k, val in (e.get("runnable_at_k") or {}).items())]
            for mode, models in (sec.get("runnable_at_k") or {}).items() for model, e in models.items()]
    if rows:
        blocks.append(Table("Runnable@k (paper Definition: TLC checks the model without failure)",
                            ["mode", "model", "tasks", "samples", "runnable", "Runnable@k"], rows))
    outcome_rows = [[mode, model, ", ".join(f"{k} {n}" for k, n in sorted(o.items()))]
                    for mode, models in (sec.get("outcomes") or {}).items() for model, o in models.items()]
    if outcome_rows:
        blocks.append(Table("TLC outcomes", ["mode", "model", "outcomes"], outcome_rows))
    if sec.get("table1"):
        head = ["dataset", *next(iter(sec["table1"].values())).keys()]
        blocks.append(Table("Table 1: programs kept by each filter", head,
                            [[k, *d.values()] for k, d in sec["table1"].items()]))
    for key, text in (sec.get("not_reproducible") or {}).items():
        blocks.append(Text(f"not reproducible ({key}): {text}"))
    return blocks
