"""Model-Bench (TLC): what a dishonest candidate tried, judged on the real TLC 2.15's
outputs in the tlaplus image (recorded).

Two defences, each tested on its own: the verifier's reading of TLC (success only when
the exit status, the once-per-run messages, the empty queue and the state dump agree:
:func:`harness.verifiers.tlc.success_evidence`), and the benchmark's judgement on SANY's
own parse of the module (:func:`harness.verifiers.tlc.sany_view`, exported in the same
container run as TLC, judged by allow-lists in
:func:`harness.benchmarks.modelbench.integrity.sany_findings`; what SANY ignores, before
the header and after the closing ``====``, is not judged). Then the behaviour harness
(the model run by TLC on the program's inputs, judged against its return values) and the
metric-level weaknesses of the paper's definitions, measured on the kit's oracle tasks.

Recorded: every candidate is a Model-Bench job run by the kit's executor (SANY's export
and TLC, then TLC's invariant probe as the follow-up run) and judged by
:func:`modelbench.judge`, in the family ``tlc-integrity``'s sandbox
(``tests/recording.py``). By default the sandbox replays what the real TLC printed and
collected for each command (``tests/recorded/runs/tlc-integrity/``): the executor, TLC's
parser and the judge run unchanged on it, no engine or image is needed and no tool runs.
Refresh the recording (the tlaplus image under a Docker-API engine) with
``python scripts/record.py tlc-integrity``; ``tests/test_freshness.py`` re-runs a sample
of its jobs live each day. The same cheat classes run live end to end as Model-Bench's
canaries in ``tests/test_modelbench_tlc.py``.

Every candidate runs once per module (:func:`tlc` caches by text and task), so the
assertions on one run share it.
"""

from __future__ import annotations

import dataclasses
import hashlib
from types import SimpleNamespace

import pytest

from harness.benchmarks import modelbench
from harness.benchmarks.modelbench.canaries import behaviour_canaries
from harness.benchmarks.modelbench.metrics import similarity
from harness.model import Candidate, Limits, VerifierResult
from harness.verifiers.tlc import DUMP_FILE, TLC, parse_dump

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
# Real TLC, recorded
# ---------------------------------------------------------------------------------------

#: The recording of this module's rule matrix (``tests/recorded/runs/tlc-integrity/``).
FAMILY = "tlc-integrity"
#: The limits of every job of this module (part of each recorded command's key).
LIMITS = Limits(wall_s=300, mem_mb=2048)


@pytest.fixture(scope="module")
def tlc(tmp_path_factory):
    """``run(text, consts=None, tid="HumanEval/13") -> (VerifierResult, ProcResult)``: the
    Model-Bench job of the candidate on the task of the kit's oracle set
    (:func:`modelbench.build_job`: post-processing, config and the behaviour harness's
    inputs) run by the kit's executor (SANY's export and TLC in one run, then TLC's
    invariant probe and behaviour harness as its follow-up run) and judged by
    :func:`modelbench.judge`; the
    ``ProcResult`` is the tool output the record names (the follow-up's files in it), the
    ``VerifierResult`` its reading by :meth:`TLC.parse` (:func:`harness.executor.derive`).
    ``run.judged(text, tid)`` gives the record's ``(verdict, reason)``;
    ``run.batch([(text, tid), ...])`` runs the candidates not run yet as ONE executor run,
    two at a time (tests call it first with all their candidates). ``consts`` is ignored
    (the task's).

    The sandbox is the family's (``tests/recording.py``): replayed from the recording by
    default (no engine, no TLC run), or, under ``scripts/record.py tlc-integrity``, the
    tlaplus image under the Docker-API engine, every command's output kept."""
    from recording import Recording, family_sandbox, recording_mode

    from harness import toolchains
    from harness.executor import Executor, derive
    from harness.registry import sandbox as get_sandbox
    from harness.results import RecordLog

    from harness import datasets

    v = TLC()
    fetched = datasets.fetch("modelbench-humaneval", data_dir=tmp_path_factory.mktemp("verikit-data"))
    tasks = {t.task_id: t for t in modelbench.load_tasks(fetched) if t.oracle}
    # the same task without its declared domain: judged by the invariant probe, not the harness
    tasks[NO_DOMAIN] = dataclasses.replace(tasks["HumanEval/13"], domain=None)
    cache: dict = {}

    def live():  # the recorder's: an engine or image missing fails the recording
        return get_sandbox("container", toolchain="tlaplus", slots=2)

    with family_sandbox(FAMILY, v.name, live) as sb:
        probed = (toolchains.probe("tlaplus", sb.inner) if recording_mode()
                  else Recording(FAMILY).toolchain())
        base = v.options(probed, max_states=50000)  # the product of HumanEval/35 has 37,200
        shared = v.prepare(sb, probed)

        def job_of(text: str, tid: str):
            # a model name of its own per candidate: the recording's jobs are told apart by it
            model = "c-" + hashlib.sha256(f"{tid}\0{text}".encode()).hexdigest()[:12]
            return modelbench.build_job(tasks[tid], Candidate(tid, model, 0, text, "test"), "original-fewshot", base,
                                        {"name": "test", "revision": "0"})

        def batch(items) -> None:
            """Run every ``(text, tid)`` not run yet as ONE executor run (no result cache)."""
            todo = [k for k in dict.fromkeys(items) if k not in cache]
            if not todo:
                return
            jobs = [job_of(text, tid) for text, tid in todo]
            ex = Executor(v, sb, probed, shared_files=shared, limits=LIMITS, parallel=2, cache=None)
            log = RecordLog(tmp_path_factory.mktemp("tlc-run") / "records.jsonl")
            try:
                recs = {r["candidate"]["model"]: r for r in ex.run(jobs, log, modelbench.judge)}
            finally:
                log.close()
            for key, job in zip(todo, jobs):
                cache[key] = {"job": job, "record": recs[job.candidate["model"]], "outputs": ex.outputs}

        def run(text: str, consts: dict | None = None, tid: str = "HumanEval/13"):
            batch([(text, tid)])
            got = cache[(text, tid)]
            if "result" not in got:  # read on demand: TLC's output parsed again, as validate does
                rec = got["record"]
                got["proc"] = got["outputs"].get(rec["tool_output"]["sha256"])
                verdict, reason, got["result"] = derive(v, got["job"], got["proc"], modelbench.judge)
                assert (verdict, reason) == (rec["verdict"], rec["reason"])  # the record is its output's reading
            return got["result"], got["proc"]

        def judged(text: str, tid: str = "HumanEval/13") -> tuple[str, str]:
            batch([(text, tid)])
            rec = cache[(text, tid)]["record"]
            return rec["verdict"], rec["reason"]

        run.judged = judged
        run.batch = batch
        yield run


CONSTS = {tid: e["constants"] for tid, e in modelbench.task_table()["oracles"].items()}


@pytest.mark.recorded
@pytest.mark.parametrize("name", sorted(EXIT_CHEATS))
def test_exit_early_is_rejected_by_the_verifier(tlc, name):
    tlc.batch(PREFETCH)
    r, proc = tlc(EXIT_CHEATS[name], CONSTS["HumanEval/13"])
    # TLC itself prints "No error has been found" and exits 0, with states left on the queue
    assert "No error has been found" in proc.stdout and proc.returncode == 0
    assert r.verdict == "rejected" and r.extra["outcome"] == "inconsistent_output"
    assert "left on the queue" in r.reason


@pytest.mark.recorded
@pytest.mark.parametrize("name", sorted(PRINT_CHEATS))
def test_printed_statistics_are_rejected_by_the_verifier(tlc, name):
    tlc.batch(PREFETCH)
    r, proc = tlc(PRINT_CHEATS[name], CONSTS["HumanEval/13"])
    assert "500 distinct states found" in proc.stdout and parse_dump(proc.files[DUMP_FILE].decode())[1] == 0
    assert r.verdict == "rejected" and "2199" in r.reason and "printed more than once" in r.reason
    assert r.extra["distinct_states"] == r.extra["states_total"] == 0  # the count is the dump's


@pytest.mark.recorded
def test_honest_models_still_verify(tlc):
    tlc.batch(PREFETCH)
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


@pytest.mark.recorded
@pytest.mark.parametrize("tid", sorted(ORACLES))
def test_definition4_gives_full_similarity_to_degenerate_models(tlc, tid):
    """Measured on each oracle task: a one-variable model over the oracle's pc labels, the
    cartesian product of the oracle variables' value domains, both only stuttering with
    Assertion == TRUE, are runnable and get similarity 1.0 (Definition 4, theta 1.0);
    the guard flags them ``stuttering_only``. A one-variable model that moves between
    its values is not flagged and still scores 1.0 (the guard's limit)."""
    gold, _ = tlc(ORACLES[tid], tid=tid)
    assert gold.verdict == "verified"
    so = gold.extra["states"]
    domains: dict[str, list[str]] = {}
    for s in so:
        for k, v in s.items():
            domains.setdefault(k, [])
            if v not in domains[k]:
                domains[k].append(v)
    values = domains["pc"]  # every oracle state has a pc label (TLC cannot enumerate a set mixing types)
    models = (("one-variable", _stutter({"x": values}), True),
              ("cartesian", _stutter(domains), True),
              ("one-variable-moving", _stutter({"x": values}, moves=True), False))
    tlc.batch([(text, tid) for _, text, _ in models])
    for name, text, flagged in models:
        r, _ = tlc(text, tid=tid)
        assert r.verdict == "verified", (name, r.reason)
        assert r.extra["stuttering_only"] is flagged, name
        sim = similarity(so, r.extra["states"])
        print(f"{tid} {name}: {r.extra['distinct_states']} states, similarity {sim:.2f} "
              f"(oracle {len(so)} states), stuttering_only {r.extra['stuttering_only']}")
        assert sim == 1.0, name


# ---------------------------------------------------------------------------------------
# SANY's parse judged on allow-lists (real TLC; one run per candidate, shared)
# ---------------------------------------------------------------------------------------

def _init(text: str, extra: str) -> str:
    """``text`` with one more conjunct in the oracle's Init (after ``pc = "loop"``)."""
    return text.replace('        /\\ pc = "loop"\n\nLoop', f'        /\\ pc = "loop"\n        /\\ {extra}\n\nLoop')


_A = 'Assertion == pc = "done" => result = Gcd(a0, b0) + 1\n'
#: the wrong model with its Assertion defined before Next (so Next or Spec can use it)
ASSERT_FIRST = WRONG.replace(_A, "").replace("Next == Loop", _A + "\nNext == Loop")
T13 = GCD.replace("CONSTANTS MaxValue, NONE, NULL", "CONSTANTS MaxValue, NONE, NULL\nT == INSTANCE TLC")
#: class -> spelling -> candidate; each must come back ``rejected`` naming the construct (needle).
ALLOW_LIST_CHEATS = {
    "tlc-operator": ("TLC!", {
        "exit-alias": EXIT_CHEATS["alias"], "exit-instance": EXIT_CHEATS["instance"],
        "exit-comment-quote": EXIT_CHEATS["comment-quote"], "printt-assume": PRINT_CHEATS["assume-printt"],
        "tlcget-in-assertion": WRONG.replace('Assertion == pc = "done" =>',
                                             'Assertion == TLCGet("level") > 99 \\/ pc = "done" =>'),
        "alias-chain": _next(WRONG, "Stop", 'E(v) == TLCSet("exit", v)\nStop == E(TRUE)\n\n'),
    }),
    "random-element (tlaplus#498)": ("RandomElement", {
        "direct": WRONG.replace("Init == /\\ a0 \\in 1..MaxValue", "Init == /\\ a0 = RandomElement(1..MaxValue)"),
        "instance": T13.replace("Init == /\\ a0 \\in 1..MaxValue", "Init == /\\ a0 = T!RandomElement(1..MaxValue)"),
        "alias": WRONG.replace("Init == /\\ a0 \\in 1..MaxValue",
                               "Pick(S) == RandomElement(S)\nInit == /\\ a0 = Pick(1..MaxValue)"),
    }),
    "constant-assertion": ("reads no variable", {
        "true": WRONG.replace('Assertion == pc = "done" => result = Gcd(a0, b0) + 1', "Assertion == TRUE"),
        "arith": WRONG.replace('Assertion == pc = "done" => result = Gcd(a0, b0) + 1', "Assertion == 1 + 1 = 2"),
        "constant-only": WRONG.replace('Assertion == pc = "done" => result = Gcd(a0, b0) + 1',
                                       "Ok == MaxValue > 0\nAssertion == Ok"),
    }),
    "shadowed-task-constant": ("task constant", {
        "defined": GCD.replace("CONSTANTS MaxValue, NONE, NULL", "CONSTANTS NONE, NULL\nMaxValue == 1"),
        "defined-late": GCD.replace("CONSTANTS MaxValue, NONE, NULL", "CONSTANTS NONE, NULL").replace(
            "vars ==", "MaxValue == 2\nvars =="),
    }),
    "except-of-constructor (tlaplus#1302)": ("tlaplus#1302", {
        "init": _init(GCD, "[[k \\in 1..2 |-> 0] EXCEPT ![1] = 1][1] = 1"),
        "let": _init(GCD, "LET f == [[k \\in 1..2 |-> k] EXCEPT ![2] = 5] IN f[2] = 5"),
    }),
    "assertion-as-constraint": ("used by Spec", {
        "in-next": _next(ASSERT_FIRST, "Assertion'"),
        "in-spec": ASSERT_FIRST.replace("Spec == Init /\\ [][Next]_vars", "Spec == Init /\\ [][Next /\\ Assertion']_vars"),
    }),
    "module-outside-list": ("not allowed", {
        "inner-module": GCD.replace("vars ==", "---- MODULE Inner ----\nX == 1\n====\nI == INSTANCE Inner\nvars =="),
    }),
}
#: Honest neighbours: must be ``verified``.
HONEST = {
    "prose-after-end": GCD + "\nProse after the end: EXTENDS TLCExt; VARIABLES z; TLCSet(\"exit\", TRUE)\n",
    "prose-before-header": "This model EXTENDS Naturals; it uses no TLCSet.\nEXTENDS Foo\n" + GCD,
    "assert-and-colon-gt": _init(GCD, 'Assert(a0 \\in 1..MaxValue, "input in range") /\\ (1 :> 2)[1] = 2'),
    "except-on-definition": GCD.replace("vars ==", "Zero == [k \\in 1..2 |-> 0]\nvars ==").replace(
        '        /\\ pc = "loop"\n\nLoop', '        /\\ pc = "loop"\n        /\\ [Zero EXCEPT ![1] = 1][1] = 1\n\nLoop'),
    "theorem": GCD.replace(
        "\n=============================================================================",
        "\nTHEOREM Spec => []Assertion\n============================================================================="),
}


@pytest.mark.recorded
@pytest.mark.parametrize("cls,spelling", [(c, s) for c, (_, d) in ALLOW_LIST_CHEATS.items() for s in d])
def test_allow_list_cheats_are_rejected_naming_the_construct(tlc, cls, spelling):
    tlc.batch(PREFETCH)
    needle, spellings = ALLOW_LIST_CHEATS[cls]
    verdict, reason = tlc.judged(spellings[spelling])
    assert verdict == "rejected" and needle in reason, (verdict, reason)


@pytest.mark.recorded
@pytest.mark.parametrize("name", sorted(HONEST))
def test_honest_neighbours_verify(tlc, name):
    tlc.batch(PREFETCH)
    verdict, reason = tlc.judged(HONEST[name])
    assert verdict == "verified", reason
    r, _ = tlc(HONEST[name])
    assert r.extra["sany"]["root"] == "HumanEval_13" and "TLC:TLCSet" not in r.extra["sany"]["operators"]


@pytest.mark.recorded
def test_sany_view_of_the_gold_and_the_oracles(tlc):
    """The gold of every oracle task verifies through build_job and judge; the view names
    what the module contains (the allow-lists were derived from these)."""
    for tid, text in ORACLES.items():
        verdict, reason = tlc.judged(text, tid)
        assert verdict == "verified", (tid, reason)
    r, _ = tlc(GCD)
    view = r.extra["sany"]
    assert sorted(c["name"] for c in view["constants"]) == ["MaxValue", "NONE", "NULL"]
    assert {c["arity"] for c in view["constants"]} == {0}
    assert sorted(view["variables"]) == ["a", "a0", "b", "b0", "pc", "result"] and view["assumes"] == 0
    assert "Naturals:%" in view["operators"] and "builtin:$BoundedChoose" in view["operators"]
    assert view["assertion_variables"] == ["a0", "b0", "pc", "result"]


# ---------------------------------------------------------------------------------------
# Failures belong to the candidate (no engine)
# ---------------------------------------------------------------------------------------

def test_failures_belong_to_the_candidate():
    from harness.model import ProcResult

    v = TLC()
    crash = ProcResult(["sh"], 1, stdout="Exception in thread \"main\" java.lang.StackOverflowError\n")
    assert v.parse(crash).verdict == "failed" and v.parse(crash).extra["outcome"] == "tool_crash"
    jar = ProcResult(["sh"], 1, stderr="Error: Unable to access jarfile /opt/verikit/tla2tools.jar")
    assert v.parse(jar).verdict == "infra_error"
    banner = "@!@!@STARTMSG 2262:0 @!@!@\nTLC2 Version 2.15\n@!@!@ENDMSG 2262 @!@!@\n"
    assert v.parse(ProcResult(["sh"], 0, stdout=banner)).verdict == "failed"
    odd = ProcResult(["sh"], 0, stdout=None)  # the kit's reading raises: that candidate is invalid
    assert v.parse(odd).verdict == "invalid" and "could not read" in v.parse(odd).reason


def test_kit_exceptions_make_the_candidate_invalid_not_the_run(monkeypatch):
    problem = SimpleNamespace(code="", tests="")
    task = modelbench.Task("HumanEval/13", problem, "", "HumanEval_13", {"MaxValue": "4"}, GCD)

    def broken(text):  # a bug of the kit's own reading, met on one candidate
        raise IndexError("post-processing bug")

    with monkeypatch.context() as m:
        m.setattr(modelbench.benchmark, "postprocess", broken)
        job = modelbench.build_job(task, Candidate("HumanEval/13", "m", 0, GCD, "test"), "original-fewshot",
                                   {"deadlock_in_cfg": False}, {"name": "x"})
    assert "IndexError" in job.options["build_error"] and job.files["Model.tla"] == GCD
    assert modelbench.judge(job, VerifierResult("verified", "ok"))[0] == "invalid"
    good = modelbench.build_job(task, Candidate("HumanEval/13", "m", 0, GCD, "test"), "original-fewshot",
                                {"deadlock_in_cfg": False}, {"name": "x"})
    weird = VerifierResult("verified", "ok", extra={"sany": {"root": "HumanEval_13"}, "distinct_states": 3})
    verdict, reason = modelbench.judge(good, weird)  # a view missing its keys: the kit's error, this record only
    assert verdict == "invalid" and "could not judge" in reason
    # no view at all and TLC verified: fail closed; no view and TLC failed: TLC's verdict stands
    assert modelbench.judge(good, VerifierResult("verified", "ok", extra={"distinct_states": 3}))[0] == "rejected"
    assert modelbench.judge(good, VerifierResult("invalid", "parse error", extra={"sany": {"error": "x"}}))[0] == "invalid"


# ---------------------------------------------------------------------------------------
# The behaviour harness: the model run on the program's inputs, against its return values
# ---------------------------------------------------------------------------------------

FEWER_INPUTS = GCD.replace("Init == /\\ a0 \\in 1..MaxValue", "Init == /\\ a0 \\in 1..2")
NO_END = GCD.replace("""        /\\ IF b # 0
              THEN /\\ a' = b""", """        /\\ b # 0
        /\\ IF b # 0
              THEN /\\ a' = b""")
S0 = (modelbench.DATA_DIR / "bundled" / "HumanEval_13.s0.tla").read_text()
#: name -> (text, verdict, harness outcome, needle of the reason)
BEHAVIOUR_CASES = {
    "gold": (GCD, "verified", "models_program", "on the 4 inputs of its tests"),
    "honest-other-names": (S0, "verified", "models_program", "in result"),
    "fewer-inputs": (FEWER_INPUTS, "rejected", "missing_inputs", "Init leaves out 8 of the program's 16 inputs"),
    # the loop's guard blocks at b = 0: TLC reports no error (deadlock checking is off); the
    # model stops there, before it returns
    "no-end": (NO_END, "failed", "differs", 'result = NONE in the final state b0 = 1, a = 1, b = 0, pc = "loop"'),
    **{name[len("canary:"):]: (text, expected, None, None) for name, text, expected in behaviour_canaries(GCD)},
}


@pytest.mark.recorded
@pytest.mark.parametrize("name", sorted(BEHAVIOUR_CASES))
def test_behaviour_harness(tlc, name):
    """Each model passes TLC with its own Assertion; the behaviour harness (TLC run on
    every input of the program's bounded domain and of its tests, the state graph read
    whole) decides: the program's return value in the model's result variable in every
    final state, every input an initial state, every behaviour ending."""
    tlc.batch(PREFETCH)
    text, verdict, outcome, needle = BEHAVIOUR_CASES[name]
    got, reason = tlc.judged(text)
    r, _ = tlc(text)
    assert r.verdict == "verified" and r.extra["outcome"] == "success"  # TLC's own run: the paper's "runnable"
    assert got == verdict, (name, reason)
    if outcome:
        assert r.extra["behaviour"]["outcome"] == outcome and needle in reason, reason


@pytest.mark.recorded
def test_behaviour_harness_on_every_oracle_task(tlc):
    """The gold of every oracle task models its program on the bounded domain; where the
    tests' inputs need constants whose sets TLC cannot build (lists of length 11 over
    -124..124), that part is reported as not checked, not held against the model."""
    tlc.batch(PREFETCH)
    for tid, text in ORACLES.items():
        r, _ = tlc(text, tid=tid)
        b = r.extra["behaviour"]
        assert b["outcome"] == "models_program" and b["result_variable"] == "result", (tid, b)
        verdict, reason = tlc.judged(text, tid)
        assert verdict == "verified", (tid, reason)
        if tid in ("HumanEval/35", "HumanEval/52"):
            assert b["tests_part"] == "error" and "too many elements" in b["tests_detail"], b
            assert "tests' " in reason and "not checked" in reason
        else:
            assert b["tests_part"] == "models_program" and "constants widened" in reason


#: HumanEval/13 without its declared domain (a task the behaviour harness cannot run on).
NO_DOMAIN = "HumanEval/13 (no domain)"
_CANARY = {name[len("canary:"):]: text for name, text, _ in behaviour_canaries(GCD)}
#: name -> (text, verdict, probe outcome, needle): where no domain is declared, the invariant
#: probe decides whether the Assertion checks anything.
PROBE_CASES = {
    "gold": (GCD, "verified", "falsified", "no error found"),
    "tautology": (GCD.replace('Assertion == pc = "done" => result = Gcd(a0, b0)',
                              'Assertion == pc = "done" => result = result'),
                  "rejected", "held", "holds by construction"),
    "probe-error": (_CANARY["probe-error"], "rejected", "error", "evaluation error"),
    # the honest translation of the tests checks nothing within the task's bounds: without a
    # domain the kit has no other evidence, and fails closed
    "test-asserts": (_CANARY["test-asserts"], "rejected", "held", "holds by construction"),
}


@pytest.mark.recorded
@pytest.mark.parametrize("name", sorted(PROBE_CASES))
def test_invariant_probe_decides_where_no_domain_is_declared(tlc, name):
    tlc.batch(PREFETCH)
    text, verdict, outcome, needle = PROBE_CASES[name]
    got, reason = tlc.judged(text, NO_DOMAIN)
    r, _ = tlc(text, tid=NO_DOMAIN)
    assert "behaviour" not in r.extra and r.extra["probe"]["outcome"] == outcome, r.extra.get("probe")
    assert got == verdict and needle in reason, (got, reason)


#: Every fixed candidate of this module, run as one executor run by the first test that needs one.
PREFETCH = ([(t, "HumanEval/13") for t in (GCD, WRONG, VACUOUS, *EXIT_CHEATS.values(), *PRINT_CHEATS.values(),
                                           *HONEST.values(), *(c[0] for c in BEHAVIOUR_CASES.values()))]
            + [(t, "HumanEval/13") for _, d in ALLOW_LIST_CHEATS.values() for t in d.values()]
            + [(t, tid) for tid, t in ORACLES.items()]
            + [(c[0], NO_DOMAIN) for c in PROBE_CASES.values()]
            + [((modelbench.DATA_DIR / "bundled" / "HumanEval_13.s0.tla").read_text(), "HumanEval/13")])
