"""Benchmark: verikit's wall time against the same bare frama-c commands, and a cached re-run.

Measured in one run on this machine, on the casp-sample10 gold pairs (``--quick``: two
small pairs, 02_12 and 04_140):

- ``bare``: the kit's own jobs (``harness.runner.plan_run`` + ``build_jobs``: the
  benchmark's ``build_job`` with the verifier's ``options``, ``prepare`` and
  ``command``/``task_command``/``gate``, so the same files, flags, driver files and
  why3.conf), each command started directly with ``subprocess`` in a fresh directory,
  one after another; the time is the sum of these commands (files written, command run,
  files collected). Each bare output is read by the kit's parser and judge
  (``harness.executor.derive``) and must give the kit's verdict and goal counts;
- ``kit -j1`` / ``kit -j2``: ``verikit run casp --mode gold --sandbox host`` end to end
  (Python start-up, data verification, toolchain probe, prover detection, records,
  report, HTML report) with 1 and 2 parallel jobs and a fresh result cache (so every job
  runs, and is cached as in a user's run); its job keys must be the bare jobs' keys;
- ``cached re-run``: the same verifications as a predictions file of N jobs (the gold
  texts, so they share the kit -j1 run's cache entries), run again into a new directory:
  every job comes from the cache, its verdict re-derived from the stored tool output.
  Run with ``len(tasks)`` and with about 1,000 jobs (``--quick``: 20); the cost per 1,000
  jobs is the slope between the two (the fixed cost of a run, Python start-up, probe,
  prover detection, is not per job; both walls are printed, and the CPU seconds of both
  runs, whose slope other work on the machine does not inflate).

Prints ``kit -j1 / bare`` (target <= 1.05), ``kit -j2 / kit -j1`` (target <= 0.55) and the
cached re-run's seconds per 1,000 jobs (target < 1 s), each with PASS or MISS (see
scripts/benchlib.py for the exit status). Usage:
``python scripts/bench_kit_vs_bare.py [--quick] [--repeat N] [--json FILE] [--strict]``.
"""

from __future__ import annotations

import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import BenchFailure, kit_jobs, kit_plan, main

from harness.executor import derive, verification_command
from harness.model import CPUS_ENV, Limits, ProcResult, canonical_json
from harness.runner import probe_toolchain
from harness.sandbox import collect_files, write_files
from harness.sandbox.local import HostSandbox

QUICK_TASKS = ["02_12", "04_140"]
#: The CLI's default limits (``--timeout 600 --memory 4096``), as the kit's run has them.
LIMITS = Limits(wall_s=600.0, mem_mb=4096)
#: About this many jobs in the large cached re-run (``--quick``: QUICK_CACHED).
CACHED_JOBS, QUICK_CACHED = 1000, 20


def kit_setup(task_ids: list[str] | None):
    """The kit's own preparation of the run ``verikit run casp --mode gold --sandbox host
    [--task ...]`` (scripts/benchlib.py): plan, probed toolchain, shared files
    (``Verifier.prepare``), every job (canaries too, were there any: the kit's run has them)."""
    plan = kit_plan("casp", ["gold"], "host", LIMITS, task_ids)
    probed, shared = probe_toolchain(plan, HostSandbox())
    jobs, _ = kit_jobs(plan, probed, keep=lambda job: True)
    return plan, probed, shared, jobs


def direct(argv: list[str], files: dict, env: dict, collect) -> ProcResult:
    """``argv`` started directly (``subprocess.run``) in a fresh directory holding
    ``files``, with the environment the host sandbox gives (PATH, C.UTF-8 locale, HOME and
    TMPDIR in the directory, and the machine's CPUs in ``VERIKIT_CPUS``, as the executor gives
    a job at ``-j 1``: ``Executor.job_cpus``) plus ``env``; no watchdog, no reaper, no limits."""
    with tempfile.TemporaryDirectory(prefix="verikit-bare-") as d:
        root = Path(d)
        t0 = time.perf_counter()
        write_files(root, files)
        (root / "tmp").mkdir(exist_ok=True)
        run_env = {"PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"), "LANG": "C.UTF-8",
                   "LC_ALL": "C.UTF-8", "HOME": d, "TMPDIR": str(root / "tmp"),
                   CPUS_ENV: str(len(os.sched_getaffinity(0))), **env}
        proc = subprocess.run(argv, cwd=d, env=run_env, stdin=subprocess.DEVNULL, capture_output=True)
        out = collect_files(root, collect)
        wall = time.perf_counter() - t0
    return ProcResult(argv=list(argv), returncode=proc.returncode, stdout=proc.stdout.decode("utf-8", "replace"),
                      stderr=proc.stderr.decode("utf-8", "replace"), wall_s=wall, files=out)


def bare(plan, shared, jobs) -> tuple[float, dict]:
    """Every job's commands, as the executor makes them from the verifier (task run once
    per distinct content, gate, verification), started directly one after another.

    Returns:
        (sum of the commands' wall seconds, {job key's task id: (verdict, goals)}).

    Raises:
        BenchFailure: a command exited non-zero.
    """
    verifier, judge = plan.verifier, plan.bench.judge
    total, task_runs, outcome = 0.0, {}, {}

    def checked(what, job, argv, files, env, collect):
        nonlocal total
        proc = direct(argv, files, env, collect)
        total += proc.wall_s
        if proc.returncode != 0:
            raise BenchFailure(f"bare {what} failed on {job.task_id} (exit {proc.returncode}): "
                               f"{(proc.stderr or proc.stdout).strip()[-300:]}")
        return proc

    for job in jobs:
        if job.precheck is not None:
            raise BenchFailure(f"{job.task_id}: the gold job was decided without running ({job.precheck})")
        task_files = {}
        if job.task_run:
            argv, env, collect = verifier.task_command(job.options)
            key = canonical_json({"files": job.task_run, "argv": list(argv), "env": env})
            if key not in task_runs:
                task_runs[key] = checked("task run", job, argv, {**shared, **job.task_run}, env, collect).files
            task_files = task_runs[key]
        spec, gate_files = verifier.gate(job.options), None
        if spec is not None:
            proc = checked("gate", job, spec[0], {**shared, **job.files}, spec[1], spec[2])
            proc.files.update(task_files)
            verdict, _, result = derive(verifier, job, proc, judge)
            if verdict == "rejected":
                outcome[job.task_id] = (verdict, result.goals.to_json() if result and result.goals else None)
                continue
            gate_files = proc.files
        # as the executor: the command after the gate, from what it (and the task run) wrote
        argv, env, collect, carried = verification_command(verifier, job.options, gate_files)
        proc = checked("frama-c", job, argv, {**shared, **job.files, **carried}, env, collect)
        proc.files = {**proc.files, **task_files}
        verdict, reason, result = derive(verifier, job, proc, judge)
        if verdict in ("infra_error", "invalid"):
            raise BenchFailure(f"bare run of {job.task_id}: {verdict} ({reason})")
        outcome[job.task_id] = (verdict, result.goals.to_json() if result and result.goals else None)
    return total, outcome


def kit(args: list[str], out: Path, cache: Path) -> tuple[float, list[dict], dict, float]:
    """Wall time of ``verikit run casp --mode gold --sandbox host ARGS --out OUT
    --cache-dir CACHE`` in a new Python process; its records, run.json, and the CPU
    seconds (user + system) of that process and its children.

    Raises:
        BenchFailure: the run exited non-zero.
    """
    argv = [sys.executable, "-m", "harness", "run", "casp", "--mode", "gold", "--sandbox", "host", *args,
            "--out", str(out), "--cache-dir", str(cache)]
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise BenchFailure(f"{' '.join(argv[1:])} exited {proc.returncode}: {proc.stderr.strip()[-500:]}")
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines() if line.strip()]
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return wall, records, json.loads((out / "run.json").read_text()), cpu


def same_as_bare(what: str, records: list[dict], outcome: dict, keys: dict | None = None) -> None:
    """The kit's records give the bare run's verdict and goal counts for every task (and,
    with ``keys``, carry the bare jobs' keys: the same jobs). Raises BenchFailure."""
    if keys is not None and {r["key"] for r in records} != set(keys):
        raise BenchFailure(f"{what}: the kit ran other jobs than the bare run's (job keys differ)")
    if {r["task_id"] for r in records} != set(outcome):
        raise BenchFailure(f"{what}: the kit's records cover other tasks than the bare run's")
    diff = [f"{r['task_id']}: kit {r['verdict']} {r['goals']}, bare {outcome[r['task_id']]}" for r in records
            if (r["verdict"], r["goals"]) != outcome[r["task_id"]]]
    if diff:
        raise BenchFailure(f"{what}: the kit's verdicts differ from the bare run's: {'; '.join(diff)}")


def predictions(path: Path, tasks, n: int) -> int:
    """A predictions file of about ``n`` lines: each task's gold text as samples
    0..ceil(n / tasks)-1 of model ``bench`` (they share the gold's verification and its
    cache entry). Returns the number of lines."""
    per = max(1, math.ceil(n / len(tasks)))
    with open(path, "w") as fh:
        for s in range(per):
            for t in tasks:
                fh.write(json.dumps({"task_id": t.task_id, "model": "bench", "sample": s, "output": t.gold}) + "\n")
    return per * len(tasks)


def body(bench) -> dict:
    args = bench.args
    task_ids = QUICK_TASKS if args.quick else None
    bench.step("planning the kit's jobs (plan_run, probe, Verifier.prepare, build_jobs)")
    plan, probed, shared, jobs = kit_setup(task_ids)
    keys = {j.key(probed, LIMITS): j.task_id for j in jobs}
    select = [a for t in (task_ids or []) for a in ("--task", t)]
    runs: dict[str, list[float]] = {"bare": [], "kit_j1": [], "kit_j2": [], "cached_small": [], "cached_large": [],
                                    "cached_small_cpu": [], "cached_large_cpu": []}
    with tempfile.TemporaryDirectory(prefix="verikit-bench-") as tmp:
        tmp = Path(tmp)
        n_small = predictions(tmp / "small.jsonl", plan.tasks, len(plan.tasks))
        n_large = predictions(tmp / "large.jsonl", plan.tasks, QUICK_CACHED if args.quick else CACHED_JOBS)
        for rep in range(args.repeat):
            bench.step(f"bare: {len(jobs)} jobs' commands started directly (repetition {rep + 1})")
            t, outcome = bare(plan, shared, jobs)
            runs["bare"].append(t)
            for j in (1, 2):
                bench.step(f"kit -j {j}: verikit run casp --mode gold ({len(jobs)} jobs, fresh cache)")
                wall, records, manifest, _ = kit([*select, "-j", str(j)], tmp / f"kit-j{j}-{rep}",
                                                 tmp / f"cache-j{j}-{rep}")
                same_as_bare(f"kit -j {j}", records, outcome, keys)
                if manifest["counts"]["ran"] != len(jobs):
                    raise BenchFailure(f"kit -j {j}: ran {manifest['counts']['ran']} of {len(jobs)} jobs")
                runs[f"kit_j{j}"].append(wall)
            for size, n in (("small", n_small), ("large", n_large)):
                bench.step(f"cached re-run: {n} jobs from the kit -j 1 run's cache")
                wall, records, manifest, cpu = kit([*select, "-j", "1", "--predictions", str(tmp / f"{size}.jsonl")],
                                                   tmp / f"cached-{size}-{rep}", tmp / f"cache-j1-{rep}")
                counts = manifest["counts"]
                if counts["cached"] != n or counts["ran"] != 0 or len(records) != n:
                    raise BenchFailure(f"cached re-run of {n} jobs: {counts} (every job must come from the cache)")
                same_as_bare(f"cached re-run ({n} jobs)", records, outcome)
                runs[f"cached_{size}"].append(wall)
                runs[f"cached_{size}_cpu"].append(cpu)
    b, j1, j2 = min(runs["bare"]), min(runs["kit_j1"]), min(runs["kit_j2"])
    small, large = min(runs["cached_small"]), min(runs["cached_large"])
    per_1000 = (large - small) / (n_large - n_small) * 1000  # quick mode: noise, may be below 0
    cpu_small, cpu_large = min(runs["cached_small_cpu"]), min(runs["cached_large_cpu"])
    cpu_per_1000 = (cpu_large - cpu_small) / (n_large - n_small) * 1000  # what other work on the machine does not add
    print(f"{len(jobs)} gold jobs: bare commands (sum) {b:.2f} s, verikit -j 1 {j1:.2f} s, verikit -j 2 {j2:.2f} s")
    print(f"cached re-run: {n_small} jobs {small:.2f} s, {n_large} jobs {large:.2f} s (whole runs, Python start-up "
          f"included); CPU {cpu_small:.2f} s and {cpu_large:.2f} s, {cpu_per_1000:.3f} CPU s per 1,000 jobs")
    bench.ratio("kit_j1_over_bare", j1 / b, f"{j1:.2f} s vs {b:.2f} s, {len(jobs)} gold jobs")
    bench.ratio("kit_j2_over_j1", j2 / j1, f"{j2:.2f} s vs {j1:.2f} s on {os.cpu_count()} cores")
    bench.ratio("cached_s_per_1000", per_1000, f"({large:.2f} s - {small:.2f} s) / ({n_large} - {n_small}) jobs x 1000"
                f"; CPU {cpu_per_1000:.3f} s per 1,000 jobs")
    return {"benchmark": f"casp gold, {plan.fetched.dataset.name}: {len(jobs)} pairs", "tasks": [j.task_id for j in jobs],
            "quick": args.quick, "cpus": os.cpu_count(), "framac": probed.versions.get("frama-c"),
            "argv": plan.verifier.command(jobs[0].options)[0], "repeat": args.repeat,
            "bare_s": round(b, 2), "kit_j1_s": round(j1, 2), "kit_j2_s": round(j2, 2),
            "cached": {"jobs": [n_small, n_large], "wall_s": [round(small, 3), round(large, 3)],
                       "s_per_1000_jobs": round(per_1000, 3), "cpu_s": [round(cpu_small, 3), round(cpu_large, 3)],
                       "cpu_s_per_1000_jobs": round(cpu_per_1000, 3)},
            "runs": {k: [round(x, 3) for x in v] for k, v in runs.items()}}


if __name__ == "__main__":
    main("bench_kit_vs_bare", __doc__, body)
