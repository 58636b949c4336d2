"""``verikit reproduce BENCH --generate``: a model's published figures vs a re-run on samples
it generates now, compared statistically (a percentile bootstrap confidence interval over
tasks, never equality), and report.json's ``generation`` section.

The bootstrap and the inside-the-CI rule are checked on data whose intervals follow by
hand; the report schema on statistical figures with and without a CI; the published
per-model figures against the papers' tables; and end to end against the OpenAI-compatible
stand-in server (tests/openai_standin.py) with the real Frama-C (CASP). Model-Bench's end to
end, with the real TLC under Podman, is in tests/test_modelbench_tlc.py: it shares that
module's TLC runs of the canaries.
"""

from __future__ import annotations

import copy
import hashlib
import json
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from rich.console import Console

from harness import metrics, registry
from harness.cli import main
from harness.metrics import (BASIS_STATISTICAL, bootstrap_ci, bootstrap_ratio_ci, fixes_per_task, published_inside,
                             ratio)
from harness.plugin import Benchmark, Data, Jobs, Reproducing
from harness.report import check_run_dir
from harness.results import ValidationError, validate
from harness.runner import RunError, check_published_model
from harness.runner.generated import NO_FIGURE, statistical_reproduction

sys.path.insert(0, str(Path(__file__).resolve().parent))
from openai_standin import OpenAIStandIn  # noqa: E402


# ---------------------------------------------------------------- the bootstrap, by hand


def test_constant_scores_give_a_point_interval():
    # every resample of four tasks that all score 0.5 has mean 0.5: the interval is [0.5, 0.5]
    assert bootstrap_ratio_ci([(0.5, 1)] * 4, seed=7) == (0.5, 0.5)
    # printed with 2 decimals, 50.00 is inside [50, 50]; 50.01 is not; 50.004 prints as 50.00: inside
    assert published_inside(50.0, 50.0, 50.0)
    assert not published_inside(50.01, 50.0, 50.0)
    assert published_inside(50.004, 50.0, 50.0)
    assert not published_inside(49.99, 50.0, 50.0)
    # a figure printed without decimals (a count of 10): 30 stands for 29.5 .. 30.5
    assert published_inside(30.0, 30.4, 40.0, decimals=0) and not published_inside(30.0, 30.6, 40.0, decimals=0)
    # a nan bound (no resample had a value) contains nothing
    assert not published_inside(0.0, float("nan"), float("nan"))


def test_two_tasks_one_passed():
    # two tasks, pass and fail: a resample is {pass, pass} (mean 1), {fail, fail} (0) with
    # probability 1/4 each, mixed (0.5) with 1/2; 1/4 is far above the 2.5 % tails, so the
    # 95 % interval is [0, 1] for any seed
    for seed in (0, 1, 2):
        assert bootstrap_ratio_ci([(1, 1), (0, 1)], seed=seed) == (0.0, 1.0)
    assert ratio([(1, 1), (0, 1)]) == 0.5


def test_ratio_over_samples_resamples_tasks():
    # fixes: task A has two samples with 0 fixes, task B one sample with 4 fixes; the mean
    # over samples is 4/3; resamples: AA -> 0, AB or BA -> 4/3, BB -> 4 (1/4, 1/2, 1/4)
    pairs = list(fixes_per_task({"A": [0, 0], "B": [4]}).values())
    assert pairs == [(0.0, 2.0), (4.0, 1.0)]
    assert ratio(pairs) == pytest.approx(4 / 3)
    assert bootstrap_ratio_ci(pairs, seed=3) == (0.0, 4.0)
    assert published_inside(1.33, 0.0, 4.0) and not published_inside(4.01, 0.0, 4.0)
    # a task without any fix count adds no pair; none at all: no value
    assert fixes_per_task({"A": [], "B": [1]}) == {"B": (1.0, 1.0)}
    assert ratio([]) is None and ratio([(0.0, 0.0)]) is None


def test_zero_denominators_and_empty():
    # a resample of only task A (no runnable sample: 0/0) has no value and is left out;
    # the others are 1.0 (B's one sample): the interval is [1, 1]
    assert bootstrap_ratio_ci([(0.0, 0.0), (1.0, 1.0)], seed=0) == (1.0, 1.0)
    lo, hi = bootstrap_ratio_ci([], seed=0)
    assert lo != lo and hi != hi  # nan
    lo, hi = bootstrap_ratio_ci([(0.0, 0.0)], seed=0)
    assert lo != lo and hi != hi


def test_mean_over_tasks_is_the_kits_bootstrap():
    # with every denominator 1 the ratio interval is bootstrap_ci's, to the last bit (same
    # draws, same percentile indices), so report.json's ci95 and the figures agree
    values = [1, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0.25, 0.75]
    for seed in (0, 11):
        assert bootstrap_ratio_ci([(v, 1) for v in values], seed=seed) == bootstrap_ci(values, seed=seed)
    assert metrics.BOOTSTRAP_ITERS == 2000 and metrics.CI_LEVEL == 0.95


# ---------------------------------------------------------------- figures of a re-run


@dataclass
class _Cand:
    task_id: str
    model: str
    sample: int
    meta: dict | None = None


@dataclass
class _Preds:
    candidates: list = field(default_factory=list)


def _figures(mode, model=None):
    figs = [
        {"name": "t.p1", "table": "T", "row": "M-7B", "column": "P@1", "model": "M-7B", "metric":
         {"kind": "pass_at_k", "k": 1}, "value": 50.0, "unit": "percent", "samples": 2},
        {"name": "t.p2", "table": "T", "row": "M-7B", "column": "P@2", "model": "M-7B", "metric":
         {"kind": "pass_at_k", "k": 2}, "value": 99.5, "unit": "percent", "samples": 2},
        {"name": "t.p4", "table": "T", "row": "M-7B", "column": "P@4", "model": "M-7B", "metric":
         {"kind": "pass_at_k", "k": 4}, "value": 60.0, "unit": "percent", "samples": 4},
        {"name": "t.fix", "table": "T", "row": "M-7B", "column": "fixes", "model": "M-7B", "metric":
         {"kind": "fixes"}, "value": 1.0, "unit": "fix rounds"},
        {"name": "t.own", "table": "T", "row": "M-7B", "column": "own", "model": "M-7B", "metric":
         {"kind": "own"}, "value": 12.5, "unit": "percent"},
        {"name": "t.other", "table": "T", "row": "Other", "column": "P@1", "model": "Other", "metric":
         {"kind": "pass_at_k", "k": 1}, "value": 1.0, "unit": "percent"},
    ]
    return [f for f in figs if model is None or f["model"] == model]


def _own_metric(metric, records, mode, model):
    if metric["kind"] != "own":
        raise ValueError("no such metric")
    return {"a": (0.125, 1), "b": (0.125, 1)}


def _nothing_runs(*args):
    raise NotImplementedError


class _Bench(Benchmark):
    """A benchmark with per-model figures only (nothing runs)."""

    name = "toy"
    modes = ("m",)
    data = Data(load_tasks=lambda fetched: [], gold_candidates=lambda tasks, mode: [])
    jobs = Jobs(verifier_for=lambda mode: "none", build_job=_nothing_runs, judge=_nothing_runs)
    reproducing = Reproducing(published_model_figures=_figures, model_metric_values=_own_metric)


def _records(verdicts: dict[str, list[str]]) -> list[dict]:
    out = []
    for task, vs in verdicts.items():
        for i, v in enumerate(vs):
            out.append({"mode": "m", "task_id": task, "verdict": v,
                        "candidate": {"model": "served-7b", "sample": i, "origin": f"predictions:p.jsonl:{i}"}})
    out.append({"mode": "m", "task_id": "a", "verdict": "verified",  # a canary: never the model's
                "candidate": {"model": "canary:x", "sample": 0, "origin": "canary"}})
    return out


def test_statistical_figures_inside_and_outside():
    bench = _Bench()
    # tasks a (both samples verified) and b (neither): pass@1 = pass@2 = 50 %, CI [0, 100]
    records = _records({"a": ["verified", "verified"], "b": ["failed", "invalid"]})
    preds = _Preds([_Cand("a", "served-7b", 0, {"fixes": 0}), _Cand("a", "served-7b", 1, {"fixes": 1}),
                    _Cand("b", "served-7b", 0, {"fixes": 2}), _Cand("b", "served-7b", 1, {"fixes": 2})])
    figures = check_published_model(bench, "m", "M-7B")
    rep = statistical_reproduction(bench, "m", "M-7B", figures, records, preds, seed=5, dataset="d")
    by = {f["name"]: f for f in rep.figures}
    assert all(f["basis"] == BASIS_STATISTICAL and f["ci_level"] == 0.95 for f in rep.figures)
    assert by["t.p1"]["reproduced"] == 50.0 and by["t.p1"]["ci"] == [0.0, 100.0]
    assert by["t.p1"]["status"] == "reproduced"
    # 99.5 lies inside [0, 100] too: two tasks say little
    assert by["t.p2"]["status"] == "reproduced"
    # pass@4 from 2 samples per task: not computable, said so, no CI
    assert by["t.p4"]["status"] == "not_reproducible" and by["t.p4"]["ci"] is None
    assert "needs at least 4 samples per task" in by["t.p4"]["notes"][-1]
    # fixes: a (0 + 1) / 2, b (2 + 2) / 2 -> 5/4 over 4 samples; resamples aa 0.5, bb 2, ab 1.25
    assert by["t.fix"]["reproduced"] == 1.25 and by["t.fix"]["ci"] == [0.5, 2.0]
    assert by["t.fix"]["status"] == "reproduced"
    # the benchmark's own metric: every task 0.125 -> 12.5 % exactly, CI [12.5, 12.5]
    assert by["t.own"]["reproduced"] == 12.5 and by["t.own"]["ci"] == [12.5, 12.5]
    assert by["t.own"]["status"] == "reproduced"
    assert "t.other" not in by  # another model's figure
    assert rep.summary() == {"reproduced": 4, "differs": 0, "not_reproducible": 1}
    # all verified: CI [100, 100], the published 50 % lies outside
    rep = statistical_reproduction(bench, "m", "M-7B", figures, _records({"a": ["verified"] * 2, "b": ["verified"] * 2}),
                                   preds, seed=5, dataset="d")
    by = {f["name"]: f for f in rep.figures}
    assert by["t.p1"]["ci"] == [100.0, 100.0] and by["t.p1"]["status"] == "differs"
    # 99.5 printed with 2 decimals stands for 99.495 .. 99.505: outside [100, 100]
    assert by["t.p2"]["ci"] == [100.0, 100.0] and by["t.p2"]["status"] == "differs"
    assert rep.summary() == {"reproduced": 2, "differs": 2, "not_reproducible": 1}


def test_a_subset_is_said_and_chosen_tasks_are_not_compared():
    bench = _Bench()
    records = _records({"a": ["verified", "verified"], "b": ["failed", "invalid"]})
    preds = _Preds([_Cand(t, "served-7b", i, {"fixes": 0}) for t in "ab" for i in (0, 1)])
    figures = check_published_model(bench, "m", "M-7B")
    # 2 of the dataset's 10 tasks, chosen with --task: listed with their CI, never compared
    rep = statistical_reproduction(bench, "m", "M-7B", figures, records, preds, seed=5, dataset="d", population=10,
                                   selection="chosen")
    by = {f["name"]: f for f in rep.figures}
    assert by["t.p1"]["status"] == "not_reproducible" and by["t.p1"]["ci"] == [0.0, 100.0]
    assert "not comparable: this run covers 2 of the 10 tasks of d, chosen with --task" in by["t.p1"]["notes"][-1]
    assert rep.notes[0].startswith("a subset: not comparable") and rep.summary()["reproduced"] == 0
    # drawn at random with --sample: compared through the CI over the tasks drawn, the subset said
    rep = statistical_reproduction(bench, "m", "M-7B", figures, records, preds, seed=5, dataset="d", population=10,
                                   selection="sample")
    by = {f["name"]: f for f in rep.figures}
    assert by["t.p1"]["status"] == "reproduced" and "covers 2 of the 10 tasks of d, drawn at random" in rep.notes[0]
    # the whole dataset: no subset note
    rep = statistical_reproduction(bench, "m", "M-7B", figures, records, preds, seed=5, dataset="d", population=2)
    assert not any("subset" in n for n in rep.notes)


def test_unknown_published_model_lists_the_papers_models():
    with pytest.raises(RunError, match=r"no model called 'GPT-9'.*its models: M-7B, Other"):
        check_published_model(_Bench(), "m", "GPT-9")
    # a mode without per-model figures: nothing to check, the comparison says so
    assert check_published_model(registry.benchmark("casp"), "code-from-spec", "anything") == []


def test_no_published_figure_lists_the_kits_values():
    bench = _Bench()
    records = _records({"a": ["verified", "failed", "failed"], "b": ["failed"] * 3})
    rep = statistical_reproduction(bench, "m", "my-model", [], records, _Preds(), seed=0, dataset="d")
    assert [f["column"] for f in rep.figures] == ["pass@1 (m)", "pass@2 (m)", "pass@3 (m)"]
    assert all(f["status"] == "not_reproducible" and f["published"] is None and NO_FIGURE in f["notes"]
               and f["basis"] == BASIS_STATISTICAL and len(f["ci"]) == 2 for f in rep.figures)
    assert rep.figures[0]["reproduced"] == pytest.approx(100 / 6, abs=1e-4)


# ---------------------------------------------------------------- schema


def _report_with(figure: dict) -> dict:
    base = json.loads((Path(__file__).resolve().parents[1] / "results/reproduced/ntp4vc/reproduce/report.json")
                      .read_text())
    rep = copy.deepcopy(base)
    rep["reproduction"]["figures"] = [figure]
    rep["reproduction"]["summary"] = {"reproduced": 0, "differs": 0, "not_reproducible": 0,
                                      **{figure["status"]: 1}}
    return rep


STAT = {"name": "x", "table": "Table 5", "row": "M", "column": "Rocq P@1", "published": 0.5, "reproduced": 1.2,
        "status": "reproduced", "basis": BASIS_STATISTICAL, "ci": [0.0, 2.5], "ci_level": 0.95}


def test_schema_accepts_statistical_figures_and_rejects_one_without_ci():
    validate("report", _report_with(STAT), "r")
    validate("report", _report_with({**STAT, "basis": "exact", "ci": None, "ci_level": 0.95}), "r")
    validate("report", _report_with({k: v for k, v in STAT.items() if k not in ("basis", "ci", "ci_level")}), "r")
    # not computable: no value, no interval, not_reproducible
    validate("report", _report_with({**STAT, "reproduced": None, "ci": None, "status": "not_reproducible"}), "r")
    for bad, message in (({k: v for k, v in STAT.items() if k != "ci"}, "'ci' is a required property"),
                         ({k: v for k, v in STAT.items() if k != "ci_level"}, "'ci_level' is a required property"),
                         ({**STAT, "ci": None}, "None is not of type 'array'"),
                         ({**STAT, "ci": [1.0]}, "ci"),
                         ({**STAT, "basis": "approximate"}, "basis"),
                         ({**STAT, "ci_level": 95}, "ci_level")):
        with pytest.raises(ValidationError, match=message):
            validate("report", _report_with(bad), "r")


# ---------------------------------------------------------------- published data


def test_ntp4vc_table5_rows():
    b = registry.benchmark("ntp4vc")
    rocq = {(f["model"], f["metric"]["k"]): f["value"] for f in b.published_model_figures("rocq")}
    assert rocq[("DeepSeek-V3.1", 8)] == 3.17 and rocq[("Qwen3-235B-A22B", 4)] == 2.17
    assert rocq[("K2-think", 1)] == 0.67 and rocq[("GPT-o4-mini-high", 1)] == 0.0
    assert sorted({m for m, _ in rocq}) == ["DeepSeek-V3.1", "GPT-o4-mini-high", "K2-think", "Qwen3-235B-A22B",
                                            "Qwen3-32B"]
    assert {f["model"] for f in b.published_model_figures("lean")} >= {"Goedel-Prover-V2-32B",
                                                                        "DeepSeek-Prover-V2-671B"}
    assert [f["value"] for f in b.published_model_figures("isabelle", "Minilang")] == [2.08, 7.29, 11.46]
    assert b.published_model_figures("why3") == []
    assert all(f["samples"] == (1 if f["model"] == "GPT-o4-mini-high" else 8)
               for lang in ("rocq", "lean", "isabelle") for f in b.published_model_figures(lang))


def test_modelbench_table2_rows():
    b = registry.benchmark("modelbench")
    figs = {f["column"]: f for f in b.published_model_figures("original-zeroshot", "DeepSeek-V2.5")}
    assert figs["Runnable@1 (%)"]["value"] == 12.75 and figs["Avg Fixes"]["value"] == 2.68
    assert figs["Avg Fixes"]["metric"] == {"kind": "fixes"} and figs["Avg Similarity (%)"]["value"] == 3.08
    assert figs["Runnable@3 (%)"]["metric"] == {"kind": "pass_at_k", "k": 3}
    assert all(f["model"] != "Average" for m in b.modes for f in b.published_model_figures(m))
    assert len(b.published_model_figures("transformed-fewshot")) == 8 * 5


def test_casp_study_figures_are_the_studys_verdicts():
    from harness.benchmarks.casp.comparison import study_results
    from harness.runner import open_dataset

    b = registry.benchmark("casp")
    study = study_results(open_dataset(b, "casp-sample10"))
    for f in b.published_model_figures("spec-from-code"):
        mine = [v for (task, model), v in study.items() if model.endswith("/" + f["model"])]
        assert len(mine) == 10
        assert f["value"] == 100 * sum(v["verdict"] == "verified" for v in mine) / 10


def test_modelbench_similarity_per_task():
    from harness.benchmarks.modelbench.published_models import similarity_per_task

    def rec(task, model, verdict, states, sample=0):
        return {"mode": "original-fewshot", "task_id": task, "verdict": verdict,
                "candidate": {"model": model, "sample": sample, "origin": "x"},
                "verifier": {"extra": {"states": states, "outcome": "success" if verdict == "verified" else "x"}}}

    gold = [{"a": 1, "b": 2}, {"a": 1, "b": 3}]
    records = [rec("T1", "gold", "verified", gold), rec("T2", "gold", "verified", gold),
               rec("T1", "m", "verified", [{"x": 1, "y": 2}]),  # matches the first oracle state: 1/2
               rec("T1", "m", "verified", gold, 1),  # both: 1
               rec("T2", "m", "failed", []), rec("T3", "m", "verified", gold)]  # T3: no oracle
    assert similarity_per_task(records, "original-fewshot", "m") == {"T1": (1.5, 2.0), "T2": (0.0, 0.0)}


def test_default_mode_and_samples_follow_the_paper():
    from harness.runner import default_samples, generate_mode

    b = {n: registry.benchmark(n) for n in ("ntp4vc", "modelbench", "casp")}
    assert [generate_mode(b[n], ()) for n in b] == ["rocq", "original-fewshot", "spec-from-code"]
    assert generate_mode(b["ntp4vc"], ["lean"]) == "lean"
    with pytest.raises(RunError, match="casp has no generation protocol for --mode gold"):
        generate_mode(b["casp"], ["gold"])
    rocq = b["ntp4vc"].protocol("rocq").samples
    assert rocq == 8  # Section 5: n = 8
    assert default_samples(check_published_model(b["ntp4vc"], "rocq", "DeepSeek-V3.1"), rocq) == 8
    assert default_samples(check_published_model(b["ntp4vc"], "rocq", "GPT-o4-mini-high"), rocq) == 1
    assert default_samples(check_published_model(b["modelbench"], "original-zeroshot", "Qwen3-8B"), 3) == 3
    assert default_samples(check_published_model(b["casp"], "spec-from-code", "gpt-5.2"), 1) == 1
    assert default_samples([], 5) == 5  # no published figure: the protocol's


# ---------------------------------------------------------------- the command line, before any request


def test_unknown_published_model_exits_2_before_any_request(tmp_path, capsys):
    # nothing listens on port 9: a request would fail differently; the name is checked first
    code = main(["reproduce", "modelbench", "--generate", "--model", "my-model", "--base-url", "http://127.0.0.1:9/v1",
                 "--mode", "original-zeroshot", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2
    assert "the paper has no model called 'my-model'" in err
    assert "DeepSeek-V3, Gemma-3-12b-it, Llama-3.1-8B-Instruct, Qwen3-14B, Qwen3-32B, Qwen3-8B" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("argv, message", [
    (["reproduce", "casp", "--model", "m"], "--model: only with --generate"),
    (["reproduce", "casp", "--samples", "3", "--feedback-turns", "1"], "--samples, --feedback-turns: only with --generate"),
    (["reproduce", "casp", "--generate", "--model", "m"], "reproduce --generate needs --base-url"),
    (["reproduce", "modelbench", "--generate", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--mode", "a",
      "--mode", "b"], "reproduce --generate runs one mode"),
    (["reproduce", "ntp4vc", "--generate", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--mode", "rocq"],
     "ntp4vc takes --lang, not --mode"),
])
def test_bad_generate_options_exit_2(argv, message, tmp_path, capsys):
    assert main([*argv, "--out", str(tmp_path / "out")]) == 2
    assert message in capsys.readouterr().err


# ---------------------------------------------------------------- end to end, against the stand-in


def _fence(lang: str, text: str) -> str:
    return f"Here it is.\n```{lang}\n{text}\n```\n"


def _figures(out: Path) -> dict:
    return {f["name"]: f for f in json.loads((out / "report.json").read_text())["reproduction"]["figures"]}


@pytest.fixture(scope="module")
def casp_runs(casp_tasks, shared_cache, tmp_path_factory):
    """``reproduce casp --generate`` twice against the stand-in, with the real Frama-C on
    the host, on 01_57 and 05_125 (spec-from-code): the model answers 01_57 with its gold
    specification (the text of the canary ``gold-contract``: one verification, shared), 05_125 first with a wrong one
    (``ensures \\result.isValid``: the function returns an invalid value) and with the
    gold once the repair prompt brings Frama-C's failing goal back. Run 1: one feedback
    turn (both verified, 05_125 after one fix); run 2, into another directory: no feedback
    turn (05_125 stays failed), from the request and result caches alone. The canaries
    come from the session's shared result cache when another test ran them."""
    if shutil.which("frama-c") is None:
        pytest.skip("frama-c is not installed on this machine")
    gold = {t: casp_tasks[t].contract + "\n" + casp_tasks[t].code for t in ("01_57", "05_125")}
    wrong = gold["05_125"].replace("ensures ! \\result.isValid;", "ensures \\result.isValid;")
    assert wrong != gold["05_125"]
    def answer(code: str) -> str:  # Listing 3's JSON answer format
        return _fence("json", json.dumps({"explanation": "the contract", "assumptions": "none", "fixed_code": code}))

    answers = {"Your task is to correct ACSL specifications": answer(gold["05_125"]),  # the repair prompt
               "C function `noneBool`": answer(wrong), "C function `divmult`": answer(gold["01_57"])}
    root = tmp_path_factory.mktemp("casp-generate")
    common = ["--model", "gpt-4o-mini", "--task", "01_57", "--task", "05_125", "--sandbox", "host", "-j", "2",
              "--dataset", "casp-sample10", "--cache-dir", str(shared_cache), "--seed", "3"]
    with OpenAIStandIn(answers, models=("gpt-4o-mini",)) as srv:
        codes = [main(["reproduce", "casp", "--generate", "--base-url", srv.base_url, *common,
                       "--feedback-turns", "1", "--out", str(root / "one")])]
        sent = srv.completions
        repair = [r.body["messages"] for r in srv.answered() if len(r.body["messages"]) > 1]
        codes.append(main(["reproduce", "casp", "--generate", "--base-url", srv.base_url, *common,
                           "--feedback-turns", "0", "--out", str(root / "two")]))
        return root, codes, sent, srv.completions - sent, repair


@pytest.mark.realtool
@pytest.mark.slow
def test_casp_reproduce_generate_end_to_end(casp_runs):
    root, codes, sent, resent, repair = casp_runs
    assert sent == 3 and resent == 0  # 2 first turns + 1 repair; the second run: the request cache only
    # the repair turn: the chat so far, then the paper's repair prompt with Frama-C's real failing goal
    assert len(repair) == 1 and [m["role"] for m in repair[0]][:3] == ["user", "assistant", "user"]
    said = json.loads(repair[0][1]["content"].split("```json\n", 1)[1].split("\n```", 1)[0])
    assert "ensures \\result.isValid;" in said["fixed_code"]  # the model's wrong answer, as it was
    assert "Your task is to correct ACSL specifications" in repair[0][-1]["content"]
    assert "Frama-C WP proved 16 of 17 goals" in repair[0][-1]["content"]
    assert "[wp] [Failed] Goal typed_noneBool_ensures" in repair[0][-1]["content"]
    # run 1: pass@1 100 % over 2 tasks, the interval [100, 100]; the study's 20 % is over the 10 tasks of
    # casp-sample10, which 2 chosen tasks do not estimate: listed, not compared (exit 0), said so
    assert codes[0] == 0
    one = root / "one"
    fig = _figures(one)["study.gpt-4o-mini.spec-from-code.pass_at_1"]
    assert fig["basis"] == "re-run, statistical" and fig["ci_level"] == 0.95
    assert fig["published"] == 20.0 and fig["reproduced"] == 100.0 and fig["ci"] == [100.0, 100.0]
    assert fig["status"] == "not_reproducible" and fig["tasks"] == 2
    assert "not comparable: this run covers 2 of the 10 tasks of casp-sample10, chosen with --task" in fig["notes"][-1]
    report = json.loads((one / "report.json").read_text())
    validate("report", report, "report.json")
    gen = report["generation"]["models"]["spec-from-code"]["gpt-4o-mini"]
    assert gen["tasks"] == 2 and gen["samples_per_task"] == {"min": 1, "max": 1}
    assert gen["pass_at_k"] == {"1": {"value": 1.0, "ci": [1.0, 1.0]}}
    assert gen["fixes"]["value"] == 0.5 and gen["fixes"]["samples"] == 2  # 05_125 fixed once, 01_57 never
    run = json.loads((one / "run.json").read_text())
    link = run["generation"]
    assert link["path"] == "generation/generation.json"
    assert link["sha256"] == hashlib.sha256((one / link["path"]).read_bytes()).hexdigest()
    assert run["predictions"]["sha256"] == link["predictions_sha256"]
    assert run["predictions"]["path"] == str(one / "generation" / "predictions.jsonl")
    assert report["canaries"]["ok"]
    assert check_run_dir(one) == []
    html = (one / "report.html").read_text()
    assert "re-run, statistical" in html and "[100.0, 100.0]" in html and "Generated by a model" in html
    # run 2: 05_125 keeps its wrong answer: pass@1 50 %, the interval [0, 100]; not compared either
    assert codes[1] == 0
    fig = _figures(root / "two")["study.gpt-4o-mini.spec-from-code.pass_at_1"]
    assert fig["reproduced"] == 50.0 and fig["ci"] == [0.0, 100.0] and fig["status"] == "not_reproducible"
    assert "a subset: not comparable" in json.loads((root / "two" / "report.json").read_text())["reproduction"]["notes"][0]
    gen = json.loads((root / "two" / "report.json").read_text())["generation"]["models"]["spec-from-code"]
    assert gen["gpt-4o-mini"]["fixes"]["value"] == 0.0
    assert check_run_dir(root / "two") == []


def test_casp_console_says_statistical(casp_runs, capsys, monkeypatch):
    root = casp_runs[0]
    monkeypatch.setenv("COLUMNS", "250")
    from harness.cli.run import _print_figures
    from harness.plugin import Reproduction

    rep = json.loads((root / "one" / "report.json").read_text())["reproduction"]
    _print_figures(Reproduction(figures=rep["figures"], notes=rep["notes"]),
                   type("A", (), {"benchmark": "casp", "out": root / "one"})(), Console(stderr=True, width=200))
    out = capsys.readouterr()
    text = out.out + out.err
    assert "re-run, statistical (95% CI)" in text and "100.00 % [100.00, 100.00]" in text
    assert "not reproducible" in text and "statistical, never exact" in text
    assert "note: a subset: not comparable: this run covers 2 of the 10 tasks of casp-sample10" in text
