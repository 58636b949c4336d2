"""harness/verifiers/rocq.py without a prover: the Coq lexer, theorem/placeholder search
on all 600 real task files, the integrity scan, the assumption-report parser, and the
verdicts from coqc outputs recorded with the real Coq 8.20.1 of the rocq image
(tests/recorded/rocq/, each file says how it was produced). The real prover runs in
tests/test_ntp4vc_rocq.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.benchmarks import ntp4vc
from harness.model import ProcResult, termination
from harness.registry import verifier as get_verifier
from harness.verifiers.proof import statement_sha256
from harness.verifiers.rocq import FORBIDDEN, REPORT, Rocq, blank_comments, parse_assumptions, sentences

RECORDED = Path(__file__).parent / "recorded" / "rocq"
POWER = "pearl/word_common_factor::word_common_factor_Top_powerqtvc"


@pytest.fixture(scope="module")
def fetched(ntp4vc_fetched):
    return ntp4vc_fetched


@pytest.fixture(scope="module")
def tasks(fetched):
    return {t.task_id: t for t in ntp4vc.load_tasks(fetched)}


def text(fetched, task) -> str:
    return fetched.files[task.rocq].read_text(encoding="utf-8")


def test_get_verifier_returns_rocq():
    v = get_verifier("rocq")
    assert isinstance(v, Rocq) and v.toolchain == "rocq"


def test_sentences_skip_comments_strings_and_qualified_names():
    src = 'Require Import Why3.Base. (* a comment. (* nested. *) *)\nDefinition s := "a. b""." .\nLemma x : 1 = 1.'
    got = [s.text.split()[0] for s in sentences(src)]
    assert got == ["Require", "Definition", "Lemma"]
    assert sentences(src)[2].line == 3


def test_unterminated_comment_is_an_error_with_line():
    with pytest.raises(ValueError, match="line 2: unterminated comment"):
        blank_comments("Lemma x : True.\n(* open")


def test_theorem_found_in_all_600_task_files(fetched, tasks):
    v = Rocq()
    names = set()
    for t in tasks.values():
        src = text(fetched, t)
        thm = v.theorem(src, t.rocq)
        assert src[thm.start:thm.end] == "Admitted."
        assert src[thm.start - len(thm.statement) - 1:thm.start].startswith(thm.statement)
        assert thm.statement_sha256 == statement_sha256(thm.statement)
        names.add(thm.name)
    assert "power'vc" in names and any(n.startswith("goal") for n in names)


def test_theorem_errors_name_file_and_line():
    v = Rocq()
    with pytest.raises(ValueError, match=r"t\.v:1: expected exactly one theorem, found 0"):
        v.theorem("Definition x := 1.\n", "t.v")
    with pytest.raises(ValueError, match=r"t\.v:2: the theorem must be followed by 'Admitted.'"):
        v.theorem("Definition x := 1.\nTheorem a : True.\nProof. exact I. Qed.\n", "t.v")


def test_statement_hash_ignores_whitespace_only():
    assert statement_sha256("Theorem a :\n  True.") == statement_sha256("Theorem a : True.")
    assert statement_sha256("Theorem a : True.") != statement_sha256("Theorem a : False.")


@pytest.mark.parametrize("proof,needle", [
    ("Proof. admit. Qed.", "admit"),
    ("Admitted.", "Admitted"),
    ("Proof. Axiom cheat : False. destruct cheat. Qed.", "Axiom"),
    ("Proof. give_up. Qed.", "give_up"),
    ("Proof. Unset Guard Checking. exact I. Qed.", "Unset"),
    ("Proof. exact I. Qed. Axiom x : False.", "Qed./Defined. must be the last"),
    ("Proof. exact I.", "does not end with Qed"),
    ("Proof. exact I. Qed. Theorem t : True. Proof. exact I. Qed.", "new theorem"),
    ("Proof. Redirect \"x\" idtac. exact I. Qed.", "Redirect"),
    ("Proof. (* unclosed exact I. Qed.", "unterminated comment"),
    ("Abort.", "Abort"),
])
def test_forbidden_finds_each_cheat(proof, needle):
    found = Rocq().forbidden(proof)
    assert any(needle in f for f in found), found


def test_forbidden_ignores_comments_and_strings_and_accepts_real_proofs():
    v = Rocq()
    assert v.forbidden("Proof. (* no admit here *) cbv zeta; lia. Qed.") == []
    assert v.forbidden('Proof. idtac "Axiom admit". cbv zeta; lia. Defined.') == []
    assert set(FORBIDDEN) >= {"admit", "Admitted", "Axiom", "Parameter", "Abort"}


def test_declared_axioms_of_a_real_preamble(fetched, tasks):
    avl = next(t for t in tasks.values() if t.rocq.endswith("avl_AVL_back_nodeqtvc.v"))
    names = Rocq().declared_axioms(text(fetched, avl))
    assert {"t", "zero", "op", "assoc", "agg_cat", "balancing'def"} <= names
    assert "seq_model_obligation_*" in names  # Program Fixpoint + Admit Obligations


def test_declared_axioms_forms():
    src = ("Axiom a : nat.\nParameters (b c : nat) (d : bool).\nLocal Axiom e f : Prop.\n"
           "Hypothesis h : True.\nDefinition g := 1.\n")
    assert Rocq().declared_axioms(src) == {"a", "b", "c", "d", "e", "f", "h"}


def test_splice_replaces_placeholder_and_adds_the_report(fetched, tasks):
    v = Rocq()
    src = text(fetched, tasks[POWER])
    thm = v.theorem(src, POWER)
    out = v.splice(src, thm, "Proof. cbv zeta; lia. Qed.")
    assert "Admitted." not in out
    assert out.startswith(src[:thm.start])
    assert out.rstrip().endswith("Redirect \"verikit_assumptions\" Print Assumptions power'vc.")


def test_split_full_finds_the_statement_of_a_whole_file_candidate(fetched, tasks):
    v = Rocq()
    src = text(fetched, tasks[POWER])
    thm = v.theorem(src, POWER)
    whole = src.replace("Admitted.", "Proof. cbv zeta; lia. Qed.")
    full = v.split_full(whole, "power'vc")
    assert full.statement_sha256 == thm.statement_sha256
    assert whole[full.start:].strip() == "Proof. cbv zeta; lia. Qed."


def test_parse_assumptions_sections():
    report = ("Axioms:\nclassic : ∀ P : Prop, P ∨ ¬ P\nClassicalDedekindReals.sig_forall_dec\n"
              "  : ∀ P : nat → Prop, ...\ncheat : False\n")
    assert parse_assumptions(report) == {"Axioms": ["classic", "ClassicalDedekindReals.sig_forall_dec", "cheat"]}
    assert parse_assumptions("Closed under the global context\n") == {}
    guarded = "Constants/Inductives relying on unsafe (co)fixpoints:\nf : nat\n"
    assert list(parse_assumptions(guarded)) == ["Constants/Inductives relying on unsafe (co)fixpoints"]


# --- verdicts from recorded real coqc runs ---------------------------------------------

def _recorded(name: str) -> tuple[ProcResult, dict]:
    meta = json.loads((RECORDED / f"{name}.json").read_text())
    files = {REPORT: (RECORDED / f"{name}.report.out").read_bytes()} if (RECORDED / f"{name}.report.out").exists() else {}
    proc = ProcResult(argv=meta["argv"], returncode=meta["returncode"], stdout=meta["stdout"],
                      stderr=meta["stderr"], files=files)
    return proc, meta


@pytest.mark.recorded
@pytest.mark.parametrize("name,verdict,needle", [
    ("proof", "verified", "closed under the global context"),
    ("admitted", "rejected", "power'vc itself is assumed"),
    ("new-axiom", "rejected", "unexpected axiom cheat"),
    ("ill-typed", "invalid", "line 32"),
    ("admit", "invalid", "incomplete proof"),
])
def test_verdicts_of_recorded_runs(name, verdict, needle):
    if not (RECORDED / f"{name}.json").exists():
        pytest.fail(f"recorded output {name} missing from {RECORDED}")
    proc, meta = _recorded(name)
    v = Rocq()
    v.library_axioms = set(meta.get("library_axioms_sample", []))
    res = v.parse(proc, {"theorem": "power'vc", "theorem_line": 31, "allowed_assumptions": ["char", "char_*"]})
    assert res.verdict == verdict, res.reason
    assert needle in res.reason


def test_parse_fails_closed_without_report():
    res = Rocq().parse(ProcResult(argv=["coqc"], returncode=0), {"theorem": "x"})
    assert res.verdict == "rejected" and "no assumption report" in res.reason


def test_parse_error_in_the_preamble_means_the_task_does_not_load():
    out = 'File "./candidate.v", line 3, characters 0-10:\nError: Cannot find a physical path bound to logical path X.\n'
    res = Rocq().parse(ProcResult(argv=["coqc"], returncode=1, stdout=out), {"theorem": "x", "theorem_line": 20})
    assert res.verdict == "invalid" and res.extra["task_loads"] is False
    assert "does not load" in res.reason


def test_job_limits_are_mapped_before_parse():
    """The executor reads a run as ``termination(proc, name) or parse(proc)``: the
    sandbox's endings never reach the parser, which reads only runs that ended by
    themselves (a killed coqc without output would otherwise be an infra_error)."""
    v = Rocq()

    def reading(proc):
        return termination(proc, v.name) or v.parse(proc)

    assert reading(ProcResult(argv=["coqc"], returncode=-9, timed_out=True, wall_s=20.2)).verdict == "timeout"
    assert reading(ProcResult(argv=["coqc"], returncode=-9, memout=True)).verdict == "memout"
    assert reading(ProcResult(argv=["coqc"], returncode=None, start_error="no coqc")).verdict == "infra_error"
    assert v.parse(ProcResult(argv=["coqc"], returncode=-9, timed_out=True)).reason.startswith("coqc exited -9")


def test_command_line():
    v = Rocq()
    argv, env, collect = v.command({"load_path": [["/opt/verikit/ntp4vc/shim/Stdlib", "Stdlib"]]})
    assert argv[:2] == ["coqc", "-q"] and argv[-1] == "candidate.v"
    assert ["-Q", "/opt/verikit/ntp4vc/shim/Stdlib", "Stdlib"] == argv[4:7]
    assert collect == [REPORT]
