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

from .metrics import (BOOTSTRAP_ITERS, CI_LEVEL, bootstrap_ratio_ci, fixes_per_task, group_metrics, pass_at_k_per_task,
                      ratio)
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
    metrics = group_metrics(records, seed=seed)
    return {
        "schema_version": SCHEMA_VERSION,
        "benchmark": benchmark,
        "dataset": dataset,
        "metrics": metrics,
        "published": published,
        "comparison": comparison,
        "canaries": canaries,
        "toolchains": [{"name": t["name"], "flavor": t["flavor"], "fingerprint": t["fingerprint"],
                        "pin_match": t["pin_match"], "drift": t["drift"]} for t in toolchains.values()],
        "infra_errors": sum(r["verdict"] == "infra_error" for r in records),
        "bootstrap_seed": seed,
        "notes": notes + excluded_notes(metrics),
    }


def excluded_notes(metrics: dict) -> list[str]:
    """One note per mode whose metrics leave tasks out (``group_metrics``'s ``excluded``):
    the tasks and their defects."""
    return [f"{mode}: kept out of the metrics, the task's own bug and not the candidates' (gold included): "
            + "; ".join(f"{task} ({defect})" for task, defect in m["excluded"].items())
            for mode, m in metrics.items() if m.get("excluded")]


#: The definition of the fixes the kit reports (report.json ``generation.fixes_definition``).
FIXES_DEFINITION = ("fixes of a sample: the verifier-feedback rounds of its chat answered by a new candidate "
                    "(predictions meta.fixes, written by verikit generate; 0 when the first answer was final); the "
                    "average is over every sample of the model, verified or not (a sample that never verified counts "
                    "the rounds it was given). The kit's reading of Model-Bench's 'average number of fixes under "
                    "Runnable@1' (paper 002, Section 5.1 and Table 2, referring to Section 4.1.1, which gives no "
                    "formula for it); see harness.metrics.fixes_per_task")


def generation_section(records: list[Record], metas: dict[tuple, dict], link: dict, *, seed: int,
                       iters: int = BOOTSTRAP_ITERS) -> dict:
    """report.json's ``generation`` section (schemas/report.schema.json) of a run whose
    predictions ``verikit generate`` made.

    Args:
        records: the records of the predictions' candidates (canaries and gold left out
            by the caller).
        metas: ``{(task_id, model, sample): meta}`` of the predictions lines (``meta`` as
            ``verikit generate`` writes it: ``extracted``, ``turns``, ``fixes``,
            ``finish_reason``; a line without one maps to ``{}``).
        link: ``{"path", "sha256", "predictions_sha256"}`` of the generation.json.
        seed: the bootstrap's seed (the run's).

    Returns:
        ``{"generation_json", "predictions_sha256", "bootstrap", "fixes_definition",
        "models": {mode: {model: {"tasks", "samples", "samples_per_task": {"min", "max"},
        "pass_at_k": {k: {"value", "ci"}}, "fixes": {"value", "ci", "samples"} | None,
        "turns", "no_answer"}}}}``: pass@k for k = 1 .. the smallest samples per task
        (unbiased estimator; ``verified`` is a pass, an ``infra_error`` sample is not),
        values in 0..1; fixes: None when no sample carries ``meta.fixes``; CIs: percentile
        bootstrap over tasks (:func:`harness.metrics.bootstrap_ratio_ci`). Records of a task
        with a defect (``task_defect``) are left out, as in :func:`harness.metrics.group_metrics`.
    """
    groups: dict[tuple, dict[str, list]] = {}
    for r in records:
        if r.get("task_defect"):  # the task's bug: kept out, as in group_metrics
            continue
        meta = metas.get((r["task_id"], r["candidate"]["model"], r["candidate"]["sample"])) or {}
        per_task = groups.setdefault((r["mode"], r["candidate"]["model"]), {})
        per_task.setdefault(r["task_id"], []).append((r["verdict"] == "verified", meta))
    models: dict = {}
    for (mode, model), per_task in sorted(groups.items()):
        nc = {t: (len(xs), sum(ok for ok, _ in xs)) for t, xs in per_task.items()}
        low = min(n for n, _ in nc.values())
        pass_k = {}
        for k in range(1, low + 1):
            pairs = list(pass_at_k_per_task(nc, k).values())
            lo, hi = bootstrap_ratio_ci(pairs, iters=iters, seed=seed)
            pass_k[str(k)] = {"value": ratio(pairs), "ci": [lo, hi]}
        fixes = {t: [m["fixes"] for _, m in xs if isinstance(m.get("fixes"), int)] for t, xs in per_task.items()}
        fpairs = list(fixes_per_task(fixes).values())
        fix = None
        if fpairs:
            lo, hi = bootstrap_ratio_ci(fpairs, iters=iters, seed=seed)
            fix = {"value": ratio(fpairs), "ci": [lo, hi], "samples": int(sum(d for _, d in fpairs))}
        turns = [m["turns"] for xs in per_task.values() for _, m in xs if isinstance(m.get("turns"), int)]
        models.setdefault(mode, {})[model] = {
            "tasks": len(nc), "samples": sum(n for n, _ in nc.values()),
            "samples_per_task": {"min": low, "max": max(n for n, _ in nc.values())}, "pass_at_k": pass_k,
            "fixes": fix, "turns": sum(turns) / len(turns) if turns else None,
            "no_answer": sum(m.get("extracted") is False for xs in per_task.values() for _, m in xs)}
    return {"generation_json": {"path": link["path"], "sha256": link["sha256"]},
            "predictions_sha256": link["predictions_sha256"],
            "bootstrap": {"iters": iters, "seed": seed, "ci_level": CI_LEVEL},
            "fixes_definition": FIXES_DEFINITION, "models": models}


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
    problems += [f"{path / 'report.json'}: {p}" for p in report_inconsistencies(records, report)]
    return problems + generation_inconsistencies(path, report, records), records


def generation_inconsistencies(path: Path, report: dict, records: list[Record]) -> list[str]:
    """What of a run's ``generation`` section (report.json) and link (run.json) its files
    do not support: the linked generation.json missing or not of the recorded sha256, the
    scored predictions file not found (:func:`harness.predictions.scored_file`), or the
    section not the one recomputed from the records and the predictions' ``meta``. Empty
    for a run without either. The generation.json is the linked one, or the copy a run
    published to the Hub or bundled carries (:func:`harness.results.transcripts.find_generation`)."""
    from .predictions import scored_file
    from .results.transcripts import find_generation

    try:
        run = json.loads((path / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []  # already among validate_run_dir's problems
    link, section = run.get("generation"), report.get("generation")
    if not link and not section:
        return []
    if not link or not section:
        return [f"{path}: " + ("run.json links a generation.json but report.json has no generation section" if link
                               else "report.json has a generation section but run.json links no generation.json")]
    found, why = find_generation(path, run)  # the linked path, else the copy a published or bundled run carries
    if found is None:
        return [f"{path}: the generation.json of the scored predictions: {why}"]
    scored = scored_file(path, run)
    if scored is None:
        return [f"{path}: the scored predictions file is not found with the recorded sha256: the generation section "
                f"cannot be recomputed"]
    metas = {}
    for line in scored.read_text(encoding="utf-8").splitlines():
        if line.strip():
            obj = json.loads(line)
            metas[(obj["task_id"], obj["model"], obj["sample"])] = obj.get("meta") or {}
    mine = [r for r in records if str(r["candidate"].get("origin", "")).startswith("predictions:")]
    again = json.loads(json.dumps(generation_section(mine, metas, link, seed=section["bootstrap"]["seed"],
                                                     iters=section["bootstrap"]["iters"])))
    if again != section:
        return [f"{path / 'report.json'}: the generation section differs from the one recomputed from records.jsonl "
                f"and the predictions' meta"]
    return []


def _pct_ci(e: dict) -> str:
    """``value % [low, high]`` of an estimate in 0..1 (percent, 1 decimal)."""
    if e["value"] is None:
        return "-"
    ci = e.get("ci")
    return f"{e['value']:.1%}" + (f" [{ci[0]:.1%}, {ci[1]:.1%}]" if ci else "")


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
        if m.get("excluded"):
            table.caption = "kept out (the task's own bug): " + ", ".join(m["excluded"])
        console.print(table)
    gen = report.get("generation")
    if gen:
        table = Table(title=f"generated by a model (generation.json {gen['generation_json']['sha256'][:12]}): "
                            f"pass@k and fixes, {gen['bootstrap']['ci_level']:.0%} bootstrap CI over tasks")
        for col in ("mode", "model", "tasks", "samples/task", "pass@k [CI]", "avg fixes [CI]", "no answer"):
            table.add_column(col, overflow="fold")
        for mode, models in gen["models"].items():
            for model, g in models.items():
                spt = g["samples_per_task"]
                passk = "; ".join(f"@{k} {_pct_ci(e)}" for k, e in g["pass_at_k"].items())
                fix = g["fixes"]
                fixes = "-" if fix is None else f"{fix['value']:.2f} [{fix['ci'][0]:.2f}, {fix['ci'][1]:.2f}]"
                table.add_row(mode, model, str(g["tasks"]), str(spt["min"]) if spt["min"] == spt["max"]
                              else f"{spt['min']}-{spt['max']}", passk, fixes, str(g.get("no_answer", 0)))
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

