"""Benchmark: a batch worker's per-job overhead over a local host-sandbox run of the same
jobs.

Measures, in one run on this machine, on casp-sample10 in code-from-spec mode (10 gold
answers, 10 canaries; the real Frama-C, host sandbox, no cache, one job at a time):

- ``local``: ``verikit run casp --mode code-from-spec --sandbox host -j 1 --no-cache``;
- ``worker``: the same jobs as one shard of a batch run (``verikit batch worker``): the
  manifest, the dataset and the records in S3, here moto's in-process S3 through the real
  boto3 client (so S3 latency is a local call's, and the round trips per job are counted
  for you to multiply by your region's S3 latency).

Prints ``worker / local`` (target <= 1.05) and the S3 requests per job. The two are run
alternately ``--repeat`` times and the medians compared. Usage:
``python scripts/bench_batch.py [--repeat N] [--json FILE]`` (needs VERIKIT_DATA_MIRRORS
or network for the dataset).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import boto3
from moto import mock_aws
from rich.console import Console

from harness.batch import worker
from harness.batch.runs import plan_batch
from harness.cli import _parser, _run_opts
from harness.results import S3Store
from harness.runner import run
from harness.sandbox.local import HostSandbox
from harness.toolchains import probe

ARGS = ["run", "casp", "--mode", "code-from-spec", "--sandbox", "host", "-j", "1", "--no-cache"]


def _opts(out: Path):
    argv = [*ARGS, "--out", str(out)]
    return _run_opts(_parser().parse_args(argv), Console(file=io.StringIO()), argv)


def local_seconds(tmp: Path) -> float:
    t0 = time.perf_counter()
    _, _, code = run(_opts(tmp / f"local-{time.monotonic_ns()}"), Console(file=io.StringIO()))
    assert code == 0, code
    return time.perf_counter() - t0


def worker_seconds(tmp: Path, probed) -> tuple[float, int, int, int]:
    """Wall time of one worker running every job as one shard, its S3 requests for
    staging (manifest, dataset, predictions) and for the shard (listing, records), jobs."""
    quiet = Console(file=io.StringIO())
    with mock_aws():
        boto3.client("s3").create_bucket(Bucket="verikit-bench")
        opts = _opts(tmp / "plan")
        plan, jobs, split, _ = plan_batch(opts, quiet, probed, 1)
        store = S3Store(f"s3://verikit-bench/run-{time.monotonic_ns()}")
        inputs = worker.upload_inputs(store, plan.fetched, None)
        store.put_json(worker.MANIFEST, worker.make_manifest(store.uri, plan.spec(opts), "bench", probed, jobs,
                                                             split, inputs, command=ARGS))
        t0 = time.perf_counter()  # from here on: what the worker container does
        store, manifest = worker.load_manifest(store.uri)
        with tempfile.TemporaryDirectory() as where:
            wopts = worker.worker_options(store, manifest, Path(where))
            staging = store.requests
            summary = worker.work(wopts, store, manifest, 0, quiet)
        wall = time.perf_counter() - t0
        shard = store.requests - staging
        assert summary["skipped"] == 0 and len(store.names("records/")) == len(jobs), summary
        return wall, staging, shard, len(jobs)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    os.environ.update(AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench", AWS_DEFAULT_REGION="us-east-1")
    os.environ.pop("AWS_ENDPOINT_URL", None)
    probed = probe("framac", HostSandbox())
    locals_, workers = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeat):
            locals_.append(local_seconds(Path(tmp)))
            wall, staging, shard, jobs = worker_seconds(Path(tmp), probed)
            workers.append(wall)
    local, work = statistics.median(locals_), statistics.median(workers)
    res = {"jobs": jobs, "local_s": round(local, 2), "worker_s": round(work, 2), "ratio": round(work / local, 3),
           "s3_requests_staging": staging, "s3_requests_shard": shard, "s3_requests_per_job": round(shard / jobs, 2),
           "runs": {"local_s": [round(x, 2) for x in locals_], "worker_s": [round(x, 2) for x in workers]}}
    print(f"local host run ({jobs} jobs, -j 1):  {local:7.2f} s")
    print(f"batch worker, same jobs, one shard: {work:7.2f} s   ratio {work / local:.3f} (target <= 1.05)")
    print(f"S3 requests: {staging} to stage the manifest and the dataset (once per shard attempt), {shard} for the "
          f"shard's {jobs} jobs ({shard / jobs:.2f} per job: one listing of records/, one PUT per record)")
    if args.json:
        args.json.write_text(json.dumps(res, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
