"""Integrity of Dafny intent against dishonest candidates (issue 13, "Dafny intent").

Without an engine: the grammar-level checks (attributes in any spelling, body-less
declarations, reserved names) and the smoke rule (a test counts only when its smoke check
``failed``). With the real Dafny 2.3 in the ``dafny`` image: every cheat class in several
spellings comes back ``rejected`` (helpers are verified with the checks, and an error
outside the check methods rejects the candidate), and the metric-level weaknesses the
paper's design leaves open (over-fitted specs, specs tuned to the mutation operators,
``ensures false`` in ``avg_completeness``) are measured.
"""

from __future__ import annotations

import json
import os

import pytest

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


# ------------------------------------------------------------------ real Dafny 2.3
def _engine_run(tmp_path, task_ids, lines):
    from rich.console import Console

    from harness.runner import RunOptions, run
    from harness.sandbox import Limits

    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps(x) + "\n" for x in lines))
    opts = RunOptions(benchmark="dafny-intent", modes=["spec"], sandbox="container", parallel=1,
                      limits=Limits(wall_s=600), out=tmp_path / "run", use_cache=False, task_ids=task_ids,
                      predictions=str(preds), progress=False, command=["test"], seed=0)
    report, _manifest, code = run(opts, Console(stderr=True, quiet=True))
    records = [json.loads(x) for x in (tmp_path / "run" / "records.jsonl").read_text().splitlines()]
    return report, code, records


@pytest.fixture(scope="module")
def engine_run(tasks, engine_image, tmp_path_factory):
    from harness.registry import sandbox as get_sandbox

    engine_image(lambda: get_sandbox("container", toolchain="dafny", slots=1).close())
    lines = [{"task_id": "17", "model": "cheat:" + "/".join(k), "sample": 0, "output": t} for k, t in CHEATS.items()]
    lines += [{"task_id": task, "model": "weak:" + n, "sample": 0, "output": t} for n, (task, t) in WEAKNESSES.items()]
    lines += [{"task_id": "17", "model": "weak:ensures-false", "sample": 1, "output": "ensures true"}]
    report, code, records = _engine_run(tmp_path_factory.mktemp("dafny-integrity"), ["17", "261"], lines)
    if os.environ.get("VERIKIT_INTEGRITY_DUMP"):
        with open(os.environ["VERIKIT_INTEGRITY_DUMP"], "w") as fh:
            json.dump({"canaries": report["canaries"], "metrics": report["sections"]["metrics"],
                       "records": [{"model": r["candidate"]["model"], "task": r["task_id"],
                                    "verdict": r["verdict"], "reason": r["reason"],
                                    "outside": r["verifier"].get("extra", {}).get("outside"),
                                    "score": di.score(r)} for r in records]}, fh, indent=1)
    return report, code, records


@pytest.mark.container
@pytest.mark.realtool
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


@pytest.mark.container
@pytest.mark.realtool
def test_metric_weaknesses_measured(engine_run):
    """The paper's metrics cannot tell these specifications from the precise ones (reported
    in docs/dafny-intent.md "Weaknesses" and the report's ``weaknesses`` section)."""
    report, _code, records = engine_run
    by = {(r["candidate"]["model"], r["candidate"]["sample"]): r for r in records}
    for name in ("over-fitted", "mod-11", "length-only"):
        r = by[("weak:" + name, 0)]
        s = di.score(r)
        assert r["verdict"] == "verified" and s["correctness"] == 1 and s["completeness"] == 1, (name, r["reason"])
    s = di.score(by[("weak:ensures-false", 0)])
    assert s["correctness"] == 0 and s["completeness"] == 1  # counted in avg_completeness
    m = report["sections"]["metrics"]["weak:ensures-false"]
    # ensures false (completeness 1) and ensures true (correct, completeness 0): the
    # reference average says 0.5, over the correct specification only it is 0
    assert m["avg_completeness"] == 0.5 and m["avg_completeness_if_correct"] == 0
    w = report["sections"]["weaknesses"]
    assert {x["name"] for x in w["known"]} == {"over-fitted", "tuned-to-mutants", "avg_completeness-includes-incorrect"}
    row = w["avg_completeness"]["weak:ensures-false"]
    assert row["incorrect_counted"] == 1 and row["avg_completeness_if_correct"] == 0
