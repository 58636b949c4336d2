"""Dafny intent against recorded real Dafny 2.3 runs (tests/recorded/dafny/dafny2/, recorded
by ``python tests/test_dafny_container.py --record``; meta.json names the image):

- the jobs built today are byte-identical to the recorded ones (the same check files, the
  same mutants for the same seed, the same options), so those recordings still describe
  what the kit runs;
- ``verikit reproduce dafny-intent``'s judgement (:meth:`DafnyIntent.reproduce`) on the
  real result of task 2: the paper's finding on its outputs [4], [5] and [6] holds.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from harness.benchmarks import dafny_intent as di
from harness.model import Candidate, ProcResult
from harness.verifiers.dafny import Dafny

REC = Path(__file__).parent / "recorded" / "dafny" / "dafny2"
#: The options the verifier gives (the rest are the benchmark's).
VERIFIER_KEYS = ("dialect", "dafny_version", "time_limit_s", "rlimit", "strategy", "verifier_module", "print_program")
pytestmark = pytest.mark.recorded


@pytest.fixture(scope="module")
def tasks(dafny_intent_fetched):
    return {t.task_id: t for t in di.load_tasks(dafny_intent_fetched)}


def _recorded(name: str):
    d = REC / name
    opts = json.loads((d / "options.json").read_text())
    inputs = {p.name.replace("__", "/"): p.read_text() for p in (d / "inputs").iterdir()}
    return d, opts, inputs


def _job(tasks, task_id: str, text: str, opts: dict):
    task = tasks[task_id]
    cand = Candidate(task_id, "gpt-4", 0, text, f"bundled:{task.path}")
    return di.build_job(task, cand, "spec", {k: opts[k] for k in VERIFIER_KEYS}, {"name": "dafny-intent", "revision": "x"},
                        di.Context(opts["mutation_seed"]))


@pytest.mark.parametrize("name, task_id, text", [
    ("task2-batched", "2", None), ("task2-rlimit", "2", None),
    ("task17-fallback", "17", "ensures perimeter == 4 * sidee"),
])
def test_jobs_are_byte_identical_to_the_recorded_runs(tasks, name, task_id, text):
    _, opts, inputs = _recorded(name)
    job = _job(tasks, task_id, text or di.bundled_spec(tasks[task_id]).text, opts)
    assert job.files == inputs
    # with the kit's reading of the candidate (compared with Dafny's printed program)
    assert set(job.options["expect"]) == {"helpers", "clauses", "methods"}
    assert job.options == opts


def test_reproduction_of_the_task2_finding_from_the_recorded_run(tasks):
    d, opts, _ = _recorded("task2-batched")
    meta = json.loads((d / "meta.json").read_text())
    files = {p.name[:-3].replace("__", "/"): gzip.decompress(p.read_bytes()) for p in (d / "files").glob("*.gz")}
    proc = ProcResult(argv=meta["argv"], returncode=meta["exit_code"], stdout=(d / "stdout.txt").read_text(),
                      files=files)
    job = _job(tasks, "2", di.bundled_spec(tasks["2"]).text, opts)
    result = Dafny().parse(proc, job.options)
    verdict, reason = di.judge(job, result)
    assert verdict == "verified" and reason.startswith("correctness 3/3, completeness ")
    record = {"task_id": "2", "candidate": job.candidate, "verdict": verdict, "reason": reason,
              "verifier": {"options": job.options, "extra": result.extra}, "goal_results": result.goal_results}
    sections = di.report_sections([record], list(tasks.values()), ["spec"], seed=opts["mutation_seed"])
    rep = di.BENCHMARK.reproduce(None, {"report": {"sections": sections}, "records": [record],
                                        "tasks": list(tasks.values())})
    figs = {f["name"]: f for f in rep.figures}
    task2 = figs["task2.completeness"]
    assert task2["status"] == "reproduced"
    assert task2["reproduced"]["probes"] == {"[4]": True, "[5]": True, "[6]": False}
    assert task2["reproduced"]["correctness"] == 1 and task2["reproduced"]["completeness"] < 1
    # the other tasks' findings are not in this one-record run
    assert {n: f["status"] for n, f in figs.items() if n.startswith("task") and n != "task2.completeness"} == {
        n: "not_reproducible" for n in figs if n.startswith("task") and n != "task2.completeness"}
    assert any(n.startswith(f"mutation seed {opts['mutation_seed']}; Dafny 2.3") for n in rep.notes)
    assert rep.sections["published"]["source"]["paper"].startswith("S. K. Lahiri, Evaluating LLM-driven")
    with pytest.raises(ValueError, match="needs the run"):
        di.BENCHMARK.reproduce(None, None)
