"""NTP4VC proof checking with the real Coq 8.20.1 in the ``ntp4vc-rocq`` image (Podman).

End to end through ``harness.runner.run``, live: the canaries (a correct proof of
``power'vc`` is verified; Admitted, a new Axiom, a changed statement and the integrity
cheats (an Abort hidden by a string inside a comment, a redefined theorem, an axiom named
like a library one; tests/test_rocq_integrity.py has more spellings) are rejected; an
ill-typed proof is invalid; a looping proof times out), the gold candidates (the task file
with its placeholder: does the statement load; a task whose library is not in the pinned
data is invalid without running) and the run manifest's record of the adaptation and
image. These need the engine and the image: they skip without one unless
``VERIKIT_REQUIRE_ENGINE=1`` (``nox -s tests``).

Recorded (``tests/recording.py``, family ``ntp4vc-rocq``): predictions with several samples
(pass@k, and the error for k > n) and whole-file candidates, a run of their own with the
mode's canaries again, are judged on Coq's real outputs recorded in the image
(``tests/recorded/runs/ntp4vc-rocq/``): the kit's executor, parser, judge and report read
them with no engine. Refresh it with ``python scripts/record.py ntp4vc-rocq`` (the engine
and the image needed); ``tests/test_freshness.py`` re-runs a daily sample of its jobs live."""

from __future__ import annotations

import json

import pytest
from recording import family_sandbox, pipeline_sandbox
from rich.console import Console

from harness import runner
from harness.benchmarks import ntp4vc
from harness.model import GOLD
from harness.results import validate_run_dir
from harness.runner import run
from harness.runspec import RunSettings, RunSpec
from harness.sandbox import Limits


def live(test):
    """The marks of a test that runs live (the real Coq in the image, through the engine),
    or that sits with them: ``container``, ``realtool``, ``slow``."""
    for mark in (pytest.mark.container, pytest.mark.realtool, pytest.mark.slow):
        test = mark(test)
    return test


POWER = ntp4vc.CANARY_TASK
AVL = "pearl/avl/avl::avl_AVL_back_nodeqtvc"  # preamble with Admit Obligations and axioms
#: One real-C task from each of 7 Frama-C projects: their statements load only with the
#: project's own lib/rocq theories (pinned in the data; without them all 300 are invalid).
REAL_C = {
    "airborne": "frama_c/airborne/float_quat_comp/float_quat_comp_Why3_ide::"
                "float_quat_comp_Why3_ide_VCfloat_quat_comp_post_goal0",
    "contiki_list": "frama_c/contiki_list/array_pop_Why3_ide::"
                    "array_pop_Why3_ide_VCarray_pop_loop_inv_CenterLinked_preserved_goal14",
    "verker": "frama_c/verker/int_sqrt_Why3_ide::int_sqrt_Why3_ide_VCint_sqrt_loop_term_decrease_goal1",
    "standard_algorithms": "frama_c/standard_algorithms/binary_search/binary_search_Why3_ide::"
                           "binary_search_Why3_ide_VCbinary_search_post_result_goal0",
    "klibc_string": "frama_c/klibc_string/memccpy_Why3_ide::memccpy_Why3_ide_VCmemccpy_exists_c_post_part1_goal16",
    "x509_parser": "frama_c/x509_parser/check_utf8_string_Why3_ide::"
                   "check_utf8_string_Why3_ide_VCcheck_utf8_string_assert_rte_mem_access_7_part04_goal20",
    "should_we_balance": "frama_c/should_we_balance/cpumask_andnot_Why3_ide::"
                         "cpumask_andnot_Why3_ide_VCcpumask_andnot_assert_rte_signed_overflow_goal14",
}


@pytest.fixture(scope="module")
def fetched(ntp4vc_fetched):
    return ntp4vc_fetched


@pytest.fixture(scope="module")
def image(fetched, engine_image):
    return engine_image(lambda: runner.job_image(ntp4vc.BENCHMARK, "rocq", fetched, build=False))



def _container(fetched, request, slots: int):
    """The real sandbox of a run, as the pipeline opens it (``pipeline.open_sandbox``): the
    container sandbox of the ``ntp4vc-rocq`` image (already built), ``slots`` workers. For
    the recorder only: the engine is asked for here (``engine_image``: a skip without the
    engine or the image, a failure under ``VERIKIT_REQUIRE_ENGINE=1``), so that a replay
    neither needs it nor is marked ``container``."""
    from harness import registry

    engine_image = request.getfixturevalue("engine_image")
    image = engine_image(lambda: runner.job_image(ntp4vc.BENCHMARK, "rocq", fetched, build=False))
    toolchain = registry.verifier("rocq").toolchain
    return engine_image(lambda: registry.sandbox("container", toolchain=toolchain, slots=slots,
                                                           image=image))


def _run(tmp_path, tasks, *, predictions=None, out="run", cache_dir=None):
    spec = RunSpec(benchmark="ntp4vc", modes=["rocq"], sandbox="container", parallel=2, limits=Limits(wall_s=120),
                   task_ids=tasks, predictions=str(predictions) if predictions else None)
    settings = RunSettings(use_cache=cache_dir is not None, cache_dir=cache_dir, progress=False, command=["test"])
    report, manifest, code = run(spec, tmp_path / out, settings=settings, console=Console(stderr=True, quiet=True))
    records = [json.loads(line) for line in (tmp_path / out / "records.jsonl").read_text().splitlines()]
    return report, manifest, code, records


@pytest.fixture(scope="module")
def canary_run(image, shared_cache, tmp_path_factory):
    """The canaries and the gold of 9 tasks in one run, through the session's result cache:
    test_generate_ntp4vc's runs (same limits) judge the same canaries, so one of the two
    files runs them with Coq and the other re-derives their verdicts from Coq's stored
    output."""
    return _run(tmp_path_factory.mktemp("ntp4vc-rocq"), [POWER, AVL, *REAL_C.values()], cache_dir=shared_cache)


@live
def test_canaries_get_their_expected_verdicts(canary_run):
    report, _, code, records = canary_run
    got = {x["model"]: x["verdict"] for x in report["canaries"]["results"]}
    # the looping proof's memory grows: it ends at the wall-time or at the memory limit,
    # whichever comes first on this machine (never verified)
    assert got.pop("canary:loop") in ("timeout", "memout")
    assert got == {"canary:proof": "verified", "canary:admitted": "rejected", "canary:new-axiom": "rejected",
                   "canary:changed-statement": "rejected", "canary:admit": "invalid",
                   "canary:ill-typed": "invalid", "canary:comment-string-abort": "rejected",
                   "canary:redefined-theorem": "rejected", "canary:shadowed-axiom": "rejected",
                   "canary:command-not-allowed": "rejected", "canary:kernel-bug-fix": "rejected",
                   "canary:fix-nested-deep": "rejected", "canary:fix-in-abstract": "rejected",
                   "canary:hypothesis-named-back": "verified"}
    assert report["canaries"]["ok"] and code == 0


@live
def test_rejections_carry_the_provers_own_reading(canary_run):
    by_model = {r["candidate"]["model"]: r for r in canary_run[3]}
    proof = by_model["canary:proof"]
    assert proof["verifier"]["extra"]["assumptions"] == []
    assert "closed under the global context" in proof["reason"]
    # the kit expected Coq's view to reject it (an Axiom command): coqc alone ran, Coq's parse
    # decided (check.v's reading of such candidates: tests/test_rocq_integrity.py)
    axiom = by_model["canary:new-axiom"]
    assert "command Axiom is not allowed (Coq parsed 'Axiom (cheat" in axiom["reason"]
    assert axiom["verifier"]["extra"]["coqchk"] is None and "assumptions" not in axiom["verifier"]["extra"]
    changed = by_model["canary:changed-statement"]
    assert any(c["name"] == "statement-unchanged" and not c["ok"] for c in changed["checks"])
    admitted = by_model["canary:admitted"]
    assert any(c["name"] == "commands-allow-listed" and not c["ok"] and "Admitted" in c["detail"]
               for c in admitted["checks"])
    assert by_model["canary:loop"]["limits"]["wall_s"] == ntp4vc.CANARY_WALL_S


@live
def test_gold_is_the_statement_check(canary_run):
    """Gold = the task file with its Admitted: the statement loads (``rejected``, the
    placeholder is no proof), pearl and real C alike: the real-C statements of 7 Frama-C
    projects load with their projects' own lib/rocq theories compiled in the image. The
    placeholder is a command outside the allow-list: ``coqc`` alone runs, Coq's view names it."""
    report, manifest, _, records = canary_run
    st = {r["task_id"]: r for r in records if r["candidate"]["model"] == GOLD}
    assert st[POWER]["verdict"] == "rejected" and st[AVL]["verdict"] == "rejected"
    for project, tid in REAL_C.items():
        rec = st[tid]
        assert rec["verdict"] == "rejected" and "the task file loads" in rec["reason"], (project, rec["reason"])
        # the project's own lib/rocq theories are on the load path (what was missing before)
        dirs = [d for d, _ in rec["verifier"]["options"]["load_path"]]
        assert any(f"/data/why3/frama_c/{project}/" in d and "/lib/rocq/" in d for d in dirs), (project, dirs)
        # Coq's own view: the placeholder, as Coq parsed it
        view = next(c for c in rec["checks"] if c["name"] == "commands-allow-listed")
        assert "command Admitted is not allowed (Coq parsed 'Admitted.')" in view["detail"], (project, view)
    loads = report["sections"]["task_loads"]
    assert (loads["checked"], loads["loads"], loads["does_not_load"]) == (2 + len(REAL_C), 2 + len(REAL_C), 0)
    assert loads["by_source"]["frama_c"] == {"checked": len(REAL_C), "loads": len(REAL_C)}


@live
def test_a_module_missing_from_the_dataset_is_invalid_without_running(fetched):
    """A task whose closure names a module no file of the dataset provides (a user's
    dataset missing a library file) is ``invalid`` before any tool runs, naming it."""
    tasks = {t.task_id: t for t in ntp4vc.load_tasks(fetched)}
    task = tasks[REAL_C["airborne"]]
    lib = ntp4vc.RocqLibrary.load(fetched)
    closure, missing = lib.closure(task.rocq)
    assert missing == [] and any("/lib/rocq/Compound/" in f for f in closure)
    gone = next(f for f in closure if "/lib/rocq/Compound/" in f)
    lib.files.pop(gone)
    from harness import registry

    ctx = ntp4vc.BENCHMARK.context(fetched, list(tasks.values()), "rocq", registry.verifier("rocq"), 0)
    ctx.rocq = lib
    job = ntp4vc.BENCHMARK.build_job(task, ntp4vc.BENCHMARK.gold_candidates([task], "rocq")[0], "rocq", {},
                                     {"name": "ntp4vc", "revision": "x"}, ctx)
    assert job.precheck[0] == "invalid" and "float_quat_comp.Compound.Compound" in job.precheck[1]


@live
def test_manifest_records_image_and_adaptation(canary_run, tmp_path_factory):
    _, manifest, _, records = canary_run
    assert manifest["image"]["ref"].startswith("verikit/ntp4vc-rocq:") and manifest["image"]["id"].startswith("sha256:")
    assert manifest["adaptation"]["statements_rewritten"] is False
    assert manifest["toolchains"][0]["tools"]["coq"]["version"] == "8.20.1"
    load_path = dict((n, d) for d, n in next(r for r in records if r["task_id"] == AVL)["verifier"]["options"]["load_path"])
    assert load_path["Stdlib"].endswith("/shim/Stdlib") and "Why3" in load_path


@pytest.mark.recorded
def test_predictions_pass_at_k_and_whole_file_candidates(fetched, request, tmp_path):
    """Judged on the family's recording (``ntp4vc-rocq``): a run of its own, no result cache
    (so that the recorder runs every job)."""
    power_text = fetched.files[next(t for t in ntp4vc.load_tasks(fetched) if t.task_id == POWER).rocq].read_text()
    lines = [
        {"task_id": POWER, "model": "m", "sample": 0, "output": "Proof. cbv zeta; lia. Qed."},
        {"task_id": POWER, "model": "m", "sample": 1, "output": "Proof. cbv zeta. split. Qed."},
        {"task_id": POWER, "model": "m", "sample": 2,
         "output": power_text.replace("Admitted.", "Proof.\n  cbv zeta; lia.\nQed.")},
        {"task_id": AVL, "model": "m", "sample": 0, "output": "Proof. intros. Qed."},
        {"task_id": AVL, "model": "m", "sample": 1, "output": "Proof. admit. Qed."},
        {"task_id": AVL, "model": "m", "sample": 2, "output": "Proof. exact I. Qed."},
    ]
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps(x) + "\n" for x in lines))
    with family_sandbox("ntp4vc-rocq", "rocq", live=lambda: _container(fetched, request, 2)) as sb, \
            pipeline_sandbox(sb):
        report, manifest, code, records = _run(tmp_path, [POWER, AVL], predictions=preds)
    verdicts = {(r["task_id"], r["candidate"]["sample"]): r["verdict"] for r in records
                if r["candidate"]["model"] == "m"}
    assert verdicts[(POWER, 0)] == "verified" and verdicts[(POWER, 2)] == "verified"  # whole file, same statement
    # admit: Coq refuses to save the proof (there is no kit word scan)
    assert verdicts[(POWER, 1)] == "invalid" and verdicts[(AVL, 1)] == "invalid"
    table = report["sections"]["pass_at_k"]["m"]["rocq"]
    assert table["overall"]["pass_at_k"]["1"] == pytest.approx((2 / 3 + 0) / 2)
    assert "needs n >= 4" in table["overall"]["pass_at_k"]["4"]["error"]
    lo, hi = table["overall"]["ci95"]["1"]
    assert lo <= table["overall"]["pass_at_k"]["1"] <= hi
    assert table["source:pearl"]["tasks"] == 2 and "not_reproducible" in table["category"]
    validate_run_dir(tmp_path / "run")


class _Cpus:
    """The run's real sandbox, with the CPUs a run may use (``CPUS_ENV``) set to ``cpus``."""

    def __init__(self, inner, cpus: int):
        self.inner, self.cpus, self.envs = inner, cpus, []

    def run(self, argv, **kw):
        from harness.model import CPUS_ENV

        if CPUS_ENV in (kw.get("env") or {}):
            kw["env"] = {**kw["env"], CPUS_ENV: str(self.cpus)}
            self.envs.append(kw["env"][CPUS_ENV])
        return self.inner.run(argv, **kw)

    def __getattr__(self, name):
        return getattr(self.inner, name)


@live
def test_coqchk_beside_the_check_file_computes_what_it_computes_after_it(image, tmp_path):
    """With two CPUs the full check runs ``coqchk`` beside ``check.v`` (after ``coqc`` of the
    candidate), with one after it: the same records and the same collected files, for an
    honest proof (``coqchk`` passes) and for one whose ``check.v`` rejects the statement
    (``coqchk``'s files dropped, as when it never ran)."""
    from harness.executor import Executor
    from harness.results import OutputStore, RecordLog
    from harness.runner import build_jobs, open_sandbox, plan_run, probe_toolchain
    from harness.verifiers.rocq.report import COQCHK_RC

    spec = RunSpec(benchmark="ntp4vc", modes=["rocq"], sandbox="container", parallel=1, limits=Limits(wall_s=120),
                   task_ids=[POWER])
    plan = plan_run(spec, Console(stderr=True, quiet=True))
    names = ("canary:proof", "canary:changed-statement")
    got = {}
    with open_sandbox(plan, lambda *a: None) as (sandbox, _):
        probed, shared = probe_toolchain(plan, sandbox)
        jobs = [j for j in build_jobs(plan, probed, plan.verifier)[0] if j.candidate["model"] in names]
        assert sorted(j.candidate["model"] for j in jobs) == sorted(names)
        assert not any(j.options.get("expected_rejections") for j in jobs)  # both get the full check
        for cpus in (1, 2):
            wrapped = _Cpus(sandbox, cpus)
            log = RecordLog(tmp_path / str(cpus) / "records.jsonl")
            recs = Executor(plan.verifier, wrapped, probed, shared_files=shared, limits=spec.limits,
                            parallel=1).run(jobs, log, plan.bench.judge)
            log.close()
            assert wrapped.envs == [str(cpus)] * len(jobs)
            store = OutputStore(tmp_path / str(cpus) / "outputs")
            got[cpus] = [(r, store.get(r["tool_output"]["sha256"])) for r in recs]
    for (one, p1), (two, p2) in zip(got[1], got[2]):
        for field in ("verdict", "reason", "goals", "checks", "key"):
            assert one[field] == two[field], (one["candidate"]["model"], field)
        assert one["verifier"]["extra"] == two["verifier"]["extra"]
        assert p1.returncode == p2.returncode and p1.files == p2.files, one["candidate"]["model"]
    (proof, p_proof), (changed, p_changed) = sorted(got[2], key=lambda rp: rp[0]["candidate"]["model"] != names[0])
    assert proof["verdict"] == "verified" and p_proof.files[COQCHK_RC].strip() == b"0", proof["reason"]
    assert changed["verdict"] == "rejected" and COQCHK_RC not in p_changed.files, changed["reason"]
