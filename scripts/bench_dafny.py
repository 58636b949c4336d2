"""Benchmark: batched Dafny checks vs one Dafny process per check, and the kit vs the
reference script's approach.

Measures, in one run on this machine, with the same Dafny (the dafny image's 2.3.0), the
same tasks (``--tasks``, default 5 tasks; ``--quick``: task 776 only, 7 check methods),
the same seed and the same check methods. The jobs are the kit's own (``harness.runner.plan_run`` +
``build_jobs``: each task's specification, the authors' or GPT-4's, as ``verikit run
dafny-intent`` makes its job; the canaries left out), with the verifier's option
``strategy`` set through its ``options``:

- ``batched``: the kit's strategy, one Dafny process per task verifying every check of
  the task (correctness, smoke, mutants) as methods of one file, one warm container
  worker, jobs one after another (``-j 1``);
- ``separate``: the same jobs with strategy ``separate``: one Dafny process per check,
  inside the same job (one container exec per task);
- ``reference``: the approach of microsoft/nl-2-postcond ``eval_dafny_spec.py``: one
  Dafny process per check started on its own (here: one container exec per check, as
  the script calls ``subprocess.run`` per check), strictly sequential;
- ``kit -j2``: the batched jobs with 2 parallel workers (the kit's ``-j 2``).

Prints the wall times, the target ``separate / batched >= 5`` (PASS or MISS; one run, so
the ratios are comparable even on a loaded machine, absolute times are not) and the
ratios ``reference / batched`` and ``reference / kit -j2``. The four must give the same
per-method verdicts, and no job may end in ``infra_error`` (else exit 1). Needs the
Docker-API engine (``DOCKER_HOST``) and the dafny image; ``--quick`` prints ``skipped: no
container engine ...`` and exits 0 when no engine answers.

Usage: ``python scripts/bench_dafny.py [--quick] [--tasks 2,17,...] [--json FILE] [--strict]``.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from benchlib import BenchFailure, engine_or_skip, kit_jobs, kit_plan, main

from harness.executor import Executor
from harness.model import Limits
from harness.results import RecordLog
from harness.runner import open_sandbox, probe_toolchain
from harness.verifiers.dafny import parse_file_output

DEFAULT_TASKS = "2,17,234,445,572"
QUICK_TASKS = "776"
LIMITS = Limits(wall_s=1800)


def jobs_for(plan, probed, strategy: str) -> tuple[list, object]:
    """The kit's jobs of ``plan`` (canaries aside) with the verifier's option ``strategy``
    (scripts/benchlib.py ``kit_jobs``), and that verifier."""
    jobs, verifier = kit_jobs(plan, probed, overrides={"strategy": strategy})
    if any(j.options.get("strategy") != strategy for j in jobs):
        raise BenchFailure(f"strategy {strategy}: a job's options say otherwise")
    return jobs, verifier


def run_kit(jobs, verifier, judge, sandbox, probed, parallel) -> tuple[float, dict]:
    with tempfile.TemporaryDirectory() as d:
        ex = Executor(verifier, sandbox, probed, limits=LIMITS, parallel=parallel)
        log = RecordLog(Path(d) / "records.jsonl")
        t0 = time.perf_counter()
        try:
            recs = ex.run(jobs, log, judge)
        finally:
            log.close()
        wall = time.perf_counter() - t0
    bad = [f"{r['task_id']}: {r['verdict']} ({r['reason'][:200]})" for r in recs if r["verdict"] == "infra_error"]
    if bad or len(recs) != len(jobs):
        raise BenchFailure(f"{len(recs)} records of {len(jobs)} jobs; {'; '.join(bad)}")
    return wall, {(r["task_id"], g["name"]): g["status"] for r in recs for g in r["goal_results"]}


def run_reference(jobs, verifier, sandbox) -> tuple[float, dict]:
    """One sandboxed Dafny process per check file, sequential (the reference's loop)."""
    statuses = {}
    t0 = time.perf_counter()
    for job in jobs:
        for path in job.options["separate"]:
            argv = verifier.file_argv(job.options, path)
            proc = sandbox.run(argv, files={path: job.files[path]}, collect=[path + ".xml"], limits=Limits(wall_s=600))
            if proc.start_error or proc.timed_out:
                raise BenchFailure(f"reference: {path} of task {job.task_id} did not run to its end "
                                   f"({proc.start_error or 'timed out'})")
            per, _ = parse_file_output(proc.stdout + proc.stderr, job.options["units"][path], job.options["dialect"],
                                       proc.files.get(path + ".xml"), path)
            for name, r in per.items():
                statuses[(job.task_id, name)] = r["status"]
    return time.perf_counter() - t0, statuses


def body(bench) -> dict:
    keys = ("dafny_batched_speedup",)
    if not engine_or_skip(bench, keys):
        return {"skipped": True}
    args = bench.args
    tasks = (QUICK_TASKS if args.quick else args.tasks).split(",")
    plan = kit_plan("dafny-intent", ["spec"], "container", LIMITS, tasks, parallel=2, seed=args.seed)
    with open_sandbox(plan, print) as (sandbox, _):
        probed, _ = probe_toolchain(plan, sandbox)
        batched, v_batched = jobs_for(plan, probed, "batched")
        separate, v_separate = jobs_for(plan, probed, "separate")
        checks = sum(len(j.options["separate"]) for j in batched)
        judge = plan.bench.judge
        bench.step(f"batched: {len(batched)} jobs, {checks} check methods, -j 1")
        t_b, s_b = run_kit(batched, v_batched, judge, sandbox, probed, 1)
        bench.step("separate: one Dafny process per check, -j 1")
        t_s, s_s = run_kit(separate, v_separate, judge, sandbox, probed, 1)
        bench.step("reference: one container exec per check, sequential")
        t_r, s_r = run_reference(batched, v_batched, sandbox)
        bench.step("batched, -j 2")
        t_2, s_2 = run_kit(batched, v_batched, judge, sandbox, probed, 2)
    if not (s_b == s_s == s_r == s_2) or not s_b:
        diff = sorted(k for k in set(s_b) | set(s_s) | set(s_r) | set(s_2)
                      if len({s.get(k) for s in (s_b, s_s, s_r, s_2)}) > 1)
        raise BenchFailure(f"the strategies disagree on some verdicts (or gave none): {diff[:5]}")
    res = {"benchmark": f"dafny-intent, tasks {','.join(tasks)}: {checks} check methods", "cpus": os.cpu_count(),
           "dafny": probed.versions.get("dafny"), "seed": args.seed, "quick": args.quick,
           "batched_s": round(t_b, 2), "separate_s": round(t_s, 2), "reference_s": round(t_r, 2), "kit_j2_s": round(t_2, 2),
           "dafny_processes": {"batched": len(batched), "separate": checks, "reference": checks},
           "ratio_separate_over_batched": round(t_s / t_b, 3), "ratio_reference_over_batched": round(t_r / t_b, 3),
           "ratio_reference_over_kit_j2": round(t_r / t_2, 3), "same_verdicts": True}
    print(f"{checks} check methods of {len(batched)} tasks ({','.join(tasks)}), same per-method verdicts in all four:")
    print(f"  batched (-j 1):               {t_b:7.2f} s  ({len(batched)} Dafny processes)")
    print(f"  one process per check:        {t_s:7.2f} s  ({checks} Dafny processes)")
    print(f"  reference script's approach:  {t_r:7.2f} s  (x{t_r / t_b:.1f} of batched)")
    print(f"  batched, -j 2:                {t_2:7.2f} s  (reference / kit -j 2 = x{t_r / t_2:.1f})")
    bench.ratio("dafny_batched_speedup", t_s / t_b, f"{t_s:.2f} s vs {t_b:.2f} s, {checks} checks")
    return res


def _args(ap) -> None:
    ap.add_argument("--tasks", default=DEFAULT_TASKS, help=f"comma-separated task ids (default {DEFAULT_TASKS})")
    ap.add_argument("--seed", type=int, default=0)


if __name__ == "__main__":
    main("bench_dafny", __doc__, body, _args)
