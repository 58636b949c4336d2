"""A batch run from the user's side: plan and submit, status, resubmit.

A batch run lives at ``<--s3>/<benchmark>-<UTC time>-<8 hex>``: ``manifest.json`` (the
plan), ``data/`` and ``inputs/`` (what workers read), ``records/<key>.json`` (one object
per finished job), ``submissions.json`` (every array job submitted for it) and, once the
reducer ran, ``records.jsonl``, ``report.json``, ``run.json`` and ``SHA256SUMS``.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timezone
from pathlib import Path

from ..model import utc_now
from ..results import S3Store, load_records, write_json_atomic
from ..runner import Run, RunError, RunOptions
from ..toolchains import ProbedToolchain
from . import aws
from .plan import estimate, expected_costs
from .plan import shards as make_shards
from .worker import job_identity, load_manifest, make_manifest, upload_inputs

SUBMISSIONS = "submissions.json"


def plan_batch(opts: RunOptions, console, probed: ProbedToolchain, n_shards: int,
               timings: Path | None = None) -> tuple[object, dict[str, dict], list[list[str]], dict]:
    """The jobs of ``opts`` planned as a :class:`~harness.runner.Run` with toolchain
    ``probed`` (the same jobs and keys as a local run with it), their expected costs and
    the shards.

    Args:
        timings: a previous run directory whose records' ``timings.wall_s`` estimate the
            cost of each job (else every job counts the same).

    Returns:
        ``(plan, jobs: key -> identity + cost_s, shards, estimate)``.

    Raises:
        RunError: as :func:`harness.runner.run`; ``n_shards`` out of range.
    """
    run = Run(opts, console, probed=probed)
    jobs, _ = run.jobs()
    keyed = {}
    for k, j in zip(run.keys(jobs), jobs):
        keyed.setdefault(k, j)
    previous = load_records(timings / "records.jsonl") if timings else None
    idents = {k: tuple(job_identity(j).values()) for k, j in keyed.items()}
    costs = expected_costs(list(keyed), idents, previous)
    try:
        split = make_shards(costs, n_shards)
    except ValueError as exc:
        raise RunError(str(exc)) from None
    described = {k: {**job_identity(j), "cost_s": round(costs[k], 3)} for k, j in keyed.items()}
    return run.plan, described, split, estimate(costs, split, opts.limits.cpus)


def submit_run(opts: RunOptions, console, *, s3: str, image: str, probed: ProbedToolchain,
               queue: str, n_shards: int, timings: Path | None, batch, s3_client=None,
               dry_run: bool = False) -> dict:
    """Plan ``opts`` and submit it to AWS Batch (see the module docstring for the layout).

    Args:
        opts: the run (the manifest stores its spec as planned: workers and the reducer
            plan from it; ``opts.command`` is kept for provenance); image: the runner image
            as the job definition names it; probed: the toolchain probed in it (its label);
            batch, s3_client: boto3 clients; dry_run: print the AWS Batch calls, write
            nothing to S3.

    Returns:
        The local ``batch.json`` content: ``{"run_uri", "queue", "job_definition",
        "submissions": [...], "estimate"}``.
    """
    plan, jobs, split, est = plan_batch(opts, console, probed, n_shards, timings)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    digest = hashlib.sha256(json.dumps(sorted(jobs), separators=(",", ":")).encode()).hexdigest()[:8]
    store = S3Store(f"{s3.rstrip('/')}/{opts.benchmark}-{stamp}-{digest}", s3_client)
    definition = aws.job_definition_name(probed.name)
    calls = aws.Calls(dry_run=dry_run)
    if not dry_run:
        inputs = upload_inputs(store, plan.fetched, opts.predictions)
        store.put_json("manifest.json", make_manifest(store.uri, plan.spec(opts), image, probed, jobs, split, inputs,
                                                      command=opts.command))
    attempt_s = _attempt_seconds(split, opts.limits.wall_s, opts.parallel)
    sub = aws.submit(batch, run_uri=store.uri, name=store.prefix.rsplit("/", 1)[-1], job_definition=definition,
                     queue=queue, shards=list(range(len(split))), attempt_s=attempt_s, calls=calls)
    sub["submitted_at"] = utc_now()
    info = {"run_uri": store.uri, "queue": queue, "job_definition": definition, "image": image,
            "submissions": [sub], "estimate": est}
    if dry_run:
        console.print(calls.to_text(), markup=False, highlight=False)
    else:
        store.put_json(SUBMISSIONS, info)
    return info


def _attempt_seconds(split: list[list[str]], wall_s: float, parallel: int) -> int:
    """A shard attempt's time limit: its jobs' worst case (each job's wall limit
    ``wall_s``, retries aside) divided by the jobs it runs at once, plus 10 minutes for
    start-up; at least an hour."""
    worst = max(len(s) for s in split) * wall_s / max(1, parallel)
    return int(max(3600, worst + 600))


def status(store: S3Store, manifest: dict, batch) -> dict:
    """Where a batch run stands: ``{"shards": {n: {"jobs", "done", "infra_errors", "state",
    "aws"}}, "jobs", "done", "reduced"}`` (done: jobs with a record object; infra_errors:
    jobs without one whose last attempt failed on our side; state: ``done``,
    ``partial`` or ``empty``; aws: the latest submission's child status, if any)."""
    have = {n[len("records/"):-len(".json")] for n in store.names("records/")}
    infra = {n[len("infra_errors/"):-len(".json")] for n in store.names("infra_errors/")} - have
    info = store.get_json(SUBMISSIONS) or {"submissions": []}
    latest: dict[int, dict] = {}
    for sub in info["submissions"]:
        if batch is not None and sub.get("array_job_id"):
            latest.update(aws.child_statuses(batch, sub))
    shards = {}
    for n, keys in enumerate(manifest["shards"]):
        done = sum(k in have for k in keys)
        shards[n] = {"jobs": len(keys), "done": done, "infra_errors": sum(k in infra for k in keys),
                     "state": "done" if done == len(keys) else "partial" if done else "empty",
                     "aws": latest.get(n)}
    return {"shards": shards, "jobs": len(manifest["jobs"]), "done": len(have & set(manifest["jobs"])),
            "reduced": store.exists("SHA256SUMS")}


def resubmit(store: S3Store, manifest: dict, batch, *, queue: str | None = None, dry_run: bool = False,
             console=None) -> dict | None:
    """Submit again only the shards that have jobs without a record (a new array job
    over those shards, and a new reducer). Returns the submission, or None when every
    job has its record."""
    st = status(store, manifest, None)
    missing = [n for n, s in st["shards"].items() if s["state"] != "done"]
    if not missing:
        return None
    info = store.get_json(SUBMISSIONS) or {}
    queue = queue or info.get("queue") or aws.JOB_QUEUE
    calls = aws.Calls(dry_run=dry_run)
    attempt_s = _attempt_seconds([manifest["shards"][n] for n in missing], manifest["limits"]["wall_s"],
                                 manifest.get("parallel", 1))
    n = len(info.get("submissions", []))
    sub = aws.submit(batch, run_uri=store.uri, name=f"{store.prefix.rsplit('/', 1)[-1]}-r{n}",
                     job_definition=info.get("job_definition") or aws.job_definition_name(manifest["toolchain"]["name"]),
                     queue=queue, shards=missing, attempt_s=attempt_s, calls=calls)
    sub["submitted_at"] = utc_now()
    if dry_run:
        if console is not None:
            console.print(calls.to_text(), markup=False, highlight=False)
        return sub
    info.setdefault("submissions", []).append(sub)
    store.put_json(SUBMISSIONS, info)
    return sub


def write_local(out: Path, info: dict) -> Path:
    """Write ``batch.json`` (what was submitted, and where) into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out / "batch.json", info)
    return out / "batch.json"


__all__ = ["plan_batch", "submit_run", "status", "resubmit", "write_local", "load_manifest"]
