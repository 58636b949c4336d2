"""Benchmark: batched Dafny checks vs one Dafny process per check, and the kit vs the
reference script's approach.

Measures, in one run on this machine, with the same Dafny (the dafny image's 2.3.0), the
same tasks (the GPT-4/authors' specifications of ``--tasks``, default 5 tasks), the same
seed and the same check methods:

- ``batched``: the kit's strategy, one Dafny process per task verifying every check of
  the task (correctness, smoke, mutants) as methods of one file, one warm container
  worker, jobs one after another (``-j 1``);
- ``separate``: the same jobs with strategy ``separate``: one Dafny process per check,
  inside the same job (one container exec per task);
- ``reference``: the approach of microsoft/nl-2-postcond ``eval_dafny_spec.py``: one
  Dafny process per check started on its own (here: one container exec per check, as
  the script calls ``subprocess.run`` per check), strictly sequential;
- ``kit -j2``: the batched jobs with 2 parallel workers (the kit's ``-j 2``).

Prints the wall times and the ratios ``separate / batched``, ``reference / batched``
and ``reference / kit -j2`` (one run, so the ratios are comparable even on a loaded
machine; absolute times are not). Also checks that the three strategies give the same
per-method verdicts. Needs the Docker-API engine (``DOCKER_HOST``) and the dafny image.

Usage: ``python scripts/bench_dafny.py [--tasks 2,17,...] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from harness import datasets, toolchains
from harness.benchmarks import dafny_intent as di
from harness.executor import Executor
from harness.model import Limits
from harness.registry import sandbox as get_sandbox
from harness.results import RecordLog
from harness.verifiers.dafny import Dafny, parse_file_output

DEFAULT_TASKS = "2,17,234,445,572"


def jobs_for(fetched, tasks, probed, verifier, strategy, seed):
    ds = {"name": "dafny-intent", "revision": fetched.dataset.source.revision}
    opts = verifier.options(probed, strategy=strategy)
    by_id = {t.task_id: t for t in di.load_tasks(fetched)}
    cands = {c.task_id: c for c in di.bundled_candidates(fetched, "spec") + di.gold_candidates(list(by_id.values()), "spec")}
    return [di.build_job(by_id[t], cands[t], "spec", opts, ds, di.Context(seed)) for t in tasks]


def run_kit(jobs, verifier, sandbox, probed, parallel) -> tuple[float, dict]:
    with tempfile.TemporaryDirectory() as d:
        ex = Executor(verifier, sandbox, probed, limits=Limits(wall_s=1800), parallel=parallel)
        t0 = time.perf_counter()
        recs = ex.run(jobs, RecordLog(Path(d) / "records.jsonl"), di.judge)
        wall = time.perf_counter() - t0
    return wall, {(r["task_id"], g["name"]): g["status"] for r in recs for g in r["goal_results"]}


def run_reference(jobs, verifier, sandbox) -> tuple[float, dict]:
    """One sandboxed Dafny process per check file, sequential (the reference's loop)."""
    statuses = {}
    t0 = time.perf_counter()
    for job in jobs:
        for path in job.options["separate"]:
            argv = verifier.file_argv(job.options, path)
            proc = sandbox.run(argv, files={path: job.files[path]}, collect=[path + ".xml"], limits=Limits(wall_s=600))
            per, _ = parse_file_output(proc.stdout + proc.stderr, job.options["units"][path], job.options["dialect"],
                                       proc.files.get(path + ".xml"), path)
            for name, r in per.items():
                statuses[(job.task_id, name)] = r["status"]
    return time.perf_counter() - t0, statuses


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", default=DEFAULT_TASKS, help=f"comma-separated task ids (default {DEFAULT_TASKS})")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path, help="also write the numbers to this file")
    args = ap.parse_args()
    tasks = args.tasks.split(",")
    fetched = datasets.fetch("dafny-intent")
    verifier = Dafny()
    sandbox = get_sandbox("container", toolchain="dafny", slots=2)
    try:
        probed = toolchains.probe("dafny", sandbox, flavor="debian")
        batched = jobs_for(fetched, tasks, probed, verifier, "batched", args.seed)
        separate = jobs_for(fetched, tasks, probed, verifier, "separate", args.seed)
        checks = sum(len(j.options["separate"]) for j in batched)
        t_b, s_b = run_kit(batched, verifier, sandbox, probed, 1)
        t_s, s_s = run_kit(separate, verifier, sandbox, probed, 1)
        t_r, s_r = run_reference(batched, verifier, sandbox)
        t_2, s_2 = run_kit(batched, verifier, sandbox, probed, 2)
    finally:
        sandbox.close()
    same = s_b == s_s == s_r == s_2
    res = {"benchmark": f"dafny-intent, tasks {','.join(tasks)}: {checks} check methods", "cpus": os.cpu_count(),
           "dafny": probed.versions.get("dafny"), "seed": args.seed,
           "batched_s": round(t_b, 2), "separate_s": round(t_s, 2), "reference_s": round(t_r, 2), "kit_j2_s": round(t_2, 2),
           "dafny_processes": {"batched": len(batched), "separate": checks, "reference": checks},
           "ratio_separate_over_batched": round(t_s / t_b, 3), "ratio_reference_over_batched": round(t_r / t_b, 3),
           "ratio_reference_over_kit_j2": round(t_r / t_2, 3), "same_verdicts": same}
    for k, v in res.items():
        print(f"{k}: {v}")
    if args.json:
        args.json.write_text(json.dumps(res, indent=2) + "\n")
    if not same:
        print("error: the strategies disagree on some verdicts", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
