"""Publishing run directories to a Hugging Face Hub dataset repository, and pulling them
back to check them.

A published repository holds, per run, ``runs/<benchmark>/<run_id>/`` with the run
directory's files (``run.json``, ``records.jsonl``, ``report.json``, ``SHA256SUMS``), the
records as flat columns (``records.parquet``, for the Hub's dataset viewer), the
predictions a model run scored (``predictions.jsonl``) and ``publish.json`` (when, by which
kit, with which waivers); at its root ``leaderboard.parquet`` (one row per benchmark,
dataset, model, mode and metric, over all runs) and the dataset card ``README.md``, both
regenerated from every run in the repository on each publish. A publish is one commit whose
parent is the head just read: a concurrent publish makes it fail with HTTP 412, and it is
rebuilt on the new head and retried (:data:`MAX_ATTEMPTS`).

Endpoints, card classes and errors are those of ``huggingface_hub`` (``HfApi``,
``DatasetCard``, ``snapshot_download``); the endpoint is ``HF_ENDPOINT`` and the token
``HF_TOKEN`` or the stored login (never printed or written).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

import pyarrow as pa
import pyarrow.parquet as pq

from . import __version__, registry
from .report import check_run_dir
from .htmlreport import RunView, render_html
from .results import OUTPUTS, SUMMED, SUMS, OutputStore, S3Store, load_records, run_id_of
from .runner import git_state

REPO_TYPE = "dataset"
MAX_ATTEMPTS = 5
CANARY = "canary:"
RUN_FILES = (*SUMMED, SUMS)
CARD_TEMPLATE = Path(__file__).resolve().parent / "templates" / "dataset_card.md"
LICENSE = "mit"


class Refused(Exception):
    """A run that may not be published (or a pulled run that fails its checks); the
    message lists every reason, one per line."""


class HubError(Exception):
    """The Hub could not be used (no token, a failed request, too many conflicts); no
    commit was made."""


# --- one run --------------------------------------------------------------------------------

@dataclass
class LocalRun:
    """A run directory ready to publish.

    Attributes:
        source: the directory or S3 URI given; dir: where its files are (a download for S3).
        run, report: run.json and report.json; records: records.jsonl's lines.
        predictions: the predictions file's bytes (runs that scored a model's outputs) or None.
        run_id: ``<finished_at as YYYYmmddTHHMMSSZ>-<first 10 hex of sha256(SHA256SUMS)>``.
        waivers: what was allowed despite the rules (``--allow-infra-errors``, ``--allow-dirty``).
    """

    source: str
    dir: Path
    run: dict
    report: dict
    records: list[dict]
    predictions: bytes | None
    run_id: str
    waivers: list[str] = field(default_factory=list)

    @property
    def benchmark(self) -> str:
        return self.run["benchmark"]

    @property
    def prefix(self) -> str:
        """The run's folder in the repository: ``runs/<benchmark>/<run_id>``."""
        return f"runs/{self.benchmark}/{self.run_id}"


def load_run(source: str, workdir: Path) -> LocalRun:
    """Read a run directory, or download a reduced batch run (``s3://bucket/prefix``) into
    ``workdir``, with its predictions file when it scored one.

    Raises:
        Refused: not a run directory (missing or unreadable run.json / report.json /
            records.jsonl / SHA256SUMS, not JSON).
    """
    if source.startswith("s3://"):
        store = S3Store(source)
        where = Path(tempfile.mkdtemp(prefix="run-", dir=workdir))
        got = store.download_run(where)
        if "run.json" not in got:
            raise Refused(f"{source}: no run.json (not reduced yet? 'verikit batch status')")
        preds = store.get_bytes("inputs/predictions.jsonl")
    else:
        where, preds = Path(source), None
        if not where.is_dir():
            raise Refused(f"{source}: not a run directory")
    try:
        run = json.loads((where / "run.json").read_text(encoding="utf-8"))
        report = json.loads((where / "report.json").read_text(encoding="utf-8"))
        records = load_records(where / "records.jsonl")
        rid = run_id_of(where, run)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise Refused(f"{source}: not a complete run directory ({exc})") from exc
    if preds is None and run.get("predictions"):  # where the run read it, or beside the run (a pulled run)
        want = run["predictions"]["sha256"]
        found = [p.read_bytes() for p in (Path(run["predictions"]["path"]), where / "predictions.jsonl") if p.is_file()]
        preds = next((b for b in found if hashlib.sha256(b).hexdigest() == want), found[0] if found else None)
    return LocalRun(source, where, run, report, records, preds, rid)


def refusals(lr: LocalRun, *, allow_infra_errors: bool = False, allow_dirty: bool = False) -> list[str]:
    """Why ``lr`` may not be published (empty: it may). Sets ``lr.waivers`` for what the
    flags allowed. The rules: schema-valid and consistent (``verikit validate``'s checks,
    SHA256SUMS included), complete, every canary rejected as expected, no infra error
    (unless ``allow_infra_errors``), made from a clean checkout (unless ``allow_dirty``),
    and the scored predictions present with the sha256 run.json recorded."""
    src = lr.source
    problems = [f"invalid: {p}" for p in check_run_dir(lr.dir)]
    if lr.run.get("status") != "complete":
        problems.append(f"{src}: the run is {lr.run.get('status')!r}, not complete (resume it first)")
    canaries = lr.report.get("canaries") or {}
    if not canaries.get("ok", True):
        bad = [f"{c.get('model')} ({c.get('mode')}): {c.get('verdict')}, expected {'/'.join(c.get('expected', []))}"
               for c in canaries.get("results", []) if not c.get("ok")]
        problems.append(f"{src}: canaries failed, so its verdicts cannot be trusted: {'; '.join(bad)}")
    infra = max(int(lr.report.get("infra_errors") or 0), int((lr.run.get("counts") or {}).get("infra_error") or 0))
    if infra and not allow_infra_errors:
        problems.append(f"{src}: {infra} job(s) ended in infra_error (re-run the same command to retry them, "
                        f"or pass --allow-infra-errors: recorded in the card)")
    elif infra:
        lr.waivers.append(f"allow-infra-errors ({infra})")
    if (lr.run.get("kit") or {}).get("git_dirty") is True:
        if not allow_dirty:
            problems.append(f"{src}: made from a checkout with uncommitted changes (kit "
                            f"{(lr.run['kit'].get('git_commit') or '?')[:12]}, dirty): its code is not a published "
                            f"commit; commit and re-run, or pass --allow-dirty (recorded in the card)")
        else:
            lr.waivers.append("allow-dirty")
    want = lr.run.get("predictions")
    if want:
        if lr.predictions is None:
            problems.append(f"{src}: the predictions it scored ({want['path']}) are not there: without them "
                            f"nobody can re-verify the run")
        elif hashlib.sha256(lr.predictions).hexdigest() != want["sha256"]:
            problems.append(f"{src}: the predictions file {want['path']} changed since the run "
                            f"(sha256 differs from run.json's)")
    return problems


# --- tables ---------------------------------------------------------------------------------

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


def records_parquet(records: list[dict], run_id: str) -> bytes:
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
            if model.startswith(CANARY):
                continue
            ci = pm.get("ci95") or [None, None]
            rows.append({**common, "model": model, "mode": mode, "metric": "verified_rate", "value": pm.get("rate"),
                         "ci_low": ci[0], "ci_high": ci[1], "n": pm.get("n")})
            for k, v in sorted((pm.get("pass_at_k") or {}).items(), key=lambda kv: int(kv[0])):
                rows.append({**common, "model": model, "mode": mode, "metric": f"pass@{k}", "value": v,
                             "ci_low": None, "ci_high": None, "n": pm.get("tasks")})
    return rows


# --- the card -------------------------------------------------------------------------------

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


def repo_files(repo_id: str, new: list[LocalRun], existing: list[PublishedRun], *,
               now: str | None = None) -> dict[str, bytes]:
    """Every file a publish adds or replaces: the new runs' folders, ``leaderboard.parquet``
    and ``README.md`` regenerated from ``existing`` plus ``new``. Paths are repository paths."""
    now = now or datetime.now(timezone.utc).isoformat(timespec="seconds")
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
        publish = {"run_id": lr.run_id, "benchmark": lr.benchmark, "published_at": now, "waivers": lr.waivers,
                   "published_by": {"kit_version": __version__, "kit_commit": commit}}
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


# --- publishing -----------------------------------------------------------------------------

@dataclass
class PublishResult:
    """``added``: run ids committed; ``present``: already in the repository (no-op);
    ``commit``: the new commit's oid (None: nothing to commit); ``attempts``: commits tried
    (more than one after a 412 conflict); ``files``: repository paths written."""

    added: list[str]
    present: list[str]
    commit: str | None
    attempts: int
    files: list[str]


def prepare(sources: list[str], workdir: Path, *, allow_infra_errors: bool = False,
            allow_dirty: bool = False) -> list[LocalRun]:
    """Load and check every run; raises Refused listing every reason of every run (nothing
    is published unless all may be). Two sources with the same content are one run."""
    runs, problems = {}, []
    for s in sources:
        try:
            lr = load_run(s, workdir)
        except Refused as exc:
            problems.append(str(exc))
            continue
        problems += refusals(lr, allow_infra_errors=allow_infra_errors, allow_dirty=allow_dirty)
        runs.setdefault((lr.benchmark, lr.run_id), lr)
    if problems:
        raise Refused("\n".join(problems))
    return list(runs.values())


def dry_run(repo_id: str, runs: list[LocalRun], out: Path) -> dict[str, bytes]:
    """Write to ``out`` the files the commit would add to an empty repository (card and
    leaderboard from ``runs`` alone); no token, no network. Returns them."""
    files = repo_files(repo_id, runs, [])
    for path, data in files.items():
        target = Path(out) / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return files


def hub_api():
    """``HfApi`` on ``HF_ENDPOINT`` (default: huggingface.co) with the token of ``HF_TOKEN``
    or the stored login. Raises HubError without a token."""
    from huggingface_hub import HfApi, get_token

    token = get_token()
    if not token:
        raise HubError("no Hub token: set HF_TOKEN or log in ('hf auth login'); publishing needs write access")
    return HfApi(endpoint=os.environ.get("HF_ENDPOINT") or None, token=token)


def _read_existing(api, repo_id: str, head: str, paths: list[str], cache: dict[str, bytes],
                   tmp: Path) -> dict[str, bytes]:
    from huggingface_hub import hf_hub_download

    for p in paths:
        if p not in cache:  # published files are never overwritten: a path is read once
            local = hf_hub_download(repo_id, p, repo_type=REPO_TYPE, revision=head, cache_dir=str(tmp),
                                    endpoint=api.endpoint, token=api.token)
            cache[p] = Path(local).read_bytes()
    return {p: cache[p] for p in paths}


def publish(repo_id: str, runs: list[LocalRun], *, revision: str = "main", private: bool | None = None,
            api=None, say: Callable[[str], None] = print) -> PublishResult:
    """Publish ``runs`` (from :func:`prepare`) to the dataset repository ``repo_id`` in one
    commit on ``revision``, creating the repository (``private``) or branch when missing.
    Runs already there (same id) are left alone; when all are, no commit is made. The
    commit's parent is the head just read; on HTTP 412 (someone committed since) the head,
    the existing runs, the leaderboard and the card are read and built again, up to
    :data:`MAX_ATTEMPTS` times.

    Raises:
        HubError: no token, a request failed (the commit is atomic: nothing was written),
            too many conflicts, or a run id already in the repository with other content.
    """
    from huggingface_hub import CommitOperationAdd
    from huggingface_hub.errors import HfHubHTTPError
    from huggingface_hub.hf_api import RepoFile

    api = api or hub_api()
    try:
        api.create_repo(repo_id, repo_type=REPO_TYPE, private=private, exist_ok=True)
        if revision != "main":
            api.create_branch(repo_id, repo_type=REPO_TYPE, branch=revision, exist_ok=True)
        cache: dict[str, bytes] = {}
        with tempfile.TemporaryDirectory(prefix="verikit-hub-") as tmp:
            for attempt in range(1, MAX_ATTEMPTS + 1):
                info = api.repo_info(repo_id, repo_type=REPO_TYPE, revision=revision)
                head = info.sha
                if attempt == 1 and private is not None and info.private is not None and info.private != private:
                    say(f"{repo_id}: the repository exists and is {'private' if info.private else 'public'}; "
                        f"its visibility is left as it is (change it on the Hub)")
                tree = [f.path for f in api.list_repo_tree(repo_id, repo_type=REPO_TYPE, revision=head,
                                                            recursive=True) if isinstance(f, RepoFile)]
                ids = {tuple(p.split("/")[1:3]) for p in tree if p.startswith("runs/") and p.endswith("/run.json")
                       and p.count("/") == 3}
                present = [lr for lr in runs if (lr.benchmark, lr.run_id) in ids]
                for lr in present:  # same id, same content: SHA256SUMS says so
                    theirs = _read_existing(api, repo_id, head, [f"{lr.prefix}/{SUMS}"], cache, Path(tmp))
                    if theirs[f"{lr.prefix}/{SUMS}"] != (lr.dir / SUMS).read_bytes():
                        raise HubError(f"{repo_id}: {lr.prefix} exists with other content; nothing is overwritten")
                    say(f"{lr.source}: already published as {lr.prefix} (no-op)")
                new = [lr for lr in runs if (lr.benchmark, lr.run_id) not in ids]
                if not new:
                    return PublishResult([], [lr.run_id for lr in present], None, attempt - 1, [])
                existing = []
                for bench, rid in sorted(ids):
                    names = [f"runs/{bench}/{rid}/{n}" for n in ("run.json", "report.json", "publish.json")
                             if f"runs/{bench}/{rid}/{n}" in tree]
                    docs = _read_existing(api, repo_id, head, names, cache, Path(tmp))
                    parsed = {n.rsplit("/", 1)[1]: json.loads(d) for n, d in docs.items()}
                    existing.append(PublishedRun(rid, parsed["run.json"], parsed.get("report.json") or {},
                                                 parsed.get("publish.json") or {},
                                                 html=f"runs/{bench}/{rid}/report.html" in tree))
                files = repo_files(repo_id, new, existing)
                title = "verikit publish: " + ", ".join(lr.prefix.removeprefix("runs/") for lr in new)
                try:
                    done = api.create_commit(repo_id, repo_type=REPO_TYPE, revision=revision, parent_commit=head,
                                             commit_message=title,
                                             commit_description=f"{len(new)} run(s), {len(files)} file(s); "
                                                                f"made by verikit {__version__}",
                                             operations=[CommitOperationAdd(p, d) for p, d in sorted(files.items())])
                except HfHubHTTPError as exc:
                    if exc.response is not None and exc.response.status_code == 412 and attempt < MAX_ATTEMPTS:
                        say(f"{repo_id}: the branch moved since it was read (HTTP 412); reading it again "
                            f"(attempt {attempt + 1} of {MAX_ATTEMPTS})")
                        continue
                    raise
                return PublishResult([lr.run_id for lr in new], [lr.run_id for lr in present], done.oid, attempt,
                                     sorted(files))
        raise HubError(f"{repo_id}: gave up after {MAX_ATTEMPTS} conflicting commits")  # pragma: no cover
    except HfHubHTTPError as exc:
        raise HubError(f"{repo_id}: {_http_message(exc)}; nothing was committed") from exc
    except Exception as exc:  # the HTTP client's transport errors (connection refused or dropped, timeouts)
        if not _transport_error(exc):
            raise
        raise HubError(f"{repo_id}: {type(exc).__name__}: {exc}; nothing was committed") from exc


def _transport_error(exc: BaseException) -> bool:
    """An error of the HTTP stack under ``huggingface_hub`` (httpx and its forks, or
    requests): the connection failed, was dropped or timed out."""
    return type(exc).__module__.split(".")[0] in ("httpx", "httpx2", "httpcore", "requests", "urllib3") \
        or isinstance(exc, (ConnectionError, TimeoutError))


def _http_message(exc) -> str:
    status = exc.response.status_code if getattr(exc, "response", None) is not None else "?"
    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return f"HTTP {status}: {first}"


# --- pulling --------------------------------------------------------------------------------

def check_published_run(run_dir: Path, run_id: str | None = None) -> list[str]:
    """Problems with a pulled run folder (empty: it checks): ``verikit validate``'s checks
    (schemas, keys, SHA256SUMS), its content gives the run id it was published under
    (``run_id``; default: the folder's name),
    ``records.parquet`` holds the same verdicts as records.jsonl, the predictions have the
    sha256 run.json recorded, and publish.json names the run."""
    run_dir = Path(run_dir)
    problems = check_run_dir(run_dir)
    try:
        run = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
        records = load_records(run_dir / "records.jsonl")
        rid = run_id_of(run_dir, run)
    except (OSError, ValueError, KeyError) as exc:
        return problems + [f"{run_dir}: {exc}"]
    run_id = run_id or run_dir.name
    if rid != run_id:
        problems.append(f"{run_dir}: its content gives run id {rid}, not {run_id}, the id it was published under")
    pq_path = run_dir / "records.parquet"
    if pq_path.exists():
        table = pq.read_table(pq_path, columns=["key", "verdict"]).to_pylist()
        if sorted((x["key"], x["verdict"]) for x in table) != sorted((r["key"], r["verdict"]) for r in records):
            problems.append(f"{pq_path}: its verdicts are not those of records.jsonl")
    else:
        problems.append(f"{pq_path}: missing")
    want = run.get("predictions")
    if want:
        p = run_dir / "predictions.jsonl"
        if not p.exists():
            problems.append(f"{p}: missing (run.json says the run scored {want['path']})")
        elif hashlib.sha256(p.read_bytes()).hexdigest() != want["sha256"]:
            problems.append(f"{p}: its sha256 is not the one run.json recorded")
    try:
        pub = json.loads((run_dir / "publish.json").read_text(encoding="utf-8"))
        if pub.get("run_id") != run_id:
            problems.append(f"{run_dir / 'publish.json'}: names run {pub.get('run_id')}, not {run_id}")
    except (OSError, ValueError) as exc:
        problems.append(f"{run_dir / 'publish.json'}: {exc}")
    return problems


def pull(repo_id: str, out: Path, *, run_id: str | None = None, revision: str | None = None,
         say: Callable[[str], None] = print) -> dict[Path, list[str]]:
    """Download published runs with ``snapshot_download`` (allow-patterns: one run, or all
    of ``runs/``) and check each (:func:`check_published_run`). With ``run_id`` the run's
    files go straight into ``out``; without, into ``out/runs/<benchmark>/<run_id>/``.

    Returns:
        ``{run folder: problems}`` (empty lists: the runs check).

    Raises:
        HubError: the repository, revision or run is not there, or a request failed.
    """
    from huggingface_hub import HfApi, get_token, snapshot_download
    from huggingface_hub.errors import HfHubHTTPError
    from huggingface_hub.hf_api import RepoFile
    from huggingface_hub.utils import disable_progress_bars

    disable_progress_bars()  # one line per run is printed instead

    api = HfApi(endpoint=os.environ.get("HF_ENDPOINT") or None, token=get_token() or None)
    try:
        head = api.repo_info(repo_id, repo_type=REPO_TYPE, revision=revision).sha
        tree = [f.path for f in api.list_repo_tree(repo_id, repo_type=REPO_TYPE, revision=head, recursive=True)
                if isinstance(f, RepoFile)]
        folders = sorted({p.rsplit("/", 1)[0] for p in tree if p.startswith("runs/") and p.count("/") == 3})
        if not folders:
            raise HubError(f"{repo_id}@{head[:12]}: no published run (nothing under runs/)")
        if run_id:
            folders = [f for f in folders if f.rsplit("/", 1)[1] == run_id]
            if not folders:
                known = ", ".join(sorted(p.rsplit("/", 1)[1] for p in {p.rsplit("/", 1)[0] for p in tree
                                                                        if p.startswith("runs/") and p.count("/") == 3}))
                raise HubError(f"{repo_id}: no run {run_id} (runs: {known or 'none'})")
        with tempfile.TemporaryDirectory(prefix="verikit-pull-") as tmp:
            snapshot_download(repo_id, repo_type=REPO_TYPE, revision=head, local_dir=tmp, endpoint=api.endpoint,
                              token=api.token, allow_patterns=[f"{f}/*" for f in folders] or ["runs/*/*/*"])
            result = {}
            for f in folders:
                dest = Path(out) if run_id else Path(out) / f
                dest.mkdir(parents=True, exist_ok=True)
                for item in (Path(tmp) / f).iterdir():
                    if item.is_file():
                        shutil.copy2(item, dest / item.name)
                    elif item.name == OUTPUTS:  # the tools' outputs: validate re-judges from them
                        shutil.copytree(item, dest / OUTPUTS, dirs_exist_ok=True)
                result[dest] = check_published_run(dest, f.rsplit("/", 1)[1])
                say(f"{repo_id}@{head[:12]}: {f} -> {dest}: "
                    + ("checks (schemas, SHA256SUMS, run id, parquet, predictions)" if not result[dest]
                       else f"{len(result[dest])} problem(s)"))
            return result
    except HfHubHTTPError as exc:
        raise HubError(f"{repo_id}: {_http_message(exc)}") from exc
    except Exception as exc:
        if not _transport_error(exc):
            raise
        raise HubError(f"{repo_id}: {type(exc).__name__}: {exc}") from exc
