"""The SLURM engine (:class:`Slurm`): one ``sbatch --array`` job per submission whose
tasks run ``verikit batch worker`` on the compute nodes, with the run's store in a
directory on the cluster's shared filesystem (:class:`harness.results.DirStore`); and the
checks made before anything is submitted (:func:`check_cluster`, :func:`check_store`,
:func:`check_time_limit`).

Every SLURM client command (``sbatch``, ``squeue``, ``scontrol``, ``scancel``, ``sinfo``,
``sacctmgr``) is started by :func:`_slurm`, through :func:`harness.sandbox.commands.run_command`,
with a timeout, and read from machine-readable output (``--parsable``, ``-h -o`` formats,
``scontrol -o`` one-line records). Field names and formats follow the Slurm 22.05 man
pages (sbatch(1), squeue(1), scontrol(1), sinfo(1), slurm.conf(5)).

Array task ``i`` runs shard ``i`` (``--array=0-2``, a resubmission ``--array=1``), so
``SLURM_ARRAY_TASK_ID`` is the shard number. Each task's batch script (:func:`batch_script`)
runs the worker in the background and waits for it:

- ``USR1``, which SLURM sends ``--signal=B:USR1@<lead>`` seconds before the time limit, is
  passed on to the worker as SIGTERM (it finishes the running job, writes its record and
  starts no other), and the task then requeues itself (``scontrol requeue``): its next
  attempt skips the jobs with a record and resumes. The lead is the longest job's wall
  limit plus :data:`SIGNAL_MARGIN_S`, so the running job always ends before the limit.
- SIGTERM (``scancel``, preemption) is passed on the same way, without requeueing: a
  cancelled task stays cancelled (``verikit batch resubmit`` runs what it left); SLURM
  itself requeues a preempted task or one whose node failed (``--requeue``).
"""

from __future__ import annotations

import contextlib
import getpass
import re
import secrets
import shlex
import socket
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ..results import Store
from ..runner import RunError
from ..sandbox.commands import run_command

#: Seconds a client command may take (the controller's own MessageTimeout is 10 s by default).
COMMAND_TIMEOUT_S = 30
#: The signal sent before the time limit; only to the batch shell (``B:``), which passes it on.
SIGNAL = "USR1"
#: Seconds beyond the longest job's wall limit between the signal and the time limit: the
#: record is written, and SLURM checks limits periodically (it may signal up to 60 s early).
SIGNAL_MARGIN_S = 60
#: Seconds a task needs before its first job: staging the inputs, planning, probing.
STARTUP_S = 60
#: Memory the kit itself needs beside the jobs' own limits (MiB), as on AWS Batch.
OVERHEAD_MIB = 512
#: Array tasks running at once unless ``--max-running`` says otherwise (``--array=...%N``).
MAX_RUNNING = 100
#: Filesystem types (``/proc/self/mountinfo``) that only this host sees.
LOCAL_FS = {"ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "ramfs", "f2fs", "vfat", "exfat", "ntfs", "ntfs3",
            "jfs", "reiserfs", "overlay", "zfs", "squashfs"}


def _slurm(argv: list[str], what: str, *, ok_codes: tuple[int, ...] = (0,)) -> str:
    """Run a SLURM client command; its standard output.

    Raises:
        RunError: it is not on PATH, did not answer within :data:`COMMAND_TIMEOUT_S`, or
            exited otherwise than ``ok_codes`` (``what`` it was for, and its message).
    """
    proc = run_command(argv, timeout=COMMAND_TIMEOUT_S)
    if proc.returncode is None or proc.returncode not in ok_codes:
        why = proc.start_error or (proc.stderr.strip() or proc.stdout.strip() or f"exit {proc.returncode}")
        raise RunError(f"{what}: {shlex.join(argv)}: {why}")
    return proc.stdout


def parse_time(text: str) -> int | None:
    """A SLURM time (sbatch ``--time``, ``MaxTime``) in seconds: ``M``, ``M:S``,
    ``H:M:S``, ``D-H``, ``D-H:M``, ``D-H:M:S``; None for ``UNLIMITED``/``INFINITE``.

    Raises:
        ValueError: none of these forms.
    """
    text = text.strip()
    if text.upper() in ("UNLIMITED", "INFINITE"):
        return None
    m = re.fullmatch(r"(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?", text)
    if not m:
        raise ValueError(f"{text!r} is not a SLURM time (minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS)")
    days, a, b, c = m.groups()
    if days is not None:  # D-H, D-H:M, D-H:M:S
        h, mi, s = int(a), int(b or 0), int(c or 0)
    elif c is not None:  # H:M:S
        h, mi, s = int(a), int(b), int(c)
    else:  # M, M:S
        h, mi, s = 0, int(a), int(b or 0)
    seconds = int(days or 0) * 86400 + h * 3600 + mi * 60 + s
    if seconds <= 0:
        raise ValueError(f"{text!r}: a time limit must be above 0")
    return seconds


def array_spec(shards: list[int], max_running: int) -> str:
    """sbatch ``--array`` for these task ids: ranges, then ``%max_running``
    (``[0, 1, 2, 5]``, 2 -> ``0-2,5%2``)."""
    parts, ids = [], sorted(set(shards))
    start = prev = ids[0]
    for i in ids[1:] + [None]:
        if i is not None and i == prev + 1:
            prev = i
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        if i is not None:
            start = prev = i
    return f"{','.join(parts)}%{max_running}"


def expand_tasks(text: str) -> list[int]:
    """The task ids of squeue's ``%i`` array part or scontrol's ``ArrayTaskId``:
    ``4``, ``[0-2%2]``, ``1,3-5``, ``0-6:2``."""
    out = []
    for part in text.strip("[]").split("%")[0].split(","):
        if not part:
            continue
        rng, _, step = part.partition(":")
        lo, _, hi = rng.partition("-")
        out += range(int(lo), int(hi or lo) + 1, int(step or 1))
    return out


def _records(text: str) -> list[dict[str, str]]:
    """``scontrol -o`` output: one ``Key=Value Key=Value`` record a line (values without
    spaces; what follows a key up to the next `` Key=`` otherwise)."""
    out = []
    for line in text.splitlines():
        pairs = re.findall(r"(\S+?)=(.*?)(?= \S+?=|$)", line.strip())
        if pairs:
            out.append(dict(pairs))
    return out


@dataclass
class Cluster:
    """What the checks learnt of the cluster: the partition used, its ``MaxTime`` (s,
    None: unlimited), its nodes' names and addresses, whether accounting is kept, and
    ``MaxArraySize``."""

    partition: str
    max_time_s: int | None
    nodes: dict[str, set[str]] = field(default_factory=dict)
    accounting: bool = False
    max_array_size: int = 1001


def check_cluster(partition: str | None, account: str | None) -> Cluster:
    """Check that SLURM is there and takes ``partition`` and ``account``.

    Args:
        partition: a partition name, or None for the cluster's default one.
        account: an account to charge, or None.

    Raises:
        RunError: ``sbatch`` is not on PATH; the controller does not answer
            (``scontrol ping``); no such partition (the message lists them); an account
            given where the cluster keeps no accounting (``AccountingStorageType`` none:
            SLURM would accept any name and check nothing), or one that has no association
            with this user (``sacctmgr``).
    """
    if run_command(["sbatch", "--version"], timeout=COMMAND_TIMEOUT_S).start_error:
        raise RunError("--backend slurm: sbatch is not on PATH: run this on a SLURM cluster's login node "
                       "(or install the SLURM client programs)")
    ping = run_command(["scontrol", "ping"], timeout=COMMAND_TIMEOUT_S)
    if ping.returncode != 0 or " is UP" not in ping.stdout:
        raise RunError(f"--backend slurm: the SLURM controller does not answer (scontrol ping: "
                       f"{(ping.start_error or ping.stdout.strip() or ping.stderr.strip())})")
    parts = {r["PartitionName"]: r for r in _records(_slurm(["scontrol", "-o", "show", "partition"], "partitions"))}
    if partition is None:
        partition = next((n for n, r in parts.items() if r.get("Default") == "YES"), None)
        if partition is None:
            raise RunError(f"--backend slurm: the cluster has no default partition: give --partition "
                           f"({', '.join(parts) or 'none found'})")
    if partition not in parts:
        raise RunError(f"--partition {partition}: no such partition (the cluster has: {', '.join(parts) or 'none'})")
    config = {k.strip(): v.strip() for k, _, v in (line.partition("=") for line in
                                                    _slurm(["scontrol", "show", "config"], "configuration").splitlines())}
    cluster = Cluster(partition, parse_time(parts[partition].get("MaxTime", "UNLIMITED")),
                      accounting=config.get("AccountingStorageType", "accounting_storage/none") != "accounting_storage/none",
                      max_array_size=int(config.get("MaxArraySize", "1001") or 1001))
    for line in _slurm(["sinfo", "-h", "-N", "-p", partition, "-o", "%N|%n|%o"], "nodes").splitlines():
        name, _, rest = line.partition("|")
        cluster.nodes.setdefault(name, set()).update(x for x in rest.split("|") if x)
    if account is not None:
        if not cluster.accounting:
            raise RunError(f"--account {account}: this cluster keeps no accounts (AccountingStorageType is "
                           f"accounting_storage/none), so SLURM would take any name and check nothing; leave it out")
        user = getpass.getuser()
        found = _slurm(["sacctmgr", "-n", "-P", "show", "associations", f"where account={account}", f"user={user}",
                        "format=Account"], "accounts")
        if account not in found.split():
            raise RunError(f"--account {account}: no such account for user {user} (sacctmgr show associations)")
    return cluster


def _this_host() -> set[str]:
    name = socket.gethostname()
    return {name, name.split(".")[0], socket.getfqdn(), "localhost", "127.0.0.1", "::1"}


def _filesystem(path: Path) -> tuple[str, str] | None:
    """``(type, mount point)`` of the filesystem holding ``path`` (``/proc/self/mountinfo``:
    the longest mount point that contains it), or None when it cannot be read."""
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return None
    best = None
    for line in lines:
        left, _, right = line.partition(" - ")
        fields = left.split()
        if len(fields) < 5 or not right:
            continue
        mount = fields[4].encode().decode("unicode_escape")  # mountinfo escapes spaces as \040
        if (str(path) == mount or str(path).startswith(mount.rstrip("/") + "/")) and \
                (best is None or len(mount) > len(best[1])):
            best = (right.split()[0], mount)
    return best


def check_store(base: str, cluster: Cluster) -> Path:
    """Check the directory the run's store goes in (``--store``); returns it.

    Every compute node must see it at the same path: it must be absolute and writable
    (a probe file is written, read back and removed), and when the partition has nodes
    other than this host it must not be on a filesystem only this host sees (its type
    in ``/proc/self/mountinfo``: ext4, xfs, tmpfs, ...; NFS, Lustre, GPFS, BeeGFS and
    CephFS pass). That last check cannot see a local disk that this host exports to the
    others (an NFS server as the login node): then the store is shared though local here,
    and the check refuses it wrongly.

    Raises:
        RunError: one of those fails (names the directory and why).
    """
    path = Path(base)
    if not path.is_absolute():
        raise RunError(f"--store {base}: give an absolute path (the compute nodes resolve it, not this shell's "
                       f"directory)")
    probe = path / f".verikit-probe-{secrets.token_hex(4)}"
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe.write_text("verikit\n")
        if probe.read_text() != "verikit\n":
            raise OSError("what was written is not what is read back")
    except OSError as exc:
        raise RunError(f"--store {base}: not writable ({exc.strerror or exc})") from None
    finally:
        with contextlib.suppress(OSError):
            probe.unlink(missing_ok=True)
    fs = _filesystem(path.resolve())
    others = sorted(n for n, addrs in cluster.nodes.items() if not ({n} | addrs) & _this_host())
    if fs and fs[0] in LOCAL_FS and others:
        raise RunError(f"--store {base}: on a filesystem only this host sees ({fs[0]} at {fs[1]}), but partition "
                       f"{cluster.partition} runs tasks on other nodes ({', '.join(others[:5])}): put the store on the "
                       f"cluster's shared filesystem (NFS, Lustre, GPFS, BeeGFS, CephFS)")
    return path


def minimum_time_s(job_wall_s: float) -> int:
    """The shortest time limit (s) with which a task can always finish a job: the
    start-up, the longest job's wall limit and the signal's margin."""
    return int(STARTUP_S + job_wall_s + SIGNAL_MARGIN_S)


def check_time_limit(time_limit_s: int, job_wall_s: float, cluster: Cluster) -> None:
    """Raises RunError when ``--time-limit`` cannot hold the longest planned job (its wall
    limit ``job_wall_s`` plus start-up and margin: :func:`minimum_time_s`) or exceeds the
    partition's ``MaxTime``."""
    need = minimum_time_s(job_wall_s)
    if time_limit_s < need:
        raise RunError(f"--time-limit {time_limit_s // 60} min is shorter than the longest planned job needs: "
                       f"{need} s = its wall limit {job_wall_s:g} s + {STARTUP_S} s start-up + {SIGNAL_MARGIN_S} s "
                       f"for the stop signal; give at least {-(-need // 60)} min (a task longer than its time "
                       f"limit is requeued and resumes, so the limit need not hold a whole shard)")
    if cluster.max_time_s is not None and time_limit_s > cluster.max_time_s:
        raise RunError(f"--time-limit {time_limit_s // 60} min exceeds partition {cluster.partition}'s MaxTime "
                       f"({cluster.max_time_s // 60} min)")


def batch_script(store: Store, python: str) -> str:
    """The batch script every array task runs (see the module docstring): the worker on
    the task's shard, ``USR1`` -> stop and requeue, SIGTERM -> stop."""
    manifest = shlex.quote(f"{store.uri}/manifest.json")
    return f"""#!/bin/bash
# verikit batch worker: shard $SLURM_ARRAY_TASK_ID of the batch run in {store.uri}.
# {SIGNAL} (sent before the time limit): the worker stops after its running job, then the task
# requeues itself and its next attempt resumes; SIGTERM (scancel, preemption): it stops the same way.
requeue=0
{shlex.quote(python)} -m harness batch worker --manifest {manifest} &
worker=$!
trap 'requeue=1; kill -TERM "$worker" 2>/dev/null' {SIGNAL}
trap 'kill -TERM "$worker" 2>/dev/null' TERM
while :; do
  wait "$worker"; rc=$?
  kill -0 "$worker" 2>/dev/null || break
done
echo "verikit: worker exited $rc (attempt ${{SLURM_RESTART_COUNT:-0}})"
if [ "$requeue" = 1 ] && [ "$rc" = 143 ]; then
  scontrol requeue "${{SLURM_ARRAY_JOB_ID}}_${{SLURM_ARRAY_TASK_ID}}"
fi
exit "$rc"
"""


class Slurm:
    """The SLURM engine of :mod:`harness.batch.control` (an :class:`~harness.batch.control.Engine`).

    Args:
        partition: where tasks run; account: charged, or None; time_limit_s: each
            attempt's time limit (s; None: the ``attempt_s`` :meth:`submit` is given);
            max_running: array tasks at once; cpus: CPUs per task (the jobs' CPUs x the jobs a worker runs at once);
            mem_mb: memory per task (MiB); signal_lead_s: seconds before the time limit
            at which USR1 is sent; python: the interpreter that runs the kit on the
            compute nodes (the same path there: a virtualenv on the shared filesystem);
            dry_run: write and submit nothing, keep the script and the command.
    """

    backend = "slurm"
    label = "SLURM"

    def __init__(self, *, partition: str, account: str | None = None, time_limit_s: int | None = None,
                 max_running: int = MAX_RUNNING, cpus: int = 1, mem_mb: int = 4096, signal_lead_s: int = 660,
                 python: str = sys.executable, dry_run: bool = False):
        self.partition, self.account, self.time_limit_s = partition, account, time_limit_s
        self.max_running, self.cpus, self.mem_mb, self.signal_lead_s = max_running, cpus, mem_mb, signal_lead_s
        self.python, self.dry_run = python, dry_run
        self.shown: list[str] = []

    @classmethod
    def from_info(cls, info: dict, *, dry_run: bool = False) -> "Slurm":
        """The engine a run was submitted to (its submissions.json ``info``)."""
        return cls(partition=info["partition"], account=info.get("account"), time_limit_s=info.get("time_limit_s"),
                   max_running=info.get("max_running", MAX_RUNNING),
                   cpus=info.get("cpus_per_task", 1), mem_mb=info.get("mem_mb", 4096),
                   signal_lead_s=info.get("signal_lead_s", 660), python=info.get("python", sys.executable),
                   dry_run=dry_run)

    def settings(self) -> dict:
        return {"partition": self.partition, "account": self.account, "time_limit_s": self.time_limit_s,
                "max_running": self.max_running, "cpus_per_task": self.cpus,
                "mem_mb": self.mem_mb, "signal_lead_s": self.signal_lead_s, "python": self.python}

    def sbatch_argv(self, store: Store, name: str, shards: list[int], time_s: int, script: str) -> list[str]:
        """The ``sbatch`` command line of one submission (``script``: the batch script's path)."""
        argv = ["sbatch", "--parsable", f"--job-name=verikit-{name}", f"--array={array_spec(shards, self.max_running)}",
                f"--partition={self.partition}", f"--time={-(-time_s // 60)}", "--nodes=1", "--ntasks=1",
                f"--cpus-per-task={self.cpus}", f"--mem={self.mem_mb}M", "--requeue",
                f"--signal=B:{SIGNAL}@{self.signal_lead_s}", f"--output={store.uri}/slurm/%A_%a.out",
                "--open-mode=append", "--export=ALL"]
        return argv + ([f"--account={self.account}"] if self.account else []) + [script]

    def submit(self, store: Store, name: str, shards: list[int], attempt_s: int) -> dict:
        time_s = self.time_limit_s or attempt_s
        script_name = f"slurm/{name}.sh"
        argv = self.sbatch_argv(store, name, shards, time_s, f"{store.uri}/{script_name}")
        text = batch_script(store, self.python)
        if self.dry_run:
            self.shown += [f"# {script_name}", text, shlex.join(argv)]
            return {"array_job_id": None, "shards": list(shards), "script": script_name, "time_limit_s": time_s}
        store.put_bytes(script_name, text.encode())
        out = _slurm(argv, "sbatch refused the array job").strip()
        job_id = out.split(";")[0]
        if not job_id.isdigit():
            raise RunError(f"sbatch: no job id in its answer: {out!r}")
        return {"array_job_id": job_id, "shards": list(shards), "script": script_name, "time_limit_s": time_s,
                "sbatch": argv}

    def statuses(self, submission: dict) -> dict[int, dict]:
        """Task -> state from ``squeue -t all -r`` (pending, running and ended tasks the
        controller still holds: ``MinJobAge``, 300 s by default); {} once it forgot them."""
        job = submission["array_job_id"]
        proc = run_command(["squeue", "-h", "-r", "-t", "all", "-j", job, "-o", "%i|%T|%r"], timeout=COMMAND_TIMEOUT_S)
        if proc.returncode != 0:  # "Invalid job id specified": the controller no longer knows it
            return {}
        out = {}
        for line in proc.stdout.splitlines():
            ident, _, rest = line.partition("|")
            state, _, reason = rest.partition("|")
            _, _, tasks = ident.partition("_")
            for t in expand_tasks(tasks) if tasks else []:
                if t in submission["shards"]:
                    out[t] = {"state": state, "reason": None if reason in ("", "None") else reason,
                              "job_id": f"{job}_{t}"}
        return out

    def cancel(self, submission: dict) -> list[str]:
        """``scancel`` on the array job (every task not ended)."""
        job = submission["array_job_id"]
        live = [s for _, s in sorted(self.statuses(submission).items())
                if s["state"] in ("PENDING", "RUNNING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "SUSPENDED",
                                  "CONFIGURING", "RESIZING", "COMPLETING", "SIGNALING", "STAGE_OUT")]
        if not live:
            return []
        if self.dry_run:
            self.shown.append(shlex.join(["scancel", job]))
        else:
            _slurm(["scancel", job], f"scancel of array job {job}")
        return [s["job_id"] for s in live]

    def dry_run_text(self) -> str:
        return "\n".join(self.shown)
