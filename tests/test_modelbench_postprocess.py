"""Model-Bench's post-processing of a generated TLA+ model (paper, Appendix A.1: EXTENDS,
NONE/NULL model values, UNCHANGED completion) and its TLC config template (Figure 13):
:mod:`harness.benchmarks.modelbench.postprocess`. TLC itself is not needed (the
end-to-end runs with TLC are in tests/test_modelbench_tlc.py)."""

from __future__ import annotations

from harness.benchmarks.modelbench import postprocess as pp


def test_config_template():
    text = pp.config_text({"MaxLen": "3"}, ["NONE", "NULL"])
    assert text.splitlines() == ["CONSTANTS", "    MaxLen = 3", "    NONE = NONE", "    NULL = NULL",
                                 "SPECIFICATION Spec", "INVARIANT Assertion", "CHECK_DEADLOCK FALSE"]
    assert "CHECK_DEADLOCK" not in pp.config_text({}, [], deadlock_in_cfg=False)


def test_postprocess_steps():
    src = ("Model:\n```tla\n---- MODULE Foo ----\nEXTENDS Naturals\nCONSTANTS MaxLen\nVARIABLES x, y, pc\n"
           "Init == x \\in 0..MaxLen /\\ y = 0 /\\ pc = \"a\"\n"
           "A == /\\ pc = \"a\"\n     /\\ x' = x + 1\n     /\\ pc' = \"b\"\n"
           "Next == \\/ A\n        \\/ /\\ pc = \"b\"\n           /\\ UNCHANGED pc\n"
           "Spec == Init /\\ [][Next]_<<x, y, pc>>\nAssertion == TRUE\n====\n```\n")
    p = pp.postprocess(src)
    steps = {s["step"]: s for s in p.steps}
    assert p.module == "Foo" and p.constants == ["MaxLen"] and p.model_values == ["NONE", "NULL"]
    assert steps["extends"]["added"] == ["Integers", "Reals", "Sequences", "FiniteSets", "Bags", "TLC"]
    assert steps["model_values"]["declared"] == ["NONE", "NULL"]
    assert steps["unchanged"]["completed"] == [{"action": "A", "added": ["y"]},
                                               {"action": "Next (disjunct 2)", "added": ["x", "y"]}]
    assert "A == (\n     /\\ pc = \"a\"\n     /\\ x' = x + 1" in p.text  # bullets keep their column
    assert not p.text.startswith("Model:")


def test_postprocess_respects_the_models_own_names():
    src = ("---- MODULE G ----\nCONSTANT NONE\nVARIABLE x\nLen == 3\nNULL == 0\nInit == x = NONE\n"
           "Next == UNCHANGED x\nSpec == Init /\\ [][Next]_x\nAssertion == TRUE\n====\n")
    p = pp.postprocess(src)
    steps = {s["step"]: s for s in p.steps}
    assert "Sequences" in steps["extends"]["skipped"] and "Sequences" not in steps["extends"]["added"]
    assert steps["model_values"]["declared"] == [] and p.model_values == ["NONE"]
    assert "NULL" in steps["model_values"]["skipped"] and steps["unchanged"]["completed"] == []


def test_postprocess_infix_and_called_actions():
    src = ("---- MODULE H ----\nVARIABLES a, b\nInc(i) == a' = a + i\n"
           "Next == \\E i \\in 1..2 : Inc(i) \\/ b' = 1 \\* comment\nSpec == a = 0 /\\ b = 0 /\\ [][Next]_<<a, b>>\n"
           "Assertion == TRUE\n====\n")
    p = pp.postprocess(src)
    done = {s["step"]: s for s in p.steps}["unchanged"]["completed"]
    assert done == [{"action": "Inc", "added": ["b"]}, {"action": "Next (disjunct 2)", "added": ["a"]}]
    assert "(b' = 1) /\\ UNCHANGED <<a>> \\* comment" in p.text
