"""Cloud batch end to end, with moto in server mode on 127.0.0.1 as AWS and
Podman's Docker API as the container engine: moto's AWS Batch really starts the runner
image's containers (``MOTO_DOCKER_NETWORK_MODE=host``, so they reach moto's S3).

casp-sample10 in gold mode on five of its tasks (``TASKS``: 5 jobs, in 3 shards of 2, 2
and 1, so the shard whose container is killed has a job left after its first record; the
equality with the local run holds on five tasks as on ten, and every job of a worker
container is a fresh Frama-C run) is
submitted with the kit's CLI in 3 shards; one worker container is killed mid-shard
(a simulated spot reclaim); ``batch status`` sees the gap, ``batch resubmit`` runs that
shard again (it resumes: jobs with a record are skipped), the reducer writes the run
files next to the records, and ``batch collect`` gives a run directory whose verdicts and
goal counts equal ``verikit run casp --sandbox host`` on the same tasks (the committed
reference run ``results/reproduced/casp/reproduce``, its records of these tasks), with no
duplicate and no missing record.

What this does not exercise: moto neither sets ``AWS_BATCH_JOB_ARRAY_INDEX`` (the worker
reads the ``:N`` suffix of ``AWS_BATCH_JOB_ID`` here) nor retries attempts nor reclaims
spot capacity, and it marks a killed container FAILED without a status reason; the retry
rule and the other index sources are unit-tested in ``test_batch.py``. Nothing here
touched real AWS.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import boto3
import pytest

from harness.batch import aws, worker
from harness.model import Limits
from harness.results import load_records, record_identity, record_outcome
from test_batch import _network  # the VPC and roles a compute environment needs (moto checks them)

pytestmark = [pytest.mark.container, pytest.mark.realtool, pytest.mark.slow]

BUCKET = "verikit-e2e"
#: Five of casp-sample10's tasks whose gold jobs are quick here (about 1-2 s each with Frama-C).
TASKS = ["00_327", "02_12", "04_140", "05_125", "06_114"]
RUN = ["run", "casp", "--mode", "gold", *(a for t in TASKS for a in ("--task", t))]


@pytest.fixture(scope="module")
def runner_image(engine_image):
    from harness.sandbox import images

    def resolve():
        images.resolve("framac")  # the toolchain image must be there (skips or fails as the other container tests)
        return images.resolve_runner("framac")

    return engine_image(resolve)


@pytest.fixture
def moto_server(monkeypatch):
    from moto.server import ThreadedMotoServer

    monkeypatch.setenv("MOTO_DOCKER_NETWORK_MODE", "host")
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    env = {"AWS_ENDPOINT_URL": f"http://{host}:{port}", "AWS_ACCESS_KEY_ID": "testing",
           "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    yield env
    server.stop()


def _cli(env: dict, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness", *args], env=env, capture_output=True, text=True,
                          timeout=timeout)


def _wait(batch, sub: dict, until, timeout: float, what: str) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        st = aws.child_statuses(batch, sub)
        if until(st):
            return st
        time.sleep(1)
    pytest.fail(f"{what}: not reached in {timeout:.0f} s: {st}")


def _logs(job_ids: list[str]) -> str:
    """What the workers printed (moto puts the container logs in CloudWatch Logs)."""
    logs, out = boto3.client("logs"), []
    for stream in logs.describe_log_streams(logGroupName="/aws/batch/job").get("logStreams", []):
        if any(j in stream["logStreamName"] for j in job_ids):
            events = logs.get_log_events(logGroupName="/aws/batch/job", logStreamName=stream["logStreamName"])
            out += [e["message"] for e in events["events"]][-20:]
    return "\n".join(out)


def test_batch_run_with_a_reclaimed_worker_equals_a_local_run(runner_image, moto_server, casp_mirror, framac_host,
                                                              isolated_cache, tmp_path):
    env = dict(isolated_cache, **moto_server)
    batch = boto3.client("batch")
    boto3.client("s3").create_bucket(Bucket=BUCKET)
    subnet, sg, service, profile = _network()
    # the workers reach moto with the stand-in's endpoint and dummy credentials (never real ones)
    aws.setup(batch, subnets=[subnet], security_groups=[sg], images={"framac": runner_image},
              limits=Limits(), instance_role=profile, service_role=service, environment=moto_server)

    sub_res = _cli(env, *RUN, "--backend", "aws-batch", "--s3", f"s3://{BUCKET}/runs", "--shards", "3",
                   "--image", runner_image, "--out", str(tmp_path / "submit"))
    assert sub_res.returncode == 0, sub_res.stderr
    info = json.loads((tmp_path / "submit" / "batch.json").read_text())
    store, manifest = worker.load_manifest(info["run_uri"])
    (sub,) = info["submissions"]
    assert [len(s) for s in manifest["shards"]] == [2, 2, 1] and len(manifest["jobs"]) == len(TASKS)

    # simulated reclaim: kill shard 1's container once it has recorded a job and before it is done
    victim = manifest["shards"][1]
    from harness.sandbox.container import connect, list_workers

    client = connect()
    deadline = time.monotonic() + 600
    killed = None
    while time.monotonic() < deadline and killed is None:
        have = {n[len("records/"):-len(".json")] for n in store.names("records/")}
        if 1 <= len(have & set(victim)) < len(victim):
            for c in list_workers(client, {"status": "running"}, all=False):
                if c.name.endswith(f"{sub['array_job_id']}-1"):
                    c.kill()
                    killed = len(have & set(victim))
        time.sleep(0.2)
    assert killed is not None, "shard 1 was never caught mid-shard"
    st = _wait(batch, sub, lambda s: all(v["status"] in ("SUCCEEDED", "FAILED") for v in s.values()), 900,
               "the first submission's shards")
    assert st[1]["status"] == "FAILED" and st[0]["status"] == st[2]["status"] == "SUCCEEDED", \
        (st, _logs([sub["array_job_id"]]))

    status = _cli(env, "batch", "status", info["run_uri"])
    assert status.returncode == 0 and "shard 1:" in status.stdout and "partial" in status.stdout, status.stdout
    again = _cli(env, "batch", "resubmit", info["run_uri"])
    assert again.returncode == 0, again.stderr
    resub = json.loads(again.stdout)
    assert resub["shards"] == [1]
    st = _wait(batch, resub, lambda s: s[1]["status"] in ("SUCCEEDED", "FAILED"), 900, "the resubmitted shard")
    assert st[1]["status"] == "SUCCEEDED", _logs([resub["array_job_id"]])
    deadline = time.monotonic() + 600  # the reducer of the resubmission writes the run files
    while not store.exists("SHA256SUMS") and time.monotonic() < deadline:
        time.sleep(1)
    assert store.exists("SHA256SUMS"), _logs([resub["reducer_job_id"]])

    out = tmp_path / "collected"
    got = _cli(env, "batch", "collect", info["run_uri"], "--out", str(out))
    assert got.returncode == 0, got.stderr
    assert _cli(env, "validate", str(out)).returncode == 0
    batch_recs = load_records(out / "records.jsonl")
    assert len(batch_recs) == len(TASKS) and len({r["key"] for r in batch_recs}) == len(TASKS)
    assert {r["key"] for r in batch_recs} == set(manifest["jobs"])
    reduced = tmp_path / "reduced"
    store.download_run(reduced)
    assert _cli(env, "validate", str(reduced)).returncode == 0

    # the local host run of the same jobs: the committed reference, made by ``verikit reproduce
    # casp --sandbox host`` (its run.json; gold mode on casp-sample10): its records of TASKS, the jobs of RUN here
    local_recs = load_records(Path(__file__).resolve().parents[1] / "results" / "reproduced" / "casp" / "reproduce"
                              / "records.jsonl")
    local_recs = [r for r in local_recs if r["task_id"] in TASKS]
    assert sorted(r["task_id"] for r in local_recs) == sorted(TASKS)
    assert {record_identity(r): record_outcome(r) for r in local_recs} == \
        {record_identity(r): record_outcome(r) for r in batch_recs}
    print(f"{len(TASKS)} jobs in 3 shards; shard 1 killed after {killed} record(s), resubmitted; verdicts and goal "
          f"counts equal to the local host run (the committed reference)")
