"""TLC verifier module: command line, options and the parser, on real TLC 2.15 outputs
recorded in the tlaplus image (tests/recorded/tlc/*.json, written by
tests/recorded/tlc/record.py; each file carries its provenance: image ID, probed
versions, date). Model-Bench's post-processing and config template are tested in
tests/test_modelbench_postprocess.py."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from harness import registry
from harness.model import ProcResult, termination
from harness.verifiers import tlc

REC = Path(__file__).parent / "recorded" / "tlc"
pytestmark = pytest.mark.recorded


def _recorded(case: str) -> tuple[dict, ProcResult]:
    d = json.loads((REC / f"{case}.json").read_text())
    files = {tlc.DUMP_FILE: d["dump"].encode()} if d["dump"] else {}
    return d, ProcResult(argv=d["argv"], returncode=d["returncode"], stdout=d["stdout"], stderr=d["stderr"],
                         files=files)


def test_recordings_have_provenance():
    for f in sorted(REC.glob("*.json")):
        d = json.loads(f.read_text())
        assert d["provenance"]["versions"]["tlc"] == "2.15" and d["provenance"]["image_id"].startswith("sha256:")
        assert d["argv"][:2] == ["java", "-XX:-UsePerfData"] and "-workers" in d["argv"]


def test_success_with_states():
    d, proc = _recorded("success")
    r = tlc.TLC().parse(proc, d["options"])
    assert r.verdict == "verified" and r.extra["outcome"] == "success"
    assert r.extra["distinct_states"] == len(r.extra["states"]) == r.extra["states_total"]
    assert set(r.extra["states"][0]) == {"a0", "b0", "a", "b", "result", "pc"}
    assert r.extra["states"][0]["pc"] == '"loop"' and r.extra["states"][0]["result"] == "NONE"
    assert d["returncode"] == 0


def test_max_states_truncates_the_record_not_the_count():
    d, proc = _recorded("success")
    r = tlc.TLC().parse(proc, dict(d["options"], max_states=5))
    assert len(r.extra["states"]) == 5 and r.extra["states_truncated"] and r.extra["states_total"] > 5


@pytest.mark.parametrize("case,verdict,needle", [
    ("parse_error", "invalid", "***Parse Error***"),
    ("semantic_error", "invalid", "Unknown operator: `Max'"),
    ("config_error", "invalid", "The invariant Assertion specified in the configuration file"),
    ("runtime_error", "failed", "not in the domain of the function"),
    ("invariant_violated", "failed", "Invariant Assertion is violated"),
])
def test_failures(case, verdict, needle):
    d, proc = _recorded(case)
    r = tlc.TLC().parse(proc, d["options"])
    assert (r.verdict, r.extra["outcome"]) == (verdict, case)
    assert needle in r.reason
    assert "states" not in r.extra


def test_trace_and_locations():
    d, proc = _recorded("invariant_violated")
    r = tlc.TLC().parse(proc, d["options"])
    trace = r.extra["trace"]
    assert trace[0]["action"] == "<Initial predicate>" and trace[-1]["state"]["pc"] == '"done"'
    assert [t["step"] for t in trace] == list(range(1, len(trace) + 1))
    d, proc = _recorded("runtime_error")
    assert tlc.TLC().parse(proc, d["options"]).extra["location"].startswith("line ")
    d, proc = _recorded("parse_error")
    assert tlc.TLC().parse(proc, d["options"]).extra["location"] == "line 11, col 15"


def test_infrastructure_and_limits():
    """A job the sandbox ended is mapped before TLC's output is read (the executor's
    ``termination(proc) or parse(proc)``); what ``parse`` itself reads: the JVM out of heap,
    no TLC banner (the kit's side only with KIT_SIDE evidence), success without the dump (never verified)."""
    v = tlc.TLC()

    def verdict(proc, options=None):
        return (termination(proc, v.name) or v.parse(proc, options)).verdict

    assert verdict(ProcResult(["java"], None, start_error="java: not found")) == "infra_error"
    assert verdict(ProcResult(["java"], -9, timed_out=True, wall_s=3.0)) == "timeout"
    assert verdict(ProcResult(["java"], -9, memout=True, max_rss_mb=4100.0)) == "memout"
    oom = ProcResult(["java"], 1, stderr="Exception java.lang.OutOfMemoryError: Java heap")
    assert v.parse(oom, {"heap_mb": 1024}).verdict == "memout" and "1024 MiB" in v.parse(oom, {"heap_mb": 1024}).reason
    assert v.parse(ProcResult(["java"], 1, stdout="Error: Could not find or load main class")).verdict == "infra_error"
    d, proc = _recorded("success")
    proc.files = {}
    assert v.parse(proc, d["options"]).verdict == "invalid"  # success without the dump: never verified


def test_verifier_knows_only_the_tool():
    """The tlc package imports nothing of the benchmarks and holds no Model-Bench post-processing."""
    import ast

    srcs = [f.read_text() for f in sorted(Path(tlc.__file__).parent.glob("*.py"))]  # a package since benchmarks became plugins
    imported = [n.module or "" for src in srcs for n in ast.walk(ast.parse(src)) if isinstance(n, ast.ImportFrom)]
    imported += [a.name for src in srcs for n in ast.walk(ast.parse(src)) if isinstance(n, ast.Import) for a in n.names]
    assert not [m for m in imported if "benchmarks" in m], imported
    for name in ("postprocess", "config_text", "complete_unchanged", "BUILTIN_MODULES", "MODEL_VALUES"):
        assert not hasattr(tlc, name), name
    # 750 before the invariant probe, 900 before the behaviour harness (each a TLC run of its own),
    # 1350 before the tests' check made ahead
    assert sum(len(src.splitlines()) for src in srcs) < 1460


def test_command_line_is_deterministic_and_recorded():
    class Probed:
        versions = {"tlc": "2.15", "java": "17.0.19"}

    v = registry.verifier("tlc")
    opts = v.options(Probed(), module="HumanEval_13")
    argv, env, collect = v.command(opts)
    assert argv[argv.index("-workers") + 1] == "1" and argv[argv.index("-fp") + 1] == "0"
    assert argv[argv.index("-seed") + 1] == "0" and argv[-1] == "HumanEval_13" and "-tool" in argv
    assert "-deadlock" in argv and opts["deadlock_in_cfg"] is False and collect == ["states.dot", "sany.xml", "sany.err"]
    assert argv[argv.index("-dump") + 1:argv.index("-dump") + 3] == ["dot", "states"]  # the state graph
    # SANY's XML view in the same JVM, before TLC (the launcher, then TLC's own arguments);
    # without it, TLC alone with the same arguments
    at = argv.index("VerikitTlc")
    assert argv[0] == "java" and argv[at + 1] == "HumanEval_13" and argv[at - 1] == "/opt/verikit/tla2tools.jar:."
    plain = v.command(dict(opts, sany_view=False))[0]
    assert plain == argv[:at - 1] + ["/opt/verikit/tla2tools.jar", "tlc2.TLC"] + argv[at + 2:]
    Probed.versions = {"tlc": "2.16"}
    assert "-deadlock" not in v.command(v.options(Probed(), module="M"))[0]
    with pytest.raises(ValueError, match="module name"):
        v.command(dict(opts, module="../x"))


def test_split_messages_nested_and_free_text():
    log = ("Parsing file M.tla\n@!@!@STARTMSG 1000:1 @!@!@\nTLC threw.\n: @!@!@STARTMSG 2132:0 @!@!@\nAssert "
           "failed\n@!@!@STARTMSG 2103:1 @!@!@\n0. Line 6, column 9 to line 6 in M\n@!@!@ENDMSG 2103 @!@!@\ntail\n")
    out = tlc.split_messages(log)
    assert [(m.code, m.cls) for m in out.messages] == [(1000, 1), (2132, 0), (2103, 1)]
    assert out.free == "Parsing file M.tla\n"
    # TLC prints no ENDMSG for 1000/2132: text after an inner ENDMSG belongs to the open message
    assert out.messages[1].text == "Assert failed\ntail" and out.messages[2].text.startswith("0. Line 6")


def test_values_and_states():
    assert tlc.normalize_value('<< 1,\n   2 >>') == "<<1, 2>>"
    assert tlc.normalize_value('"a  b"') == '"a  b"'
    assert tlc.parse_state('/\\ x = <<1,\n      2>>\n/\\ y = "s"') == {"x": "<<1, 2>>", "y": '"s"'}
    assert tlc.parse_state("x = 2") == {"x": "2"}
    graph = ('strict digraph DiskGraph {\n7 [label="/\\\\ x = 0",style = filled]\n7 -> 9 [label=""];\n'
             '9 [label="/\\\\ x = 1"]\n9 -> 9 [style="dashed"];\n}\n')
    states, total = tlc.parse_dump(graph)
    assert states == [{"x": "0"}, {"x": "1"}] and total == 2
    assert tlc.parse_graph(graph) == ({"7": {"x": "0"}, "9": {"x": "1"}}, {"7"}, {"7": {"9"}})
    with pytest.raises(ValueError, match="node 7"):
        tlc.parse_dump('7 [label="nonsense here"]\n')
    with pytest.raises(ValueError, match="cannot read"):
        tlc.parse_dump('7 [lab="/\\\\ x = 0"]\n')


#: ``-dump dot states`` of a model whose one state holds a string written to look like an
#: edge line and an initial node (``x = "a\\"b\\nc\\n1 -> 2 [label=\\"\\"];\\n7 [label=..."``),
#: as TLC 2.15 wrote it in the tlaplus image (2026-12-01): TLC escapes quotes and newlines.
FORGED_LABEL = (
    'strict digraph DiskGraph {\n'
    'nodesep=0.35;\n'
    'subgraph cluster_graph {\n'
    'color="white";\n'
    '-8918630505435496465 [label="x = \\"a\\\\\\"b\\\\nc\\\\n1 -> 2 [label=\\\\\\"\\\\\\'
    '"];\\\\n7 [label=\\\\\\"/\\\\\\\\ x = 1\\\\\\",style = filled]\\"",style = filled]\n'
    '-8918630505435496465 -> -8918630505435496465 [label="",color="black",fontcolor="black"];\n'
    '{rank = same; -8918630505435496465;}\n'
    '}\n'
    '}'
)


def test_a_string_value_cannot_forge_a_node_or_an_edge_of_the_dumped_graph():
    states, initial, succ = tlc.parse_graph(FORGED_LABEL)
    assert len(states) == 1 and initial == set(states) and succ == {}
    (state,) = states.values()
    assert list(state) == ["x"] and "1 -> 2" in state["x"] and state["x"].startswith('"a')
    assert tlc.parse_dump(FORGED_LABEL) == ([state], 1)


def test_success_needs_tlc_evidence():
    """A 2193 counts only when exit status, the once-per-run messages, the empty
    queue and the dump agree (the recorded success, altered the ways a model could)."""
    v = tlc.TLC()
    d, proc = _recorded("success")
    ok = v.parse(proc, d["options"])
    assert ok.verdict == "verified" and ok.extra["init_states"] > 0 and ok.extra["stuttering_only"] is False
    stats = next(m for m in tlc.split_messages(proc.stdout).messages if m.code == tlc.MSG_STATS).text
    fake = "@!@!@STARTMSG 2199:0 @!@!@\n500 states generated, 500 distinct states found, 0 states left on queue.\n" \
           "@!@!@ENDMSG 2199 @!@!@\n"
    cases = {
        "exit status": {"returncode": 12},
        "printed more than once": {"stdout": proc.stdout.replace("@!@!@STARTMSG 2185", fake + "@!@!@STARTMSG 2185")},
        "left on the queue": {"stdout": proc.stdout.replace(stats, stats.replace(" 0 states left", " 9 states left"))},
        "states.dot holds": {"files": {tlc.DUMP_FILE: b'1 [label="/\\\\ x = 1",style = filled]\n'}},
    }
    for needle, change in cases.items():
        base = {"argv": proc.argv, "returncode": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr,
                "files": proc.files}
        altered = ProcResult(**{**base, **change})
        r = v.parse(altered, d["options"])
        assert r.verdict == "rejected" and r.extra["outcome"] == "inconsistent_output" and needle in r.reason, needle
    printed = ProcResult(argv=proc.argv, returncode=0, files=proc.files,
                         stdout=proc.stdout.replace("@!@!@STARTMSG 2185", "hello\n@!@!@STARTMSG 2185"))
    assert v.parse(printed, d["options"]).extra["model_output"] == "hello"


def test_the_behaviour_harness_decides_the_bounded_domain_on_the_run_s_own_graph():
    """The recorded success (HumanEval/13's oracle, MaxValue 3) with a behaviour option: its
    nine inputs are the run's initial states, decided on the run's own graph with nothing
    more to run; the tests' inputs (widened constants) are the only follow-up check."""
    d, proc = _recorded("success")
    v = tlc.TLC()
    pairs = [[a, b] for a in range(1, 4) for b in range(1, 4)]
    beh = {"parameters": ["a", "b"], "inputs": pairs, "bounded": len(pairs), "expected": [math.gcd(*p) for p in pairs]}
    opts = dict(d["options"], behaviour=beh)
    assert v.followup(d["files"], proc, opts) is None  # no tests' input: no follow-up run
    r = v.parse(proc, opts)
    b = r.extra["behaviour"]
    assert b["outcome"] == "models_program" and b["result_variable"] == "result" and b["tests_part"] == "none"
    assert b["states"] == r.extra["distinct_states"] and b["mapping"]["a"]["copies"] == ["a0"]
    wrong = v.parse(proc, dict(opts, behaviour=dict(beh, expected=[*beh["expected"][:-1], 2])))
    assert wrong.extra["behaviour"]["outcome"] == "differs" and wrong.extra["behaviour"]["input"] == [3, 3]
    fewer = v.parse(proc, dict(opts, behaviour=dict(beh, inputs=pairs[:4], bounded=4, expected=beh["expected"][:4])))
    assert fewer.extra["behaviour"]["outcome"] == "models_program" and fewer.extra["behaviour"]["states"] < b["states"]
    tests = dict(beh, inputs=pairs + [[12, 8]], expected=beh["expected"] + [4], constants={"MaxValue": "12"})
    files, argv, collect = v.followup(d["files"], proc, dict(opts, behaviour=tests))
    assert set(files) == {"VKTests.tla", "VKTests.cfg"} and "MaxValue = 12" in files["VKTests.cfg"]
    assert "VKFix ==\n    \\/ a = 12 /\\ a0 = 12 /\\ b = 8 /\\ b0 = 8\nVKSpec == VKFix /\\ Spec" in files["VKTests.tla"]
    assert collect == ["VKTests.out", "VKTests.rc", "VKTests.dot"] and "VKTests VKTests" in argv[-1]
    missing = v.parse(proc, dict(opts, behaviour=tests)).extra["behaviour"]  # the follow-up did not run
    assert missing["outcome"] == "models_program" and missing["tests_part"] == "not_run"


#: TLC's success message, as a check's ``.out`` holds it.
_SUCCESS = b"@!@!@STARTMSG 2193:0 @!@!@\nModel checking completed. No error has been found.\n@!@!@ENDMSG 2193 @!@!@\n"


def _chain(states: list[dict[str, str]]) -> bytes:
    """TLC's ``-dump dot`` graph of one behaviour through ``states`` (the first initial), the last stuttering."""
    def label(st: dict[str, str]) -> str:
        return "\\n".join(f"/\\\\ {k} = {x}".replace('"', '\\"') for k, x in st.items())
    lines = ["strict digraph DiskGraph {", "nodesep=0.35;", "subgraph cluster_graph {", 'color="white";']
    for i, st in enumerate(states, 1):
        lines.append(f'{i} [label="{label(st)}"' + (",style = filled]" if i == 1 else "]"))
        lines.append(f'{i} -> {min(i + 1, len(states))} ' + ('[label=""];' if i < len(states) else '[style="dashed"];'))
    return ("\n".join(lines + ["}", "}"]) + "\n").encode()


def test_the_tests_check_made_ahead_on_a_right_guess_is_the_follow_up_s():
    """The tests' check started in the first run's JVM on a mapping guessed from names
    (``TLC.ahead``): on the recorded oracle its files are those the follow-up would run, so
    no follow-up is made and the tests' part is read from the first run; a wrong guess, a
    check that did not end (no ``.rc``) or one whose outcome depends on the shared JVM
    leaves the check to the follow-up, whose files win."""
    from harness.model import FOLLOWUP, Limits

    d, proc = _recorded("success")
    v = tlc.TLC()
    pairs = [[a, b] for a in range(1, 4) for b in range(1, 4)]
    beh = {"parameters": ["a", "b"], "inputs": pairs + [[12, 8]], "bounded": len(pairs),
           "expected": [math.gcd(*p) for p in pairs] + [4], "constants": {"MaxValue": "12"}}
    opts = dict(d["options"], sany_view=True, behaviour=beh, variables=["a0", "b0", "a", "b", "result", "pc"])
    given, tail, collect = v.ahead(d["files"], opts, Limits(wall_s=60))
    follow, argv, _ = v.followup(d["files"], proc, opts)  # nothing ran ahead: the follow-up's own check
    assert given == follow and "\\/ a = 12 /\\ a0 = 12 /\\ b = 8 /\\ b0 = 8" in given["VKTests.tla"]
    assert tail[:3] == ["---", "VKTests", "30"] and f"--each VKTests {' '.join(tail[3:])}" in argv[-1]
    assert collect == ["VKTests.tla", "VKTests.cfg", "VKTests.out", "VKTests.rc", "VKTests.dot"]
    first, run = dict(a0="12", b0="8", a="12", b="8", result="NONE", pc='"loop"'), []
    for a, b in ((12, 8), (8, 4), (4, 0)):
        run.append({**first, "a": str(a), "b": str(b)})
    run.append({**run[-1], "result": "4", "pc": '"done"'})
    ahead = {**proc.files, **{k: x.encode() for k, x in given.items()}, "VKTests.out": _SUCCESS, "VKTests.rc": b"0\n",
             "VKTests.dot": _chain(run)}

    def with_files(files: dict) -> ProcResult:
        return ProcResult(argv=proc.argv, returncode=proc.returncode, stdout=proc.stdout, stderr=proc.stderr,
                          files={k: x for k, x in files.items() if x is not None})

    assert v.followup(d["files"], with_files(ahead), opts) is None
    assert v.parse(with_files(ahead), opts).extra["behaviour"]["tests_part"] == "models_program"
    differs = v.parse(with_files(ahead), dict(opts, behaviour=dict(beh, expected=[*beh["expected"][:-1], 2])))
    assert differs.extra["behaviour"]["outcome"] == "differs" and differs.extra["behaviour"]["input"] == [12, 8]
    for change in ({"VKTests.tla": given["VKTests.tla"].replace("a0 = 12", "a0 = 11").encode()},  # another guess
                   {"VKTests.cfg": b"SPECIFICATION VKSpec\n"}, {"VKTests.rc": None},
                   {"VKTests.out": _SUCCESS + b"java.lang.OutOfMemoryError: Java heap space\n"}):
        files = {**ahead, **change}
        assert v.followup(d["files"], with_files(files), opts) is not None, change
        if "VKTests.cfg" not in change:  # parse compares the module (the config is the job's either way)
            assert v.parse(with_files(files), opts).extra["behaviour"]["tests_part"] == "not_run", change
    # a follow-up that ran (here: its model stops before the result) is read, not what ran ahead
    ran = {**ahead, FOLLOWUP + "ended": b"exit 0", FOLLOWUP + "VKTests.out": _SUCCESS, FOLLOWUP + "VKTests.rc": b"0\n",
           FOLLOWUP + "VKTests.dot": _chain(run[:-1])}
    assert v.parse(with_files(ran), opts).extra["behaviour"]["tests_part"] == "differs"
    # nothing ahead: no harness, no test input, the plain TLC command, no guess
    assert v.ahead(d["files"], dict(opts, behaviour=dict(beh, inputs=pairs, expected=beh["expected"][:-1])),
                   Limits()) == ({}, [], [])
    assert v.ahead(d["files"], dict(opts, sany_view=False), Limits()) == ({}, [], [])
    assert v.ahead(d["files"], dict(opts, variables=["x", "result"]), Limits()) == ({}, [], [])


# --- the invariant probe: TLC.followup, probe_variants, read_probe ---------------------------

def _probe(case: str) -> tuple[dict, ProcResult]:
    """A recorded verified run with the follow-up run the executor made after it."""
    d = json.loads((REC / f"probe_{case}.json").read_text())
    files = {tlc.DUMP_FILE: d["dump"].encode(), **{k: v.encode() for k, v in d["followup"].items()}}
    return d, ProcResult(argv=d["argv"], returncode=d["returncode"], stdout=d["stdout"], stderr=d["stderr"],
                         files=files)


def test_probe_variants_change_one_variable_to_a_value_it_takes_elsewhere():
    states = [{"pc": '"loop"', "x": "1", "r": "NONE"}, {"pc": '"loop"', "x": "2", "r": "NONE"},
              {"pc": '"done"', "x": "1", "r": "5"}]
    got = tlc.probe_variants(states)
    reach = {tuple(sorted(s.items())) for s in states}
    assert got and not any(tuple(sorted(v.items())) in reach for v in got)  # never a reachable state
    for v in got:  # one variable differs from some reachable state, with a value seen for that variable
        assert any(sum(v[k] != s[k] for k in v) == 1 for s in states)
        assert all(v[k] in {s[k] for s in states} for k in v)
    assert {"pc": '"done"', "x": "1", "r": "NONE"} in got  # the end with the result unset
    assert tlc.probe_variants(states) == got  # deterministic
    assert tlc.probe_variants([{"x": "1"}]) == [] and tlc.probe_variants([]) == []


def test_probe_variants_are_bounded_and_seeded():
    states = [{"a": str(i), "b": str(i * 7 % 50)} for i in range(50)]
    got = tlc.probe_variants(states, max_variants=30, max_values=5, max_states=10, seed=1)
    assert len(got) == 30 and got == tlc.probe_variants(states, max_variants=30, max_values=5, max_states=10, seed=1)
    assert got != tlc.probe_variants(states, max_variants=30, max_values=5, max_states=10, seed=2)


def test_followup_asks_for_the_probe_only_after_a_verified_run_that_asked_for_it():
    d, proc = _recorded("success")
    v = tlc.TLC()
    assert v.followup(d["files"], proc, d["options"]) is None  # no probe option
    opts = dict(d["options"], probe={"invariant": "Assertion"})
    files, argv, collect = v.followup(d["files"], proc, opts)
    text, cfg = files[f"{tlc.PROBE_MODULE}.tla"], files[f"{tlc.PROBE_MODULE}.cfg"]
    assert text.startswith(f"---- MODULE {tlc.PROBE_MODULE} ----\nEXTENDS HumanEval_13, TLC\n")
    assert "VKNext == UNCHANGED <<a, a0, b, b0, pc, result>>" in text
    assert cfg.splitlines()[-3:] == ["INIT VKInit", "NEXT VKNext", "INVARIANT Assertion"]
    assert "SPECIFICATION" not in cfg and "CONSTANT" in cfg  # the candidate's constants, not its Spec
    assert argv[-1] == tlc.PROBE_MODULE and "-dump" not in argv and collect == []
    _, failed = _recorded("invariant_violated")
    assert v.followup({}, failed, dict(opts, module="HumanEval_52")) is None  # not verified: no probe


@pytest.mark.parametrize("case", ["falsified", "held", "error"])
def test_the_probe_outcome_is_read_from_the_recorded_followup(case):
    d, proc = _probe(case)
    r = tlc.TLC().parse(proc, d["options"])
    assert r.verdict == "verified" and r.extra["probe"]["outcome"] == case
    assert r.extra["probe"]["variants"] == len(tlc.probe_variants(r.extra["states"]))
    if case == "falsified":
        assert r.extra["probe"]["state"]["pc"] == '"done"'
    if case == "error":
        assert "should be an integer" in r.extra["probe"]["error"]


def test_a_probe_that_did_not_run_or_ended_early_is_not_run():
    d, proc = _probe("held")
    missing = ProcResult(argv=proc.argv, returncode=0, stdout=proc.stdout, files={tlc.DUMP_FILE: proc.files[tlc.DUMP_FILE]})
    assert tlc.TLC().parse(missing, d["options"]).extra["probe"]["outcome"] == "not_run"
    cut = dict(proc.files)
    cut["followup/stdout"] = cut["followup/stdout"].split(b"@!@!@STARTMSG 2193")[0]  # no result
    cut["followup/ended"] = b"timeout: the follow-up run killed at the wall-time limit after 300.0 s"
    r = tlc.TLC().parse(ProcResult(argv=proc.argv, returncode=0, stdout=proc.stdout, files=cut), d["options"])
    assert r.extra["probe"]["outcome"] == "not_run" and "wall-time" in r.extra["probe"]["error"]


def test_a_followup_with_several_checks_runs_them_in_one_jvm():
    """Several checks (the probe and two more): one JVM (the launcher's ``--each``) with each
    check's own TLC arguments, then each check whose ``.rc`` is missing again in a JVM of its
    own, and the probe's output and exit status as the script's."""
    opts = {"module": "M", "heap_mb": 512, "workers": 1, "fp": 0, "seed": 0}
    v = tlc.TLC()
    runs = [(name, v.command({**opts, "module": name, "dump": False, "sany_view": False})[0])
            for name in (tlc.PROBE_MODULE, "VKTests", "VKOther")]
    script = tlc.verifier._one_jvm(runs, probe=True).split("\n")
    batch = script[0].split()
    assert batch[:batch.index("-cp")] == runs[0][1][:runs[0][1].index("-cp")]  # the same JVM options
    assert batch[batch.index("-cp") + 1:batch.index("--each") + 1] == [f"{tlc.JAR}:.", tlc.LAUNCHER, "--each"]
    groups = " ".join(batch[batch.index("--each") + 1:]).split(" --- ")
    assert [g.split()[0] for g in groups] == [name for name, _ in runs]
    assert [a for g in groups for a in g.split()[1:]] == [  # each check's arguments, its own metadata directory
        a for name, argv in runs for a in (x if x != tlc.METADIR else f"{tlc.METADIR}/{name}"
                                           for x in argv[argv.index("tlc2.TLC") + 1:])]
    assert all(f"-metadir {tlc.METADIR}/{name} " in line for (name, _), line in zip(runs, script[1:4]))
    assert script[1].startswith(f"[ -f {tlc.PROBE_MODULE}.rc ] || {{ java ") and len(script) == 5
    assert script[-1] == f"cat {tlc.PROBE_MODULE}.out; exit $(cat {tlc.PROBE_MODULE}.rc)"
    assert not tlc.verifier._one_jvm(runs[1:], probe=False).endswith(".rc)")


#: Models for the launcher's ``--each``: a success, a parse error, a violated invariant, an
#: evaluation error, a constant without a value (TLC's exit statuses 0, 150, 12, 75, 151).
EACH = {
    "Ok": ("EXTENDS Naturals\nVARIABLE x\nInit == x \\in 0..3\nNext == x < 5 /\\ x' = x + 1\nInv == x < 9\n",
           "INIT Init\nNEXT Next\nINVARIANT Inv\n"),
    "Broken": ("EXTENDS Naturals\nVARIABLE x\nInit == x = 0 /\\\nNext == x' = x + 1\n", "INIT Init\nNEXT Next\n"),
    "Bad": ("EXTENDS Naturals\nVARIABLE x\nInit == x = 0\nNext == x < 5 /\\ x' = x + 1\nInv == x < 3\n",
            "INIT Init\nNEXT Next\nINVARIANT Inv\n"),
    "Div": ("EXTENDS Naturals\nVARIABLE x\nInit == x = 0\nNext == x' = 1 \\div x\n", "INIT Init\nNEXT Next\n"),
    "NoValue": ("EXTENDS Naturals\nCONSTANT K\nVARIABLE x\nInit == x = K\nNext == UNCHANGED x\n",
                "INIT Init\nNEXT Next\n"),
}
#: Lines of TLC's output that differ from run to run (times, dates, paths, counts of a
#: run's progress): left out when two runs' outputs are compared.
_VARYING = ("Finished in", "Starting...", "Running breadth", "tlc-meta", "Progress(", "Finished computing",
            "Semantic processing", "Parsing file", "Model checking completed", "states generated")


def _kept(text: bytes | str) -> list[str]:
    """TLC's output without the lines of :data:`_VARYING`."""
    text = text.decode() if isinstance(text, bytes) else text
    return [ln for ln in text.splitlines() if not any(s in ln for s in _VARYING)]


def _each_job(sb) -> tuple:
    """``(verifier, its options, the files)`` of a job holding the :data:`EACH` models and the
    launcher, for the toolchain probed in ``sb``."""
    from harness import toolchains

    v = tlc.TLC()
    probed = toolchains.probe("tlaplus", sb)
    files = {**v.prepare(sb, probed), **{f"{m}.tla": f"---- MODULE {m} ----\n{text}====\n" for m, (text, _) in EACH.items()},
             **{f"{m}.cfg": cfg for m, (_, cfg) in EACH.items()}}
    return v, v.options(probed), files


@pytest.mark.realtool
@pytest.mark.container
def test_checks_in_one_jvm_give_what_a_jvm_each_gives(engine_image):
    """The launcher's ``--each`` in the tlaplus image against each check in a JVM of its own:
    the same exit status and the same output (times aside), for a success, a parse error, a
    violated invariant, an evaluation error and a constant without a value; and the script
    runs again, alone, a check the JVM did not finish (here: its ``.rc`` taken away)."""
    from harness.model import Limits

    sb = engine_image(lambda: registry.sandbox("container", toolchain="tlaplus"))
    try:
        v, opts, files = _each_job(sb)
        runs = [(m, v.command({**opts, "module": m, "dump": False, "sany_view": False})[0]) for m in EACH]
        collect = [f"{m}.{ext}" for m in EACH for ext in ("out", "rc")]
        one = sb.run(["sh", "-c", tlc.verifier._one_jvm(runs, probe=False)], files=files, collect=collect,
                     limits=Limits(wall_s=300))

        statuses = {}
        for m, argv in runs:
            alone = sb.run(argv, files=files, limits=Limits(wall_s=120))
            statuses[m] = alone.returncode
            assert int(one.files[f"{m}.rc"]) == alone.returncode, m
            assert _kept(one.files[f"{m}.out"]) == _kept((alone.stdout + alone.stderr).encode()), m
        assert statuses == {"Ok": 0, "Broken": 150, "Bad": 12, "Div": 75, "NoValue": 151}
        # the JVM ended inside a check (its .rc missing): that check runs again in a JVM of its own
        script = tlc.verifier._one_jvm(runs[:1], probe=False).replace(f"VerikitTlc --each {runs[0][0]}", "Nothing")
        again = sb.run(["sh", "-c", script], files=files, collect=["Ok.out", "Ok.rc"], limits=Limits(wall_s=120))
        assert again.files["Ok.rc"].strip() == b"0" and b"Model checking completed. No error" in again.files["Ok.out"]
    finally:
        sb.close()


@pytest.mark.realtool
@pytest.mark.container
def test_a_check_made_ahead_gives_what_the_follow_up_s_check_gives(engine_image):
    """The launcher's check ahead (``TLC.ahead``'s tail) in the tlaplus image: after a first
    TLC that ends with status 0, each check's output and status are those of the same check
    in a JVM of its own (as the follow-up makes it), and the first run's output, status and
    files are those of the launcher without a tail. A first TLC that fails runs no check,
    and a check past its time (UNTIL) is abandoned: neither leaves a check's files (one the
    job was given is removed), and the status is the first TLC's."""
    from harness.model import Limits

    sb = engine_image(lambda: registry.sandbox("container", toolchain="tlaplus"))
    try:
        v, opts, files = _each_job(sb)
        limits = Limits(wall_s=120)

        def first(module: str, check: str | None = None, until: str = "60", given: dict | None = None):
            argv, _, collect = v.command({**opts, "module": module})
            tail = []
            if check:
                own = v.command({**opts, "module": check, "dump": False, "sany_view": False})[0]
                tail = ["---", check, until, *own[own.index("tlc2.TLC") + 1:]]
                collect = [*collect, *(f"{check}.{x}" for x in ("out", "rc", "dot"))]
            return sb.run(argv + tail, files={**files, **(given or {})}, collect=collect, limits=limits)

        plain = first("Ok")
        assert plain.returncode == 0 and b"->" in plain.files[tlc.DUMP_FILE]
        for check in ("Bad", "Div", "Broken", "NoValue"):
            ahead = first("Ok", check)
            alone = sb.run(v.command({**opts, "module": check, "dump": False, "sany_view": False})[0], files=files,
                           limits=limits)
            assert ahead.returncode == 0 and _kept(ahead.stdout) == _kept(plain.stdout), check
            assert {k: x for k, x in ahead.files.items() if not k.startswith(check)} == plain.files, check
            assert int(ahead.files[f"{check}.rc"]) == alone.returncode != 0, check
            assert _kept(ahead.files[f"{check}.out"]) == _kept(alone.stdout + alone.stderr), check
        given = {"Ok.out": "@!@!@STARTMSG 2193:0 @!@!@\n", "Ok.rc": "0\n"}  # as if the model had left them
        failed = first("Bad", "Ok", given=given)
        assert failed.returncode == 12 and not [k for k in failed.files if k.startswith("Ok.")]
        late = first("Ok", "Bad", until="0", given={"Bad.rc": "0\n"})
        assert late.returncode == 0 and _kept(late.stdout) == _kept(plain.stdout)
        assert not [k for k in late.files if k.startswith("Bad.")]
    finally:
        sb.close()
