"""Benchmark: verikit's wall time against the same bare frama-c commands.

Measures, in one run on this machine, on the casp-sample10 gold pairs:

- ``bare``: the sum of the wall times of the exact frama-c commands the kit runs (same
  files, same flags, same why3.conf), one after another, started directly;
- ``kit -j1`` / ``kit -j2``: ``verikit run casp --mode gold --no-cache`` end to end
  (Python start-up, data verification, toolchain probe, prover detection, records,
  report) with 1 and 2 parallel jobs.

Prints ``kit -j1 / bare`` (target <= 1.10) and ``kit -j2 / kit -j1`` (target <= 0.6 on
2 cores). Usage: ``python scripts/bench_casp.py [--repeat N] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import datasets, toolchains
from harness.benchmarks import casp
from harness.sandbox.local import HostSandbox
from harness.verifiers.framac import FramaC


def bare_seconds(tasks, argv, env_extra, why3conf: bytes) -> float:
    """Sum of wall times of the bare frama-c commands, one per task, run sequentially."""
    total = 0.0
    for task in tasks:
        with tempfile.TemporaryDirectory() as d:
            Path(d, "candidate.c").write_text(task.gold)
            Path(d, "why3.conf").write_bytes(why3conf)
            env = dict(os.environ, PWD=d, **env_extra)  # frama-c resolves paths against $PWD
            t0 = time.perf_counter()
            proc = subprocess.run(argv, cwd=d, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            total += time.perf_counter() - t0
            if proc.returncode != 0:
                sys.exit(f"bare frama-c failed on {task.task_id} (exit {proc.returncode})")
    return total


def kit_seconds(jobs: int) -> float:
    """Wall time of one ``verikit run casp --mode gold`` with ``jobs`` parallel jobs, no cache."""
    with tempfile.TemporaryDirectory() as out, tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, VERIKIT_CACHE=cache)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "harness", "run", "casp", "--mode", "gold", "--no-cache", "--sandbox", "host",
                        "-j", str(jobs), "--out", out], env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=1, help="repetitions; the minimum of each is kept")
    ap.add_argument("--json", type=Path, help="also write the numbers to this file")
    args = ap.parse_args()

    tasks = casp.load_tasks(datasets.fetch("casp-sample10"))
    sandbox = HostSandbox()
    probed = toolchains.probe("framac", sandbox)
    fc = FramaC()
    shared = fc.prepare(sandbox, probed)
    argv, env_extra, _ = fc.command(fc.options(probed, smoke=casp.smoke_tests("gold"), cpus=1))

    bare = min(bare_seconds(tasks, argv, env_extra, shared.get("why3.conf", b"")) for _ in range(args.repeat))
    j1 = min(kit_seconds(1) for _ in range(args.repeat))
    j2 = min(kit_seconds(2) for _ in range(args.repeat))
    res = {
        "benchmark": "casp gold, casp-sample10 (10 pairs)", "cpus": os.cpu_count(),
        "framac": probed.versions.get("frama-c"), "argv": argv,
        "bare_s": round(bare, 2), "kit_j1_s": round(j1, 2), "kit_j2_s": round(j2, 2),
        "ratio_kit_j1_over_bare": round(j1 / bare, 3), "ratio_j2_over_j1": round(j2 / j1, 3),
        "targets": {"ratio_kit_j1_over_bare": 1.10, "ratio_j2_over_j1": 0.6},
    }
    print(f"bare frama-c (sum of {len(tasks)} runs): {bare:7.2f} s")
    print(f"verikit -j1:                        {j1:7.2f} s   ratio to bare {j1 / bare:.3f} (target <= 1.10)"
          f" {'OK' if j1 / bare <= 1.10 else 'MISSED'}")
    print(f"verikit -j2:                        {j2:7.2f} s   ratio to -j1  {j2 / j1:.3f} (target <= 0.60)"
          f" {'OK' if j2 / j1 <= 0.6 else 'MISSED'}")
    if args.json:
        args.json.write_text(json.dumps(res, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
