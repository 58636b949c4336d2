"""A batch run from the user's side: plan and submit, status, resubmit, cancel, for every
engine (:class:`Engine`: AWS Batch in :mod:`.aws`, SLURM in :mod:`.slurm`).

A batch run lives in a store (:class:`harness.results.Store`) at
``<base>/<benchmark>-<UTC time>-<8 hex>`` (``--s3 s3://BUCKET/PREFIX`` or ``--store DIR``):
``manifest.json`` (the plan), ``data/`` and ``inputs/`` (what workers read),
``records/<key>.json`` (one file per finished job), ``submissions.json`` (the engine, its
settings and every array job submitted for the run) and, once reduced, ``records.jsonl``,
``report.json``, ``run.json`` and ``SHA256SUMS``. Planning, the manifest, the worker, the
store and collect are the same for every engine; an engine only submits, tells the state
of its array tasks and cancels them.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Protocol

from ..model import utc_now
from ..results import Store, load_records, open_store, write_json_atomic
from ..runner import Run, RunError
from ..runspec import RunSettings, RunSpec
from ..toolchains import ProbedToolchain
from .shards import estimate, expected_costs
from .shards import shards as make_shards
from .worker import MANIFEST, job_identity, load_manifest, make_manifest, upload_inputs

SUBMISSIONS = "submissions.json"


class Engine(Protocol):
    """What differs between batch engines: submission, the state of array tasks,
    cancellation.

    Attributes:
        backend: ``aws-batch`` or ``slurm`` (the manifest's and submissions.json's
            ``backend``); label: its name in ``batch status`` lines.
    """

    backend: str
    label: str

    def settings(self) -> dict:
        """What submissions.json keeps of the engine, so that resubmit and cancel find it again."""
        ...

    def submit(self, store: Store, name: str, shards: list[int], attempt_s: int) -> dict:
        """Submit one array job whose tasks run ``shards`` of the run in ``store``
        (``verikit batch worker``), each attempt limited to ``attempt_s`` seconds; ``name``
        names it. Returns the submission: ``{"array_job_id", "shards", ...}``. Raises
        RunError when the engine refuses it (nothing submitted)."""
        ...

    def statuses(self, submission: dict) -> dict[int, dict]:
        """Shard -> ``{"state", "reason", "job_id"}`` of each array task of
        ``submission`` the engine still knows."""
        ...

    def cancel(self, submission: dict) -> list[str]:
        """Cancel every array task of ``submission`` that has not ended; returns the job
        ids asked to stop."""
        ...

    def dry_run_text(self) -> str:
        """What a dry run would have submitted (API calls, a batch script)."""
        ...


def plan_batch(spec: RunSpec, settings: RunSettings, console, probed: ProbedToolchain, n_shards: int,
               timings: Path | None = None) -> tuple[object, dict[str, dict], list[list[str]], dict]:
    """The jobs of ``spec`` planned as a :class:`~harness.runner.Run` with toolchain
    ``probed`` (the same jobs and keys as a local run with it), their expected costs and
    the shards.

    Args:
        timings: a previous run directory whose records' ``timings.wall_s`` estimate the
            cost of each job (else every job counts the same).

    Returns:
        ``(plan, jobs: key -> identity + cost_s, shards, estimate)``; the estimate is
        :func:`~harness.batch.shards.estimate`'s plus ``job_wall_s`` and ``job_mem_mb``,
        the largest wall-time (s) and memory (MiB) limit of any job.

    Raises:
        RunError: as :func:`harness.runner.run`; ``n_shards`` out of range.
    """
    run = Run(spec, console, settings=settings, probed=probed)
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
    limits = [j.limits or spec.limits for j in keyed.values()] or [spec.limits]
    est = {**estimate(costs, split, spec.limits.cpus), "job_wall_s": max(lim.wall_s for lim in limits),
           "job_mem_mb": max(lim.mem_mb for lim in limits)}
    return run.plan, described, split, est


def probe_here(spec: RunSpec, settings: RunSettings, console) -> ProbedToolchain:
    """The toolchain of ``spec``'s verifier probed here, in the run's sandbox (opened and
    closed again): what SLURM's workers will run the jobs with, on nodes like this one
    (each worker probes its own and refuses to run a shard when it differs).

    Raises:
        RunError: as :meth:`harness.runner.Run.opened` (no sandbox or image).
    """
    with Run(spec, console, settings=settings).opened(lambda m: console.print(m, markup=False, highlight=False)) as run:
        return run.probed


def submit_run(spec: RunSpec, settings: RunSettings, console, *, base: str, engine: Engine, probed: ProbedToolchain,
               n_shards: int, timings: Path | None, image: str | None = None, dry_run: bool = False,
               planned=None) -> dict:
    """Plan ``spec`` and submit it to ``engine`` (see the module docstring for the layout).

    Args:
        spec: the run (the manifest stores it as planned: workers and the reducer plan
            from it); settings: its settings (``settings.command`` is kept for
            provenance); base: where runs go
            (``s3://BUCKET/PREFIX`` or an absolute directory): the run's store is a new
            folder in it; engine: where it is submitted; probed: the toolchain the jobs
            will run with (keys depend on it); image: the runner image (AWS Batch), or None;
            dry_run: show what would be submitted (:meth:`Engine.dry_run_text`), write
            nothing; planned: :func:`plan_batch`'s result when the caller already has it.

    Returns:
        The local ``batch.json`` content: ``{"run_uri", "backend", <engine settings>,
        "image", "submissions": [...], "estimate"}``.

    Raises:
        RunError: as :func:`plan_batch`, or the engine refused the submission.
    """
    plan, jobs, split, est = planned or plan_batch(spec, settings, console, probed, n_shards, timings)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    digest = hashlib.sha256(json.dumps(sorted(jobs), separators=(",", ":")).encode()).hexdigest()[:8]
    try:
        store = open_store(f"{base.rstrip('/')}/{spec.benchmark}-{stamp}-{digest}")
    except ValueError as exc:
        raise RunError(str(exc)) from None
    if not dry_run:
        inputs = upload_inputs(store, plan.fetched, spec.predictions)
        store.put_json(MANIFEST, make_manifest(store.uri, plan.spec(), image, probed, jobs, split, inputs,
                                               command=settings.command, backend=engine.backend))
    sub = engine.submit(store, store.run_name, list(range(len(split))), attempt_seconds(split, est["job_wall_s"],
                                                                                          spec.parallel))
    sub["submitted_at"] = utc_now()
    info = {"run_uri": store.uri, "backend": engine.backend, **engine.settings(), "image": image,
            "submissions": [sub], "estimate": est}
    if dry_run:
        console.print(engine.dry_run_text(), markup=False, highlight=False)
    else:
        store.put_json(SUBMISSIONS, info)
    return info


def attempt_seconds(split: list[list[str]], wall_s: float, parallel: int) -> int:
    """A shard attempt's time limit: its jobs' worst case (each job's wall limit
    ``wall_s``, retries aside) divided by the jobs it runs at once, plus 10 minutes for
    start-up; at least an hour."""
    worst = max(len(s) for s in split) * wall_s / max(1, parallel)
    return int(max(3600, worst + 600))


def submissions(store: Store) -> dict:
    """The run's submissions.json (``{"submissions": []}`` when there is none)."""
    return store.get_json(SUBMISSIONS) or {"submissions": []}


def status(store: Store, manifest: dict, engine: Engine | None) -> dict:
    """Where a batch run stands: ``{"shards": {n: {"jobs", "done", "infra_errors", "state",
    "scheduler"}}, "jobs", "done", "reduced"}`` (done: jobs with a record file;
    infra_errors: jobs without one whose last attempt failed on our side; state: ``done``,
    ``partial`` or ``empty``; scheduler: the latest submission's array task as the engine
    tells it, ``{"state", "reason", "job_id"}``, or None)."""
    have = store.record_keys()
    infra = {n[len("infra_errors/"):-len(".json")] for n in store.names("infra_errors/")} - have
    latest: dict[int, dict] = {}
    for sub in submissions(store)["submissions"]:
        if engine is not None and sub.get("array_job_id"):
            latest.update(engine.statuses(sub))
    shards = {}
    for n, keys in enumerate(manifest["shards"]):
        done = sum(k in have for k in keys)
        shards[n] = {"jobs": len(keys), "done": done, "infra_errors": sum(k in infra for k in keys),
                     "state": "done" if done == len(keys) else "partial" if done else "empty",
                     "scheduler": latest.get(n)}
    return {"shards": shards, "jobs": len(manifest["jobs"]), "done": len(have & set(manifest["jobs"])),
            "reduced": store.exists("SHA256SUMS")}


def resubmit(store: Store, manifest: dict, engine: Engine, *, dry_run: bool = False, console=None) -> dict | None:
    """Submit again only the shards that have jobs without a record (a new array job
    over those shards; on AWS Batch with a new reducer). Returns the submission, or None
    when every job has its record."""
    st = status(store, manifest, None)
    missing = [n for n, s in st["shards"].items() if s["state"] != "done"]
    if not missing:
        return None
    info = submissions(store)
    n = len(info.get("submissions", []))
    wall_s = info.get("estimate", {}).get("job_wall_s", manifest["limits"]["wall_s"])
    attempt_s = attempt_seconds([manifest["shards"][i] for i in missing], wall_s, manifest.get("parallel", 1))
    sub = engine.submit(store, f"{store.run_name}-r{n}", missing, attempt_s)
    sub["submitted_at"] = utc_now()
    if dry_run:
        if console is not None:
            console.print(engine.dry_run_text(), markup=False, highlight=False)
        return sub
    info.setdefault("submissions", []).append(sub)
    store.put_json(SUBMISSIONS, info)
    return sub


def cancel(store: Store, engine: Engine) -> list[str]:
    """Cancel every submission's array tasks that have not ended (records already written
    stay; ``batch resubmit`` later runs the rest). Returns the job ids asked to stop."""
    stopped = []
    for sub in submissions(store)["submissions"]:
        if sub.get("array_job_id"):
            stopped += engine.cancel(sub)
    return stopped


def write_local(out: Path, info: dict) -> Path:
    """Write ``batch.json`` (what was submitted, and where) into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out / "batch.json", info)
    return out / "batch.json"


__all__ = ["Engine", "plan_batch", "probe_here", "submit_run", "status", "resubmit", "cancel", "submissions", "write_local",
           "load_manifest", "attempt_seconds"]
