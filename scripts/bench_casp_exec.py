"""Benchmark: per-job cost of CASP's execution cross-check (issue 26).

Runs the same CASP jobs twice through the kit's executor on the host sandbox, one job at a
time, without the cache: once with the execution cross-check (E-ACSL + gcc -O0/-O2 under
ASan/UBSan, and the spec-from-code mutants) and once without it (job option
``execution_check: False``). Jobs: the gold solution of a few casp-sample10 pairs in both
candidate modes (code-from-spec, spec-from-code). Prints the mean wall and CPU seconds
(the job's processes, as the sandbox measures them) per job with and without, and the
differences.

Usage: ``python scripts/bench_casp_exec.py [--tasks 00_327,01_57,04_140] [--json FILE]``.
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
from harness.benchmarks import casp
from harness.executor import Executor
from harness.results import RecordLog, ResultCache
from harness.sandbox import Limits
from harness.sandbox.local import HostSandbox
from harness.verifiers.framac import FramaC

DS = {"name": "casp-sample10", "revision": "bench"}


def run(jobs, fc, sandbox, probed, shared) -> tuple[float, list[dict]]:
    """Wall seconds of running ``jobs`` one at a time (fresh cache), and their records."""
    with tempfile.TemporaryDirectory() as d:
        ex = Executor(fc, sandbox, probed, shared_files=shared, limits=Limits(wall_s=300), parallel=1,
                      cache=ResultCache(Path(d) / "cache"))
        log = RecordLog(Path(d) / "records.jsonl")
        t0 = time.perf_counter()
        try:
            recs = ex.run(jobs, log, casp.BENCHMARK.judge)
        finally:
            log.close()
        return time.perf_counter() - t0, recs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", default="00_327,01_57,04_140", help="casp-sample10 task ids (comma-separated)")
    ap.add_argument("--json", type=Path, help="also write the numbers to this file")
    args = ap.parse_args()

    wanted = args.tasks.split(",")
    tasks = [t for t in casp.load_tasks(datasets.fetch("casp-sample10")) if t.task_id in wanted]
    sandbox = HostSandbox()
    probed = toolchains.probe("framac", sandbox)
    fc = FramaC()
    shared = fc.prepare(sandbox, probed)
    res: dict = {"benchmark": "casp execution cross-check, gold candidates", "tasks": [t.task_id for t in tasks],
                 "cpus": os.cpu_count(), "framac": probed.versions.get("frama-c")}
    for label, check in (("with", True), ("without", False)):
        opts = fc.options(probed, smoke=True, cpus=1, execution_check=check)
        jobs = [casp.build_job(t, c, mode, opts, DS) for mode in ("code-from-spec", "spec-from-code")
                for t in tasks for c in casp.gold_candidates([t], mode)]
        wall, recs = run(jobs, fc, sandbox, probed, shared)
        res[f"{label}_s_per_job"] = round(wall / len(jobs), 2)
        res[f"{label}_cpu_s_per_job"] = round(sum(r["timings"]["cpu_s"] for r in recs) / len(jobs), 2)
        res[f"{label}_jobs"] = len(jobs)
        if check:
            res["execution"] = {f"{r['mode']} {r['task_id']}": r["verifier"].get("extra", {}).get("execution", {}).get("status")
                                for r in recs}
            res["verdicts"] = {f"{r['mode']} {r['task_id']}": r["verdict"] for r in recs}
    res["cost_s_per_job"] = round(res["with_s_per_job"] - res["without_s_per_job"], 2)
    res["cost_cpu_s_per_job"] = round(res["with_cpu_s_per_job"] - res["without_cpu_s_per_job"], 2)
    print(f"CASP jobs ({res['with_jobs']}: {', '.join(res['tasks'])}, both candidate modes, -j1, no cache)")
    print(f"  with the execution cross-check:    {res['with_s_per_job']:6.2f} s per job")
    print(f"  without:                           {res['without_s_per_job']:6.2f} s per job")
    print(f"  cost of the cross-check:           {res['cost_s_per_job']:6.2f} s per job (wall)")
    print(f"  CPU seconds per job with/without:  {res['with_cpu_s_per_job']:6.2f} / {res['without_cpu_s_per_job']:.2f}"
          f" (cost {res['cost_cpu_s_per_job']:.2f})")
    print(f"  execution status per job: {res['execution']}")
    if args.json:
        args.json.write_text(json.dumps(res, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
