"""Benchmark: the kit at scale: a batch plan of 10,000 jobs, a cached re-run of 10,000 jobs,
and a run directory of 100,000 records.

Measured in one run on this machine:

- ``makespan``: 10,000 CASP jobs planned over 100 shards by the kit's own planner
  (``harness.batch.shards``: ``expected_costs``, ``shards``, ``estimate``, called as
  ``harness.batch.control.plan_batch`` calls them for AWS Batch and SLURM), with the per-job
  times of the committed reference runs' records (``timings.wall_s`` of
  results/reproduced/casp and results/reproduced/casp/reproduce) as the previous run's
  timings. The jobs cycle through the recorded (mode, task) pairs with models and samples
  no record has, so their keys are new and each job is planned at its (mode, task)'s mean,
  as a new run's would be. Prints the planned makespan (the longest shard's expected
  seconds) over the ideal, ``max(total / shards, longest job)`` (target <= 1.10), and the
  shards' spread. No tool runs.
- ``cached re-run``: ``verikit run casp --mode gold --sandbox host -j 1 --predictions FILE``
  in a new Python process (the whole command: start-up, data check, probe, 10,000 records,
  report.json, report.html), where FILE holds 10,000 jobs whose verifications are those of
  the casp-sample10 gold answers (each gold text as samples of model ``bench``, as in
  scripts/bench_kit_vs_bare.py), so that a gold run with the same cache first makes the
  few real Frama-C runs and every job of the re-run comes from the cache (else exit 1).
  Prints its wall seconds (target < 10 s) and CPU seconds, and those of the same re-run of
  one job per task (the fixed cost of a run); their records must give every task the gold
  run's verdict and goal counts.
- ``run directory``: a real run directory of 100,000 records made the same way (a cached
  ``verikit run`` of 100,000 predictions, not timed), then ``verikit validate DIR`` (the
  schemas, keys, SHA256SUMS, report.json against the records, every verdict re-derived
  from its stored tool output) and ``verikit report DIR --html FILE``, each in a new Python
  process. Prints the sum of the two wall times (target < 60 s), each one, and the HTML
  page's size. Both must exit 0 and validate must find the directory valid (else exit 1).

``--quick``: 1,000 planned jobs, the two small pairs 02_12 and 04_140, 200 cached jobs and
2,000 records, once (timings not judged). ``--repeat N`` repeats the two timed steps (the
minimum is kept). Usage:
``python scripts/bench_scale.py [--quick] [--repeat N] [--json FILE] [--strict]`` (needs
VERIKIT_DATA_MIRRORS or network for casp-sample10, and Frama-C on the host).
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_kit_vs_bare import LIMITS, QUICK_TASKS, kit, predictions
from benchlib import BenchFailure, kit_plan, main

from harness.batch.shards import estimate, expected_costs, shards
from harness.results import load_records

ROOT = Path(__file__).resolve().parents[1]
#: The committed reference runs whose records give the per-job times.
TIMINGS = ("results/reproduced/casp/records.jsonl", "results/reproduced/casp/reproduce/records.jsonl")
#: Sizes: (full, quick).
PLANNED, SHARDS, CACHED, RECORDS = (10_000, 1_000), 100, (10_000, 200), (100_000, 2_000)


def _records_of_timings() -> list[dict]:
    """The reference runs' records (those with a ``timings.wall_s``)."""
    out = []
    for rel in TIMINGS:
        out += [r for r in load_records(ROOT / rel) if (r.get("timings") or {}).get("wall_s") is not None]
    if not out:
        raise BenchFailure(f"no timed records in {', '.join(TIMINGS)}")
    return out


def makespan(bench, n_jobs: int, n_shards: int) -> dict:
    """Plan ``n_jobs`` new jobs over ``n_shards`` shards with the reference runs' timings
    (``plan_batch``'s calls: ``expected_costs(keys, identities, previous)``, ``shards``,
    ``estimate``) and compare the longest shard with the ideal."""
    previous = _records_of_timings()
    pairs = sorted({(r["mode"], r["task_id"]) for r in previous})
    known = {r["key"] for r in previous}
    identities: dict[str, tuple] = {}
    for i in range(n_jobs):
        mode, task_id = pairs[i % len(pairs)]
        ident = (mode, task_id, f"scale-model-{i % 7}", i // len(pairs))  # a model and sample no record has
        key = hashlib.sha256(json.dumps(ident).encode()).hexdigest()
        if key in known:
            raise BenchFailure(f"job {ident} has a recorded job's key")
        identities[key] = ident
    t0 = time.perf_counter()
    costs = expected_costs(list(identities), identities, previous)
    split = shards(costs, n_shards)
    est = estimate(costs, split, LIMITS.cpus)
    planning = time.perf_counter() - t0
    per_shard = sorted(sum(costs[k] for k in s) for s in split)
    total, longest_job = sum(per_shard), max(costs.values())
    ideal = max(total / len(split), longest_job)
    planned = per_shard[-1]
    mean = total / len(split)
    print(f"plan: {n_jobs} new jobs ({len(pairs)} recorded (mode, task) pairs of {len(previous)} timed records) "
          f"on {len(split)} shards in {planning * 1000:.0f} ms; "
          f"expected total {total:.0f} s, longest job {longest_job:.1f} s; estimate: {est}")
    print(f"shards: min {per_shard[0]:.1f} s, median {statistics.median(per_shard):.1f} s, max {planned:.1f} s, "
          f"mean {mean:.1f} s; spread (max - min) / mean = {(planned - per_shard[0]) / mean * 100:.2f} %, "
          f"jobs per shard {min(len(s) for s in split)}-{max(len(s) for s in split)}")
    bench.ratio("makespan_over_ideal", planned / ideal,
                f"{planned:.1f} s vs ideal {ideal:.1f} s (total {total:.0f} s / {len(split)} shards, longest job "
                f"{longest_job:.1f} s), {n_jobs} jobs")
    return {"jobs": n_jobs, "shards": len(split), "pairs": len(pairs), "timed_records": len(previous),
            "total_s": round(total, 1), "longest_job_s": round(longest_job, 2), "ideal_s": round(ideal, 1),
            "makespan_s": round(planned, 1), "min_shard_s": round(per_shard[0], 1),
            "median_shard_s": round(statistics.median(per_shard), 1), "estimate": est,
            "planning_ms": round(planning * 1000, 1), "ratio": round(planned / ideal, 4)}


def verikit(args: list[str]) -> tuple[float, float, str]:
    """Wall and CPU seconds (user + system, the process and its children) of
    ``python -m harness ARGS`` in a new Python process, and its output (stdout + stderr).

    Raises:
        BenchFailure: it exited non-zero.
    """
    argv = [sys.executable, "-m", "harness", *args]
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise BenchFailure(f"verikit {' '.join(args)} exited {proc.returncode}: {(proc.stderr or proc.stdout)[-800:]}")
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), proc.stdout + proc.stderr


def _outcomes(records) -> dict:
    return {r["task_id"]: (r["verdict"], r["goals"]) for r in records}


def cached(bench, select: list[str], files: dict[int, Path], gold: dict, tmp: Path, cache: Path) -> dict:
    """The cached re-runs of the predictions ``files`` (jobs -> file; ``--repeat`` times,
    the minimum kept): the largest is the one judged, the smallest (one job per task)
    shows the fixed cost of a run."""
    walls: dict[int, list[float]] = {n: [] for n in files}
    cpus: dict[int, list[float]] = {n: [] for n in files}
    for rep in range(bench.args.repeat):
        for n, preds in sorted(files.items()):
            bench.step(f"cached re-run: verikit run casp --mode gold -j 1 --predictions ({n} jobs, every one from "
                       f"the cache; repetition {rep + 1})")
            wall, records, manifest, cpu = kit([*select, "-j", "1", "--predictions", str(preds)],
                                               tmp / f"cached-{n}-{rep}", cache)
            counts = manifest["counts"]
            if counts["cached"] != n or counts["ran"] != 0 or len(records) != n:
                raise BenchFailure(f"cached re-run of {n} jobs: {counts} (every job must come from the cache)")
            wrong = sorted({r["task_id"] for r in records if gold.get(r["task_id"]) != (r["verdict"], r["goals"])})
            if wrong:
                raise BenchFailure(f"cached re-run: verdicts or goal counts differ from the gold run's on {wrong}")
            walls[n].append(wall)
            cpus[n].append(cpu)
    small, n = min(files), max(files)
    wall, cpu = min(walls[n]), min(cpus[n])
    print(f"cached re-run of {n} jobs: {wall:.2f} s wall, {cpu:.2f} CPU s (whole command; all repetitions: "
          f"{', '.join(f'{w:.2f}' for w in walls[n])} s); of {small} jobs (the fixed cost of a run: start-up, "
          f"data check, git state, probe, report.html): {min(walls[small]):.2f} s wall, {min(cpus[small]):.2f} CPU s")
    bench.ratio("cached_10k_s", wall, f"{n} jobs from the cache, whole command, {cpu:.2f} CPU s; {small} jobs: "
                f"{min(walls[small]):.2f} s")
    return {"jobs": n, "wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "fixed_jobs": small,
            "fixed_wall_s": round(min(walls[small]), 3), "fixed_cpu_s": round(min(cpus[small]), 3),
            "runs_wall_s": {str(k): [round(w, 3) for w in v] for k, v in walls.items()},
            "runs_cpu_s": {str(k): [round(c, 3) for c in v] for k, v in cpus.items()}}


def rundir(bench, select: list[str], preds: Path, n: int, tmp: Path, cache: Path) -> dict:
    """Make a run directory of ``n`` records (a cached run), then time validate + report."""
    out = tmp / "rundir"
    bench.step(f"making a run directory of {n} records (verikit run, every job from the cache; not timed)")
    made, _, _ = verikit(["run", "casp", "--mode", "gold", "--sandbox", "host", *select, "-j", "1", "--predictions",
                          str(preds), "--out", str(out), "--cache-dir", str(cache)])
    manifest = json.loads((out / "run.json").read_text())
    if manifest["counts"]["jobs"] != n or manifest["counts"]["cached"] != n:
        raise BenchFailure(f"the run directory of {n} records: {manifest['counts']}")
    size = (out / "records.jsonl").stat().st_size
    print(f"run directory: {n} records, records.jsonl {size / 1e6:.1f} MB, made in {made:.1f} s")
    v_walls, r_walls, v_cpus, r_cpus = [], [], [], []
    html = tmp / "report.html"
    for rep in range(bench.args.repeat):
        bench.step(f"verikit validate DIR ({n} records; repetition {rep + 1})")
        wall, cpu, text = verikit(["validate", str(out)])
        if f"{out}: valid" not in text or f"re-judged {n} record(s)" not in text:
            raise BenchFailure(f"verikit validate did not find the run directory valid:\n{text[-1500:]}")
        v_walls.append(wall)
        v_cpus.append(cpu)
        bench.step(f"verikit report DIR --html FILE ({n} records; repetition {rep + 1})")
        html.unlink(missing_ok=True)
        wall, cpu, text = verikit(["report", str(out), "--html", str(html)])
        if not html.is_file() or any(line.startswith("invalid ") for line in text.splitlines()):
            raise BenchFailure(f"verikit report did not write {html} or found a problem:\n{text[-1500:]}")
        r_walls.append(wall)
        r_cpus.append(cpu)
    v, r = min(v_walls), min(r_walls)
    html_mb = html.stat().st_size / 1e6
    print(f"{n} records: verikit validate {v:.2f} s ({min(v_cpus):.2f} CPU s), verikit report --html {r:.2f} s "
          f"({min(r_cpus):.2f} CPU s), HTML {html_mb:.1f} MB")
    bench.ratio("rundir_100k_s", v + r, f"validate {v:.2f} s + report --html {r:.2f} s, {n} records, "
                f"HTML {html_mb:.1f} MB")
    return {"records": n, "records_jsonl_mb": round(size / 1e6, 1), "made_s": round(made, 2),
            "validate_s": round(v, 3), "report_s": round(r, 3), "validate_cpu_s": round(min(v_cpus), 3),
            "report_cpu_s": round(min(r_cpus), 3), "html_mb": round(html_mb, 2),
            "runs": {"validate_s": [round(x, 3) for x in v_walls], "report_s": [round(x, 3) for x in r_walls]}}


def body(bench) -> dict:
    quick = bench.args.quick
    pick = 1 if quick else 0
    bench.step(f"makespan: {PLANNED[pick]} new CASP jobs planned on {SHARDS} shards (harness.batch.shards)")
    plan_numbers = makespan(bench, PLANNED[pick], SHARDS)

    task_ids = QUICK_TASKS if quick else None
    select = [a for t in (task_ids or []) for a in ("--task", t)]
    plan = kit_plan("casp", ["gold"], "host", LIMITS, task_ids)
    with tempfile.TemporaryDirectory(prefix="verikit-bench-scale-") as tmp:
        tmp = Path(tmp)
        cache = tmp / "cache"
        bench.step(f"filling the cache: verikit run casp --mode gold -j 2 ({len(plan.tasks)} gold pairs, real Frama-C)")
        wall, records, manifest, _ = kit([*select, "-j", "2"], tmp / "gold", cache)
        if manifest["counts"]["ran"] != len(plan.tasks):
            raise BenchFailure(f"the gold run ran {manifest['counts']['ran']} of {len(plan.tasks)} jobs")
        gold = _outcomes(records)
        print(f"gold run: {len(records)} jobs in {wall:.1f} s")
        files = {predictions(tmp / f"cached-{size}.jsonl", plan.tasks, size): tmp / f"cached-{size}.jsonl"
                 for size in (len(plan.tasks), CACHED[pick])}
        cached_numbers = cached(bench, select, files, gold, tmp, cache)
        n_records = predictions(tmp / "rundir.jsonl", plan.tasks, RECORDS[pick])
        rundir_numbers = rundir(bench, select, tmp / "rundir.jsonl", n_records, tmp, cache)
    return {"quick": quick, "cpus": os.cpu_count(), "repeat": bench.args.repeat,
            "benchmark": f"casp gold, {plan.fetched.dataset.name}: {len(plan.tasks)} pairs",
            "makespan": plan_numbers, "cached": cached_numbers, "rundir": rundir_numbers}


if __name__ == "__main__":
    main("bench_scale", __doc__, body)
