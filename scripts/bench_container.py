"""Benchmark: the container sandbox's per-job cost: warm exec against the host sandbox and
against one container per job.

Measured in one run on this machine, sequentially, on the casp-sample10 gold pairs
(``--quick``: one pair, 04_140). The jobs are the kit's own (``harness.runner.plan_run`` +
``build_jobs``: ``build_job``, the verifier's ``options``, ``prepare``, ``command``),
planned once for the host and once for the container sandbox (each with its own probed
toolchain and why3.conf); each job's verification command runs:

- host: through ``HostSandbox.run``;
- warm worker: ``exec``-ed into one long-lived worker (``ContainerSandbox``);
- one container per job: a fresh container (same image, same memory limit, no network,
  read-only root) per job, started, waited for and removed through the same Docker Engine
  API.

The same three ways for a no-op job (``true``) isolate the sandbox's cost from the
verifier's own run-to-run variation. The target is on the warm worker's wall time for a
no-op job: ``warm container exec < 30 ms per job`` (PASS or MISS); the overheads over the
host and the ratio to one container per job are printed beside it, and the median time of
each of the three Docker-API calls a warm exec makes (create the exec, start it and read
its output to the end, read its exit status), made directly on a worker. Every Frama-C run must
exit 0, and the host's and the warm worker's outputs must give the same verdicts and goal
counts through the kit's parser and judge (else exit 1).

Needs ``DOCKER_HOST`` (or the default socket) and the framac image; ``--quick`` prints
``skipped: no container engine ...`` and exits 0 when no engine answers.
Usage: ``python scripts/bench_container.py [--quick] [--repeat N] [--json FILE] [--strict]``.
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
import time
from pathlib import Path

from benchlib import BenchFailure, engine_or_skip, kit_jobs, kit_plan, main

from harness.executor import derive
from harness.model import Limits
from harness.runner import open_sandbox, probe_toolchain

LIMITS = Limits(wall_s=300)
QUICK_TASKS = ["04_140"]
NOOP = ["true"]


def per_container(client, image: str, argv: list[str], files: dict, env: dict) -> tuple[float, int]:
    """Wall time and exit status of one job in its own container (create+start, wait,
    logs, remove)."""
    d = Path(tempfile.mkdtemp(prefix="verikit-bench-"))
    try:
        for rel, text in files.items():
            (d / rel).write_bytes(text if isinstance(text, bytes) else text.encode())
        t0 = time.perf_counter()
        c = client.containers.run(image, argv, detach=True, network_mode="none", read_only=True,
                                  mem_limit=f"{LIMITS.mem_mb}m", working_dir="/scratch",
                                  volumes={str(d): {"bind": "/scratch", "mode": "rw"}},
                                  environment={**env, "HOME": "/scratch", "TMPDIR": "/scratch", "PWD": "/scratch"})
        status = c.wait().get("StatusCode", -1)
        c.logs()
        c.remove(force=True)
        return time.perf_counter() - t0, status
    finally:
        shutil.rmtree(d, ignore_errors=True)


def api_calls(warm, n: int) -> dict:
    """Median milliseconds of each Docker-API call of a no-op exec (``true``, as the job
    user, in the scratch root) into one of ``warm``'s workers, ``n`` times: the request
    that makes the exec, the one that starts it and streams its output to the end, and
    the one that reads its exit status. The sandbox makes these three calls per job."""
    from harness.sandbox.container import JOB_USER, SCRATCH

    api = warm.client.api
    (worker, *_) = warm.client.containers.list(filters={"label": f"verikit.run={warm.run_id}"})
    times: dict[str, list[float]] = {"exec_create": [], "exec_start": [], "exec_inspect": []}
    for _ in range(n):
        t0 = time.perf_counter()
        exec_id = api.exec_create(worker.id, ["true"], workdir=SCRATCH, user=JOB_USER)["Id"]
        t1 = time.perf_counter()
        for _chunk in api.exec_start(exec_id, stream=True, demux=True):
            pass
        t2 = time.perf_counter()
        if api.exec_inspect(exec_id).get("ExitCode") != 0:
            raise BenchFailure("a no-op exec through the API did not exit 0")
        t3 = time.perf_counter()
        for key, dt in zip(times, (t1 - t0, t2 - t1, t3 - t2)):
            times[key].append(dt)
    return {k: round(statistics.median(v) * 1000, 1) for k, v in times.items()}


def timed(sandbox, argv, files, env, collect):
    t0 = time.perf_counter()
    proc = sandbox.run(argv, files=files, env=env, collect=collect, limits=LIMITS)
    return time.perf_counter() - t0, proc


def body(bench) -> dict:
    from harness.sandbox.container import connect

    keys = ("warm_exec_ms",)
    if not engine_or_skip(bench, keys):
        return {"skipped": True}
    task_ids = QUICK_TASKS if bench.args.quick else None
    host_plan = kit_plan("casp", ["gold"], "host", LIMITS, task_ids)
    warm_plan = kit_plan("casp", ["gold"], "container", LIMITS, task_ids)
    res = {"host": 0.0, "warm": 0.0, "per_container": 0.0, "noop_host": 0.0, "noop_warm": 0.0, "noop_per_container": 0.0}
    client = connect()
    with open_sandbox(host_plan, print) as (host, _), open_sandbox(warm_plan, print) as (warm, _):
        image = warm.image
        bench.step(f"probing the toolchains and planning the jobs (host, and warm workers of {image})")
        host_probed, host_shared = probe_toolchain(host_plan, host)
        warm_probed, warm_shared = probe_toolchain(warm_plan, warm)
        host_jobs, _ = kit_jobs(host_plan, host_probed)
        warm_jobs, _ = kit_jobs(warm_plan, warm_probed)
        warm.run(NOOP, limits=LIMITS)  # warm-up
        n = len(warm_jobs) * bench.args.repeat
        for rep in range(bench.args.repeat):
            bench.step(f"{len(warm_jobs)} jobs and as many no-op jobs, three ways (repetition {rep + 1})")
            for hj, wj in zip(host_jobs, warm_jobs):
                outcome = {}
                for where, sandbox, job, shared, v in (("host", host, hj, host_shared, host_plan.verifier),
                                                      ("warm", warm, wj, warm_shared, warm_plan.verifier)):
                    argv, env, collect = v.command(job.options)
                    wall, proc = timed(sandbox, argv, {**shared, **job.files}, env, collect)
                    if proc.returncode != 0:
                        raise BenchFailure(f"{where}: frama-c exited {proc.returncode} on {job.task_id}: "
                                           f"{(proc.stderr or proc.stdout)[-300:]} {proc.start_error or ''}")
                    res[where] += wall
                    verdict, reason, result = derive(v, job, proc, host_plan.bench.judge)
                    outcome[where] = (verdict, result.goals.to_json() if result and result.goals else None)
                if outcome["host"] != outcome["warm"]:
                    raise BenchFailure(f"{hj.task_id}: host {outcome['host']} but warm worker {outcome['warm']}")
                argv, env, _ = warm_plan.verifier.command(wj.options)
                wall, status = per_container(client, image, argv, {**warm_shared, **wj.files}, env)
                if status != 0:
                    raise BenchFailure(f"one container per job: frama-c exited {status} on {wj.task_id}")
                res["per_container"] += wall
                for where, sandbox in (("noop_host", host), ("noop_warm", warm)):
                    wall, proc = timed(sandbox, NOOP, {}, {}, ())
                    if proc.returncode != 0:
                        raise BenchFailure(f"{where}: 'true' exited {proc.returncode} {proc.start_error or ''}")
                    res[where] += wall
                wall, status = per_container(client, image, NOOP, {}, {})
                if status != 0:
                    raise BenchFailure(f"one container per job: 'true' exited {status}")
                res["noop_per_container"] += wall
        bench.step("the warm exec's Docker-API calls, one by one")
        calls = api_calls(warm, 5 if bench.args.quick else 30)
    client.close()
    out = {k: round(v / n * 1000, 1) for k, v in res.items()}  # ms per job
    out["api_calls_ms"] = calls
    out.update({
        "jobs": n, "tasks": [j.task_id for j in warm_jobs], "image": image, "unit": "ms per job", "quick": bench.args.quick,
        "overhead_warm_over_host_ms": round((res["warm"] - res["host"]) / n * 1000, 1),
        "overhead_noop_warm_over_host_ms": round((res["noop_warm"] - res["noop_host"]) / n * 1000, 1),
        "ratio_warm_over_per_container": round(res["warm"] / res["per_container"], 3),
        "ratio_noop_warm_over_per_container": round(res["noop_warm"] / res["noop_per_container"], 3),
    })
    print(f"per job, {n} casp gold jobs: host {out['host']} ms, warm worker {out['warm']} ms, "
          f"one container per job {out['per_container']} ms")
    print(f"no-op job: host {out['noop_host']} ms, warm worker {out['noop_warm']} ms, "
          f"one container per job {out['noop_per_container']} ms")
    print(f"warm worker over the host: {out['overhead_noop_warm_over_host_ms']:+} ms per no-op job, "
          f"{out['overhead_warm_over_host_ms']:+} ms per frama-c job")
    print(f"warm exec / one container per job: {out['ratio_warm_over_per_container']} (frama-c jobs), "
          f"{out['ratio_noop_warm_over_per_container']} (no-op)")
    print(f"a no-op exec's Docker-API calls (medians, ms): exec_create {calls['exec_create']}, exec_start (to the end "
          f"of its output) {calls['exec_start']}, exec_inspect (exit status) {calls['exec_inspect']}")
    bench.ratio("warm_exec_ms", out["noop_warm"],
                f"host {out['noop_host']} ms, one container per job {out['noop_per_container']} ms per no-op job")
    return out


if __name__ == "__main__":
    main("bench_container", __doc__, body)
