"""Cloud batch against moto, in process: S3 and the AWS Batch control plane
through the real boto3 client (``mock_aws``; Batch jobs with ``use_docker`` off, so moto
marks them done without running anything). What moto does not do -- set
``AWS_BATCH_JOB_ARRAY_INDEX``, retry attempts, reclaim spot instances -- is covered by the
pure functions (:func:`shard_index`, :func:`retry_decision`) and synthetic
``describe_jobs`` payloads. The end-to-end run with real containers is
``test_batch_e2e.py``.

The worker tests run the real Frama-C (host sandbox) on casp-sample10 in gold mode, on
five of its tasks (``TASKS``) in ``SHARDS`` = 2 shards of 3 and 2 jobs. Shard 0 needs three:
when the SIGTERM comes after its first record, the worker's one job slot has already
started the second job (which finishes and is recorded), so only a third is left to
resume. Resuming, collecting a run with a gap and resubmitting only the shard with the gap
(the last one) do not depend on the number of tasks or of shards beyond that; every gold
job is ``verified`` on all ten. Each worker invocation runs its jobs afresh (a worker uses
no result cache), so fewer tasks is fewer real Frama-C runs in every one of them.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import boto3
import pytest
from moto import mock_aws

from harness.batch import aws, control, worker
from harness.batch.shards import MAX_ARRAY_SIZE, estimate, expected_costs, shards
from harness.cli import main
from harness.model import Limits
from harness.results import S3Store, ValidationError, load_records, run_dir_lock

BUCKET = "verikit-test"
#: Five of casp-sample10's tasks whose gold jobs are quick here (about 1-2 s each with Frama-C).
TASKS = ["00_327", "02_12", "04_140", "05_125", "06_114"]
SHARDS = 2
LAST = SHARDS - 1  # the shard given a gap, resubmitted, and broken by the infra-error test
#: The committed Rocq reference run (its probed toolchain and verifier state).
REFERENCE = Path(__file__).resolve().parents[1] / "results" / "reproduced" / "ntp4vc" / "rocq"
RUN_ARGS = ["run", "casp", "--mode", "gold", *(a for t in TASKS for a in ("--task", t))]


@pytest.fixture
def aws_env(monkeypatch):
    for k, v in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "testing",
                 "AWS_DEFAULT_REGION": "us-east-1"}.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    with mock_aws(config={"batch": {"use_docker": False}}):
        boto3.client("s3").create_bucket(Bucket=BUCKET)
        yield


def _network():
    ec2, iam = boto3.client("ec2"), boto3.client("iam")
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.0.0/24")["Subnet"]["SubnetId"]
    sg = ec2.create_security_group(GroupName="verikit", Description="batch", VpcId=vpc)["GroupId"]
    service = iam.create_role(RoleName="BatchService", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    profile = iam.create_instance_profile(InstanceProfileName="ecsInstanceRole")["InstanceProfile"]["Arn"]
    return subnet, sg, service, profile


# --- pure parts ------------------------------------------------------------------------------


@pytest.mark.parametrize("attempt, action", [
    ({"statusReason": "Host EC2 (instance i-0abc) terminated.", "exitCode": None}, "RETRY"),  # spot reclaim
    ({"statusReason": "Essential container in task exited", "reason": "", "exitCode": 3}, "EXIT"),  # canary
    ({"statusReason": "Essential container in task exited", "exitCode": 143}, "EXIT"),  # our own SIGTERM stop
    ({"statusReason": "Job attempt duration exceeded timeout"}, "EXIT"),
])
def test_retry_decision_retries_spot_reclaims_only(attempt, action):
    assert aws.retry_decision(attempt) == action


def test_retry_decision_follows_the_first_matching_rule_and_defaults_to_retry():
    strategy = {"evaluateOnExit": [{"onExitCode": "137", "action": "RETRY"}, {"onExitCode": "1*", "action": "exit"}]}
    assert aws.retry_decision({"exitCode": 137}, strategy) == "RETRY"
    assert aws.retry_decision({"exitCode": 143}, strategy) == "EXIT"
    assert aws.retry_decision({"exitCode": 2}, strategy) == "RETRY"  # no rule matches: AWS retries


def test_shards_are_balanced_longest_first_and_deterministic():
    costs = {"a": 10.0, "b": 7.0, "c": 6.0, "d": 5.0, "e": 4.0, "f": 1.0}
    plan = shards(costs, 3)
    assert plan == shards(dict(reversed(list(costs.items()))), 3)
    loads = sorted(sum(costs[k] for k in s) for s in plan)
    assert loads == [11.0, 11.0, 11.0]
    assert sorted(k for s in plan for k in s) == sorted(costs)
    assert shards({"a": 1.0, "b": 1.0}, 5) == [["a"], ["b"]]  # never an empty shard
    with pytest.raises(ValueError, match="10000"):
        shards(costs, MAX_ARRAY_SIZE + 1)
    est = estimate(costs, plan, cpus_per_job=2)
    assert est["jobs"] == 6 and est["shards"] == 3 and est["longest_shard_s"] == 11.0
    assert est["cpu_hours"] == round(33 * 2 / 3600, 3)


def test_expected_costs_from_a_previous_run():
    idents = {"k1": ("m", "t1", "gold", 0), "k2": ("m", "t1", "llm", 0), "k3": ("m", "t9", "gold", 0)}
    previous = [{"key": "k1", "mode": "m", "task_id": "t1", "timings": {"wall_s": 8.0}},
                {"key": "x", "mode": "m", "task_id": "t1", "timings": {"wall_s": 4.0}},
                {"key": "y", "mode": "m", "task_id": "t2", "timings": {"wall_s": 3.0}}]
    costs = expected_costs(list(idents), idents, previous)
    assert costs == {"k1": 8.0, "k2": 6.0, "k3": 5.0}  # same key; same task (mean); mean of all
    assert expected_costs(list(idents), idents, None) == {"k1": 1.0, "k2": 1.0, "k3": 1.0}


@pytest.mark.parametrize("env, index", [
    ({"AWS_BATCH_JOB_ARRAY_INDEX": "4", "AWS_BATCH_JOB_ID": "abc:7"}, 4),
    ({"JOB_COMPLETION_INDEX": "2"}, 2),
    ({"AWS_BATCH_JOB_ID": "0f1e-22:7"}, 7),
])
def test_shard_index_sources(env, index):
    assert worker.shard_index(env) == index


def test_no_shard_index_is_an_error():
    with pytest.raises(ValueError, match="--shard N"):
        worker.shard_index({"AWS_BATCH_JOB_ID": "0f1e-22"})


def test_child_statuses_from_describe_jobs_payloads():
    class Batch:
        def describe_jobs(self, jobs):
            payload = {"arr:0": {"status": "SUCCEEDED"}, "arr:1": {"status": "FAILED",
                                                                    "statusReason": "Host EC2 (instance i-1) terminated."},
                       "arr:2": {"status": "RUNNING"}, "arr": {"status": "RUNNING"}}
            return {"jobs": [{"jobId": j, **payload[j]} for j in jobs]}

    got = aws.child_statuses(Batch(), {"array_job_id": "arr", "shards": [3, 5, 8]})
    assert got[3]["status"] == "SUCCEEDED" and got[8]["status"] == "RUNNING"
    assert got[5]["status"] == "FAILED" and aws.retry_decision(got[5]) == "RETRY"


# --- AWS Batch control plane (moto) -----------------------------------------------------------


@pytest.mark.slow
def test_setup_is_idempotent_and_sets_the_fields(aws_env):
    subnet, sg, service, profile = _network()
    batch = boto3.client("batch")
    kw = dict(subnets=[subnet], security_groups=[sg], images={"framac": "reg/verikit/framac-runner:abc"},
              limits=Limits(mem_mb=2048, cpus=2), max_vcpus=64, instance_role=profile, service_role=service)
    first = aws.setup(batch, **kw)
    assert [op for _, op, _ in first.made] == ["create_compute_environment", "create_job_queue",
                                                "register_job_definition"]
    assert aws.setup(batch, **kw).made == []  # a second setup changes nothing
    (ce,) = batch.describe_compute_environments(computeEnvironments=[aws.COMPUTE_ENVIRONMENT])["computeEnvironments"]
    res = ce["computeResources"]
    assert (ce["type"], res["type"], res["allocationStrategy"], res["minvCpus"], res["maxvCpus"]) == \
        ("MANAGED", "SPOT", "SPOT_PRICE_CAPACITY_OPTIMIZED", 0, 64)
    (jd,) = batch.describe_job_definitions(jobDefinitionName="verikit-framac", status="ACTIVE")["jobDefinitions"]
    assert jd["timeout"]["attemptDurationSeconds"] == 24 * 3600
    assert {r["type"]: r["value"] for r in jd["containerProperties"]["resourceRequirements"]} == \
        {"VCPU": "2", "MEMORY": str(2048 + aws.OVERHEAD_MIB)}
    assert jd["retryStrategy"]["attempts"] == 3
    assert [(r.get("onStatusReason"), r.get("onReason"), r["action"].upper())
            for r in jd["retryStrategy"]["evaluateOnExit"]] == [("Host EC2*", None, "RETRY"), (None, "*", "EXIT")]
    assert batch.list_tags_for_resource(resourceArn=jd["jobDefinitionArn"])["tags"] == {"verikit": "1"}
    # a new image is a new revision; more vCPUs updates the compute environment
    changed = aws.setup(batch, **{**kw, "images": {"framac": "reg/verikit/framac-runner:def"}, "max_vcpus": 128})
    assert [op for _, op, _ in changed.made] == ["update_compute_environment", "register_job_definition"]


def test_setup_dry_run_prints_and_creates_nothing(aws_env, capsys):
    subnet, sg, _, _ = _network()
    code = main(["batch", "setup", "--subnets", subnet, "--security-group", sg, "--image", "framac=reg/x:1",
                 "--dry-run"])
    out = capsys.readouterr().out
    assert code == 0 and "batch create_compute_environment" in out and '"SPOT_PRICE_CAPACITY_OPTIMIZED"' in out
    assert boto3.client("batch").describe_compute_environments()["computeEnvironments"] == []


# --- the S3 store ----------------------------------------------------------------------------


def _a_record() -> dict:
    rec = json.loads((__import__("pathlib").Path(__file__).parents[1] / "results" / "reproduced" / "casp" /
                      "records.jsonl").read_text().splitlines()[0])
    return rec


def test_s3_store_checks_records_both_ways(aws_env):
    store = S3Store(f"s3://{BUCKET}/runs/r1")
    rec = _a_record()
    name = store.put_record(rec)
    assert name == f"records/{rec['key']}.json" and store.exists(f"records/{rec['key']}.json")
    with pytest.raises(ValidationError):
        store.put_record({**rec, "verdict": "great"})
    with pytest.raises(ValidationError, match="key"):
        store.put_record({**rec, "task_id": "99_999"})  # the key no longer follows from the fields
    forged = {**rec, "verdict": "verified", "task_id": "02_12"}
    store.put_bytes(f"records/{rec['key'][:-1]}0.json", json.dumps(forged).encode())  # wrong name
    store.put_bytes("records/torn.json", b'{"key": ')
    found, problems = store.records()
    assert list(found) == [rec["key"]] and len(problems) == 2


# --- plan, submit, worker, collect, resubmit (moto + the real Frama-C) -----------------------


@pytest.fixture
def submitted(aws_env, casp_mirror, framac_host, isolated_cache, tmp_path, monkeypatch):
    """A batch run of RUN_ARGS in SHARDS shards, submitted to moto: ``(store, manifest, info)``."""
    from rich.console import Console

    from harness.cli import parser
    from harness.cli.options import run_spec_from_args

    subnet, sg, service, profile = _network()
    aws.setup(boto3.client("batch"), subnets=[subnet], security_groups=[sg], images={"framac": "verikit-runner:t"},
              limits=Limits(), instance_role=profile, service_role=service)
    argv = [*RUN_ARGS, "--sandbox", "host"]
    spec, settings = run_spec_from_args(parser().parse_args(argv), argv)
    engine = aws.AwsBatch(boto3.client("batch"), queue=aws.JOB_QUEUE, job_definition=aws.job_definition_name("framac"))
    info = control.submit_run(spec, settings, Console(stderr=True), base=f"s3://{BUCKET}/runs", engine=engine,
                           image="verikit-runner:t", probed=framac_host.probed, n_shards=SHARDS, timings=None)
    store, manifest = worker.load_manifest(info["run_uri"])
    return store, manifest, info


@pytest.mark.realtool
def _local_plan(argv: list[str]) -> dict:
    """``{key: Job}`` of the jobs ``verikit run`` plans for ``argv`` on this host: the CLI's
    options, the toolchain probed on the host and the run's own job builder (what a local
    run of ``argv`` would execute, without running it; the executor keys records the same)."""
    import io

    from rich.console import Console

    from harness import cli, runner
    from harness.cli import options as cli_options

    args = cli.parser().parse_args(argv)
    spec, settings = cli_options.run_spec_from_args(args, argv)
    plan = runner.plan_run(spec, Console(file=io.StringIO()), data_dir=settings.data_dir)
    with runner.open_sandbox(plan, lambda m: None) as (sandbox, _):
        probed, _ = runner.probe_toolchain(plan, sandbox)
    jobs, _ = runner.build_jobs(plan, probed, plan.verifier)
    return {j.key(probed, spec.limits): j for j in jobs}


def test_submit_plans_the_same_jobs_and_keys_as_a_local_run(submitted, tmp_path, capsys):
    store, manifest, info = submitted
    n = len(manifest["jobs"])  # the gold pairs of TASKS
    sizes = [len(s) for s in manifest["shards"]]
    assert n == len(TASKS) and sizes == [3, 2]  # balanced; shard 0 has a job left after its first two
    assert sorted(k for s in manifest["shards"] for k in s) == sorted(manifest["jobs"])
    local = _local_plan([*RUN_ARGS, "--sandbox", "host", "--out", str(tmp_path / "local")])
    assert set(local) == set(manifest["jobs"])
    assert {(j.mode, j.task_id, j.candidate["model"]) for j in local.values()} == \
        {(j["mode"], j["task_id"], j["model"]) for j in manifest["jobs"].values()}
    # the inputs workers read are next to the manifest, and the array job has a child per shard
    assert any(n.startswith("data/github/") for n in store.names("data/"))
    (sub,) = store.get_json(control.SUBMISSIONS)["submissions"]
    (array,) = boto3.client("batch").describe_jobs(jobs=[sub["array_job_id"]])["jobs"]
    assert array["arrayProperties"]["size"] == SHARDS
    assert "--manifest" in array["container"]["command"]
    # cancel: TerminateJob on the array job and its reducer
    assert main(["batch", "cancel", store.uri]) == 0
    assert f"cancel 2 job(s): {sub['array_job_id']}, {sub['reducer_job_id']}" in capsys.readouterr().err.replace("\n", "")


def _engine(store, manifest) -> aws.AwsBatch:
    return aws.AwsBatch.from_info(boto3.client("batch"), control.submissions(store), manifest)


def _worker(store, shard: int, capsys) -> tuple[int, dict | None]:
    code = main(["batch", "worker", "--manifest", f"{store.uri}/manifest.json", "--shard", str(shard)])
    out = capsys.readouterr().out.strip().splitlines()
    return code, (json.loads(out[-1]) if out and out[-1].startswith("{") else None)


@pytest.mark.realtool
def test_worker_resumes_stops_on_sigterm_and_collect_writes_a_valid_run(submitted, tmp_path, capsys, monkeypatch):
    store, manifest, _ = submitted
    real_put = S3Store.put_record
    puts = []

    def put_then_sigterm(self, record):  # the spot interruption notice arrives after the first record
        name = real_put(self, record)
        puts.append(name)
        if len(puts) == 1:
            os.kill(os.getpid(), signal.SIGTERM)
        return name

    monkeypatch.setattr(S3Store, "put_record", put_then_sigterm)
    shard0 = manifest["shards"][0]
    code, summary = _worker(store, 0, capsys)
    stopped_after = len(store.names("records/"))
    assert code == 143 and summary["stopped"] and 1 <= stopped_after < len(shard0)
    assert summary["ran"] <= stopped_after  # a job decided without running (a precheck) starts no tool
    monkeypatch.setattr(S3Store, "put_record", real_put)

    code, summary = _worker(store, 0, capsys)  # the retried attempt resumes
    assert code == 0 and summary["skipped"] == stopped_after and 1 <= summary["ran"] <= len(shard0) - stopped_after
    assert {n[len("records/"):-len(".json")] for n in store.names("records/")} == set(shard0)
    code, summary = _worker(store, 0, capsys)  # and a third one has nothing to do
    assert code == 0 and summary["skipped"] == len(shard0) and summary["ran"] == 0
    print(f"shard 0: {summary['store_requests']} S3 requests with nothing to run")
    for shard in range(1, SHARDS):
        assert _worker(store, shard, capsys)[0] == 0

    # a gap (a record lost) and a duplicate under another name
    keys = [k for s in manifest["shards"] for k in s]
    lost = manifest["shards"][LAST][0]
    body = store.get_bytes(f"records/{keys[0]}.json")
    store.client.delete_object(Bucket=store.bucket, Key=store.key(f"records/{lost}.json"))
    store.put_bytes(f"records/{keys[0]}-copy.json", body)
    code = main(["batch", "collect", store.uri, "--out", str(tmp_path / "collected")])
    err = capsys.readouterr().err
    assert code == 4
    lost_job = manifest["jobs"][lost]
    assert f"no record {lost_job['mode']} {lost_job['task_id']} {lost_job['model']}" in err.replace("\n", "")
    assert "left out" in err
    recs = load_records(tmp_path / "collected" / "records.jsonl")
    n = len(manifest["jobs"])
    assert len(recs) == n - 1 and len({r["key"] for r in recs}) == n - 1 and lost not in {r["key"] for r in recs}
    assert main(["validate", str(tmp_path / "collected")]) == 0

    # resubmit: only the shard with the gap
    sub = control.resubmit(store, manifest, _engine(store, manifest))
    assert sub["shards"] == [LAST]
    (job,) = boto3.client("batch").describe_jobs(jobs=[sub["array_job_id"]])["jobs"]
    assert job["container"]["command"][-4:] == ["--shards", str(LAST), "--shard", "0"]
    assert _worker(store, LAST, capsys)[0] == 0  # the resubmitted shard runs the lost job only
    store.client.delete_object(Bucket=store.bucket, Key=store.key(f"records/{keys[0]}-copy.json"))
    with run_dir_lock(tmp_path / "collected"):  # a run directory being written is a local run's: one writer
        assert main(["batch", "collect", store.uri, "--out", str(tmp_path / "collected")]) == 2
    assert "in use by another verikit run" in capsys.readouterr().err
    assert (tmp_path / "collected" / "missing.txt").exists()
    assert main(["batch", "collect", store.uri, "--out", str(tmp_path / "collected")]) == 0
    assert not (tmp_path / "collected" / "missing.txt").exists()  # the earlier collect's gap is gone
    assert main(["batch", "collect", store.uri, "--out", str(tmp_path / "complete")]) == 0
    assert len(load_records(tmp_path / "complete" / "records.jsonl")) == n
    assert main(["validate", str(tmp_path / "complete")]) == 0
    assert control.resubmit(store, manifest, _engine(store, manifest)) is None


@pytest.mark.slow
def test_validate_reads_a_run_from_s3(aws_env, capsys):
    from pathlib import Path

    ref = Path(__file__).parents[1] / "results" / "reproduced" / "casp"
    store = S3Store(f"s3://{BUCKET}/runs/reduced")
    store.upload_run(ref)
    assert main(["validate", store.uri]) == 0
    edited = json.loads((ref / "report.json").read_text())
    edited["notes"] = ["edited after the run"]
    store.put_json("report.json", edited)
    assert main(["validate", store.uri]) == 1
    assert "report.json" in capsys.readouterr().err
    assert main(["validate", f"s3://{BUCKET}/runs/nothing-here"]) == 2


@pytest.mark.realtool
def test_an_infra_error_is_not_a_record_and_the_next_attempt_runs_it(submitted, capsys, monkeypatch):
    from harness.model import ProcResult
    from harness.sandbox.local import HostSandbox

    store, manifest, _ = submitted
    real_run = HostSandbox.run

    def broken(self, argv, **kw):  # the verifier cannot start: our side failed, for every job
        if "verikit_framac_job.sh" in argv:
            return ProcResult(argv=list(argv), returncode=None, start_error="simulated: no such runtime")
        return real_run(self, argv, **kw)

    monkeypatch.setattr(HostSandbox, "run", broken)
    code, summary = _worker(store, LAST, capsys)
    assert code == 4 and summary["infra_error"] == len(manifest["shards"][LAST])
    assert store.names("records/") == [] and len(store.names("infra_errors/")) == len(manifest["shards"][LAST])
    st = control.status(store, manifest, None)
    assert st["shards"][LAST]["done"] == 0 and st["shards"][LAST]["infra_errors"] == len(manifest["shards"][LAST])
    monkeypatch.setattr(HostSandbox, "run", real_run)
    code, summary = _worker(store, LAST, capsys)  # the next attempt runs them: they were not results
    assert code == 0 and summary["skipped"] == 0
    assert len(store.names("records/")) == len(manifest["shards"][LAST])
    assert control.status(store, manifest, None)["shards"][LAST]["infra_errors"] == 0


def test_images_push_command_lines(tmp_path):
    """Command-line test only (no registry can be reached here): ``images push`` tags the
    runner image under the registry and pushes it, reading the digest podman writes."""
    from harness.sandbox import images

    log = tmp_path / "argv.log"
    engine = tmp_path / "podman"
    engine.write_text("#!/bin/sh\n"
                      f'echo "$@" >> {log}\n'
                      'if [ "$1" = push ] && [ "$2" = --digestfile ]; then echo sha256:' + "ab" * 32 + ' > "$3"; fi\n')
    engine.chmod(0o755)
    got = images.push("verikit/framac-runner:0123abcd", "123.dkr.ecr.eu-west-1.amazonaws.com", engine=str(engine))
    assert got == {"image": "verikit/framac-runner:0123abcd", "pushed": "123.dkr.ecr.eu-west-1.amazonaws.com/"
                   "framac-runner:0123abcd", "digest": "sha256:" + "ab" * 32}
    lines = log.read_text().splitlines()
    assert lines[0] == "tag verikit/framac-runner:0123abcd 123.dkr.ecr.eu-west-1.amazonaws.com/framac-runner:0123abcd"
    assert lines[1].startswith("push --digestfile ") and lines[1].endswith(" 123.dkr.ecr.eu-west-1.amazonaws.com/"
                                                                           "framac-runner:0123abcd")


def test_bad_worker_shards_and_aws_errors_are_one_message(aws_env, capsys, monkeypatch):
    from harness.batch.worker import MANIFEST, MANIFEST_FORMAT

    store = S3Store(f"s3://{BUCKET}/runs/r2")
    store.put_json(MANIFEST, {"format": MANIFEST_FORMAT, "shards": [["k1"], ["k2"]], "jobs": {},
                              "limits": Limits().to_json(), "parallel": 1, "toolchain": {"name": "framac"}})
    with pytest.raises(SystemExit) as exc:
        main(["batch", "worker", "--manifest", f"{store.uri}/{MANIFEST}", "--shards", "1,x"])
    assert exc.value.code == 2 and "'x' is not an integer" in capsys.readouterr().err
    for argv in (["--shards", "0,1", "--shard", "2"], ["--shard", "5"]):
        assert main(["batch", "worker", "--manifest", f"{store.uri}/{MANIFEST}", *argv]) == 2
        err = capsys.readouterr().err
        assert "has no shard" in err and "Traceback" not in err
    monkeypatch.delenv("AWS_BATCH_JOB_ID", raising=False)
    monkeypatch.delenv("AWS_BATCH_JOB_ARRAY_INDEX", raising=False)
    monkeypatch.delenv("JOB_COMPLETION_INDEX", raising=False)
    assert main(["batch", "worker", "--manifest", f"{store.uri}/{MANIFEST}"]) == 2
    assert "no shard index" in capsys.readouterr().err
    # an AWS error (here: a queue that does not exist) is one message, exit 2
    assert main(["batch", "resubmit", store.uri, "--queue", "no-such-queue"]) == 2
    assert "error: AWS:" in capsys.readouterr().err


@pytest.mark.slow  # about 50 s: the submission stages NTP4VC's 5,760 input files through moto's S3
def test_collect_writes_the_workers_verifier_state(aws_env, isolated_cache, tmp_path):
    """What the workers' verifier read in its sandbox (Rocq's library axioms, put by each
    worker as ``verifier_state.json``) reaches the collected run.json, as a local run
    writes it, so ``verikit validate`` judges the collected records with it. The toolchain
    is the committed Rocq reference run's probe (collect opens no sandbox); the state is
    that run's own."""
    from rich.console import Console

    from harness.cli import parser
    from harness.cli.options import run_spec_from_args
    from harness.toolchains import ProbedToolchain

    if not os.environ.get("VERIKIT_DATA_MIRRORS"):
        pytest.skip("VERIKIT_DATA_MIRRORS is not set: the real data mirror is needed")
    ref = json.loads((REFERENCE / "run.json").read_text())
    subnet, sg, service, profile = _network()
    aws.setup(boto3.client("batch"), subnets=[subnet], security_groups=[sg], images={"rocq": "verikit-rocq:t"},
              limits=Limits(), instance_role=profile, service_role=service)
    task = json.loads((REFERENCE / "records.jsonl").read_text().splitlines()[0])["task_id"]  # one task of that run
    argv = ["run", "ntp4vc", "--lang", "rocq", "--task", task, "--sandbox", "container"]
    spec, settings = run_spec_from_args(parser().parse_args(argv), argv)
    engine = aws.AwsBatch(boto3.client("batch"), queue=aws.JOB_QUEUE, job_definition=aws.job_definition_name("rocq"))
    info = control.submit_run(spec, settings, Console(stderr=True), base=f"s3://{BUCKET}/runs", engine=engine,
                           image="verikit-rocq:t", probed=ProbedToolchain.from_json(ref["toolchains"][0]), n_shards=1,
                           timings=None)
    store, manifest = worker.load_manifest(info["run_uri"])
    store.put_json(worker.VERIFIER_STATE, ref["verifier_state"])  # as a worker puts it after prepare()
    assert main(["batch", "collect", store.uri, "--out", str(tmp_path / "collected")]) == 4  # no record: missing
    run = json.loads((tmp_path / "collected" / "run.json").read_text())
    assert run["verifier_state"] == ref["verifier_state"] and len(run["verifier_state"]["library_axioms"]) == 522
