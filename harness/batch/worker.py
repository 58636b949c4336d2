"""What runs on the batch side, and what brings the results home, for every engine (AWS
Batch, SLURM): they share the manifest, the worker, the store interface
(:class:`harness.results.Store`: S3, or a directory on a shared filesystem) and collect.

- :func:`make_manifest` / :func:`upload_inputs` (submit): the run's plan as one file of
  the store, ``<run>/manifest.json``, with the dataset files and the predictions next to
  it, so workers need nothing but the store.
- :func:`work` (``verikit batch worker``: the runner image's command on AWS Batch, an
  array task's on SLURM): one shard's jobs, one store file per record; a job whose record
  exists is skipped, so a retried, requeued or resubmitted shard resumes.
- :func:`collect` (``verikit batch collect`` and the reducer): the records from the store,
  checked and de-duplicated by key, written as an ordinary run directory by the code that
  writes a local run's (:class:`harness.runner.Run`, :class:`harness.runner.RecordSink`).

The manifest holds the run's :class:`~harness.runspec.RunSpec` (``spec``: what workers and
the reducer plan from; the ``verikit run`` command the user gave is kept beside it for
provenance only, nothing parses it again), the toolchain probed in the runner image (keys
depend on it), every job's identity and expected cost, and the shards.
"""

from __future__ import annotations

import os
import re
import signal
from pathlib import Path

from ..model import utc_now
from ..resources import kit_info
from ..results import OUTPUTS, OutputStore, Store, ValidationError, open_store, write_text_atomic
from ..runner import RecordSink, Run, RunError, hold_run_dir_lock, start_run, write_report_html
from ..runspec import RunSettings, RunSpec, SpecError
from ..sandbox import HOST
from ..toolchains import ProbedToolchain

MANIFEST = "manifest.json"
MANIFEST_FORMAT = "verikit-batch-manifest/2"  # 2: the run is its ``spec`` (1: a command to re-parse)
#: What a worker's verifier read in its sandbox (``Verifier.state()``: Rocq's library
#: axioms), put once by the workers and restored by :func:`collect` for run.json.
VERIFIER_STATE = "verifier_state.json"


class ShardFailed(RuntimeError):
    """A shard cannot be trusted: the image's toolchain is not the planned one, a planned
    job is not made by the command, a record is not schema-valid, or a canary failed."""


def shard_index(env: dict | None = None) -> int:
    """The array index of this worker: ``AWS_BATCH_JOB_ARRAY_INDEX`` (AWS Batch), else
    ``SLURM_ARRAY_TASK_ID`` (SLURM), else ``JOB_COMPLETION_INDEX`` (Kubernetes indexed
    jobs), else the ``:N`` suffix of ``AWS_BATCH_JOB_ID`` (what moto sets for array
    children).

    Raises:
        ValueError: none of them is set (not an array job).
    """
    env = os.environ if env is None else env
    for name in ("AWS_BATCH_JOB_ARRAY_INDEX", "SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX"):
        if env.get(name, "").isdigit():
            return int(env[name])
    m = re.search(r":(\d+)$", env.get("AWS_BATCH_JOB_ID", ""))
    if m:
        return int(m.group(1))
    raise ValueError("no shard index: AWS_BATCH_JOB_ARRAY_INDEX, SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX and "
                     "an AWS_BATCH_JOB_ID ending in :N are all missing (give --shard N to run one shard by hand)")


def job_identity(job) -> dict:
    """What the manifest says of a job: mode, task id, model, sample."""
    return {"mode": job.mode, "task_id": job.task_id, "model": job.candidate["model"],
            "sample": job.candidate["sample"]}


def make_manifest(run_uri: str, spec: RunSpec, image: str | None, probed: ProbedToolchain, jobs: dict[str, dict],
                  shards: list[list[str]], inputs: dict, *, command: list[str] | tuple[str, ...] = (),
                  backend: str = "aws-batch") -> dict:
    """The manifest of a batch run.

    Args:
        run_uri: the store of the run (``s3://bucket/prefix/<run id>`` or an absolute
            directory); spec: the run, as planned (:meth:`harness.runner.Plan.spec`:
            resolved modes and task ids; its sandbox is where workers run the jobs);
            image: the runner image (AWS Batch), or None (SLURM: the spec's sandbox);
            probed: the toolchain probed where the jobs will run; jobs: key -> identity +
            ``cost_s``; shards: lists of keys; inputs: what :func:`upload_inputs`
            returned; command: the user's command line (provenance only); backend:
            ``aws-batch`` or ``slurm``.
    """
    return {"format": MANIFEST_FORMAT, "run_uri": run_uri, "backend": backend, "created_at": utc_now(), "kit": kit_info(),
            "command": list(command), "spec": spec.to_json(), "benchmark": spec.benchmark, "modes": list(spec.modes),
            "image": image, "toolchain": probed.to_json(), "limits": spec.limits.to_json(), "parallel": spec.parallel,
            "inputs": inputs, "jobs": jobs, "shards": shards}


def upload_inputs(store: Store, fetched, predictions: str | None) -> dict:
    """Put the dataset's files (in the data-cache layout, under ``data/``) and the
    predictions file next to the manifest; returns ``{"data": {layout path: sha256},
    "predictions": name or None}``. A worker fetches the dataset from that copy, and the
    fetch checks every file's sha256 as from any mirror.

    Raises:
        RunError: a local dataset (``--dataset PATH``): batch runs take pinned datasets.
    """
    if fetched.dataset.source.kind == "local":
        raise RunError("a batch run (--backend aws-batch or slurm) takes pinned datasets; a local dataset "
                       "(--dataset PATH) is not staged (pin it first: 'verikit datasets pin DIR' prints its entry)")
    data = {}
    for ref in fetched.dataset.files:
        layout = fetched.dataset.layout_path(ref.path)
        store.put_bytes(f"data/{layout}", Path(fetched.files[ref.path]).read_bytes())
        data[layout] = ref.sha256
    name = None
    if predictions:
        name = "inputs/predictions.jsonl"
        store.put_bytes(name, Path(predictions).read_bytes())
    return {"data": data, "predictions": name}


def stage_inputs(store: Store, manifest: dict, where: Path) -> tuple[Path, Path | None]:
    """Download the run's inputs into ``where``: ``(data dir, predictions path or None)``."""
    data_dir = where / "data"
    for layout in manifest["inputs"]["data"]:
        target = data_dir / layout
        target.parent.mkdir(parents=True, exist_ok=True)
        body = store.get_bytes(f"data/{layout}")
        if body is None:
            raise ShardFailed(f"{store.uri}/data/{layout}: missing")
        target.write_bytes(body)
    preds = None
    if manifest["inputs"].get("predictions"):
        preds = where / "predictions.jsonl"
        body = store.get_bytes(manifest["inputs"]["predictions"])
        if body is None:
            raise ShardFailed(f"{store.uri}/{manifest['inputs']['predictions']}: missing")
        preds.write_bytes(body)
    return data_dir, preds


def load_manifest(uri: str, client=None) -> tuple[Store, dict]:
    """``(store of the run, manifest)`` from the manifest's URI or the run's URI (an
    ``s3://`` URI or an absolute directory; :func:`harness.results.open_store`).

    Raises:
        RunError: no manifest there, or not one of this format.
    """
    run_uri = uri[:-len("/" + MANIFEST)] if uri.endswith("/" + MANIFEST) else uri.rstrip("/")
    try:
        store = open_store(run_uri, client)
        manifest = store.get_json(MANIFEST)
    except (ValueError, OSError) as exc:
        raise RunError(str(exc)) from None
    if manifest is None:
        raise RunError(f"{run_uri}/{MANIFEST}: no such file (is {run_uri} a batch run?)")
    if manifest.get("format") != MANIFEST_FORMAT:
        raise RunError(f"{run_uri}/{MANIFEST}: not a {MANIFEST_FORMAT} manifest")
    return store, manifest


def _planned(run: Run, manifest: dict):
    """The jobs of ``run`` (the manifest's spec, planned, with its toolchain) by key and
    the canaries' expected verdicts; checks that they include every job of the manifest.

    Raises:
        ShardFailed: a job of the manifest is not one of them.
    """
    jobs, expected = run.jobs()
    by_key = dict(zip(run.keys(jobs), jobs))
    unknown = sorted(set(manifest["jobs"]) - set(by_key))
    if unknown:
        raise ShardFailed(f"{len(unknown)} job(s) of the manifest are not made by its spec here (first: "
                          f"{manifest['jobs'][unknown[0]]}): the kit, the dataset or the toolchain differs")
    return by_key, expected


def work(spec: RunSpec, settings: RunSettings, store: Store, manifest: dict, shard: int, console) -> dict:
    """Run shard ``shard`` of a batch run through the run pipeline (:class:`harness.runner.Run`;
    ``spec`` and ``settings`` are :func:`worker_spec`'s: the manifest's spec and the staged
    inputs).

    For each job of the shard whose record file is missing (one listing of
    ``records/``), run it and put its record as ``records/<key>.json``; a job that still
    ends in ``infra_error`` after the executor's retries goes to ``infra_errors/<key>.json``
    instead (our side failed: not a result), so a resubmission runs it again, as a local
    resume does. SIGTERM (the spot interruption notice, ``docker stop``, ``scancel``, or
    the SLURM batch script passing on the signal sent before the time limit) lets the
    running job finish and starts no other; the next attempt of the shard resumes.
    ``stopped`` in the summary: a stop left jobs of the shard without a record (a stop
    that came after the last job is not one).

    Returns:
        ``{"shard", "jobs", "skipped", "ran", "infra_error", "stopped", "canary_failures",
        "store_requests", "wall_s"}``.

    Raises:
        ShardFailed: toolchain or jobs differ from the plan, a record is not
            schema-valid, or (after the shard) a canary got an unexpected verdict.
        IndexError: no such shard.
    """
    import time

    t0 = time.monotonic()
    keys = manifest["shards"][shard]
    planned = ProbedToolchain.from_json(manifest["toolchain"])
    pipeline = Run(spec, console, settings=settings)
    with pipeline.opened(console.print):
        probed = pipeline.probed
        if probed.fingerprint != planned.fingerprint:
            raise ShardFailed(f"the toolchain in this image ({probed.fingerprint[:12]}: {probed.versions}) is not the "
                              f"one the run was planned with ({planned.fingerprint[:12]}: {planned.versions})")
        by_key, expected = _planned(pipeline, manifest)
        state = pipeline.plan.verifier.state()
        if state:  # what prepare() read in this sandbox: collect writes it to run.json for validate
            store.put_json(VERIFIER_STATE, state)
        done = store.record_keys()
        todo = [by_key[k] for k in keys if k not in done]
        executor = pipeline.make_executor()
        bad: list[str] = []

        def put(record: dict) -> None:
            if record["verdict"] == "infra_error":  # our side failed: not a result; the shard's next attempt retries it
                store.put_json(f"infra_errors/{record['key']}.json", record)
                return
            try:
                if record.get("tool_output"):  # the output first: a record never names a missing output
                    store.put_output(executor.outputs, record["tool_output"]["sha256"])
                store.put_record(record)
            except ValidationError as exc:
                bad.append(str(exc))

        previous = signal.signal(signal.SIGTERM, lambda s, f: executor.drain())
        try:
            records = pipeline.execute_scratch(todo, put, prefix="verikit-shard-")
        finally:
            signal.signal(signal.SIGTERM, previous)
    if bad:
        raise ShardFailed(f"{len(bad)} record(s) are not valid and were not stored: {bad[0]}")
    failures = []
    for rec in records:
        want = expected.get((rec["mode"], rec["candidate"]["model"]))
        if want is not None and rec["verdict"] not in want and rec["verdict"] != "infra_error":  # infra: retried
            failures.append(f"canary {rec['candidate']['model']} on {rec['task_id']} ({rec['mode']}): "
                            f"{rec['verdict']} ({rec['reason']}), expected {'/'.join(sorted(want))}")
    stats = executor.stats
    summary = {"shard": shard, "jobs": len(keys), "skipped": len(keys) - len(todo), "ran": stats.ran,
               "infra_error": stats.infra_error, "stopped": executor.draining and len(records) < len(todo),
               "canary_failures": failures, "store_requests": store.requests, "wall_s": round(time.monotonic() - t0, 3)}
    if failures:
        raise ShardFailed(f"{len(failures)} canary failure(s): {failures[0]}")
    return summary


def collect(spec: RunSpec, settings: RunSettings, out: Path, store: Store, manifest: dict,
            console) -> tuple[int, list[str]]:
    """Write the batch run as an ordinary run directory ``out`` through the run
    pipeline: the manifest's spec planned as a :class:`~harness.runner.Run` with the
    toolchain the jobs were planned with (nothing runs, no sandbox is opened), the records
    from the store (each checked: schema, key recomputed, object name = key) into the run
    directory's sink (:class:`~harness.runner.RecordSink`, rewritten whole: one record per job
    key, in plan order), their tool outputs beside them, then report.json, run.json and
    SHA256SUMS by :meth:`~harness.runner.Run.write` and report.html, as a local run writes
    them; ``missing.txt`` names the planned jobs without a record. The directory is locked
    while it is written. What the workers' verifier read in its sandbox
    (:data:`VERIFIER_STATE`, put by :func:`work`) is restored first, so run.json carries
    it as a local run's does and ``verikit validate`` judges with it.

    Returns:
        ``(exit code, missing)``: exit code as ``verikit run`` (0 complete, 3 canaries,
        4 infra errors or jobs without a record), and ``"<mode> <task> <model> #<sample>"``
        of each planned job without a record.

    Raises:
        ShardFailed: a job of the manifest is not made by its spec here.
        RunError: as :func:`harness.runner.plan_run`; ``out`` is in use or not writable.
    """
    started = start_run()
    run = Run(spec, console, settings=settings, probed=ProbedToolchain.from_json(manifest["toolchain"]))
    _, expected = _planned(run, manifest)
    # what the workers' verifier read (run.json verifier_state)
    run.plan.verifier.restore(store.get_json(VERIFIER_STATE) or {})
    found, problems = store.records()
    for p in problems:
        console.print(f"[yellow]warning:[/] {p}: left out")
    order = [k for shard in manifest["shards"] for k in shard]
    strangers = sorted(set(found) - set(order))
    for k in strangers:
        console.print(f"[yellow]warning:[/] {store.uri}/records/{k}.json is not a job of this run: left out")
    missing = [k for k in order if k not in found]
    described = [f"{manifest['jobs'][k]['mode']} {manifest['jobs'][k]['task_id']} {manifest['jobs'][k]['model']} "
                 f"#{manifest['jobs'][k]['sample']}" for k in missing]
    where = (f"SLURM, sandbox {spec.sandbox}" if manifest.get("backend") == "slurm"
             else f"AWS Batch, image {manifest['image']}")
    notes = [f"collected from {store.uri} ({where}); {len(order) - len(missing)} of {len(order)} planned jobs have "
             f"a record"]
    if missing:
        notes.append(f"{len(missing)} planned job(s) have no record (resubmit the run): {', '.join(described[:5])}")
    if problems or strangers:
        notes.append(f"{len(problems) + len(strangers)} record object(s) were left out: "
                     f"{(problems or [f'{k} is not a job of this run' for k in strangers])[0]}")
    with hold_run_dir_lock(out):
        sink = RecordSink(out, console, fresh=True)  # collect writes the whole run from the store again
        for k in order:
            if k in found:
                sink.log.append(found[k])
        records = sink.close(order)
        lost = store.get_outputs(OutputStore(out / OUTPUTS),
                                 [r["tool_output"]["sha256"] for r in records if r.get("tool_output")])
        if lost:
            console.print(f"[yellow]warning:[/] {len(lost)} tool output(s) named by records are not in "
                          f"{store.uri}/outputs/: 'verikit validate' will say their verdicts cannot be re-derived")
        stats = {"jobs": len(records), "ran": len(records), "cached": 0, "resumed": 0,
                 "infra_error": sum(r["verdict"] == "infra_error" for r in records),
                 "verifier_runs": sum(r["attempts"] for r in records)}
        image = {"ref": manifest["image"], "id": manifest["toolchain"].get("image_digest")} if manifest["image"] else None
        _, _, code = run.write(out, started, records, expected, stats, notes=notes, image=image)
        write_report_html(out, console)
        if missing:
            write_text_atomic(out / "missing.txt", "".join(f"{k} {d}\n" for k, d in zip(missing, described)))
        else:  # an earlier collect's list is no longer true
            (out / "missing.txt").unlink(missing_ok=True)
    return code or (4 if missing else 0), described


def worker_spec(store: Store, manifest: dict, where: Path) -> tuple[RunSpec, RunSettings]:
    """``(spec, settings)`` of a worker, the reducer or ``batch collect``: the manifest's
    spec (on AWS Batch with the host sandbox: in the runner image the container is the
    sandbox; on SLURM with the spec's own sandbox) with the inputs staged from the store
    into ``where``; no cache, no progress bar.

    Raises:
        RunError: the manifest's spec cannot be read (names the key).
    """
    try:
        spec = RunSpec.from_json(manifest.get("spec"))
    except SpecError as exc:
        raise RunError(f"{store.uri}/{MANIFEST}: {exc}") from None
    data_dir, preds = stage_inputs(store, manifest, where)
    spec = spec.replace(predictions=str(preds) if preds else None, parallel=manifest.get("parallel", spec.parallel))
    if manifest.get("backend", "aws-batch") == "aws-batch":
        spec = spec.replace(sandbox=HOST)
    return spec, RunSettings(data_dir=data_dir, use_cache=False, progress=False,
                             command=tuple(manifest.get("command") or ()))
