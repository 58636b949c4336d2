"""Benchmark: the container sandbox's per-job overhead over the host sandbox.

Measured in one run on this machine, sequentially, on the casp-sample10 gold pairs with
the same frama-c command line:

- host: each job through ``HostSandbox.run``;
- warm workers: each job ``exec``-ed into one long-lived worker (``ContainerSandbox``);
- one container per job: a fresh container (same image, same limits, no network) per
  job, started, waited for and removed through the same Docker Engine API.

Also the same three ways for a no-op job (``true``), which isolates the sandbox cost from
the verifier's own run-to-run variation. Prints the per-job overhead of warm workers over
the host (target < 50 ms) and the ratio of warm-worker exec to one-container-per-job.
Needs ``DOCKER_HOST`` (or the default socket) and the framac image.
Usage: ``python scripts/bench_container.py [--repeat N] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

from harness import datasets, toolchains
from harness.benchmarks import casp
from harness.sandbox import Limits
from harness.sandbox.container import ContainerSandbox, connect
from harness.sandbox.images import resolve
from harness.sandbox.local import HostSandbox
from harness.verifiers.framac import FramaC

LIMITS = Limits(wall_s=300)


def per_container(client, image: str, argv: list[str], files: dict, env: dict) -> float:
    """Wall time of one job in its own container (create+start, wait, logs, remove)."""
    d = Path(tempfile.mkdtemp(prefix="verikit-bench-"))
    try:
        for rel, text in files.items():
            (d / rel).write_bytes(text if isinstance(text, bytes) else text.encode())
        t0 = time.perf_counter()
        c = client.containers.run(image, argv, detach=True, network_mode="none", read_only=True,
                                  mem_limit=f"{LIMITS.mem_mb}m", working_dir="/scratch",
                                  volumes={str(d): {"bind": "/scratch", "mode": "rw"}},
                                  environment={**env, "HOME": "/scratch", "TMPDIR": "/scratch", "PWD": "/scratch"})
        c.wait()
        c.logs()
        c.remove(force=True)
        return time.perf_counter() - t0
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    tasks = casp.load_tasks(datasets.fetch("casp-sample10"))
    image = resolve("framac")
    client = connect()
    host = HostSandbox()
    fc = FramaC()
    with ContainerSandbox(image, slots=1) as warm:
        probed = toolchains.probe("framac", warm, flavor="debian")
        shared = fc.prepare(warm, probed)
        argv, env, collect = fc.command(fc.options(probed, smoke=False))
        jobs = [{**shared, "candidate.c": t.gold} for t in tasks]
        warm.run(["true"], limits=LIMITS)  # warm-up
        res = {"host": 0.0, "warm": 0.0, "per_container": 0.0, "noop_host": 0.0, "noop_warm": 0.0,
               "noop_per_container": 0.0}
        for _ in range(args.repeat):
            for files in jobs:
                t0 = time.perf_counter()
                host.run(argv, files=files, env=env, collect=collect, limits=LIMITS)
                res["host"] += time.perf_counter() - t0
                t0 = time.perf_counter()
                warm.run(argv, files=files, env=env, collect=collect, limits=LIMITS)
                res["warm"] += time.perf_counter() - t0
                res["per_container"] += per_container(client, image, argv, files, env)
                t0 = time.perf_counter()
                host.run(["true"], limits=LIMITS)
                res["noop_host"] += time.perf_counter() - t0
                t0 = time.perf_counter()
                warm.run(["true"], limits=LIMITS)
                res["noop_warm"] += time.perf_counter() - t0
                res["noop_per_container"] += per_container(client, image, ["true"], {}, {})
    n = len(jobs) * args.repeat
    out = {k: round(v / n * 1000, 1) for k, v in res.items()}  # ms per job
    out.update({
        "jobs": n, "image": image, "unit": "ms per job",
        "overhead_warm_over_host_ms": round((res["warm"] - res["host"]) / n * 1000, 1),
        "overhead_noop_warm_over_host_ms": round((res["noop_warm"] - res["noop_host"]) / n * 1000, 1),
        "ratio_warm_over_per_container": round(res["warm"] / res["per_container"], 3),
        "ratio_noop_warm_over_per_container": round(res["noop_warm"] / res["noop_per_container"], 3),
    })
    print(f"per job, {n} casp gold jobs: host {out['host']} ms, warm worker {out['warm']} ms, "
          f"one container per job {out['per_container']} ms")
    print(f"no-op job: host {out['noop_host']} ms, warm worker {out['noop_warm']} ms, "
          f"one container per job {out['noop_per_container']} ms")
    ok = out["overhead_noop_warm_over_host_ms"] < 50
    print(f"container overhead per job with warm workers: {out['overhead_noop_warm_over_host_ms']} ms (no-op), "
          f"{out['overhead_warm_over_host_ms']} ms (frama-c jobs); target < 50 ms: {'OK' if ok else 'MISSED'}")
    print(f"warm exec / one container per job: {out['ratio_warm_over_per_container']} (frama-c jobs), "
          f"{out['ratio_noop_warm_over_per_container']} (no-op)")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
