"""The Dafny verifier module on recorded real outputs, both CLI dialects.

- Dafny 2.3 (dialect 2): outputs recorded from real runs in the dafny image by
  ``python tests/test_dafny_container.py --record`` (tests/recorded/dafny/dafny2/*/meta.json
  names the image, versions and command); the container tests run the same tool live.
- Dafny 4.x (dialect 4): cannot be installed here; outputs copied verbatim from
  dafny-lang/dafny's own integration tests (tests/recorded/dafny/dafny4/PROVENANCE.json):
  the parser is tested on them, the dialect-4 command line only as text (untested
  against a real Dafny 4).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from harness.benchmarks import dafny_intent as di
from harness.model import ProcResult, termination
from harness.registry import verifier as get_verifier
from harness.verifiers.dafny import Dafny, boogie_name, dialect_for, parse_file_output

REC = Path(__file__).parent / "recorded" / "dafny"
pytestmark = pytest.mark.recorded


def _units(src: str) -> list:
    return [[d.name, d.line, d.end_line] for d in di.declarations(src, "x") if d.kind in ("method", "lemma")]


def test_dialects_and_command_lines():
    v = get_verifier("dafny")
    assert isinstance(v, Dafny) and dialect_for("2.3.0.10506") == "2" and dialect_for("4.6.0") == "4"
    assert dialect_for(None) == "2"
    o2 = {"dialect": "2", "time_limit_s": 30, "rlimit": 20_000_000}
    assert v.file_argv(o2, "batch.dfy") == ["dafny", "/compile:0", "/nologo", "/timeLimit:30", "/rlimit:20000000",
                                            "/xml:batch.dfy.xml", "batch.dfy"]
    o4 = dict(o2, dialect="4")
    assert v.file_argv(o4, "batch.dfy") == ["dafny", "verify", "--allow-warnings", "--verification-time-limit", "30",
                                            "--resource-limit", "20000000", "batch.dfy"]
    argv, env, collect = v.command(dict(o2, strategy="batched", batch="batch.dfy", separate=["checks/A.dfy"]))
    script = argv[2]
    assert argv[:2] == ["sh", "-c"] and script.index("batch.dfy") < script.index("checks/A.dfy")
    assert "resolution/type errors? detected" in script
    assert collect == ["batch.dfy.out", "batch.dfy.rc", "batch.dfy.xml", "checks/A.dfy.out", "checks/A.dfy.rc",
                       "checks/A.dfy.xml"]
    argv, _, collect = v.command(dict(o4, strategy="separate", batch="batch.dfy", separate=["checks/A.dfy"]))
    assert "batch.dfy" not in argv[2] and collect == ["checks/A.dfy.out", "checks/A.dfy.rc"]
    assert boogie_name("VkT1Correct") == "Impl$$_module.__default.VkT1Correct"
    assert boogie_name("a_b") == "Impl$$_module.__default.a__b"


# ------------------------------------------------------------------ Dafny 4 (recorded)
def _d4(name):
    src = (REC / "dafny4" / name).read_text()
    out = (REC / "dafny4" / f"{name}.expect").read_text()
    return src, out


def test_dafny4_assertion_errors_are_attributed_to_their_method():
    src, out = _d4("errorLimit.dfy")
    per, outcome = parse_file_output(out, _units(src), "4", None, "errorLimit.dfy")
    assert outcome == "completed"
    assert per["m"]["status"] == "failed" and per["m"]["failure"] == "other" and len(per["m"]["messages"]) == 6


def test_dafny4_timeout():
    src, out = _d4("defaultTimeLimit.dfy")
    per, outcome = parse_file_output(out, _units(src), "4", None, "defaultTimeLimit.dfy")
    assert outcome == "completed" and per == {"Foo": {"status": "timeout", "failure": None, "time_s": None,
                                                      "messages": [per["Foo"]["messages"][0]]}}
    assert "timed out" in per["Foo"]["messages"][0]


def test_dafny4_out_of_resource():
    src, out = _d4("outOfResourceAndIsolateAssertions.dfy")
    per, outcome = parse_file_output(out, _units(src), "4", None, "outOfResourceAndIsolateAssertions.dfy")
    assert outcome == "completed" and per["L"]["status"] == "out_of_resource"


def test_dafny4_provenance_is_recorded():
    prov = json.loads((REC / "dafny4" / "PROVENANCE.json").read_text())
    for f in (REC / "dafny4").glob("*.dfy*"):
        assert f.name in prov["files"] and len(prov["files"][f.name]["commit"]) == 40


# ------------------------------------------------------------------ Dafny 2.3 (recorded)
def _case(name):
    d = REC / "dafny2" / name
    if not d.is_dir():
        pytest.fail(f"{d} missing: record it with 'python tests/test_dafny_container.py --record'")
    opts = json.loads((d / "options.json").read_text())
    files = {p.name[:-3].replace("__", "/"): gzip.decompress(p.read_bytes()) for p in (d / "files").glob("*.gz")}
    meta = json.loads((d / "meta.json").read_text())
    proc = ProcResult(argv=meta["argv"], returncode=meta["exit_code"], stdout=(d / "stdout.txt").read_text(),
                      files=files)
    return opts, proc, meta


def test_dafny2_batch_per_method_results():
    opts, proc, meta = _case("task2-batched")
    assert meta["dafny"].startswith("2.3")
    res = Dafny().parse(proc, opts)
    st = {g["name"]: g for g in res.goal_results}
    assert len(st) == 39 and not res.extra["fallback"]  # 3 tests x (correct, smoke, 5 mutants, 5 refutations) + 3 probes
    assert all(st[f"VkT{t}Correct"]["status"] == "verified" for t in (1, 2, 3))
    assert all(st[f"VkT{t}Smoke"]["status"] == "failed" for t in (1, 2, 3))
    assert st["VkT1Probe1"]["status"] == st["VkT1Probe2"]["status"] == "verified"  # [4], [5]
    assert st["VkT1Probe3"]["status"] == "failed" and st["VkT1Probe3"]["failure"] == "postcondition"  # [6]
    assert all(g["time_s"] is not None for g in res.goal_results)  # from the /xml report
    s = di.score_checks(opts["checks"], res.goal_results)
    assert s["correctness"] == 1 and s["completeness_paper"] < 1
    # every mutant the paper's count rejects is refuted on positive evidence here
    assert s["completeness"] == s["completeness_paper"] and s["unknown"] == 0


def test_dafny2_resolution_error_falls_back_to_one_process_per_check():
    opts, proc, _ = _case("task17-fallback")
    res = Dafny().parse(proc, opts)
    assert res.extra["fallback"] and "resolution/type error" in res.extra["stopped"]["batch.dfy"]
    assert {g["status"] for g in res.goal_results} == {"invalid"} and res.verdict == "invalid"
    assert {r["file"] for r in res.extra["runs"]} == {"batch.dfy", *opts["separate"]}
    assert "sidee" in res.goal_results[0]["messages"][0]


def test_dafny2_resource_limit_is_neither_verified_nor_failed():
    opts, proc, _ = _case("task2-rlimit")
    assert "Invalid PING response" in proc.files["batch.dfy.out"].decode()
    res = Dafny().parse(proc, opts)
    assert {g["status"] for g in res.goal_results} == {"out_of_resource"}
    assert res.verdict == "failed" and res.goals.proved == 0


def test_dafny2_timeout():
    opts, proc, _ = _case("timeout")
    res = Dafny().parse(proc, opts)
    assert res.goal_results[0]["status"] == "timeout"


def test_missing_output_is_infra_error_and_a_crash_is_the_candidates():
    """A run whose script left no Dafny output at all is the kit's side
    (``infra_error``); Dafny started on the candidate's files and crashed (no summary, no
    parse/resolution message) is the candidate's: ``failed``, never retried or dropped."""
    v = Dafny()
    opts = {"dialect": "2", "units": {"batch.dfy": [["VkT1Correct", 1, 5]]}, "batch": "batch.dfy", "separate": []}
    assert v.parse(ProcResult(argv=[], returncode=0), opts).verdict == "infra_error"
    crash = ProcResult(argv=[], returncode=0, files={"batch.dfy.out": b"Unhandled Exception: boom\n",
                                                       "batch.dfy.rc": b"134\n"})
    res = v.parse(crash, opts)
    assert res.verdict == "failed" and "crashed on the candidate's input" in res.reason
    assert res.extra["crashed"] and "boom" in res.reason


@pytest.mark.parametrize("flags, verdict", [
    ({"timed_out": True}, "timeout"),
    ({"memout": True, "max_rss_mb": 4096.0}, "memout"),
    ({"start_error": "no sh"}, "infra_error"),
])
def test_job_level_outcomes(flags, verdict):
    """The sandbox's ending (wall time, memory, could not start) is mapped once, by
    ``model.termination`` in the executor before ``Dafny.parse``; the verifier does not map
    it itself."""
    v = get_verifier("dafny")
    proc = ProcResult(argv=["sh", "-c", "dafny ..."], returncode=None if "start_error" in flags else -9, **flags)
    res = termination(proc, v.name)
    assert res is not None and res.verdict == verdict and res.goals is None
    assert res.reason.startswith("dafny ")
    # a run that ended by itself is left to the verifier
    assert termination(ProcResult(argv=[], returncode=0), v.name) is None


def test_program_view_reads_dafnys_printout():
    """The declarations as Dafny 2.3 printed them (recorded ``/dprint`` output,
    tests/recorded/dafny/dafny2/dprint/): body-less functions, attributes in any position,
    ``assume`` statements in clauses and bodies, in both printed forms."""
    from harness.verifiers.dafny import program_view

    d = Path(__file__).parent / "recorded" / "dafny" / "dafny2" / "dprint"
    v = program_view((d / "hidden.dfy.dprint").read_text())
    assert v["error"] is None and v["unclassified"] == []
    got = {x["name"]: (x["kind"], x["body"], x["clauses"], x["assume"]) for x in v["decls"]}
    assert got == {"Id": ("function", True, {}, 0), "Oops": ("function", False, {"ensures": 1}, 0),
                   "D": ("predicate", True, {}, 0), "VkT1Correct": ("method", True, {"ensures": 2}, 2)}
    v = program_view((d / "resolved.dfy.dprint").read_text())
    assert v["error"] is None and v["unclassified"] == []
    by = {x["name"]: x for x in v["decls"]}
    assert set(by) == {"Lie", "Oops", "P", "L", "VkT1Correct"}  # nothing of the _System module
    assert by["P"]["attributes"] == ["verify"] and by["P"]["attributes_all"] == {"verify": 1, "trigger": 1}
    assert by["L"]["kind"] == "lemma" and not by["Oops"]["body"]
    assert by["VkT1Correct"]["attributes_all"] == {"axiom": 1} and by["VkT1Correct"]["assume"] == 2
    assert program_view("method M() {}\n")["error"]  # not a printout: fails closed
