"""The AWS Batch control plane over boto3: spot compute environment, queue, job
definitions, array-job submission, status, resubmission and cancellation; :class:`AwsBatch`
is the engine :mod:`harness.batch.control` drives.

Field names and limits follow the AWS Batch API reference (``CreateComputeEnvironment``,
``CreateJobQueue``, ``RegisterJobDefinition``, ``SubmitJob``, ``DescribeJobs``); the retry
rule follows the user guide's "Automated job retries" (``evaluateOnExit`` patterns are
matched against the attempt's status reason, reason and exit code; the first match
decides; a spot reclaim's status reason starts with ``Host EC2``).
"""

from __future__ import annotations

import fnmatch
import json
from dataclasses import dataclass, field

from ..model import Limits

TAGS = {"verikit": "1"}
COMPUTE_ENVIRONMENT = "verikit-spot"
JOB_QUEUE = "verikit"
#: Retry a spot reclaim (the host went away), never a job that ended on its own: a
#: failed shard is resubmitted by the user (``verikit batch resubmit``) after a look.
RETRY_STRATEGY = {"attempts": 3, "evaluateOnExit": [{"onStatusReason": "Host EC2*", "action": "RETRY"},
                                                    {"onReason": "*", "action": "EXIT"}]}
#: Memory the kit itself and the container need beside a job's own limit (MiB).
OVERHEAD_MIB = 512


def job_definition_name(toolchain: str) -> str:
    """The job definition of a toolchain's runner image: ``verikit-<toolchain>``."""
    return f"verikit-{toolchain}"


def retry_decision(attempt: dict, strategy: dict = RETRY_STRATEGY) -> str:
    """``"RETRY"`` or ``"EXIT"`` for one failed attempt, as AWS Batch decides it.

    Args:
        attempt: ``{"statusReason", "reason", "exitCode"}`` (the attempt's
            ``statusReason`` and its container's ``reason`` and ``exitCode``, as
            ``describe_jobs`` gives them; any may be missing).
        strategy: a ``retryStrategy``.

    Returns:
        The action of the first ``evaluateOnExit`` entry all of whose conditions match
        (glob patterns, ``*`` only at the end in AWS; exit codes as strings); ``RETRY``
        when none matches (AWS retries up to ``attempts`` then).
    """
    values = {"onStatusReason": attempt.get("statusReason") or "", "onReason": attempt.get("reason") or "",
              "onExitCode": "" if attempt.get("exitCode") is None else str(attempt["exitCode"])}
    for rule in strategy.get("evaluateOnExit", []):
        conds = {k: v for k, v in rule.items() if k != "action"}
        if all(fnmatch.fnmatchcase(values[k], v) for k, v in conds.items()):
            return rule["action"].upper()
    return "RETRY"


@dataclass
class Calls:
    """The mutating API calls made (or, dry run, only printed): ``[(service, operation,
    parameters)]``."""

    dry_run: bool = False
    made: list = field(default_factory=list)

    def __call__(self, client, operation: str, **params):
        self.made.append((client.meta.service_model.service_name, operation, params))
        if self.dry_run:
            return {}
        return getattr(client, operation)(**params)

    def to_text(self) -> str:
        return "\n".join(f"{svc} {op} {json.dumps(p, sort_keys=True)}" for svc, op, p in self.made)


def container_properties(image: str, limits: Limits) -> dict:
    """A runner image's ``containerProperties``: the image, ``verikit batch worker`` as
    its command (the manifest comes per submission), vCPUs and memory from the run's
    limits (memory + ``OVERHEAD_MIB``)."""
    return {"image": image, "command": ["verikit", "batch", "worker"],
            "resourceRequirements": [{"type": "VCPU", "value": str(max(1, int(limits.cpus)))},
                                     {"type": "MEMORY", "value": str(limits.mem_mb + OVERHEAD_MIB)}],
            "environment": []}


def setup(batch, *, subnets: list[str], security_groups: list[str], images: dict[str, str], limits: Limits,
          max_vcpus: int = 256, instance_role: str = "ecsInstanceRole", service_role: str | None = None,
          attempt_s: int = 24 * 3600, job_role: str | None = None,
          environment: dict | None = None, calls: Calls | None = None) -> Calls:
    """Create or update (idempotent, tagged ``verikit=1``) the managed ``SPOT`` compute
    environment (``SPOT_PRICE_CAPACITY_OPTIMIZED``, ``minvCpus`` 0), the job queue, and one
    job definition per runner image (``timeout.attemptDurationSeconds``, resources from
    ``limits``, :data:`RETRY_STRATEGY`). A job definition gets a new revision only when its
    properties changed.

    Args:
        batch: a boto3 ``batch`` client; images: toolchain -> runner image URI;
        instance_role: the spot instances' instance profile; service_role: AWS Batch's
            service role (None: AWS uses its service-linked role ``AWSServiceRoleForBatch``);
        job_role: the IAM role the workers run as (``jobRoleArn``: S3 read/write on the
            runs' prefix; README "Cloud batch (AWS)"); None: the instance's role;
        environment: extra variables for the workers (e.g. a stand-in's endpoint in tests);
        calls: where mutating calls go (dry run: printed, not made).

    Returns:
        The :class:`Calls` made.
    """
    calls = calls or Calls()
    resources = {"type": "SPOT", "allocationStrategy": "SPOT_PRICE_CAPACITY_OPTIMIZED", "minvCpus": 0,
                 "maxvCpus": max_vcpus, "desiredvCpus": 0, "instanceTypes": ["optimal"], "subnets": list(subnets),
                 "securityGroupIds": list(security_groups), "instanceRole": instance_role, "tags": dict(TAGS)}
    existing = _describe(batch, "describe_compute_environments", "computeEnvironments",
                         computeEnvironments=[COMPUTE_ENVIRONMENT])
    if not existing:
        calls(batch, "create_compute_environment", computeEnvironmentName=COMPUTE_ENVIRONMENT, type="MANAGED",
              state="ENABLED", computeResources=resources, tags=dict(TAGS),
              **({"serviceRole": service_role} if service_role else {}))
    else:
        have = existing[0].get("computeResources", {})
        if (have.get("maxvCpus"), sorted(have.get("subnets", [])), sorted(have.get("securityGroupIds", []))) != \
                (max_vcpus, sorted(subnets), sorted(security_groups)):
            calls(batch, "update_compute_environment", computeEnvironment=COMPUTE_ENVIRONMENT,
                  computeResources={"maxvCpus": max_vcpus, "subnets": list(subnets),
                                    "securityGroupIds": list(security_groups)})
    if not _describe(batch, "describe_job_queues", "jobQueues", jobQueues=[JOB_QUEUE]):
        calls(batch, "create_job_queue", jobQueueName=JOB_QUEUE, state="ENABLED", priority=1,
              computeEnvironmentOrder=[{"order": 1, "computeEnvironment": COMPUTE_ENVIRONMENT}], tags=dict(TAGS))
    for toolchain, image in sorted(images.items()):
        props = container_properties(image, limits)
        props["environment"] = [{"name": k, "value": v} for k, v in sorted((environment or {}).items())]
        if job_role:
            props["jobRoleArn"] = job_role
        name = job_definition_name(toolchain)
        active = _describe(batch, "describe_job_definitions", "jobDefinitions", jobDefinitionName=name,
                           status="ACTIVE")
        latest = max(active, key=lambda d: d.get("revision", 0), default=None)
        wanted = {"containerProperties": props, "timeout": {"attemptDurationSeconds": int(attempt_s)},
                  "retryStrategy": RETRY_STRATEGY}
        if latest is None or any(not _same(latest.get(k), v) for k, v in wanted.items()):
            calls(batch, "register_job_definition", jobDefinitionName=name, type="container",
                  platformCapabilities=["EC2"], tags=dict(TAGS), **wanted)
    return calls


def _same(have, want, key: str = "") -> bool:
    """``want`` is contained in ``have`` (AWS adds defaults to what it returns; a retry
    ``action`` is case-insensitive)."""
    if isinstance(want, dict):
        return isinstance(have, dict) and all(_same(have.get(k), v, k) for k, v in want.items())
    if isinstance(want, list):
        return isinstance(have, list) and len(have) == len(want) and all(_same(h, w) for h, w in zip(have, want))
    if key == "action" and isinstance(have, str) and isinstance(want, str):
        return have.upper() == want.upper()
    return have == want


def _describe(batch, operation: str, key: str, **params) -> list:
    try:
        return getattr(batch, operation)(**params).get(key, [])
    except Exception as exc:  # noqa: BLE001  (dry run without credentials: assume nothing exists)
        if type(exc).__name__ in ("NoCredentialsError", "NoRegionError", "EndpointConnectionError"):
            return []
        raise


def submit(batch, *, run_uri: str, name: str, job_definition: str, queue: str, shards: list[int],
           attempt_s: int, calls: Calls | None = None) -> dict:
    """Submit the array job (one child per entry of ``shards``; AWS needs 2..10,000
    children, so one shard is submitted as a plain job) and the reducer, which
    ``dependsOn`` it.

    Args:
        run_uri: the run's S3 URI (its manifest is ``<run_uri>/manifest.json``);
            shards: the shard numbers the children run, child ``i`` runs ``shards[i]``.

    Returns:
        ``{"array_job_id", "reducer_job_id", "shards"}``.
    """
    calls = calls or Calls()
    worker = ["verikit", "batch", "worker", "--manifest", f"{run_uri}/manifest.json",
              "--shards", ",".join(map(str, shards))]
    params = dict(jobName=f"{name}-shards", jobQueue=queue, jobDefinition=job_definition,
                  containerOverrides={"command": worker}, timeout={"attemptDurationSeconds": int(attempt_s)},
                  tags=dict(TAGS), propagateTags=True)
    if len(shards) > 1:
        params["arrayProperties"] = {"size": len(shards)}
    else:
        worker += ["--shard", "0"]
    array = calls(batch, "submit_job", **params)
    reducer = calls(batch, "submit_job", jobName=f"{name}-reduce", jobQueue=queue, jobDefinition=job_definition,
                    dependsOn=[{"jobId": array.get("jobId", "DRY-RUN")}],
                    containerOverrides={"command": ["verikit", "batch", "reduce", "--manifest",
                                                    f"{run_uri}/manifest.json"]},
                    tags=dict(TAGS), propagateTags=True)
    return {"array_job_id": array.get("jobId"), "reducer_job_id": reducer.get("jobId"), "shards": list(shards)}


def child_statuses(batch, submission: dict) -> dict[int, dict]:
    """Shard number -> ``{"status", "statusReason", "job_id"}`` of each child of a
    submission (``describe_jobs`` on ``<array id>:<i>``, 100 ids a call)."""
    array, shards = submission["array_job_id"], submission["shards"]
    ids = [f"{array}:{i}" for i in range(len(shards))] if len(shards) > 1 else [array]
    out = {}
    for start in range(0, len(ids), 100):
        for job in batch.describe_jobs(jobs=ids[start:start + 100]).get("jobs", []):
            i = int(job["jobId"].rsplit(":", 1)[1]) if len(shards) > 1 else 0
            out[shards[i]] = {"status": job.get("status"), "statusReason": job.get("statusReason"),
                              "job_id": job["jobId"]}
    batch.describe_jobs(jobs=[array])  # the parent's own status follows its children's
    return out


class AwsBatch:
    """The AWS Batch engine of :mod:`harness.batch.control` (an :class:`~harness.batch.control.Engine`):
    array jobs on a job queue with a runner image's job definition, and their reducers.

    Args:
        batch: a boto3 ``batch`` client; queue: the job queue; job_definition: the runner
            image's job definition; dry_run: record and print the calls, make none.
    """

    backend = "aws-batch"
    label = "AWS"

    def __init__(self, batch, *, queue: str, job_definition: str, dry_run: bool = False):
        self.batch, self.queue, self.job_definition = batch, queue, job_definition
        self.calls = Calls(dry_run=dry_run)

    @classmethod
    def from_info(cls, batch, info: dict, manifest: dict, *, queue: str | None = None,
                  dry_run: bool = False) -> "AwsBatch":
        """The engine a run was submitted to (its submissions.json ``info``); ``queue``
        overrides the recorded queue."""
        return cls(batch, queue=queue or info.get("queue") or JOB_QUEUE, dry_run=dry_run,
                   job_definition=info.get("job_definition") or job_definition_name(manifest["toolchain"]["name"]))

    def settings(self) -> dict:
        return {"queue": self.queue, "job_definition": self.job_definition}

    def submit(self, store, name: str, shards: list[int], attempt_s: int) -> dict:
        return submit(self.batch, run_uri=store.uri, name=name, job_definition=self.job_definition, queue=self.queue,
                      shards=shards, attempt_s=attempt_s, calls=self.calls)

    def statuses(self, submission: dict) -> dict[int, dict]:
        return {n: {"state": v["status"], "reason": v.get("statusReason"), "job_id": v["job_id"]}
                for n, v in child_statuses(self.batch, submission).items()}

    def cancel(self, submission: dict) -> list[str]:
        """``TerminateJob`` on the array job (AWS Batch ends its children with it) and its reducer."""
        ids = [j for j in (submission.get("array_job_id"), submission.get("reducer_job_id")) if j]
        for job in ids:
            self.calls(self.batch, "terminate_job", jobId=job, reason="verikit batch cancel")
        return ids

    def dry_run_text(self) -> str:
        return self.calls.to_text()
