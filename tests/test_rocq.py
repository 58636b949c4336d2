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
from harness.verifiers.rocq import (
    BODY,
    CHECK,
    COQCHK_LOG,
    COQCHK_RC,
    GRAMMAR,
    LISTING,
    REFERENCE_REPORT,
    REPORT,
    QUIET_WARNINGS,
    SOUNDNESS_BUGS,
    STATEMENT,
    Rocq,
    added_constants,
    blank_comments,
    check_file,
    classify,
    command_heads,
    library_axiom_names,
    library_name_matches,
    local_name,
    parse_assumptions,
    sentences,
    soundness_problems,
    time_lines,
)
from harness.verifiers.rocq.report import PRINTING_DEPTH
from harness.verifiers.rocq.verifier import GRAMMAR_AFTER_PROOF

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


@pytest.mark.parametrize("src", [
    '(* "(*" *) Abort. (* " *) " *)',
    '(* "(*(*" *) Abort. (* " *) *) " *)',
    '(* """(*" *) Abort. (* " *) " *)',
    '(* (* "(*" *) *) Abort. (* " *) " *)',
    '(* "\n(*\n" *)\nAbort. (* " *) " *)',
])
def test_strings_inside_comments_are_lexed_as_coq_does(src):
    """Coq (parsing/cLexer.ml) reads a string inside a comment: "(*" in it does not open
    a nested comment, so the Abort between the comments is live."""
    assert "Abort" in blank_comments(src, strings=True)
    assert [s.text.strip() for s in sentences("Proof. " + src + " Qed.")][1] == "Abort."


def test_a_comment_delimiter_inside_a_commented_string_does_not_close_it():
    assert blank_comments('(* "*)" Abort. *) Qed.').strip() == "Qed."
    with pytest.raises(ValueError, match="line 1: unterminated comment"):
        blank_comments('(* " *)')  # the string never ends, so neither does the comment


def test_unterminated_comment_is_an_error_with_line():
    with pytest.raises(ValueError, match="line 2: unterminated comment"):
        blank_comments("Lemma x : True.\n(* open")


@pytest.mark.slow
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


#: Coq's grammar of commands (``Print Grammar vernac query_command <token entries>``) as
#: the real Coq 8.20.1 of the ntp4vc-rocq image printed it in check.v for power'vc's job
#: (the NTP4VC library, stdpp and their plugins loaded), taken from a run of
#: tests/test_rocq_integrity.py.
GRAMMAR_OUT = (RECORDED / "grammar.out").read_text()


def test_command_heads_from_coqs_own_grammar():
    heads, unknown = command_heads(GRAMMAR_OUT)
    assert unknown == set()
    assert {"Abort", "Admitted", "Back", "Reset", "Axiom", "Parameter", "Theorem", "Lemma", "Definition", "Unset",
            "Set", "Require", "Module", "Section", "Redirect", "Load", "Declare", "Save", "Fail"} <= heads
    assert not {"intros", "exact", "reflexivity", "lia", "apply", "destruct"} & heads
    assert command_heads(GRAMMAR_OUT.replace("Entry query_command is", "Entry other is"))[1] == {"query_command"}


#: ``coqc -time`` prints of sentences, as the real Coq 8.20.1 printed them (/tmp runs and
#: tests/test_rocq_integrity.py), with what the judge must say.
@pytest.mark.parametrize("printed,needle", [
    ("Abort.", "command Abort"),
    ("Admitted.", "command Admitted"),
    ("Back.", "command Back"),
    ("all:~Abort.", "command Abort"),
    ("Axiom~(cheat~:~forall~P~:~Prop...", "command Axiom"),
    ("Set~Primitive~Projections.", "command Set"),
    ("#[local]~Unset~Guard~Checking.", "command Unset"),
    ("#[bypass_check(guard)]~Fixpoin...", "attribute #[bypass_check(guard)]"),
    ("#[universes(polymorphic)]~Lemm...", "attribute #[universes(polymorphic)]"),
    ("#[local,~bypass_check(universes)]~Ltac~t~:=~idtac.", "attribute #[bypass_check(universes)]"),
    ("#[local]~#[local]~#[local]~#[lo...", "attributes not fully visible"),
    ("Fail~Abort.", "control Fail"),
    ("Time~Succeed~Abort.", "control Succeed"),
    ('Redirect~"x"~Check~x.', "control Redirect"),
    ("Lemma~x~:~True.", "command Lemma"),
    ("#[local]~Hint~Resolve~Z.le_ref...", "command Hint"),
    ("Printtttttttttttttttttttttttttt...", "cut in Coq's print"),
])
def test_classify_rejects_commands_outside_the_allow_list(printed, needle):
    heads, unknown = command_heads(GRAMMAR_OUT)
    got = classify(printed, heads, unknown)
    assert got is not None and needle in got, got


@pytest.mark.parametrize("printed", [
    "Proof.", "Proof~using.", "Qed.", "Defined.", "(cbv~zeta;~lia).", "reflexivity.", "exact~I.", "-", "+", "**", "{",
    "}", "1:~idtac.", "all:~(intros).", "(intros~Back).", "(pose~proof~fact1~as~Admitted).", "Abort'.",
    "#[local]~Ltac~Abort'~:=~lia.", 'idtac~"Back.~Abort.".', "Time~lia.", "(destruct~(Classical_Prop.clas...",
])
def test_classify_accepts_what_honest_proofs_contain(printed):
    heads, unknown = command_heads(GRAMMAR_OUT)
    assert classify(printed, heads, unknown) is None


def test_without_coqs_grammar_every_word_headed_sentence_is_rejected():
    assert "command reflexivity" in classify("reflexivity.", set(), {"?"})
    assert classify("Qed.", set(), {"?"}) is None


def test_forbidden_is_no_text_scan():
    """A hypothesis named Back, command words in comments or strings: nothing is judged on
    the text; Coq's own parse decides (parse)."""
    v = Rocq()
    assert v.forbidden("Proof. intros Back Abort. Qed.") == []
    assert v.forbidden("Abort.") == []


def test_time_lines_read_coqs_sentences():
    out = ("Chars 0 - 26 [Require~Import~ZArith~Lia.] 0.278 secs (0.197u,0.078s)\nBack. Abort.\n"
           'Chars 216 - 237 [idtac~"Back.~Abort.".] 0. secs (0.u,0.s)\n')
    assert time_lines(out) == [(0, 26, "Require~Import~ZArith~Lia."), (216, 237, 'idtac~"Back.~Abort.".')]
    # text printed by the proof without a newline, or imitating a line, cannot hide a real one
    forged = "Chars 1 - 2 [Chars 10 - 16 [Abort.] 0. secs (0.u,0.s)\n"
    assert time_lines(forged) == [(10, 16, "Abort.")]
    assert time_lines("xyzChars 10 - 16 [Abort.] 0. secs\n") == [(10, 16, "Abort.")]


def test_soundness_bugs_are_listed_in_the_toolchain():
    tc = json.loads((Path(__file__).parents[1] / "images" / "toolchains.json").read_text())["toolchains"]["rocq"]
    assert SOUNDNESS_BUGS is not None and tc["soundness_bugs"] == SOUNDNESS_BUGS  # the judge reads this list
    assert {b["rule"] for b in SOUNDNESS_BUGS} <= {"no-fix-in-proof-term", "coqchk", "command-not-allowed"}
    assert len(SOUNDNESS_BUGS) >= 3 and all({"id", "url", "fixed_in", "construct", "rule"} <= set(b) for b in SOUNDNESS_BUGS)
    assert any(b["rule"] == "no-fix-in-proof-term" for b in SOUNDNESS_BUGS)  # the rule the judge applies by construct


def test_the_proof_term_is_read_whole():
    """The fix check reads the whole term: ``check.v`` lifts Coq's printing depth (its default
    elides a subterm nested some 15 levels down as ``...``), an elided print is a problem
    (fail closed), and a constant the proof declared (an ``abstract`` closed by
    ``Defined``, which the theorem's term only names) is one too. Outputs as Coq 8.20.1
    prints them (checked in the rocq image)."""
    assert f"Set Printing Depth {PRINTING_DEPTH}." in check_file("t") and "Print Module VerikitJob.candidate." in check_file("t")
    assert soundness_problems("t =\n(fun _ : True => (fun ... => ... I) I)\n     : True\n", {})[0].startswith(
        "the proof term report is elided")
    assert "fix/cofix" in soundness_problems("t =\nlet f := fix g (k : nat) : nat := O in I\n     : True\n", {})[0]
    listing = ("Module\ncandidate\n:= Struct\n     Definition aux\n     Inductive col\n     Definition col_rect\n"
               "     Parameter verikit_task_statement\n{}     Definition t\n   End\n")
    assert added_constants(listing.format(""), "t") == []
    assert added_constants(listing.format("     Parameter t_subproof\n"), "t") == ["t_subproof"]
    assert added_constants(listing.format("     Frobnicate t_aux\n"), "t") == ["t_aux"]  # any kind, none skipped
    assert added_constants(listing.format("").replace("   End\n", ""), "t") is None
    assert added_constants("Module\ncandidate\n", "t") is None
    assert added_constants(listing.format("").replace("verikit_task_statement", "x"), "t") is None
    v = Rocq()
    assert v.added_problems(None, {"theorem": "t"})[0].startswith("no module listing")
    assert "candidate.t_subproof" in v.added_problems(listing.format("     Parameter t_subproof\n").encode(),
                                                      {"theorem": "t"})[0]


def test_declared_axioms_of_a_real_preamble(fetched, tasks):
    avl = next(t for t in tasks.values() if t.rocq.endswith("avl_AVL_back_nodeqtvc.v"))
    names = Rocq().declared_axioms(text(fetched, avl))
    assert {"t", "zero", "op", "assoc", "agg_cat", "balancing'def"} <= names
    assert "seq_model_obligation_*" in names  # Program Fixpoint + Admit Obligations


def test_declared_axioms_forms():
    src = ("Axiom a : nat.\nParameters (b c : nat) (d : bool).\nLocal Axiom e f : Prop.\n"
           "Hypothesis h : True.\nDefinition g := 1.\n")
    assert Rocq().declared_axioms(src) == {"a", "b", "c", "d", "e", "f", "h"}


def test_splice_replaces_placeholder_and_copies_the_statement_on_its_line(fetched, tasks):
    v = Rocq()
    src = text(fetched, tasks[POWER])
    thm = v.theorem(src, POWER)
    out = v.splice(src, thm, "Proof. cbv zeta; lia. Qed.")
    at = src.rfind(thm.statement, 0, thm.start)
    assert out.startswith(src[:at] + "Lemma verikit_task_statement (n : Z)")
    lines = out.splitlines()
    assert len(lines) == src.count("\n") and lines[thm.line - 1].startswith("Lemma verikit_task_statement")
    assert lines[thm.line - 1].count("Admitted.") == 1 and "Theorem power'vc (n : Z)" in lines[thm.line - 1]
    assert out.rstrip().endswith("Proof. cbv zeta; lia. Qed.") and "Print Assumptions" not in out
    files = v.job_files(src, thm, "Proof. cbv zeta; lia. Qed.")
    assert files[CHECK] == check_file("power'vc")
    assert "Print Assumptions VerikitJob.candidate.power'vc." in files[CHECK]
    assert "Import" not in files[CHECK]  # the candidate is not imported: its names print qualified


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
    # coqc errors in candidate.v; the recorded reports (proof, admitted, new-axiom) are of
    # the module's version 1 (short names, no statement check) and are no longer read: the
    # real Coq runs of tests/test_rocq_integrity.py cover those verdicts
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


@pytest.mark.parametrize("proc", [
    ProcResult(argv=["sh"], returncode=139, stderr="Segmentation fault (core dumped)"),
    ProcResult(argv=["sh"], returncode=-11),
    ProcResult(argv=["sh"], returncode=2, stdout="Fatal error: exception Stack_overflow"),
])
def test_a_crash_on_the_candidate_is_its_failure_never_infra_error(proc):
    res = Rocq().parse(proc, {"theorem": "x", "theorem_line": 3})
    assert res.verdict == "failed" and res.extra["crash"], res.reason


def test_coqc_out_of_memory_is_the_candidates_memout():
    res = Rocq().parse(ProcResult(argv=["sh"], returncode=2, stderr="Fatal error: out of memory."), {"theorem": "x"})
    assert res.verdict == "memout" and "out of memory" in res.reason


def test_an_anomaly_is_the_candidates_invalid():
    out = 'File "./candidate.v", line 40, characters 0-10:\nError: Anomaly "Uncaught exception Not_found."\n'
    res = Rocq().parse(ProcResult(argv=["sh"], returncode=1, stdout=out), {"theorem": "x", "theorem_line": 31})
    assert res.verdict == "invalid" and "Anomaly" in res.reason


def test_command_line():
    v = Rocq()
    argv, _env, collect = v.command({"load_path": [["/opt/verikit/ntp4vc/shim/Stdlib", "Stdlib"]]})
    assert argv[:2] == ["sh", "-c"]
    flags = "-Q /opt/verikit/ntp4vc/shim/Stdlib Stdlib -R . VerikitJob"
    assert argv[2].startswith("rm -f verikit_* && coqc -q")
    assert f"{flags} -time candidate.v && rm -f verikit_*.out && if " in argv[2]
    recheck = f"{{ coqchk -silent -o {flags} -norec VerikitJob.candidate > {COQCHK_LOG} 2>&1; echo $? > {COQCHK_RC}; }}"
    # one CPU: coqchk after check.v passed; two (VERIKIT_CPUS): beside it, its files dropped
    # where check.v failed
    assert f"else coqc -q -w {QUIET_WARNINGS} {flags} check.v && {recheck}; fi" in argv[2]
    assert (f'if [ "${{VERIKIT_CPUS:-1}}" -ge 2 ] 2>/dev/null; then {recheck} & coqc -q -w {QUIET_WARNINGS} {flags} '
            f"check.v; rc=$?; wait $!; [ $rc -eq 0 ] || rm -f {COQCHK_LOG} {COQCHK_RC}; exit $rc; else") in argv[2]
    gold, _, _ = v.command({"load_path": [["/opt/verikit/ntp4vc/shim/Stdlib", "Stdlib"]], "recheck": False})
    assert gold[2].endswith(f"rm -f verikit_*.out && coqc -q -w {QUIET_WARNINGS} {flags} check.v")
    assert collect == [REPORT, STATEMENT, REFERENCE_REPORT, BODY, LISTING, GRAMMAR, COQCHK_LOG, COQCHK_RC]
    assert "Print Grammar vernac command" in check_file("t") and "Print VerikitJob.candidate.t." in check_file("t")


# --- the report of check.v: outputs of the real Coq 8.20.1 (ntp4vc-rocq image) --------

_TYPE = ("     : forall (n : BinNums.Z) (_ : BinInt.Z.le BinNums.Z0 n)\n         (_ : not (@eq BinNums.Z n BinNums.Z0)),\n"
         "       let o1 : BinNums.Z := BinInt.Z.sub n (BinNums.Zpos BinNums.xH) in\n"
         "       and (and (BinInt.Z.le BinNums.Z0 n) (BinInt.Z.lt o1 n))\n         (BinInt.Z.le BinNums.Z0 o1)\n")
_REF = ("candidate.verikit_task_statement\n" + _TYPE).encode()
_OPTS = {"theorem": "power'vc", "theorem_line": 31, "allowed_assumptions": ["candidate.char", "candidate.char_*"],
         "proof_start": 1445, "kit_sentences": [[1445, 1451], [1452, 1467], [1468, 1472]]}
_TIME = ("Chars 1300 - 1444 [Theorem~power'vc~(n~:~Z)~(fact...] 0. secs (0.u,0.s)\n"
         "Chars 1445 - 1451 [Proof.] 0. secs (0.u,0.s)\nChars 1452 - 1467 [(cbv~zeta;~lia).] 0.01 secs (0.u,0.s)\n"
         "Chars 1468 - 1472 [Qed.] 0. secs (0.u,0.s)\n")
_BODY = "candidate.power'vc =\nfun (n : BinNums.Z) => Z.lt_pred_l n\n" + _TYPE
_LISTING = ("Module\ncandidate\n:= Struct\n     Definition char\n     Parameter verikit_task_statement\n"
            "     Parameter power'vc\n   End\n")


def _proc(report: str, statement: str | None = "candidate.power'vc\n" + _TYPE, ref: bytes | None = _REF, *,
          stdout: str = _TIME, body: str | None = _BODY, coqchk: bytes | None = b"0\n",
          listing: str | None = _LISTING) -> ProcResult:
    files = {REPORT: report.encode(), GRAMMAR: GRAMMAR_OUT.encode()}
    if listing is not None:
        files[LISTING] = listing.encode()
    if statement is not None:
        files[STATEMENT] = statement.encode()
    if ref is not None:
        files[REFERENCE_REPORT] = ref
    if body is not None:
        files[BODY] = body.encode()
    if coqchk is not None:
        files[COQCHK_RC] = coqchk
        files[COQCHK_LOG] = b"CONTEXT SUMMARY\n" if coqchk == b"0\n" else b"Error: Anomaly: Conversion test raised an anomaly"
    return ProcResult(argv=["sh"], returncode=0, stdout=stdout, files=files)


def test_report_of_a_real_proof_is_verified():
    res = Rocq().parse(_proc("Closed under the global context\n"), _OPTS)
    assert res.verdict == "verified", res.reason
    assert res.extra["sentences"] == ["Proof.", "(cbv~zeta;~lia).", "Qed."] and res.extra["coqchk"] == 0
    assert all(c["ok"] for c in res.checks)


_CLOSED = "Closed under the global context\n"


def test_the_gold_placeholder_is_rejected_and_loads_without_coqchk():
    """The gold (the task file with its Admitted.) keeps its verdict: the file loads, the
    placeholder is not a proof; coqchk is not run for it (its cost stays as before)."""
    argv, _, _ = Rocq().command({"load_path": [], "recheck": False})
    assert "coqchk" not in argv[2]
    gold = _TIME.replace("Chars 1445 - 1451 [Proof.] 0. secs (0.u,0.s)\n", "").replace(
        "Chars 1452 - 1467 [(cbv~zeta;~lia).] 0.01 secs (0.u,0.s)\n", "").replace("1468 - 1472 [Qed.]", "1445 - 1454 [Admitted.]")
    res = Rocq().parse(_proc("Axioms:\ncandidate.power'vc : True\n", stdout=gold, coqchk=None),
                       {**_OPTS, "kit_sentences": [[1445, 1454]], "recheck": False})
    assert res.verdict == "rejected" and res.extra["task_loads"] is True
    assert "command Admitted is not allowed" in res.reason and "coqchk" not in res.reason


@pytest.mark.parametrize("kwargs,opts,needle", [
    ({"coqchk": b"1\n"}, {}, "coqchk) failed (exit 1)"),
    ({"coqchk": None}, {}, "coqchk) failed"),
    ({"body": _BODY.replace("Z.lt_pred_l n", "(fix f (k : nat) : nat := k) O")}, {}, "fix/cofix"),
    ({"body": _BODY.replace("Z.lt_pred_l n", "(cofix s : S := s)")}, {}, "fix/cofix"),
    ({"body": None}, {}, "no proof term report"),
    ({"body": _BODY.replace("Z.lt_pred_l n", "(fun ... => ... I)")}, {}, "elided"),
    ({"listing": None}, {}, "no module listing"),
    ({"listing": _LISTING.replace("     Parameter power'vc", "     Parameter power'vc_subproof\n     Definition power'vc")},
     {}, "candidate.power'vc_subproof"),
    ({"stdout": _TIME.replace("1445 - 1451 [Proof.]", "1440 - 1451 [Proof.]")}, {}, "crosses the start"),
    ({"stdout": _TIME + "Chars 1450 - 1460 [Proof.] 0. secs\n"}, {}, "overlapping"),
    ({}, {"kit_sentences": [[1445, 1460]]}, "the kit's sentences disagree"),
    ({}, {"kit_sentences": None}, "the kit cannot segment"),
    ({"stdout": _TIME.replace("[Qed.]", "[Abort.]")}, {}, "command Abort"),
    ({"stdout": _TIME + "Chars 1473 - 1480 [exact~I.] 0. secs\n"}, {}, "must be the last sentence"),
])
def test_coqs_view_of_the_candidate_fails_closed(kwargs, opts, needle):
    res = Rocq().parse(_proc(_CLOSED, **kwargs), {**_OPTS, **opts})
    assert res.verdict == "rejected" and needle in res.reason, res.reason


@pytest.mark.parametrize("statement,ref,needle", [
    ("candidate.power'vc\n     : True\n", _REF, "does not have the task's statement"),  # Definition power'vc := I.
    (None, _REF, "no statement report"),
    ("candidate.power'vc\n" + _TYPE, None, "no statement report"),
    ("garbage", _REF, "unreadable statement report"),
])
def test_report_on_another_constant_is_rejected(statement, ref, needle):
    res = Rocq().parse(_proc("Closed under the global context\n", statement, ref), _OPTS)
    assert res.verdict == "rejected" and needle in res.reason


@pytest.mark.parametrize("report,needle", [
    ("Axioms:\ncandidate.classic : forall P : Prop, P\n", "unexpected axiom candidate.classic"),
    ("Axioms:\ncandidate.Classical_Prop.classic : forall P : Prop, P\n", "candidate.Classical_Prop.classic"),
    ("Axioms:\ncandidate.power'vc : True\n", "power'vc itself is assumed"),
    ("Axioms:\ncandidate.verikit_task_statement : True\n", "the kit's admitted copy"),
    ("Axioms:\nClassical_Prop.classic : forall P : Prop, P\ncheat : False\n", "unexpected axiom cheat"),
])
def test_axioms_are_judged_by_qualified_name(report, needle):
    v = Rocq()
    v.library_axioms = {"Coq.Logic.Classical_Prop.classic"}
    res = v.parse(_proc(report), _OPTS)
    assert res.verdict == "rejected" and needle in res.reason, res.reason


def test_library_and_task_axioms_are_allowed():
    v = Rocq()
    v.library_axioms = {"Coq.Logic.Classical_Prop.classic", "Coq.Reals.ClassicalDedekindReals.sig_forall_dec"}
    report = ("Axioms:\nClassical_Prop.classic : forall P : Prop, or P (not P)\n"
              "ClassicalDedekindReals.sig_forall_dec\n  : forall P : nat -> Prop, ...\ncandidate.char : Type\n"
              "candidate.char_countable : Countable char\n")
    res = v.parse(_proc(report), _OPTS)
    assert res.verdict == "verified", res.reason


def test_qualified_name_helpers():
    assert local_name("candidate.classic") == "candidate.classic"
    assert local_name("VerikitJob.candidate.M.x") == "candidate.M.x"
    assert local_name("Classical_Prop.classic") is None
    entry = "Coq.Logic.Classical_Prop.classic"
    assert library_name_matches("Classical_Prop.classic", entry)
    assert library_name_matches("Logic.Classical_Prop.classic", entry)
    assert library_name_matches("Classical_Prop.Inner.classic", entry)  # a module inside the file
    assert not library_name_matches("Other.classic", entry)
    assert not library_name_matches("Classical_Prop.clasic", entry)
    grep = ("/usr/lib/coq\n/usr/lib/coq/theories/Logic/Classical_Prop.v:Axiom classic\n"
            "/usr/lib/coq/user-contrib/stdpp/base.v:Local Axiom x\n/usr/lib/coq/theories/A.v:Axioms\n")
    assert library_axiom_names(grep) == {"Coq.Logic.Classical_Prop.classic", "stdpp.base.x"}


def test_an_error_in_the_kits_check_file_is_rejected():
    out = ('File "./check.v", line 3, characters 0-60:\n'
           "Error: The reference VerikitJob.candidate.power'vc was not found in the current environment.\n")
    res = Rocq().parse(ProcResult(argv=["sh"], returncode=1, stdout=out), _OPTS)
    assert res.verdict == "rejected" and "was not found" in res.reason


# --- coqc alone where the kit expects Coq's view to reject the proof ------------------

def _heads() -> Rocq:
    v = Rocq()
    v.command_heads = command_heads(GRAMMAR_OUT)[0]
    return v


@pytest.mark.parametrize("proof, expected", [
    ("Proof. cbv zeta; lia. Qed.", []),
    ("Proof. cbv zeta. pose proof fact1 as Admitted. lia. Defined.", []),  # a hypothesis, not a command
    ("Proof. #[local] Ltac Abort' := lia. Abort'. Qed.", []),
    ("Admitted.", ["Admitted (line 1 of the proof)", "no single Qed./Defined. ending the proof"]),
    ("Proof. Axiom cheat : False.\napply cheat. Qed.", ["Axiom (line 1 of the proof)"]),
    ("Proof. (* \"(*\" *) Abort. (* \" *) \" *)\nDefinition power'vc := I.",
     ["Abort (line 1 of the proof)", "Definition (line 2 of the proof)", "no single Qed./Defined. ending the proof"]),
    ("Proof. lia. Qed. Qed.", ["no single Qed./Defined. ending the proof"]),
    ("Proof. lia. Qed .", ["no single Qed./Defined. ending the proof"]),  # Coq reads "Qed.": a follow-up decides
    ("Proof. (* never closed", []),  # the kit cannot segment it: the full check runs
    ("Proof. cbv zeta. assert (H : forall k : nat, k = k) by (fix IH 1; intros [|k]; reflexivity). lia. Qed.",
     ["fix/cofix (line 1 of the proof)"]),
    ("Proof. (* no fix here *) idtac \"cofix\". pose (fixed := 1). lia. Qed.", []),
])
def test_the_kits_reading_expects_a_rejection(proof, expected):
    assert _heads().expected_rejections(proof) == expected


def test_an_expected_rejection_puts_the_grammar_after_the_proof(fetched, tasks):
    v = _heads()
    src = text(fetched, tasks[POWER])
    thm = v.theorem(src, tasks[POWER].rocq)
    honest = "Proof. cbv zeta; lia. Qed."
    assert v.job_files(src, thm, honest)["candidate.v"] == v.splice(src, thm, honest)
    assert v.proof_layout(src, thm, honest)["grammar_start"] is None
    proof = "Proof. (* é ü *) Admitted."  # offsets are bytes
    body = v.job_files(src, thm, proof)["candidate.v"].encode()
    at = v.proof_layout(src, thm, proof)["grammar_start"]
    assert body[at:].startswith(b'Redirect "verikit_grammar" Print Grammar ')
    assert body[:at].decode().endswith(proof + "\n\n")
    argv, _, collect = v.command({"load_path": [], "expected_rejections": ["Admitted (line 1 of the proof)"]})
    assert argv[2].startswith("rm -f verikit_* && coqc ") and argv[2].endswith(" -time candidate.v")
    assert "check.v" not in argv[2] and "coqchk" not in argv[2] and collect == [GRAMMAR]


#: ``coqc -time`` of a candidate ``Proof. Admitted.`` with the grammar sentence after it, as the
#: real Coq prints it (offsets of the power'vc job).
_EXPECTED_OPTS = {**_OPTS, "load_path": [], "kit_sentences": [[1445, 1451], [1452, 1461]], "grammar_start": 1463,
                  "expected_rejections": ["Admitted (line 1 of the proof)"]}
_EXPECTED_TIME = ("Chars 1300 - 1444 [Theorem~power'vc~(n~:~Z)~(fact...] 0. secs (0.u,0.s)\n"
                  "Chars 1445 - 1451 [Proof.] 0. secs (0.u,0.s)\nChars 1452 - 1461 [Admitted.] 0. secs (0.u,0.s)\n"
                  'Chars 1463 - 1674 [Redirect~"verikit_grammar"~Pri...] 0.004 secs (0.u,0.004s)\n')


def _first(stdout: str = _EXPECTED_TIME, grammar: str | None = GRAMMAR_OUT, returncode: int = 0, **files) -> ProcResult:
    out = {GRAMMAR: grammar.encode()} if grammar is not None else {}
    return ProcResult(argv=["sh"], returncode=returncode, stdout=stdout, files={**out, **files})


def test_coqs_view_alone_rejects_what_the_kit_expected():
    v = _heads()
    res = v.parse(_first(), _EXPECTED_OPTS)
    assert res.verdict == "rejected" and res.extra["coqchk"] is None
    assert "command Admitted is not allowed (Coq parsed 'Admitted.')" in res.reason
    assert "the proof does not end with Qed. or Defined. (Coq's view)" in res.reason
    assert v.followup({"candidate.v": "x"}, _first(), _EXPECTED_OPTS) is None


@pytest.mark.parametrize("why, proc", [
    ("Coq's view allows it", _first(_EXPECTED_TIME.replace("[Admitted.]", "[Qed.]"))),
    ("no grammar", _first(grammar=None)),
    ("an unreadable grammar", _first(grammar="garbage")),
    ("the grammar sentence is not where the kit put it", _first(_EXPECTED_TIME.replace("Chars 1463", "Chars 1462"))),
    ("a candidate sentence reaches into it", _first(_EXPECTED_TIME.replace("1452 - 1461", "1452 - 1470"))),
])
def test_the_full_check_runs_when_coqs_view_does_not_decide(why, proc):
    v = _heads()
    plain = "Theorem t : True.\nProof. Admitted.\n"
    files, argv, collect = v.followup({"candidate.v": plain + GRAMMAR_AFTER_PROOF, "check.v": "c"}, proc, _EXPECTED_OPTS)
    assert files == {"candidate.v": plain}, why  # compiled again as a job with nothing expected
    assert " check.v && " in argv[2] and "coqchk" in argv[2] and GRAMMAR in collect, why


def test_a_follow_up_gives_the_verdict_of_the_full_check():
    """Its output is read as any job's full run; a follow-up that did not end is the
    sandbox's verdict (timeout, memout) or the kit's failure (infra_error)."""
    v = _heads()
    full = _proc(_CLOSED)
    fu = {f"followup/{k}": b for k, b in full.files.items()}
    fu.update({"followup/stdout": _TIME.encode(), "followup/stderr": b"", "followup/ended": b"exit 0"})
    opts = {**_OPTS, "expected_rejections": ["no single Qed./Defined. ending the proof"], "grammar_start": 1474}
    first = _first(_TIME + 'Chars 1474 - 1680 [Redirect~"verikit_grammar"~Pri...] 0. secs (0.u,0.s)\n')
    assert v.parse(first, opts).verdict == "infra_error"  # no follow-up ran: never a verdict on the candidate
    res = v.parse(ProcResult(argv=["sh"], returncode=0, stdout=first.stdout, files={**first.files, **fu}), opts)
    assert res.verdict == "verified" and res.extra["coqchk"] == 0, res.reason
    for ended, verdict in [(b"timeout: the follow-up run killed at the wall-time limit after 300.0 s", "timeout"),
                           (b"memout: the follow-up run killed at the memory limit (4096 MiB seen)", "memout"),
                           (b"infra_error: the follow-up run did not start: no image", "infra_error"),
                           (b"error: sandbox: podman exited 125", "infra_error"),
                           # the sandbox's verdict word, not words of the reason
                           (b"error: the kit could not make the follow-up run (memory limit reached)", "infra_error")]:
        res = v.parse(ProcResult(argv=["sh"], returncode=0, stdout=first.stdout,
                                 files={**first.files, "followup/ended": ended}), opts)
        assert res.verdict == verdict and "did not end" in res.reason, (ended, res.reason)


_FIX_PROOF = "Proof. cbv zeta. assert (H : forall k : nat, k = k) by (fix IH 1; intros [|k]; reflexivity). lia. Qed."
#: ``Print power'vc.`` after that proof, in the candidate's own file (real Coq 8.20.1, the
#: ntp4vc-rocq image): names as the file sees them.
_FIX_BODY = ("power'vc =\nfun (n : Z) (fact0 : Z.le Z0 n) (fact1 : not (@eq Z n Z0)) =>\n"
             "(let H : forall k : nat, @eq nat k k :=\n   fix IH (k0 : nat) : @eq nat k0 k0 :=\n"
             "     match k0 as n0 return (@eq nat n0 n0) with\n     | O => @eq_refl nat O\n"
             "     | S n0 => (fun k : nat => @eq_refl nat (S k)) n0\n     end in\n I)\n"
             "     : forall (n : Z) (_ : Z.le Z0 n) (_ : not (@eq Z n Z0)), True\n")


def test_an_expected_fix_prints_the_proof_term_after_the_proof(fetched, tasks):
    v = _heads()
    src = text(fetched, tasks[POWER])
    thm = v.theorem(src, tasks[POWER].rocq)
    lay = v.proof_layout(src, thm, _FIX_PROOF)
    body = v.job_files(src, thm, _FIX_PROOF)["candidate.v"]
    raw = body.encode()
    assert raw[lay["grammar_start"]:].startswith(b'Redirect "verikit_grammar" Print Grammar ')
    assert raw[lay["body_start"]:] == b'Redirect "verikit_body" Print power\'vc.\n'
    assert body.splitlines()[lay["block_line"] - 1].startswith('Redirect "verikit_grammar"')
    assert "Set Printing Depth 2147483647." in body[len(v.splice(src, thm, _FIX_PROOF)):]
    _, _, collect = v.command({"load_path": [], **lay})
    assert collect == [GRAMMAR, BODY]


def _fix_opts(start: int = 1445, grammar: int = 1549, body: int = 1810) -> dict:
    return {**_OPTS, "load_path": [], "kit_sentences": [[1445, 1451], [1452, 1538], [1539, 1542], [1543, 1547]],
            "expected_rejections": ["fix/cofix (line 1 of the proof)"],
            "grammar_start": grammar, "body_start": body, "block_line": 37, "proof_start": start}


_FIX_TIME = ("Chars 1445 - 1451 [Proof.] 0. secs (0.u,0.s)\nChars 1452 - 1538 [(cbv~zeta).] 0. secs (0.u,0.s)\n"
             "Chars 1539 - 1542 [lia.] 0. secs (0.u,0.s)\nChars 1543 - 1547 [Qed.] 0.002 secs (0.001u,0.s)\n"
             'Chars 1549 - 1760 [Redirect~"verikit_grammar"~Pri...] 0.004 secs (0.u,0.004s)\n'
             "Chars 1761 - 1778 [Set~Printing~All.] 0. secs (0.u,0.s)\n"
             "Chars 1779 - 1809 [Set~Printing~Depth~2147483647.] 0. secs (0.u,0.s)\n"
             'Chars 1810 - 1849 [Redirect~"verikit_body"~Print~...] 0.003 secs (0.001u,0.001s)\n')


def test_coqs_print_of_the_term_rejects_an_expected_fix():
    v = _heads()
    res = v.parse(_first(_FIX_TIME, **{BODY: _FIX_BODY.encode()}), _fix_opts())
    assert res.verdict == "rejected" and "the proof term contains a fix/cofix" in res.reason, res.reason
    assert [c["name"] for c in res.checks if not c["ok"]] == ["no-known-soundness-bug"]
    # a term without fix (or a print not at the kit's place) decides nothing: the full check runs
    for proc in (_first(_FIX_TIME, **{BODY: _FIX_BODY.replace("fix IH", "fun IH").encode()}),
                 _first(_FIX_TIME.replace("Chars 1810", "Chars 1811"), **{BODY: _FIX_BODY.encode()})):
        assert v.first_phase(proc, _fix_opts()) is None
        assert v.followup({"candidate.v": "x", "check.v": "c"}, proc, _fix_opts()) is not None


def test_an_error_in_the_kits_sentences_gets_the_full_check():
    """The proof left the theorem undeclared (its print fails, on a line of the kit's): the
    full check decides, as for any job; an error in the candidate's own lines is its own."""
    v = _heads()
    err = 'File "./candidate.v", line 37, characters 30-38:\nError: power\'vc not a defined object.\n'
    proc = ProcResult(argv=["sh"], returncode=1, stdout=_FIX_TIME + err)
    files, argv, _ = v.followup({"candidate.v": "x", "check.v": "c"}, proc, _fix_opts())
    assert " check.v && " in argv[2]
    assert v.parse(proc, _fix_opts()).verdict == "infra_error"  # the follow-up did not run
    own = ProcResult(argv=["sh"], returncode=1, stdout=err.replace("line 37", "line 31"))
    assert v.followup({"candidate.v": "x", "check.v": "c"}, own, _fix_opts()) is None
    assert v.parse(own, _fix_opts()).verdict == "invalid"
