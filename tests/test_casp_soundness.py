"""CASP task soundness, proofs through dead code, and requires not stronger than the
task's, on the real Frama-C's recorded outputs: an inconsistent task is flagged on every record;
a code-from-spec candidate whose proof goes through code a call makes unreachable is not
``verified``; honest candidates with a defensive branch are; a spec-from-code candidate's
``requires`` is compared with the task's by WP. One shared run (module-scoped) judged on
the recording ``tests/recorded/runs/casp-soundness/`` (``framac_recorded``; refresh it with
``python scripts/record.py casp-soundness``).
"""

from __future__ import annotations

import pytest

from harness.benchmarks import Candidate, casp
from harness.benchmarks.casp import soundness
from harness.model import GoalCounts, VerifierResult

DS = {"name": "test", "revision": "0"}

#: Inconsistent prelude (written for these tests): the axioms contradict at 3, and the
#: gold code calls the function whose contract uses them.
UNSOUND_TASK = casp.Task(
    task_id="t/unsound", function="square",
    prelude=("/*@ axiomatic VkBad {\n  logic integer vk_sq(integer x);\n"
             "  axiom vk_sq_pos: \\forall integer x; vk_sq(x) >= 0;\n  axiom vk_sq_bad: vk_sq(3) < 0;\n} */\n"
             "/*@ assigns \\nothing;\n    ensures \\result == vk_sq(x); */\nint sq(int x);\n\n"),
    contract="/*@ requires 0 <= n <= 10;\n    assigns \\nothing;\n    ensures \\result == n * n; */",
    code="int square(int n) {\n  int s = sq(n);\n  return n * n;\n}", published=None)

#: A consistent task whose prelude declares a function that cannot return above 50
#: (its gold code does not call it).
PARTIAL_TASK = casp.KIT_DEAD_CANARY

TWICE = casp.KIT_CANARY  # requires 0 <= n <= 1000; ensures \result == 2 * n

INC = "int inc(int n) {\n"
ITEMS = {
    # task soundness
    "unsound gold": (UNSOUND_TASK, "gold", UNSOUND_TASK.gold),
    # proofs through dead code (must not be verified)
    "through the inconsistent prelude": (UNSOUND_TASK, "code-from-spec", "int square(int n) {\n  sq(3);\n  return 0;\n}\n"),
    "after a call that cannot return": (PARTIAL_TASK, "code-from-spec", INC + "  vk_small(99);\n  return 0;\n}\n"),
    "a path made dead by a call": (PARTIAL_TASK, "code-from-spec",
                                   INC + "  int r = vk_small(n / 4 + 51);\n  if (r > 0) return 7;\n  return n + 1;\n}\n"),
    # honest neighbours (must verify)
    "defensive branch": (PARTIAL_TASK, "code-from-spec", INC + "  if (n < 0) return 1;\n  return n + 1;\n}\n"),
    "defensive branch and a call": (PARTIAL_TASK, "code-from-spec",
                                    INC + "  if (n > 100) return 0;\n  int r = vk_small(n / 2);\n"
                                    "  return r + (n - n / 2) + 1;\n}\n"),
    # requires (spec-from-code)
    "same requires": (TWICE, "spec-from-code", TWICE.contract + "\n" + TWICE.code),
    "same requires, other spelling": (TWICE, "spec-from-code", "/*@ requires n >= 0 && n <= 1000;\n    assigns \\nothing;\n"
                                      "    ensures \\result == n + n; */\n" + TWICE.code),
    "stronger requires": (TWICE, "spec-from-code", "/*@ requires 0 <= n <= 10;\n    assigns \\nothing;\n"
                          "    ensures \\result == 2 * n; */\n" + TWICE.code),
}


@pytest.fixture(scope="module")
def recs(framac_recorded, tmp_path_factory) -> dict:
    """name -> record, from one run of every item of :data:`ITEMS`."""
    opts = framac_recorded.options(smoke=True, wp_timeout_s=5, execution_check=False)
    names = list(ITEMS)
    jobs = [casp.build_job(t, Candidate(task_id=t.task_id, model=f"m{i}", sample=0, output=out, origin="test"),
                           mode, opts, DS) for i, (t, mode, out) in enumerate(ITEMS[n] for n in names)]
    out = framac_recorded.run_casp_jobs(jobs, tmp_path_factory.mktemp("soundness"), shared=True)
    by_model = {r["candidate"]["model"]: r for r in out}
    return {n: by_model[f"m{i}"] for i, n in enumerate(names)}


def _extra(rec) -> dict:
    return rec["verifier"].get("extra", {})


@pytest.mark.recorded
def test_inconsistent_task_is_flagged_on_every_record(recs):
    assert _extra(recs["unsound gold"])["task_sound"] is False, _extra(recs["unsound gold"])
    assert any("typed_sq_wp_smoke_dead_call" in d for d in _extra(recs["unsound gold"])["task_sound_detail"])
    assert _extra(recs["through the inconsistent prelude"])["task_sound"] is False
    for name in ("defensive branch", "after a call that cannot return", "same requires"):
        assert _extra(recs[name])["task_sound"] is True, (name, _extra(recs[name]))
        assert "task_defect" not in recs[name], name
    # the task's bug, not the candidate's: every record of the task is marked (kept out of the metrics)
    for name in ("unsound gold", "through the inconsistent prelude"):
        assert recs[name]["task_defect"].startswith("inconsistent-task: WP's smoke tests find"), recs[name]
        assert "typed_sq_wp_smoke_dead_call" in recs[name]["task_defect"]


@pytest.mark.recorded
@pytest.mark.parametrize("name", ["through the inconsistent prelude", "after a call that cannot return",
                                  "a path made dead by a call"])
def test_proof_through_dead_code_is_not_verified(recs, name):
    rec = recs[name]
    assert rec["verdict"] == "rejected", (name, rec["verdict"], rec["reason"])
    assert "no-dead-code-proof" in rec["reason"], rec["reason"]


@pytest.mark.recorded
@pytest.mark.parametrize("name, tests", [("defensive branch", "left-out"), ("defensive branch and a call", "run")])
def test_honest_defensive_branch_still_verifies(recs, name, tests):
    """Unreachable code is looked for only where it can decide the verdict: after a call to a
    function without a body (there the defensive branch is found, and allowed), not in a
    function that calls none (the smoke tests of unreachable code are left out)."""
    rec = recs[name]
    assert rec["verdict"] == "verified", (name, rec["reason"])
    assert _extra(rec)["dead_code_tests"] == tests, _extra(rec)
    assert _extra(rec)["contract_tests"] == tests, _extra(rec)  # the task's own contract: only with the others
    if tests == "run":
        assert _extra(rec).get("dead_code"), "the defensive branch should be a failed dead-code smoke test"
    else:
        assert not _extra(rec).get("dead_code")


@pytest.mark.recorded
def test_requires_stronger_than_the_task_is_reported(recs):
    assert _extra(recs["same requires"])["requires_weaker_or_equal"] is True, _extra(recs["same requires"])
    assert _extra(recs["same requires, other spelling"])["requires_weaker_or_equal"] is True
    stronger = recs["stronger requires"]
    assert _extra(stronger)["requires_weaker_or_equal"] is False, _extra(stronger)
    assert stronger["verdict"] == "verified", stronger["reason"]  # reported, not a verdict change
    # the probe also decides whether the contract's smoke tests run: not where it proves
    # that the task's requires imply the candidate's
    for name in ("same requires", "same requires, other spelling"):
        assert _extra(recs[name])["contract_tests"] == "left-out", (name, _extra(recs[name]))
    assert _extra(stronger)["contract_tests"] == "run" and _extra(stronger)["smoke_tests"] >= 1, _extra(stronger)
    notes = casp.integrity_notes(list(recs.values()))
    assert any("requires stronger" in n and "verikit-canary/twice m8" in n for n in notes), notes
    assert not any("m6" in n or "m7" in n for n in notes if "requires stronger" in n), notes
    assert any("task t/unsound is inconsistent" in n for n in notes), notes


def test_soundness_without_an_answer_is_unknown():
    assert soundness.task_soundness(None)[0] is None
    assert soundness.task_soundness(VerifierResult("invalid", "Frama-C rejected the file"))[0] is None
    ok = VerifierResult("failed", "WP generated no proof obligation", goals=GoalCounts(proved=0, total=0))
    assert soundness.task_soundness(ok) == (True, [])
    bad = VerifierResult("failed", "x", goals=GoalCounts(proved=0, total=0), vacuous=["typed_f_wp_smoke_default_requires"])
    assert soundness.task_soundness(bad) == (False, ["typed_f_wp_smoke_default_requires"])
    assert soundness.requires_check(None)[0] == "unknown"
