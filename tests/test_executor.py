"""Tests of harness/executor.py with the real Frama-C through HostSandbox on quick CASP
gold pairs (04_140, 06_114): job keys, one tool run per distinct verification, resume
from records.jsonl, the content-addressed cache, infra-only retries, prechecks. Every test
makes its own verification runs; the tests that count no task run (retries, a judge that
raises, edited cache entries) read the task-soundness runs from the session's
(``shared_task_runs``), the others make their own."""

from __future__ import annotations

import re
import shutil

import pytest

from harness.benchmarks import Candidate, casp
from harness.executor import Executor
from harness.results import RecordLog, ResultCache, load_records, validate
from harness.sandbox import Limits
from harness.verifiers.framac import FramaC

pytestmark = pytest.mark.realtool

DS = {"name": "casp-sample10", "revision": "2dd260bfecc15e4a4614bdea2e3001021bf2d646"}
LIMITS = Limits(wall_s=300)


def gold_job(task, fc, model="gold", sample=0, origin="gold"):
    c = Candidate(task_id=task.task_id, model=model, sample=sample, output=task.gold, origin=origin)
    return casp.build_job(task, c, "gold", fc.options(smoke=False), DS)


def executor(fc, *, cache=None, verifier=None, sandbox=None, limits=LIMITS, parallel=1, retries=2):
    return Executor(verifier or fc.framac, sandbox or fc.sandbox, fc.probed, shared_files=fc.shared,
                    limits=limits, parallel=parallel, retries=retries, cache=cache)


class CountingSandbox:
    """The real HostSandbox, counting the commands it starts."""

    def __init__(self, inner):
        self.inner = inner
        self.name = inner.name
        self.isolation = inner.isolation
        self.calls: list[list[str]] = []
        self.envs: list[dict] = []
        self.files: list[dict] = []

    def run(self, argv, **kw):
        self.calls.append(list(argv))
        self.envs.append(dict(kw.get("env") or {}))
        self.files.append(dict(kw.get("files") or {}))
        return self.inner.run(argv, **kw)

    def cancel(self):
        self.inner.cancel()


class MissingFramaC(FramaC):
    """The real Frama-C module whose command names a binary that does not exist: the
    sandbox cannot start it, and the real ``FramaC.parse`` maps that to ``infra_error``."""

    def command(self, options):
        argv, env, collect = super().command(options)
        return ["/nonexistent/verikit-test/frama-c", *argv[1:]], env, collect


def test_job_key_and_verification_key(casp_tasks, framac_host):
    t = casp_tasks["04_140"]
    a = gold_job(t, framac_host, model="a")
    b = gold_job(t, framac_host, model="b")
    a1 = gold_job(t, framac_host, model="a", sample=1)
    ao = gold_job(t, framac_host, model="a", origin="other")
    tc = framac_host.probed
    assert a.files == b.files
    assert a.key(tc, LIMITS) != b.key(tc, LIMITS)
    assert len({j.key(tc, LIMITS) for j in (a, b, a1, ao)}) == 4
    assert len({j.verification_key(tc, LIMITS) for j in (a, b, a1, ao)}) == 1
    assert a.key(tc, LIMITS) == gold_job(t, framac_host, model="a").key(tc, LIMITS)  # deterministic
    # the verification depends on limits, options and content
    assert a.verification_key(tc, Limits(wall_s=10)) != a.verification_key(tc, LIMITS)
    # equal limits key alike, however the seconds were written (the CLI gives a float)
    assert a.verification_key(tc, Limits(wall_s=300.0)) == a.verification_key(tc, LIMITS)
    other_opts = casp.build_job(t, Candidate(t.task_id, "a", 0, t.gold, "gold"), "gold",
                                framac_host.options(smoke=False, wp_timeout_s=5), DS)
    assert other_opts.verification_key(tc, LIMITS) != a.verification_key(tc, LIMITS)
    other_text = casp.build_job(t, Candidate(t.task_id, "a", 0, t.gold + "\n", "gold"), "gold",
                                framac_host.options(smoke=False), DS)
    assert other_text.verification_key(tc, LIMITS) != a.verification_key(tc, LIMITS)
    for k in (a.key(tc, LIMITS), a.verification_key(tc, LIMITS)):
        assert len(k) == 64 and int(k, 16) >= 0


@pytest.fixture(scope="module")
def first_run(casp_tasks, framac_host, tmp_path_factory):
    """Two candidates with the same text (models a, b) on 04_140, run with -j 2 into a
    fresh records.jsonl and a fresh result cache."""
    base = tmp_path_factory.mktemp("executor")
    jobs = [gold_job(casp_tasks["04_140"], framac_host, model="a"),
            gold_job(casp_tasks["04_140"], framac_host, model="b")]
    sandbox = CountingSandbox(framac_host.sandbox)
    ex = executor(framac_host, cache=ResultCache(base / "cache"), sandbox=sandbox, parallel=2)
    log = RecordLog(base / "run1" / "records.jsonl")
    seen = []
    records = ex.run(jobs, log, casp.judge, progress=seen.append)
    log.close()
    return {"base": base, "jobs": jobs, "stats": ex.stats.to_json(), "records": records, "seen": seen,
            "calls": sandbox.calls, "log": base / "run1" / "records.jsonl"}


def test_same_text_runs_the_tool_once(first_run, framac_host):
    st, recs, jobs = first_run["stats"], first_run["records"], first_run["jobs"]
    tc = framac_host.probed
    assert st["jobs"] == 2
    assert st["verifier_runs"] == 1 and st["ran"] == 1
    assert st["task_runs"] == 1  # the task's soundness run (Job.task_run), once
    assert len(first_run["calls"]) == 2
    assert st["cached"] == st["resumed"] == st["infra_error"] == 0
    assert [r["key"] for r in recs] == [j.key(tc, LIMITS) for j in jobs]
    a, b = recs
    assert a["key"] != b["key"]
    assert a["verification_key"] == b["verification_key"] == jobs[0].verification_key(tc, LIMITS)
    assert (a["candidate"]["model"], b["candidate"]["model"]) == ("a", "b")
    assert a["task_id"] == b["task_id"] == "04_140"
    for r in recs:
        validate("record", r)
        assert r["verdict"] == "verified", r["reason"]
        assert r["attempts"] == 1
        assert r["goals"]["proved"] == r["goals"]["total"] > 0
        assert r["verifier"]["argv"][:2] == ["sh", "verikit_framac_job.sh"] and r["verifier"]["exit_code"] == 0
        assert r["toolchain"]["fingerprint"] == tc.fingerprint
    assert len(first_run["seen"]) == 2
    on_disk = load_records(first_run["log"])
    assert sorted(r["key"] for r in on_disk) == sorted(r["key"] for r in recs)


def test_a_task_run_is_made_once_and_its_files_win(casp_tasks, framac_host, tmp_path):
    """Three candidates of one task (different texts: three verifications) share the task's
    soundness run (``Job.task_run``): it runs once, its collected files are in every
    record's stored tool output, and they win over a file of the same name that the
    candidate's own run wrote."""
    t = casp_tasks["06_114"]
    jobs = [gold_job(t, framac_host, model="a")]
    for i, model in enumerate(("b", "c")):
        c = Candidate(task_id=t.task_id, model=model, sample=0, output=t.gold + "\n" * (i + 1), origin="gold")
        jobs.append(casp.build_job(t, c, "gold", framac_host.options(smoke=False), DS))
    assert all(j.task_run == jobs[0].task_run and "sound.c" in j.task_run and "sound.c" not in j.files for j in jobs)
    # a candidate mode's job of the task (other options: smoke tests, the target function)
    # has the same soundness file and the same task command: one soundness run for every
    # mode (one run per task file; the candidate mode's other one is the task's view)
    cand = casp.build_job(t, Candidate(t.task_id, "m", 0, t.gold.split("*/", 1)[1], "test"), "code-from-spec",
                          framac_host.options(smoke=True), DS)
    assert cand.task_run["sound.c"] == jobs[0].task_run["sound.c"] and cand.options != jobs[0].options
    assert set(cand.task_run) == {"sound.c", "task.c"} and "task.c" not in cand.files
    fc = framac_host.framac
    assert fc.task_command(cand.options) == fc.task_command(jobs[0].options) != fc.command(jobs[0].options)
    forged = b"[wp] Proved goals: 0 / 0\n"

    class Forging(CountingSandbox):
        """Every candidate's own run leaves a sound.log of its own (as a binary of its code could)."""

        def run(self, argv, **kw):
            res = super().run(argv, **kw)
            if "candidate.c" in kw["files"]:
                res.files["sound.log"] = forged
            return res

    sandbox = Forging(framac_host.sandbox)
    ex = executor(framac_host, cache=ResultCache(tmp_path / "cache"), sandbox=sandbox, parallel=2)
    log = RecordLog(tmp_path / "run" / "records.jsonl")
    recs = ex.run(jobs, log, casp.judge)
    log.close()
    assert ex.stats.verifier_runs == 3 and ex.stats.task_runs == 1 and len(sandbox.calls) == 4
    sound = {ex.outputs.get(r["tool_output"]["sha256"]).files.get("sound.log") for r in recs}
    assert len(sound) == 1 and None not in sound and forged not in sound
    for r in recs:
        validate("record", r)
        assert r["verifier"]["extra"]["task_sound"] is False, r["verifier"]["extra"]  # 06_114's prelude contradicts


def test_parallel_jobs_come_back_in_job_order(casp_tasks, framac_host, tmp_path):
    jobs = [gold_job(casp_tasks["04_140"], framac_host), gold_job(casp_tasks["06_114"], framac_host)]
    ex = executor(framac_host, cache=ResultCache(tmp_path / "cache"), parallel=2)
    log = RecordLog(tmp_path / "records.jsonl")
    recs = ex.run(jobs, log, casp.judge)
    log.close()
    assert [r["task_id"] for r in recs] == ["04_140", "06_114"]
    assert ex.stats.verifier_runs == 2 and ex.stats.jobs == 2 and ex.stats.task_runs == 2
    assert len({r["verification_key"] for r in recs}) == 2
    for r in recs:
        validate("record", r)
        assert r["verdict"] == "verified", r["reason"]


def test_resume_from_the_same_record_log(first_run, framac_host, tmp_path):
    path = tmp_path / "records.jsonl"
    shutil.copy(first_run["log"], path)
    ex = executor(framac_host, cache=None)
    log = RecordLog(path)
    recs = ex.run(first_run["jobs"], log, casp.judge)
    log.close()
    st = ex.stats.to_json()
    assert st["resumed"] == 2 and st["verifier_runs"] == 0 and st["ran"] == 0 and st["cached"] == 0
    assert recs == first_run["records"]
    assert len(path.read_text().splitlines()) == 2  # nothing appended


def test_new_record_log_gets_everything_from_the_cache(first_run, casp_tasks, framac_host, tmp_path):
    sandbox = CountingSandbox(framac_host.sandbox)
    ex = executor(framac_host, cache=ResultCache(first_run["base"] / "cache"), sandbox=sandbox)
    log = RecordLog(tmp_path / "run2" / "records.jsonl")
    # a third candidate with the same text, never seen before, also comes from the cache
    jobs = first_run["jobs"] + [gold_job(casp_tasks["04_140"], framac_host, model="c", origin="predictions:p:9")]
    judged = []

    def judge(job, result):
        judged.append(job.candidate["model"])
        return casp.judge(job, result)

    recs = ex.run(jobs, log, judge)
    log.close()
    st = ex.stats.to_json()
    assert st["cached"] == 3 and st["verifier_runs"] == 0 and st["ran"] == 0 and sandbox.calls == [], ex.cache.problems
    assert judged == ["a"]  # the one entry they share re-judged once, as a run judges their verification
    tc = framac_host.probed
    assert [r["key"] for r in recs] == [j.key(tc, LIMITS) for j in jobs]
    assert len({r["key"] for r in recs}) == 3
    assert [r["candidate"]["model"] for r in recs] == ["a", "b", "c"]
    assert recs[2]["candidate"]["origin"] == "predictions:p:9"
    for new, old in zip(recs, first_run["records"]):
        assert new["candidate"] == old["candidate"]
        assert new["verdict"] == old["verdict"] and new["goals"] == old["goals"]
        assert new["verification_key"] == old["verification_key"]
    for r in recs:
        validate("record", r)
    assert len(load_records(tmp_path / "run2" / "records.jsonl")) == 3


@pytest.mark.parametrize("retries", [0, 2])
def test_infra_error_is_retried_then_recorded_but_not_cached(casp_tasks, framac_host, shared_task_runs, tmp_path,
                                                            retries):
    t = casp_tasks["04_140"]
    job = gold_job(t, framac_host)
    cache = ResultCache(tmp_path / "cache")
    ex = executor(framac_host, cache=cache, verifier=MissingFramaC(), retries=retries)
    path = tmp_path / "records.jsonl"
    log = RecordLog(path)
    (rec,) = ex.run([job], log, casp.judge)
    log.close()
    validate("record", rec)
    assert rec["verdict"] == "infra_error"
    assert "did not start" in rec["reason"]
    assert rec["attempts"] == 1 + retries
    assert rec["verifier"]["argv"][0] == "/nonexistent/verikit-test/frama-c"
    st = ex.stats.to_json()
    assert st["verifier_runs"] == 1 + retries and st["ran"] == 1 and st["infra_error"] == 1
    assert cache.get(rec["verification_key"]) is None
    assert not any((tmp_path / "cache").rglob("*.json"))
    # a later run with a working tool retries it (not resumed, not cached) and replaces it
    ex2 = executor(framac_host, cache=cache)
    log = RecordLog(path)
    assert rec["key"] not in log.done
    (rec2,) = ex2.run([job], log, casp.judge)
    log.finalize([rec["key"]])
    log.close()
    assert ex2.stats.resumed == 0 and ex2.stats.cached == 0 and ex2.stats.verifier_runs == 1
    assert rec2["key"] == rec["key"] and rec2["verdict"] == "verified"
    assert [r["verdict"] for r in load_records(path)] == ["verified"]
    assert cache.get(rec["verification_key"])["verdict"] == "verified"


def test_precheck_job_runs_no_tool(casp_tasks, framac_host, tmp_path):
    t = casp_tasks["01_57"]
    out = t.contract + "\nint divmult(int a, int b)\n{\n\treturn a;\n}"
    job = casp.build_job(t, Candidate("01_57", "m", 0, out, "test"), "spec-from-code",
                         framac_host.options(smoke=True), DS)
    assert job.precheck[0] == "rejected"
    sandbox = CountingSandbox(framac_host.sandbox)
    cache = ResultCache(tmp_path / "cache")
    ex = executor(framac_host, cache=cache, sandbox=sandbox)
    log = RecordLog(tmp_path / "records.jsonl")
    (rec,) = ex.run([job], log, casp.judge)
    log.close()
    validate("record", rec)
    assert sandbox.calls == [] and ex.stats.verifier_runs == 0 and ex.stats.ran == 0
    assert rec["verdict"] == "rejected" and "body-unchanged" in rec["reason"]
    assert rec["attempts"] == 0 and rec["goals"] is None
    assert rec["verifier"]["exit_code"] is None and rec["verifier"]["argv"] == []
    assert rec["checks"] == job.checks
    assert cache.get(rec["verification_key"])["verdict"] == "rejected"  # a decided verdict is cached


def test_wall_limit_gives_timeout_and_is_not_retried(casp_tasks, framac_host, tmp_path):
    t = casp_tasks["04_140"]
    limits = Limits(wall_s=0.1)
    ex = executor(framac_host, cache=ResultCache(tmp_path / "cache"), limits=limits)
    log = RecordLog(tmp_path / "records.jsonl")
    (rec,) = ex.run([gold_job(t, framac_host)], log, casp.judge)
    log.close()
    validate("record", rec)
    assert rec["verdict"] == "timeout"
    assert rec["attempts"] == 1 and ex.stats.verifier_runs == 1
    assert rec["limits"]["wall_s"] == 0.1


# --- failures belong to the candidate ------------------------------------------------------


class CrashingFramaC(FramaC):
    """The real Frama-C job, killed by SIGSEGV as it starts (a tool crash on the
    candidate's input, as a segfaulting prover would end): the real ``FramaC.parse``
    reads "frama-c exited -11" with no result."""

    def command(self, options):
        argv, env, collect = super().command(options)
        wrapped = ["sh", "-c", '"$@" & pid=$!; kill -SEGV $pid; wait $pid', "sh", *argv]
        return wrapped, env, collect


def test_a_tool_crash_is_the_candidates_failure_and_the_golds_infra_error(casp_tasks, framac_host, tmp_path):
    """A model's candidate that makes the tool crash gets ``failed`` (its sample is not
    dropped from pass@k as "our side failed"); the same crash on the gold stays
    ``infra_error`` (the kit's side: the gold is known good)."""
    t = casp_tasks["04_140"]
    cand = Candidate(task_id="04_140", model="m", sample=0, output=t.gold + "\n/* another text */\n", origin="test")
    model = casp.build_job(t, cand, "gold", framac_host.options(smoke=False), DS)
    gold = gold_job(t, framac_host)
    ex = executor(framac_host, verifier=CrashingFramaC(), retries=0)
    log = RecordLog(tmp_path / "records.jsonl")
    recs = {r["candidate"]["model"]: r for r in ex.run([model, gold], log, casp.judge)}
    log.close()
    assert recs["m"]["verdict"] == "failed", recs["m"]["reason"]
    assert "failed on this candidate" in recs["m"]["reason"] and "the candidate's failure" in recs["m"]["reason"]
    assert recs["gold"]["verdict"] == "infra_error"
    for r in recs.values():
        validate("record", r)
        assert r["tool_output"]["sha256"]  # the crash's own output is kept


def test_an_exception_judging_one_candidate_makes_it_invalid_and_the_run_goes_on(casp_tasks, framac_host,
                                                                                 shared_task_runs, tmp_path):
    """The kit's own judge raising on one candidate (as a parser meeting odd input can):
    that candidate is ``invalid`` with the reason, the other records are intact."""
    t = casp_tasks["04_140"]
    odd = Candidate(task_id="04_140", model="odd", sample=0, output=t.gold + "\n/* odd */\n", origin="test")
    jobs = [casp.build_job(t, odd, "gold", framac_host.options(smoke=False), DS),
            gold_job(casp_tasks["04_140"], framac_host, model="fine", origin="test", sample=1),
            gold_job(casp_tasks["06_114"], framac_host, model="fine", origin="test")]

    def judge(job, result):
        if job.candidate["model"] == "odd":
            raise IndexError("list index out of range")
        return casp.judge(job, result)

    log = RecordLog(tmp_path / "records.jsonl")
    recs = executor(framac_host).run(jobs, log, judge)
    log.close()
    by = {(r["task_id"], r["candidate"]["model"]): r for r in recs}
    assert by[("04_140", "odd")]["verdict"] == "invalid"
    assert "could not judge this candidate (IndexError: list index out of range)" in by[("04_140", "odd")]["reason"]
    assert by[("04_140", "fine")]["verdict"] == by[("06_114", "fine")]["verdict"] == "verified"
    assert len(load_records(tmp_path / "records.jsonl")) == 3


@pytest.mark.parametrize("edit", ["verified->failed", "failed->verified"])
def test_a_cache_entry_edited_either_way_reruns_its_job(casp_tasks, framac_host, shared_task_runs, tmp_path, edit):
    """A cache entry is re-judged from its stored tool output when read: an edited verdict
    (goal counts left or made consistent) is ignored and its job runs again."""
    import json

    t = casp_tasks["04_140"]
    if edit == "verified->failed":
        job, before, after = gold_job(t, framac_host), "verified", "failed"
    else:
        cand = Candidate(task_id="01_57", model="m", sample=0, output="int divmult(int a, int b) { return 1; }",
                         origin="test")
        job = casp.build_job(casp_tasks["01_57"], cand, "code-from-spec", framac_host.options(smoke=True, wp_timeout_s=5),
                             DS)
        before, after = "failed", "verified"
    cache = ResultCache(tmp_path / "cache")
    log = RecordLog(tmp_path / "a.jsonl")
    (first,) = executor(framac_host, cache=cache).run([job], log, casp.judge)
    log.close()
    assert first["verdict"] == before, first["reason"]
    (entry,) = (tmp_path / "cache").glob("??/*.json")
    data = json.loads(entry.read_text())
    data["verdict"] = after
    if after == "verified":  # a careful forger makes the goal counts agree too
        data["goals"]["proved"] = data["goals"]["total"]
    entry.write_text(json.dumps(data))
    cache = ResultCache(tmp_path / "cache")
    ex = executor(framac_host, cache=cache)
    log = RecordLog(tmp_path / "b.jsonl")
    (again,) = ex.run([job], log, casp.judge)
    log.close()
    assert again["verdict"] == before and ex.stats.ran == 1 and ex.stats.cached == 0
    assert any("is not the" in p and "its tool output gives" in p for p in cache.problems), cache.problems
    # an untouched entry is used (re-judged, same verdict) and its output copied beside the run
    ex = executor(framac_host, cache=ResultCache(tmp_path / "cache"))
    log = RecordLog(tmp_path / "c" / "records.jsonl")
    (third,) = ex.run([job], log, casp.judge)
    log.close()
    assert third["verdict"] == before and ex.stats.cached == 1 and ex.stats.ran == 0
    assert (tmp_path / "c" / "outputs" / third["tool_output"]["sha256"][:2]).is_dir()


def test_a_candidate_the_kit_cannot_read_is_invalid_and_the_gold_stops_the_run(casp_tasks):
    """``build_job`` raising on a model's candidate (the kit's own parsing meeting odd
    input) gives that candidate an ``invalid`` job decided without running; on the gold it
    is the task's problem: RunError naming it."""
    from harness.runner import RunError
    from harness.runner.plan import _job

    class Odd:
        name, version = "casp", "test"

        def build_job(self, task, cand, mode, options, ds, ctx):
            raise RecursionError("maximum recursion depth exceeded")

    t = casp_tasks["04_140"]
    cand = Candidate(task_id="04_140", model="m", sample=3, output="((((", origin="predictions:p.jsonl:4")
    job = _job(Odd(), t, cand, "code-from-spec", {"x": 1}, DS, None)
    assert job.precheck[0] == "invalid" and "RecursionError: maximum recursion depth exceeded" in job.precheck[1]
    assert (job.task_id, job.candidate["model"], job.candidate["sample"], job.task_sha256) == ("04_140", "m", 3, t.sha256)
    with pytest.raises(RunError, match="maximum recursion"):
        _job(Odd(), t, Candidate(task_id="04_140", model="gold", sample=0, output=t.gold, origin="gold"),
             "gold", {}, DS, None)


class ProbingFramaC(FramaC):
    """The real Frama-C module with a follow-up run (as TLC's invariant probe has one): a
    real command in the same sandbox, given a file made from the first run's output."""

    broken = False

    def followup(self, files, proc, options):
        if self.broken:
            raise RuntimeError("cannot make it")
        return ({"first.txt": f"first exit {proc.returncode}\n"},
                ["sh", "-c", "cat first.txt candidate.c | wc -l > lines.txt; sleep 0.3; echo probed"], ["lines.txt"])


@pytest.mark.parametrize("broken", [False, True])
def test_a_followup_run_is_stored_with_the_first_and_rederivable(casp_tasks, framac_host, tmp_path, broken):
    from harness.executor import derive
    from harness.results import OutputStore

    verifier = ProbingFramaC()
    verifier.broken = broken
    sandbox = CountingSandbox(framac_host.sandbox)
    ex = executor(framac_host, verifier=verifier, sandbox=sandbox)
    log = RecordLog(tmp_path / "records.jsonl")
    job = gold_job(casp_tasks["04_140"], framac_host)
    (rec,) = ex.run([job], log, casp.judge)
    log.close()
    proc = OutputStore(tmp_path / "outputs").get(rec["tool_output"]["sha256"])
    if broken:  # the verifier could not make it: said in its ending, nothing ran
        assert len(sandbox.calls) == 2 and ex.stats.followups == 0  # the task run and the job
        assert proc.files["followup/ended"].startswith(b"error: the kit could not make the follow-up run")
        assert "followup_wall_s" not in rec["timings"]
    else:
        assert sandbox.calls[-1][:2] == ["sh", "-c"] and ex.stats.followups == 1
        assert proc.files["followup/first.txt"] == b"first exit 0\n"
        assert proc.files["followup/stdout"] == b"probed\n" and proc.files["followup/ended"] == b"exit 0"
        assert int(proc.files["followup/lines.txt"]) == 1 + job.files["candidate.c"].count("\n")
        # the follow-up's time is the job's too: in wall_s with the first run's, and on its own
        assert rec["timings"]["wall_s"] > rec["timings"]["followup_wall_s"] >= 0.3
    assert "wp-report.json" in proc.files  # the first run's files are kept beside
    assert rec["verdict"] == "verified"
    assert derive(verifier, job, proc, casp.judge)[:2] == (rec["verdict"], rec["reason"])  # from the stored output


def test_the_gate_rejects_on_the_view_without_running_wp(casp_tasks, framac_host, tmp_path):
    """CASP's candidate modes: Frama-C's view first (parse only). A candidate the rules
    reject on it is recorded from that run (no WP run, nothing executed), re-derivably;
    an honest one gets its verification as before."""
    from harness.executor import derive
    from harness.results import OutputStore

    t = casp_tasks["01_57"]
    cheat = t.gold.split("*/", 1)[1] + "\n/*@ axiomatic Z { axiom z: \\forall integer x; x == 0; } */\n"
    honest = t.gold.split("*/", 1)[1]
    opts = framac_host.options(smoke=True, wp_timeout_s=10)
    jobs = [casp.build_job(t, Candidate("01_57", "m", i, out, "test"), "code-from-spec", opts, DS)
            for i, out in enumerate((cheat, honest))]
    assert all(j.options.get("gate") for j in jobs), [j.precheck for j in jobs]
    sandbox = CountingSandbox(framac_host.sandbox)
    ex = executor(framac_host, sandbox=sandbox)
    log = RecordLog(tmp_path / "records.jsonl")
    rejected, verified = ex.run(jobs, log, casp.judge)
    log.close()
    assert rejected["verdict"] == "rejected" and rejected["reason"].startswith("no-axioms:"), rejected["reason"]
    assert rejected["goals"] is None and rejected["verifier"]["extra"]["gate"] is True
    assert rejected["verifier"]["extra"]["task_sound"] is True  # the task run's files are read with the gate's
    assert verified["verdict"] == "verified", verified["reason"]
    gates = [e for e in sandbox.envs if e.get("VERIKIT_GATE") == "1"]
    # two gates, two task runs (the soundness smoke tests, the task's view), one verification
    assert len(gates) == 2 and len(sandbox.calls) == 5
    assert ex.stats.gated == 1 and ex.stats.ran == 2 and ex.stats.task_runs == 2
    proc = OutputStore(tmp_path / "outputs").get(rejected["tool_output"]["sha256"])
    assert "vk-gate" in proc.files and "wp-report.json" not in proc.files and "vk_exec.log" not in proc.files
    assert derive(framac_host.framac, jobs[0], proc, casp.judge)[:2] == (rejected["verdict"], rejected["reason"])
    validate("record", rejected)
    # the honest candidate's verification: the command after its gate, from what the gate and
    # the task run wrote (the task's own contract, no call to a function without a body: no
    # smoke test can decide its verdict, and none runs)
    assert verified["verifier"]["argv"] == [a for a in framac_host.framac.command(jobs[1].options)[0]
                                            if a != "-wp-smoke-tests"]
    extra = verified["verifier"]["extra"]
    assert (extra["dead_code_tests"], extra["contract_tests"]) == ("left-out", "left-out")
    proc = OutputStore(tmp_path / "outputs").get(verified["tool_output"]["sha256"])
    assert derive(framac_host.framac, jobs[1], proc, casp.judge)[:2] == (verified["verdict"], verified["reason"])



def test_a_file_frama_c_rejects_is_invalid_from_the_gate_as_from_the_verification(casp_tasks, framac_host, tmp_path):
    """A candidate whose file Frama-C rejects (an undeclared name in its code): the gate's
    parse is the verification's, so its ``invalid`` is final (no WP run, nothing executed),
    with the verdict and reason the verification itself gives on the same file."""
    from harness.executor import derive
    from harness.results import OutputStore

    t = casp_tasks["01_57"]
    broken = t.gold.split("*/", 1)[1].replace("return", "return vk_undeclared +", 1)
    opts = framac_host.options(smoke=True, wp_timeout_s=10)
    job = casp.build_job(t, Candidate("01_57", "m", 0, broken, "test"), "code-from-spec", opts, DS)
    assert job.options.get("gate"), job.precheck
    sandbox = CountingSandbox(framac_host.sandbox)
    ex = executor(framac_host, sandbox=sandbox)
    log = RecordLog(tmp_path / "records.jsonl")
    (rec,) = ex.run([job], log, casp.judge)
    log.close()
    assert rec["verdict"] == "invalid" and "vk_undeclared" in rec["reason"], rec["reason"]
    assert rec["verifier"]["extra"]["gate"] is True and ex.stats.gated == 1
    runs = [e.get("VERIKIT_GATE") for e in sandbox.envs if "VERIKIT_HAVOC_ARGS" in e]  # the job's own runs
    assert runs == ["1"]  # the gate, and no verification
    proc = OutputStore(tmp_path / "outputs").get(rec["tool_output"]["sha256"])
    assert derive(framac_host.framac, job, proc, casp.judge)[:2] == (rec["verdict"], rec["reason"])
    # the verification on the same file (what the job ran before the gate's invalid was final)
    argv, env, collect = framac_host.framac.command(job.options)
    full = framac_host.sandbox.run(argv, files={**framac_host.shared, **job.files}, env=env, collect=collect,
                                   limits=LIMITS)
    full.files = {**full.files, **ex._task_run(job)}  # with the task's files, as the executor adds them
    verdict, reason, _ = derive(framac_host.framac, job, full, casp.judge)
    assert (verdict, reason) == (rec["verdict"], rec["reason"])

class Isolating:
    """A sandbox that only says what it enforces (``job_cpus`` reads nothing else)."""

    def __init__(self, cpus):
        self.name, self.isolation = "stub", {"cpus": cpus}


def test_job_cpus_are_the_cpus_that_j_leaves_idle_unless_the_sandbox_holds_the_limit(monkeypatch):
    import os

    from harness.executor import Executor as Ex

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    free = Isolating("none")
    assert Ex(None, free, None, parallel=1).job_cpus(Limits()) == 4
    assert Ex(None, free, None, parallel=2).job_cpus(Limits()) == 2
    assert Ex(None, free, None, parallel=4).job_cpus(Limits()) == 1
    assert Ex(None, free, None, parallel=8).job_cpus(Limits()) == 1  # never below the job's own
    assert Ex(None, free, None, parallel=8).job_cpus(Limits(cpus=2)) == 2
    assert Ex(None, Isolating("cgroup"), None, parallel=1).job_cpus(Limits()) == 1  # held to limits.cpus
    assert Ex(None, Isolating("cgroup"), None, parallel=1).job_cpus(Limits(cpus=3)) == 3


class CpusSandbox(CountingSandbox):
    """The real HostSandbox, with the CPUs a run may use set to ``cpus``."""

    def __init__(self, inner, cpus: int):
        super().__init__(inner)
        self.cpus = cpus

    def run(self, argv, **kw):
        from harness.executor import CPUS_ENV

        if CPUS_ENV in (kw.get("env") or {}):
            kw["env"] = {**kw["env"], CPUS_ENV: str(self.cpus)}
        return super().run(argv, **kw)


#: A spec-from-code candidate whose requires are stronger than the task's (``casp.KIT_CANARY``:
#: requires 0 <= n <= 1000): the requires probe cannot prove them implied, so the
#: verification runs the smoke tests of the contract.
STRONGER_REQUIRES = ("/*@ requires 0 <= n <= 10;\n    assigns \\nothing;\n    ensures \\result == 2 * n; */\n"
                     + casp.KIT_CANARY.code)


@pytest.mark.parametrize("case", ["no smoke tests", "smoke tests"])
def test_a_job_with_two_cpus_computes_what_it_computes_with_one(casp_tasks, framac_host, shared_task_runs, tmp_path,
                                                                case):
    """A spec-from-code job (gate with the requires probe, the do-nothing-body run, the
    execution cross-check, WP) run with one CPU (every step in turn) and with two: the same
    record and the same side files, times aside. With two CPUs the gate's probe runs beside
    the view, and the do-nothing-body run and the cross-check beside WP, whose WP then runs
    two provers at a time; the verification runs no smoke test (04_140's gold) or the
    contract's (a candidate whose requires are stronger than the task's). The verification
    gets the gate's requires probe log and keeps it as its own (not made again)."""
    from harness.results import OutputStore

    t, text = (casp_tasks["04_140"], casp_tasks["04_140"].gold) if case == "no smoke tests" else \
        (casp.KIT_CANARY, STRONGER_REQUIRES)
    job = casp.build_job(t, Candidate(t.task_id, "m", 0, text, "test"), "spec-from-code",
                         framac_host.options(smoke=True), DS)
    assert job.options.get("gate") and {"havoc.c", "requires.c", "vk_exec.conf"} <= set(job.files)
    got = {}
    for cpus in (1, 2):
        sandbox = CpusSandbox(framac_host.sandbox, cpus)
        log = RecordLog(tmp_path / str(cpus) / "records.jsonl")
        (rec,) = executor(framac_host, sandbox=sandbox).run([job], log, casp.judge)
        log.close()
        assert [e["VERIKIT_CPUS"] for e in sandbox.envs if "VERIKIT_HAVOC_ARGS" in e] == [str(cpus)] * 2  # gate, job
        assert {e["VERIKIT_CPUS"] for e in sandbox.envs if "VERIKIT_CPUS" in e} == {str(cpus)}  # the task runs too
        proc = OutputStore(tmp_path / str(cpus) / "outputs").get(rec["tool_output"]["sha256"])
        (shipped,) = [f for f, e in zip(sandbox.files, sandbox.envs) if "VERIKIT_HAVOC_ARGS" in e
                      and e.get("VERIKIT_GATE") != "1"]
        assert b"vk_requires_probe" in shipped["requires.log"]  # the gate's probe, made once
        assert proc.files["requires.log"] == shipped["requires.log"]
        got[cpus] = rec, proc
    (one, p1), (two, p2) = got[1], got[2]
    assert one["verdict"] == "verified", one["reason"]
    tests = one["verifier"]["extra"].get("contract_tests")
    assert (tests == "run") == (case == "smoke tests"), one["verifier"]["extra"]
    for field in ("verdict", "reason", "goals", "goal_results", "checks", "vacuous", "key", "verification_key"):
        assert one[field] == two[field], field
    assert one["verifier"]["extra"] == two["verifier"]["extra"]
    def same(data: bytes) -> bytes:  # each run's own job directory aside
        return re.sub(rb"verikit-job-[\w-]+", b"JOB", data)

    for name in ("vk_exec.log", "view.json", "task-view.json", "compiler.log"):
        assert name in p1.files and same(p1.files[name]) == same(p2.files[name]), name
    for name in ("requires.log", "havoc.log"):  # WP's logs: the same goals and statuses
        assert name in p1.files and name in p2.files, name


@pytest.mark.parametrize("task", ["00_327", "inconsistent"])
def test_the_task_soundness_run_with_two_cpus_computes_what_it_computes_with_one(casp_tasks, framac_host, task, tmp_path):
    """The task's soundness run (a task run) with one CPU and with two (its smoke tests
    two at a time, ``-wp-par 2``): the same reading of ``sound.log`` (goals, the smoke
    tests that failed) and the same smoke tests per function in its report. On a real
    task whose four smoke tests each wait out their limit, and on an inconsistent one
    (a call its prelude makes unreachable)."""
    from harness.benchmarks.casp import soundness
    from harness.executor import CPUS_ENV
    from harness.verifiers.framac import SOUND_LOG, SOUND_REPORT, _side_run, _smoke_by_function

    from test_casp_soundness import UNSOUND_TASK

    t = casp_tasks[task] if task != "inconsistent" else UNSOUND_TASK
    job = casp.build_job(t, Candidate(t.task_id, "gold", 0, t.gold, "gold"), "gold", framac_host.options(smoke=True), DS)
    _, argv, env, collect, files = executor(framac_host)._task_file_spec(job, "sound.c")
    assert argv[0] == "sh"
    got = {}
    for cpus in (1, 2):
        # the driver traced (sh -x: each command as run, on stderr; Frama-C's output goes to sound.log)
        proc = framac_host.sandbox.run(["sh", "-x", *argv[1:]], files={**framac_host.shared, **files},
                                       env={**env, CPUS_ENV: str(cpus)}, collect=collect, limits=LIMITS)
        assert proc.returncode == 0, proc.stderr
        assert ("-wp-par 2 sound.c" in proc.stderr) == (cpus == 2), proc.stderr  # two at a time with two CPUs only
        side = _side_run(proc.files[SOUND_LOG].decode())
        got[cpus] = (side.verdict, side.goals, side.vacuous, side.extra, _smoke_by_function(proc.files[SOUND_REPORT]),
                     soundness.task_soundness(side))
    assert got[1] == got[2]
    extra, smoke, (sound, failed) = got[1][3:]
    assert extra["smoke_tests"] >= 3 and smoke, got[1]
    assert (sound, bool(failed)) == ((False, True) if task == "inconsistent" else (True, False)), got[1]
