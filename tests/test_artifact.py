"""Artifact evaluation: ``verikit compare``, and the CASP bundle played as a
reviewer plays it. The bundle also carries the outside example plugin ``smtlib``
(tests/plugins/verikit-smtlib): its claim, its expected run shipped with it,
its wheel in the runner image and in the wheelhouse, with no edit of the kit.

The reviewer test makes the CASP sample's bundle (the framac runner image saved as an OCI
archive, the pinned data, the expected runs, the kit's wheel and its dependencies'), then runs its
``smoke.sh`` the way a committee member would on a fresh machine: a fresh Podman storage
root (so the image can only come from the bundle's archive), no data mirror, an empty
home and cache, and the network cut (``unshare -n``; every container also runs with
``--network none``). The smoke test must pass, fail with a clear message when an expected
value is altered, and ``verikit artifact check`` must catch a modified file.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.results import compare_runs, load_records, write_sums

ROOT = Path(__file__).resolve().parents[1]
REF = ROOT / "results" / "reproduced"
VERIKIT = str(Path(sys.executable).with_name("verikit"))


def _copy_run(src: Path, dest: Path) -> Path:
    dest.mkdir(parents=True)
    for name in ("run.json", "records.jsonl", "report.json", "SHA256SUMS"):
        shutil.copy2(src / name, dest / name)
    return dest


def _edit_records(run_dir: Path, edit) -> None:
    recs = load_records(run_dir / "records.jsonl")
    edit(recs)
    (run_dir / "records.jsonl").write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in recs))
    write_sums(run_dir)


# --- compare --------------------------------------------------------------------------------

def test_compare_exact_on_verdicts_and_goals_tolerant_on_numbers(tmp_path):
    same, counts = compare_runs(REF / "casp", REF / "casp")
    n = len(load_records(REF / "casp" / "records.jsonl"))
    assert same == [] and counts["records"] == n and counts["verdicts_equal"] == n and counts["numbers"] > 100

    other = _copy_run(REF / "casp", tmp_path / "other")

    def fail_one(recs):
        r = next(r for r in recs if r["mode"] == "gold" and r["task_id"] == "01_57")
        r["verdict"] = "failed"
        r["goals"]["proved"] -= 1
    _edit_records(other, fail_one)
    diffs, counts = compare_runs(REF / "casp", other)
    assert ("gold / 01_57 / gold / 0 / gold: verdict", "verified", "failed") in diffs
    assert ("gold / 01_57 / gold / 0 / gold: goals.proved", "9", "8") in diffs
    assert counts["verdicts_equal"] == n - 1
    # a report number off by less than the tolerance passes, by more fails
    report = json.loads((REF / "casp" / "report.json").read_text())
    report["metrics"]["gold"]["overall"]["rate"] += 1e-12
    shifted = _copy_run(REF / "casp", tmp_path / "shifted")
    (shifted / "report.json").write_text(json.dumps(report))
    assert compare_runs(REF / "casp", shifted)[0] == []
    assert compare_runs(REF / "casp", shifted, tolerance=0)[0] == [
        ("report.json metrics.gold.overall.rate", "1.0", json.dumps(1.0 + 1e-12))]


def test_compare_takes_any_verdict_a_canary_allows(tmp_path):
    """The Rocq loop canary may hit the memory limit before the wall-time limit (seen
    here under load): both reject it, both agree with the expected run; a canary that
    passes does not."""
    ref = REF / "ntp4vc" / "rocq"
    memout = _copy_run(ref, tmp_path / "memout")

    def loop_verdict(verdict):
        def edit(recs):
            next(r for r in recs if r["candidate"]["model"] == "canary:loop")["verdict"] = verdict
        return edit
    _edit_records(memout, loop_verdict("memout"))
    assert compare_runs(ref, memout)[0] == []
    passed = _copy_run(ref, tmp_path / "passed")
    _edit_records(passed, loop_verdict("verified"))
    assert [d[1:] for d in compare_runs(ref, passed)[0]] == [("timeout", "verified")]


def test_compare_subset_and_the_cli(tmp_path):
    part = _copy_run(REF / "casp", tmp_path / "part")
    _edit_records(part, lambda recs: recs.__delitem__(slice(10, None)))
    assert compare_runs(REF / "casp", part, subset=True) == ([], {"records": 10, "verdicts_equal": 10,
                                                                  "goals_equal": 10, "numbers": 0,
                                                                  "numbers_equal": 0})
    missing, _ = compare_runs(REF / "casp", part)
    assert len([d for d in missing if d[2] == "missing"]) == len(load_records(REF / "casp" / "records.jsonl")) - 10
    ok = subprocess.run([VERIKIT, "compare", str(REF / "casp"), str(part), "--subset", "--claim", "x"],
                        capture_output=True, text=True)
    assert ok.returncode == 0 and "PASS claim x: records 10, verdicts equal 10" in ok.stderr
    bad = subprocess.run([VERIKIT, "compare", str(REF / "casp"), str(part)], capture_output=True, text=True)
    assert bad.returncode == 1 and "FAIL" in bad.stderr and "missing" in bad.stderr
    nodir = subprocess.run([VERIKIT, "compare", str(tmp_path / "nope"), str(part)], capture_output=True, text=True)
    assert nodir.returncode == 2 and "not a run directory" in nodir.stderr and "Traceback" not in nodir.stderr


# --- an expected run scored from generated predictions -------------------------------------------

def _sha(p: Path) -> str:
    import hashlib

    return hashlib.sha256(p.read_bytes()).hexdigest()


def _generated_run(tmp_path: Path, gen_dir: Path) -> Path:
    """The CASP reproduce run as if scored from predictions ``verikit generate`` wrote into
    ``gen_dir`` (hand-written predictions.jsonl, generation.json, transcript.jsonl whose
    conversation holds a ``<script>``), run.json linking them (relative when ``gen_dir`` is
    inside the run)."""
    run_dir = tmp_path / "run"
    _copy_run(REF / "casp" / "reproduce", run_dir)
    gen_dir.mkdir(parents=True)
    (gen_dir / "predictions.jsonl").write_text(json.dumps({"task_id": "05_125", "model": "m", "sample": 0,
                                                           "output": "x"}) + "\n")
    line = {"task_id": "05_125", "sample": 0, "turn": 1, "request_sha256": "ab" * 32,
            "sent": [{"role": "user", "content": "C function `noneBool`"}],
            "completion": {"content": "<script>alert(1)</script>", "reasoning": None, "finish_reason": "stop",
                           "usage": {"prompt_tokens": 5, "completion_tokens": 6}, "latency_s": 0.1, "attempts": 1,
                           "response_model": "m", "system_fingerprint": None},
            "source": "server", "error": None, "received_at": "2026-11-29T18:00:00+00:00"}
    (gen_dir / "transcript.jsonl").write_text(json.dumps(line) + "\n")
    gen = {"model": {"served": "m"}, "transcript": {"path": "transcript.jsonl", "sha256": _sha(gen_dir / "transcript.jsonl")},
           "predictions": {"path": "predictions.jsonl", "sha256": _sha(gen_dir / "predictions.jsonl")},
           "samples": [{"task_id": "05_125", "sample": 0, "turns": [{"turn": 1, "request_sha256": "ab" * 32,
                                                                      "verdict": None, "reason": None}]}]}
    (gen_dir / "generation.json").write_text(json.dumps(gen))
    recs = load_records(run_dir / "records.jsonl")
    for r in recs:
        if r["task_id"] == "05_125":
            r["candidate"].update(model="m", origin="predictions:predictions.jsonl:1")
    (run_dir / "records.jsonl").write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in recs))
    run = json.loads((run_dir / "run.json").read_text())
    link = gen_dir / "generation.json"
    run["predictions"] = {"path": str(gen_dir / "predictions.jsonl"), "sha256": _sha(gen_dir / "predictions.jsonl"),
                          "candidates": 1, "bad_lines": 0}
    run["generation"] = {"path": str(link.relative_to(run_dir)) if link.is_relative_to(run_dir) else str(link),
                         "sha256": _sha(link), "predictions_sha256": run["predictions"]["sha256"]}
    (run_dir / "run.json").write_text(json.dumps(run, indent=1, sort_keys=True))
    write_sums(run_dir)
    return run_dir


def test_an_expected_run_carries_its_generation_and_transcript(tmp_path):
    """An expected run scored from generated predictions is bundled with its predictions,
    generation.json and transcript (under generation/, or its own relative path), all in
    the bundle's SHA256SUMS (an edited transcript is caught by ``artifact check``); its
    report.html shows the conversation, the model's markup as data."""
    from harness.artifact import check, copy_expected_run, write_sums as bundle_sums

    gen_dir = tmp_path / "gen"
    run_dir = _generated_run(tmp_path, gen_dir)
    root = tmp_path / "bundle"
    dest = root / "expected" / "casp" / "generated"
    assert copy_expected_run(run_dir, dest) == sorted(
        ["run.json", "records.jsonl", "report.json", "SHA256SUMS", "predictions.jsonl", "generation/generation.json",
         "generation/transcript.jsonl"])
    for name in ("generation.json", "transcript.jsonl"):
        assert (dest / "generation" / name).read_bytes() == (gen_dir / name).read_bytes()
    assert (dest / "predictions.jsonl").read_bytes() == (gen_dir / "predictions.jsonl").read_bytes()
    html = (dest / "report.html").read_text()
    assert html.count('class="conv-open"') == 1 and "\\u003cscript\\u003ealert(1)" in html and "<script>alert" not in html
    (root / "claims.json").write_text(json.dumps({"images": [], "claims": []}))
    (root / "README.md").write_text("# artifact\n")
    bundle_sums(root)
    listed = (root / "SHA256SUMS").read_text()
    assert "expected/casp/generated/generation/transcript.jsonl" in listed
    assert "expected/casp/generated/generation/generation.json" in listed
    assert check(root) == []
    with (dest / "generation" / "transcript.jsonl").open("a") as fh:
        fh.write("\n")
    assert check(root) == [f"{dest / 'generation' / 'transcript.jsonl'}: its sha256 differs from SHA256SUMS (modified)"]
    # a generation inside the run directory (reproduce --generate's OUT/generation/ is one): the same relative path
    inside = tmp_path / "inside"
    inside.mkdir()
    run_dir = _generated_run(inside, inside / "run" / "gen")
    got = copy_expected_run(run_dir, tmp_path / "dest2")
    assert "gen/generation.json" in got and "gen/transcript.jsonl" in got


# --- the CASP bundle, played as a reviewer ---------------------------------------------------

def _engine_env() -> dict:
    if not os.environ.get("DOCKER_HOST") and not os.environ.get("VERIKIT_REQUIRE_ENGINE"):
        pytest.skip("no Docker-API engine (set DOCKER_HOST; CI's tests session does)")
    if not shutil.which("podman"):
        pytest.skip("podman is not installed")
    return dict(os.environ)


@pytest.fixture(scope="module")
def casp_bundle(tmp_path_factory):
    env = _engine_env()
    out = tmp_path_factory.mktemp("artifact") / "casp"
    t0 = time.monotonic()
    made = subprocess.run([VERIKIT, "artifact", "bundle", "--benchmark", "casp", "--benchmark", "smtlib",
                           "-o", str(out)], env=env,
                          capture_output=True, text=True, timeout=1800)
    assert made.returncode == 0, made.stderr[-3000:]
    return out, time.monotonic() - t0, made.stderr


def _reviewer_env(tmp: Path, conf: Path) -> dict:
    """A fresh machine: its own Podman storage (``conf``: :func:`fresh_podman_storage`), no
    data mirror, empty home and caches."""
    keep = {k: os.environ[k] for k in ("PATH", "LANG", "TERM") if k in os.environ}
    (tmp / "home").mkdir(exist_ok=True)
    return {**keep, "HOME": str(tmp / "home"), "CONTAINERS_STORAGE_CONF": str(conf), "JOBS": "2",
            "XDG_CACHE_HOME": str(tmp / "home" / ".cache"), "XDG_DATA_HOME": str(tmp / "home" / ".local")}


def _smoke(bundle: Path, env: dict, work: Path) -> subprocess.CompletedProcess:
    argv = ["unshare", "-n", str(bundle / "smoke.sh")] if os.geteuid() == 0 else [str(bundle / "smoke.sh")]
    return subprocess.run(argv, env={**env, "WORK": str(work)}, capture_output=True, text=True, timeout=1800)


@pytest.mark.container
@pytest.mark.realtool
@pytest.mark.slow
def test_casp_bundle_smoke_test_passes_offline_on_a_fresh_machine(casp_bundle, tmp_path, fresh_podman_storage):
    bundle, seconds, log = casp_bundle
    claims = json.loads((bundle / "claims.json").read_text())
    assert [c["id"] for c in claims["claims"]] == ["casp-gold", "casp-models", "smtlib-invariants"]
    for part in ("images/framac-runner.oci.tar", "images/images.json", "data", "wheelhouse/requirements.txt",
                 "kit/verikit-0.1.0-py3-none-any.whl", "kit/verikit-0.1.0.tar.gz",
                 "expected/casp/reproduce/records.jsonl", "expected/casp/records.jsonl",
                 "smoke.sh", "full.sh", "run-claims.sh", "README.md", "LICENSE", "CITATION.cff", ".zenodo.json",
                 "ENVIRONMENT.md", "SHA256SUMS", "licenses/framac/debian", "expected/casp/reproduce/report.html",
                 "expected/casp/report.html", "expected/smtlib/invariants/records.jsonl",
                 "wheelhouse/plugins/verikit_smtlib-0.1.0-py3-none-any.whl"):
        assert (bundle / part).exists(), part
    assert list((bundle / "licenses" / "framac" / "debian").glob("frama-c*.copyright"))
    readme = (bundle / "README.md").read_text()
    for heading in ("## Requirements", "## Getting Started", "## Step-by-step instructions",
                    "## What is not bit-exact, and why", "## Badges sought"):
        assert heading in readme
    assert "frama-c 25.0-beta (paper 30.0)" in readme and "Alt-Ergo" in readme
    assert "[report.html](expected/casp/reproduce/report.html)" in readme  # each claim links its expected report
    import yaml

    cff = yaml.safe_load((bundle / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0" and cff["references"][0]["authors"][0]["family-names"] == "Hertzberg"
    zenodo = json.loads((bundle / ".zenodo.json").read_text())
    assert zenodo["upload_type"] == "software" and zenodo["related_identifiers"][0]["identifier"] == "arXiv:2508.18798"
    images_json = json.loads((bundle / "images" / "images.json").read_text())
    assert images_json[0]["manifest_digest"].startswith("sha256:") and images_json[0]["toolchain"]["name"] == "framac"
    assert subprocess.run([VERIKIT, "artifact", "check", str(bundle)], capture_output=True).returncode == 0

    env = _reviewer_env(tmp_path, fresh_podman_storage)
    t0 = time.monotonic()
    first = _smoke(bundle, env, tmp_path / "work")
    smoke_s = time.monotonic() - t0
    assert first.returncode == 0, first.stdout[-4000:] + first.stderr[-2000:]
    out = first.stdout
    assert "loading images/framac-runner.oci.tar" in out  # from the archive: the storage was empty
    assert "PASS claim casp-gold" in out and "PASS claim smtlib-invariants" in out  # the plugin, in the runner image
    assert "smoke: 2 claim(s) PASS, 0 FAIL" in out
    assert "casp-models" not in out.split("3/3 the claims")[1].replace("PASS claim casp-gold", "")
    smt = load_records(tmp_path / "work" / "out" / "smtlib-invariants" / "records.jsonl")
    assert smt[0]["toolchain"]["name"] == "smtlib-z3" and smt[0]["toolchain"]["tools"]["z3"]["version"] == "4.8.12"
    records = load_records(tmp_path / "work" / "out" / "casp-gold" / "records.jsonl")
    assert len(records) == 10 and {r["verdict"] for r in records} == {"verified"}
    assert all(r["toolchain"]["sandbox"] == "host" for r in records)  # the kit inside the runner image
    # the run inside the image wrote its HTML report too (matplotlib and the template are in the image):
    # 9 gold records counted, 06_114 kept out (a known defect of the pinned data: its prelude is inconsistent)
    page = (tmp_path / "work" / "out" / "casp-gold" / "report.html").read_text()
    assert 'data-field="n" data-value="9"' in page and '<span data-task="06_114">' in page
    size = sum(p.stat().st_size for p in bundle.rglob("*") if p.is_file())
    print(f"\nbundle: {size / 1e9:.2f} GB made in {seconds:.0f} s; smoke test {smoke_s:.0f} s")

    # an expected value altered, consistently (SHA256SUMS renewed): the claim fails, clearly
    exp = bundle / "expected" / "casp" / "reproduce"
    original = (exp / "records.jsonl").read_bytes(), (exp / "SHA256SUMS").read_bytes(), \
        (bundle / "SHA256SUMS").read_bytes()

    def lose_a_goal(recs):
        recs[4]["goals"]["total"] += 1
    _edit_records(exp, lose_a_goal)
    subprocess.run(["bash", "-c", "sha256sum $(sed 's/^[0-9a-f]*  //' SHA256SUMS) > ../s && mv ../s SHA256SUMS"],
                   cwd=bundle, check=True)
    # the same WORK: its result cache gives the 10 verdicts again (each re-derived from its
    # stored tool output), so only the comparison with the altered expected run is new
    altered = _smoke(bundle, env, tmp_path / "work")
    assert altered.returncode == 1
    task = load_records(exp / "records.jsonl")[4]["task_id"]
    assert f"gold / {task} / gold / 0 / gold: goals.total" in altered.stdout
    assert "FAIL claim casp-gold" in altered.stdout and "smoke: 1 claim(s) PASS, 1 FAIL (FAIL: casp-gold)" \
        in altered.stdout

    # the same edit without renewing the checksums: stopped at the first step
    (bundle / "SHA256SUMS").write_bytes(original[2])
    tampered = _smoke(bundle, env, tmp_path / "work3")
    assert tampered.returncode == 1 and "files differ from SHA256SUMS" in tampered.stdout
    check = subprocess.run([VERIKIT, "artifact", "check", str(bundle)], capture_output=True, text=True)
    assert check.returncode == 1
    assert f"{exp / 'records.jsonl'}: its sha256 differs from SHA256SUMS (modified)" in check.stderr
    (exp / "records.jsonl").write_bytes(original[0])
    (exp / "SHA256SUMS").write_bytes(original[1])
    assert subprocess.run([VERIKIT, "artifact", "check", str(bundle)], capture_output=True).returncode == 0


@pytest.mark.container
def test_artifact_check_finds_a_claim_missing_from_the_readme(casp_bundle, tmp_path):
    bundle = tmp_path / "b"
    src = casp_bundle[0]
    shutil.copytree(src, bundle, ignore=shutil.ignore_patterns("*.oci.tar", "wheelhouse", "work*"))
    text = (bundle / "README.md").read_text().replace("`casp-models`", "`casp-m0dels`")
    (bundle / "README.md").write_text(text)
    subprocess.run(["bash", "-c", "find . -type f ! -name SHA256SUMS ! -path './work*' -printf '%P\\n' | sort | "
                    "xargs sha256sum > ../s && mv ../s SHA256SUMS"], cwd=bundle, check=True)
    got = subprocess.run([VERIKIT, "artifact", "check", str(bundle)], capture_output=True, text=True)
    assert got.returncode == 1
    assert "claim casp-models: '`casp-models`' is not in the README" in got.stderr


@pytest.mark.container
@pytest.mark.slow
def test_the_kit_installs_on_the_host_from_the_bundle_offline(casp_bundle, tmp_path):
    """The README's 'Reusable' commands: a venv, the kit's wheel and its dependencies'
    with --no-index; then the bundled expected run validates with that CLI (the kit from
    the wheel: no PYTHONPATH)."""
    bundle = casp_bundle[0]
    cut = ["unshare", "-n"] if os.geteuid() == 0 else []
    venv = tmp_path / "v"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    readme = (bundle / "README.md").read_text()
    assert "--find-links wheelhouse kit/verikit-0.1.0-py3-none-any.whl" in readme and "PYTHONPATH" not in readme
    # a reviewer's shell: no PYTHONPATH (the tests' own would show pip the checkout's verikit.egg-info)
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "VERIKIT_DATA_MIRRORS": str(bundle / "data")}
    got = subprocess.run([*cut, str(venv / "bin" / "pip"), "install", "-q", "--no-index", "--find-links",
                          str(bundle / "wheelhouse"), str(bundle / "kit" / "verikit-0.1.0-py3-none-any.whl")],
                         env=env, capture_output=True, text=True, timeout=900)
    assert got.returncode == 0, got.stderr[-2000:]
    ok = subprocess.run([*cut, str(venv / "bin" / "verikit"), "validate", str(bundle / "expected" / "casp" / "reproduce")],
                        env=env, cwd=tmp_path, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert "valid" in ok.stderr
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import harness; print(harness.__file__)"], env=env,
                           cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert Path(where.strip()).is_relative_to(venv)
