"""Tests of harness/verifiers/lean.py.

Lean 4.21 + Mathlib cannot be installed here, so:

- ``recorded``: ``parse`` on real outputs of Lean stored in tests/recorded/lean/ (each with
  a ``.provenance.json`` sidecar: repository/path/commit or URL, tool version);
- the task-file functions (``theorem``, ``declared_axioms``, ``splice``) on all 600 real
  NTP4VC Lean files of the data mirror (``VERIKIT_DATA_MIRRORS``; skipped when unset);
- the command line and options, which need no tool output.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness.model import VERDICTS, ProcResult, termination
from harness.registry import verifier as get_verifier
from harness.benchmarks.ntp4vc.data import LEAN_PROJECT
from harness.verifiers.lean import SOURCE, STANDARD_AXIOMS, Lean, axiom_reports, blank, diagnostics
from harness.verifiers.proof import statement_sha256

RECORDED = Path(__file__).parent / "recorded" / "lean"
LEAN = Lean()


@pytest.fixture(scope="module")
def tasks(ntp4vc_task_files) -> list[tuple[str, str]]:
    return ntp4vc_task_files("lean")


def _recorded(name: str) -> str:
    text = (RECORDED / name).read_text(encoding="utf-8")
    meta = json.loads((RECORDED / f"{name}.provenance.json").read_text())
    assert meta["source"] and meta["tool_version"]
    return text


def _run(stdout: str, returncode: int = 0, **flags) -> ProcResult:
    return ProcResult(argv=["lake"], returncode=returncode, stdout=stdout, **flags)


# --- task files (all 600 real NTP4VC Lean files) ------------------------------------------

@pytest.mark.slow
def test_theorem_on_all_600_tasks(tasks):
    assert len(tasks) == 600
    for rel, text in tasks:
        th = LEAN.theorem(text, rel)
        assert text[th.start:th.end] == "sorry", rel
        assert re.search(r":=\s*$", text[:th.start]), rel
        namespace = re.search(r"^namespace (\S+)$", text, re.M).group(1)
        assert th.name.startswith(namespace + ".") and th.name.count(".") == 1, (rel, th.name)
        assert th.statement.startswith("theorem ") and not th.statement.rstrip().endswith(":=")
        assert th.statement_sha256 == statement_sha256(" \n ".join(th.statement.split()))
        assert text.splitlines()[th.line - 1].startswith("theorem"), rel


@pytest.mark.slow
def test_declared_axioms_on_all_600_tasks(tasks):
    for rel, text in tasks:
        namespace = re.search(r"^namespace (\S+)$", text, re.M).group(1)
        expected = {f"{namespace}.{m}" for m in re.findall(r"^axiom (\S+)", text, re.M)}
        assert LEAN.declared_axioms(text) == expected, rel


def test_splice_on_all_600_tasks(tasks):
    for rel, text in tasks[:: 37]:
        th = LEAN.theorem(text, rel)
        out = LEAN.splice(text, th, "by\n  simp")
        assert out.count("sorry") == 0
        assert out.rstrip().endswith(f"#print axioms {th.name}")
        assert out.index("by\n  simp") == th.start
        ns = th.name.split(".")[0]
        assert out.index(f"end {ns}") < out.index("#print axioms"), "the report must be outside the namespace"
        assert LEAN.theorem(out.replace("by\n  simp", "sorry"), rel).statement == th.statement


def test_theorem_errors_name_file_and_line():
    base = "namespace N\ntheorem a : True\n  := sorry\nend N\n"
    assert LEAN.theorem(base, "x.lean").name == "N.a"
    with pytest.raises(ValueError, match=r"^x\.lean:6: expected exactly one theorem, found 2"):
        LEAN.theorem(base + "\ntheorem b : True := sorry\n", "x.lean")
    with pytest.raises(ValueError, match=r"^x\.lean:1: expected exactly one theorem, found 0"):
        LEAN.theorem("def f := 1\n", "x.lean")
    with pytest.raises(ValueError, match=r"^x\.lean:2: expected exactly one 'sorry'"):
        LEAN.theorem("namespace N\ntheorem a : True := trivial\nend N\n", "x.lean")
    with pytest.raises(ValueError, match=r"^x\.lean:3: the placeholder must be"):
        LEAN.theorem("theorem a : True := by\n  skip\n  sorry\n", "x.lean")
    with pytest.raises(ValueError, match=r"^x\.lean:2: unterminated comment"):
        LEAN.theorem("theorem a : True := sorry\n/- open", "x.lean")
    # comments and strings do not count
    th = LEAN.theorem('-- theorem x : sorry\n/- theorem y /- nested -/ sorry -/\ntheorem a : "sorry" = "" := by sorry\n',
                      "x.lean")
    assert th.name == "a" and th.line == 3 and th.statement == 'theorem a : "sorry" = ""'
    assert LEAN.splice("theorem a : True := by sorry\n", LEAN.theorem("theorem a : True := by sorry\n", "x"),
                       "by trivial").startswith("theorem a : True := by trivial\n")


def test_namespaces_sections_and_root_in_declared_axioms():
    text = ("axiom top : Nat\nnamespace A.B\naxiom x : Nat\nsection S\naxiom y : Nat\nend S\n"
            "namespace C\naxiom «z w» : Nat\nend C\naxiom _root_.r : Nat\nend A.B\naxiom t : Nat\n")
    assert LEAN.declared_axioms(text) == {"top", "A.B.x", "A.B.y", "A.B.C.z w", "r", "t"}


def test_declared_axioms_of_recorded_lean_source():
    assert LEAN.declared_axioms(_recorded("collectAxioms.lean")) == {"A0", "A1", "A2"}


# --- forbidden -------------------------------------------------------------------------

@pytest.mark.parametrize("proof, finding", [
    ("by sorry", "sorry"),
    ("by\n  admit", "admit"),
    ("by native_decide", "native_decide"),
    ("by decide +native", "native"),
    ("by exact Lean.ofReduceBool _ _ rfl", "ofReduceBool"),
    ("by\n  simp\nend X\naxiom cheat : False", "axiom"),
    ("by\n  simp\nend X", "end"),
    ("by exact unsafeCast ()", "unsafe"),
    ("by\n  set_option debug.skipKernelTC true in\n  exact h", "debug.skipKernelTC"),
    ("by run_tac Lean.logInfo \"x\"", "run_tac"),
    ("by simp\n#exit", "#exit"),
    ("by simp\n#print axioms foo", "#print"),
    ("by simp\n@[csimp] theorem t : 1 = 1 := rfl", "csimp"),
    ("by simp\nmacro \"simp\" : tactic => `(tactic| sorry)", "macro"),
    ("by simp\nimport Mathlib", "import"),
    ("by exact s!\"{sorry}\"", "sorry"),
    ("by simp /- never closed", "unterminated comment"),
    ("by exact \"never closed", "unterminated string"),
    ("by simp\nopaque o : Nat", "opaque"),
])
def test_forbidden_findings(proof, finding):
    found = LEAN.forbidden(proof)
    assert any(finding in f for f in found), found


@pytest.mark.parametrize("proof", [
    "by\n  simp [List.foldl, h'] -- sorry: no, that is a comment\n  /- admit -/ omega",
    "by\n  set_option maxHeartbeats 400000 in\n  nlinarith [sq_nonneg (a - b), Classical.em p]",
    "by\n  intro x\n  exact ⟨'a', \"axiom sorry\", #[1, 2]⟩",
    "by\n  open Classical in\n  decide",
    "by\n  rcases h with ⟨x, hx⟩\n  exact hx.elim",
])
def test_forbidden_accepts_ordinary_proofs(proof):
    assert LEAN.forbidden(proof) == []


def test_blank_keeps_offsets():
    src = 'a -- c\n/- x /- y -/ z -/ "s\\"t" \'c\' h\' r#"raw"# b'
    out = blank(src)
    assert len(out) == len(src) and out.split() == ["a", "h'", "b"]


# --- command line ------------------------------------------------------------------------

class _Probed:
    versions = {"lean": "4.21.0", "lake": "5.0.0"}


def test_options_and_command():
    opts = LEAN.options(_Probed(), theorem="N.a", allowed_assumptions=["N.ax"], lean_project=LEAN_PROJECT)
    assert opts["verifier_module"] == "lean/1" and opts["lean_version"] == "4.21.0"
    assert opts["lean_project"] == LEAN_PROJECT and opts["wall_s"] > 0
    argv, env, collect = LEAN.command(opts)
    assert argv == ["lake", "-d", LEAN_PROJECT, "env", "lean", SOURCE] and env == {} and collect == []
    argv, _, _ = LEAN.command({**opts, "max_heartbeats": 400000, "lean_project": "/p"})
    assert argv == ["lake", "-d", "/p", "env", "lean", "-DmaxHeartbeats=400000", SOURCE]
    assert get_verifier("lean").name == "lean" and LEAN.toolchain == "lean"


# --- parse: real recorded outputs ----------------------------------------------------------

@pytest.mark.recorded
def test_parse_recorded_errors_sanitychecks():
    log = _recorded("sanitychecks.lean.expected.out")
    diags = diagnostics(log)
    assert [(d["line"], d["col"]) for d in diags] == [(1, 8), (4, 8), (7, 7), (10, 0), (18, 12), (20, 0),
                                                      (22, 12), (25, 12)]
    res = LEAN.parse(_run(log, returncode=1), {"theorem_line": 0})
    assert res.verdict == "invalid"
    assert res.reason == "sanitychecks.lean:1:8: error: fail to show termination for"
    assert len(res.messages) == 8 and res.extra["task_loads"] is True
    # an error before the theorem's line means the task file itself does not load
    res = LEAN.parse(_run(log, returncode=1), {"theorem_line": 3})
    assert res.verdict == "invalid" and not res.extra["task_loads"] and "itself does not load" in res.reason


@pytest.mark.recorded
def test_parse_recorded_sorry_warnings_and_error():
    log = _recorded("1007.lean.expected.out")
    res = LEAN.parse(_run(log, returncode=1), {"theorem_line": 50})
    assert res.verdict == "invalid" and res.reason.startswith("1007.lean:56:64: error: failed to synthesize")
    # the same warnings without the error: a sorry, whatever the axiom report says
    warnings = "\n".join(line for line in log.splitlines() if "warning" in line)
    report = _recorded("manual-axioms.messages").splitlines()[4]  # 'addThree' does not depend on any axioms
    res = LEAN.parse(_run(warnings + "\n" + report), {"theorem": "addThree"})
    assert res.verdict == "rejected" and "sorry" in res.reason


@pytest.mark.recorded
@pytest.mark.parametrize("name, verdict, axioms", [
    ("nextOdd", "verified", ["propext", "Classical.choice", "Quot.sound"]),
    ("largeNumber", "rejected", ["Lean.trustCompiler"]),
    ("bigSum", "rejected", ["Lean.ofReduceBool", "Lean.trustCompiler"]),
    ("lazy", "rejected", ["sorryAx"]),
    ("addThree", "verified", []),
    ("excludedMiddle", "verified", ["propext", "Classical.choice", "Quot.sound"]),
    ("simpleEquality", "verified", ["propext"]),
])
def test_parse_recorded_axiom_reports(name, verdict, axioms):
    line = next(m for m in _recorded("manual-axioms.messages").splitlines() if m.startswith(f"'{name}'"))
    res = LEAN.parse(_run(line + "\n"), {"theorem": name})
    assert res.verdict == verdict, res.reason
    assert res.extra["assumptions"] == axioms
    if name == "lazy":
        assert "sorryAx" in res.reason


@pytest.mark.recorded
def test_parse_recorded_task_axioms_and_theorem_itself():
    log = _recorded("collectAxioms.messages")
    assert axiom_reports(log) == [("A2", ["A0", "A1", "A2"]),
                                  ("one_add_one", ["Lean.ofReduceBool", "Lean.trustCompiler"])]
    declared = sorted(LEAN.declared_axioms(_recorded("collectAxioms.lean")))
    res = LEAN.parse(_run(log), {"theorem": "A2"})
    assert res.verdict == "rejected" and "unexpected axiom A0" in res.reason
    res = LEAN.parse(_run(log), {"theorem": "A2", "allowed_assumptions": declared})
    assert res.verdict == "rejected" and "A2 itself" in res.reason
    res = LEAN.parse(_run(log), {"theorem": "one_add_one", "allowed_assumptions": declared})
    assert res.verdict == "rejected" and "Lean.ofReduceBool" in res.reason
    assert LEAN.forbidden("by\n  native_decide")  # and the scan would have refused it first


@pytest.mark.recorded
def test_parse_recorded_lake_env_lean_transcript():
    log = _recorded("coursia-pr15033.lake-env-lean.out")
    res = LEAN.parse(_run(log), {"theorem": "pd_cooperate_not_ne"})
    assert res.verdict == "verified" and res.extra["assumptions"] == list(STANDARD_AXIOMS)
    res = LEAN.parse(_run(log), {"theorem": "N.goal0"})
    assert res.verdict == "rejected" and "no '#print axioms' report for N.goal0" in res.reason
    res = LEAN.parse(_run(log + log), {"theorem": "pd_cooperate_not_ne"})
    assert res.verdict == "rejected" and "2 axiom reports" in res.reason


@pytest.mark.recorded
def test_parse_recorded_qualified_name_with_sorry():
    res = LEAN.parse(_run(_recorded("mathlib4-issue272.out")), {"theorem": "List.not_mem_nil"})
    assert res.verdict == "rejected" and res.extra["assumptions"] == ["sorryAx"]


# --- parse: run-level outcomes (no tool output involved) ------------------------------------

def test_parse_run_level_outcomes():
    # the sandbox's endings are mapped before parse, as the executor does
    def reading(proc):
        return termination(proc, LEAN.name) or LEAN.parse(proc)

    assert reading(ProcResult(argv=["lake"], returncode=None, start_error="lake: not found")).verdict \
        == "infra_error"
    assert reading(_run("", returncode=-9, timed_out=True, wall_s=600.0)).verdict == "timeout"
    assert reading(_run("", returncode=-9, memout=True, max_rss_mb=9000)).verdict == "memout"
    assert LEAN.parse(_run("", returncode=0, output_truncated=True)).verdict == "failed"
    assert LEAN.parse(_run("", returncode=134)).verdict == "infra_error"  # crash, no diagnostics
    res = LEAN.parse(_run("", returncode=0), {"theorem": "N.a"})  # clean run, no report: fail closed
    assert res.verdict == "rejected" and "no '#print axioms' report" in res.reason
    assert all(r in VERDICTS for r in ("infra_error", "timeout", "memout", "failed", "rejected"))


def test_strings_inside_block_comments_are_not_special():
    """Lean's ``/- -/`` comments nest and have no strings (unlike Coq's): ``"/-"`` inside
    one opens a nested comment, so the sorry below is commented out for Lean, and the
    shared helper (``proof.nested_end`` without ``quote``) agrees."""
    assert "sorry" not in blank('/- "/-" -/ sorry -/ exact rfl')
    assert blank('/- "/-" -/ sorry -/ exact rfl').strip() == "exact rfl"
    assert blank('/- "-/ sorry').strip() == "sorry"  # the comment ends at the first -/
