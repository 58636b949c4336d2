"""Reports: metrics, the paper's figures, published-vs-reproduced comparison, tables.

``build_report`` turns the records of a run into ``report.json`` (validated against
``schemas/report.schema.json`` by the caller); ``print_summary`` renders the tables a
person reads at the end of a run.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from rich.console import Console
from rich.table import Table

from .metrics import group_metrics
from .results import SCHEMA_VERSION, read_run_dir
from .model import Record


def canary_results(records: list[Record], expected: dict) -> dict:
    """Canaries: ``expected`` maps (mode, model) -> allowed verdicts.

    Returns:
        ``{"ok": bool, "results": [{"mode", "model", "expected", "verdict", "ok"}]}``.
    """
    results = []
    for r in records:
        key = (r["mode"], r["candidate"]["model"])
        if key in expected:
            results.append({"mode": key[0], "model": key[1], "expected": list(expected[key]),
                            "verdict": r["verdict"], "ok": r["verdict"] in expected[key], "reason": r["reason"]})
    return {"ok": all(x["ok"] for x in results), "results": results}


def build_report(benchmark: str, dataset: str, records: list[Record], *, comparison: list[dict],
                 canaries: dict, seed: int, notes: list[str], published: dict) -> dict:
    """Assemble ``report.json`` (see schemas/report.schema.json); ``published``: the
    paper's figures as the benchmark's plugin gives them
    (:meth:`harness.plugin.Benchmark.published`), at least ``{"source": {...}}``."""
    toolchains = {r["toolchain"]["fingerprint"]: r["toolchain"] for r in records}
    return {
        "schema_version": SCHEMA_VERSION,
        "benchmark": benchmark,
        "dataset": dataset,
        "metrics": group_metrics(records, seed=seed),
        "published": published,
        "comparison": comparison,
        "canaries": canaries,
        "toolchains": [{"name": t["name"], "flavor": t["flavor"], "fingerprint": t["fingerprint"],
                        "pin_match": t["pin_match"], "drift": t["drift"]} for t in toolchains.values()],
        "infra_errors": sum(r["verdict"] == "infra_error" for r in records),
        "bootstrap_seed": seed,
        "notes": notes,
    }


def report_inconsistencies(records: list[Record], report: dict) -> list[str]:
    """What in ``report.json`` the run's records do not support: the metrics recomputed
    from the records (with the report's bootstrap seed), the infra-error count, and each
    canary's verdict. Returns one message per difference (empty: consistent)."""
    problems = []
    metrics = json.loads(json.dumps(group_metrics(records, seed=report.get("bootstrap_seed", 0))))  # as written
    if metrics != report.get("metrics"):
        modes = sorted(set(metrics) | set(report.get("metrics", {})))
        differ = [m for m in modes if metrics.get(m) != report.get("metrics", {}).get(m)]
        problems.append(f"metrics of {', '.join(differ)} differ from those recomputed from records.jsonl")
    infra = sum(r["verdict"] == "infra_error" for r in records)
    if report.get("infra_errors") != infra:
        problems.append(f"infra_errors is {report.get('infra_errors')} but records.jsonl has {infra}")
    recorded: dict[tuple, Counter] = {}
    for r in records:
        recorded.setdefault((r["mode"], r["candidate"]["model"]), Counter())[r["verdict"]] += 1
    reported: dict[tuple, Counter] = {}
    for c in report.get("canaries", {}).get("results", []):
        reported.setdefault((c.get("mode"), c.get("model")), Counter())[c.get("verdict")] += 1
    for (mode, model), said in sorted(reported.items(), key=str):
        have = recorded.get((mode, model), Counter())
        if said - have:  # a canary verdict the records do not hold
            problems.append(f"canary {model} ({mode}): report says {dict(said)}, records.jsonl has {dict(have)}")
    return problems


def check_run_dir(path: Path) -> list[str]:
    """Every problem ``verikit validate`` finds in a run directory: the schema, key and
    SHA256SUMS checks of :func:`harness.results.validate_run_dir`, then, when report and
    records can be read, what in report.json the records do not support
    (:func:`report_inconsistencies`). Returns one message per problem (empty: valid)."""
    return read_checked_run_dir(path)[0]


def read_checked_run_dir(path: Path) -> tuple[list[str], list[Record] | None]:
    """:func:`check_run_dir`'s problems and the run's records from the same reading
    (as :func:`harness.results.read_run_dir`: None when a line is not a valid record)."""
    path = Path(path)
    problems, records = read_run_dir(path)
    try:
        report = json.loads((path / "report.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return problems, records  # already among the problems
    if records is None:
        return problems, records
    return problems + [f"{path / 'report.json'}: {p}" for p in report_inconsistencies(records, report)], records


def print_summary(report: dict, console: Console | None = None) -> None:
    """Print one table per mode (per model: n, verified, rate, other verdicts), the
    published-vs-reproduced disagreements, canaries and toolchain drift."""
    console = console or Console()
    for mode, m in report["metrics"].items():
        table = Table(title=f"{report['benchmark']} / {report['dataset']} / {mode}")
        for col in ("model", "n", "verified", "rate", "failed", "rejected", "invalid", "timeout", "memout", "infra"):
            table.add_column(col, justify="left" if col == "model" else "right")
        rows = list(m["per_model"].items()) + [("ALL (no canaries)", m["overall"])]
        for model, c in rows:
            bv = c["by_verdict"]
            rate = f"{c['rate']:.1%}" if c["rate"] is not None else "-"
            table.add_row(model, str(c["n"]), str(c["verified"]), rate, str(bv["failed"]), str(bv["rejected"]),
                          str(bv["invalid"]), str(bv["timeout"]), str(bv["memout"]), str(bv["infra_error"]))
        console.print(table)
    comp = report["comparison"]
    if comp:
        agree = sum(1 for c in comp if c["agree"])
        console.print(f"published vs reproduced: verdict agrees on {agree}/{len(comp)}")
        table = Table(title="published vs reproduced (differences)")
        for col in ("task", "mode", "model", "published", "reproduced", "explanation"):
            table.add_column(col, overflow="fold")
        for c in comp:
            for d in c["differences"]:
                table.add_row(c["task_id"], c["mode"], c["model"], str(d["published"]), str(d["reproduced"]),
                              f"[{d['field']}] {d['explanation']}")
        if table.row_count:
            console.print(table)
    can = report.get("canaries") or {}
    if can.get("results"):
        bad = [x for x in can["results"] if not x["ok"]]
        console.print(f"canaries: {len(can['results']) - len(bad)}/{len(can['results'])} as expected"
                      + ("" if not bad else "  FAILED: " + ", ".join(f"{x['mode']}/{x['model']}={x['verdict']}"
                                                                     for x in bad)))
    for t in report["toolchains"]:
        console.print(f"toolchain {t['name']} ({t['flavor']}): pin_match={t['pin_match']}; drift: "
                      + (", ".join(f"{d['tool']} {d['probed'] or 'missing'} (published {d['published']})"
                                   for d in t["drift"]) or "none"))
    if report["infra_errors"]:
        console.print(f"[red]{report['infra_errors']} job(s) ended in infra_error: counted as not verified (never "
                      f"dropped); re-run the same command to retry them[/red]")

