"""The ``why3`` mode of NTP4VC (harness/benchmarks/ntp4vc/why3_al3.py): Why3's
Auto_level_3 re-run goal by goal through the runner, compared with the published per-goal
results.

- Job construction on the real dataset (data mirror): every pearl goal resolves to a Why3
  target, and the recorded re-run's 30 goals get the targets and source files it shipped.
- The comparison and the agreement table on records made from the recorded re-run
  (results/reproduced/ntp4vc/why3-al3-rerun.json: real Why3 1.8.0 outcomes): 26/30.
- End to end with the real Why3 of the rocq image (marks ``container``/``realtool``;
  skips without an engine or the image unless ``VERIKIT_REQUIRE_ENGINE=1``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.benchmarks import ntp4vc
from harness.benchmarks.ntp4vc import why3_al3
from harness.model import GOLD, Candidate
from harness.registry import verifier as get_verifier

RERUN_JSON = Path(__file__).resolve().parents[1] / "results" / "reproduced" / "ntp4vc" / "why3-al3-rerun.json"
BENCH = ntp4vc.BENCHMARK
DS = {"name": "ntp4vc", "revision": "dcfadfaa85f3c5ccc3657bab4b6e59e2119cf348"}
QUICK = ["pearl/binary_sqrt::binary_sqrt_BinarySqrt_sqrt_mainqtvc",
         # its goal's node id is above the shell's node count: needs the driver's helper asserts
         "pearl/leftist_heap::leftist_heap_LeftistHeap_delete_minqtvc"]


@pytest.fixture(scope="module")
def rerun() -> dict:
    return json.loads(RERUN_JSON.read_text())


@pytest.fixture(scope="module")
def tasks(ntp4vc_fetched):
    return BENCH.load_tasks(ntp4vc_fetched)


@pytest.fixture(scope="module")
def jobs(ntp4vc_fetched, tasks):
    by_id = {t.task_id: t for t in tasks}
    v = get_verifier(BENCH.verifier_for("why3"))
    opts = v.options(None, smoke=BENCH.smoke_tests("why3"), cpus=1)
    ctx = BENCH.context(ntp4vc_fetched, tasks, "why3", v, 0)
    return {c.task_id: BENCH.build_job(by_id[c.task_id], c, "why3", opts, DS, ctx)
            for c in BENCH.gold_candidates(tasks, "why3")}


def test_every_pinned_goal_becomes_a_job(tasks, jobs):
    assert len(jobs) == 300 and set(jobs) == {t.task_id for t in tasks if t.source == "pearl"}
    assert all(j.mode == "why3" and j.candidate["model"] == GOLD for j in jobs.values())
    assert all(j.limits == why3_al3.LIMITS and j.options["max_wall_s"] == why3_al3.MAX_WALL_S
               for j in jobs.values())
    assert len({j.task_sha256 for j in jobs.values()}) == 300  # the target is part of the task hash
    assert len({j.verification_key(_Fp(), why3_al3.LIMITS) for j in jobs.values()}) == 300


class _Fp:
    fingerprint = "f" * 64


def test_the_recorded_reruns_goals_get_the_same_targets_and_files(rerun, jobs):
    for g in rerun["goals"]:
        j = jobs[g["task_id"]]
        assert (j.options["theory"], j.options["goal"]) == (g["theory"], g["goal"])
        assert j.options["sources"] == g["files"] and sorted(j.files) == sorted(g["files"])
        assert j.options["mlw"] == g["mlw"].rsplit("/", 1)[1]


def test_the_mode_takes_no_candidates_and_no_frama_c_goals(ntp4vc_fetched, tasks, jobs):
    by_id = {t.task_id: t for t in tasks}
    v = get_verifier("why3")
    ctx = BENCH.context(ntp4vc_fetched, tasks, "why3", v, 0)
    pearl = next(iter(jobs))
    with pytest.raises(ValueError, match="takes no candidates"):
        BENCH.build_job(by_id[pearl], Candidate(pearl, "m", 0, "x", "predictions:p.jsonl:1"), "why3",
                        v.options(None), DS, ctx)
    frama = next(t for t in tasks if t.source == "frama_c")
    with pytest.raises(ValueError, match="is not a file of the dataset"):
        BENCH.build_job(frama, Candidate(frama.task_id, GOLD, 0, frama.goal, "gold"), "why3", v.options(None), DS, ctx)
    assert BENCH.canaries(tasks, "why3") == []


def _records(rerun: dict) -> list[dict]:
    """Records (the executor's shape, the fields the comparison reads) of the recorded re-run."""
    out = []
    for g in rerun["goals"]:
        out.append({"mode": "why3", "task_id": g["task_id"], "candidate": {"model": GOLD, "sample": 0},
                    "verdict": g["verdict"], "reason": g["reason"], "timings": {"wall_s": g["job_wall_s"]},
                    "verifier": {"options": {"theory": g["theory"], "goal": g["goal"], "max_wall_s": 45.0,
                                             "strategy": "Auto_level_3", "running_provers_max": 1,
                                             "strategy_code": rerun["why3"]["auto_level_3"]},
                                 "extra": {"driver": {"status": g["strategy_status"],
                                                      "strategy_wall_s": g["strategy_wall_s"]},
                                           "proved_by": g["proved_by"], "leaves": g["leaves"]}}})
    return out


@pytest.mark.recorded
def test_comparison_and_agreement_of_the_recorded_rerun(rerun, tasks):
    records = _records(rerun)
    by_id = {t.task_id: t for t in tasks}
    comp = BENCH.compare(records, by_id, None)
    assert len(comp) == 30 and sum(c["agree"] for c in comp) == 26
    only = [c for c in comp if not c["agree"]]
    assert {c["task_id"] for c in only if c["published"]["auto_level_3"]} == {
        "pearl/bitcount::bitcount_Hamming_hammingDqtvc", "pearl/hillel_challenge::hillel_challenge_Unique_uniqueqtvc",
        "pearl/string_search::string_search_BadShiftTable_make_tableqtvc"}
    assert all("not proved within the cut (45.0 s" in c["differences"][0]["explanation"]
               for c in only if c["published"]["auto_level_3"])
    sec = BENCH.report_sections(records, tasks, ["why3"])["why3_auto_level_3"]
    assert sec["agreement"] == rerun["agreement"] == {"both_true": 17, "both_false": 9, "published_only": 3,
                                                      "rerun_only": 1, "agree": 26, "compared": 30}
    assert sec["rerun_unproved_breakdown"] == {"strategy_finished": 0, "cut_at_max_wall": 12, "killed_at_job_limit": 0}
    assert sec["not_runnable"]["tasks"] == 300 and sec["strategy"]["code"].startswith("start:")
    assert "pass_at_k" not in BENCH.report_sections(records, tasks, ["why3"])


def test_comparison_says_when_nothing_is_published(rerun, tasks):
    records = _records(rerun)[:1]
    t = next(t for t in tasks if t.task_id == records[0]["task_id"])
    from dataclasses import replace

    comp = BENCH.compare(records, {t.task_id: replace(t, published_al3=None)}, None)
    assert comp[0]["agree"] is None and "publishes no Auto_level_3 result" in comp[0]["differences"][0]["explanation"]
    records[0].update(verdict="infra_error", reason="why3 did not start: x")
    comp = BENCH.compare(records, {t.task_id: t}, None)
    assert comp[0]["agree"] is None and "not compared" in comp[0]["differences"][0]["explanation"]


@pytest.mark.container
@pytest.mark.realtool
@pytest.mark.slow
def test_run_why3_mode_through_the_runner(ntp4vc_fetched, engine_image, tmp_path):
    from rich.console import Console

    from harness.results import validate_run_dir
    from harness.runner import run
    from harness.runspec import RunSettings, RunSpec
    from harness.sandbox import images

    engine_image(lambda: images.resolve("rocq"))
    spec = RunSpec(benchmark="ntp4vc", modes=["why3"], sandbox="container", parallel=1, task_ids=QUICK)
    report, manifest, code = run(spec, tmp_path / "run", settings=RunSettings(use_cache=False, progress=False,
                                                                              command=["test"]),
                                 console=Console(stderr=True, quiet=True))
    records = [json.loads(line) for line in (tmp_path / "run" / "records.jsonl").read_text().splitlines()]
    assert code == 0 and {r["task_id"]: r["verdict"] for r in records} == {t: "verified" for t in QUICK}, \
        [r["reason"] for r in records]
    by_id = {r["task_id"]: r for r in records}
    opts0 = records[0]["verifier"]["options"]
    assert len(opts0["driver_sha256"]) == 64 and len(opts0["why3_conf_sha256"]) == 64
    assert opts0["strategy_code"].startswith("start:") and records[0]["limits"]["wall_s"] == 285.0
    assert by_id[QUICK[1]]["verifier"]["extra"]["driver"]["helper_asserts"] >= 1
    assert all(c["agree"] for c in report["comparison"]) and len(report["comparison"]) == 2
    sec = report["sections"]["why3_auto_level_3"]
    assert sec["agreement"]["both_true"] == 2 and sec["agreement"]["compared"] == 2
    assert manifest["modes"] == ["why3"] and manifest["adaptation"] is None
    assert validate_run_dir(tmp_path / "run") == []


def test_committed_runner_run_is_consistent(rerun, tasks):
    """results/reproduced/ntp4vc/why3/ (the sample re-made through the runner): valid, its
    comparison and agreement table recomputed from its records, the recorded re-run's
    goals, and the same verdicts as the first run but for the one load-sensitive goal."""
    from harness.results import validate_run_dir

    ref = RERUN_JSON.parent / "why3"
    assert validate_run_dir(ref) == []
    records = [json.loads(line) for line in (ref / "records.jsonl").read_text().splitlines()]
    report = json.loads((ref / "report.json").read_text())
    assert sorted(r["task_id"] for r in records) == sorted(rerun["subset"]["task_ids"])
    by_id = {t.task_id: t for t in tasks}
    assert BENCH.compare(records, by_id, None) == report["comparison"]
    selected = [t for t in tasks if t.task_id in {r["task_id"] for r in records}]  # the runner passes --task's
    sec = BENCH.report_sections(records, selected, ["why3"])["why3_auto_level_3"]
    assert sec == report["sections"]["why3_auto_level_3"]
    assert sec["agreement"]["agree"] == 25 and sec["agreement"]["compared"] == 30
    first = {g["task_id"]: g["rerun"] for g in rerun["goals"]}
    changed = {r["task_id"] for r in records if (r["verdict"] == "verified") != first[r["task_id"]]}
    assert changed == {"pearl/bitwalker::bitwalker_Bitwalker_pokeqtvc"}
