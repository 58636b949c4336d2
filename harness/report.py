"""Reports: metrics, the paper's figures, published-vs-reproduced comparison, tables.

``build_report`` turns the records of a run into ``report.json`` (validated against
``schemas/report.schema.json`` by the caller); ``print_summary`` renders the tables a
person reads at the end of a run.
"""

from __future__ import annotations

import json
from rich.console import Console
from rich.table import Table

from .metrics import group_metrics
from .results import ROOT, SCHEMA_VERSION

PUBLISHED_DIR = ROOT / "results" / "published"


def load_published(benchmark: str) -> dict:
    """``results/published/<benchmark>.json`` (the paper's figures with references)."""
    return json.loads((PUBLISHED_DIR / f"{benchmark}.json").read_text())


def _framac_major(tc: dict) -> int:
    raw = (tc.get("tools", {}).get("frama-c", {}) or {}).get("version") or "0"
    try:
        return int(raw.split(".")[0])
    except ValueError:
        return 0


def _explain_goals(pub_total: int, rep_total: int, record: dict) -> str:
    d = pub_total - rep_total
    tc = record["toolchain"]
    fc_tool = tc.get("tools", {}).get("frama-c", {}) or {}
    fc, pin = fc_tool.get("version"), fc_tool.get("published")
    n_fun = record["verifier"].get("extra", {}).get("functions")
    if n_fun and d == 2 * n_fun and _framac_major(tc) < 26:
        return (f"goal-count change between Frama-C versions: Frama-C {pin} adds one 'Terminating' and one "
                f"'Unreachable' goal per function (the study's Frama-C logs count them), Frama-C {fc} "
                f"generates neither: {n_fun} function(s) x 2 = {d}")
    return f"toolchain drift: Frama-C {fc} vs published {pin}; goal total differs by {d:+d}"


def compare_gold(records: list[dict], tasks: dict) -> list[dict]:
    """Per task, the dataset's published verification (Frama-C 30.0) vs this run."""
    rows = []
    for r in records:
        if r["mode"] != "gold" or r["candidate"]["model"] != "gold":
            continue
        pub = tasks[r["task_id"]].published
        published = {"verdict": "verified" if pub.get("verified") else "failed",
                     "proved": pub.get("verified_goals"), "total": pub.get("total_goals"),
                     "source": "dataset (meta.txt / parquet columns), counted by the published Frama-C"}
        goals = r["goals"] or {}
        reproduced = {"verdict": r["verdict"], "proved": goals.get("proved"), "total": goals.get("total")}
        diffs = []
        tc = r["toolchain"]
        if published["verdict"] != reproduced["verdict"]:
            diffs.append({"field": "verdict", "published": published["verdict"], "reproduced": r["verdict"],
                          "explanation": f"{r['reason']}; toolchain drift: {_drift_text(tc)}"})
        diffs += _goal_diffs(published, reproduced, r)
        rows.append({"task_id": r["task_id"], "mode": "gold", "model": "gold", "published": published,
                     "reproduced": reproduced, "agree": published["verdict"] == reproduced["verdict"],
                     "differences": diffs})
    return rows


def compare_study(records: list[dict], study: dict) -> list[dict]:
    """Per bundled candidate, the study's verdict (its own protocol) vs this run."""
    rows = []
    for r in records:
        key = (r["task_id"], r["candidate"]["model"])
        if r["mode"] != "spec-from-code" or not r["candidate"]["origin"].startswith("bundled:") or key not in study:
            continue
        pub = dict(study[key], source="CASP-LLM-Verification-Study framac_results.csv + log")
        goals = r["goals"] or {}
        rep = {"verdict": r["verdict"], "proved": goals.get("proved"), "total": goals.get("total")}
        diffs = []
        if pub["verdict"] != rep["verdict"]:
            if r["verdict"] == "rejected":
                why = f"integrity check of the kit (the study has none): {r['reason']}"
            elif pub["verdict"] == "invalid":
                why = (f"context: the study checked the candidate file alone and Frama-C stopped with "
                       f"'{pub['reason']}'; the kit checks the contract with the pair's dependencies")
            else:
                why = (f"provers and limits differ: the study used Alt-Ergo 2.4.3 alone with Frama-C's default "
                       f"10 s; the kit used {', '.join(r['verifier']['options'].get('provers', []))} with "
                       f"{r['verifier']['options'].get('wp_steps')} steps / {r['verifier']['options'].get('wp_timeout_s')} s"
                       f" ({r['reason']})")
            diffs.append({"field": "verdict", "published": pub["verdict"], "reproduced": rep["verdict"],
                          "explanation": why})
        diffs += _goal_diffs(pub, rep, r)
        rows.append({"task_id": r["task_id"], "mode": r["mode"], "model": r["candidate"]["model"],
                     "published": pub, "reproduced": rep, "agree": pub["verdict"] == rep["verdict"],
                     "differences": diffs})
    return rows


def _goal_diffs(pub: dict, rep: dict, record: dict) -> list[dict]:
    """Differences in goal counts: total, and proved when it differs by another amount."""
    if None in (pub["total"], rep["total"], pub["proved"], rep["proved"]):
        return []
    out = []
    if pub["total"] != rep["total"]:
        out.append({"field": "goals.total", "published": pub["total"], "reproduced": rep["total"],
                    "explanation": _explain_goals(pub["total"], rep["total"], record)})
    if pub["proved"] - rep["proved"] != pub["total"] - rep["total"]:
        out.append({"field": "goals.proved", "published": pub["proved"], "reproduced": rep["proved"],
                    "explanation": f"{rep['proved']}/{rep['total']} proved here vs {pub['proved']}/{pub['total']} "
                                   f"published: {record['reason']}"})
    return out


def _drift_text(tc: dict) -> str:
    return ", ".join(f"{d['tool']} {d['probed'] or 'missing'} vs {d['published']}" for d in tc.get("drift", [])) \
        or "none"


def canary_results(records: list[dict], expected: dict) -> dict:
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


def build_report(benchmark: str, dataset: str, records: list[dict], *, comparison: list[dict],
                 canaries: dict, seed: int, notes: list[str]) -> dict:
    """Assemble ``report.json`` (see schemas/report.schema.json)."""
    toolchains = {r["toolchain"]["fingerprint"]: r["toolchain"] for r in records}
    return {
        "schema_version": SCHEMA_VERSION,
        "benchmark": benchmark,
        "dataset": dataset,
        "metrics": group_metrics(records, seed=seed),
        "published": load_published(benchmark),
        "comparison": comparison,
        "canaries": canaries,
        "toolchains": [{"name": t["name"], "flavor": t["flavor"], "fingerprint": t["fingerprint"],
                        "pin_match": t["pin_match"], "drift": t["drift"]} for t in toolchains.values()],
        "infra_errors": sum(r["verdict"] == "infra_error" for r in records),
        "bootstrap_seed": seed,
        "notes": notes,
    }


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
        console.print(f"[red]{report['infra_errors']} job(s) ended in infra_error (not model failures)[/red]")

