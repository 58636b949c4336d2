"""Integrity of Dafny intent against dishonest candidates.

Without an engine: the grammar-level checks (attributes in any spelling, body-less
declarations, reserved names) and the smoke rule (a test counts only when its smoke check
``failed``). On the real Dafny 2.3's outputs (of the ``dafny`` image, recorded): every
cheat class in several spellings comes back ``rejected`` (helpers are verified with the
checks, and an error outside the check methods rejects the candidate), and the
metric-level weaknesses the paper's design leaves open (over-fitted specs, specs tuned to
the mutation operators, ``ensures false`` in ``avg_completeness``) are measured.

The real-Dafny cases are one in-process run of the pipeline (``engine_run``: cheats, weak
specs, honest specs and the 18 canaries on task 17, seed 0), recorded
(``tests/recording.py``, family ``dafny-integrity``): the run's sandbox is a replay of
``tests/recorded/runs/dafny-integrity/``, the outputs of every command the kit started in
the real ``dafny`` image (the toolchain probe and each job's Dafny run), so the kit's
executor, Dafny parser and Dafny-intent judge derive every verdict here from Dafny's real
output, with no engine and no image. Refresh it with
``python scripts/record.py dafny-integrity`` (the engine and the image needed; a fresh
result cache, so every job runs); ``tests/test_freshness.py`` re-runs a daily sample of
its jobs live. The 18 canaries on task 17 (known answers, and a cheat of each class the
rules reject) run live with the real Dafny in the image in ``tests/test_dafny_container.py``.
"""

from __future__ import annotations

import json
import os

import pytest
from recording import family_sandbox, pipeline_sandbox

from harness.benchmarks import dafny_intent as di
from harness.model import Candidate

SIG17 = "method SquarePerimeter(side: int) returns (perimeter: int)"

#: Cheats on task 17 (expected: perimeter == 4 * side); each is wrong (3 * side) or
#: vacuous, and each must be rejected. Key: (class, spelling).
CHEATS = {
    # 1. helpers that do not verify (integrity-clean text: Dafny's error rejects them)
    ("lying-helper", "function"): "function Lie(x: int): int\n  ensures Lie(x) == x + 1\n{ x }\n"
                                  "ensures perimeter == 3 * side || Lie(side) != side",
    ("lying-helper", "predicate"): "predicate P(x: int)\n  ensures P(x)\n{ false }\n"
                                   "ensures perimeter == 3 * side || P(side)",
    ("lying-helper", "method-form"): f"{SIG17}\n  ensures perimeter == 3 * side || Lie(side) != side\n\n"
                                     "function method Lie(x: int): int\n  ensures Lie(x) == x + 1\n{\n  x\n}",
    # 1. body-less declarations
    ("bodiless", "function"): "function Oops(x: int): int\n  ensures false\nensures perimeter == 3 * side + Oops(0) * 0",
    ("bodiless", "predicate-method-form"): f"{SIG17}\n  ensures perimeter == 3 * side\n\n"
                                           "predicate Ax()\n  ensures Ax() && false",
    ("bodiless", "lemma"): f"{SIG17}\n  ensures perimeter == 3 * side\n\nlemma Boom()\n  ensures false",
    # 1. attributes, any spelling
    ("attribute", "verify-paren"): "method {:verify (false)} SquarePerimeter(side: int) returns (perimeter: int)\n"
                                   "  ensures perimeter == 3 * side",
    ("attribute", "verify-helper"): "function {:verify(false)} Lie(x: int): int\n  ensures Lie(x) == x + 1\n{ x }\n"
                                    "ensures perimeter == 3 * side || Lie(side) != side",
    ("attribute", "axiom-spaced"): "function {:axiom } Lie(x: int): int\n  ensures Lie(x) == x + 1\n"
                                   "ensures perimeter == 3 * side || Lie(side) != side",
    ("attribute", "extern-arg"): "function {:extern \"Lie\"} Lie(x: int): int\n  ensures Lie(x) == x + 1\n"
                                 "ensures perimeter == 3 * side || Lie(side) != side",
    ("attribute", "in-body"): "function F(x: int): int\n{ assert {:verify false} false; x }\n"
                              "ensures perimeter == 3 * side",
    # 2. collision with the check methods
    ("collision", "predicates"): "predicate VkT1Smoke() { true }\npredicate VkT2Smoke() { true }\n"
                                 "predicate VkT3Smoke() { true }\nensures perimeter == 3 * side || true",
    ("collision", "method-form"): f"{SIG17}\n  ensures perimeter == 0\n\nfunction VkT1Smoke(): int {{ 0 }}",
}

#: Code one reader sees and the other does not (Dafny nests block comments and
#: ends a block comment inside what a line-comment reader skips), attributes off the
#: allow-list, and constructs of known soundness bugs. Each is wrong (3 * side) and each
#: must come back rejected, judged on Dafny's own printed program.
HIDDEN_BODY = "function Oops(x: int): int\n  ensures false\n"
CHEATS.update({
    # a helper's body that Dafny reads as a comment: a body-less function whose ensures is false
    ("hidden-body", "nested"): HIDDEN_BODY + "/* /* */ { 0 } // */\nensures perimeter == 3 * side + Oops(0) * 0",
    ("hidden-body", "nested-deep"): "predicate P(x: int)\n  ensures P(x) && false\n/* /* /* */ */ { true } // */\n"
                                    "ensures perimeter == 3 * side || P(0)",
    ("hidden-body", "method-form"): f"{SIG17}\n  ensures perimeter == 3 * side + Oops(0) * 0\n\n" + HIDDEN_BODY
                                    + "/* note /* */ {\n  0\n} // */",
    # an assume that only Dafny sees (the comment closes inside a line comment)
    ("hidden-assume", "ensures"): "ensures perimeter == 3 * side && /* /* */ 0 == 0 &&\n  true // */ assume false;\n"
                                  "  true",
    ("hidden-assume", "helper-body"): "function F(x: int): int\n{\n  x /* /* */ + 0 // */ + (assume false; 0)\n}\n"
                                      "ensures perimeter == 3 * side + F(0) - F(0)",
    ("hidden-assume", "stmt-expr"): "ensures assume false; perimeter == 3 * side",
    # an extra declaration only Dafny sees
    ("hidden-declaration", "bodiless-function"): "function Id(x: int): int\n{\n  x /* /* */ + 0 // */ } function Oops():"
                                                 " int ensures false predicate D() {\n  true }\n"
                                                 "ensures perimeter == 3 * side + Oops() * 0 + Id(0)",
    ("hidden-declaration", "axiom-lemma"): "function Id(x: int): int\n{\n  x /* /* */ + 0 // */ } lemma {:axiom} Boom()"
                                           " ensures false predicate D() {\n  true }\n"
                                           "ensures perimeter == 3 * side || Id(0) == 0",
    ("hidden-declaration", "datatype"): "function Id(x: int): int\n{\n  x /* /* */ + 0 // */ } datatype T = A | B "
                                        "predicate D() {\n  true }\nensures perimeter == 3 * side || Id(0) == 0",
    # attributes off the allow-list, visible or hidden
    ("unlisted-attribute", "opaque"): "function {:opaque} Three(): int { 3 }\nensures perimeter == Three() * side",
    ("unlisted-attribute", "hidden-verify"): "function Id(x: int): int\n{\n  x /* /* */ + 0 // */ } function"
                                             " {:verify false} Lie(x: int): int ensures Lie(x) == x + 1 { x } "
                                             "predicate D() {\n  true }\nensures perimeter == 3 * side || Lie(side) != side",
    # constructs of known soundness bugs of Dafny 2.3 (images/toolchains.json soundness_bugs)
    ("soundness-bug", "bv-decreases"): "function Shr(b: bv8): int\n  decreases b\n{ if b == 0 then 0 else Shr(b >> 1) }\n"
                                       "ensures perimeter == 3 * side + Shr(1) * 0",
    ("soundness-bug", "const"): "function Id(x: int): int\n{\n  x /* /* */ + 0 // */ } const K: int := 3 "
                                "predicate D() {\n  true }\nensures perimeter == 3 * side || Id(0) == 0",
})

#: Honest neighbours of the new classes: each must verify.
HONEST = {
    # (an honest spec with a nested comment is the canary "nested-comment")
    "nested-comment-helper": "/* the side /* times */ four */\nfunction Four(): int { 4 }\n"
                             "ensures perimeter == Four() * side",
    "line-comment-with-close": "// the perimeter */ of a square\nensures perimeter == 4 * side // */",
    # ({:trigger} is checked without an engine: test_trigger_allowed_and_prefix_reserved)
    "function-method": f"{SIG17}\n  ensures perimeter == Times(4, side)\n\n"
                       "function method Times(a: int, b: int): int { a * b }",
    # ordinary Dafny the kit's grammar does not parse: outlined, and judged on what Dafny reports
    "lambda": "ensures (x => x * 4)(side) == perimeter",
    "let": "ensures var n := 4; perimeter == n * side",
    "leading-and": "ensures && perimeter == 4 * side && perimeter >= 4 * side",
    "lambda-helper": "function Times(k: int): int -> int { y => k * y }\nensures perimeter == Times(4)(side)",
    "let-method-form": f"{SIG17}\n  ensures var n := Four(); perimeter == n * side\n\n"
                       "function Four(): int { var f := 4; f }",
}

#: Text outside both the kit's grammar and the pinned Dafny 2.3 (a sequence comprehension
#: came with later Dafny): Dafny's own parse error makes it ``invalid``, never the kit's grammar.
NOT_DAFNY_23 = "ensures perimeter == seq(1, i => 4 * side)[0]"

SUM = "function Sum(n: nat): nat { if n == 0 then 0 else n + Sum(n - 1) }\n"
#: Correct specifications padded with a true disjunct Dafny cannot prove: as weak as
#: ``ensures perimeter == 4 * side || true``, yet every mutant's check fails ("might not
#: hold"), so the paper's count rejects every mutant. On positive evidence (a proved
#: refutation) none is rejected: completeness 0, every mutant ``unknown``.
UNPROVABLE_DISJUNCT = {
    "induction": SUM + "ensures perimeter == 4 * side || (forall n: nat :: 2 * Sum(n) == n * (n + 1))",
    "witness": SUM + "ensures perimeter == 4 * side || (exists k: nat :: Sum(k) == 3)",
}

#: Metric-level weaknesses (paper's design, reported not fixed): (task, spec) measured.
WEAKNESSES = {
    "over-fitted": ("17", "ensures side == 10 ==> perimeter == 40\nensures side == 5 ==> perimeter == 20\n"
                          "ensures side == 4 ==> perimeter == 16"),
    "mod-11": ("17", "ensures perimeter % 11 == (4 * side) % 11"),
    "length-only": ("261", "requires |a| == |b|\nensures |result| == |a|"),
    "ensures-false": ("17", "ensures false"),
}


@pytest.fixture(scope="module")
def tasks(dafny_intent_fetched):
    return {t.task_id: t for t in di.load_tasks(dafny_intent_fetched)}


# ------------------------------------------------------------------ without an engine
EXPECTED_CHECKS = {
    ("bodiless", "function"): {"declarations-have-bodies"},
    ("bodiless", "predicate-method-form"): {"declarations-have-bodies"},
    ("bodiless", "lemma"): {"declarations-have-bodies"},
    ("attribute", "verify-paren"): {"allowed-attributes"},
    ("attribute", "verify-helper"): {"allowed-attributes"},
    ("attribute", "axiom-spaced"): {"allowed-attributes", "declarations-have-bodies"},
    ("attribute", "extern-arg"): {"allowed-attributes", "declarations-have-bodies"},
    ("attribute", "in-body"): {"allowed-attributes"},
    ("collision", "predicates"): {"no-reserved-names"},
    ("collision", "method-form"): {"no-reserved-names"},
}


@pytest.mark.parametrize("key", list(EXPECTED_CHECKS), ids=lambda k: "-".join(k))
def test_grammar_checks_reject(tasks, key):
    """The grammar-level checks fire on the parse (the token check is not needed)."""
    _spec, checks, invalid = di.read_candidate(CHEATS[key], tasks["17"], "cand")
    failed = {c["name"] for c in checks if not c["ok"]}
    assert EXPECTED_CHECKS[key] <= failed, (failed, invalid)
    cand = Candidate("17", "m", 0, CHEATS[key], "m")
    job = di.build_job(tasks["17"], cand, "spec", {"dialect": "2"}, {"name": "dafny-intent"})
    assert job.reject


@pytest.mark.parametrize("key", [k for k in CHEATS if k[0] == "lying-helper"], ids=lambda k: "-".join(k))
def test_lying_helpers_are_in_the_check_files(tasks, key):
    """A helper that passes the text checks is verified with the checks: it is in every
    check file (even when the spec could do without it)."""
    spec, checks, invalid = di.read_candidate(CHEATS[key], tasks["17"], "cand")
    assert invalid is None and all(c["ok"] for c in checks)
    b = di.build_files(tasks["17"], spec, 0, "2")
    name = "P" if key[1] == "predicate" else "Lie"
    assert name in b["helpers"]
    assert all(f" {name}(" in text for text in b["files"].values())


def test_trigger_allowed_and_prefix_reserved(tasks):
    ok = "ensures forall i {:trigger i * 2} :: 0 <= i < 3 ==> i * 2 >= 0\nensures perimeter == 4 * side"
    _, checks, invalid = di.read_candidate(ok, tasks["17"], "c")
    assert invalid is None and all(c["ok"] for c in checks)
    for text in ("predicate Vk() { true }\nensures perimeter == 4 * side",):  # Vk alone is not reserved
        _, checks, _ = di.read_candidate(text, tasks["17"], "c")
        assert all(c["ok"] for c in checks)


def _check(method, kind, test, n=0):
    return {"method": method, "kind": kind, "test": test, "n": n, "value": "0"}


@pytest.mark.parametrize("smoke", ["invalid", "timeout", "unknown", "not_run", None])
def test_smoke_counts_only_when_failed(smoke):
    checks = [_check("VkT1Correct", "correct", 1), _check("VkT1Smoke", "smoke", 1)]
    goals = [{"name": "VkT1Correct", "status": "verified"}]
    if smoke is not None:
        goals.append({"name": "VkT1Smoke", "status": smoke})
    s = di.score_checks(checks, goals)
    assert s["correct"] == 0 and s["unguarded"] == [1] and s["vacuous"] == []
    good = di.score_checks(checks, [goals[0], {"name": "VkT1Smoke", "status": "failed", "failure": "other"}])
    assert good["correct"] == 1 and good["unguarded"] == []


# ------------------------------------------------------------------ real Dafny 2.3 (recorded)
def _engine_run(tmp_path, task_ids, lines, cache_dir):
    from rich.console import Console

    from harness.runner import run
    from harness.runspec import RunSettings, RunSpec
    from harness.sandbox import Limits

    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps(x) + "\n" for x in lines))
    spec = RunSpec(benchmark="dafny-intent", modes=["spec"], sandbox="container", parallel=2,
                   limits=Limits(wall_s=600), task_ids=task_ids, predictions=str(preds), seed=0)
    settings = RunSettings(cache_dir=cache_dir, progress=False, command=["test"])
    report, _manifest, code = run(spec, tmp_path / "run", settings=settings, console=Console(stderr=True, quiet=True))
    records = [json.loads(x) for x in (tmp_path / "run" / "records.jsonl").read_text().splitlines()]
    return report, code, records



def _dafny_container(engine_image):
    """The real ``dafny`` image's sandbox with the pipeline's slots (``parallel=2``), as
    ``verikit run --sandbox container`` opens it: for the recorder only (a skip without the
    engine or the image, a failure under ``VERIKIT_REQUIRE_ENGINE=1``)."""
    from harness.registry import sandbox as get_sandbox

    return engine_image(lambda: get_sandbox("container", toolchain="dafny", slots=2))


@pytest.fixture(scope="module")
def engine_run(tasks, engine_image, tmp_path_factory):
    """``(report, exit code, records)`` of the one run of every candidate (with the
    canaries), in the family's sandbox (a replay of the recording, or the real ``dafny``
    image under the recorder: the engine is needed only then) and a fresh result cache of
    its own (a cached job would start no command: nothing recorded; and replay reads no
    live entry)."""
    lines = [{"task_id": "17", "model": "cheat:" + "/".join(k), "sample": 0, "output": t} for k, t in CHEATS.items()]
    lines += [{"task_id": task, "model": "weak:" + n, "sample": 0, "output": t} for n, (task, t) in WEAKNESSES.items()]
    lines += [{"task_id": "17", "model": "weak:ensures-false", "sample": 1, "output": "ensures true"}]
    lines += [{"task_id": "17", "model": "honest:" + n, "sample": 0, "output": t} for n, t in HONEST.items()]
    lines += [{"task_id": "17", "model": "padded:" + n, "sample": 0, "output": t} for n, t in UNPROVABLE_DISJUNCT.items()]
    lines += [{"task_id": "17", "model": "later-dafny", "sample": 0, "output": NOT_DAFNY_23}]
    import time

    tmp = tmp_path_factory.mktemp("dafny-integrity")
    t0 = time.monotonic()
    with family_sandbox("dafny-integrity", "dafny", live=lambda: _dafny_container(engine_image)) as sb, \
            pipeline_sandbox(sb):
        report, code, records = _engine_run(tmp, ["17", "261"], lines, tmp / "cache")
        print(f"dafny integrity run: {len(records)} records in {time.monotonic() - t0:.0f} s")
        if os.environ.get("VERIKIT_INTEGRITY_DUMP"):
            with open(os.environ["VERIKIT_INTEGRITY_DUMP"], "w") as fh:
                json.dump({"canaries": report["canaries"], "metrics": report["sections"]["metrics"],
                           "records": [{"model": r["candidate"]["model"], "task": r["task_id"],
                                        "verdict": r["verdict"], "reason": r["reason"],
                                        "outside": r["verifier"].get("extra", {}).get("outside"),
                                        "score": di.score(r)} for r in records]}, fh, indent=1)
    return report, code, records


@pytest.mark.recorded
def test_cheats_rejected_with_real_dafny(engine_run):
    report, code, records = engine_run
    got = {r["candidate"]["model"][len("cheat:"):]: r for r in records if r["candidate"]["model"].startswith("cheat:")}
    assert {k: r["verdict"] for k, r in got.items()} == {"/".join(k): "rejected" for k in CHEATS}
    for k in CHEATS:
        if k[0] == "lying-helper":  # rejected by Dafny's error in the helper, not by a text check
            r = got["/".join(k)]
            assert r["verifier"]["extra"]["outside"], r["reason"]
            assert all(c["ok"] for c in r["checks"])
            assert di.score(r) is None  # never averaged in
    assert report["canaries"]["ok"] and code == 0  # the new canaries come back rejected too
    canaries = {x["model"]: x["verdict"] for x in report["canaries"]["results"]}
    assert canaries == {f"canary:{n}": exp[0] for n, (_, exp) in di.CANARIES.items()}


@pytest.mark.recorded
def test_metric_weaknesses_measured(engine_run):
    """The paper's metrics cannot tell these specifications from the precise ones (reported
    in harness/benchmarks/dafny_intent/docs.md "Weaknesses" and the report's ``weaknesses`` section)."""
    report, _code, records = engine_run
    by = {(r["candidate"]["model"], r["candidate"]["sample"]): r for r in records}
    for name in ("over-fitted", "mod-11", "length-only"):
        r = by[("weak:" + name, 0)]
        s = di.score(r)
        assert r["verdict"] == "verified" and s["correctness"] == 1, (name, r["reason"])
        # the mutants are refuted on positive evidence too: the weakness is the metric's design
        assert s["completeness"] == 1 and s["completeness_paper"] == 1, (name, r["reason"])
    s = di.score(by[("weak:ensures-false", 0)])
    assert s["correctness"] == 0 and s["completeness_paper"] == 1  # counted in avg_completeness
    m = report["sections"]["metrics"]["weak:ensures-false"]
    # ensures false (completeness 1) and ensures true (correct, completeness 0): the
    # reference average says 0.5, over the correct specification only it is 0
    assert m["avg_completeness_paper"] == 0.5 and m["avg_completeness_if_correct_paper"] == 0
    w = report["sections"]["weaknesses"]
    assert {x["name"] for x in w["known"]} == {"over-fitted", "tuned-to-mutants", "avg_completeness-includes-incorrect"}
    row = w["avg_completeness_paper"]["weak:ensures-false"]
    assert row["incorrect_counted"] == 1 and row["avg_completeness_if_correct_paper"] == 0


@pytest.mark.recorded
def test_unprovable_disjunct_rejects_no_mutant_on_positive_evidence(engine_run):
    """A true disjunct Dafny cannot prove makes every mutant's check fail: the paper's
    count says complete (15/15), the kit's positive evidence says 0/15 with every mutant
    ``unknown``; both are in the report, the paper's labelled."""
    report, _code, records = engine_run
    for n in UNPROVABLE_DISJUNCT:
        r = next(x for x in records if x["candidate"]["model"] == "padded:" + n)
        s = di.score(r)
        assert r["verdict"] == "verified" and s["correctness"] == 1, r["reason"]
        assert (s["completeness_paper"], s["completeness"], s["unknown"], s["mutants"]) == (1, 0, 15, 15), r["reason"]
        assert "completeness 0/15 (paper's count 15/15) (15 unknown)" in r["reason"]
        m = report["sections"]["metrics"]["padded:" + n]
        assert (m["avg_completeness"], m["avg_completeness_paper"], m["unknown"]) == (0, 1, 15)
    honest = di.score(next(x for x in records if x["candidate"]["model"] == "honest:lambda"))
    assert (honest["completeness"], honest["completeness_paper"], honest["unknown"]) == (1, 1, 0)


@pytest.mark.recorded
def test_text_beyond_the_pinned_dafny_is_invalid_by_dafnys_parse(engine_run):
    """The kit's grammar does not decide validity: text outside it runs, and Dafny's own
    parse error makes it ``invalid`` with Dafny's message."""
    _report, _code, records = engine_run
    r = next(x for x in records if x["candidate"]["model"] == "later-dafny")
    assert r["verdict"] == "invalid" and "parse errors detected in batch.dfy" in r["reason"], r["reason"]
    assert len(r["verifier"]["extra"]["runs"]) == 1  # a parse error is in every file: no per-file fallback


@pytest.mark.recorded
def test_integrity_classes_rejected_on_daftys_view(engine_run):
    """Every class judged on Dafny's view, each spelling, is rejected; the reason names the
    construct; none is verified or infra_error."""
    _report, _code, records = engine_run
    got = {r["candidate"]["model"][len("cheat:"):]: r for r in records if r["candidate"]["model"].startswith("cheat:")}
    new = [k for k in CHEATS if k[0] in ("hidden-body", "hidden-assume", "hidden-declaration", "unlisted-attribute",
                                         "soundness-bug")]
    assert {"/".join(k): got["/".join(k)]["verdict"] for k in new} == {"/".join(k): "rejected" for k in new}
    words = {"hidden-body": ("no body", "body-less"), "hidden-assume": ("assume",),
             "hidden-declaration": ("did not read", "body", "no body", "axiom", "datatype"),
             "unlisted-attribute": ("attribute", "opaque", "verify"),
             "soundness-bug": ("soundness bug", "not on the allow-list", "const")}
    for k in new:
        r = got["/".join(k)]
        assert any(w in r["reason"] for w in words[k[0]]), (k, r["reason"])
        # Dafny's printed program alone rejects it too (whatever the kit's grammar saw), except
        # where Dafny itself stopped before printing (then it is not verified either); a
        # declaration of a kind no specification makes (datatype, const) is in the check files
        # and refused by the view's allow-list
        if r["verifier"]["extra"].get("view", {}).get("files"):
            problems = di.view_problems(r["verifier"]["extra"]["view"], r["verifier"]["options"]["expect"],
                                        dafny_version=r["verifier"]["options"].get("dafny_version"))
            assert problems, k


@pytest.mark.recorded
def test_honest_neighbours_verify(engine_run):
    _report, _code, records = engine_run
    got = {r["candidate"]["model"][len("honest:"):]: r for r in records if r["candidate"]["model"].startswith("honest:")}
    assert {n: (r["verdict"], r["reason"]) for n, r in got.items() if r["verdict"] != "verified"} == {}
    assert set(got) == set(HONEST)
    for r in got.values():  # judged on Dafny's printed program, which was collected
        view = r["verifier"]["extra"]["view"]
        assert view["files"] and view["decls"] and not view["errors"] and not view["unclassified"]


@pytest.mark.recorded
def test_old_grammar_misreading_is_caught_by_daftys_view(engine_run, tasks, monkeypatch):
    """The kit's earlier grammar (non-nested block comments) does not see
    the body-less ``Oops`` of the hidden-declaration cheat (Dafny verified every check of
    it); judged with that reading against Dafny's real printed program, the candidate is
    still rejected: a declaration the kit did not read. (The old reading lays out the
    helper text as one declaration; Dafny reads the same three declarations from it, as
    checked by hand with ``/dprint``.)"""
    from harness.benchmarks.dafny_intent import grammar
    from harness.model import VerifierResult

    _report, _code, records = engine_run
    key = ("hidden-declaration", "bodiless-function")
    rec = next(r for r in records if r["candidate"]["model"] == "cheat:" + "/".join(key))
    assert rec["verifier"]["extra"]["view"]["files"]  # Dafny ran and printed the program
    monkeypatch.setattr(grammar, "COMMENT_DEPTH", 0)
    for f in (grammar._parser, grammar._basic_lexer):
        f.cache_clear()
    try:
        cand = Candidate("17", "m", 0, CHEATS[key], "m")
        opts = {k: v for k, v in rec["verifier"]["options"].items()}
        job = di.build_job(tasks["17"], cand, "spec", opts, {"name": "dafny-intent"})
        # the old reading: one helper Id with a body, no Oops (it is in what the kit took for a comment)
        assert [h["name"] for h in job.options["expect"]["helpers"]] == ["Id"] and not job.reject
        result = VerifierResult(rec["verifier"].get("verdict", "failed"), "", goal_results=rec["goal_results"],
                                extra=rec["verifier"]["extra"])
        verdict, reason = di.judge(job, result)
        assert verdict == "rejected" and "kit did not read" in reason and "Oops" in reason, reason
    finally:
        for f in (grammar._parser, grammar._basic_lexer):
            f.cache_clear()


def test_kit_parse_exception_is_the_candidates(tasks, monkeypatch):
    """An exception in the kit's own reading of one candidate makes it ``invalid`` with
    the reason; it never raises out of ``build_job`` or ``judge``."""
    from harness.benchmarks.dafny_intent import benchmark as bm
    from harness.model import VerifierResult

    def boom(*a, **k):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(bm, "read_candidate", boom)
    job = di.build_job(tasks["17"], Candidate("17", "m", 0, "ensures true", "m"), "spec", {"dialect": "2"},
                       {"name": "dafny-intent"})
    assert job.precheck[0] == "invalid" and "RecursionError" in job.precheck[1]
    monkeypatch.undo()
    job = di.build_job(tasks["17"], Candidate("17", "m", 0, "ensures true", "m"), "spec", {"dialect": "2",
                       "print_program": True}, {"name": "dafny-intent"})
    verdict, reason = di.judge(job, VerifierResult("verified", "", goal_results=None, extra={"view": {"decls": 3}}))
    assert verdict in ("invalid", "rejected") and reason
