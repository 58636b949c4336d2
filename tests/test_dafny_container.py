"""Dafny intent formalization with the real Dafny 2.3 in the ``dafny`` image (Podman).

Live, with the real Dafny in the container: ONE executor run (``live_run``, both cores
busy) of the 18 canaries on task 17 (the live end-to-end test of the Dafny rule family:
each comes back with its expected verdict), the parity of batched and
one-process-per-check verdicts on one task, the fallback when a batch does not resolve,
and task 2 with another seed (only the mutant-dependent fields change). Skips without an
engine unless ``VERIKIT_REQUIRE_ENGINE=1`` (``nox -s tests``).

Recorded (``tests/recording.py``, family ``dafny-container``): the runs that repeat the
same kind of work are judged on the real Dafny's recorded outputs, through the kit's own
pipeline, executor, Dafny parser and judge, with no engine: the module's run through
``harness.runner.run`` (tasks 2, 17, 234, 79, 600 and the canaries: paper findings, the
reference run's verdicts), the predictions run (the canaries read back from the family's
result cache, as the module run left them), the seeded runs (same seed: identical records
without timing fields; another seed: only mutant-dependent fields change; the two seed-0
runs each ran Dafny when recorded) and the batched/separate parity on the 8 tasks (every
check method). The recording, ``tests/recorded/runs/dafny-container/``, holds the output
of every command the kit started for them in the real ``dafny`` image (the toolchain probe
and each Dafny run); refresh it with ``python scripts/record.py dafny-container`` (the
engine and the image needed; a fresh result cache, so every job runs);
``tests/test_freshness.py`` re-runs a daily sample of its jobs live.

``python tests/test_dafny_container.py --record`` re-records tests/recorded/dafny/dafny2/
(real outputs of these runs, parsed again by tests/test_dafny_verifier.py).
"""

from __future__ import annotations

import gzip
import json
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
from recording import family_sandbox, pipeline_sandbox

from harness import datasets, toolchains
from harness.benchmarks import dafny_intent as di
from harness.executor import Executor
from harness.results import RecordLog
from harness.sandbox import Limits
from harness.verifiers.dafny import Dafny


RECORDED = Path(__file__).parent / "recorded" / "dafny" / "dafny2"
#: Tasks of the parity test: array and sequence inputs, strings, reals, booleans, several
#: outputs, a wrong expected output (234), a recursive function (105).
PARITY_TASKS = ["2", "17", "105", "139", "234", "262", "396", "599"]
#: Task of the live parity test: 21 check methods (correctness, smoke, mutants) with a wrong
#: expected output, so that a failed correctness check's failure kind is compared too; the
#: 8 tasks are judged from the recording.
LIVE_PARITY_TASKS = ["234"]
#: Two of the 40 test programs the dataset entry pinned last, with the reference run's
#: verdicts (results/reproduced/dafny-intent/reproduce/).
NEW_PROGRAMS = ["79", "600"]
#: Fields that differ run to run: timings, and the stored tool output (its hash: Dafny prints its own timings)
TIMING = ("timings", "finished_at", "tool_output")
#: Fields that depend on the mutants (a job of another seed may differ in these alone).
MUTANT_DEPENDENT = {"key", "verification_key", "goal_results", "goals", "reason", "verifier"}
#: Options that follow the mutants: the check list, the mutation record and the line ranges.
MUTANT_OPTIONS = {"checks", "mutation", "mutation_seed", "units"}


@pytest.fixture(scope="module")
def fetched(dafny_intent_fetched):
    return dafny_intent_fetched


@pytest.fixture(scope="module")
def tasks(fetched) -> dict:
    return {t.task_id: t for t in di.load_tasks(fetched)}


@pytest.fixture(scope="module")
def make_jobs(fetched, tasks):
    """``make(probed, task_ids, strategy, seed=0)``: the jobs of the tasks' bundled (GPT-4)
    or gold specifications, with Dafny's options for ``probed`` and ``strategy``."""
    ds = {"name": "dafny-intent", "revision": fetched.dataset.source.revision}
    cands = {c.task_id: c for c in di.bundled_candidates(fetched, "spec") + di.gold_candidates(list(tasks.values()), "spec")}

    def make(probed, task_ids, strategy, seed=0):
        opts = Dafny().options(probed, strategy=strategy)
        return [di.build_job(tasks[t], cands[t], "spec", opts, ds, di.Context(seed)) for t in task_ids]

    return make



def _container(engine_image):
    """The real ``dafny`` image's sandbox with 2 slots (the runs' ``parallel=2``), as
    ``verikit run --sandbox container -j 2`` opens it (a skip without the engine or the
    image, a failure under ``VERIKIT_REQUIRE_ENGINE=1``)."""
    from harness.registry import sandbox as get_sandbox

    return engine_image(lambda: get_sandbox("container", toolchain="dafny", slots=2))


def _run(tmp_path, tasks, *, seed=0, out="run", predictions=None, cache_dir=None):
    """A run of ``tasks`` (and the canaries); no result cache unless ``cache_dir``."""
    from rich.console import Console

    from harness.runner import run
    from harness.runspec import RunSettings, RunSpec

    spec = RunSpec(benchmark="dafny-intent", modes=["spec"], sandbox="container", parallel=2,
                   limits=Limits(wall_s=600), task_ids=tasks, predictions=str(predictions) if predictions else None,
                   seed=seed)
    settings = RunSettings(use_cache=cache_dir is not None, cache_dir=cache_dir, progress=False, command=["test"])
    # --seed reaches the mutants
    report, manifest, code = run(spec, tmp_path / out, settings=settings, console=Console(stderr=True, quiet=True))
    records = [json.loads(line) for line in (tmp_path / out / "records.jsonl").read_text().splitlines()]
    return report, manifest, code, records


def _executor_run(sandbox, probed, verifier, jobs, log: Path, parallel=2) -> list[dict]:
    """Records of ``jobs`` (in job order) run by the kit's executor in ``sandbox`` (no
    result cache, 900 s each) with Dafny intent's judge."""
    ex = Executor(verifier, sandbox, probed, limits=Limits(wall_s=900), parallel=parallel)
    recs = {r["key"]: r for r in ex.run(jobs, RecordLog(log), di.judge)}
    return [recs[j.key(probed, ex.limits)] for j in jobs]


def _strip(rec):
    rec = {k: v for k, v in rec.items() if k not in TIMING}
    rec["goal_results"] = [{k: v for k, v in g.items() if k != "time_s"} for g in rec["goal_results"]]
    return rec


def _only_the_mutants_differ(ra, rc):
    """Records of one job with two seeds: only the mutant-dependent fields differ, and the
    correctness checks (which do not depend on the seed) give the same results."""
    ra, rc = _strip(ra), _strip(rc)
    assert {k for k in ra if ra[k] != rc[k]} <= MUTANT_DEPENDENT
    oa, oc = ra["verifier"]["options"], rc["verifier"]["options"]
    # the check list, the mutation record and the line ranges (which follow the mutants)
    assert {k for k in oa if oa[k] != oc[k]} <= MUTANT_OPTIONS
    # correctness checks do not depend on the seed
    sa, sc = di.score(ra), di.score(rc)
    if sa is None:  # never scored: invalid before running (the canary that does not parse) or
        # rejected by an integrity check (the cheat canaries), with either seed
        assert sc is None and ra["verdict"] == rc["verdict"] and ra["verdict"] in ("invalid", "rejected")
        return
    assert [p["correct"] for p in sa["per_test"]] == [p["correct"] for p in sc["per_test"]]


def _parity(recs: dict) -> dict:
    """``{strategy: {(task, method): (status, failure)}}`` of the records of each strategy;
    asserts that none is infra_error and that the separate runs verified every check alone."""
    per = {}
    for strategy, rs in recs.items():
        assert not [r["reason"] for r in rs if r["verdict"] == "infra_error"]
        per[strategy] = {(r["task_id"], g["name"]): (g["status"], g["failure"]) for r in rs for g in r["goal_results"]}
        if strategy == "separate":
            assert all(run["file"].startswith("checks/") for r in rs for run in r["verifier"]["extra"]["runs"])
    return per


def _fallback_job(make_jobs, probed):
    """Task 17's job with one ill-typed check method (``VkT1Mutant1``), in the batch and in
    its own file: the batch does not resolve."""
    job = make_jobs(probed, ["17"], "batched")[0]
    path = "checks/VkT1Mutant1.dfy"
    assign = next(line for line in job.files[path].splitlines() if line.strip().startswith("perimeter :="))
    job.files[path] = job.files[path].replace(assign, "  perimeter := true;")
    job.files["batch.dfy"] = job.files["batch.dfy"].replace(assign, "  perimeter := true;", 1)
    return job


# ------------------------------------------------------------------ recorded (family dafny-container)
@pytest.fixture(scope="module")
def family(engine_image, tmp_path_factory):
    """``(sandbox, result cache)`` of the module's recorded runs: a replay of the family's
    recording (or the real ``dafny`` image under the recorder, the engine needed only
    then) and a fresh result cache of the family's own (a cached job would start no
    command: nothing recorded; and replay reads no live entry). Its runs, in the order
    the tests need them: the module run, the predictions run (the canaries read back from
    this cache), the seeded runs, the parity runs."""
    with family_sandbox("dafny-container", "dafny", live=lambda: _container(engine_image)) as sb:
        yield sb, tmp_path_factory.mktemp("dafny-container-cache") / "cache"


@pytest.fixture(scope="module")
def small_run(family, tmp_path_factory):
    # 79 (GPT-4) and 600 (the authors'): two of the 40 programs pinned last
    sb, cache = family
    with pipeline_sandbox(sb):
        return _run(tmp_path_factory.mktemp("dafny-run"), ["2", "17", "234", *NEW_PROGRAMS], cache_dir=cache)


@pytest.mark.recorded
def test_canaries_and_paper_findings(small_run):
    report, manifest, code, records = small_run
    got = {x["model"]: x["verdict"] for x in report["canaries"]["results"]}
    assert got == {f"canary:{n}": exp[0] for n, (_, exp) in di.CANARIES.items()}
    assert report["canaries"]["ok"] and code == 0
    f = report["sections"]["findings"]
    probes = {p["value"]: p["accepted"] for p in f["2"]["probes"]}
    assert probes == {"[4]": True, "[5]": True, "[6]": False}  # paper, Section I-C
    assert f["2"]["correctness"] == 1 and f["2"]["completeness"] < 1
    assert f["234"]["failing_tests"] == [{"test": 3, "status": "failed", "expected_output": "25"}]
    assert manifest["toolchains"][0]["tools"]["dafny"]["version"].startswith("2.3")
    by_model = {r["candidate"]["model"]: r for r in records if r["task_id"] == "17"}
    true_spec = di.score(by_model["canary:ensures-true"])
    assert true_spec["correctness"] == 1 and true_spec["completeness"] == 0  # ensures true: complete 0
    assert by_model["canary:requires-false"]["verifier"]["extra"]["runs"]  # Dafny still ran (its reading kept)


@pytest.mark.recorded
def test_new_programs_match_the_reference(small_run):
    """Two of the programs pinned last, judged on the real Dafny's outputs: the same
    verdicts, goal counts and per-method results as the committed reference run."""
    from harness.results import load_records

    ref_dir = Path(__file__).resolve().parents[1] / "results" / "reproduced" / "dafny-intent" / "reproduce"
    ref = {(r["task_id"], r["candidate"]["model"]): r for r in load_records(ref_dir / "records.jsonl")}
    got = {(r["task_id"], r["candidate"]["model"]): r for r in small_run[3] if r["task_id"] in NEW_PROGRAMS}
    assert set(got) == {("79", "gpt-4"), ("600", "gold")}
    for key, rec in got.items():
        want = ref[key]
        assert (rec["verdict"], rec["goals"]) == (want["verdict"], want["goals"]), key
        assert [g["status"] for g in rec["goal_results"]] == [g["status"] for g in want["goal_results"]], key
        # the same checks: task text, candidate, mutants (seed 0) and their attribution
        assert (rec["task_sha256"], rec["candidate"]["sha256"]) == (want["task_sha256"], want["candidate"]["sha256"])
        assert rec["verifier"]["options"]["checks"] == want["verifier"]["options"]["checks"], key


@pytest.mark.recorded
def test_predictions_file(family, small_run, tmp_path):
    """A model's specifications from a predictions file: scored, cheats rejected, bad
    text invalid with its line. The canaries come from the family's result cache (the
    module run's)."""
    lines = [
        {"task_id": "17", "model": "m", "sample": 0, "output": "ensures perimeter == 4 * side"},
        {"task_id": "17", "model": "m", "sample": 1, "output": "requires false\nensures true"},
        {"task_id": "2", "model": "m", "sample": 0, "output": "ensures |result| >= 0"},
        {"task_id": "2", "model": "m", "sample": 1, "output": "ensures forall x :: x in result <==> (InArray(a, x) && "
                                                                "InArray(b, x))\nensures forall i, j :: 0 <= i < j < "
                                                                "|result| ==> result[i] != result[j]"},
        {"task_id": "2", "model": "m", "sample": 2, "output": "ensures |result| >="},
    ]
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps(x) + "\n" for x in lines))
    sb, cache = family
    with pipeline_sandbox(sb):
        report, manifest, code, records = _run(tmp_path, ["2", "17"], predictions=preds, cache_dir=cache)
    # the canaries read back (and m's sample 0 on 17, the canary "spec"'s text); the model's others ran
    assert manifest["counts"]["cached"] >= len(di.CANARIES) and manifest["counts"]["ran"] >= 3
    got = {(r["task_id"], r["candidate"]["sample"]): r for r in records if r["candidate"]["model"] == "m"}
    assert got[("17", 0)]["verdict"] == "verified" and di.score(got[("17", 0)])["completeness"] == 1
    assert got[("17", 1)]["verdict"] == "rejected"
    weak = di.score(got[("2", 0)])
    assert got[("2", 0)]["verdict"] == "verified" and weak["completeness"] < 0.5
    strong = di.score(got[("2", 1)])  # <==>: the precise specification the paper proposes
    assert strong["correctness"] == 1 and strong["completeness"] == 1
    assert {p["value"]: p["accepted"] for p in strong["probes"]} == {"[4]": False, "[5]": False, "[6]": False}
    assert got[("2", 2)]["verdict"] == "invalid" and "preds.jsonl:5" in got[("2", 2)]["reason"]  # file:line
    assert report["sections"]["metrics"]["m"]["candidates"] == 5


@pytest.mark.recorded
def test_seed_determinism(family, small_run, tmp_path):
    """Same seed: identical records once timing fields are removed; another seed: only the
    mutant-dependent fields differ (files -> keys, check list, goal results, scores).
    The first seed-0 run is the module's run (tasks 2, 17, 234, 79, 600 and the canaries
    on 17); the second runs task 2 (and the canaries) alone, again with seed 0, with no
    result cache (when recorded, Dafny ran both; replayed, the second run's commands must
    be the first one's: the kit makes the same files from the same seed)."""
    from harness.results import record_identity

    def in_order(records):  # -j 2: records.jsonl is in the order the jobs finished
        return sorted(records, key=lambda r: [str(x) for x in record_identity(r)])

    sb, _cache = family
    with pipeline_sandbox(sb):
        b = in_order(_run(tmp_path, ["2"], seed=0, out="b")[3])
        run_c = _run(tmp_path, ["2"], seed=8, out="c")
    assert run_c[1]["seeds"] == {"bootstrap": 8, "benchmark": 8}  # recorded in run.json
    c = in_order(run_c[3])
    same = {tuple(map(str, record_identity(r))) for r in b}
    a = in_order([r for r in small_run[3] if tuple(map(str, record_identity(r))) in same])
    assert len(a) == len(b) == len(c) and any(r["task_id"] == "2" for r in b)
    assert [_strip(r) for r in a] == [_strip(r) for r in b]
    for ra, rc in zip(a, c):
        _only_the_mutants_differ(ra, rc)
    assert any(_strip(x)["verifier"]["options"]["checks"] != _strip(y)["verifier"]["options"]["checks"]
               for x, y in zip(a, c))


@pytest.mark.recorded
def test_batched_and_separate_verdicts_are_identical(family, make_jobs, tmp_path):
    """Parity on real data: every check method of the 8 tasks gets the same status (and
    failure kind) verified in one batch as when verified alone in its own Dafny process
    (both strategies in one executor run)."""
    sb, _cache = family
    probed = toolchains.probe("dafny", sb)
    verifier = Dafny()
    jobs = {s: make_jobs(probed, PARITY_TASKS, s) for s in ("separate", "batched")}
    recs = _executor_run(sb, probed, verifier, jobs["separate"] + jobs["batched"], tmp_path / "parity.jsonl")
    n = len(PARITY_TASKS)
    per = _parity({"separate": recs[:n], "batched": recs[n:]})
    assert per["batched"].keys() == per["separate"].keys() and len(per["batched"]) > 100
    diff = {k: (per["batched"][k], per["separate"][k]) for k in per["batched"] if per["batched"][k] != per["separate"][k]}
    assert diff == {}


# ------------------------------------------------------------------ live (the real Dafny in the container)
@pytest.fixture(scope="module")
def dafny_env(fetched, engine_image):
    """(sandbox, probed toolchain, verifier) for the dafny image; closes the sandbox."""
    sandbox = _container(engine_image)
    probed = toolchains.probe("dafny", sandbox)
    yield sandbox, probed, Dafny()
    sandbox.close()


@pytest.fixture(scope="module")
def live_run(dafny_env, make_jobs, fetched, tasks, tmp_path_factory):
    """ONE executor run (2 at a time, no result cache) in the real ``dafny`` image of every
    live case: the live parity tasks separate (the longest jobs, first) and batched, the
    fallback job, task 2 with seeds 0 and 8, and the canaries. Returns ``{case: records}``
    (``canaries``: ``[(record, expected verdicts)]``)."""
    sandbox, probed, verifier = dafny_env
    ds = {"name": "dafny-intent", "revision": fetched.dataset.source.revision}
    canaries = di.canaries(list(tasks.values()), "spec")
    cases = {
        "separate": make_jobs(probed, LIVE_PARITY_TASKS, "separate"),
        "batched": make_jobs(probed, LIVE_PARITY_TASKS, "batched"),
        "fallback": [_fallback_job(make_jobs, probed)],
        "seeds": [make_jobs(probed, ["2"], "batched", seed)[0] for seed in (0, 8)],
        "canaries": [di.build_job(tasks[c.task_id], c, "spec", verifier.options(probed), ds, di.Context(0))
                     for c, _ in canaries],
    }
    jobs = [j for js in cases.values() for j in js]
    recs = iter(_executor_run(sandbox, probed, verifier, jobs, tmp_path_factory.mktemp("dafny-live") / "r.jsonl"))
    out = {case: [next(recs) for _ in js] for case, js in cases.items()}
    out["canaries"] = [(r, exp) for r, (_, exp) in zip(out["canaries"], canaries)]
    return out


@pytest.mark.container
@pytest.mark.realtool
@pytest.mark.slow
def test_canaries_with_the_real_dafny(live_run):
    """The live end-to-end test of the Dafny rule family: each of the 18 canaries on task 17
    (known answers, a cheat of each class), verified by the real Dafny in the container and
    judged by the kit, comes back with its expected verdict (through the pipeline, with
    the run's report and exit code, they are judged from the recording:
    test_canaries_and_paper_findings)."""
    got = {r["candidate"]["model"]: r["verdict"] for r, _ in live_run["canaries"]}
    assert got == {f"canary:{n}": exp[0] for n, (_, exp) in di.CANARIES.items()}
    assert all(r["verdict"] in exp for r, exp in live_run["canaries"])


@pytest.mark.container
@pytest.mark.realtool
@pytest.mark.slow
def test_batched_and_separate_agree_live(live_run):
    """Parity with today's Dafny, on the live parity tasks (the 8 tasks are judged from the
    recording: test_batched_and_separate_verdicts_are_identical): every check method gets
    the same status and failure kind in the batch as alone in its own Dafny process."""
    per = _parity({"separate": live_run["separate"], "batched": live_run["batched"]})
    assert per["batched"].keys() == per["separate"].keys()
    assert {task for task, _ in per["batched"]} == set(LIVE_PARITY_TASKS)
    diff = {k: (per["batched"][k], per["separate"][k]) for k in per["batched"] if per["batched"][k] != per["separate"][k]}
    assert diff == {}


@pytest.mark.container
@pytest.mark.realtool
@pytest.mark.slow
def test_fallback_when_the_batch_does_not_resolve(live_run):
    """One ill-typed check method makes the batch fail to resolve: every check is then
    verified alone, the bad one is invalid and the others keep their verdicts."""
    (rec,) = live_run["fallback"]
    bad = "VkT1Mutant1"
    extra = rec["verifier"]["extra"]
    assert extra["fallback"] and "resolution/type error" in extra["stopped"]["batch.dfy"]
    status = {g["name"]: g["status"] for g in rec["goal_results"]}
    assert status[bad] == "invalid"
    assert status["VkT1Correct"] == "verified" and status["VkT1Smoke"] == "failed"
    assert rec["verdict"] == "verified"  # the correctness checks are unaffected


@pytest.mark.container
@pytest.mark.realtool
@pytest.mark.slow
def test_another_seed_changes_only_the_mutants_live(live_run):
    """Task 2 with seeds 0 and 8 verified by today's Dafny: only the mutant-dependent fields
    differ, the correctness checks give the same results, the check lists differ (the
    seeded runs through the pipeline are judged from the recording)."""
    ra, rc = live_run["seeds"]
    _only_the_mutants_differ(ra, rc)
    assert ra["verifier"]["options"]["checks"] != rc["verifier"]["options"]["checks"]
    assert ra["verifier"]["options"]["mutation_seed"] == 0 and rc["verifier"]["options"]["mutation_seed"] == 8


# ------------------------------------------------------------------ recording
def record(out: Path = RECORDED) -> None:
    """Run four real Dafny 2.3 jobs in the dafny image and store their outputs (collected
    files, stdout, options) with provenance: task 2's batch, task 17 with a candidate that
    does not resolve (fallback), task 2 with /rlimit:100000 (resource limit) and a method
    that exceeds /timeLimit:2."""
    from harness.registry import sandbox as get_sandbox

    fetched = datasets.fetch("dafny-intent", offline=True)
    sandbox = get_sandbox("container", toolchain="dafny", slots=1)
    try:
        probed = toolchains.probe("dafny", sandbox)
        v = Dafny()
        tasks = {t.task_id: t for t in di.load_tasks(fetched)}
        ds = {"name": "dafny-intent", "revision": fetched.dataset.source.revision}
        from harness.benchmarks import Candidate

        cases = {
            "task2-batched": (tasks["2"], di.bundled_spec(tasks["2"]).text, {}),
            "task17-fallback": (tasks["17"], "ensures perimeter == 4 * sidee", {}),
            "task2-rlimit": (tasks["2"], di.bundled_spec(tasks["2"]).text, {"rlimit": 100000}),
        }
        for name, (task, text, over) in cases.items():
            job = di.build_job(task, Candidate(task.task_id, "rec", 0, text, "recorded"), "spec",
                               v.options(probed, **over), ds, di.Context(0))
            _record_one(out / name, v, sandbox, probed, job.options, job.files)
        ack = ("function Ack(m: nat, n: nat): nat\n{\n  if m == 0 then n + 1 else if n == 0 then Ack(m - 1, 1)\n"
               "  else Ack(m - 1, Ack(m, n - 1))\n}\n\nmethod VkT1Correct()\n{\n  assert Ack(4, 2) == 1;\n}\n")
        opts = v.options(probed, time_limit_s=2, units={"batch.dfy": [["VkT1Correct", 7, 10]]}, batch="batch.dfy",
                         separate=[])
        _record_one(out / "timeout", v, sandbox, probed, opts, {"batch.dfy": ack})
    finally:
        sandbox.close()


def _record_one(where: Path, v, sandbox, probed, options, files) -> None:
    argv, env, collect = v.command(options)
    proc = sandbox.run(argv, files=files, env=env, collect=collect, limits=Limits(wall_s=600))
    where.mkdir(parents=True, exist_ok=True)
    (where / "files").mkdir(exist_ok=True)
    for k, data in proc.files.items():  # gzip -n: no timestamp, so re-recording is stable
        (where / "files" / (k.replace("/", "__") + ".gz")).write_bytes(gzip.compress(data, 9, mtime=0))
    (where / "stdout.txt").write_text(proc.stdout)
    (where / "options.json").write_text(json.dumps(options, indent=1, sort_keys=True) + "\n")
    (where / "inputs").mkdir(exist_ok=True)
    for k, text in files.items():
        (where / "inputs" / k.replace("/", "__")).write_text(text)
    (where / "meta.json").write_text(json.dumps({
        "recorded_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "image": sandbox.image, "image_id": sandbox.image_digest, "dafny": probed.versions.get("dafny"),
        "z3": probed.versions.get("z3"), "exit_code": proc.returncode, "argv": argv,
        "recorded_by": "python tests/test_dafny_container.py --record"}, indent=1) + "\n")


if __name__ == "__main__":
    if "--record" in sys.argv:
        record()
