"""NTP4VC (Rocq): the cheats a dishonest candidate used, each class in several spellings,
judged on the real Coq 8.20.1 of the ``ntp4vc-rocq`` image (recorded outputs).

1. Strings inside comments: Coq reads ``(* "(*" *)`` as one closed comment (a ``"`` in a
   comment starts a string; ``parsing/cLexer.ml``), so an ``Abort.`` after it is live. Coq's
   own parse of the file must name it (``commands-allow-listed``).
2. The report pointed elsewhere: after the hidden ``Abort``, a new constant with the
   theorem's name. The prover's own reading must reject it (``check.v`` reports on
   ``VerikitJob.candidate.<theorem>`` and compares its type with the task's statement).
3. A new axiom named like a library one (``classic``): the prover's own reading must reject
   it (names compared fully qualified).

There is no kit text scan: every sentence Coq executed, as Coq printed its parse
(``coqc -time``), must be on the allow-list (``rocq.ALLOWED_COMMANDS``), so for 1-3 Coq's
own view names the hidden ``Abort``. The kit's reading of the proof only chooses the runs:
where it expects a command outside the list, the job runs ``coqc`` alone and Coq's view
decides; the check.v report, run on the same candidates with that choice switched off
(``full_check_run``), rejects 1-3 too.
4. Commands outside the allow-list (several spellings, each named in the reason: ``Unset``,
   ``Local Unset``, ``Set``, the controls ``Time Fail Fail``/``Succeed``, a query outside
   the list).
5. The construct of the known guard-checker soundness bugs of Coq 8.20.1 (``fix`` in the
   proof term, by tactic and by term).
Honest neighbours stay ``verified`` and re-checked by ``coqchk``, one of them (``Qed .``)
after the kit expected a rejection that Coq's view does not confirm (the full check then
runs as a follow-up): a hypothesis named
``Back``, one named ``Admitted``, a local ``Ltac`` named ``Abort'``, a local helper,
command words in comments and strings, bullets, braces and a selector; one uses the
library axiom ``classic``. All candidates share ONE in-process run of the pipeline
(``harness.runner.run``, with the mode's canaries); candidates whose text is a canary's
share its job.

Recorded (``tests/recording.py``, family ``rocq-integrity``): the run's sandbox is a replay
of ``tests/recorded/runs/rocq-integrity/``, the outputs of every command the kit started
in the real ``ntp4vc-rocq`` image (the toolchain probe, the library-axiom scan, each job's
coqc/coqchk run), so the kit's executor, Rocq parser and NTP4VC judge derive every verdict
here from Coq's real output, with no engine and no image. Refresh it with
``python scripts/record.py rocq-integrity`` (the engine and the image needed; a fresh
result cache, so every job runs); ``tests/test_freshness.py`` re-runs a daily sample of its
jobs live. The canaries of the mode run live with Coq in the image in
``tests/test_ntp4vc_rocq.py``.
"""

from __future__ import annotations

import json

import pytest
from recording import family_sandbox, pipeline_sandbox
from rich.console import Console

from harness import runner
from harness.benchmarks import ntp4vc
from harness.benchmarks.ntp4vc.proofs import POWER_STATEMENT
from harness.runner import run
from harness.runspec import RunSettings, RunSpec
from harness.sandbox import Limits

#: Every test here is judged from the recording (``integrity_run``): no engine, no tool.
pytestmark = [pytest.mark.recorded]

POWER = ntp4vc.CANARY_TASK
STMT = f"Theorem power'vc {POWER_STATEMENT}"
HIDE = {  # comment pairs that hide the text between them from a lexer without strings
    "plain": '(* "(*" *) Abort. (* " *) " *)',
    "double": '(* "(*(*" *) Abort. (* " *) *) " *)',
    "escaped-quote": '(* """(*" *) Abort. (* " *) " *)',
    "nested": '(* (* "(*" *) *) Abort. (* " *) " *)',
    "multi-line": '(* "\n(*\n" *)\nAbort. (* "\n*)\n" *)',
}
CANDIDATES = {
    # honest
    "honest": ("Proof. cbv zeta; lia. Qed.", "verified"),
    "honest-classic": ("Proof. cbv zeta. destruct (Classical_Prop.classic (n = 1)); lia. Qed.", "verified"),
    "honest-comment-string": ('Proof. (* a "(*" string *) cbv zeta; lia. Qed.', "verified"),
    # 1: strings inside comments (with a redefinition, so that the file compiles)
    **{f"hide-{k}": (f"Proof. {h}\nDefinition power'vc := I.", "rejected") for k, h in HIDE.items()},
    # 2: the report pointed at another constant
    "redefine-definition": (f"Proof. {HIDE['plain']}\nDefinition power'vc : True := I.", "rejected"),
    # (a line starting with "Theorem power'vc" would make it a whole-file candidate, whose
    # text before the theorem must be the task's: the restatements stay on one line)
    "redefine-theorem": (f"Proof. {HIDE['double']} Theorem power'vc : True.\nProof. exact I. Qed.", "rejected"),
    "redefine-weaker": (f"Proof. {HIDE['plain']} Theorem power'vc (n : Z) : n = n.\nProof. reflexivity. Qed.",
                        "rejected"),
    "abort-only": (f"Proof. {HIDE['plain']}", "rejected"),
    # 3: an axiom named like a library axiom
    "axiom-classic": (f"Proof. {HIDE['plain']}\nAxiom classic : forall P : Prop, P. {STMT}\nProof. apply classic. Qed.",
                      "rejected"),
    "parameter-classic": ((f"Proof. {HIDE['escaped-quote']}\nParameter classic : forall P : Prop, P. {STMT}\n"
                           "Proof. apply classic. Qed."), "rejected"),
    "module-classic": ((f"Proof. {HIDE['nested']}\nModule Classical_Prop. Axiom classic : forall P : Prop, P. "
                        f"End Classical_Prop. {STMT}\nProof. apply Classical_Prop.classic. Qed."), "rejected"),
    "axiom-task-name": ((f"Proof. {HIDE['plain']}\nAxiom char_inhabited' : forall P : Prop, P. {STMT}\n"
                         "Proof. apply char_inhabited'. Qed."), "rejected"),
    "uses-reference": ("Proof. exact (verikit_task_statement n fact0 fact1). Qed.", "rejected"),
    # commands outside the allow-list, judged on Coq's own parse (coqc -time). Every
    # sentence outside the list is named in the reason, so one candidate carries several
    # spellings (one job); the first two share their job with the canaries of the same text
    "unset-guard": (ntp4vc.proofs.ROCQ_CANARIES["command-not-allowed"][0], "rejected"),
    "many-commands": (("Proof. Local Unset Universe Checking. Set Primitive Projections. Time Fail Fail Abort. "
                      "Succeed Abort. Print Assumptions Z.add. cbv zeta; lia. Qed."), "rejected"),
    # the construct of known guard-checker soundness bugs of Coq 8.20.1 (a fix in the
    # proof term), by tactic (the canary's text) and by term
    "fix-tactic": (ntp4vc.proofs.ROCQ_CANARIES["kernel-bug-fix"][0], "rejected"),
    "fix-term": ("Proof. cbv zeta. pose (f := fix g (k : nat) : nat := match k with O => O | S m => g m end). lia. Qed.",
                 "rejected"),
    # the same, where Coq's default printing depth would elide it, or in a constant of its own
    "fix-nested-deep": (ntp4vc.proofs.ROCQ_CANARIES["fix-nested-deep"][0], "rejected"),
    "fix-in-abstract": (ntp4vc.proofs.ROCQ_CANARIES["fix-in-abstract"][0], "rejected"),
    # honest neighbours: an abstract closed by Qed (Coq inlines it: the term is whole), a
    # proof term nested deeper than the default printing depth
    "honest-abstract-qed": ("Proof. cbv zeta. abstract lia. Qed.", "verified"),
    "honest-nested-deep": (("Proof. cbv zeta. pose (f := " + "(fun _ : True => " * 30 + "O" + ") I" * 30 + "). lia. Qed."),
                           "verified"),
    # honest neighbours: hypotheses named Back and Admitted, a local tactic named Abort', a
    # local helper, command words in comments and strings, bullets, braces and a selector
    "honest-back-hypothesis": (ntp4vc.proofs.ROCQ_CANARIES["hypothesis-named-back"][0], "verified"),
    "honest-named-like-commands": (
        ("Proof. #[local] Ltac Abort' := lia. (* Abort. Back. Admitted. Axiom x : False. *) "
        'idtac "Reset. Unset Guard Checking.". '
        "assert (helper : forall m : Z, (m <> 0)%Z -> (0 <= m)%Z -> (m - 1 < m)%Z) by (intros; lia). cbv zeta. "
        "pose proof fact1 as Admitted. pose proof (helper n Admitted fact0) as Back. Abort'. Qed."), "verified"),
    "honest-bullets-braces-selector": ("Proof. cbv zeta. split. { split.\n- lia.\n- lia. } all: lia. Defined.",
                                       "verified"),
    # the kit's reading expects a rejection (its sentence is "Qed .", not "Qed."), Coq's
    # view does not confirm it: the full check runs as a follow-up
    "honest-spaced-qed": ("Proof. cbv zeta; lia. Qed .", "verified"),
}
#: What Coq's own view must say for the allow-list and fix cheats (a part of the reason).
COQ_VIEW = {
    "unset-guard": ["command Unset is not allowed (Coq parsed 'Unset Guard Checking.')"],
    "many-commands": ["command Unset is not allowed (Coq parsed '#[local] Unset Universe Checking.')",
                      "command Set is not allowed (Coq parsed 'Set Primitive Projections.')",
                      "control Fail is not allowed", "control Succeed is not allowed",
                      "command Print is not allowed (Coq parsed 'Print Assumptions Z.add.')"],
    "fix-tactic": ["the proof term contains a fix/cofix"],
    "fix-term": ["the proof term contains a fix/cofix"],
    "fix-nested-deep": ["the proof term contains a fix/cofix"],
    "fix-in-abstract": ["the proof declared constant(s) of its own (candidate.power'vc_subproof"],
}
#: What the prover's own reading (``check.v``) must say, independently of the text scan.
PROVER = {
    "hide-plain": "does not have the task's statement",
    "redefine-definition": "does not have the task's statement",
    "redefine-theorem": "does not have the task's statement",
    "redefine-weaker": "does not have the task's statement",
    "abort-only": "was not found",
    "axiom-classic": "unexpected axiom candidate.classic",
    "parameter-classic": "unexpected axiom candidate.classic",
    "module-classic": "unexpected axiom candidate.Classical_Prop.classic",
    "axiom-task-name": "unexpected axiom candidate.char_inhabited'",
    "uses-reference": "the kit's admitted copy",
}



def _container(fetched, request, slots: int):
    """The real sandbox of the run, as the pipeline opens it (``pipeline.open_sandbox``): the
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


def _run(sandbox, tmp, candidates: dict):
    """``(report, exit code, {model: record}, run directory)`` of one run of ``candidates``
    (with the mode's canaries) in ``sandbox`` (the family's) and a fresh result cache of its
    own (a cached job would start no command: nothing recorded; and replay reads no live
    entry)."""
    preds = tmp / "preds.jsonl"
    preds.write_text("".join(json.dumps({"task_id": POWER, "model": name, "sample": 0, "output": out}) + "\n"
                             for name, (out, _) in candidates.items()))
    spec = RunSpec(benchmark="ntp4vc", modes=["rocq"], sandbox="container", parallel=2, limits=Limits(wall_s=120),
                   task_ids=[POWER], predictions=str(preds))
    settings = RunSettings(cache_dir=tmp / "cache", progress=False, command=["test"])
    with pipeline_sandbox(sandbox):
        report, _, code = run(spec, tmp / "run", settings=settings, console=Console(stderr=True, quiet=True))
    records = [json.loads(line) for line in (tmp / "run" / "records.jsonl").read_text().splitlines()]
    return report, code, {r["candidate"]["model"]: r for r in records}, tmp / "run"


@pytest.fixture(scope="module")
def family_runs(ntp4vc_fetched, request, tmp_path_factory):
    """The family's two runs, in its sandbox (a replay of the recording, or the real image
    under the recorder): every candidate (:func:`integrity_run`), then the :data:`PROVER`
    candidates with every job's full check (:func:`full_check_run`)."""
    from harness.verifiers.rocq import Rocq

    def live():
        return _container(ntp4vc_fetched, request, 2)

    with family_sandbox("rocq-integrity", "rocq", live=live) as sb:
        first = _run(sb, tmp_path_factory.mktemp("rocq-integrity"), CANDIDATES)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(Rocq, "expected_rejections", lambda self, proof: [])
            full = _run(sb, tmp_path_factory.mktemp("rocq-full-check"), {k: CANDIDATES[k] for k in PROVER})
    return first, full


@pytest.fixture(scope="module")
def integrity_run(family_runs):
    """The one run of every candidate (:func:`_run`)."""
    return family_runs[0]


@pytest.fixture(scope="module")
def full_check_run(family_runs):
    """A run of the :data:`PROVER` candidates with every job's full check (``coqc``, ``check.v``,
    ``coqchk``): the kit's expectation of a rejection switched off (``Rocq.expected_rejections``
    returns nothing), so that the prover's own reading is seen on each."""
    return family_runs[1]


@pytest.mark.parametrize("name", sorted(CANDIDATES))
def test_each_candidate_gets_its_verdict(integrity_run, name):
    rec = integrity_run[2][name]
    assert rec["verdict"] == CANDIDATES[name][1], rec["reason"]


@pytest.mark.parametrize("name", sorted(k for k in CANDIDATES if k.startswith("hide-")))
def test_coqs_own_parse_sees_the_abort_hidden_by_a_commented_string(integrity_run, name):
    rec = integrity_run[2][name]
    view = next(c for c in rec["checks"] if c["name"] == "commands-allow-listed")
    assert not view["ok"] and "command Abort is not allowed (Coq parsed 'Abort.')" in view["detail"]
    assert "Abort." in rec["verifier"]["extra"]["sentences"]


@pytest.mark.parametrize("name", sorted(COQ_VIEW))
def test_coqs_view_names_the_construct(integrity_run, name):
    rec = integrity_run[2][name]
    assert rec["verdict"] == "rejected", rec["reason"]
    for needle in COQ_VIEW[name]:
        assert needle in rec["reason"], (needle, rec["reason"])


@pytest.mark.parametrize("name", sorted(k for k, (_, v) in CANDIDATES.items() if v == "verified"))
def test_honest_proofs_pass_every_check_including_coqchk(integrity_run, name):
    rec = integrity_run[2][name]
    assert rec["verifier"]["extra"]["coqchk"] == 0 and "coqc and coqchk" in rec["reason"]
    assert all(c["ok"] for c in rec["checks"]), rec["checks"]


def test_an_identifier_named_like_a_command_is_not_a_command(integrity_run):
    got = integrity_run[2]["honest-named-like-commands"]["verifier"]["extra"]["sentences"]
    assert got[:2] == ["Proof.", "#[local]~Ltac~Abort'~:=~lia."] and "Abort'." in got and got[-1] == "Qed."
    assert "(pose~proof~fact1~as~Admitted)." in got


@pytest.mark.parametrize("name", sorted(PROVER))
def test_the_provers_own_reading_rejects_it(full_check_run, name):
    rec = full_check_run[2][name]
    reason = rec["reason"]
    # with text findings the prover's reading is appended; without, it is the reason
    prover = reason.split("(prover: ", 1)[1] if "(prover: " in reason else f"{rec['verdict']}: {reason}"
    assert prover.startswith("rejected") and PROVER[name] in prover, reason


def test_honest_proofs_carry_their_library_assumptions(integrity_run):
    recs = integrity_run[2]
    assert recs["honest"]["verifier"]["extra"]["assumptions"] == []
    assert recs["honest-classic"]["verifier"]["extra"]["assumptions"] == ["Classical_Prop.classic"]
    assert "statement = task's" in recs["honest-classic"]["reason"]


def test_validate_judges_with_the_runs_library_axioms(integrity_run):
    """``validate`` re-derives every record of the run with the library axioms the run read
    in its sandbox (run.json ``verifier_state``): the honest proof through
    ``Classical_Prop.classic`` stays ``verified`` (without them it was flagged)."""
    from rich.console import Console

    from harness.cli.results import _rejudge

    run_dir = integrity_run[3]
    state = json.loads((run_dir / "run.json").read_text())["verifier_state"]
    assert "Coq.Logic.Classical_Prop.classic" in state["library_axioms"]
    assert integrity_run[2]["honest-classic"]["verdict"] == "verified"
    assert _rejudge(run_dir, Console(stderr=True, quiet=True)) == []


def test_the_new_canaries_run_and_pass(integrity_run):
    report, code, *_ = integrity_run
    got = {x["model"]: x["verdict"] for x in report["canaries"]["results"]}
    for name in ("comment-string-abort", "redefined-theorem", "shadowed-axiom", "command-not-allowed",
                 "kernel-bug-fix", "fix-nested-deep", "fix-in-abstract"):
        assert got[f"canary:{name}"] == "rejected"
    assert got["canary:hypothesis-named-back"] == "verified"
    assert report["canaries"]["ok"] and code == 0


#: Candidates with a command outside the allow-list, or no single closing ``Qed.``, in the kit's reading.
EXPECTED = sorted(k for k in CANDIDATES if k.startswith(("hide-", "redefine-", "axiom-", "parameter-", "module-"))
                  or k in ("abort-only", "unset-guard", "many-commands"))


@pytest.mark.parametrize("name", EXPECTED)
def test_coqs_view_alone_decides_what_the_kit_expected_to_reject(integrity_run, name):
    """A job whose proof the kit expects Coq's view to reject runs ``coqc`` alone: its verdict
    stands on Coq's parse (the allow-list, the one closing ``Qed.``), and no coqchk ran."""
    rec = integrity_run[2][name]
    assert rec["verdict"] == "rejected" and rec["verifier"]["extra"]["coqchk"] is None, rec["reason"]
    view = next(c for c in rec["checks"] if c["name"] == "commands-allow-listed")
    assert not view["ok"] and view["detail"] in rec["reason"]


def test_an_expected_rejection_that_coq_does_not_confirm_gets_the_full_check(integrity_run):
    rec = integrity_run[2]["honest-spaced-qed"]
    assert rec["verdict"] == "verified" and rec["verifier"]["extra"]["coqchk"] == 0, rec["reason"]
    # the first run alone reads infra_error until the follow-up ran: it is not retried
    assert rec["attempts"] == 1


@pytest.mark.parametrize("name", ["fix-tactic", "fix-term", "fix-nested-deep"])
def test_coqs_print_of_the_term_decides_an_expected_fix(integrity_run, name):
    """A ``fix`` in the proof text: ``coqc`` alone, the theorem's term printed after the
    proof (no depth limit) shows it, and no check file or coqchk ran."""
    rec = integrity_run[2][name]
    assert rec["verdict"] == "rejected" and rec["verifier"]["extra"]["coqchk"] is None, rec["reason"]
    assert "the proof term contains a fix/cofix" in rec["reason"]


def test_a_fix_the_printed_term_does_not_show_gets_the_full_check(integrity_run):
    """Under ``Defined`` an ``abstract`` keeps the fix in a constant of its own: the term
    printed after the proof only names it, so the full check runs and its module listing rejects."""
    rec = integrity_run[2]["fix-in-abstract"]
    assert rec["verdict"] == "rejected" and rec["verifier"]["extra"]["coqchk"] == 0, rec["reason"]
    assert rec["attempts"] == 1
    assert "the proof declared constant(s) of its own" in rec["reason"]
