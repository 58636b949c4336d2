"""The files a publish derives from runs: the records as flat parquet columns
(:func:`records_parquet`), the leaderboard rows (:func:`leaderboard_rows`), the dataset
card (:func:`build_card`), and every file of a commit (:func:`repo_files`)."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from .. import __version__, registry
from ..htmlreport import RunView, render_html
from ..model import Record, utc_now
from ..results import OUTPUTS, SUMMED, SUMS, OutputStore, is_canary
from ..runner import git_state
from .publishable import LocalRun

RUN_FILES = (*SUMMED, SUMS)
CARD_TEMPLATE = Path(__file__).resolve().parents[1] / "templates" / "dataset_card.md"
LICENSE = "mit"


RECORD_COLUMNS = pa.schema([
    ("run_id", pa.string()), ("benchmark", pa.string()), ("benchmark_version", pa.string()),
    ("dataset", pa.string()), ("dataset_revision", pa.string()), ("mode", pa.string()),
    ("task_id", pa.string()), ("task_sha256", pa.string()), ("model", pa.string()), ("sample", pa.int64()),
    ("origin", pa.string()), ("candidate_sha256", pa.string()), ("verdict", pa.string()), ("reason", pa.string()),
    ("goals_proved", pa.int64()), ("goals_total", pa.int64()), ("goals_failed", pa.int64()),
    ("goals_timeout", pa.int64()), ("goals_unknown", pa.int64()),
    ("wall_s", pa.float64()), ("cpu_s", pa.float64()), ("max_rss_mb", pa.float64()), ("attempts", pa.int64()),
    ("toolchain", pa.string()), ("toolchain_fingerprint", pa.string()), ("pin_match", pa.bool_()),
    ("checks", pa.string()), ("key", pa.string()),
])

LEADERBOARD_COLUMNS = pa.schema([
    ("benchmark", pa.string()), ("dataset", pa.string()), ("dataset_revision", pa.string()),
    ("model", pa.string()), ("mode", pa.string()), ("metric", pa.string()), ("value", pa.float64()),
    ("ci_low", pa.float64()), ("ci_high", pa.float64()), ("n", pa.int64()), ("pin_match", pa.bool_()),
    ("toolchain", pa.string()), ("toolchain_fingerprint", pa.string()), ("run_id", pa.string()),
    ("kit_commit", pa.string()), ("finished_at", pa.string()),
])


def _parquet(rows: list[dict], schema: pa.Schema) -> bytes:
    buf = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), buf)
    return buf.getvalue()


def records_parquet(records: list[Record], run_id: str) -> bytes:
    """records.jsonl as a parquet file with the flat columns :data:`RECORD_COLUMNS` (one
    row per record; ``checks`` as a JSON string)."""
    rows = []
    for r in records:
        c, g, t, tc = r["candidate"], r.get("goals") or {}, r.get("timings") or {}, r.get("toolchain") or {}
        rows.append({
            "run_id": run_id, "benchmark": r["benchmark"], "benchmark_version": r.get("benchmark_version"),
            "dataset": r["dataset"]["name"], "dataset_revision": r["dataset"].get("revision"), "mode": r["mode"],
            "task_id": r["task_id"], "task_sha256": r.get("task_sha256"), "model": c["model"], "sample": c["sample"],
            "origin": c["origin"], "candidate_sha256": c.get("sha256"), "verdict": r["verdict"],
            "reason": r.get("reason"), **{f"goals_{k}": g.get(k) for k in ("proved", "total", "failed", "timeout",
                                                                             "unknown")},
            "wall_s": t.get("wall_s"), "cpu_s": t.get("cpu_s"), "max_rss_mb": t.get("max_rss_mb"),
            "attempts": r.get("attempts"), "toolchain": tc.get("name"), "toolchain_fingerprint": tc.get("fingerprint"),
            "pin_match": tc.get("pin_match"), "checks": json.dumps(r.get("checks") or [], sort_keys=True),
            "key": r["key"]})
    return _parquet(rows, RECORD_COLUMNS)


def _pin_match(run: dict) -> bool | None:
    tcs = run.get("toolchains") or []
    return all(t.get("pin_match") for t in tcs) if tcs else None


def leaderboard_rows(run: dict, report: dict, run_id: str) -> list[dict]:
    """One run's leaderboard rows: per mode and model of report.json's ``metrics`` (canaries
    left out), ``verified_rate`` (with its bootstrap 95 % CI) and ``pass@k`` per k."""
    tcs = run.get("toolchains") or []
    common = {"benchmark": run["benchmark"], "dataset": run["dataset"]["name"],
              "dataset_revision": (run["dataset"].get("source") or {}).get("revision"),
              "pin_match": _pin_match(run), "toolchain": ",".join(t["name"] for t in tcs),
              "toolchain_fingerprint": ",".join(t.get("fingerprint") or "" for t in tcs), "run_id": run_id,
              "kit_commit": (run.get("kit") or {}).get("git_commit"), "finished_at": run.get("finished_at")}
    rows = []
    for mode, m in sorted((report.get("metrics") or {}).items()):
        for model, pm in sorted((m.get("per_model") or {}).items()):
            if is_canary(model):
                continue
            ci = pm.get("ci95") or [None, None]
            rows.append({**common, "model": model, "mode": mode, "metric": "verified_rate", "value": pm.get("rate"),
                         "ci_low": ci[0], "ci_high": ci[1], "n": pm.get("n")})
            for k, v in sorted((pm.get("pass_at_k") or {}).items(), key=lambda kv: int(kv[0])):
                rows.append({**common, "model": model, "mode": mode, "metric": f"pass@{k}", "value": v,
                             "ci_low": None, "ci_high": None, "n": pm.get("tasks")})
    return rows


@dataclass
class PublishedRun:
    """What the card and the leaderboard need of a run in the repository: its run.json,
    report.json and publish.json (``publish`` may be empty for a run being added)."""

    run_id: str
    run: dict
    report: dict
    publish: dict
    html: bool = False  # the run's report.html is in the repository (runs published before it had none)

    @property
    def benchmark(self) -> str:
        return self.run["benchmark"]


def _cell(value, limit: int = 80) -> str:
    """A markdown table cell: ``|`` and newlines escaped, long values cut."""
    if isinstance(value, dict):
        if {"passed", "total"} <= set(value):
            text = f"{value['passed']}/{value['total']}" + (f" ({value['percent']} %)" if "percent" in value else "")
        else:
            text = json.dumps(value, sort_keys=True)
    elif isinstance(value, float):
        text = f"{value:.4g}"
    else:
        text = "" if value is None else str(value)
    text = text.replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _paper(benchmark: str) -> str:
    """The paper of a benchmark as cited (its plugin's :meth:`~harness.plugin.Benchmark.paper`)."""
    try:
        paper = registry.benchmark(benchmark).paper()
    except registry.UnknownName:
        paper = None
    return paper.reference if paper else f"{benchmark}: no paper recorded by the kit"


def _run_summary(report: dict) -> tuple[str, list[dict]]:
    repro = report.get("reproduction") or {}
    figures = [{"name": _cell(f.get("name") or f"{f.get('table', '')} {f.get('row', '')} {f.get('column', '')}"),
                "published": _cell(f.get("published")), "reproduced": _cell(f.get("reproduced")),
                "status": _cell(f.get("status") or {True: "equal", False: "differs", None: "not comparable"}
                                [f.get("equal")])} for f in repro.get("figures") or []]
    summary = repro.get("summary")
    if isinstance(summary, dict):
        return ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in sorted(summary.items())) + " figure(s)", figures
    if summary:
        return _cell(summary, 300), figures
    comparison = report.get("comparison") or []
    if comparison:
        agree = sum(1 for c in comparison if c.get("agree"))
        return f"{agree}/{len(comparison)} published per-task results agree (verdicts; goal-count differences " \
               f"are explained in report.json)", figures
    return "no published figure to compare with (a model run)", figures


def build_card(repo_id: str, runs: list[PublishedRun]):
    """The dataset card (``huggingface_hub.DatasetCard``) of a repository holding ``runs``:
    YAML ``configs`` (the leaderboard, the records of each benchmark), license, tags; the
    body from ``templates/dataset_card.md`` (Jinja2, through ``DatasetCard.from_template``)."""
    from huggingface_hub import DatasetCard, DatasetCardData

    runs = sorted(runs, key=lambda r: (r.benchmark, r.run_id))
    benches = sorted({r.benchmark for r in runs})
    configs = [{"config_name": "leaderboard", "data_files": [{"split": "train", "path": "leaderboard.parquet"}],
                "default": True}]
    configs += [{"config_name": b, "data_files": [{"split": "train", "path": f"runs/{b}/*/records.parquet"}]}
                for b in benches]
    data = DatasetCardData(license=LICENSE, pretty_name=f"verikit results ({repo_id})",
                           tags=["verikit", "formal-verification", "llm-evaluation", *benches], configs=configs)
    leaderboard = []
    for r in runs:
        rows = leaderboard_rows(r.run, r.report, r.run_id)
        for row in (x for x in rows if x["metric"] == "verified_rate"):
            ks = [x for x in rows if x["metric"].startswith("pass@") and (x["model"], x["mode"]) == (row["model"],
                                                                                                   row["mode"])]
            ci = "" if row["ci_low"] is None else f"[{row['ci_low']:.3f}, {row['ci_high']:.3f}]"
            leaderboard.append({**{k: _cell(row[k]) for k in ("benchmark", "dataset", "model", "mode", "n")},
                                "value": f"{row['value']:.3f}" if row["value"] is not None else "", "ci": ci,
                                "pass_at_k": ", ".join(f"{x['metric']}={x['value']:.3f}" for x in ks),
                                "pin_match": row["pin_match"], "run_id": r.run_id})
    sections = []
    for b in benches:
        entries = []
        for r in (x for x in runs if x.benchmark == b):
            summary, figures = _run_summary(r.report)
            entries.append({"run_id": r.run_id, "command": _cell("`" + " ".join(r.run.get("command") or []) + "`", 200),
                            "summary": summary, "figures": figures})
        sections.append({"name": b, "paper": _paper(b), "runs": entries})
    toolchains = [{"run_id": r.run_id, "name": t["name"], "flavor": t.get("flavor"),
                   "image_digest": _cell(t.get("image_digest") or "none (host)"),
                   "fingerprint": (t.get("fingerprint") or "")[:16], "pin_match": t.get("pin_match"),
                   "drift": _cell("; ".join(f"{d['tool']}: {d.get('probed')} vs {d.get('published')}"
                                            for d in t.get("drift") or []) or "none", 300)}
                  for r in runs for t in r.run.get("toolchains") or []]
    def dataset(run: dict) -> str:
        revision = (run["dataset"].get("source") or {}).get("revision") or "local"
        return _cell(f"{run['dataset']['name']} ({revision[:12]})")

    table = [{"run_id": r.run_id, "benchmark": r.benchmark, "dataset": dataset(r.run),
              "records": (r.run.get("counts") or {}).get("jobs"),
              "kit": ((r.run.get("kit") or {}).get("git_commit") or "unknown")[:12],
              "finished": r.run.get("finished_at"),
              "waivers": _cell(", ".join(r.publish.get("waivers") or []) or "none"),
              "html": f"runs/{r.benchmark}/{r.run_id}/report.html" if r.html else None} for r in runs]
    return DatasetCard.from_template(
        data, template_path=str(CARD_TEMPLATE), title=f"verikit results: {repo_id}", repo_id=repo_id,
        leaderboard=leaderboard, benchmarks=sections, toolchains=toolchains, runs=table,
        citations=[_paper(b) for b in benches])


def carried_record(generation: dict[str, bytes]) -> dict:
    """publish.json's ``generation`` of a run's carried generation files (``{path relative
    to the run's folder: bytes}`` in :func:`harness.results.transcripts.carried_files`' order:
    generation.json, then its transcript when there): ``{"generation_json": path,
    "transcript": path or None}``."""
    names = list(generation)
    return {"generation_json": names[0], "transcript": names[1] if len(names) > 1 else None}


def repo_files(repo_id: str, new: list[LocalRun], existing: list[PublishedRun], *,
               now: str | None = None) -> dict[str, bytes]:
    """Every file a publish adds or replaces: the new runs' folders, ``leaderboard.parquet``
    and ``README.md`` regenerated from ``existing`` plus ``new``. Paths are repository paths."""
    now = now or utc_now()
    commit, _ = git_state()
    files: dict[str, bytes] = {}
    added = []
    for lr in new:
        for name in RUN_FILES:
            files[f"{lr.prefix}/{name}"] = (lr.dir / name).read_bytes()
        outputs = OutputStore(lr.dir / OUTPUTS)  # the tools' own outputs: a reader's validate re-judges from them
        for r in lr.records:
            out = r.get("tool_output")
            if out and outputs.has(out["sha256"]):
                files[f"{lr.prefix}/{OutputStore.name(out['sha256'])}"] = outputs.read_bytes(out["sha256"])
        files[f"{lr.prefix}/records.parquet"] = records_parquet(lr.records, lr.run_id)
        if lr.predictions is not None:
            files[f"{lr.prefix}/predictions.jsonl"] = lr.predictions
        for rel, data in sorted(lr.generation.items()):  # the generation.json and transcript of generated predictions
            files[f"{lr.prefix}/{rel}"] = data
        publish = {"run_id": lr.run_id, "benchmark": lr.benchmark, "published_at": now, "waivers": lr.waivers,
                   "published_by": {"kit_version": __version__, "kit_commit": commit}}
        if lr.generation:
            publish["generation"] = carried_record(lr.generation)
        files[f"{lr.prefix}/publish.json"] = (json.dumps(publish, indent=1, sort_keys=True) + "\n").encode()
        # the HTML view, rendered here from the run files already read and checked by prepare()
        # (a run with a validate problem is refused there; a local report.html is not trusted)
        view = RunView(lr.dir, lr.run, lr.report, lr.records, problems=[], run_id=lr.run_id)
        files[f"{lr.prefix}/report.html"] = render_html([view]).encode()
        added.append(PublishedRun(lr.run_id, lr.run, lr.report, publish, html=True))
    everything = existing + added
    rows = [row for r in sorted(everything, key=lambda r: (r.benchmark, r.run_id))
            for row in leaderboard_rows(r.run, r.report, r.run_id)]
    files["leaderboard.parquet"] = _parquet(rows, LEADERBOARD_COLUMNS)
    files["README.md"] = str(build_card(repo_id, everything)).encode()
    return files
