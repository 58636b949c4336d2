"""``verikit publish`` / ``pull`` / ``rerun`` against a Hub stand-in (``tests/hubstandin.py``:
a standard-library HTTP server on 127.0.0.1) driven by the real ``huggingface_hub`` client
through ``HF_ENDPOINT``. The kit runs as a subprocess (its console script), as a user runs it.

Real Frama-C: one test re-runs a pulled CASP gold run (two tasks) with ``verikit rerun``
and the real Frama-C of this host (no cache: every record re-verified here, live). The runs
the two Frama-C tests publish, the gold test's second rerun (of a record edited after the
pull: the subject is the disagreement, the verdicts are the same jobs as the run's) and the
model run's re-verification of its two model records from the pulled copy are judged on
the real Frama-C's recorded outputs, replayed through the kit's own executor, parser and
judge (``framac_recorded`` with ``pipeline_sandbox``: ``verikit run`` / ``rerun`` called
in-process; ``tests/recorded/runs/hub/``; refresh it with ``python scripts/record.py
hub``). The other tests publish the committed reference runs.

Not exercised here (no Hub can be reached): the large-file path (LFS / Xet uploads: the
stand-in answers every pre-upload "regular"), the dataset viewer's rendering of the card's
``configs``, tree pagination, and the Hub's own YAML rules beyond parsing.
"""

from __future__ import annotations

import fnmatch
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from recording import pipeline_sandbox

from harness.cli import main
from harness.htmlreport import load_view, render_html
from harness.hub import run_id_of
from harness.metrics import group_metrics
from harness.report import canary_results
from harness.results import load_records, write_sums

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hubstandin import HubStandIn  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CASP_RUN = ROOT / "results" / "reproduced" / "casp"  # verikit run casp (3 modes, 90 jobs, canaries)
CASP_REPRO = ROOT / "results" / "reproduced" / "casp" / "reproduce"  # verikit reproduce casp
TOKEN = "hf_standin_Secret_0123456789abcdef"
REPO = "tester/verikit-results"
VERIKIT = str(Path(sys.executable).with_name("verikit"))


@pytest.fixture
def hub():
    with HubStandIn(TOKEN) as server:
        yield server


def _env(tmp_path: Path, hub: HubStandIn | None, *, token: bool = True) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update({"HF_HOME": str(tmp_path / "hf-home"), "HF_HUB_DISABLE_TELEMETRY": "1", "HF_HUB_DISABLE_XET": "1",
                "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
                "HF_ENDPOINT": hub.endpoint if hub else "http://127.0.0.1:9"})
    if token:
        env["HF_TOKEN"] = TOKEN
    return env


def _kit(args: list[str], env: dict, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([VERIKIT, *args], env=env, capture_output=True, text=True, timeout=timeout)


def _tree_hash(d: Path) -> dict[str, str]:
    return {str(p.relative_to(d)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(d.rglob("*"))
            if p.is_file()}


def _copy_run(src: Path, dest: Path) -> Path:
    dest.mkdir(parents=True)
    for name in ("run.json", "records.jsonl", "report.json", "SHA256SUMS"):
        shutil.copy2(src / name, dest / name)
    if (src / "outputs").is_dir():  # the tools' outputs the records name (validate re-judges from them)
        shutil.copytree(src / "outputs", dest / "outputs")
    return dest


def _rewrite(run_dir: Path, *, records=None, run=None) -> None:
    """Rewrite a run directory as the kit would have written it after ``records(list)`` /
    ``run(dict)`` changed it: report metrics and canaries recomputed, SHA256SUMS renewed."""
    recs = load_records(run_dir / "records.jsonl")
    doc = json.loads((run_dir / "run.json").read_text())
    report = json.loads((run_dir / "report.json").read_text())
    if records:
        records(recs)
        (run_dir / "records.jsonl").write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in recs))
        report["metrics"] = json.loads(json.dumps(group_metrics(recs, seed=report["bootstrap_seed"])))
        expected = {(c["mode"], c["model"]): tuple(c["expected"]) for c in report["canaries"]["results"]}
        report["canaries"] = canary_results(recs, expected)
        report["infra_errors"] = sum(r["verdict"] == "infra_error" for r in recs)
        doc["counts"]["infra_error"] = report["infra_errors"]
    if run:
        run(doc)
    (run_dir / "report.json").write_text(json.dumps(report, indent=1, sort_keys=True))
    (run_dir / "run.json").write_text(json.dumps(doc, indent=1, sort_keys=True))
    write_sums(run_dir)


def _card(files: dict[str, bytes]):
    from huggingface_hub import DatasetCard

    return DatasetCard(files["README.md"].decode())


def _assert_configs_exist(card, files: dict[str, bytes]) -> None:
    configs = card.data.to_dict()["configs"]
    assert {c["config_name"] for c in configs} >= {"leaderboard"}
    for c in configs:
        for df in c["data_files"]:
            matched = [p for p in files if fnmatch.fnmatch(p, df["path"])]
            assert matched, f"config {c['config_name']}: {df['path']} matches no file in the commit"
            for p in matched:
                pq.read_table(io.BytesIO(files[p]))  # a parquet file the viewer can read


# --- publishing ----------------------------------------------------------------------------

def test_first_publish_then_again_is_a_noop(hub, tmp_path):
    before = _tree_hash(CASP_RUN)
    env = _env(tmp_path, hub)
    first = _kit(["publish", str(CASP_RUN), "--repo", REPO, "--private"], env)
    assert first.returncode == 0, first.stderr
    rid = run_id_of(CASP_RUN, json.loads((CASP_RUN / "run.json").read_text()))
    assert f"published {rid}" in first.stderr
    assert hub.repos[REPO].private and hub.commit_count(REPO) == 2  # the repo's first commit + the publish
    files = hub.files(REPO)
    prefix = f"runs/casp/{rid}"
    for name in ("run.json", "records.jsonl", "report.json", "SHA256SUMS"):
        assert files[f"{prefix}/{name}"] == (CASP_RUN / name).read_bytes()
    records = load_records(CASP_RUN / "records.jsonl")
    table = pq.read_table(io.BytesIO(files[f"{prefix}/records.parquet"])).to_pylist()
    assert sorted((r["key"], r["verdict"]) for r in table) == sorted((r["key"], r["verdict"]) for r in records)
    assert json.loads(files[f"{prefix}/publish.json"])["waivers"] == []
    board = pq.read_table(io.BytesIO(files["leaderboard.parquet"])).to_pylist()
    assert board and {r["run_id"] for r in board} == {rid}
    assert not any(r["model"].startswith("canary:") for r in board)
    gpt = [r for r in board if (r["model"], r["mode"], r["metric"]) == ("openai/gpt-4o-mini", "spec-from-code",
                                                                        "verified_rate")]
    report = json.loads((CASP_RUN / "report.json").read_text())
    assert gpt[0]["value"] == report["metrics"]["spec-from-code"]["per_model"]["openai/gpt-4o-mini"]["rate"]
    card = _card(files)
    assert card.data.license == "mit" and "casp" in card.data.tags
    _assert_configs_exist(card, files)
    assert rid in card.text and "## Toolchains" in card.text and "Hertzberg" in card.text
    assert "frama-c: 25.0-beta vs 30.0" in card.text  # the drift, probed vs published
    # the run's HTML report, rendered from the checked run files, linked from the card
    assert files[f"{prefix}/report.html"] == render_html([load_view(CASP_RUN)]).encode()
    assert f"[report.html]({prefix}/report.html)" in card.text
    assert ("POST", "/api/validate-yaml", 200) in hub.log  # the card's YAML went through the Hub's check
    # the token is never printed nor written
    assert TOKEN not in first.stdout + first.stderr
    assert not any(TOKEN.encode() in data for data in files.values())
    assert not any(TOKEN.encode() in p.read_bytes() for p in (tmp_path / "hf-home").rglob("*") if p.is_file())
    # the same run again: said so, no new commit
    again = _kit(["publish", str(CASP_RUN), "--repo", REPO], env)
    assert again.returncode == 0, again.stderr
    assert "already published" in again.stderr and "no new commit" in again.stderr
    assert hub.commit_count(REPO) == 2
    assert _tree_hash(CASP_RUN) == before  # the local run is untouched


def test_concurrent_publishes_both_land(hub, tmp_path):
    """Two publishers read the same head (the stand-in holds commits until both arrived):
    one gets HTTP 412, re-reads, rebuilds the card and commits; both runs are in the repo
    and in the card."""
    from huggingface_hub import HfApi

    env = _env(tmp_path, hub)
    first_id = run_id_of(CASP_RUN, json.loads((CASP_RUN / "run.json").read_text()))
    second_id = run_id_of(CASP_REPRO, json.loads((CASP_REPRO / "run.json").read_text()))
    HfApi(endpoint=hub.endpoint, token=TOKEN).create_repo(REPO, repo_type="dataset")
    hub.gate = 2
    procs = [subprocess.Popen([VERIKIT, "publish", str(d), "--repo", REPO], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for d in (CASP_RUN, CASP_REPRO)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert sum(status == 412 for _, path, status in hub.log if "/commit/" in path) == 1
    assert any("HTTP 412" in err for _, err in outs)
    files = hub.files(REPO)
    assert f"runs/casp/{first_id}/run.json" in files and f"runs/casp/{second_id}/run.json" in files
    card = _card(files)
    assert first_id in card.text and second_id in card.text
    _assert_configs_exist(card, files)
    board = pq.read_table(io.BytesIO(files["leaderboard.parquet"])).to_pylist()
    assert {r["run_id"] for r in board} == {first_id, second_id}
    assert hub.commit_count(REPO) == 3


def _refused(tmp_path, hub, *run_dirs: Path) -> subprocess.CompletedProcess:
    got = _kit(["publish", *map(str, run_dirs), "--repo", REPO], _env(tmp_path, hub))
    assert got.returncode == 2 and "nothing was published" in got.stderr, got.stderr
    assert "Traceback" not in got.stderr
    assert REPO not in hub.repos  # refused before anything was sent
    return got


def test_refuses_invalid_canary_failed_dirty_and_infra_error_runs(hub, tmp_path):
    # invalid: a verdict edited after the run (SHA256SUMS and the metrics say so)
    edited = _copy_run(CASP_REPRO, tmp_path / "edited")
    lines = (edited / "records.jsonl").read_text().splitlines()
    rec = json.loads(lines[0])
    rec["verdict"] = "failed"
    lines[0] = json.dumps(rec, sort_keys=True)
    (edited / "records.jsonl").write_text("\n".join(lines) + "\n")
    out = _refused(tmp_path, hub, edited)
    assert "sha256 differs from SHA256SUMS" in out.stderr and "metrics of gold differ" in out.stderr

    # a canary accepted: written consistently, but the run cannot be trusted
    canary = _copy_run(CASP_RUN, tmp_path / "canary")

    def accept_canary(recs):  # one with goal counts (not decided by the gate)
        for r in recs:
            if r["candidate"]["model"] == "canary:vacuous-in-disguise" and r["mode"] == "spec-from-code":
                r["verdict"], r["reason"] = "verified", "all goals proved"
                g = r["goals"]
                g.update(proved=g["total"], failed=0, timeout=0, unknown=0)
    _rewrite(canary, records=accept_canary)
    # consistent sums and report, but the verdict is not the one its stored Frama-C output gives
    checked = _kit(["validate", str(canary)], _env(tmp_path, hub))
    assert checked.returncode == 1 and "re-judge: spec-from-code 01_57 canary:vacuous-in-disguise" in checked.stderr
    out = _refused(tmp_path, hub, canary)
    assert "canaries failed" in out.stderr and "canary:vacuous-in-disguise (spec-from-code): verified, expected rejected" \
        in out.stderr

    # made from a dirty checkout: refused, then allowed and recorded
    dirty = _copy_run(CASP_REPRO, tmp_path / "dirty")
    _rewrite(dirty, run=lambda d: d["kit"].update(git_dirty=True))
    out = _refused(tmp_path, hub, dirty)
    assert "uncommitted changes" in out.stderr and "--allow-dirty" in out.stderr

    # infra errors: refused, then allowed and recorded
    infra = _copy_run(CASP_REPRO, tmp_path / "infra")

    def lose_one(recs):
        recs[0]["verdict"], recs[0]["reason"] = "infra_error", "the container engine went away"
    _rewrite(infra, records=lose_one)
    out = _refused(tmp_path, hub, infra)
    assert "1 job(s) ended in infra_error" in out.stderr

    # several runs, one bad: nothing at all is published
    _refused(tmp_path, hub, CASP_RUN, dirty)

    ok = _kit(["publish", str(dirty), str(infra), "--repo", REPO, "--allow-dirty", "--allow-infra-errors"],
              _env(tmp_path, hub))
    assert ok.returncode == 0, ok.stderr
    files = hub.files(REPO)
    waivers = {json.loads(d)["run_id"]: json.loads(d)["waivers"] for p, d in files.items()
               if p.endswith("/publish.json")}
    assert sorted(map(tuple, waivers.values())) == [("allow-dirty",), ("allow-infra-errors (1)",)]
    card = _card(files).text
    assert "allow-dirty" in card and "allow-infra-errors (1)" in card


def test_a_dropped_connection_mid_commit_changes_nothing(hub, tmp_path):
    env = _env(tmp_path, hub)
    assert _kit(["publish", str(CASP_REPRO), "--repo", REPO], env).returncode == 0
    head, files = hub.head(REPO), hub.files(REPO)
    before = _tree_hash(CASP_RUN)
    hub.drop_commits = True
    got = _kit(["publish", str(CASP_RUN), "--repo", REPO], env)
    assert got.returncode == 2 and "error: Hub:" in got.stderr and "nothing was committed" in got.stderr
    assert "Traceback" not in got.stderr and TOKEN not in got.stderr
    assert any(status == 0 for _, path, status in hub.log if "/commit/" in path)  # the drop happened
    assert hub.head(REPO) == head and hub.files(REPO) == files
    assert _tree_hash(CASP_RUN) == before


def test_no_token_is_a_clear_error_and_dry_run_needs_none(hub, tmp_path):
    env = _env(tmp_path, None, token=False)  # no token, and an endpoint nobody listens on
    got = _kit(["publish", str(CASP_REPRO), "--repo", REPO], env)
    assert got.returncode == 2 and "no Hub token" in got.stderr and "Traceback" not in got.stderr
    out = tmp_path / "dry"
    dry = _kit(["publish", str(CASP_REPRO), "--repo", REPO, "--dry-run", "--out", str(out)], env)
    assert dry.returncode == 0, dry.stderr
    written = {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert {line.split()[1] for line in dry.stdout.splitlines()} == set(written)  # "add PATH (N bytes)"
    # exactly the files a real publish to an empty repository adds
    real = _kit(["publish", str(CASP_REPRO), "--repo", REPO], _env(tmp_path, hub))
    assert real.returncode == 0, real.stderr
    committed = {p: d for p, d in hub.files(REPO).items() if p != ".gitattributes"}
    assert set(committed) == set(written)
    for p in written:
        if not p.endswith("publish.json"):  # publish.json holds the publish time
            assert committed[p] == written[p], p
    _assert_configs_exist(_card(written), written)


def test_publish_from_s3(hub, tmp_path, monkeypatch):
    """A reduced batch run is published from its S3 URI (moto in process, the real boto3)."""
    import boto3
    from moto import mock_aws

    from harness.cli import main
    from harness.results import S3Store

    for k, v in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                 "AWS_DEFAULT_REGION": "us-east-1", **_env(tmp_path, hub)}.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    with mock_aws():
        boto3.client("s3").create_bucket(Bucket="runs")
        S3Store("s3://runs/casp/r1").upload_run(CASP_REPRO)
        assert main(["publish", "s3://runs/casp/r1", "--repo", REPO]) == 0
    rid = run_id_of(CASP_REPRO, json.loads((CASP_REPRO / "run.json").read_text()))
    assert hub.files(REPO)[f"runs/casp/{rid}/records.jsonl"] == (CASP_REPRO / "records.jsonl").read_bytes()


# --- pulling and re-verifying ----------------------------------------------------------------

def test_pull_checks_hashes_and_finds_a_tampered_hub_copy(hub, tmp_path):
    env = _env(tmp_path, hub)
    assert _kit(["publish", str(CASP_RUN), str(CASP_REPRO), "--repo", REPO], env).returncode == 0
    got = _kit(["pull", REPO, "--out", str(tmp_path / "all")], env)
    assert got.returncode == 0, got.stderr
    pulled = sorted((tmp_path / "all" / "runs" / "casp").iterdir())
    assert len(pulled) == 2 and "2 check, 0 do not" in got.stderr
    for d in pulled:
        src = CASP_RUN if (d / "run.json").read_bytes() == (CASP_RUN / "run.json").read_bytes() else CASP_REPRO
        assert (d / "records.jsonl").read_bytes() == (src / "records.jsonl").read_bytes()
    # someone edits a verdict on the Hub side (a commit that bypasses the kit)
    rid = pulled[1].name
    repo = hub.repos[REPO]
    path = next(p for p in repo.files("main") if p.startswith("runs/casp/") and rid in p and
                p.endswith("records.jsonl"))
    text = repo.files("main")[path].decode().replace('"verdict": "verified"', '"verdict": "failed"', 1)
    repo.commits[repo.branches["main"]]["files"][path] = text.encode()
    bad = _kit(["pull", REPO, "--run", rid, "--out", str(tmp_path / "one")], env)
    assert bad.returncode == 1, bad.stderr
    assert "sha256 differs from SHA256SUMS" in bad.stderr and "records.parquet: its verdicts" in bad.stderr
    missing = _kit(["pull", REPO, "--run", "20000101T000000Z-0000000000", "--out", str(tmp_path / "none")], env)
    assert missing.returncode == 2 and "no run 20000101T000000Z-0000000000" in missing.stderr


@pytest.mark.realtool
@pytest.mark.recorded
@pytest.mark.slow
def test_publish_pull_rerun_casp_gold_agrees_with_real_framac(hub, tmp_path, framac_recorded, isolated_cache, capsys):
    """A gold run of two CASP sample tasks (judged on the recorded real outputs), published,
    pulled into a fresh directory, checked, and re-verified by ``verikit rerun`` with the
    real Frama-C of this host (live, no cache): 2/2 records agree; a record edited after the
    pull disagrees (that rerun judged on the recorded outputs of the same jobs). The one
    test where a pulled run is re-run whole by the CLI."""
    if not shutil.which("frama-c"):
        pytest.skip("frama-c is not installed on this machine")
    env = _env(tmp_path, hub)  # isolated_cache's VERIKIT_CACHE and VERIKIT_DATA; rerun uses no cache
    run_dir = tmp_path / "gold"
    two = [x for t in ("05_125", "06_114") for x in ("--task", t)]
    with pipeline_sandbox(framac_recorded.sandbox):
        made = main(["run", "casp", "--mode", "gold", "--dataset", "casp-sample10", *two, "--sandbox", "host", "-j",
                     "2", "--out", str(run_dir), "--cache-dir", str(tmp_path / "cache")])
    assert made == 0, capsys.readouterr().err
    pub = _kit(["publish", str(run_dir), "--repo", REPO, "--allow-dirty"], env)  # a dev checkout may be dirty
    assert pub.returncode == 0, pub.stderr
    rid = run_id_of(run_dir, json.loads((run_dir / "run.json").read_text()))
    pulled = tmp_path / "pulled"
    got = _kit(["pull", REPO, "--run", rid, "--out", str(pulled)], env)
    assert got.returncode == 0, got.stderr
    assert _kit(["validate", str(pulled)], env).returncode == 0
    again = _kit(["rerun", str(pulled), "-j", "2"], env, timeout=900)
    assert again.returncode == 0, again.stderr
    assert "agreement 2/2 records" in again.stderr
    rerun = json.loads((pulled / "rerun.json").read_text())
    assert rerun["agreement"] == {"agree": 2, "total": 2}
    assert all(r["rerun"]["verdict"] == "verified" for r in rerun["records"])
    # a pulled run whose record was changed (and re-summed, so it validates) disagrees
    def fail_one(recs):
        g = recs[1]["goals"]
        recs[1].update(verdict="failed", reason="edited")
        g["proved"], g["failed"] = g["proved"] - 1, g["failed"] + 1
    _rewrite(pulled, records=fail_one)
    capsys.readouterr()
    with pipeline_sandbox(framac_recorded.sandbox):
        changed = main(["rerun", str(pulled), "-j", "2"])
    assert changed == 1 and "agreement 1/2 records" in capsys.readouterr().err


def test_invoke_task_calls_the_same_command():
    got = subprocess.run([str(Path(sys.executable).with_name("invoke")), "--dry", "hub.publish", "--runs", "a b",
                          "--repo", "x/y", "--private", "--allow-dirty"], cwd=ROOT, capture_output=True, text=True)
    assert got.returncode == 0, got.stderr
    shown = re.sub(r"\x1b\[[0-9;]*m", "", got.stdout).strip()  # invoke --dry echoes the command in colour
    assert shown == "verikit publish a b --repo x/y --revision main --private --allow-dirty"


@pytest.mark.recorded
@pytest.mark.slow
def test_a_model_run_travels_with_its_predictions(hub, tmp_path, casp_tasks, framac_recorded, isolated_cache, capsys):
    """A run that scored a predictions file: refused while the file is gone, published
    with it as predictions.jsonl, pulled with its hash checked, and its two model records
    re-verified from the pulled copy (the original file moved away) through the functions
    ``verikit rerun`` uses (the predictions found beside the pulled run.json, the run's own
    spec, no cache). The run and the re-verification are judged on the real Frama-C's
    recorded outputs (the subject is the predictions file travelling with the run; the
    live rerun of a pulled run is the gold test's)."""
    env = _env(tmp_path, hub)
    t = casp_tasks["01_57"]
    preds = tmp_path / "preds" / "model.jsonl"
    preds.parent.mkdir()
    preds.write_text(json.dumps({"task_id": "01_57", "model": "m", "sample": 0, "output": t.contract + "\n" + t.code})
                     + "\n" + json.dumps({"task_id": "01_57", "model": "m", "sample": 1,
                                          "output": "/*@ ensures \\result == 0; */\n" + t.code}) + "\n")
    run_dir = tmp_path / "model-run"
    with pipeline_sandbox(framac_recorded.sandbox):
        made = main(["run", "casp", "--mode", "spec-from-code", "--task", "01_57", "--predictions", str(preds),
                     "--sandbox", "host", "-j", "2", "--out", str(run_dir), "--cache-dir", str(tmp_path / "cache")])
    assert made == 0, capsys.readouterr().err
    moved = tmp_path / "elsewhere.jsonl"
    preds.rename(moved)
    gone = _kit(["publish", str(run_dir), "--repo", REPO, "--allow-dirty"], env)
    assert gone.returncode == 2 and "the predictions it scored" in gone.stderr and "are not there" in gone.stderr
    moved.rename(preds)
    pub = _kit(["publish", str(run_dir), "--repo", REPO, "--allow-dirty"], env)
    assert pub.returncode == 0, pub.stderr
    rid = run_id_of(run_dir, json.loads((run_dir / "run.json").read_text()))
    assert hub.files(REPO)[f"runs/casp/{rid}/predictions.jsonl"] == preds.read_bytes()
    preds.rename(moved)  # the re-verification must use the pulled copy
    pulled = tmp_path / "pulled"
    assert _kit(["pull", REPO, "--run", rid, "--out", str(pulled)], env).returncode == 0
    assert load_records(pulled / "records.jsonl") == load_records(run_dir / "records.jsonl")
    from harness.cli.options import run_predictions, spec_of_run_dir
    from harness.runner.pipeline import recheck

    with run_predictions(pulled, json.loads((pulled / "run.json").read_text())) as found:
        assert found is not None and found.name == preds.name and found.read_bytes() == moved.read_bytes()
        assert not found.is_relative_to(preds.parent)  # not the original (moved away): the pulled copy
        spec, settings = spec_of_run_dir(pulled, "rerun", parallel=2, predictions=str(found))
        model = [r for r in load_records(pulled / "records.jsonl") if r["candidate"]["model"] == "m"]
        with pipeline_sandbox(framac_recorded.sandbox):
            again, differences = recheck(spec, model, len(model), settings=settings)
    assert differences == [] and len(again) == len(model) == 2  # the records agree with the (recorded) real Frama-C's
    verdicts = {(r["candidate"]["model"], r["candidate"]["sample"]): r["verdict"] for r in again}
    assert verdicts[("m", 0)] == "verified" and verdicts[("m", 1)] != "verified"
    # the Hub's copy of the predictions edited: the pull says so
    repo = hub.repos[REPO]
    repo.commits[repo.branches["main"]]["files"][f"runs/casp/{rid}/predictions.jsonl"] = b"{}\n"
    bad = _kit(["pull", REPO, "--run", rid, "--out", str(tmp_path / "again")], env)
    assert bad.returncode == 1 and "predictions.jsonl: its sha256 is not the one run.json recorded" in bad.stderr


@pytest.mark.recorded
@pytest.mark.slow
def test_a_generated_run_travels_with_its_generation_and_transcript(hub, tmp_path, casp_tasks, framac_recorded,
                                                                    isolated_cache, capsys):
    """A run scored from predictions made by ``verikit generate`` (a hand-written generation
    directory: predictions.jsonl, generation.json, transcript.jsonl): published with its
    generation.json and transcript under generation/ in the run's folder (publish.json says
    where), refused while the transcript differs from the one generation.json records,
    pulled with both checked, and the pulled run's report shows the conversations from the
    carried copies (the original directory moved away). The run is judged on the real
    Frama-C's recorded outputs (the same two candidates as the model run above)."""
    env = _env(tmp_path, hub)
    t = casp_tasks["01_57"]
    outputs = [t.contract + "\n" + t.code, "/*@ ensures \\result == 0; */\n" + t.code]
    gen_dir = tmp_path / "gen"
    gen_dir.mkdir()
    preds = gen_dir / "predictions.jsonl"
    preds.write_text("".join(json.dumps({"task_id": "01_57", "model": "m", "sample": i, "output": o}) + "\n"
                             for i, o in enumerate(outputs)))
    lines = [{"task_id": "01_57", "sample": i, "turn": 1, "request_sha256": f"{i:064x}",
              "sent": [{"role": "user", "content": "C function `divmult`: <write its contract>"}],
              "completion": {"content": f"```c\n{o}\n```", "reasoning": None, "finish_reason": "stop",
                             "usage": {"prompt_tokens": 90, "completion_tokens": 40}, "latency_s": 0.5, "attempts": 1,
                             "response_model": "m", "system_fingerprint": None},
              "source": "server", "error": None, "received_at": "2026-11-29T18:00:00+00:00"}
             for i, o in enumerate(outputs)]
    transcript = gen_dir / "transcript.jsonl"
    transcript.write_text("".join(json.dumps(x) + "\n" for x in lines))
    sha = lambda p: hashlib.sha256(p.read_bytes()).hexdigest()  # noqa: E731
    gen = {"model": {"requested": "m", "served": "m"}, "predictions": {"path": "predictions.jsonl", "sha256": sha(preds)},
           "transcript": {"path": "transcript.jsonl", "sha256": sha(transcript)},
           "samples": [{"task_id": "01_57", "sample": x["sample"], "turns": [
               {"turn": 1, "request_sha256": x["request_sha256"], "verdict": None, "reason": None,
                "completion_sha256": hashlib.sha256(x["completion"]["content"].encode()).hexdigest()}]}
               for x in lines]}
    (gen_dir / "generation.json").write_text(json.dumps(gen, indent=1))
    run_dir = tmp_path / "model-run"
    with pipeline_sandbox(framac_recorded.sandbox):
        made = main(["run", "casp", "--mode", "spec-from-code", "--task", "01_57", "--predictions", str(preds),
                     "--sandbox", "host", "-j", "2", "--out", str(run_dir), "--cache-dir", str(tmp_path / "cache")])
    assert made == 0, capsys.readouterr().err
    assert json.loads((run_dir / "run.json").read_text())["generation"]["path"] == str(gen_dir / "generation.json")
    kept = transcript.read_bytes()
    transcript.write_bytes(kept + b"\n")
    changed = _kit(["publish", str(run_dir), "--repo", REPO, "--allow-dirty"], env)
    assert changed.returncode == 2 and f"the transcript {transcript} changed since the generation" in changed.stderr
    transcript.write_bytes(kept)
    pub = _kit(["publish", str(run_dir), "--repo", REPO, "--allow-dirty"], env)
    assert pub.returncode == 0, pub.stderr
    rid = run_id_of(run_dir, json.loads((run_dir / "run.json").read_text()))
    files = hub.files(REPO)
    prefix = f"runs/casp/{rid}"
    assert files[f"{prefix}/generation/generation.json"] == (gen_dir / "generation.json").read_bytes()
    assert files[f"{prefix}/generation/transcript.jsonl"] == kept
    assert json.loads(files[f"{prefix}/publish.json"])["generation"] == {
        "generation_json": "generation/generation.json", "transcript": "generation/transcript.jsonl"}
    pulled = tmp_path / "pulled"
    got = _kit(["pull", REPO, "--run", rid, "--out", str(pulled)], env)
    assert got.returncode == 0, got.stderr
    assert (pulled / "generation" / "transcript.jsonl").read_bytes() == kept
    shutil.move(gen_dir, tmp_path / "elsewhere")  # the report and validate must read the pulled copies
    html = render_html([load_view(pulled)])
    assert html.count('class="conv-open"') == 2 and "C function `divmult`: \\u003cwrite its contract\\u003e" in html
    from harness.report import generation_inconsistencies

    report = json.loads((pulled / "report.json").read_text())
    assert generation_inconsistencies(pulled, report, load_records(pulled / "records.jsonl")) == []
    # the Hub's copy of the transcript edited: the pull says so
    repo = hub.repos[REPO]
    repo.commits[repo.branches["main"]]["files"][f"{prefix}/generation/transcript.jsonl"] = b"{}\n"
    bad = _kit(["pull", REPO, "--run", rid, "--out", str(tmp_path / "again")], env)
    assert bad.returncode == 1 and "transcript.jsonl: its sha256 is not the one generation.json recorded" in bad.stderr
