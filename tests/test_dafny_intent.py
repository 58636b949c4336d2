"""Dafny intent formalization without Dafny: parsing of the real MBPP-DFY programs,
test extraction in every form the files use, seeded mutation, integrity checks, metrics,
labels. The checks that need Dafny are in tests/test_dafny_container.py."""

from __future__ import annotations

import json
import random
from decimal import Decimal

import pytest

from harness.benchmarks import dafny_intent as di
from harness.benchmarks.dafny_intent import Arr, Char, Ty

INT, SEQI = Ty("int"), Ty("seq", (Ty("int"),))


@pytest.fixture(scope="module")
def fetched(dafny_intent_fetched):
    return dafny_intent_fetched


@pytest.fixture(scope="module")
def surveyed(fetched):
    return di.survey(fetched)


@pytest.fixture(scope="module")
def tasks(surveyed):
    return {t.task_id: t for t in surveyed[0]}


def test_every_program_is_handled_or_skipped_with_a_reason(surveyed):
    tasks, skipped = surveyed
    assert len(tasks) + len(skipped) == 166  # every MBPP-DFY-153/test program at a57ce24
    assert len(tasks) == 154  # the paper handled 64 of 153
    cats = {s.task_id: s.category for s in skipped}
    assert cats == {"57": "empty", "747": "empty", "759": "no-test", "799": "syntax", "432": "value",
                    "622": "value", "591": "value", "602": "partial-output", "807": "partial-output",
                    "625": "in-place", "632": "in-place", "644": "in-place"}
    for s in skipped:  # every reason names the file and a line
        assert s.reason.startswith(f"{s.path}:") and s.reason.split(":")[1].isdigit()
    assert "799.dfy:3:26" in next(s.reason for s in skipped if s.task_id == "799")  # bit-vector shifts
    assert "3 argument(s) for 2 parameter(s)" in next(s.reason for s in skipped if s.task_id == "432")


def test_sources_and_labels(tasks, fetched):
    labels = di.read_labels(fetched)
    counts = {}
    for v in labels.values():
        counts[v["label"]] = counts.get(v["label"], 0) + 1
    assert counts == {"STRONG": 103, None: 64, "WRONG": 8, "WEAK": 3}  # the RQ3 json: labels are tags in `note`
    # 116 programs are verified RQ3 GPT-4 generations; 109 of them are scored (7 skipped above)
    assert sum(t.source == "gpt-4" for t in tasks.values()) == 109
    assert tasks["2"].label == "STRONG" and tasks["2"].source == "gpt-4"
    assert tasks["127"].source == "gold" and tasks["127"].label is None


def test_gold_and_bundled_candidates(tasks, fetched):
    """One word, one meaning: the authors' own specifications are the gold
    candidates (model and origin ``gold``); ``human`` names only the label source."""
    gold = di.gold_candidates(list(tasks.values()), "spec")
    assert len(gold) == 45 and {(c.model, c.origin) for c in gold} == {("gold", "gold")}
    assert {c.task_id for c in gold} == {t for t, x in tasks.items() if x.source == "gold"} and "127" in {
        c.task_id for c in gold}
    gpt4 = di.bundled_candidates(fetched, "spec")
    assert len(gpt4) == 109 and {c.model for c in gpt4} == {"gpt-4"}
    assert all(c.origin == f"bundled:{tasks[c.task_id].path}" for c in gpt4)
    job = di.build_job(tasks["127"], gold[[c.task_id for c in gold].index("127")], "spec", {"dialect": "2"},
                       {"name": "dafny-intent", "revision": "x"}, di.Context(0))
    assert job.candidate["model"] == job.candidate["origin"] == "gold" and job.options["source"] == "gold"
    assert job.options["label"] is None and job.precheck is None and job.reject is None


def test_task2_extraction(tasks):
    t = tasks["2"]
    assert t.method.name == "SharedElements" and t.test_method == "SharedElementsTest"
    assert [f.name for f in t.method.params] == ["a", "b"] and str(t.method.returns[0].type) == "seq<int>"
    assert [c.kind for c in t.spec] == ["ensures", "ensures"]
    assert list(t.helpers) == ["InArray"]
    assert [(x.inputs, x.outputs, x.forms) for x in t.tests] == [
        ((Arr((3, 4, 5, 6)), Arr((5, 7, 4, 10))), ((4, 5),), ("//expected",)),
        ((Arr((1, 2, 3, 4)), Arr((5, 4, 3, 7))), ((3, 4),), ("//expected",)),
        ((Arr((11, 12, 14, 13)), Arr((17, 15, 14, 13))), ((13, 14),), ("//expected",))]
    assert [h.name for h in di.helper_closure(di.bundled_spec(t), t)] == ["InArray"]


def test_test_forms(tasks):
    assert tasks["127"].tests[0].forms == ("assert",) and tasks["127"].tests[0].outputs == (200,)
    assert tasks["594"].tests[0].forms == ("//assert",)
    assert tasks["257"].tests[0].forms == ("var e<k>",) and tasks["257"].tests[0].outputs == ((20, 10),)
    assert tasks["424"].tests[0].outputs == ("srs",)  # "//expeced ['s', 'r', 's']" (sic) as a string
    assert tasks["599"].tests[0].outputs == (55, Decimal("5.5"))  # two asserts, two outputs
    assert tasks["262"].tests[0].outputs == ((1, 1, 2), (3, 4, 4, 5, 1))  # one //expected, two printed results
    assert tasks["282"].tests[0].outputs == (Arr((-3, -3, -3)),)  # "PrintArray(res1);// expected [...]"
    assert tasks["750"].tests[0].outputs[0][1] == di.Tup((9, 10))
    assert tasks["310"].tests[1].outputs == (Arr(tuple(Char(c) for c in "item1")),)
    # a copy-paste slip: the third assertion names res2; test 3 is dropped with the reason
    assert len(tasks["143"].tests) == 2 and "copy-paste slip" in tasks["143"].notes[0]
    assert len(tasks["776"].tests) == 1  # two tests are commented out


def test_parse_errors_name_file_line_and_column():
    with pytest.raises(di.TaskFileError, match=r"^x.dfy:2:11: unexpected"):
        di.parse("method M()\n  ensures ) {}\n", "x.dfy")
    r = di.read_task("method M(x: int) returns (y: int)\n  ensures y ==\n}\n", "bad.dfy", "1")
    assert isinstance(r, di.Skipped) and r.category == "syntax" and r.reason.startswith("bad.dfy:3:1:")


def test_body_braces_in_strings_and_comments_are_not_braces():
    src = ('method M(s: string) returns (r: int)\n  ensures r == |s|\n{\n  var t := "}{";  // }\n'
           '  /* { */ r := |s|;\n}\nmethod Main() { }\n')
    decls = di.declarations(src, "x")
    assert [d.name for d in decls] == ["M", "Main"] and decls[0].end_line == 6


def test_set_display_in_ensures_ends_before_the_body():
    src = "method M(m: int) returns (r: bool)\n  ensures r <==> m in {1, 3}\n{\n  r := m in {1, 3};\n}\n"
    d = di.declarations(src, "x")[0]
    assert d.clauses[0].expr == "r <==> m in {1, 3}" and d.body.startswith("{")


def test_mutation_is_seeded_distinct_and_excludes_allowed_outputs(tasks):
    t = tasks["2"]
    a = [di.mutants(t, x, 0) for x in t.tests]
    b = [di.mutants(t, x, 0) for x in t.tests]
    c = [di.mutants(t, x, 1) for x in t.tests]
    assert a == b and a != c
    for m, x in zip(a, t.tests):
        assert len(m["mutants"]) == di.MUTANTS_PER_TEST
        assert len(set(m["mutants"])) == len(m["mutants"]) and x.outputs not in m["mutants"]
        for (v,) in m["mutants"]:  # seq<int>: one element dropped or inserted
            assert abs(len(v) - len(x.outputs[0])) == 1
    # an alternative output the test accepts is never a mutant
    alt = di.TestCase(1, 1, t.tests[0].inputs, ((4, 5),), alternatives=(((4,),), ((5,),)))
    for s in range(30):
        assert not {(4,), (5,)} & {m[0] for m in di.mutants(t, alt, s)["mutants"]}


def test_mutation_operators_follow_the_paper():
    rng = random.Random(1)
    for _ in range(200):
        v = di.mutate(7, INT, rng)
        assert 1 <= abs(v - 7) <= 10
        s = di.mutate("abc", Ty("seq", (di.CHAR,)), rng)
        assert (len(s) == 4 and s.startswith("abc")) or (len(s) == 3 and sum(x != y for x, y in zip(s, "abc")) <= 1)
        q = di.mutate((1, 2, 3), SEQI, rng)
        assert len(q) in (2, 4)
        if len(q) == 4:
            assert any(0 <= x <= 100 for x in q)
    assert di.mutate(True, Ty("bool"), rng) is False


def test_bool_outputs_have_one_mutant_and_nat_outputs_no_negative(tasks):
    t = tasks["396"]  # StartAndEndWithSameChar returns bool
    m = di.mutants(t, t.tests[0], 0)
    assert len(m["mutants"]) == 1 and m["discarded"]["duplicate"] > 0
    nat = di.Task("x", "x", "", "0" * 64, "gold", di.Decl("method", "M", False, (), (di.Formal("r", Ty("nat"), "nat"),),
                  (), "", "", None, None, 1, 1, frozenset(), (0, 0)), {}, (), (), None, "T")
    test = di.TestCase(1, 1, (), (2,))
    for s in range(20):
        assert all(v[0] >= 0 for v in di.mutants(nat, test, s)["mutants"])


def test_render_and_coerce_roundtrip():
    assert di.render(Decimal("5"), Ty("real")) == "5.0" and di.render(-3, INT) == "-3"
    assert di.render('a"\\\n', None) == '"a\\"\\\\\\n"' and di.render(Char("'"), None) == "'\\''"
    assert di.render(Arr(()), Ty("array", (INT,))) == "new int[0]"
    assert di.coerce((Char("a"), Char("b")), Ty("seq", (di.CHAR,)), "w") == "ab"
    with pytest.raises(di.ValueError_, match="is not a nat"):
        di.coerce(-1, Ty("nat"), "w")


CANDIDATES = {
    "ensures result == []": [],
    "// assume {:axiom}\nensures \"assume\" != \"\"": [],  # comments and strings do not count
    "requires false\nensures true": ["no-requires-false"],
    "requires (false)\nensures true": ["no-requires-false"],
    "ensures {:axiom} true": ["no-assume-axiom-verify-false", "allowed-attributes"],
    "method SharedElements(a: array<int>, b: array<int>) returns (result: seq<int>)\n ensures true\n{ assume false; }":
        ["no-assume-axiom-verify-false"],
    "method {:verify false} SharedElements(a: array<int>, b: array<int>) returns (result: seq<int>)\n ensures true":
        ["no-assume-axiom-verify-false", "allowed-attributes"],
    "method SharedElements(a: array<int>) returns (result: seq<int>)\n ensures true": ["signature-unchanged"],
    "method SharedElements(a: array<int>, b: array<int>) returns (r: seq<int>)\n ensures true": ["signature-unchanged"],
}


@pytest.mark.parametrize("text", list(CANDIDATES))
def test_integrity_checks(tasks, text):
    spec, checks, invalid = di.read_candidate(text, tasks["2"], "cand")
    assert invalid is None and spec is not None
    assert [c["name"] for c in checks if not c["ok"]] == CANDIDATES[text]


def test_candidates_with_own_predicates_and_bad_text(tasks):
    t = tasks["2"]
    text = ("predicate Both(a: array<int>, b: array<int>, x: int) reads a, b { InArray(a, x) && InArray(b, x) }\n"
            "ensures forall x :: x in result <==> Both(a, b, x)")
    spec, _, invalid = di.read_candidate(text, t, "cand")
    assert invalid is None and [h.name for h in di.helper_closure(spec, t)] == ["InArray", "Both"]
    spec, checks, invalid = di.read_candidate("ensures result ==\n ) assume", t, "preds.jsonl:3")
    assert spec is None and invalid.startswith("preds.jsonl:3:2:")
    assert not checks[0]["ok"]  # the token check still runs on text that does not parse


OUTSIDE_THE_GRAMMAR = {
    # text: (clauses, helpers) of the outline
    "ensures (x => x * 4)(side) == perimeter": (["ensures (x => x * 4)(side) == perimeter"], []),
    "ensures var n := 4; perimeter == n * side;\nrequires side >= 0":
        (["ensures var n := 4; perimeter == n * side", "requires side >= 0"], []),
    "ensures && perimeter == 4 * side && perimeter in {4 * side}":
        (["ensures && perimeter == 4 * side && perimeter in {4 * side}"], []),
    "function Times(k: int): int -> int { y => k * y }\nensures perimeter == Times(4)(side)":
        (["ensures perimeter == Times(4)(side)"], ["Times"]),
    "method SquarePerimeter(side: int) returns (perimeter: int)\n  ensures var n := F(); perimeter == n * side\n\n"
    "function F(): int { var f := 4; f }": (["ensures var n := F(); perimeter == n * side"], ["F"]),
}


@pytest.mark.parametrize("text", list(OUTSIDE_THE_GRAMMAR), ids=range(len(OUTSIDE_THE_GRAMMAR)))
def test_text_outside_the_grammar_is_outlined_for_dafny(tasks, text):
    """Ordinary Dafny the kit's grammar does not parse (lambdas, let expressions, a leading
    ``&&``) is outlined into clauses and helpers from tokens and brackets and left to Dafny
    to judge (recorded real runs: tests/test_dafny_integrity.py), not made ``invalid``."""
    with pytest.raises(di.TaskFileError):
        di.parse(text, "c", "spec_list")
    spec, checks, invalid = di.read_candidate(text, tasks["17"], "c")
    assert invalid is None and all(c["ok"] for c in checks), (invalid, checks)
    clauses, helpers = OUTSIDE_THE_GRAMMAR[text]
    assert [c.text for c in spec.clauses] == clauses and list(spec.helpers) == helpers
    b = di.build_files(tasks["17"], spec, 0, "2")
    assert all(c in b["files"]["batch.dfy"] for c in clauses)


@pytest.mark.parametrize("text, why", [
    ("ensures perimeter == 4 * side )", "closes no bracket"),
    ("ensures perimeter == (4 * side", "not closed"),
    ("perimeter == 4 * side", "neither a clause nor a declaration"),
    ("datatype T = A | B\nensures perimeter == 4 * side || (var t := A; false)", None),
])
def test_outline_errors_and_unlisted_declarations(tasks, text, why):
    """Text that cannot be outlined is ``invalid`` naming line and column; a declaration
    other than a function, predicate or lemma passes the kit's reading and goes into the
    check files, where Dafny's printed program is judged on the view's allow-list."""
    spec, checks, invalid = di.read_candidate(text, tasks["17"], "preds.jsonl:4")
    if why:
        assert spec is None and invalid.startswith("preds.jsonl:4:1:") and why in invalid, invalid
    else:
        assert all(c["ok"] for c in checks), checks
        assert [d.kind for d in spec.others] == ["datatype"]
        b = di.build_files(tasks["17"], spec, 0, "2")
        assert "datatype T = A | B" in b["files"]["batch.dfy"]
        assert {"name": "T", "kind": "datatype", "origin": "candidate", "body": False, "clauses": {}} in \
            b["expect"]["helpers"]


def test_an_unreadable_method_header_is_quoted_in_the_signature_check(tasks):
    """A method header the kit's grammar cannot read (a result type without a name) is
    rejected by the signature check, which quotes it as written."""
    text = "method Perim(side: int): int\n  ensures perimeter == 4 * side\n{\n  return 4 * side;\n}"
    spec, checks, invalid = di.read_candidate(text, tasks["17"], "preds.jsonl:9")
    sig = next(c for c in checks if c["name"] == "signature-unchanged")
    assert invalid is None and not sig["ok"], (invalid, checks)
    assert "with the header 'method Perim(side: int): int'" in sig["detail"] and "?" not in sig["detail"], sig


def test_check_files_and_line_ranges(tasks):
    t = tasks["2"]
    b = di.build_files(t, di.bundled_spec(t), 0, "2")
    lines = b["files"]["batch.dfy"].splitlines()
    for name, start, end in b["units"]["batch.dfy"]:
        assert lines[start - 1].startswith(f"method {name}(") and lines[end - 1] == "}"
    kinds = [c["kind"] for c in b["checks"]]
    assert kinds.count("correct") == 3 and kinds.count("smoke") == 3 and kinds.count("mutant") == 15
    assert kinds.count("refute") == 15  # one refutation per mutant
    # a refutation: no ensures, the negated postcondition asserted, and membership
    # tautologies giving the prover the witnesses of the quantifiers (task 2: sequences)
    text = b["files"]["checks/VkT1Refute1.dfy"]
    assert "ensures" not in text.split("method VkT1Refute1", 1)[1]
    assert "  assert !((" in text and " in result || !(" in text
    assert kinds.count("probe") == 3  # [4], [5], [6] of the paper on test 1
    assert len(b["separate"]) == len(b["checks"])
    for path in b["separate"]:
        name, start, end = b["units"][path][0]
        assert b["files"][path].splitlines()[start - 1].startswith(f"method {name}(")
    assert "assume {:axiom} a[..] == [3, 4, 5, 6];" in b["files"]["batch.dfy"]


def test_dialect_adaptation_of_helpers(tasks):
    t = tasks["573"]  # `ghost function SetProduct`
    d = t.helpers["SetProduct"]
    assert di.adapt_helper(d, "2").startswith("function SetProduct") and di.adapt_helper(d, "4") == d.text


def _goal(name, status, failure=None):
    return {"name": name, "status": status, "failure": failure, "messages": []}


def test_scores_and_judge():
    """A mutant counts as rejected on positive evidence only (its refutation verified and
    the test's smoke check failed); the paper's count (a postcondition failure) is kept
    beside it; a failure without a proved refutation is unknown."""
    checks = [{"method": "VkT1Correct", "kind": "correct", "test": 1, "n": 0, "value": "1"},
              {"method": "VkT1Smoke", "kind": "smoke", "test": 1, "n": 0, "value": "1"},
              {"method": "VkT1Mutant1", "kind": "mutant", "test": 1, "n": 1, "value": "2"},
              {"method": "VkT1Refute1", "kind": "refute", "test": 1, "n": 1, "value": "2"},
              {"method": "VkT1Mutant2", "kind": "mutant", "test": 1, "n": 2, "value": "3"},
              {"method": "VkT1Refute2", "kind": "refute", "test": 1, "n": 2, "value": "3"},
              {"method": "VkT1Mutant3", "kind": "mutant", "test": 1, "n": 3, "value": "6"},
              {"method": "VkT1Refute3", "kind": "refute", "test": 1, "n": 3, "value": "6"},
              {"method": "VkT2Correct", "kind": "correct", "test": 2, "n": 0, "value": "4"},
              {"method": "VkT2Smoke", "kind": "smoke", "test": 2, "n": 0, "value": "4"},
              {"method": "VkT2Mutant1", "kind": "mutant", "test": 2, "n": 1, "value": "5"},
              {"method": "VkT2Refute1", "kind": "refute", "test": 2, "n": 1, "value": "5"}]
    goals = [_goal("VkT1Correct", "verified"), _goal("VkT1Smoke", "failed", "other"),
             _goal("VkT1Mutant1", "failed", "postcondition"), _goal("VkT1Refute1", "verified"),
             _goal("VkT1Mutant2", "timeout"), _goal("VkT1Refute2", "timeout"),
             # "might not hold" without a proof of the negation: the paper's rejection, the kit's unknown
             _goal("VkT1Mutant3", "failed", "postcondition"), _goal("VkT1Refute3", "failed", "other"),
             _goal("VkT2Correct", "verified"), _goal("VkT2Smoke", "failed", "other"),
             _goal("VkT2Mutant1", "failed", "other"), _goal("VkT2Refute1", "failed", "other")]
    s = di.score_checks(checks, goals)
    assert (s["correct"], s["tests"], s["rejected"], s["mutants"], s["undecided"]) == (2, 2, 1, 4, 1)
    assert (s["rejected_paper"], s["unknown"]) == (2, 2)
    assert s["completeness_if_correct"] == pytest.approx(1 / 4)
    assert s["completeness_if_correct_paper"] == pytest.approx(2 / 4)
    assert di.kit_label(s) == "WEAK" and di.kit_label(s, 0.3) == "STRONG"
    assert di.kit_label(s, 0.3, metric="completeness") == "WEAK"
    vac = di.score_checks(checks, [dict(g, status="verified") if g["name"] == "VkT1Smoke" else g for g in goals])
    assert vac["rejected"] == 0, "a refutation under inconsistent assumptions is no evidence"

    class J:
        reject = None
        options = {"checks": checks}

    class R:
        verdict, reason, goal_results = "failed", "x", goals

    assert di.judge(J, R)[0] == "verified"
    R.goal_results = [dict(g, status="verified") if g["name"].endswith("Smoke") else g for g in goals]
    assert di.judge(J, R)[0] == "rejected"  # every test vacuous: precondition excludes the inputs
    R.goal_results = [_goal("VkT1Correct", "failed", "postcondition")] + goals[1:]
    assert di.judge(J, R)[0] == "failed"


def test_convert_the_rq1_to_rq3_generation_files(fetched, tasks, tmp_path):
    """``verikit convert dafny-intent NAME``: every RQ1-RQ3 generation file of the pinned
    data becomes predictions (one line per entry of a handled task, the entry's own human
    label in ``meta``), which validate against the predictions schema; a malformed file and
    an unknown name are errors that name the file and the entry."""
    from harness import predictions

    all_tasks = list(tasks.values())
    for rq in di.RQ_FILES:
        lines = di.BENCHMARK.convert(rq, fetched, all_tasks)
        assert len(lines) == 109 and {ln["model"] for ln in lines} == {rq}
        assert len({ln["task_id"] for ln in lines}) == 109
        assert all(ln["meta"]["source"].startswith(di.RQ_FILES[rq] + "#") for ln in lines)
    rq3 = {ln["task_id"]: ln for ln in di.BENCHMARK.convert(None, fetched, all_tasks)}
    labels = di.read_labels(fetched)
    assert all(rq3[t]["meta"]["label"] == labels[t]["label"] for t in rq3)  # the same tags as the bundled run
    rq1 = di.BENCHMARK.convert("rq1-gpt-4", fetched, all_tasks)
    assert rq1[0]["task_id"] == "105" and rq1[0]["meta"]["label"] == "WEAK" and rq1[0]["temperature"] == 0.75
    out = tmp_path / "rq1.jsonl"
    out.write_text("".join(json.dumps(ln) + "\n" for ln in rq1))
    preds = predictions.load(out, set(tasks))
    assert preds.errors == [] and len(preds.candidates) == 109 and preds.candidates[0].meta["label"] == "WEAK"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"task_id": "2", "dafny_code": "x"}, {"task_id": "3"}]))
    with pytest.raises(di.TaskFileError, match=r"bad.json: entry 1 \(task 3\): no dafny_code"):
        di.BENCHMARK.convert(bad, fetched, all_tasks)
    with pytest.raises(di.TaskFileError, match="unknown generation file 'rq9'"):
        di.BENCHMARK.convert("rq9", fetched, all_tasks)
