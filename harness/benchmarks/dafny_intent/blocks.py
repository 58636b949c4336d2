"""Dafny intent's blocks of the HTML report (:meth:`harness.plugin.Benchmark.report_blocks`)."""

from __future__ import annotations

from ...plugin import Block, Scatter, Table
from ...model import Record


def report_blocks(report: dict, records: list[Record]) -> list[Block]:
    """Correctness vs completeness per specification, the per-model table and the
    paper's findings re-checked, from report.json's sections."""
    sec = report.get("sections") or {}
    blocks: list[Block] = []
    per_task = (sec.get("labels") or {}).get("per_task") or []
    if per_task:
        points = [(t["correctness"], t["completeness"], f"human label {t.get('human')}") for t in per_task
                  if t.get("correctness") is not None and t.get("completeness") is not None]
        blocks.append(Scatter("Correctness vs completeness per specification (paper Section II: symbolic tests "
                              "and mutants; completeness on positive evidence: refutations Dafny proved)", points,
                              xlabel="correctness (tests verified)",
                              ylabel="completeness (mutants refuted)", plot_title="specifications"))
    metrics = sec.get("metrics") or {}
    if metrics:
        head = ["model", "candidates", "fully correct", "avg correctness", "avg completeness",
                "avg completeness if correct", "avg completeness (paper's count)",
                "avg completeness if correct (paper's count)", "tests", "mutants", "refuted mutants",
                "rejected mutants (paper's count)", "unknown mutants"]
        rows = [[m, d.get("candidates"), d.get("fully_correct"), d.get("avg_correctness"), d.get("avg_completeness"),
                 d.get("avg_completeness_if_correct"), d.get("avg_completeness_paper"),
                 d.get("avg_completeness_if_correct_paper"), d.get("tests"), d.get("mutants"), d.get("rejected"),
                 d.get("rejected_paper"), d.get("unknown")]
                for m, d in metrics.items()]
        blocks.append(Table("Correctness and completeness per model", head, rows))
    findings = sec.get("findings") or {}
    if findings:
        blocks.append(Table("The paper's findings, re-checked",
                            ["task", "label", "verdict", "correctness", "completeness (paper's count)",
                             "completeness (positive evidence)", "paper"],
                            [[t, f.get("label"), f.get("verdict"), f.get("correctness"), f.get("completeness_paper"),
                              f.get("completeness"), f.get("paper")] for t, f in findings.items()]))
    return blocks
