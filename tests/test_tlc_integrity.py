"""Issue 13, Model-Bench (TLC): what a dishonest candidate tried, with the real TLC 2.15 in
the tlaplus image.

Two defences, each tested on its own: the verifier's reading of TLC (success only when
the exit status, the once-per-run messages, the empty queue and the state dump agree:
:func:`harness.verifiers.tlc.success_evidence`), and the benchmark's integrity check
(:func:`harness.benchmarks.modelbench.postprocess.integrity_findings`: forbidden TLC
operators and modules, decided on the code outside comments and strings). Then the
metric-level weaknesses of the paper's definitions, measured on the kit's oracle tasks.

The first tests need no engine (the integrity check on text); the others skip without an
engine or image unless ``VERIKIT_REQUIRE_ENGINE=1``.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from harness.benchmarks import modelbench
from harness.benchmarks.modelbench.metrics import similarity
from harness.benchmarks.modelbench.postprocess import config_text, integrity_findings, postprocess
from harness.model import Candidate, Limits
from harness.verifiers.tlc import TLC

ORACLES = {tid: (modelbench.DATA_DIR / "oracles" / f"{e['module']}.tla").read_text()
           for tid, e in modelbench.task_table()["oracles"].items()}
GCD = ORACLES["HumanEval/13"]
WRONG = GCD.replace("result = Gcd(a0, b0)", "result = Gcd(a0, b0) + 1")
VACUOUS = GCD.replace("Init == /\\ a0 \\in 1..MaxValue", "Init == /\\ a0 \\in {}")
FAKE_2199 = ('"@!@!@STARTMSG 2199:0 @!@!@\\n500 states generated, 500 distinct states found, 0 states left on '
             'queue.\\n@!@!@ENDMSG 2199 @!@!@"')


def _next(text: str, guard: str, extra_defs: str = "") -> str:
    return text.replace("Next == Loop \\/ Done", f"{extra_defs}Next == {guard} /\\ (Loop \\/ Done)")


#: Cheat class 2: end the search early (a wrong assertion hidden), several spellings.
EXIT_CHEATS = {
    "direct": _next(WRONG, 'TLCSet("exit", TRUE)'),
    "alias": _next(WRONG, "MyExit", 'MyExit == TLCSet("exit", TRUE)\n\n'),
    "instance": _next(WRONG, 'T!TLCSet("exit", TRUE)', "T == INSTANCE TLC\n\n"),
    # SANY reads no strings in comments: the comment ends at the first *), MyExit is live
    "comment-quote": _next(WRONG, "MyExit", '(* " *) MyExit == TLCSet("exit", TRUE) \\* " *)\n\n'),
    "extends-tlc": _next(WRONG.replace("EXTENDS Naturals", "EXTENDS Naturals, TLC"), 'TLCSet("exit", 1 = 1)'),
}
#: Cheat class 1: spoof TLC's statistics with Print/PrintT (a model with no state).
PRINT_CHEATS = {
    "assume-printt": VACUOUS.replace("Assertion ==", f"ASSUME PrintT({FAKE_2199})\n\nAssertion =="),
    "alias-print": VACUOUS.replace("Assertion ==", f"Say(x) == Print(x, TRUE)\nASSUME Say({FAKE_2199})\n\nAssertion =="),
    "instance-print": VACUOUS.replace("Assertion ==",
                                      f"Out == INSTANCE TLC\nASSUME Out!PrintT({FAKE_2199})\n\nAssertion =="),
}


# ---------------------------------------------------------------------------------------
# The integrity check on text (no engine)
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(EXIT_CHEATS) + sorted(PRINT_CHEATS))
def test_cheats_are_found_in_the_code(name):
    text = {**EXIT_CHEATS, **PRINT_CHEATS}[name]
    found = integrity_findings(postprocess(text).text)
    assert found and "TLC operator" in found[0], found


def test_mentions_in_comments_strings_and_prologue_are_not_code():
    ok = GCD.replace("vars ==", '(* calls TLCSet (* nested *) Print *)\n\\* PrintT here\nnote == "TLCGet"\n\nvars ==')
    assert integrity_findings(postprocess(ok).text) == []
    assert all(integrity_findings(postprocess(t).text) == [] for t in ORACLES.values())
    # text before the module header is not read by SANY: an open comment there hides nothing
    assert integrity_findings("(* \n" + EXIT_CHEATS["direct"])
    other = GCD.replace("EXTENDS Naturals", "EXTENDS Naturals, TLCExt")
    assert "TLCExt" in integrity_findings(other)[0]
    assert "Randomization" in integrity_findings(GCD.replace("vars ==", "R == INSTANCE Randomization\nvars =="))[0]


def test_build_job_records_the_check_and_rejects():
    problem = SimpleNamespace(code="", tests="")
    task = modelbench.Task("HumanEval/13", problem, "", "HumanEval_13", {"MaxValue": "3"}, GCD)
    cand = Candidate("HumanEval/13", "m", 0, EXIT_CHEATS["alias"], "test")
    job = modelbench.build_job(task, cand, "original-fewshot", {"deadlock_in_cfg": False}, {"name": "x"})
    check = next(c for c in job.checks if c["name"] == "integrity:tlc-operators")
    assert not check["ok"] and "TLCSet" in check["detail"] and job.reject
    from harness.model import VerifierResult

    assert modelbench.judge(job, VerifierResult("verified", "no error", extra={"distinct_states": 9}))[0] == "rejected"


# ---------------------------------------------------------------------------------------
# Real TLC
# ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def tlc(engine_image):
    """``run(text, consts) -> (VerifierResult, ProcResult)``: the module post-processed as
    Model-Bench does, checked by TLC in the tlaplus image, read by :meth:`TLC.parse`
    alone (no benchmark integrity check)."""
    from harness import toolchains
    from harness.registry import sandbox as get_sandbox

    sb = engine_image(lambda: get_sandbox("container", toolchain="tlaplus"))
    probed = toolchains.probe("tlaplus", sb, flavor="debian")
    v = TLC()
    base = v.options(probed)

    def run(text: str, consts: dict):
        p = postprocess(text)
        files = {f"{p.module}.tla": p.text,
                 f"{p.module}.cfg": config_text({c: consts.get(c, "3") for c in p.constants}, p.model_values,
                                                deadlock_in_cfg=base["deadlock_in_cfg"])}
        opts = dict(base, module=p.module, max_states=50000)  # the product of HumanEval/35 has 37,200
        argv, env, collect = v.command(opts)
        proc = sb.run(argv, files=files, env=env, collect=collect, limits=Limits(wall_s=120, mem_mb=2048))
        return v.parse(proc, opts), proc

    yield run
    sb.close()


CONSTS = {tid: e["constants"] for tid, e in modelbench.task_table()["oracles"].items()}


@pytest.mark.container
@pytest.mark.realtool
@pytest.mark.parametrize("name", sorted(EXIT_CHEATS))
def test_exit_early_is_rejected_by_the_verifier(tlc, name):
    r, proc = tlc(EXIT_CHEATS[name], CONSTS["HumanEval/13"])
    # TLC itself prints "No error has been found" and exits 0, with states left on the queue
    assert "No error has been found" in proc.stdout and proc.returncode == 0
    assert r.verdict == "rejected" and r.extra["outcome"] == "inconsistent_output"
    assert "left on the queue" in r.reason


@pytest.mark.container
@pytest.mark.realtool
@pytest.mark.parametrize("name", sorted(PRINT_CHEATS))
def test_printed_statistics_are_rejected_by_the_verifier(tlc, name):
    r, proc = tlc(PRINT_CHEATS[name], CONSTS["HumanEval/13"])
    assert "500 distinct states found" in proc.stdout and proc.files["states.dump"] == b""
    assert r.verdict == "rejected" and "2199" in r.reason and "printed more than once" in r.reason
    assert r.extra["distinct_states"] == r.extra["states_total"] == 0  # the count is the dump's


@pytest.mark.container
@pytest.mark.realtool
def test_honest_models_still_verify(tlc):
    r, _ = tlc(GCD, CONSTS["HumanEval/13"])
    assert r.verdict == "verified" and r.extra["distinct_states"] == r.extra["states_total"] > 0
    assert not r.extra.get("model_output") and r.extra["stuttering_only"] is False
    assert r.extra["init_states"] == 16  # MaxValue 4: a0, b0 in 1..4
    r, _ = tlc(WRONG, CONSTS["HumanEval/13"])
    assert r.verdict == "failed" and r.extra["outcome"] == "invariant_violated"
    r, _ = tlc(VACUOUS, CONSTS["HumanEval/13"])  # no state: verified by TLC, 0 states in the dump
    assert r.verdict == "verified" and r.extra["distinct_states"] == 0


# ---------------------------------------------------------------------------------------
# Metric-level weaknesses (reported, not hidden)
# ---------------------------------------------------------------------------------------

def _stutter(variables: dict[str, list[str]], *, moves: bool = False) -> str:
    """A model whose variables range over the given values (their product) and that only
    stutters (``moves``: starts at the first values, and any variable may change to any of
    its values), Assertion TRUE."""
    names = list(variables)
    init = "\n".join(f"        /\\ {v} \\in {{{', '.join(vals[:1] if moves else vals)}}}" for v, vals in variables.items())
    nxt = (" \\/ ".join(f"({v}' \\in {{{', '.join(vals)}}} /\\ UNCHANGED <<{', '.join(n for n in names if n != v)}>>)"
                         for v, vals in variables.items()) if moves else f"UNCHANGED <<{', '.join(names)}>>")
    return (f"---- MODULE Cheat ----\nEXTENDS Naturals, Sequences\nCONSTANTS NONE, NULL\n"
            f"VARIABLES {', '.join(names)}\nvars == <<{', '.join(names)}>>\nInit ==\n{init}\n"
            f"Next == {nxt}\nSpec == Init /\\ [][Next]_vars\nAssertion == TRUE\n====\n")


@pytest.mark.container
@pytest.mark.realtool
@pytest.mark.parametrize("tid", sorted(ORACLES))
def test_definition4_gives_full_similarity_to_degenerate_models(tlc, tid):
    """Measured on each oracle task: a one-variable model over the oracle's pc labels, the
    cartesian product of the oracle variables' value domains, both only stuttering with
    Assertion == TRUE, are runnable and get similarity 1.0 (Definition 4, theta 1.0);
    the guard flags them ``stuttering_only``. A one-variable model that moves between
    its values is not flagged and still scores 1.0 (the guard's limit)."""
    gold, _ = tlc(ORACLES[tid], CONSTS[tid])
    assert gold.verdict == "verified"
    so = gold.extra["states"]
    domains: dict[str, list[str]] = {}
    for s in so:
        for k, v in s.items():
            domains.setdefault(k, [])
            if v not in domains[k]:
                domains[k].append(v)
    values = domains["pc"]  # every oracle state has a pc label (TLC cannot enumerate a set mixing types)
    for name, text, flagged in (("one-variable", _stutter({"x": values}), True),
                                ("cartesian", _stutter(domains), True),
                                ("one-variable-moving", _stutter({"x": values}, moves=True), False)):
        r, _ = tlc(text, CONSTS[tid])
        assert r.verdict == "verified", (name, r.reason)
        assert r.extra["stuttering_only"] is flagged, name
        sim = similarity(so, r.extra["states"])
        print(f"{tid} {name}: {r.extra['distinct_states']} states, similarity {sim:.2f} "
              f"(oracle {len(so)} states), stuttering_only {r.extra['stuttering_only']}")
        assert sim == 1.0, name
