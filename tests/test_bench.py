"""The bench scripts (``scripts/bench_*.py``, ``nox -s bench``) in their quick mode, run as
subprocesses (benchmarks that cannot rot): each must run to its end (exit 0) and
print the ratio line of every target it measures; the timings are not judged (they are
noise on CI). A step that fails (a bare command exits non-zero, the kit's verdicts differ
from the bare run's) makes a script exit 1, so a broken bench fails here.

The host scripts run the real Frama-C (``realtool``, casp-sample10 from the data
mirror); the container scripts use the framac and dafny images the test session builds
(``container``). The summary table and the exit statuses are checked without a tool.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "scripts"
_spec = importlib.util.spec_from_file_location("benchlib", SCRIPTS / "benchlib.py")
benchlib = sys.modules.setdefault("benchlib", importlib.util.module_from_spec(_spec))  # dataclasses need it there
_spec.loader.exec_module(benchlib)
TARGETS = benchlib.TARGETS


def _quick(script: str, env: dict, tmp_path: Path, *args: str) -> tuple[str, list[dict]]:
    """Run ``script --quick`` and return its standard output and its summary lines;
    fails with its output when it does not exit 0."""
    summary = tmp_path / f"{script}.summary.jsonl"
    proc = subprocess.run([sys.executable, str(SCRIPTS / script), "--quick", "--summary", str(summary), *args],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"{script} --quick exited {proc.returncode}:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    lines = [json.loads(x) for x in summary.read_text().splitlines()] if summary.exists() else []
    return proc.stdout, lines


def _assert_ratios(out: str, lines: list[dict], keys: tuple[str, ...]) -> None:
    """Every target of ``keys`` has its ``RATIO`` line (value, target, PASS/MISS, not
    judged) and its summary line with a value."""
    for key in keys:
        t = TARGETS[key]
        assert re.search(rf"^RATIO {key} = [-\d.]+.* \(target {re.escape(t.op)} .+\) (PASS|MISS) \[quick: not judged\]",
                         out, re.M), f"no ratio line for {key}:\n{out}"
    assert [x["key"] for x in lines] == list(keys)
    assert all(x["value"] is not None and x["status"] in ("PASS", "MISS") and x["quick"] for x in lines)


def _need_framac():
    if shutil.which("frama-c") is None:
        pytest.skip("frama-c is not installed on this machine")


@pytest.mark.slow
@pytest.mark.realtool
def test_bench_kit_vs_bare_quick(casp_mirror, isolated_cache, tmp_path):
    """Bare commands of the kit's own jobs (driver files included) vs the kit at -j 1 and
    -j 2, and a cached re-run: verdicts equal, three ratio lines."""
    _need_framac()
    out, lines = _quick("bench_kit_vs_bare.py", isolated_cache, tmp_path)
    _assert_ratios(out, lines, ("kit_j1_over_bare", "kit_j2_over_j1", "cached_s_per_1000"))


@pytest.mark.slow
@pytest.mark.realtool
def test_bench_framac_paper_quick(casp_mirror, isolated_cache, tmp_path):
    """The kit's full CASP job against the paper's frama-c on the same verified file, one
    gold candidate per mode: both verified, and the ratio line."""
    _need_framac()
    out, lines = _quick("bench_framac_paper.py", isolated_cache, tmp_path)
    _assert_ratios(out, lines, ("kit_over_paper_casp",))
    assert "spec-from-code 00_327 gold: kit" in out and "code-from-spec 00_327 gold: kit" in out, out
    assert out.count("(verified), paper") == 2, out


@pytest.mark.slow
@pytest.mark.realtool
def test_bench_exec_check_quick(casp_mirror, isolated_cache, tmp_path):
    """The execution cross-check's cost: it has no target, it prints its cost per job."""
    _need_framac()
    out, lines = _quick("bench_exec_check.py", isolated_cache, tmp_path)
    assert "cost of the cross-check:" in out and "'code-from-spec 04_140': 'passed'" in out, out
    assert lines == []


@pytest.mark.slow
@pytest.mark.realtool
def test_bench_batch_quick(casp_mirror, isolated_cache, tmp_path):
    """A batch worker (moto's S3) vs a local run of the same jobs: same verdicts, one ratio."""
    _need_framac()
    pytest.importorskip("moto")
    out, lines = _quick("bench_batch.py", isolated_cache, tmp_path)
    _assert_ratios(out, lines, ("batch_worker_over_local",))


@pytest.mark.slow
@pytest.mark.realtool
def test_bench_scale_quick(casp_mirror, isolated_cache, tmp_path):
    """At scale, small: a batch plan's makespan from the reference runs' timings, a cached
    re-run (every job from the cache, the gold run's verdicts), and validate + report of a
    run directory made by a cached run: three ratio lines."""
    _need_framac()
    out, lines = _quick("bench_scale.py", isolated_cache, tmp_path)
    assert "shards: min" in out and "verikit validate" in out, out
    _assert_ratios(out, lines, ("makespan_over_ideal", "cached_10k_s", "rundir_100k_s"))


@pytest.mark.slow
@pytest.mark.container
@pytest.mark.realtool
def test_bench_container_quick(casp_mirror, isolated_cache, engine_image, tmp_path):
    """Host, warm worker and one container per job on the framac image."""
    _need_framac()
    from harness.sandbox.images import resolve

    engine_image(lambda: resolve("framac"))
    out, lines = _quick("bench_container.py", isolated_cache, tmp_path)
    assert "skipped:" not in out
    _assert_ratios(out, lines, ("warm_exec_ms",))


@pytest.mark.slow
@pytest.mark.container
@pytest.mark.realtool
def test_bench_dafny_quick(dafny_intent_fetched, isolated_cache, engine_image, tmp_path):
    """Batched vs one Dafny process per check (and the reference's approach) on the dafny
    image: the same per-method verdicts, one ratio line."""
    from harness.sandbox.images import resolve

    engine_image(lambda: resolve("dafny"))
    out, lines = _quick("bench_dafny.py", isolated_cache, tmp_path)
    assert "skipped:" not in out
    _assert_ratios(out, lines, ("dafny_batched_speedup",))


@pytest.mark.slow
@pytest.mark.container
@pytest.mark.realtool
def test_bench_paper_tools_quick(dafny_intent_fetched, ntp4vc_fetched, isolated_cache, engine_image, tmp_path):
    """The kit's full job against the paper's own command, one candidate per tool, in the
    tlaplus, ntp4vc-rocq and dafny images: the kit's verdicts are the reference runs', and
    three ratio lines."""
    from harness import runner
    from harness.benchmarks import ntp4vc
    from harness.sandbox.images import resolve

    engine_image(lambda: resolve("tlaplus"))
    engine_image(lambda: resolve("dafny"))
    engine_image(lambda: runner.job_image(ntp4vc.BENCHMARK, "rocq", ntp4vc_fetched, build=False))
    out, lines = _quick("bench_paper_tools.py", isolated_cache, tmp_path)
    assert "skipped:" not in out
    _assert_ratios(out, lines, ("kit_over_paper_tlc", "kit_over_paper_rocq", "kit_over_paper_dafny"))


@pytest.mark.parametrize("script", ["bench_container.py", "bench_dafny.py"])
def test_quick_without_engine_is_skipped(script, tmp_path):
    """No engine at DOCKER_HOST: the quick mode says why it skipped and exits 0; the
    summary marks the target skipped."""
    env = dict(os.environ, DOCKER_HOST=f"unix://{tmp_path}/no-engine.sock")
    out, lines = _quick(script, env, tmp_path)
    assert "skipped: no container engine" in out
    assert [x["status"] for x in lines] == ["skipped"]


def test_summary_one_line_per_target(tmp_path):
    """bench_summary.py prints every target once, in order, with its value, bound and
    status (``not measured`` when no script gave it); ``--strict`` exits 2 then."""
    summary = tmp_path / "s.jsonl"
    summary.write_text(json.dumps({"key": "kit_j1_over_bare", "label": "x", "value": 1.02, "op": "<=", "bound": 1.05,
                                   "unit": "", "status": "PASS", "quick": False, "script": "bench_kit_vs_bare", "detail": ""})
                       + "\n")
    proc = subprocess.run([sys.executable, str(SCRIPTS / "bench_summary.py"), str(summary)], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    rows = [line for line in proc.stdout.splitlines() if any(t.label in line for t in TARGETS.values())]
    assert [next(k for k, t in TARGETS.items() if t.label in r) for r in rows] == list(TARGETS)
    assert "1.020" in rows[0] and "PASS" in rows[0]
    assert all("not measured" in r for r in rows[1:])
    strict = subprocess.run([sys.executable, str(SCRIPTS / "bench_summary.py"), str(summary), "--strict"],
                            capture_output=True, text=True)
    assert strict.returncode == 2


def test_failed_step_exits_1(tmp_path):
    """A step that fails (BenchFailure) or any error makes a bench script exit 1, in
    quick mode too; a MISS alone exits 0, or 2 under --strict (full mode)."""
    code = ("import sys; sys.path.insert(0, {d!r}); import benchlib\n"
            "def body(b):\n"
            "    if {fail}: raise benchlib.BenchFailure('bare frama-c failed on 00_327 (exit 2)')\n"
            "    b.ratio('kit_j1_over_bare', 2.0)\n"
            "benchlib.main('t', 'doc', body)\n")
    for fail, args, status in ((True, ["--quick"], 1), (False, [], 0), (False, ["--strict"], 2),
                               (False, ["--quick", "--strict"], 0)):
        proc = subprocess.run([sys.executable, "-c", code.format(d=str(SCRIPTS), fail=fail), *args], capture_output=True,
                              text=True, env={k: v for k, v in os.environ.items() if k != "VERIKIT_BENCH_SUMMARY"})
        assert proc.returncode == status, (fail, args, proc.stdout, proc.stderr)
        if fail:
            assert "FAILED: bare frama-c failed on 00_327" in proc.stderr
        else:
            assert "RATIO kit_j1_over_bare = 2.000 (target <= 1.050) MISS" in proc.stdout
