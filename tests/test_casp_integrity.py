"""CASP integrity, on the real Frama-C's outputs (recorded: ``framac_recorded``): each cheat
class, in several spellings, must not come back ``verified``; the honest candidates next
to them must.

The rules are judged on Frama-C's own view of the file (``framac_view.ml``), the
preprocessor's output of the candidate's text and a WP run on a do-nothing body (see
``harness/benchmarks/casp/integrity.py``). Tasks: CASP's 01_57 (``divmult``) from the
mirror, and two small tasks written for these tests (one includes ``<stdlib.h>``, so that
``exit``/``abort`` come with Frama-C's own libc contracts).
"""

from __future__ import annotations

import pytest

from harness.benchmarks import casp
from harness.benchmarks.casp import integrity
from harness.runspec import RunSpec


STDLIB_TASK = casp.Task(
    task_id="t/stdlib", function="clamp", prelude="#include <stdlib.h>\n",
    contract="/*@ requires 0 <= n <= 1000;\n    assigns \\nothing;\n    ensures \\result == (n < 10 ? n : 10); */",
    code="int clamp(int n) {\n  if (n < 10) return n;\n  return 10;\n}", published=None)

LOOP_TASK = casp.Task(
    task_id="t/loop", function="count", prelude="",
    contract="/*@ requires 0 <= n <= 1000;\n    assigns \\nothing;\n    ensures \\result == n; */",
    code=("int count(int n) {\n  int i = 0;\n  /*@ loop invariant 0 <= i <= n;\n      loop assigns i;\n"
          "      loop variant n - i; */\n  while (i < n) i++;\n  return i;\n}"), published=None)

SIG = "int divmult(int a, int b)\n"


#: The rule-matrix cases of this module: name -> ``items(tasks) -> [(task, mode, output)]``.
#: They are judged as ONE run (the ``batch`` fixture) on the real Frama-C's recorded outputs
#: (``framac_recorded``: ``tests/recorded/runs/casp-integrity/``, made by
#: ``scripts/record.py casp-integrity``; ``tests/test_freshness.py`` re-runs a sample live),
#: without the execution cross-check (these rules are judged on Frama-C's output alone;
#: the cross-check has its own tests); each test reads the records of its case. The
#: canaries, one per cheat class, run live in ``tests/test_casp.py``.
CASES: dict = {}


def case(fn):
    """Register ``fn(tasks) -> [(task, mode, output)]`` as a real-tool case of the module."""
    CASES[fn.__name__] = fn
    return fn


@pytest.fixture(scope="module")
def batch(casp_tasks, framac_recorded, tmp_path_factory):
    return framac_recorded.run_items([x for items in CASES.values() for x in items(casp_tasks)],
                                 tmp_path_factory.mktemp("casp-integrity"), execution=False)


def _run(batch, items):
    """items: [(task, mode, output)] (of a registered case) -> their records, in that order."""
    return [batch[(t.task_id, mode, out)] for t, mode, out in items]


def _failed_checks(rec) -> set[str]:
    return {c["name"] for c in rec["checks"] if not c["ok"]}


# --- code-from-spec -------------------------------------------------------------------------

NON_TERMINATING = {
    "while(1)": SIG + "{\n  while (1) ;\n}\n",
    "for(;;)": SIG + "{\n  for (;;) {}\n  return a;\n}\n",
    "do-while": SIG + "{\n  do { } while (1);\n  return a;\n}\n",
    "recursion": SIG + "{\n  return divmult(a, b);\n}\n",
    # the helper has divmult's contract, so that WP proves every goal (partial correctness) and
    # only the termination rule fails it (without one, its goals waited for their timeouts)
    "mutual recursion": "int vk_helper(int a, int b);\n" + SIG + "{\n  return vk_helper(a, b);\n}\n"
                        "/*@ requires b != 0;\n    requires b != -1;\n    assigns \\nothing;\n    ensures \\result == a; */\n"
                        "int vk_helper(int a, int b) { return divmult(a, b); }\n",
    "goto loop": SIG + "{\n again: goto again;\n  return a;\n}\n",
}


@case
def non_terminating(tasks):
    return [(tasks["01_57"], "code-from-spec", out) for out in NON_TERMINATING.values()]


@pytest.mark.recorded
def test_code_from_spec_non_termination_fails(casp_tasks, batch):
    """WP 25 proves these (partial correctness); the kit's termination rules fail them,
    as Frama-C 30's Terminating goal does."""
    recs = _run(batch, non_terminating(casp_tasks))
    for (name, _), rec in zip(NON_TERMINATING.items(), recs):
        if name == "goto loop":  # WP itself refuses a loop made of a goto
            assert rec["verdict"] == "invalid" and "Non natural loop" in rec["reason"], rec["reason"]
            continue
        assert rec["verdict"] == "failed", (name, rec["verdict"], rec["reason"])
        assert rec["verifier"]["extra"]["termination"] == "failed", name
        assert "termination not established" in rec["reason"], (name, rec["reason"])


@case
def exit_and_abort(tasks):
    sig = "int clamp(int n) "
    return [
        (STDLIB_TASK, "code-from-spec", sig + "{\n  if (n < 10) return n;\n  exit(0);\n}\n"),
        (STDLIB_TASK, "code-from-spec", sig + "{\n  if (n < 10) return n;\n  abort();\n}\n"),
        (STDLIB_TASK, "code-from-spec", sig + "{\n  if (n < 10) return n;\n  _Exit(1);\n}\n"),
        (LOOP_TASK, "code-from-spec", "void exit(int);\nint count(int n) {\n  exit(0);\n}\n"),
        (LOOP_TASK, "code-from-spec", "int count(int n) {\n  abort();\n  return n;\n}\n"),
        (STDLIB_TASK, "code-from-spec", STDLIB_TASK.code),
        (STDLIB_TASK, "code-from-spec", sig + "{\n  if (abs(n) < 10) return n;\n  return 10;\n}\n"),
        (LOOP_TASK, "code-from-spec", LOOP_TASK.code),
    ]


@pytest.mark.recorded
def test_code_from_spec_exit_and_abort(casp_tasks, batch):
    """With <stdlib.h> from the task, exit/abort carry Frama-C's libc contracts (never
    return): termination fails. Declared by the candidate, or called undeclared, they are
    trusted declarations: rejected. A loop with a proved variant, and a call to a libc
    function that returns (abs), are accepted."""
    recs = _run(batch, exit_and_abort(casp_tasks))
    for rec in recs[:3]:
        assert rec["verdict"] == "failed" and "never returns" in rec["reason"], rec["reason"]
    for rec in recs[3:5]:
        assert rec["verdict"] == "rejected", rec["reason"]
        assert "no-trusted-declarations" in _failed_checks(rec), rec["checks"]
    gold, with_abs, loop = recs[5:]
    assert gold["verdict"] == "verified" and gold["verifier"]["extra"]["termination"] == "proved", gold["reason"]
    assert with_abs["verdict"] == "verified", with_abs["reason"]
    assert with_abs["verifier"]["extra"]["termination"] == "assumed"  # abs(): Frama-C libc's contract
    assert loop["verdict"] == "verified" and loop["verifier"]["extra"]["termination"] == "proved", loop["reason"]


PREPROCESSOR = {
    "#define": "#define VK 1\n" + SIG + "{ return a; }\n",
    "digraph %:define": "%:define return return a; //\n" + SIG + "{ return (a / b) * b + (a % b); }\n",
    "digraph %:if 0": "%:if 0\n%:endif\n" + SIG + "{ return a; }\n",
    "comment before #": "/* c */ # define VK 1\n" + SIG + "{ return a; }\n",
    "line splice": "#\\\ndefine VK 1\n" + SIG + "{ return a; }\n",
    "#line": '#line 1 "task.c"\n' + SIG + "{ return a; }\n",
    "#include": "#include <stdlib.h>\n" + SIG + "{ return a; }\n",
    "#pragma": "#pragma once\n" + SIG + "{ return a; }\n",
}


@case
def preprocessing(tasks):
    t = tasks["01_57"]
    return ([(t, "code-from-spec", out) for out in PREPROCESSOR.values()]
            + [(t, "spec-from-code", "%:define return return 7777;\n/*@ assigns \\nothing;\n"
                "    ensures \\result == 7777; */\n" + t.code),
               (t, "spec-from-code", "#def\\\nine VK 1\n" + t.contract + "\n" + t.code)])


@pytest.mark.recorded
def test_preprocessing_directives_in_any_spelling_are_rejected(casp_tasks, batch):
    recs = _run(batch, preprocessing(casp_tasks))
    names = list(PREPROCESSOR) + ["spec-from-code %:define", "spec-from-code splice"]
    for name, rec in zip(names, recs):
        assert rec["verdict"] == "rejected", (name, rec["verdict"], rec["reason"])
        assert "no-preprocessing" in _failed_checks(rec), (name, rec["checks"])


TRUSTED = {
    "contract on prototype": "/*@ ensures \\result == 0; */\nint vk_zero(int x);\n"
                             + SIG + "{ return a + vk_zero(b); }\n",
    "parenthesised name + attribute": "/*@ ensures \\false; */\nint (vk_lie)(int x) __attribute__((pure));\n"
                                      + SIG + "{ return vk_lie(a); }\n",
    "called undeclared": SIG + "{ return vk_undeclared(a, b); }\n",
    "plain prototype called": "int vk_plain(int);\n" + SIG + "{ vk_plain(a); return a; }\n",
}


@case
def trusted(tasks):
    return [(tasks["01_57"], "code-from-spec", out) for out in TRUSTED.values()]


@pytest.mark.recorded
def test_trusted_declarations_are_rejected(casp_tasks, batch):
    recs = _run(batch, trusted(casp_tasks))
    for name, rec in zip(TRUSTED, recs):
        assert rec["verdict"] in ("rejected", "invalid"), (name, rec["verdict"], rec["reason"])
        if rec["verdict"] == "rejected":
            assert "no-trusted-declarations" in _failed_checks(rec), (name, rec["checks"])
    assert recs[0]["verdict"] == recs[1]["verdict"] == "rejected"


SIGNATURES = ["long divmult(long a, long b)\n", "int divmult(int a, int b, int c)\n",
              "unsigned divmult(int a, int b)\n", "int divmult(long long a, int b)\n"]


@case
def signatures(tasks):
    return [(tasks["01_57"], "code-from-spec", v + "{\n  return (a / b) * b + (a % b);\n}\n") for v in SIGNATURES]


@pytest.mark.recorded
def test_signature_changes_are_rejected(casp_tasks, batch):
    variants = SIGNATURES
    recs = _run(batch, signatures(casp_tasks))
    for v, rec in zip(variants, recs):
        assert rec["verdict"] in ("rejected", "invalid"), (v, rec["verdict"], rec["reason"])
    assert sum(r["verdict"] == "rejected" for r in recs) >= 3, [r["reason"] for r in recs]
    assert all("signature of divmult()" in r["reason"] for r in recs if r["verdict"] == "rejected")


def _axiom_items(t):
    return [
        ("no-axioms", "/*@ axiomatic C { axiom c: \\false; } */\nint vk_unused;\n" + t.code),
        ("no-axioms", "/*@ axiomatic Zero { axiom z: \\forall int *p; *p == 0; } */\nint vk_unused;\n" + t.code),
        ("no-axioms", "/*@ global invariant vk_g: 1 == 2; */\nint vk_unused;\n" + t.code),
        ("no-admit-or-check", SIG + "{\n  //@ admit \\false;\n  return 0;\n}\n"),
        ("no-admit-or-check", SIG + "{\n  /*@ check a == 0; */\n  return (a / b) * b + (a % b);\n}\n"),
        ("no-admit-or-check", "/*@ admit ensures \\result == 1; */\nint vk_h(void) { return 0; }\n" + t.code),
        ("no-asm", SIG + "{\n  __asm__(\"nop\");\n  return (a / b) * b + (a % b);\n}\n"),
    ]


@case
def axioms(tasks):
    t = tasks["01_57"]
    return ([(t, "code-from-spec", out) for _, out in _axiom_items(t)]
            + [(t, "code-from-spec", "/*@ lemma vk_ok: \\forall integer x; x + 0 == x; */\nint vk_unused;\n"
                + SIG + t.code[t.code.index("{"):])])


@pytest.mark.recorded
def test_axioms_admits_checks_and_asm_are_rejected(casp_tasks, batch):
    items = _axiom_items(casp_tasks["01_57"])
    recs = _run(batch, axioms(casp_tasks))
    for (check, out), rec in zip(items, recs):
        assert rec["verdict"] == "rejected", (out, rec["verdict"], rec["reason"])
        assert check in _failed_checks(rec), (out, rec["checks"])
    assert recs[-1]["verdict"] == "verified", recs[-1]["reason"]  # a lemma is proved by WP, not assumed


# --- spec-from-code -------------------------------------------------------------------------

VACUOUS = {
    "result == result": "/*@ assigns \\nothing;\n    ensures \\result == \\result; */",
    "disjunction with a tautology": "/*@ assigns \\nothing;\n    ensures \\result == 12345 || b == b; */",
    "true && true": "/*@ ensures \\true && \\true; */",
    "requires only": "/*@ requires 1 == 1; */",
    "predicate defined as true": "/*@ predicate vk_p(integer x) = \\true; */\n/*@ ensures vk_p(\\result); */",
    "dead behavior": "/*@ requires b != 0;\n    behavior never:\n      assumes b == 0;\n      ensures \\result == 99; */",
    "inconsistent requires": "/*@ requires b > 0;\n    requires b < 0;\n    ensures \\result == 99; */",
}


@case
def vacuous(tasks):
    t = tasks["01_57"]
    return ([(t, "spec-from-code", c + "\n" + t.code) for c in VACUOUS.values()]
            + [(t, "spec-from-code", t.contract + "\n" + t.code),
               (t, "spec-from-code", "/*@ requires b != 0;\n    requires b != -1;\n    assigns \\nothing;\n"
                "    behavior pos: assumes a >= 0; ensures \\result == a;\n"
                "    behavior neg: assumes a < 0; ensures \\result == a; */\n" + t.code)])


@pytest.mark.recorded
def test_spec_from_code_vacuous_contracts_are_rejected(casp_tasks, batch):
    recs = _run(batch, vacuous(casp_tasks))
    for name, rec in zip(VACUOUS, recs):
        assert rec["verdict"] == "rejected", (name, rec["verdict"], rec["reason"])
        assert "not-vacuous" in _failed_checks(rec), (name, rec["checks"])
    gold, behaviors = recs[-2:]
    for rec in (gold, behaviors):
        assert rec["verdict"] == "verified", rec["reason"]
        check = next(c for c in rec["checks"] if c["name"] == "not-vacuous")
        assert check["ok"] and "0/1" in check["detail"] or "0/2" in check["detail"], check


SPEC_CHEATS = [
        ("no-axioms", "/*@ axiomatic VkZero { logic integer vk_z; axiom vk_all: \\forall integer x; x == vk_z; } */\n"
                      "/*@ assigns \\nothing;\n    ensures \\result == 7777; */"),
        ("no-admit-or-check", "/*@ requires b != 0;\n    requires b != -1;\n    admit ensures \\result == 7777; */"),
        ("no-admit-or-check", "/*@ requires b != 0;\n    requires b != -1;\n    check ensures \\result == a; */"),
        ("no-trusted-declarations", "/*@ ensures \\false; */\nint vk_lie(void);\n"
                                    "/*@ requires b != 0;\n    requires b != -1;\n    ensures \\result == a; */"),
]


@case
def spec_cheats(tasks):
    t = tasks["01_57"]
    return [(t, "spec-from-code", c + "\n" + t.code) for _, c in SPEC_CHEATS]


@pytest.mark.recorded
def test_spec_from_code_axiom_admit_and_trusted_helper_are_rejected(casp_tasks, batch):
    items = SPEC_CHEATS
    recs = _run(batch, spec_cheats(casp_tasks))
    for (check, out), rec in zip(items, recs):
        assert rec["verdict"] == "rejected", (out, rec["verdict"], rec["reason"])
        assert check in _failed_checks(rec), (out, rec["checks"])


TRIVIAL_TASK = casp.Task(task_id="t/trivial", function="nop", prelude="",
                         contract="/*@ assigns \\nothing; */", code="void nop(void) {\n}", published=None)


@case
def trivial(tasks):
    return [(TRIVIAL_TASK, "code-from-spec", "void nop(void) { }\n")]


@pytest.mark.recorded
def test_trivial_task_is_verified_with_a_note(casp_tasks, batch):
    """A task whose contract has no ensures: a correct body is ``verified`` with
    ``trivial_task`` (not a model's failure), whether or not WP generates goals."""
    (rec,) = _run(batch, trivial(casp_tasks))
    assert rec["verdict"] == "verified", rec["reason"]
    assert rec["verifier"]["extra"]["trivial_task"] is True
    assert "trivial task" in rec["reason"]


# --- the pieces, without the tool -----------------------------------------------------------


def test_preprocessing_check_is_whitespace_blind_only():
    same = {"comments": "int f(void) { return 1; }", "no_comments": "int f(void) {return 1;}",
            "tokens": "int f(void)\n{ return 1; }"}
    assert integrity.preprocessing_check("int f(void)\n{ return 1; }\n", same, "")["ok"]
    assert not integrity.preprocessing_check("ad\\\nmit", dict(same, comments="admit"), "")["ok"]
    assert not integrity.preprocessing_check("int a;", dict(same, no_comments="int b;"), "")["ok"]
    assert not integrity.preprocessing_check("int a;", dict(same, tokens=None), "verikit: the preprocessor exited 1")["ok"]
    assert integrity.preprocessing_check(None, None, None) is None


def test_call_cycles():
    assert integrity._cycle({"f": ["g"], "g": ["h"], "h": []}) == []
    assert integrity._cycle({"f": ["f"]}) == ["f", "f"]
    assert integrity._cycle({"f": ["g"], "g": ["f"]}) == ["f", "g", "f"]


def test_empty_parameter_list_reads_as_void():
    assert integrity._same_type("struct maybeBool ()", "struct maybeBool (void)")
    assert not integrity._same_type("long (int , int )", "int (int , int )")


@pytest.mark.recorded
def test_canaries_stay_on_their_pair_whatever_task_says(casp_tasks, framac_recorded, tmp_path):
    """``--task 03_379`` alone: the canaries still run on 01_57 (before the integrity
    rules on Frama-C's view they moved onto the selected task, where the wrong-code canary
    came back invalid: a false alarm)."""
    import io

    from rich.console import Console

    from harness import runner

    spec = RunSpec(benchmark="casp", modes=["code-from-spec", "spec-from-code"], task_ids=["03_379"])
    plan = runner.plan_run(spec, Console(file=io.StringIO()), data_dir=tmp_path / "data")
    jobs, expected = runner.build_jobs(plan, framac_recorded.probed, plan.verifier)
    canary_jobs = [j for j in jobs if j.candidate["model"].startswith("canary:")]
    assert len(canary_jobs) == len(expected) == sum(len(casp.canaries(plan.all_tasks, m)) for m in spec.modes) >= 20
    assert {j.task_id for j in canary_jobs} == {"01_57", casp.KIT_DEAD_CANARY.task_id}  # the dead-code canary: its own pair
    assert {j.task_id for j in jobs if not j.candidate["model"].startswith("canary:")} == {"03_379"}
