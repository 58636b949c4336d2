"""Benchmark: per-job cost of CASP's execution cross-check.

Runs the same CASP jobs twice through the kit's executor on the host sandbox, one job at a
time, with a fresh result cache: once with the execution cross-check (E-ACSL + gcc
-O0/-O2 under ASan/UBSan, and the spec-from-code mutants) and once without it (job option
``execution_check: False``). The jobs are the kit's own (scripts/benchlib.py
``kit_plan`` + ``kit_jobs``: ``harness.runner.plan_run`` + ``build_jobs``, with
``execution_check`` given as an override of the verifier's ``options``): the gold
solution of a few casp-sample10 pairs in both candidate modes (code-from-spec,
spec-from-code), the canaries left out. Prints the mean wall and CPU seconds (the job's
processes, as the sandbox measures them) per job with and without, and the differences.
It has no target; it fails (exit 1) when a job ends in ``infra_error`` or ``invalid``, or
when a job with the cross-check has no execution status.

``--quick``: one small pair (04_140), code-from-spec only, without WP's smoke tests
(``smoke=False``: they are most of that job's time and not what this bench measures).
Usage: ``python scripts/bench_exec_check.py [--quick] [--tasks 00_327,01_57] [--json FILE]``.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from benchlib import BenchFailure, kit_jobs, kit_plan, main

from harness.executor import Executor
from harness.model import Limits
from harness.results import RecordLog, ResultCache
from harness.runner import probe_toolchain
from harness.sandbox.local import HostSandbox

MODES = ["code-from-spec", "spec-from-code"]
#: ``--quick``: one small pair, one mode, no WP smoke tests (9 of the 12 s of that job,
#: and not what this bench measures).
QUICK = {"tasks": ["04_140"], "modes": ["code-from-spec"], "options": {"smoke": False}}
LIMITS = Limits(wall_s=300)


def run(jobs, verifier, judge, sandbox, probed, shared) -> tuple[float, list[dict]]:
    """Wall seconds of running ``jobs`` one at a time (fresh cache), and their records."""
    with tempfile.TemporaryDirectory() as d:
        ex = Executor(verifier, sandbox, probed, shared_files=shared, limits=LIMITS, parallel=1,
                      cache=ResultCache(Path(d) / "cache"))
        log = RecordLog(Path(d) / "records.jsonl")
        t0 = time.perf_counter()
        try:
            recs = ex.run(jobs, log, judge)
        finally:
            log.close()
        return time.perf_counter() - t0, recs


def body(bench) -> dict:
    args = bench.args
    wanted = QUICK["tasks"] if args.quick else args.tasks.split(",")
    modes = QUICK["modes"] if args.quick else MODES
    plan = kit_plan("casp", modes, "host", LIMITS, wanted)
    sandbox = HostSandbox()
    probed, shared = probe_toolchain(plan, sandbox)
    res: dict = {"benchmark": "casp execution cross-check, gold candidates", "tasks": wanted, "modes": modes,
                 "quick": args.quick, "cpus": os.cpu_count(), "framac": probed.versions.get("frama-c")}
    tuned = QUICK["options"] if args.quick else {}
    res["option_overrides"] = tuned
    for label, check in (("with", True), ("without", False)):
        jobs, verifier = kit_jobs(plan, probed, overrides={**tuned, **({} if check else {"execution_check": False})},
                                  keep=lambda j: j.candidate["origin"] == "gold")
        if any(j.options.get("execution_check", True) != (label == "with") for j in jobs):
            raise BenchFailure(f"{label} the cross-check: a job's options say otherwise")
        bench.step(f"{len(jobs)} jobs {label} the execution cross-check ({', '.join(modes)}; {', '.join(wanted)})")
        wall, recs = run(jobs, verifier, plan.bench.judge, sandbox, probed, shared)
        bad = [f"{r['mode']} {r['task_id']}: {r['verdict']} ({r['reason'][:200]})" for r in recs
               if r["verdict"] in ("infra_error", "invalid")]
        if bad or len(recs) != len(jobs):
            raise BenchFailure(f"{label} the cross-check: {len(recs)} records of {len(jobs)} jobs; {'; '.join(bad)}")
        res[f"{label}_s_per_job"] = round(wall / len(jobs), 2)
        res[f"{label}_cpu_s_per_job"] = round(sum(r["timings"]["cpu_s"] for r in recs) / len(jobs), 2)
        res[f"{label}_jobs"] = len(jobs)
        res[f"verdicts_{label}"] = {f"{r['mode']} {r['task_id']}": r["verdict"] for r in recs}
        if label == "with":
            res["execution"] = {f"{r['mode']} {r['task_id']}": (r["verifier"].get("extra", {}).get("execution") or {})
                                .get("status") for r in recs}
            missing = [k for k, v in res["execution"].items() if v is None]
            if missing:
                raise BenchFailure(f"no execution status in the records of {', '.join(missing)}")
    res["cost_s_per_job"] = round(res["with_s_per_job"] - res["without_s_per_job"], 2)
    res["cost_cpu_s_per_job"] = round(res["with_cpu_s_per_job"] - res["without_cpu_s_per_job"], 2)
    print(f"CASP jobs ({res['with_jobs']}: {', '.join(res['tasks'])}, {', '.join(modes)}, -j 1, fresh cache)")
    print(f"  with the execution cross-check:    {res['with_s_per_job']:6.2f} s per job")
    print(f"  without:                           {res['without_s_per_job']:6.2f} s per job")
    print(f"  cost of the cross-check:           {res['cost_s_per_job']:6.2f} s per job (wall)")
    print(f"  CPU seconds per job with/without:  {res['with_cpu_s_per_job']:6.2f} / {res['without_cpu_s_per_job']:.2f}"
          f" (cost {res['cost_cpu_s_per_job']:.2f})")
    print(f"  execution status per job: {res['execution']}")
    if res["verdicts_with"] != res["verdicts_without"]:
        print(f"  note: the cross-check changed verdicts: {res['verdicts_with']} vs {res['verdicts_without']}")
    return res


if __name__ == "__main__":
    main("bench_exec_check", __doc__, body,
         lambda ap: ap.add_argument("--tasks", default="00_327,01_57,04_140", help="casp-sample10 task ids (comma-separated)"))
