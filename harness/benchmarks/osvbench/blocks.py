"""OSVBench's blocks of the HTML report (:meth:`harness.plugin.Benchmark.report_blocks`)."""

from __future__ import annotations

from ...plugin import Bars, Block, Table, Text
from ...model import Record


def report_blocks(report: dict, records: list[Record]) -> list[Block]:
    """Pass@1 by bug type, outcomes by error cause and where errors were raised, and the
    checks of the published run, from report.json's ``published_run`` section."""
    run = (report.get("sections") or {}).get("published_run") or {}
    cls = run.get("classification") or {}
    blocks: list[Block] = []
    if cls.get("by_bug_type_normalized"):
        vals = {k: {"pass@1": d["percent"]} for k, d in cls["by_bug_type_normalized"].items()}
        blocks.append(Bars("Pass@1 by bug type (the published run)", vals, ylabel="pass@1 (%)",
                           plot_title="by bug type", ymax=100))
    if cls.get("finer"):
        rows = [[cls_name, cause, n] for cls_name, causes in cls["finer"].items() for cause, n in causes.items()]
        blocks.append(Table("Outcome by error cause (upstream class, the kit's finer cause)",
                            ["upstream class", "cause", "tasks"], rows))
    if cls.get("raised_in"):
        rows = [[cls_name, where, n] for cls_name, d in cls["raised_in"].items() for where, n in d.items()]
        blocks.append(Table("Where the errors were raised", ["class", "raised in", "tasks"], rows))
    for chk in run.get("checks") or []:
        blocks.append(Text(f"check: {chk['check']}: {'ok' if chk['ok'] else 'FAILED'} ({chk.get('detail')})"))
    return blocks
