"""OSVBench through the common interface: :class:`harness.benchmarks.osvbench.OSVBench`'s
candidates, canaries, jobs, judging, report sections, comparison with the published log,
upstream-format log and job image.

Hyperkernel's image cannot be had here, so the checks are the recorded real outputs of
the published run (``outputs/output_claude3sonnet_Spec``; tests marked ``recorded``): a
replay sandbox hands the real executor, for each published spec's ``specs.py``, the
output the real tool printed for it; the verifier's parser, the benchmark's judge and
its metrics are the kit's own. The replay never executes a spec and answers only for the
exact recorded spec modules (anything else fails the test).
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from harness import registry
from harness.benchmarks import osvbench
from harness.executor import Executor
from harness.model import GOLD, Candidate, Limits, ProcResult, sha256_text
from harness.sandbox import Sandbox
from harness.results import RecordLog, validate
from harness.runspec import RunSettings, RunSpec
from harness.sandbox import SandboxError
from harness.toolchains import ProbedToolchain
from harness.verifiers import hyperkernel as hk

DS = {"name": "osvbench", "revision": "3247b75e34bec129328e4930d9b5f56448d072a1"}
IDS = ["0", "7", "9", "13", "24", "121", "137", "141"]  # pass, AssertionError, counterexample, ...


@pytest.fixture(scope="module")
def fetched(osvbench_fetched):
    return osvbench_fetched


@pytest.fixture(scope="module")
def bench():
    return registry.benchmark("osvbench")


@pytest.fixture(scope="module")
def tasks(fetched):
    return osvbench.load_benchmark(fetched).tasks


@pytest.fixture(scope="module")
def recorded(fetched, tasks):
    """task_id -> (task, published spec, recorded log entry)."""
    log = fetched.files[osvbench.LOG].read_text(encoding="utf-8")
    specs = json.loads(fetched.files[osvbench.RESULTS_JSON].read_text())
    entries = hk.split_upstream_log(log, osvbench.LOG)
    return {t.task_id: (t, specs[t.task_id][t.syscall][0], e) for t, e in zip(tasks, entries)}


class ReplaySandbox(Sandbox):
    """Replays the recorded Hyperkernel output of each recorded spec: a stand-in for the
    container of the job image, which cannot be had here. It never executes the spec."""

    name = "replay"
    image = "verikit/hyperkernel-osvbench:replay"
    image_digest = None

    def __init__(self, recorded, timeout_syscalls=()):
        self.by_module = {hk.spec_module(spec): e for _, spec, e in recorded.values()}
        self.timeout_syscalls = set(timeout_syscalls)
        self.calls: list[list[str]] = []

    def run(self, argv, *, files=None, env=None, collect=(), limits=Limits()):
        self.calls.append(list(argv))
        assert argv[:2] == ["/bin/sh", hk.SCRIPT_FILE] and files[hk.SCRIPT_FILE] == hk.JOB_SCRIPT
        assert env["VERIKIT_HK_ROOT"] == hk.HK_ROOT and limits.wall_s == float(argv[3]) + hk.SETUP_S
        assert limits.mem_mb == osvbench.JOB_MEM_MB
        entry = self.by_module[files[hk.SPEC_FILE]]
        assert entry.syscall == argv[2]
        if entry.syscall in self.timeout_syscalls:  # what the sandbox reports at its wall-time limit
            return ProcResult(argv=list(argv), returncode=-9, stdout="Using z3 v4.5.0.0\n", timed_out=True,
                              wall_s=limits.wall_s)
        body = entry.text.split("\n", 1)[1]
        code = 0 if hk.classify(body, entry.syscall).kind == "verified" else 1
        return ProcResult(argv=list(argv), returncode=code, stdout=body, stderr="")

    def cancel(self):
        pass

    def close(self):
        pass


def toolchain() -> ProbedToolchain:
    """The toolchain as the recorded log shows it ("Using z3 v4.5.0.0"; Python's patch
    version is not in the log)."""
    tools = {"python": {"version": None, "raw": "not in the recorded log", "published": "2.7", "match": None},
             "z3": {"version": "4.5.0.0", "raw": "Using z3 v4.5.0.0", "published": "4.5.0", "match": True},
             "llvm": {"version": None, "raw": "not probed", "published": "5.0", "match": None}}
    return ProbedToolchain(name="hyperkernel", flavor="host", sandbox="replay", tools=tools, image=ReplaySandbox.image)


def run_jobs(bench, tasks, cands, sandbox, out, **limits_kw):
    """``build_job`` -> the executor (verifier ``parse``, benchmark ``judge``) -> records,
    as the runner does it (the run's own limits are overridden by the jobs' limits)."""
    verifier = registry.verifier(bench.verifier_for("spec"))
    probed = toolchain()
    options = verifier.options(probed, smoke=bench.smoke_tests("spec"), cpus=1, **limits_kw)
    by_id = {t.task_id: t for t in tasks}
    jobs = [bench.build_job(by_id[c.task_id], c, "spec", options, DS, bench.context(None, tasks, "spec", verifier, 0))
            for c in cands]
    log = RecordLog(out / "records.jsonl")
    ex = Executor(verifier, sandbox, probed, shared_files=verifier.prepare(sandbox, probed), limits=Limits())
    try:
        records = ex.run(jobs, log, bench.judge)
    finally:
        log.finalize([j.key(probed, Limits()) for j in jobs])
        log.close()
    return records, ex.stats.to_json()


def published_candidates(recorded, ids, model="claude3sonnet"):
    return [Candidate(tid, model, 0, recorded[tid][1], f"predictions:claude.jsonl:{int(tid) + 1}") for tid in ids]


# --- the interface ---------------------------------------------------------------------------

def test_declared_interface(bench):
    assert isinstance(bench, osvbench.OSVBench) and bench is osvbench.BENCHMARK
    assert (bench.name, bench.modes, bench.default_modes, bench.datasets, bench.default_dataset) == \
        ("osvbench", ("spec",), ("spec",), ("osvbench",), "osvbench")
    assert bench.container_only and not bench.seeded and bench.mode_option == "mode"
    assert bench.verifier_for("spec") == "hyperkernel" and bench.reproduce_modes() == ()
    assert bench.derived_images() == {"hyperkernel-osvbench": "spec"}
    assert registry.derived_images()["hyperkernel-osvbench"] == ("osvbench", "spec")
    with pytest.raises(ValueError, match="osvbench has no mode 'gold'"):
        bench.verifier_for("gold")
    assert "runner" in bench.adaptation("spec") and bench.notes([], ["spec"])


def test_gold_is_the_reference_spec_of_the_prompt_examples(fetched, bench, tasks, tmp_path):
    """OSVBench ships Hyperkernel's own specs of 9 syscalls (the 9-shot examples): the gold
    of their 45 tasks; none for the other 200."""
    gold = bench.gold_candidates(tasks, "spec")
    assert len(gold) == 45 and {c.model for c in gold} == {GOLD}
    by_id = {t.task_id: t for t in tasks}
    assert len({by_id[c.task_id].syscall for c in gold}) == 9
    assert osvbench.example_specs(fetched.files[osvbench.SHOT_FILES[9]].read_text()).keys() == \
        {by_id[c.task_id].syscall for c in gold}
    for c in gold:
        assert osvbench.integrity_scan(c.output) == [] and c.output.startswith(f"def {by_id[c.task_id].syscall}(")
    # the examples of the smaller files are the same specs
    for n in (1, 3, 5, 7):
        for name, spec in osvbench.example_specs(fetched.files[osvbench.SHOT_FILES[n]].read_text()).items():
            assert spec == next(c.output for c in gold if by_id[c.task_id].syscall == name)
    # a dataset directory without the examples file has no gold
    (tmp_path / "bench_prompts").mkdir()
    (tmp_path / osvbench.BENCHMARK_JSON).write_bytes(fetched.files[osvbench.BENCHMARK_JSON].read_bytes())
    assert bench.gold_candidates(osvbench.load_benchmark(tmp_path).tasks, "spec") == []
    assert [t.sha256 for t in osvbench.load_benchmark(tmp_path).tasks] == [t.sha256 for t in tasks]  # not hashed


@pytest.mark.recorded
def test_reference_specs_match_specs_the_published_run_verified(bench, tasks, recorded):
    """Three reference specs are, token for token with comments and blank lines aside,
    published specs the real tool verified: recorded evidence that the gold (and the
    ``canary:reference``) verifies in the upstream image."""
    import io
    import tokenize

    def tokens(src):
        skip = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)
        return [t.string for t in tokenize.generate_tokens(io.StringIO(src).readline) if t.type not in skip]

    refs = {t.syscall: t.reference for t in tasks if t.reference}
    same = {tid: hk.upstream_class(e.text) for tid, (t, spec, e) in recorded.items()
            if t.syscall in refs and tokens(spec) == tokens(refs[t.syscall])}
    assert {recorded[tid][0].syscall for tid in same} == {"sys_alloc_port", "sys_map_page_desc", "sys_protect_frame"}
    assert set(same.values()) == {"pass"} and len(same) == 9
    # the canary's spec: verified on all five sys_protect_frame tasks
    assert {t.task_id for t in tasks if t.syscall == osvbench.CANARY_SYSCALL} <= set(same)


def test_bundled_candidates_are_the_published_specs(fetched, bench, tasks):
    cands = bench.bundled_candidates(fetched, "spec")
    assert len(cands) == 245 and {c.model for c in cands} == {"claude3sonnet"}
    assert {c.origin for c in cands} == {f"bundled:{osvbench.RESULTS_JSON}"}
    assert cands[0].meta["api_model"] == "claude-3-5-sonnet-20241022"
    assert bench.bundled_candidates(fetched.files[osvbench.BENCHMARK_JSON].parents[1], "spec")  # a plain directory


def test_canaries_on_their_fixed_task(bench, tasks):
    can = bench.canaries(tasks, "spec")
    assert [(c.model, e) for c, e in can] == [("canary:reference", ("verified",)), ("canary:forged-ok", ("rejected",)),
                                             ("canary:dunder-escape", ("rejected",))]
    (task_id,) = {c.task_id for c, _ in can}
    assert task_id == "8" and tasks[8].syscall == osvbench.CANARY_SYSCALL
    options = registry.verifier("hyperkernel").options(None)
    jobs = {c.model: bench.build_job(tasks[8], c, "spec", options, DS, None) for c, _ in can}
    assert jobs["canary:reference"].precheck is None
    assert jobs["canary:forged-ok"].precheck[0] == "rejected" and "print" in jobs["canary:forged-ok"].precheck[1]
    assert jobs["canary:dunder-escape"].precheck[0] == "rejected" and "__class__" in jobs["canary:dunder-escape"].precheck[1]
    assert bench.canaries([t for t in tasks if t.syscall != osvbench.CANARY_SYSCALL], "spec") == []


def test_build_job(bench, tasks):
    v = registry.verifier("hyperkernel")
    options = v.options(None, timeout_s=45)
    cand = Candidate("3", "m", 2, "Here it is:\n```python\ndef sys_map_file(old):\n    return z3.BoolVal(True), old\n```",
                     "predictions:p.jsonl:1")
    job = bench.build_job(tasks[3], cand, "spec", options, DS, None)
    assert (job.benchmark, job.benchmark_version, job.mode, job.task_id) == ("osvbench", osvbench.VERSION, "spec", "3")
    assert job.task_sha256 == tasks[3].sha256 and job.dataset == DS
    assert job.candidate == {"model": "m", "sample": 2, "sha256": sha256_text(cand.output),
                             "origin": "predictions:p.jsonl:1"}
    assert job.options == {**options, "syscall": "sys_map_file"} and "syscall" not in options
    assert job.files == v.files("\ndef sys_map_file(old):\n    return z3.BoolVal(True), old\n")
    assert job.limits == Limits(wall_s=45 + hk.SETUP_S, mem_mb=osvbench.JOB_MEM_MB)
    assert v.command(job.options)[0] == ["/bin/sh", hk.SCRIPT_FILE, "sys_map_file", "45"]
    assert job.precheck is None and job.checks == [{"name": "forbidden_names", "ok": True, "detail": "none"}]
    with pytest.raises(ValueError, match="no mode"):
        bench.build_job(tasks[3], cand, "gold", options, DS, None)


# --- recorded runs through the executor ------------------------------------------------------------

@pytest.mark.recorded
def test_jobs_judge_and_report_sections_on_recorded_outputs(bench, tasks, recorded, tmp_path):
    sb = ReplaySandbox(recorded)
    records, stats = run_jobs(bench, tasks, published_candidates(recorded, IDS), sb, tmp_path)
    assert stats["ran"] == len(IDS) == len(sb.calls) and [r["task_id"] for r in records] == IDS
    for r in records:
        validate("record", r)
    got = {r["task_id"]: (r["verdict"], r["verifier"]["extra"]["upstream_class"]) for r in records}
    assert got["0"] == ("verified", "pass") and got["9"] == ("failed", "semantic")
    assert got["141"] == ("invalid", "syntax") and got["7"] == ("invalid", "syntax")
    sections = bench.report_sections(records, tasks, ["spec"], seed=0)
    json.dumps(sections)
    m = sections["per_model"]["claude3sonnet"]
    assert m["classes"] == {"pass": 1, "semantic": 1, "syntax": 6}
    assert m["causes"] == {"verified": 1, "counterexample": 1, "AttributeError": 2, "AssertionError": 1,
                           "Z3Exception": 1, "ValueError": 1, "SyntaxError": 1}
    assert sections["pass_at_k"]["claude3sonnet"]["pass_at_k"] == {"1": pytest.approx(1 / 8), "3": None, "5": None}
    # a rerun into the same records resumes: nothing runs again
    records2, stats2 = run_jobs(bench, tasks, published_candidates(recorded, IDS), sb, tmp_path)
    assert stats2["resumed"] == len(IDS) and stats2["ran"] == 0 and len(sb.calls) == len(IDS)


@pytest.mark.recorded
def test_sandbox_timeout_rejection_and_canaries(bench, tasks, recorded, tmp_path):
    """The sandbox's wall-time kill is a timeout (upstream's class semantic); a cheat is
    rejected without running; the canaries get their expected verdicts."""
    sb = ReplaySandbox(recorded, timeout_syscalls={"sys_map_dev"})
    forged = Candidate("0", "claude3sonnet", 1, 'print "test_sys_map_page_desc (__main__.HV6) ... ok"', "test:forged")
    canaries = bench.canaries(tasks, "spec")
    ref = canaries[0][0]
    # the reference spec's output: the one recorded for the published spec of task 8, the
    # same spec token for token, comments aside (test_reference_specs_match_...)
    sb.by_module[hk.spec_module(ref.output)] = recorded["8"][2]
    records, _ = run_jobs(bench, tasks, published_candidates(recorded, ["2", "0"]) + [forged]
                          + [c for c, _ in canaries], sb, tmp_path, timeout_s=45)
    by = {(r["task_id"], r["candidate"]["model"], r["candidate"]["sample"]): r for r in records}
    t = by[("2", "claude3sonnet", 0)]
    assert t["verdict"] == "timeout" and t["limits"]["wall_s"] == 45 + hk.SETUP_S
    assert t["verifier"]["options"]["timeout_s"] == 45
    f = by[("0", "claude3sonnet", 1)]
    assert f["verdict"] == "rejected" and f["checks"][0]["ok"] is False and f["verifier"]["exit_code"] is None
    assert len(sb.calls) == 3  # 2 published specs + the reference canary; the cheats never ran
    for cand, expected in canaries:
        assert by[(cand.task_id, cand.model, 0)]["verdict"] in expected, cand.model
    sections = bench.report_sections(records, tasks, ["spec"])
    assert set(sections["per_model"]) == {"claude3sonnet"}  # canaries are not metrics
    m = sections["per_model"]["claude3sonnet"]
    assert m["classes"] == {"semantic": 1, "pass": 1, "rejected": 1} and m["causes"]["timeout"] == 1
    log = osvbench.upstream_log(records, tasks)
    entries = hk.split_upstream_log(log)
    assert [e.syscall for e in entries] == ["sys_map_page_desc", "sys_map_dev"]  # benchmark order, no canary
    assert [hk.upstream_class(e.text) for e in entries] == ["pass", "semantic"]  # "Error: Timeout." as intended
    assert "Error: Timeout." in entries[1].text


@pytest.mark.recorded
@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::harness.benchmarks.osvbench.UpstreamQuirkWarning")
def test_all_245_published_specs_as_a_run(fetched, bench, tasks, recorded, tmp_path):
    """The converted published predictions, all 245, through build_job, the executor and
    judge: the report sections give the paper's figures again, the comparison with the
    published log agrees on every task, and the upstream-format log has one entry per
    task with the original entry's class."""
    lines, _ = osvbench.convert_upstream_results(fetched.files[osvbench.RESULTS_JSON], tasks)
    cands = [Candidate(ln["task_id"], ln["model"], ln["sample"], ln["output"], f"predictions:claude.jsonl:{i}")
             for i, ln in enumerate(lines, 1)]
    records, stats = run_jobs(bench, tasks, cands, ReplaySandbox(recorded), tmp_path)
    assert stats["ran"] == 245
    sections = bench.report_sections(records, tasks, ["spec"])
    m = sections["per_model"]["claude3sonnet"]
    assert m["classes"] == {"pass": 110, "semantic": 80, "syntax": 55}
    assert m["pass_at_1_percent_by_bug_type"] == {"incorrect pointer": 39.44, "incorrect privilege": 41.96,
                                                  "memory leak": 39.19, "buffer overflow": 48.15,
                                                  "bounds checking": 39.81, "correct": 46.94}
    assert sections["pass_at_k"]["claude3sonnet"]["pass_at_k"]["1"] == pytest.approx(110 / 245)
    rows = bench.compare(records, {t.task_id: t for t in tasks}, fetched)
    assert len(rows) == 245 and all(r["agree"] and not r["differences"] for r in rows)
    assert Counter(r["published"]["verdict"] for r in rows) == {"verified": 110, "failed": 80, "invalid": 55}
    log = osvbench.upstream_log(records, tasks)
    assert bench.run_files(records, tasks) == {"output_upstream_format": log}
    entries = hk.split_upstream_log(log)
    assert len(entries) == len(hk.upstream_split(log)) == 245
    assert [hk.upstream_class(e.text) for e in entries] == [hk.upstream_class(recorded[t.task_id][2].text)
                                                           for t in tasks]
    assert osvbench.upstream_log(list(reversed(records)), tasks) == log


def test_compare_only_for_the_published_spec(fetched, bench, tasks):
    rec = {"task_id": "0", "mode": "spec", "verdict": "failed", "reason": "Z3 found a counterexample",
           "candidate": {"model": "m", "sample": 0, "sha256": sha256_text("other spec"), "origin": "x"},
           "verifier": {"extra": {"cause": "counterexample", "upstream_class": "semantic"}}}
    assert bench.compare([rec], {t.task_id: t for t in tasks}, fetched) == []
    spec = json.loads(fetched.files[osvbench.RESULTS_JSON].read_text())["0"]["sys_map_page_desc"][0]
    rec["candidate"]["sha256"] = sha256_text(spec)
    (row,) = bench.compare([rec], {t.task_id: t for t in tasks}, fetched)
    assert row["published"]["verdict"] == "verified" and not row["agree"]
    assert [d["field"] for d in row["differences"]] == ["verdict", "cause"]
    assert bench.compare([rec], {t.task_id: t for t in tasks}, "/nonexistent") == []  # no published run


# --- the job image ---------------------------------------------------------------------------------

def test_job_image_without_engine_is_a_clear_message(bench, monkeypatch):
    from harness import runner

    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/verikit-test-docker.sock")
    with pytest.raises(SandboxError) as exc:
        runner.job_image(bench, "spec", None)
    msg = str(exc.value)
    assert "no container engine at unix:///nonexistent/verikit-test-docker.sock" in msg
    assert f"docker pull {osvbench.UPSTREAM_IMAGE}" in msg and "docker load -i" in msg
    assert "verikit images build hyperkernel-osvbench" in msg and "without access to Docker Hub cannot pull" in msg


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::harness.benchmarks.osvbench.UpstreamQuirkWarning")
def test_verikit_run_without_the_image_stops_with_the_message(fetched, tmp_path, monkeypatch, isolated_cache):
    """``verikit run osvbench --sandbox container --predictions claude.jsonl`` where no job
    image can be had: the runner stops before any job with the benchmark's message."""
    from harness import runner

    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/verikit-test-docker.sock")
    preds = tmp_path / "claude.jsonl"
    osvbench.convert(fetched, preds)
    with pytest.raises(runner.RunError) as exc:
        runner.run(RunSpec(benchmark="osvbench", sandbox="container", predictions=str(preds)), tmp_path / "run",
                   settings=RunSettings(progress=False))
    assert f"docker pull {osvbench.UPSTREAM_IMAGE}" in str(exc.value)
    assert "verikit images build hyperkernel-osvbench" in str(exc.value)
    assert not (tmp_path / "run" / "records.jsonl").exists()
    with pytest.raises(runner.RunError, match="runs only in a sandbox with its images"):
        runner.run(RunSpec(benchmark="osvbench", sandbox="host", predictions=str(preds)), tmp_path / "run",
                   settings=RunSettings(progress=False))


@pytest.mark.container
def test_job_image_message_on_a_real_engine(bench):
    """With a real Docker-API engine here (Podman) and no upstream image, the kit cannot
    build the job image: the message says how to get the upstream image."""
    from harness import runner
    from harness.sandbox.container import engine_reachable

    if not engine_reachable():
        pytest.skip("no Docker-API engine reachable")
    try:
        image = runner.job_image(bench, "spec", None)
    except SandboxError as exc:
        assert osvbench.UPSTREAM_IMAGE in str(exc) and "verikit images build hyperkernel-osvbench" in str(exc)
    else:
        pytest.skip(f"{image} is present on this engine")


def test_derived_image_spec(bench):
    spec = bench.derived_image_spec("spec", None, lambda toolchain: "unused")
    assert set(spec) == {"name", "base_toolchain", "base_image", "base_hint", "fingerprint", "files", "containerfile",
                         "manifest"}
    assert (spec["name"], spec["base_toolchain"], spec["base_image"]) == ("hyperkernel-osvbench", "hyperkernel",
                                                                         osvbench.UPSTREAM_IMAGE)
    assert len(spec["fingerprint"]) == 64 and spec["files"] == {}
    from harness.sandbox.images import derived_tag

    assert derived_tag(spec) == f"verikit/hyperkernel-osvbench:{spec['fingerprint'][:12]}"
    cf = spec["containerfile"]
    lines = cf.splitlines()
    assert f"ARG BASE={osvbench.UPSTREAM_IMAGE}" in lines and "FROM ${BASE}" in lines
    assert f"RUN chmod a+rx /root && chmod -R a+rX {hk.HK_ROOT} /root/Projects" in lines
    assert f'ENV PYTHONPATH="{hk.Z3_PYTHON}"' in lines and "ENTRYPOINT []" in lines
    assert "verikit images build hyperkernel-osvbench" in spec["base_hint"]
    json.dumps(spec["manifest"])
