"""CASP execution cross-check: "verified" means proved by WP and not refuted by running it
(``harness/benchmarks/casp/execution.py``, ``drivers/exec_check.sh``).

The batch of candidates (module-scoped) is judged on the recorded outputs of the real
Frama-C/WP, E-ACSL and gcc (-O0/-O2, ASan + UBSan) on this host (``framac_recorded``:
``tests/recorded/runs/casp-execution/``; refresh it with ``python scripts/record.py
casp-execution``); the driver runs live in the framac image at the end of the module, and
the cross-check's canaries run live with the other canaries (``tests/test_casp.py``).

The cheats are WP-vs-C differences that WP 25 proves (checked: Qed alone proves every goal
of each): a union read through another member than
the one written, a bit-field used beyond its width; they must come back ``rejected`` with
the input that shows it. Their honest neighbours (the union read through the member
written, a bit-field within its width, a libc call, the gold) must still verify.
"""

from __future__ import annotations

import dataclasses

import pytest

from harness.benchmarks import Candidate, casp
from harness.benchmarks.casp import execution

DS = {"name": "test", "revision": "0"}
CONTRACT = "/*@ requires 0 <= n <= 1000;\n    assigns \\nothing;\n    ensures \\result == 2 * n; */"
TWICE = casp.Task(task_id="t/twice", function="twice", prelude="", contract=CONTRACT,
                  code="int twice(int n) {\n  return n + n;\n}", published=None)
LIBC = casp.Task(task_id="t/twice-libc", function="twice", prelude="#include <stdlib.h>\n", contract=CONTRACT,
                 code="int twice(int n) {\n  return n + n;\n}", published=None)
ARRAY = casp.Task(task_id="t/zero", function="zero", prelude="",
                  contract=("/*@ requires 0 < n;\n    requires \\valid(a + (0 .. n-1));\n    assigns a[0 .. n-1];\n"
                            "    ensures \\forall integer i; 0 <= i < n ==> a[i] == 0; */"),
                  code=("void zero(int *a, int n) {\n  /*@ loop invariant 0 <= i <= n;\n"
                        "      loop invariant \\forall integer k; 0 <= k < i ==> a[k] == 0;\n"
                        "      loop assigns i, a[0 .. n-1];\n      loop variant n - i; */\n"
                        "  for (int i = 0; i < n; i++) a[i] = 0;\n}"), published=None)
SIG = "int twice(int n) {\n"
#: Frama-C 25's RTE has no signed_overflow assertion for % (images/toolchains.json soundness_bugs
#: frama-c:rte-modulo-signed-overflow): WP verifies ``a % b`` under ``b != 0`` alone, but
#: INT_MIN % -1 is undefined in C (x86 traps). The inputs hold the (min, -1) pair.
REM = casp.Task(task_id="t/rem", function="rem", prelude="",
                contract="/*@ requires b != 0;\n    assigns \\nothing;\n    ensures \\result == a % b; */",
                code="int rem(int a, int b) {\n  return a % b;\n}", published=None)
REM_SAFE = casp.Task(task_id="t/rem-safe", function="rem", prelude="",
                     contract=("/*@ requires b != 0;\n    requires a != -2147483647 - 1 || b != -1;\n"
                               "    assigns \\nothing;\n    ensures \\result == a % b; */"),
                     code="int rem(int a, int b) {\n  return a % b;\n}", published=None)

#: WP-vs-C differences WP 25 proves (class, spelling) -> code-from-spec candidate.
CHEATS = {
    "union other member (same width)": SIG + "  union { int a; int b; } u;\n  u.a = n + n;\n  u.b = 7;\n  return u.a;\n}\n",
    "union other member (narrower)": SIG + "  union { int a; short b; } u;\n  u.a = n + n;\n  u.b = 7;\n  return u.a;\n}\n",
    "union through a byte array": SIG + "  union { int a; unsigned char c[4]; } u;\n  u.a = n + n;\n  u.c[3] = 1;\n"
                                  "  return u.a;\n}\n",
    "bit-field beyond width (signed)": SIG + "  struct { int v : 4; } s;\n  s.v = n;\n  return s.v + n;\n}\n",
    "bit-field beyond width (unsigned)": SIG + "  struct { unsigned v : 3; } s;\n  s.v = n + n;\n  return s.v;\n}\n",
}
#: Honest neighbours -> (task, code-from-spec candidate).
HONEST = {
    "gold": (TWICE, TWICE.code),
    "libc call": (LIBC, SIG + "  return abs(n) + n;\n}\n"),
    "array gold": (ARRAY, ARRAY.code),
    "a % b where the requires exclude INT_MIN % -1": (REM_SAFE, REM_SAFE.code),
    "a local set on the branch that reads it": (TWICE, SIG + "  int r;\n  if (n > 500) r = n + n;\n"
                                                "  return n > 500 ? r : n + n;\n}\n"),
    "a local array filled by a loop, then read": (TWICE, SIG + "  int t[4];\n  /*@ loop invariant 0 <= i <= 4;\n"
                                                  "      loop invariant \\forall integer k; 0 <= k < i ==> t[k] == n;\n"
                                                  "      loop assigns i, t[0 .. 3];\n      loop variant 4 - i; */\n"
                                                  "  for (int i = 0; i < 4; i++) t[i] = n;\n  return t[0] + t[3];\n}\n"),
}
#: Honest code the fragment rules refuse (known over-rejections, docs/integrity.md): a union
#: written through two members and read through the last one written; a value stored into
#: a bit-field that fits only because of the requires (0 <= n <= 1000 < 4096), which the
#: rule does not read. The cross-check finds nothing against either.
OVER_REJECTED = {
    "union read through the member written": SIG + "  union { int a; short b; } u;\n  u.b = 7;\n  u.a = n + n;\n"
                                             "  return u.a;\n}\n",
    "bit-field within its width by the requires": SIG + "  struct { unsigned v : 12; } s;\n  s.v = n;\n"
                                                  "  return s.v + s.v;\n}\n",
}
#: spec-from-code: contract -> expected verdict on the real code of TWICE.
SPECS = {
    "gold contract": (CONTRACT, "verified"),
    "true but weak (kills no mutant)": ("/*@ requires 0 <= n <= 1000;\n    assigns \\nothing;\n    ensures \\result >= 0; */",
                                        "rejected"),
}


#: A crash only on an input random drawing almost never makes (n == 777 among 0..1000):
#: ``INT_MIN % -1``, which Frama-C 25's RTE does not guard, so WP proves the code. The
#: inputs aimed at the code's own constants (777, and 778 - 1) draw it.
MAGIC = SIG + ("  int m = n - 778;\n  int r = n + n;\n  if (n == 777) r += (-2147483647 - 1) % m;\n"
               "  return r;\n}\n")

#: A read of an uninitialised local whose value WP's model makes irrelevant (``u - u``):
#: undefined in C; E-ACSL checks RTE's ``\initialized`` assertions at run time.
UNINIT = SIG + "  int u;\n  int r = n + n + (u - u);\n  return r;\n}\n"

#: The canaries of the cross-check's classes (harness/benchmarks/casp/candidates.py canaries()).
CANARIES = ("canary:union-other-member", "canary:bitfield-beyond-width", "canary:uninitialised-read")


@pytest.fixture(scope="module")
def records(framac_recorded, casp_tasks, tmp_path_factory):
    """One run of every candidate of this module (WP + the cross-check), by name."""
    opts = framac_recorded.options(smoke=True, wp_timeout_s=10)
    t57 = casp_tasks["01_57"]
    canaries = {cand.model: (cand, expected) for cand, expected in casp.canaries([t57], "code-from-spec")}
    items = [(name, t57, "code-from-spec", canaries[name][0].output) for name in CANARIES]
    items += [(name, TWICE, "code-from-spec", code) for name, code in CHEATS.items()]
    items += [(name, task, "code-from-spec", code) for name, (task, code) in HONEST.items()]
    items += [(name, TWICE, "code-from-spec", code) for name, code in OVER_REJECTED.items()]
    items += [("INT_MIN % -1", REM, "code-from-spec", REM.code)]
    items += [("magic constant", TWICE, "code-from-spec", MAGIC)]
    items += [("uninitialised local", TWICE, "code-from-spec", UNINIT)]
    items += [(name, TWICE, "spec-from-code", spec + "\n" + TWICE.code) for name, (spec, _) in SPECS.items()]
    jobs = [casp.build_job(t, Candidate(task_id=t.task_id, model=f"m{i}", sample=0, output=out, origin="test"),
                           mode, opts, DS) for i, (_name, t, mode, out) in enumerate(items)]
    # no gate: the fragment rules reject the union and bit-field cheats from Frama-C's view
    # before WP; here WP and the second net run on them all the same, to show what it finds
    jobs = [dataclasses.replace(j, options={**j.options, "gate": False}) for j in jobs]
    # the session's result cache and task runs: the canaries and 01_57's task run recur in other modules
    recs = {r["candidate"]["model"]: r for r in framac_recorded.run_casp_jobs(jobs, tmp_path_factory.mktemp("exec"), shared=True)}
    return {name: recs[f"m{i}"] for i, (name, *_rest) in enumerate(items)}


@pytest.mark.recorded
@pytest.mark.parametrize("name", list(CHEATS))
def test_wp_vs_c_cheats_rejected_with_input(records, name):
    """WP proves it (every goal); running it refutes it, with the input."""
    rec = records[name]
    assert rec["goals"] and rec["goals"]["proved"] == rec["goals"]["total"], (name, rec["reason"])
    assert rec["verdict"] == "rejected", (name, rec["verdict"], rec["reason"])
    # the cross-check's own finding, whichever rule decided first (an allow-list may reject bit-fields)
    ex = rec["verifier"]["extra"]["execution"]
    assert ex["status"] == "refuted" and ex["seed"] is not None and ex["drawn"] == execution.N_INPUTS, ex
    assert "input " in ex["reason"] and "n=" in ex["reason"] and "Postcondition failed" in ex["reason"], ex["reason"]


@pytest.mark.recorded
def test_modulo_overflow_that_wp_25_proves_is_rejected_by_running_it(records):
    """A known soundness bug of the pinned Frama-C (RTE 25 guards ``%`` against division by
    zero only): WP proves ``a % b`` under ``b != 0``; the input (INT_MIN, -1), drawn for
    every pair of signed parameters, crashes it: ``rejected`` naming that input. The same
    code under requires that exclude the pair is verified (``HONEST``)."""
    rec = records["INT_MIN % -1"]
    assert rec["goals"] and rec["goals"]["proved"] == rec["goals"]["total"], rec["reason"]
    assert rec["verdict"] == "rejected", rec["reason"]
    ex = rec["verifier"]["extra"]["execution"]
    assert ex["status"] == "refuted" and "a=-2147483648" in ex["reason"] and "b=-1" in ex["reason"], ex


@pytest.mark.recorded
def test_a_crash_behind_a_constant_of_the_code_is_drawn(records):
    """The inputs aimed at the candidate's constants reach the branch ``n == 777`` that WP
    proves and that crashes (``INT_MIN % -1``): ``rejected`` naming n=777."""
    rec = records["magic constant"]
    assert rec["goals"] and rec["goals"]["proved"] == rec["goals"]["total"], rec["reason"]
    assert rec["verdict"] == "rejected", rec["reason"]
    ex = rec["verifier"]["extra"]["execution"]
    assert ex["status"] == "refuted" and "n=777" in ex["reason"], ex


@pytest.mark.recorded
def test_a_read_of_an_uninitialised_local_is_refuted_by_running_it(records):
    """WP proves ``n + n + (u - u)`` (its model gives ``u`` some value); the read is
    undefined in C: E-ACSL's check of RTE's ``\\initialized`` assertion fails on the first
    input, ``rejected`` naming it. Its honest neighbours (a local read only where it was
    set, an array filled by a loop) verify (``HONEST``)."""
    rec = records["uninitialised local"]
    assert rec["goals"] and rec["goals"]["proved"] == rec["goals"]["total"], rec["reason"]
    assert rec["verdict"] == "rejected", rec["reason"]
    ex = rec["verifier"]["extra"]["execution"]
    assert ex["status"] == "refuted" and "rte/initialization" in ex["reason"] and "n=" in ex["reason"], ex


@pytest.mark.recorded
@pytest.mark.parametrize("name", CANARIES)
def test_canaries_of_the_cross_check(records, name):
    """On CASP's 01_57 (divmult): WP proves the canary, running it refutes it."""
    rec = records[name]
    assert rec["goals"]["proved"] == rec["goals"]["total"], rec["reason"]
    assert rec["verdict"] == "rejected", rec["reason"]
    ex = rec["verifier"]["extra"]["execution"]
    assert ex["status"] == "refuted" and "input " in ex["reason"] and "a=" in ex["reason"], ex


@pytest.mark.recorded
@pytest.mark.parametrize("name", list(HONEST))
def test_honest_neighbours_verified(records, name):
    rec = records[name]
    ex = rec["verifier"]["extra"]["execution"]
    assert ex["status"] == "passed", ex
    assert rec["verdict"] == "verified", (name, rec["verdict"], rec["reason"])
    assert ex["satisfying"] > 0 and ex["runs"] >= 3 * ex["satisfying"], ex
    assert {"ea", "gcc-O0", "gcc-O2"} <= set(ex["builds"]) and all(v == "ok" for v in ex["builds"].values()), ex
    assert "gcc" in ex["compilers"] and "-fsanitize=undefined,address" in ex["flags"]


@pytest.mark.recorded
@pytest.mark.parametrize("name", list(OVER_REJECTED))
def test_known_over_rejections_of_the_fragment_rules(records, name):
    """Refused by ``typed-memory`` (named so), although WP proves them and running them
    finds nothing: the rule reads neither the order of a union's writes nor the requires."""
    rec = records[name]
    assert rec["goals"]["proved"] == rec["goals"]["total"], rec["reason"]
    assert rec["verifier"]["extra"]["execution"]["status"] == "passed"
    assert rec["verdict"] == "rejected" and rec["reason"].startswith("typed-memory"), rec["reason"]


@pytest.mark.recorded
def test_spec_from_code_strength(records):
    gold = records["gold contract"]
    assert gold["verdict"] == "verified", gold["reason"]
    st = gold["verifier"]["extra"]["strength"]
    assert st["mutants"] >= 1 and st["killed"] == st["changed"] >= 1 and st["score"] == 1.0, st
    weak = records["true but weak (kills no mutant)"]
    assert weak["goals"]["proved"] == weak["goals"]["total"], weak["reason"]
    assert weak["verdict"] == "rejected" and "vacuous by execution" in weak["reason"], weak["reason"]
    assert weak["verifier"]["extra"]["strength"]["killed"] == 0


# --- no tool ---------------------------------------------------------------------------------


def test_inputs_seeded_and_typed():
    ret, params = execution.signature(ARRAY)
    assert ret["kind"] == "void" and [(n, t["kind"]) for n, t in params] == [("a", "ptr"), ("n", "int")]
    a, b = execution.draw_inputs(params, 7), execution.draw_inputs(params, 7)
    assert a == b and a != execution.draw_inputs(params, 8)
    assert [i["args"][1] for i in a[:5]] == [-2**31, -1, 0, 1, 2**31 - 1]  # boundary values first
    assert all(len(i["args"][0]) == i["len"] for i in a)
    # two signed parameters: then (min, -1) both ways (INT_MIN % -1), the rest random
    _, params = execution.signature(REM)
    got = [i["args"] for i in execution.draw_inputs(params, 7)]
    assert got[:7] == [[-2**31] * 2, [-1, -1], [0, 0], [1, 1], [2**31 - 1] * 2, [-2**31, -1], [-1, -2**31]]
    assert len(got) == execution.N_INPUTS and got[7:] != got[:7]


def test_inputs_aimed_at_the_codes_constants():
    """Each integer constant of the code, with its neighbours, gets an input of its own
    after the boundary values: a branch on a magic value is reached; the plan records the
    values, so that the same inputs are drawn again from it."""
    values = execution.directed_values(MAGIC)
    assert values[:4] == [2147483647, 2147483646, 2147483648, -2147483647] and {777, 778, 776} <= set(values)
    _, params = execution.signature(TWICE)
    got = [i["args"][0] for i in execution.draw_inputs(params, 7, directed=[777, 776])]
    assert got[5:7] == [777, 776] and len(got) == execution.N_INPUTS
    files, plan = execution.job_files(TWICE, "code-from-spec", TWICE.prelude + CONTRACT + "\n" + MAGIC, None, 7,
                                      region=MAGIC)
    assert 777 in plan["directed"] and "777" in files[execution.HARNESS]


def test_unsupported_signature_not_run():
    t = casp.Task(task_id="t/f", function="f", prelude="", contract="/*@ ensures \\result == x; */",
                  code="double f(double x) { return x; }", published=None)
    files, plan = execution.job_files(t, "code-from-spec", t.gold, None, 1)
    assert files == {} and "type double" in plan["not_run"]
    ex, st, decision = execution.verdict("f", plan, None)
    assert ex["status"] == "not-run" and decision is None and st is None


def test_disagreeing_builds_rejected():
    _files, plan = execution.job_files(TWICE, "code-from-spec", TWICE.gold, None, 3)
    log = ("build ea ok\nbuild gcc-O0 ok\nbuild gcc-O2 ok\n@ ea 0 0 0\n> R 4\n"
           "@ gcc-O0 0 0 0\n> R 4\n@ gcc-O2 0 0 0\n> R 5\n")
    plan["inputs"] = 1
    ex, _st, decision = execution.verdict("twice", plan, log)
    assert decision[0] == "rejected" and "disagree" in decision[1] and "input 0 (n=" in decision[1]
    ex, _st, decision = execution.verdict("twice", plan, log.replace("> R 5", "> R 4"))
    assert decision is None and ex["status"] == "passed"


def test_mutants_seeded():
    original, muts = execution.mutants(ARRAY, 5)
    again = execution.mutants(ARRAY, 5)[1]
    assert muts == again and muts and "loop" not in original
    assert {m["kind"] for m in execution.mutants(ARRAY, 5, k=50)[1]} >= {"operator", "constant+1", "drop-statement"}


def test_build_failures_and_slow_inputs():
    """A verified file E-ACSL cannot build while the gold builds is not run, E-ACSL's message
    named (its limit, not the candidate's: the fragment rules stand alone); when the gold
    does not build either, the task is named; an input on which the task's gold times out
    too is discarded, a timeout of the candidate alone refutes."""
    _files, plan = execution.job_files(TWICE, "code-from-spec", TWICE.gold, None, 3)
    plan["inputs"] = 2
    ex, _st, decision = execution.verdict("twice", plan, "build ea failed\n| boom\nbuild gold-ea ok\n")
    assert ex["status"] == "not-run" and decision is None and "boom" in ex["reason"] and "gold builds" in ex["reason"]
    ex, _st, decision = execution.verdict("twice", plan, "build ea failed\n| boom\nbuild gold-ea failed\n")
    assert ex["status"] == "not-run" and decision is None and "task itself" in ex["reason"]
    runs = "build ea ok\n@ ea 0 0 124\n@ ea 0 1 0\n> R 2\nbuild gcc-O0 ok\n@ gcc-O0 0 1 0\n> R 2\n"
    ex, _st, decision = execution.verdict("twice", plan, runs.replace("@ ea 0 1 0", "slow 0\n@ ea 0 1 0"))
    assert decision is None and ex["status"] == "passed" and ex["satisfying"] == 1
    ex, _st, decision = execution.verdict("twice", plan, runs)
    assert decision[0] == "rejected" and "input 0" in decision[1] and "timeout" in decision[1]


def test_no_compiler_in_the_sandbox_is_not_run():
    _files, plan = execution.job_files(TWICE, "code-from-spec", TWICE.gold, None, 3)
    ex, _st, decision = execution.verdict("twice", plan, "info missing gcc or E-ACSL's runtime (/x)\n")
    assert ex["status"] == "not-run" and decision is None and "has no gcc" in ex["reason"]


# --- in the framac image, through the container sandbox (no network, the job's limits) ------


@pytest.fixture(scope="module")
def container(engine_image):
    from harness.sandbox import images
    from harness.sandbox.container import ContainerSandbox

    sb = ContainerSandbox(engine_image(lambda: images.resolve("framac")), slots=1)
    yield sb
    sb.close()


def _in_container(sb, task, mode, output):
    from harness.sandbox import Limits
    from harness.verifiers.framac import EXEC_DRIVER, EXEC_LOG, _SHIPPED

    job = casp.build_job(task, Candidate(task_id=task.task_id, model="m", sample=0, output=output, origin="test"),
                         mode, {}, DS)
    files = {k: v for k, v in job.files.items() if k.startswith("vk_exec") or k == "candidate.c"}
    res = sb.run(["sh", EXEC_DRIVER], files={**files, EXEC_DRIVER: _SHIPPED[EXEC_DRIVER].read_bytes()},
                 collect=[EXEC_LOG], limits=Limits(wall_s=300))
    return execution.verdict(task.function, job.options["execution"], res.files[EXEC_LOG].decode())


@pytest.mark.realtool
def test_in_the_framac_image(container):
    """The driver in the real framac image: the union cheat is refuted with its input, the
    gold passes on every build the image has."""
    ex, _st, decision = _in_container(container, TWICE, "code-from-spec", CHEATS["union other member (same width)"])
    assert ex["status"] == "refuted" and decision[0] == "rejected" and "Postcondition failed" in decision[1], ex
    ex, _st, decision = _in_container(container, TWICE, "code-from-spec", TWICE.code)
    assert decision is None and ex["status"] == "passed" and {"ea", "gcc-O0", "gcc-O2"} <= set(ex["builds"]), ex
