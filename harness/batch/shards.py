"""The shards of a batch run: its jobs split into shards balanced by expected cost, and
estimates.

Pure functions over job keys and costs (seconds), no AWS call.
"""

from __future__ import annotations

import heapq

#: AWS Batch's largest array job (``arrayProperties.size``); source: AWS Batch user guide,
#: "Array jobs" (2 to 10,000 children).
MAX_ARRAY_SIZE = 10_000


def expected_costs(keys: list[str], identities: dict[str, tuple], timings: list[dict] | None) -> dict[str, float]:
    """Expected wall time (s) of each job.

    Args:
        keys: job keys of the run.
        identities: key -> ``(mode, task_id, model, sample)`` of the job.
        timings: records of a previous run (any run of the same benchmark), or None.

    Returns:
        key -> seconds: the previous record's ``timings.wall_s`` for the same job key, else
        for the same ``(mode, task_id)`` (mean over models and samples), else the mean of all
        previous timings, else 1.0 (without timings every job costs the same: shards are
        balanced by job count).
    """
    if not timings:
        return {k: 1.0 for k in keys}
    by_key, by_task = {}, {}
    for r in timings:
        wall = (r.get("timings") or {}).get("wall_s")
        if wall is None:
            continue
        by_key[r["key"]] = float(wall)
        by_task.setdefault((r["mode"], r["task_id"]), []).append(float(wall))
    everything = [w for ws in by_task.values() for w in ws]
    default = sum(everything) / len(everything) if everything else 1.0
    out = {}
    for k in keys:
        mode, task_id = identities[k][:2]
        if k in by_key:
            out[k] = by_key[k]
        elif (mode, task_id) in by_task:
            ws = by_task[(mode, task_id)]
            out[k] = sum(ws) / len(ws)
        else:
            out[k] = default
    return out


def shards(costs: dict[str, float], n: int) -> list[list[str]]:
    """Split jobs into ``n`` shards of near-equal total cost: longest-processing-time
    first (each job, most expensive first, goes to the shard with the least total so
    far; Graham 1969, within 4/3 of the optimal makespan). Ties break on the key, so the
    split is deterministic.

    Args:
        costs: job key -> expected seconds.
        n: number of shards, 1..``MAX_ARRAY_SIZE``; fewer shards are made when there are
            fewer jobs.

    Returns:
        Non-empty shards, each a list of keys (in the order they will run: longest first).

    Raises:
        ValueError: ``n`` out of range.
    """
    if not 1 <= n <= MAX_ARRAY_SIZE:
        raise ValueError(f"--shards must be between 1 and {MAX_ARRAY_SIZE} (an AWS Batch array job's size), not {n}")
    n = min(n, max(1, len(costs)))
    heap = [(0.0, i) for i in range(n)]
    out: list[list[str]] = [[] for _ in range(n)]
    for key in sorted(costs, key=lambda k: (-costs[k], k)):
        total, i = heapq.heappop(heap)
        out[i].append(key)
        heapq.heappush(heap, (total + costs[key], i))
    return [s for s in out if s]


def estimate(costs: dict[str, float], plan: list[list[str]], cpus_per_job: float) -> dict:
    """What a plan costs: ``{"jobs", "shards", "cpu_hours", "longest_shard_s",
    "total_s"}`` (CPU-hours = expected job seconds x CPUs per job / 3600)."""
    per_shard = [sum(costs[k] for k in s) for s in plan]
    total = sum(per_shard)
    return {"jobs": sum(len(s) for s in plan), "shards": len(plan), "total_s": round(total, 1),
            "longest_shard_s": round(max(per_shard, default=0.0), 1),
            "cpu_hours": round(total * cpus_per_job / 3600, 3)}
