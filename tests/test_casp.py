"""Tests of harness/benchmarks/casp.py on the real casp-sample10 files (from the mirror in
``VERIKIT_DATA_MIRRORS``) and, for verdicts, with the real Frama-C through the harness.

The canaries of both modes (one per cheat class) run live with the real Frama-C, once per
session: the ``verikit run`` tests use the session's result cache (``shared_cache``:
test_reliability's code-from-spec run on 01_57 has the same canaries; it holds 01_57's
task-soundness run too). The gold runs on quick pairs and the single-candidate verdict
cases (``verdicts``, ONE run) are judged on the real Frama-C's recorded outputs
(``framac_recorded``: ``tests/recorded/runs/casp/``; refresh with ``python
scripts/record.py casp``). Candidates with a false postcondition get ``wp_timeout_s``
lowered so no goal waits for the paper's 60 s.
"""

from __future__ import annotations

import io
import json
import re
from collections import Counter
from pathlib import Path

import pytest
from recording import pipeline_sandbox
from rich.console import Console

from harness.benchmarks import Candidate, casp
from harness.model import sha256_text
from harness.runner import run
from harness.runspec import RunSettings, RunSpec
from harness.verifiers import VERDICTS

CASP_TASK_IDS = ["00_327", "01_57", "02_12", "03_379", "04_140", "05_125", "06_114", "07_71", "08_377",
                 "09_52"]
DS = {"name": "casp-sample10", "revision": "2dd260bfecc15e4a4614bdea2e3001021bf2d646"}
MODELS = {"deepseek/deepseek-chat", "gemini/gemini-2.5-flash", "openai/gpt-4o-mini", "openai/gpt-5.2"}
OPTIONS = {"opt": 1}  # build_job only stores the options; verification tests use real ones


def cand(task_id: str, output: str, model: str = "m", sample: int = 0) -> Candidate:
    return Candidate(task_id=task_id, model=model, sample=sample, output=output, origin="test")


def job(task, output: str, mode: str, model: str = "m"):
    return casp.build_job(task, cand(task.task_id, output, model), mode, OPTIONS, DS)


def check(job_, name: str) -> dict:
    return next(c for c in job_.checks if c["name"] == name)


# --- tasks ----------------------------------------------------------------------------------


def test_load_tasks_sample(casp_tasks, casp_sample_dir):
    assert sorted(casp_tasks) == CASP_TASK_IDS
    for tid, t in casp_tasks.items():
        d = casp_sample_dir / "casp_10" / tid
        assert t.prelude + t.contract == (d / "spec.acsl").read_text(), tid
        assert t.code == (d / "code.c").read_text(), tid
        assert t.spec == t.prelude + t.contract
        assert t.gold == t.spec + "\n" + t.code
        assert t.sha256 == sha256_text(t.gold)
        assert t.contract.startswith("/*@") and t.contract.rstrip().endswith("*/"), tid
        assert t.published["verified"] is True
        assert t.published["verified_goals"] == t.published["total_goals"] > 0
    assert casp_tasks["00_327"].published == {"file_name": "frama_c_files_v2/test_frama_c_1030.c",
                                              "verified": True, "verified_goals": 13, "total_goals": 13}
    assert casp_tasks["09_52"].published["total_goals"] == 52
    assert {tid: t.function for tid, t in casp_tasks.items()} == {
        "00_327": "array_zero", "01_57": "divmult", "02_12": "matcher", "03_379": "selectioninnerloop",
        "04_140": "g", "05_125": "noneBool", "06_114": "max_abs", "07_71": "decypher", "08_377": "check",
        "09_52": "mv_mult2"}


def test_prelude_of_pairs_with_dependencies(casp_tasks):
    t = casp_tasks["06_114"]
    assert "axiomatic abs" in t.prelude and "int max(int x, int y);" in t.prelude
    assert t.contract == "/*@ ensures \\result >= 0;\n  @ assigns \\nothing;\n*/"
    assert casp_tasks["01_57"].prelude == ""
    assert casp_tasks["02_12"].prelude.startswith("#include <limits.h>")


def test_split_spec():
    assert casp.split_spec("#include <a.h>\n/*@ logic integer z = 0; */\n/*@ ensures \\result == 0; */\n") == (
        "#include <a.h>\n/*@ logic integer z = 0; */\n", "/*@ ensures \\result == 0; */\n")
    assert casp.split_spec("/*@ requires a; */") == ("", "/*@ requires a; */")
    # something other than whitespace after the last annotation: no contract
    assert casp.split_spec("/*@ requires a; */\nint f(int a);\n") == ("/*@ requires a; */\nint f(int a);\n", "")
    assert casp.split_spec("") == ("", "")
    assert casp.split_spec("#define N 3\n") == ("#define N 3\n", "")


def test_make_task_names_the_file():
    with pytest.raises(casp.TaskError, match="somewhere/code.c"):
        casp.make_task("x", "/*@ requires 1; */", "int x = 3;\n", {}, "somewhere/code.c")
    with pytest.raises(casp.TaskError, match=r"somewhere/code.c: line 2"):
        casp.make_task("x", "", "int f(void) { return 0; }\n/* open", {}, "somewhere/code.c")


# --- candidates -----------------------------------------------------------------------------


def test_bundled_candidates(casp_fetched, casp_sample_dir):
    cands = casp.bundled_candidates(casp_fetched, "spec-from-code")
    assert len(cands) == 40
    assert Counter(c.model for c in cands) == {m: 10 for m in MODELS}
    assert Counter(c.task_id for c in cands) == {t: 4 for t in CASP_TASK_IDS}
    assert len({(c.task_id, c.model) for c in cands}) == 40
    for c in cands:
        assert c.sample == 0
        provider, model = c.model.split("/")
        rel = f"casp_10/{c.task_id}/code_with_llm_spec_{provider}_{model}.c"
        assert c.origin == f"bundled:{rel}"
        assert c.output == (casp_sample_dir / rel).read_text()
    assert casp.bundled_candidates(casp_fetched, "gold") == []
    assert casp.bundled_candidates(casp_fetched, "code-from-spec") == []


def test_gold_candidates(casp_tasks):
    tasks = list(casp_tasks.values())
    t = casp_tasks["01_57"]
    for mode, expected in (("gold", t.gold), ("spec-from-code", t.contract + "\n" + t.code),
                           ("code-from-spec", t.code)):
        cands = {c.task_id: c for c in casp.gold_candidates(tasks, mode)}
        assert len(cands) == 10
        assert cands["01_57"].output == expected
        assert cands["01_57"].model == "gold" and cands["01_57"].origin == "gold"


# --- build_job: gold ------------------------------------------------------------------------


@pytest.mark.parametrize("tid", CASP_TASK_IDS)
def test_gold_job_file_is_spec_newline_code(casp_tasks, casp_sample_dir, tid):
    t = casp_tasks[tid]
    j = job(t, t.gold, "gold", model="gold")
    d = casp_sample_dir / "casp_10" / tid
    assert j.files["candidate.c"] == (d / "spec.acsl").read_text() + "\n" + (d / "code.c").read_text()
    assert set(j.files) == {"candidate.c"}
    # sound.c, the task-soundness probe file, is the task's run (once per task)
    assert set(j.task_run) == {"sound.c"} and j.task_run["sound.c"].startswith(j.files["candidate.c"])
    assert j.precheck is None and j.checks == []
    assert (j.benchmark, j.benchmark_version, j.mode, j.task_id) == ("casp", casp.VERSION, "gold", tid)
    assert j.task_sha256 == t.sha256
    assert j.candidate == {"model": "gold", "sample": 0, "sha256": sha256_text(t.gold), "origin": "test"}


def test_unknown_mode(casp_tasks):
    with pytest.raises(ValueError, match="unknown CASP mode"):
        job(casp_tasks["01_57"], "x", "proof")


# --- build_job: spec-from-code --------------------------------------------------------------


def test_spec_from_code_uses_the_tasks_function_verbatim(casp_fetched, casp_tasks):
    t = casp_tasks["00_327"]
    c = next(c for c in casp.bundled_candidates(casp_fetched, "spec-from-code")
             if c.task_id == "00_327" and c.model == "openai/gpt-5.2")
    assert t.code not in c.output and "a[i] = 0;" in c.output  # the candidate reformatted the function
    j = casp.build_job(t, c, "spec-from-code", OPTIONS, DS)
    assert j.precheck is None
    assert check(j, "body-unchanged")["ok"] is True
    src = j.files["candidate.c"]
    assert src.endswith(t.code)
    assert "a[i] = 0;" not in src and "loop invariant 0 <= i <= n;\n" not in src
    header = c.output[: c.output.index("void array_zero")]
    assert src == t.prelude + header + t.code
    assert j.candidate["model"] == "openai/gpt-5.2" and j.candidate["sha256"] == sha256_text(c.output)


def test_spec_from_code_gold_contract_passes_checks(casp_tasks):
    t = casp_tasks["01_57"]
    j = job(t, t.contract + "\n" + t.code, "spec-from-code")
    assert j.precheck is None
    assert {c["name"]: c["ok"] for c in j.checks} == {"body-unchanged": True}  # the rest: on Frama-C's view
    assert j.files["candidate.c"] == t.gold
    assert j.files["region.c"] == t.contract + "\n"  # the candidate's own text, for the preprocessor check
    assert j.task_run["task.c"] == t.prelude + t.code + "\n"  # the fixed part: the function without a contract
    assert j.files["havoc.c"].endswith("int divmult(int a, int b) { int vk_havoc_result; return vk_havoc_result; }\n")
    assert j.options["function"] == "divmult"


def test_spec_from_code_body_changed_is_rejected(casp_tasks):
    t = casp_tasks["01_57"]
    changed = t.code.replace("(a / b) * b + (a % b)", "a")
    j = job(t, t.contract + "\n" + changed, "spec-from-code")
    assert j.precheck[0] == "rejected"
    assert "body-unchanged" in j.precheck[1]
    assert check(j, "body-unchanged")["ok"] is False
    assert "return a;" not in j.files["candidate.c"]  # the task's function is still what would be checked


def test_spec_from_code_reformatted_body_with_comments_is_accepted(casp_tasks):
    t = casp_tasks["01_57"]
    out = (t.contract + "\nint divmult(int a, int b) {\n  // keep\n  /*@ assert b != 0; */\n"
           "  return (a/b)*b+(a%b);\n}\n")
    j = job(t, out, "spec-from-code")
    assert j.precheck is None and check(j, "body-unchanged")["ok"]
    assert "assert b != 0" not in j.files["candidate.c"]


def test_spec_from_code_contract_only_output_is_accepted(casp_tasks):
    t = casp_tasks["01_57"]
    j = job(t, t.contract, "spec-from-code")
    assert j.precheck is None
    assert j.checks == []
    assert j.files["candidate.c"] == t.gold


def test_spec_from_code_without_acsl_is_invalid(casp_tasks):
    t = casp_tasks["01_57"]
    j = job(t, t.code, "spec-from-code")
    assert j.precheck == ("invalid", "the candidate contains no ACSL contract")
    j = job(t, "Sorry, I cannot help with that.", "spec-from-code")
    assert j.precheck[0] == "invalid"


def test_spec_from_code_unlexable_candidate_is_invalid(casp_tasks):
    t = casp_tasks["01_57"]
    j = job(t, "/*@ requires b != 0;\n ensures \\result == a;\n" + t.code, "spec-from-code")
    assert j.precheck[0] == "invalid"
    assert "cannot be lexed" in j.precheck[1] and "line 1" in j.precheck[1]


def test_spec_from_code_struct_return_type(casp_tasks):
    t = casp_tasks["05_125"]
    j = job(t, t.contract + "\n" + t.code, "spec-from-code")
    assert j.precheck is None
    assert j.files["candidate.c"] == t.gold
    assert "struct maybeBool noneBool () { struct maybeBool vk_havoc_result; return vk_havoc_result; }" \
        in j.files["havoc.c"]


def test_spec_from_code_comment_between_contract_and_function(casp_tasks):
    t = casp_tasks["01_57"]
    j = job(t, t.contract + "\n// divmult: the function to specify\n" + t.code, "spec-from-code")
    assert j.precheck is None, j.precheck


# --- build_job: code-from-spec --------------------------------------------------------------


def test_code_from_spec_keeps_the_tasks_contract_verbatim(casp_tasks):
    t = casp_tasks["06_114"]
    relaid = "/*@\n  ensures \\result >= 0;\n  assigns \\nothing;\n*/"  # same contract, other layout
    code = "int max_abs(int x, int y) {\n  return max(abs(x), abs(y));\n}"
    j = job(t, relaid + "\n" + code, "code-from-spec")
    assert j.precheck is None
    assert check(j, "contract-unchanged")["ok"] is True
    assert j.files["candidate.c"] == t.prelude + t.contract + "\n" + code + "\n"
    assert relaid not in j.files["candidate.c"]
    assert j.files["region.c"] == code + "\n"
    assert j.task_run["task.c"] == t.prelude + t.contract + "\nint max_abs(int x, int y);\n"
    assert "havoc.c" not in j.files


def test_code_from_spec_code_only(casp_tasks):
    t = casp_tasks["01_57"]
    j = job(t, "// my solution\n" + t.code + "\n// end\n", "code-from-spec")
    assert j.precheck is None
    assert j.checks == []
    # what the candidate writes after the function (helpers, comments) stays in the file
    assert j.files["candidate.c"] == "// my solution\n" + t.contract + "\n" + t.code + "\n// end\n\n"


@pytest.mark.parametrize("output, failed", [
    ("/*@ requires b != 0;\n    assigns \\nothing;\n    ensures \\result == a; */\n", "contract-unchanged"),
    # right before the function the block is read as its contract: rejected as changed
    ("/*@ axiomatic C { axiom c: \\false; } */\n", "contract-unchanged"),
])
def test_code_from_spec_changed_contract_or_axiom_is_rejected(casp_tasks, output, failed):
    t = casp_tasks["01_57"]
    j = job(t, output + t.code, "code-from-spec")
    assert j.precheck[0] == "rejected", j.checks
    assert failed in j.precheck[1]


def test_code_from_spec_missing_function_is_invalid(casp_tasks):
    t = casp_tasks["01_57"]
    for out in ("int other(int a, int b) { return a; }", "int divmult(int a, int b);", ""):
        j = job(t, out, "code-from-spec")
        assert j.precheck == ("invalid", "the candidate defines no function divmult()"), out


# --- published study results and canaries ---------------------------------------------------


def test_study_results(casp_fetched):
    study = casp.study_results(casp_fetched)
    assert len(study) == 40
    assert {m for _, m in study} == MODELS
    assert {v["verdict"] for v in study.values()} <= set(VERDICTS)
    bad = {k: v for k, v in study.items() if k[0] == "02_12"}
    assert len(bad) == 4
    for (tid, model), v in bad.items():
        assert v["verdict"] == "invalid" and v["returncode"] == 1
        assert re.search(r"\.c:\d+", v["reason"]), v["reason"]
    v = study[("00_327", "openai/gpt-5.2")]
    assert (v["verdict"], v["proved"], v["total"]) == ("verified", 15, 15)
    assert study[("00_327", "openai/gpt-4o-mini")]["verdict"] == "failed"


def test_canaries_expected_verdicts(casp_tasks):
    tasks = list(casp_tasks.values())
    assert casp.canaries(tasks, "gold") == []
    sfc = {c.model: (c, exp) for c, exp in casp.canaries(tasks, "spec-from-code")}
    assert {m: e for m, (_, e) in sfc.items()} == {
        "canary:gold-contract": ("verified",), "canary:requires-false": ("rejected",),
        "canary:inconsistent-requires": ("rejected",), "canary:no-ensures": ("rejected",),
        "canary:body-changed": ("rejected",), "canary:vacuous-in-disguise": ("rejected",),
        "canary:vacuous-predicate": ("rejected",), "canary:dead-behavior": ("rejected",),
        "canary:axiom": ("rejected",), "canary:preprocessor": ("rejected",), "canary:clause": ("rejected",),
        "canary:from-clause": ("rejected",), "canary:unfounded-logic": ("rejected",)}
    cfs = {c.model: (c, exp) for c, exp in casp.canaries(tasks, "code-from-spec")}
    assert {m: e for m, (_, e) in cfs.items()} == {
        "canary:gold-code": ("verified",), "canary:contract-changed": ("rejected",),
        "canary:axiom": ("rejected",), "canary:admit": ("rejected",), "canary:wrong-code": ("failed",),
        "canary:non-termination": ("failed",), "canary:exit": ("rejected",),
        "canary:trusted-declaration": ("rejected",), "canary:preprocessor": ("rejected",),
        "canary:signature": ("rejected",), "canary:dead-code-proof": ("rejected",),
        "canary:union-other-member": ("rejected",), "canary:bitfield-beyond-width": ("rejected",),
        "canary:builtin-attribute": ("rejected",), "canary:reserved-name": ("rejected",),
        "canary:variant-relation": ("rejected",), "canary:huge-local": ("rejected",),
        "canary:attribute": ("rejected",), "canary:builtin-call": ("rejected",), "canary:forward-goto": ("verified",),
        "canary:pointer-cast": ("rejected",), "canary:kr-definition": ("rejected",),
        "canary:uninitialised-read": ("rejected",)}
    for mode, table in (("spec-from-code", sfc), ("code-from-spec", cfs)):
        for model, (c, expected) in table.items():
            if c.task_id == casp.KIT_DEAD_CANARY.task_id:  # on the kit's own pair
                assert casp.build_job(casp.KIT_DEAD_CANARY, c, mode, OPTIONS, DS).precheck is None, model
                continue
            assert c.task_id == casp.CANARY_TASK == "01_57" and c.origin == "canary"
            j = casp.build_job(casp_tasks["01_57"], c, mode, OPTIONS, DS)
            if model in ("canary:body-changed", "canary:contract-changed"):
                assert j.precheck is not None and j.precheck[0] == expected[0], model
            else:
                assert j.precheck is None, model  # judged on Frama-C's view and WP


# --- real Frama-C -----------------------------------------------------------------------------


def _run(tmp_path: Path, cache: Path | None = None, **kw):
    settings = RunSettings(cache_dir=cache or tmp_path / "cache", data_dir=tmp_path / "data", progress=False,
                           command=["pytest"])
    return run(RunSpec(benchmark="casp", parallel=2, **kw), tmp_path / "out", settings=settings,
               console=Console(file=io.StringIO(), width=200))


def _write_predictions(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.realtool
@pytest.mark.slow
@pytest.mark.parametrize("mode", ["spec-from-code", "code-from-spec"])
def test_canaries_get_their_verdicts(casp_tasks, framac_host, isolated_cache, shared_cache, shared_task_runs, tmp_path,
                                     mode):
    t = casp_tasks["01_57"]
    output = t.contract + "\n" + t.code if mode == "spec-from-code" else t.code
    preds = _write_predictions(tmp_path / "p.jsonl", [{"task_id": "01_57", "model": "m", "sample": 0,
                                                       "output": output, "mode": mode}])
    report, manifest, code = _run(tmp_path, shared_cache, modes=[mode], task_ids=["01_57"], predictions=str(preds))
    assert code == 0
    can = report["canaries"]
    assert can["ok"] is True, can
    got = {x["model"]: x["verdict"] for x in can["results"]}
    expected = {c.model: exp[0] for c, exp in casp.canaries([t], mode)}
    assert got == expected
    assert report["metrics"][mode]["per_model"]["m"]["verified"] == 1
    assert report["metrics"][mode]["overall"]["n"] == 1  # canaries are not scored
    if mode == "spec-from-code":
        reason = next(x["reason"] for x in can["results"] if x["model"] == "canary:inconsistent-requires")
        assert "smoke" in reason  # rejected by the WP smoke test, not by a precheck


@pytest.mark.realtool
@pytest.mark.slow
def test_spec_from_code_run_on_the_canary_task(casp_tasks, framac_host, isolated_cache, shared_cache, shared_task_runs,
                                               tmp_path):
    report, _, code = _run(tmp_path, shared_cache, modes=["spec-from-code"], task_ids=["01_57"])
    assert report["canaries"]["ok"] is True
    got = {x["model"]: x["verdict"] for x in report["canaries"]["results"]}
    assert got == {c.model: exp[0] for c, exp in casp.canaries([casp_tasks["01_57"]], "spec-from-code")}
    assert code == 0


@pytest.mark.recorded
def test_gold_run_on_quick_pairs(casp_tasks, framac_recorded, isolated_cache, tmp_path):
    tids = ["00_327", "04_140", "06_114"]
    with pipeline_sandbox(framac_recorded.sandbox):
        report, manifest, code = _run(tmp_path, modes=["gold"], task_ids=tids)
    assert code == 0
    # 06_114 is a known defect of the pinned data (its prelude's axiom is false at INT_MIN;
    # harness/datasets/pins/casp-sample10.yaml): its gold record is marked and kept out
    gold = report["metrics"]["gold"]
    assert gold["overall"]["verified"] == 2 and gold["overall"]["n"] == 2
    assert list(gold["excluded"]) == ["06_114"] and gold["excluded"]["06_114"].startswith("inconsistent-task: ")
    assert any(n.startswith("gold: kept out of the metrics") and "06_114" in n for n in report["notes"])
    assert report["canaries"] == {"ok": True, "results": []}
    rows = {r["task_id"]: r for r in report["comparison"]}
    assert sorted(rows) == tids
    major = int(framac_recorded.probed.versions["frama-c"].split(".")[0])
    for tid, row in rows.items():
        assert row["agree"] is True and row["reproduced"]["verdict"] == "verified"
        assert row["published"]["total"] == casp_tasks[tid].published["total_goals"]
        assert row["reproduced"]["proved"] == row["reproduced"]["total"]
        for d in row["differences"]:
            assert d["field"] == "goals.total", d  # proved differs exactly as much as total
            if major < 26:
                # Frama-C 30 adds a 'Terminating' and an 'Unreachable' goal per function
                assert d["published"] - d["reproduced"] == 2, d
                assert "Terminating" in d["explanation"] and "Unreachable" in d["explanation"], d
    if major < 26:
        assert all(row["differences"] for row in rows.values())
    recs = [json.loads(x) for x in (tmp_path / "out" / "records.jsonl").read_text().splitlines()]
    assert sorted(r["task_id"] for r in recs) == sorted(tids)
    assert all(r["verifier"]["options"]["smoke_tests"] is False for r in recs)  # paper protocol
    assert {r["task_id"]: r["verdict"] for r in recs if r.get("task_defect")} == {"06_114": "verified"}


@pytest.mark.recorded
def test_gold_goal_difference_not_explained_by_terminating(casp_tasks, framac_recorded, isolated_cache, tmp_path):
    """01_57: the published Frama-C 30 total is 12 (10 scheduled + Terminating + Unreachable,
    see the study's log); Frama-C 25 makes 9 goals. The report must still explain the
    difference, as toolchain drift."""
    with pipeline_sandbox(framac_recorded.sandbox):
        report, _, code = _run(tmp_path, modes=["gold"], task_ids=["01_57"])
    assert code == 0
    (row,) = report["comparison"]
    assert row["agree"] is True
    for d in row["differences"]:
        assert d["field"] == "goals.total"
        assert d["explanation"]
        if d["published"] - d["reproduced"] != 2:
            assert "toolchain drift" in d["explanation"]
            assert f"{d['published'] - d['reproduced']:+d}" in d["explanation"]


#: The single-candidate verdict cases of this module: name -> (task id, mode, output(tasks)).
#: They are judged as ONE run (``verdicts``) on the recorded real outputs, each test reads
#: its records.
PROTOTYPE_REQUIRES = ("/*@ requires a == 0;\n    assigns \\nothing;\n    ensures \\result == a; */\n"
                      "int divmult(int a, int b);\n\nint divmult(int a, int b)\n{\n  return 0;\n}\n")
HEADER_DEFINE = ("#define return return 0;\n/*@ requires b != 0; requires b != -1; assigns \\nothing;\n"
                 "    ensures \\result == 0; */\n")
VERDICT_CASES = {
    "prototype contract": ("01_57", "code-from-spec", lambda ts: PROTOTYPE_REQUIRES),
    "header #define": ("01_57", "spec-from-code", lambda ts: HEADER_DEFINE + ts["01_57"].code),
    "requires only": ("01_57", "spec-from-code",
                      lambda ts: "/*@ requires b != 0;\n    requires b != -1; */\n" + ts["01_57"].code),
    "02_12 gold contract": ("02_12", "spec-from-code", lambda ts: ts["02_12"].contract + "\n" + ts["02_12"].code),
}


@pytest.fixture(scope="module")
def verdicts(casp_tasks, framac_recorded, tmp_path_factory) -> dict:
    """name -> (job, record) of every :data:`VERDICT_CASES` case, from one run."""
    opts = framac_recorded.options(smoke=True, wp_timeout_s=10)
    jobs = {name: casp.build_job(casp_tasks[tid], cand(tid, out(casp_tasks), model=f"m{i}"), mode, opts, DS)
            for i, (name, (tid, mode, out)) in enumerate(VERDICT_CASES.items())}
    recs = {r["candidate"]["model"]: r
            for r in framac_recorded.run_casp_jobs(list(jobs.values()), tmp_path_factory.mktemp("verdicts"), shared=True)}
    return {name: (j, recs[j.candidate["model"]]) for name, j in jobs.items()}


@pytest.mark.recorded
def test_code_from_spec_prototype_contract_cannot_strengthen_the_precondition(verdicts):
    _, rec = verdicts["prototype contract"]
    assert rec["verdict"] == "rejected", (rec["verdict"], rec["reason"])


@pytest.mark.recorded
def test_spec_from_code_header_cannot_redefine_the_tasks_code(casp_tasks, verdicts):
    j, rec = verdicts["header #define"]
    assert j.files["candidate.c"].endswith(casp_tasks["01_57"].code)
    assert rec["verdict"] != "verified", rec["reason"]


@pytest.mark.recorded
def test_precondition_only_contract_is_vacuous(verdicts):
    """A contract with requires but no ensures states nothing about the result: rejected
    in spec-from-code, even CASP's own gold contract of 02_12 (a safety contract that
    only makes the RTE goals provable); the record says why."""
    for name in ("requires only", "02_12 gold contract"):
        _, rec = verdicts[name]
        assert rec["verdict"] == "rejected", rec["reason"]
        assert "the contract has no ensures clause" in rec["reason"]
        assert {c["name"]: c["ok"] for c in rec["checks"]}["not-vacuous"] is False
