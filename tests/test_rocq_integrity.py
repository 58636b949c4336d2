"""Issue 13, NTP4VC (Rocq): the cheats a dishonest candidate used, each class in several
spellings, judged end to end with the real Coq 8.20.1 of the ``ntp4vc-rocq`` image.

1. Strings inside comments: Coq reads ``(* "(*" *)`` as one closed comment (a ``"`` in a
   comment starts a string; ``parsing/cLexer.ml``), so an ``Abort.`` after it is live. The
   kit's lexer must see it (``no-cheat-tokens``).
2. The report pointed elsewhere: after the hidden ``Abort``, a new constant with the
   theorem's name. The prover's own reading must reject it (``check.v`` reports on
   ``VerikitJob.candidate.<theorem>`` and compares its type with the task's statement).
3. A new axiom named like a library one (``classic``): the prover's own reading must reject
   it (names compared fully qualified).

For 2 and 3 the text scan rejects the candidates already (class 1); the assertions check
the prover's own verdict, recorded in the reason as ``(prover: rejected: ...)``, so each
defence is tested on its own. Honest proofs, one of them using the library axiom
``classic``, stay ``verified``. Skips without an engine unless ``VERIKIT_REQUIRE_ENGINE=1``.
"""

from __future__ import annotations

import json

import pytest
from rich.console import Console

from harness.benchmarks import ntp4vc
from harness.benchmarks.ntp4vc.proofs import POWER_STATEMENT
from harness.runner import RunOptions, run
from harness.sandbox import Limits

pytestmark = [pytest.mark.container, pytest.mark.realtool, pytest.mark.slow]

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


@pytest.fixture(scope="module")
def image(ntp4vc_fetched, engine_image):
    return engine_image(lambda: ntp4vc.BENCHMARK.sandbox_image("rocq", ntp4vc_fetched, build=False))


@pytest.fixture(scope="module")
def integrity_run(image, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("rocq-integrity")
    preds = tmp / "preds.jsonl"
    preds.write_text("".join(json.dumps({"task_id": POWER, "model": name, "sample": 0, "output": out}) + "\n"
                             for name, (out, _) in CANDIDATES.items()))
    opts = RunOptions(benchmark="ntp4vc", modes=["rocq"], sandbox="container", parallel=2,
                      limits=Limits(wall_s=120), out=tmp / "run", use_cache=False, task_ids=[POWER],
                      predictions=str(preds), progress=False, command=["test"])
    report, _, code = run(opts, Console(stderr=True, quiet=True))
    records = [json.loads(line) for line in (tmp / "run" / "records.jsonl").read_text().splitlines()]
    return report, code, {r["candidate"]["model"]: r for r in records}


@pytest.mark.parametrize("name", sorted(CANDIDATES))
def test_each_candidate_gets_its_verdict(integrity_run, name):
    rec = integrity_run[2][name]
    assert rec["verdict"] == CANDIDATES[name][1], rec["reason"]


@pytest.mark.parametrize("name", sorted(k for k in CANDIDATES if k.startswith("hide-")))
def test_the_lexer_sees_the_abort_hidden_by_a_commented_string(integrity_run, name):
    rec = integrity_run[2][name]
    scan = next(c for c in rec["checks"] if c["name"] == "no-cheat-tokens")
    assert not scan["ok"] and "Abort" in scan["detail"]


@pytest.mark.parametrize("name", sorted(PROVER))
def test_the_provers_own_reading_rejects_it(integrity_run, name):
    rec = integrity_run[2][name]
    reason = rec["reason"]
    # with text findings the prover's reading is appended; without, it is the reason
    prover = reason.split("(prover: ", 1)[1] if "(prover: " in reason else f"{rec['verdict']}: {reason}"
    assert prover.startswith("rejected") and PROVER[name] in prover, reason


def test_honest_proofs_carry_their_library_assumptions(integrity_run):
    recs = integrity_run[2]
    assert recs["honest"]["verifier"]["extra"]["assumptions"] == []
    assert recs["honest-classic"]["verifier"]["extra"]["assumptions"] == ["Classical_Prop.classic"]
    assert "statement = task's" in recs["honest-classic"]["reason"]


def test_the_new_canaries_run_and_pass(integrity_run):
    report, code, _ = integrity_run
    got = {x["model"]: x["verdict"] for x in report["canaries"]["results"]}
    for name in ("comment-string-abort", "redefined-theorem", "shadowed-axiom"):
        assert got[f"canary:{name}"] == "rejected"
    assert report["canaries"]["ok"] and code == 0
