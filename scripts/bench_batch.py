"""Benchmark: a batch worker's per-job overhead over a local host-sandbox run of the same
jobs.

Measures, in one run on this machine, on casp-sample10 in code-from-spec mode (10 gold
answers, 10 canaries; the real Frama-C, host sandbox, no cache, one job at a time):

- ``local``: ``verikit run casp --mode code-from-spec --sandbox host -j 1 --no-cache``;
- ``worker``: the same jobs as one shard of a batch run (``verikit batch worker``): the
  manifest, the dataset and the records in S3, here moto's in-process S3 through the real
  boto3 client (so S3 latency is a local call's, and the round trips per job are counted
  for you to multiply by your region's S3 latency).

Prints ``worker / local`` (target <= 1.05, PASS or MISS) and the S3 requests per job. The
two are run alternately ``--repeat`` times (default 2) and the medians compared. The
worker must record every job, with the local run's verdicts (else exit 1).

``--quick``: gold mode on two small pairs (02_12, 04_140; no canaries), once.
Usage: ``python scripts/bench_batch.py [--quick] [--repeat N] [--json FILE] [--strict]``
(needs VERIKIT_DATA_MIRRORS or network for the dataset).
"""

from __future__ import annotations

import io
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import boto3
from benchlib import BenchFailure, main
from moto import mock_aws
from rich.console import Console

from harness.batch import worker
from harness.batch.control import plan_batch
from harness.cli import parser
from harness.cli.options import run_spec_from_args
from harness.results import S3Store
from harness.runner import run
from harness.sandbox.local import HostSandbox
from harness.toolchains import probe

ARGS = ["run", "casp", "--mode", "code-from-spec", "--sandbox", "host", "-j", "1", "--no-cache"]
QUICK_ARGS = ["run", "casp", "--mode", "gold", "--task", "02_12", "--task", "04_140", "--sandbox", "host", "-j", "1",
              "--no-cache"]


def _spec(args: list[str]):
    """``(spec, settings)`` of the command line ``args``."""
    return run_spec_from_args(parser().parse_args(args), args)


def _outcomes(records) -> dict:
    return {(r["mode"], r["task_id"], r["candidate"]["model"]): (r["verdict"], r["goals"]) for r in records}


def local_seconds(args: list[str], tmp: Path) -> tuple[float, dict]:
    """Wall time of the local run (``harness.runner.run``) and its verdicts."""
    out = tmp / f"local-{time.monotonic_ns()}"
    t0 = time.perf_counter()
    spec, settings = _spec(args)
    _, _, code = run(spec, out, settings=settings, console=Console(file=io.StringIO()))
    wall = time.perf_counter() - t0
    if code != 0:
        raise BenchFailure(f"the local run exited {code}")
    return wall, _outcomes(json.loads(line) for line in (out / "records.jsonl").read_text().splitlines() if line)


def worker_seconds(args: list[str], tmp: Path, probed) -> tuple[float, int, int, int, dict]:
    """Wall time of one worker running every job as one shard, its S3 requests for
    staging (manifest, dataset, predictions) and for the shard (listing, records), jobs,
    and the verdicts of its records."""
    quiet = Console(file=io.StringIO())
    with mock_aws():
        boto3.client("s3").create_bucket(Bucket="verikit-bench")
        spec, settings = _spec(args)
        plan, jobs, split, _ = plan_batch(spec, settings, quiet, probed, 1)
        store = S3Store(f"s3://verikit-bench/run-{time.monotonic_ns()}")
        inputs = worker.upload_inputs(store, plan.fetched, None)
        store.put_json(worker.MANIFEST, worker.make_manifest(store.uri, plan.spec(), "bench", probed, jobs,
                                                             split, inputs, command=args))
        t0 = time.perf_counter()  # from here on: what the worker container does
        store, manifest = worker.load_manifest(store.uri)
        with tempfile.TemporaryDirectory() as where:
            wspec, wsettings = worker.worker_spec(store, manifest, Path(where))
            staging = store.requests
            summary = worker.work(wspec, wsettings, store, manifest, 0, quiet)
        wall = time.perf_counter() - t0
        shard = store.requests - staging
        names = store.names("records/")
        if summary["skipped"] != 0 or len(names) != len(jobs):
            raise BenchFailure(f"the worker recorded {len(names)} of {len(jobs)} jobs: {summary}")
        records = [store.get_json(name) for name in names]  # after the count: not the worker's requests
        return wall, staging, shard, len(jobs), _outcomes(records)


def body(bench) -> dict:
    args = QUICK_ARGS if bench.args.quick else ARGS
    os.environ.update(AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench", AWS_DEFAULT_REGION="us-east-1")
    os.environ.pop("AWS_ENDPOINT_URL", None)
    probed = probe("framac", HostSandbox())
    locals_, workers = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(bench.args.repeat):
            bench.step(f"local: verikit {' '.join(args)} (repetition {rep + 1})")
            wall, local_out = local_seconds(args, Path(tmp))
            locals_.append(wall)
            bench.step("worker: the same jobs as one shard of a batch run (moto's S3)")
            wall, staging, shard, jobs, worker_out = worker_seconds(args, Path(tmp), probed)
            workers.append(wall)
            if worker_out != local_out:
                diff = sorted(k for k in set(local_out) | set(worker_out) if local_out.get(k) != worker_out.get(k))
                raise BenchFailure(f"the worker's verdicts differ from the local run's: {diff[:5]}")
    local, work = statistics.median(locals_), statistics.median(workers)
    res = {"command": args, "jobs": jobs, "local_s": round(local, 2), "worker_s": round(work, 2),
           "ratio": round(work / local, 3), "s3_requests_staging": staging, "s3_requests_shard": shard,
           "s3_requests_per_job": round(shard / jobs, 2),
           "runs": {"local_s": [round(x, 2) for x in locals_], "worker_s": [round(x, 2) for x in workers]}}
    print(f"local host run ({jobs} jobs, -j 1):  {local:7.2f} s")
    print(f"batch worker, same jobs, one shard: {work:7.2f} s")
    print(f"S3 requests: {staging} to stage the manifest and the dataset (once per shard attempt), {shard} for the "
          f"shard's {jobs} jobs ({shard / jobs:.2f} per job: one listing of records/, one PUT per record)")
    bench.ratio("batch_worker_over_local", work / local, f"{work:.2f} s vs {local:.2f} s, {jobs} jobs, medians")
    return res


if __name__ == "__main__":
    main("bench_batch", __doc__, body, default_repeat=2)
