"""The behaviour harness's parts that need no TLC run: the program's inputs and recorded
return values (``harness/benchmarks/modelbench/programs.py``), the rendering of values as
TLC prints them, the parameter mapping on a run's initial states, and the reading of
TLC's ``-dump dot`` graph (``harness/verifiers/tlc/behaviour.py``). The harness itself
runs on the real TLC in ``tests/test_tlc_integrity.py`` (recorded) and in Model-Bench's
canaries (``tests/test_modelbench_tlc.py``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.benchmarks.modelbench import programs
from harness.model import FOLLOWUP
from harness.verifiers.tlc import behaviour, parse_graph

ROOT = Path(__file__).resolve().parent.parent


def test_domain_tests_and_widened_constants():
    domain = [{"int": [1, "MaxValue"]}, {"int": [1, "MaxValue"]}]
    tests = "def check(candidate):\n    assert candidate(3, 7) == 1\n    assert candidate(2, 2) == 2\n" \
            "    assert candidate(0, 5) == 5\n    assert candidate(x, 1) == 1\n"
    inputs, bounded, widened, left_out = programs.behaviour_inputs(domain, {"MaxValue": "4"}, tests)
    assert bounded == 16 and inputs[:2] == [[1, 1], [1, 2]] and inputs[16:] == [[3, 7]]  # (2, 2) is in the domain
    assert widened == {"MaxValue": "7"} and left_out == [[0, 5]]  # the fixed lower bound 1 cannot widen
    strs = programs.behaviour_inputs([{"str": [0, "MaxLen"], "of": "Alphabet"}], {"MaxLen": "1", "Alphabet": "{97}"},
                                     "def check(c):\n    assert c('ba') is False\n")
    assert strs[0] == [[""], ["a"], ["ba"]] and strs[2] == {"Alphabet": "{97, 98}", "MaxLen": "2"}
    seqs = programs.enumerate_domain({"seq": [0, 2], "of": {"int": ["-M", "M"]}}, {"M": "1"})
    assert len(seqs) == 1 + 3 + 9 and [-1, 1] in seqs
    with pytest.raises(ValueError, match="unknown domain entry"):
        programs.enumerate_domain({"float": [0, 1]}, {})


def test_recorded_return_values_are_the_programs(casp_mirror):
    """``data/outputs.json`` is what the programs return (the script re-runs them), and a
    stale entry is an error naming the script."""
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "modelbench_outputs.py"), "--check"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    table = json.loads(programs.OUTPUTS_FILE.read_text())
    e = table["HumanEval/13"]
    assert e["inputs"][-1] == [144, 60] and e["expected"][-1] == 12
    with pytest.raises(ValueError, match="modelbench_outputs.py"):
        programs.recorded_outputs("HumanEval/13", "def f(a, b): return a", "f", e["inputs"])


def test_values_as_tlc_prints_them():
    assert behaviour.render(True) == "TRUE" and behaviour.render(-3) == "-3"
    assert behaviour.render([1, [2]]) == "<<1, <<2>>>>" and behaviour.render([]) == "<<>>"
    assert behaviour.render('a"b') == '"a\\"b"' and behaviour.render("ab", "codes") == "<<97, 98>>"
    with pytest.raises(ValueError):
        behaviour.render(None)


def test_parameters_are_mapped_on_the_initial_states():
    initial = [{"x": str(a), "y": str(b), "x0": str(a), "pc": '"loop"'} for a in (1, 2) for b in (1, 2)]
    m = behaviour.map_parameters(["a", "b"], [[1, 1], [1, 2], [2, 1], [2, 2]], ["x", "y", "x0", "pc"], initial)
    assert m["a"]["variable"] == "x" and m["a"]["copies"] == ["x0"] and m["b"]["variable"] == "y"
    named = behaviour.map_parameters(["b"], [[1], [2]], ["x", "y", "b"], [{"x": "1", "y": "2", "b": "1"},
                                                                          {"x": "2", "y": "1", "b": "2"}])
    assert named["b"]["variable"] == "b"  # a tie goes to the parameter's name
    text = behaviour.map_parameters(["s"], [["ab"]], ["t"], [{"t": "<<97, 98>>"}])
    assert text["s"]["strings"] == "codes"
    with pytest.raises(behaviour.Unmapped, match="'a'"):
        behaviour.map_parameters(["a"], [[5]], ["x"], [{"x": "1"}])


def test_the_mapping_is_guessed_from_names_before_the_run():
    """The guess for the check made ahead: the variable named for each parameter (first in
    the name forms' order), else the first declared one named for nothing, the others named
    for it its copies, strings as TLA+ strings only where the module writes a string
    literal of one of its values; no guess when a parameter is left with no variable."""
    guess = behaviour.guess_mapping
    g = guess(["a", "b"], [[1, 2]], ["a0", "b0", "a", "b", "result"], "")
    assert g == {"a": {"variable": "a", "copies": ["a0"], "strings": "string"},
                 "b": {"variable": "b", "copies": ["b0"], "strings": "string"}}
    assert guess(["n"], [[3]], ["N_in", "orig_n"], "")["n"] == {"variable": "N_in", "copies": ["orig_n"],
                                                                 "strings": "string"}
    assert guess(["s"], [["ab"], ["b"]], ["s"], 's \\in {"b", "ab"}')["s"]["strings"] == "string"
    assert guess(["s"], [[["ab"]]], ["s", "pc"], 'pc = "loop" /\\ s = <<97>>')["s"]["strings"] == "codes"
    assert guess(["s"], [["ab"]], ["s"], '(* "ab" is <<97, 98>> *) s = <<97, 98>> \\* not "ab"')["s"]["strings"] == "codes"
    assert guess(["a", "b"], [[1, 2]], ["result", "x", "b", "y"], "") == {
        "a": {"variable": "x", "copies": [], "strings": "string"}, "b": {"variable": "b", "copies": [], "strings": "string"}}
    assert guess(["a", "b"], [[1, 2]], ["x", "result"], "") is None and guess(["a"], [[1]], [], "") is None
    # where the guess holds, it is what the initial states give
    initial = [{"a0": str(x), "a": str(x), "result": "NONE"} for x in (1, 2)]
    read = behaviour.map_parameters(["a"], [[1], [2]], ["a0", "a", "result"], initial)["a"]
    assert {k: read[k] for k in ("variable", "copies", "strings")} == guess(["a"], [[1], [2]], ["a0", "a", "result"],
                                                                            "")["a"]


GRAPH = """strict digraph DiskGraph {
nodesep=0.35;
subgraph cluster_graph {
color="white";
1 [label="/\\\\ x = 1\\n/\\\\ r = NONE\\n/\\\\ pc = \\"loop\\"",style = filled]
2 [label="/\\\\ x = 2\\n/\\\\ r = NONE\\n/\\\\ pc = \\"loop\\"",style = filled]
1 -> 3 [label="",color="black",fontcolor="black"];
3 [label="/\\\\ x = 1\\n/\\\\ r = 10\\n/\\\\ pc = \\"done\\""];
1 -> 1 [style="dashed"];
2 -> 4 [label="",color="black",fontcolor="black"];
4 [label="/\\\\ x = 2\\n/\\\\ r = 20\\n/\\\\ pc = \\"done\\""];
3 -> 3 [style="dashed"];
4 -> 4 [style="dashed"];
}
}
"""
OUT = "@!@!@STARTMSG 2193:0 @!@!@\nModel checking completed. No error has been found.\n@!@!@ENDMSG 2193 @!@!@\n"
MAPPING = {"v": {"variable": "x", "copies": [], "strings": "string", "overlap": 2}}


def _files(graph: str, name: str = behaviour.TESTS_MODULE) -> dict[str, bytes]:
    return {f"{FOLLOWUP}{name}.out": OUT.encode(), f"{FOLLOWUP}{name}.rc": b"0\n",
            f"{FOLLOWUP}{name}.dot": graph.encode()}


def test_graph_reading_decides_on_every_input():
    graph = parse_graph(GRAPH)
    states, initial, succ = graph
    assert initial == {"1", "2"} and succ == {"1": {"3"}, "2": {"4"}} and states["4"]["r"] == "20"
    decide = behaviour.decide
    ok = decide(graph, ["v"], [[1], [2]], [10, 20], MAPPING)
    assert ok["outcome"] == "models_program" and ok["result_variable"] == "r" and ok["states"] == 4
    # an initial state that is no input is left out, with what only it reaches
    one = decide(graph, ["v"], [[1]], [10], MAPPING)
    assert one["outcome"] == "models_program" and one["states"] == 2
    wrong = decide(graph, ["v"], [[1], [2]], [10, 21], MAPPING)
    assert wrong["outcome"] == "differs" and wrong["input"] == [2] and "r = 20" in wrong["detail"]
    missing = decide(graph, ["v"], [[1], [2], [3]], [10, 20, 30], MAPPING)
    assert missing["outcome"] == "missing_inputs" and "(v=3)" in missing["detail"]
    loop = GRAPH.replace("4 -> 4 [style", '4 -> 2 [label=""];\n4 -> 4 [style')
    assert decide(parse_graph(loop), ["v"], [[1], [2]], [10, 20], MAPPING)["outcome"] == "no_end"
    cut = GRAPH.replace('4 [label="/\\\\ x = 2', '4 [lab="/\\\\ x = 2')
    with pytest.raises(ValueError, match="cannot read"):
        parse_graph(cut)
    read, tests = behaviour.read_part, behaviour.TESTS_MODULE
    assert read(_files(GRAPH), tests, ["v"], [[1], [2]], [10, 20], MAPPING)["outcome"] == "models_program"
    error = {**_files(GRAPH), f"{FOLLOWUP}{tests}.rc": b"12\n"}
    assert read(error, tests, ["v"], [[1]], [10], MAPPING)["outcome"] == "error"
    assert read({}, tests, ["v"], [[1]], [10], MAPPING)["outcome"] == "not_run"


def test_the_tests_part_only_adds_evidence_against_the_model():
    option = {"parameters": ["v"], "inputs": [[1], [2]], "bounded": 1, "expected": [10, 20]}
    # the bounded domain on the verified run's own graph, the tests' inputs from the follow-up
    assert behaviour.read_behaviour(GRAPH, _files(GRAPH), option, MAPPING)["outcome"] == "models_program"
    wrong = _files(GRAPH.replace("r = 20", "r = 7"))
    got = behaviour.read_behaviour(GRAPH, wrong, option, MAPPING)
    assert got["outcome"] == "differs" and got["bounded_part"] == "models_program" and got["tests_part"] == "differs"
    failed = {f"{FOLLOWUP}{behaviour.TESTS_MODULE}.out": b"too many elements",
              f"{FOLLOWUP}{behaviour.TESTS_MODULE}.rc": b"75\n"}
    got = behaviour.read_behaviour(GRAPH, failed, option, MAPPING)
    assert got["outcome"] == "models_program" and got["tests_part"] == "error"
    # the bounded domain decides: a wrong result there fails whatever the tests' part says
    bad = behaviour.read_behaviour(GRAPH.replace("r = 10", "r = 11"), _files(GRAPH), option, MAPPING)
    assert bad["outcome"] == "differs" and bad["bounded_part"] == "differs"
