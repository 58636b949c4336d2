"""The SLURM backend against a real SLURM: Debian's slurm-wlm 22.05 (slurmctld +
slurmd) with munge, a single-node cluster on 127.0.0.1 started for this module by
``scripts/slurm-service.sh`` (node ``localhost`` with this machine's 2 CPUs; no
accounting; proctrack/linuxproc). Workers run the real Frama-C (host sandbox, and once
the container sandbox under Podman); the store is a directory (:class:`DirStore`).

- casp-sample10 gold on six of its tasks (``FAST``) in 3 array tasks of 2 jobs (balanced
  by the committed reference run's timings; each shard keeps a job to run after the first
  record, so the drain finds two tasks running and one pending, as with all ten tasks)
  equals the local run (the committed reference
  ``results/reproduced/casp/reproduce``: ``verikit compare --subset``); the node is drained once the
  first record is in: the running tasks finish, the pending one waits, and after
  ``state=resume`` it runs; nothing is lost or duplicated;
- one array task cancelled mid-run (``scancel JOB_1``), then ``batch resubmit`` runs only
  that shard, which skips what it had recorded;
- the time limit: SLURM sends ``USR1`` to the batch shell ``--signal=B:USR1@N`` seconds
  before the limit; here that signal is delivered the way slurmd delivers it, with
  ``scancel --batch --signal=USR1`` (SLURM's own timer has a minute's resolution and is
  polled every 30 s: waiting for it would cost minutes; docs/cluster.md reports a real
  time-limit run measured by hand). The task stops after its running job, requeues itself,
  and its next attempt resumes;
- bad input: one message, exit 2, nothing submitted.

Not exercised here: several nodes, a real shared filesystem across nodes (NFS), accounting
and ``--account`` against slurmdbd, QOS/fairshare, preemption by another job.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from conftest import _require
from harness.batch import slurm, worker
from harness.cli import main
from harness.results import DirStore, ValidationError, load_records, record_identity, record_outcome

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "results" / "reproduced" / "casp" / "reproduce"
RUN = ["run", "casp", "--mode", "gold", "--dataset", "casp-sample10", "--backend", "slurm"]
FAST = ["02_12", "04_140", "06_114", "05_125", "07_71", "01_57"]  # about 1-2 s each with Frama-C here


# --- without a cluster -----------------------------------------------------------------------


def test_slurm_times_arrays_and_records():
    assert [slurm.parse_time(t) for t in ("90", "5:30", "1:02:03", "2-3", "1-00:30", "1-0:0:1", "UNLIMITED")] == \
        [5400, 330, 3723, 2 * 86400 + 3 * 3600, 86400 + 1800, 86401, None]
    for bad in ("0", "5 min", "1:2:3:4", ""):
        with pytest.raises(ValueError):
            slurm.parse_time(bad)
    assert slurm.array_spec([0, 1, 2, 5, 7, 8], 4) == "0-2,5,7-8%4"
    assert slurm.array_spec([3], 100) == "3%100"
    assert slurm.expand_tasks("[0-2%2]") == [0, 1, 2] and slurm.expand_tasks("1,4-5") == [1, 4, 5]
    assert slurm.expand_tasks("0-6:3") == [0, 3, 6]
    line = "PartitionName=debug AllowGroups=ALL Default=YES MaxTime=1-00:00:00 Nodes=n[1-2] State=UP"
    (rec,) = slurm._records(line)
    assert rec["Default"] == "YES" and slurm.parse_time(rec["MaxTime"]) == 86400 and rec["Nodes"] == "n[1-2]"


def test_sbatch_line_and_batch_script(tmp_path):
    store = DirStore(tmp_path / "run")
    eng = slurm.Slurm(partition="debug", account="proj", max_running=5, cpus=2, mem_mb=4608, signal_lead_s=660,
                      python="/venv/bin/python")
    argv = eng.sbatch_argv(store, "casp-x", [0, 1, 2], 3601, "S.sh")
    assert argv[:2] == ["sbatch", "--parsable"] and argv[-1] == "S.sh"
    assert {"--array=0-2%5", "--partition=debug", "--account=proj", "--time=61", "--cpus-per-task=2", "--mem=4608M",
            "--requeue", "--signal=B:USR1@660", f"--output={store.uri}/slurm/%A_%a.out"} <= set(argv)
    script = slurm.batch_script(store, "/venv/bin/python")
    assert f"/venv/bin/python -m harness batch worker --manifest {store.uri}/manifest.json &" in script
    assert "trap 'requeue=1; kill -TERM \"$worker\" 2>/dev/null' USR1" in script
    assert 'scontrol requeue "${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}"' in script
    assert subprocess.run(["bash", "-n"], input=script, text=True).returncode == 0


def test_dir_store_writes_atomically_and_checks_records_both_ways(tmp_path):
    store = DirStore(tmp_path / "run")
    rec = json.loads((ROOT / "results" / "reproduced" / "casp" / "records.jsonl").read_text().splitlines()[0])
    assert store.put_record(rec) == f"records/{rec['key']}.json" and store.record_keys() == {rec["key"]}
    with pytest.raises(ValidationError):
        store.put_record({**rec, "verdict": "great"})
    with pytest.raises(ValidationError, match="key"):
        store.put_record({**rec, "task_id": "99_999"})
    store.put_bytes(f"records/{rec['key'][:-1]}0.json", json.dumps({**rec, "task_id": "02_12"}).encode())  # wrong name
    store.put_bytes("records/torn.json", b'{"key": ')
    (tmp_path / "run" / "records" / f".{rec['key']}.json.tmp-1-ab").write_text('{"key": ')  # a writer killed mid-file
    found, problems = store.records()
    assert list(found) == [rec["key"]] and len(problems) == 2
    assert not any(n.startswith(".") or "/." in n for n in store.names())
    assert [p.name for p in (tmp_path / "run" / "records").iterdir() if ".tmp-" in p.name] == \
        [f".{rec['key']}.json.tmp-1-ab"]  # only the planted one: put_bytes leaves none
    with pytest.raises(ValueError, match="absolute"):
        DirStore("relative/run")
    with pytest.raises(ValueError, match="inside the store"):
        store.get_bytes("../escape")


def test_a_store_only_this_host_sees_is_refused_when_other_nodes_run_tasks(tmp_path):
    fs = slurm._filesystem(tmp_path.resolve())
    if fs is None or fs[0] not in slurm.LOCAL_FS:
        pytest.skip(f"{tmp_path} is on {fs}: not a local filesystem type")
    many = slurm.Cluster("batch", None, nodes={"localhost": {"127.0.0.1"}, "node7": {"10.0.0.7"}})
    with pytest.raises(slurm.RunError, match=r"only this host sees \(\w+ at .*other nodes \(node7\)"):
        slurm.check_store(str(tmp_path / "store"), many)
    assert slurm.check_store(str(tmp_path / "store"), slurm.Cluster("debug", None, nodes={"localhost": {"127.0.0.1"}}))


# --- a real single-node SLURM ------------------------------------------------------------------


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, casp_mirror):
    """The cluster (SLURM_CONF set for this process and the jobs it submits), and
    VERIKIT_CACHE/VERIKIT_DATA of this module; stopped after the module."""
    state = tmp_path_factory.mktemp("slurm")
    t0 = time.monotonic()
    proc = subprocess.run(["bash", str(ROOT / "scripts" / "slurm-service.sh"), "start", str(state)],
                          capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        _require(f"no SLURM cluster (scripts/slurm-service.sh start): {(proc.stdout + proc.stderr)[-1500:]}")
    print(f"SLURM up in {time.monotonic() - t0:.1f} s")
    saved = {k: os.environ.get(k) for k in ("SLURM_CONF", "VERIKIT_CACHE", "VERIKIT_DATA")}
    os.environ.update(SLURM_CONF=str(state / "slurm.conf"), VERIKIT_CACHE=str(state / "cache"),
                      VERIKIT_DATA=str(state / "data"))
    try:
        yield state
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
        subprocess.run(["bash", str(ROOT / "scripts" / "slurm-service.sh"), "stop", str(state)], timeout=120)


def _sh(*argv: str) -> str:
    return subprocess.run(argv, capture_output=True, text=True, check=True, timeout=60).stdout


def _live(job: str) -> dict[str, str]:
    """Task id -> state of the array's tasks that have not ended."""
    out = {}
    for line in _sh("squeue", "-h", "-r", "-j", job, "-o", "%i|%T").splitlines():
        ident, _, state = line.partition("|")
        out[ident] = state
    return out


def _wait(what: str, until, timeout: float = 300):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = until()
        if got:
            return got
        time.sleep(0.1)
    pytest.fail(f"{what}: not reached within {timeout:.0f} s")


def submit(tmp: Path, *args: str) -> tuple[dict, object, dict]:
    """Submit RUN + args with the CLI: ``(batch.json, store, manifest)``."""
    assert main([*RUN, "--store", str(tmp / "store"), "--out", str(tmp / "submit"), *args]) == 0
    info = json.loads((tmp / "submit" / "batch.json").read_text())
    store, manifest = worker.load_manifest(info["run_uri"])
    return info, store, manifest


def _log(store, job: str, task: int) -> str:
    return (Path(store.uri) / "slurm" / f"{job}_{task}.out").read_text()


def _summaries(log: str) -> list[dict]:
    return [json.loads(line) for line in log.splitlines() if line.startswith('{"canary_failures"')]


def _same_as_reference(out: Path):
    got = {record_identity(r): record_outcome(r) for r in load_records(out / "records.jsonl")}
    ref = {record_identity(r): record_outcome(r) for r in load_records(REFERENCE / "records.jsonl")}
    assert got == {k: v for k, v in ref.items() if k in got} and got, (got, ref)


@pytest.fixture(scope="module")
def drained_run(cluster, tmp_path_factory):
    """casp-sample10 gold on the six FAST tasks in 3 array tasks of 2 jobs on the 2-CPU node
    (2 run, 1 waits); the node is
    drained once the first record is in, and resumed 2 s after one of the running tasks
    has ended (a CPU free, the third task still pending)."""
    tmp = tmp_path_factory.mktemp("drained")
    t0 = time.monotonic()
    tasks = [a for t in FAST for a in ("--task", t)]
    info, store, manifest = submit(tmp, "--sandbox", "host", "--shards", "3", "--timings", str(REFERENCE), *tasks)
    assert [len(s) for s in manifest["shards"]] == [2, 2, 2], manifest["shards"]
    job = info["submissions"][0]["array_job_id"]
    _wait("a first record", store.record_keys, 180)
    _sh("scontrol", "update", "nodename=localhost", "state=drain", "reason=verikit-test")

    def a_cpu_free():  # a running task has ended: its CPU is free, and the pending task still waits
        live = _live(job)
        states = list(live.values())
        return live if "PENDING" in states and states.count("RUNNING") < 2 and "COMPLETING" not in states else None

    try:
        _wait("a running task ends while the node is drained", a_cpu_free, 180)
        time.sleep(2)  # a drained node starts nothing, though a CPU is free
        still = _live(job)
        node = _sh("sinfo", "-h", "-N", "-o", "%T").strip()
        recorded_while_drained = len(store.record_keys())
    finally:
        _sh("scontrol", "update", "nodename=localhost", "state=resume")
    _wait("every task ends", lambda: not _live(job), 300)
    wall = time.monotonic() - t0
    out = tmp / "collected"
    assert main(["batch", "collect", store.uri, "--out", str(out)]) == 0
    return {"info": info, "store": store, "manifest": manifest, "out": out, "job": job, "still": still, "node": node,
            "recorded_while_drained": recorded_while_drained, "wall": wall}


@pytest.mark.realtool
def test_array_run_equals_the_local_run(drained_run, capsys):
    store, manifest, out = drained_run["store"], drained_run["manifest"], drained_run["out"]
    assert len(manifest["shards"]) == 3 and len(manifest["jobs"]) == len(FAST)
    assert manifest["backend"] == "slurm" and manifest["spec"]["sandbox"] == "host"
    recs = load_records(out / "records.jsonl")
    assert len(recs) == len(FAST) and {r["key"] for r in recs} == set(manifest["jobs"])
    assert main(["validate", str(out)]) == 0
    assert main(["compare", "--subset", str(REFERENCE), str(out)]) == 0, capsys.readouterr().err
    assert "collected from" in json.dumps(json.loads((out / "report.json").read_text())["notes"])
    assert main(["batch", "status", store.uri]) == 0
    lines = capsys.readouterr().out
    assert f"{len(FAST)}/{len(FAST)} jobs recorded" in lines and lines.count("done; SLURM COMPLETED") == 3, lines
    print(f"casp-sample10 gold ({len(FAST)} tasks), 3 array tasks, node drained mid-run: {drained_run['wall']:.1f} s "
          f"from sbatch to the "
          f"last task's end")


@pytest.mark.realtool
def test_a_node_drained_mid_run_loses_no_records(drained_run):
    """While drained: the node says so, a task that ran ended with its records, the one
    left waited (PENDING) with a CPU free; after resume it ran. Every job has exactly one
    record."""
    assert drained_run["node"] in ("drained", "draining") and drained_run["still"], drained_run
    assert "PENDING" in drained_run["still"].values() and list(drained_run["still"].values()).count("RUNNING") < 2
    assert 1 <= drained_run["recorded_while_drained"] < len(FAST)
    store, manifest = drained_run["store"], drained_run["manifest"]
    assert store.record_keys() == set(manifest["jobs"])
    assert len(store.names("records/")) == len(FAST)


@pytest.fixture(scope="module")
def stopped_run(cluster, tmp_path_factory):
    """6 gold tasks in 2 array tasks of 3 jobs, both running at once: once each has its
    first record, task 0 gets the time-limit signal (USR1 to its batch shell, as slurmd
    sends it at ``--signal=B:USR1@N``) and task 1 is cancelled (``scancel JOB_1``)."""
    tmp = tmp_path_factory.mktemp("stopped")
    t0 = time.monotonic()
    tasks = [a for t in FAST for a in ("--task", t)]
    info, store, manifest = submit(tmp, "--sandbox", "host", "--shards", "2", "--time-limit", "20", *tasks)
    job = info["submissions"][0]["array_job_id"]
    shard = [set(s) for s in manifest["shards"]]
    pending = {0, 1}
    while pending:
        have = _wait("a first record of each shard", lambda: {i for i in pending if store.record_keys() & shard[i]}, 180)
        if 0 in have:
            _sh("scancel", "--batch", "--signal=USR1", f"{job}_0")
        if 1 in have:
            _sh("scancel", f"{job}_1")
        pending -= have
    signalled = time.monotonic() - t0
    _wait("task 0 requeued", lambda: "Restarts=1" in _sh("scontrol", "-o", "show", "job", f"{job}_0"), 120)
    requeued = time.monotonic() - t0
    _wait("task 1 ends", lambda: f"{job}_1" not in _live(job), 120)
    _wait("task 0's second attempt ends", lambda: not _live(job), 240)
    print(f"2 array tasks of 3 jobs: signalled/cancelled at {signalled:.1f} s, task 0 requeued at {requeued:.1f} s, "
          f"all ended at {time.monotonic() - t0:.1f} s")
    return {"tmp": tmp, "info": info, "store": store, "manifest": manifest, "job": job}


@pytest.mark.realtool
def test_the_time_limit_signal_requeues_the_task_and_it_resumes(stopped_run):
    store, manifest, job = stopped_run["store"], stopped_run["manifest"], stopped_run["job"]
    sub = stopped_run["info"]["submissions"][0]
    assert {"--time=20", "--requeue", f"--signal=B:USR1@{600 + slurm.SIGNAL_MARGIN_S}"} <= set(sub["sbatch"])
    log = _log(store, job, 0)
    assert "verikit: worker exited 143 (attempt 0)" in log and "verikit: worker exited 0 (attempt 1)" in log, log
    first, second = _summaries(log)
    assert first["stopped"] and 1 <= first["ran"] < len(manifest["shards"][0])
    assert second["skipped"] >= 1 and second["skipped"] + second["ran"] <= len(manifest["shards"][0])
    assert set(manifest["shards"][0]) <= store.record_keys()


@pytest.mark.realtool
def test_a_cancelled_task_is_resubmitted_and_completes_without_duplicates(stopped_run, capsys):
    store, manifest, job, tmp = stopped_run["store"], stopped_run["manifest"], stopped_run["job"], stopped_run["tmp"]
    victim = set(manifest["shards"][1])
    before = store.record_keys() & victim
    assert 1 <= len(before) < len(victim), "shard 1 was not caught mid-run"
    assert main(["batch", "status", store.uri]) == 0
    assert "partial; SLURM CANCELLED" in (out := capsys.readouterr().out), out

    assert main(["batch", "resubmit", store.uri]) == 0
    resub = json.loads(capsys.readouterr().out)
    assert resub["shards"] == [1] and resub["array_job_id"] != job
    _wait("the resubmitted task ends", lambda: not _live(resub["array_job_id"]), 180)
    (summary,) = _summaries(_log(store, resub["array_job_id"], 1))
    assert summary["skipped"] == len(before) and summary["ran"] + summary["skipped"] <= len(victim)
    assert store.record_keys() == set(manifest["jobs"]) and len(store.names("records/")) == len(FAST)
    assert main(["batch", "resubmit", store.uri]) == 0  # nothing left
    assert "nothing to resubmit" in capsys.readouterr().err
    out = tmp / "collected"
    assert main(["batch", "collect", str(tmp / "submit" / "batch.json"), "--out", str(out)]) == 0
    assert len(load_records(out / "records.jsonl")) == len(FAST)
    _same_as_reference(out)


@pytest.mark.realtool
def test_batch_cancel_stops_the_tasks_not_ended(cluster, tmp_path, capsys):
    info, store, manifest = submit(tmp_path, "--sandbox", "host", "--shards", "2", "--task", FAST[0], "--task", FAST[1])
    job = info["submissions"][0]["array_job_id"]
    assert main(["batch", "cancel", str(tmp_path / "submit")]) == 0
    assert f"asked SLURM to cancel 2 job(s): {job}_0, {job}_1" in capsys.readouterr().err.replace("\n", "")
    _wait("the tasks end", lambda: not _live(job), 60)
    assert main(["batch", "status", store.uri]) == 0
    assert (out := capsys.readouterr().out).count("SLURM CANCELLED") == 2, out
    assert main(["batch", "cancel", store.uri]) == 0
    assert "none was running or pending" in capsys.readouterr().err


@pytest.mark.realtool
@pytest.mark.container
def test_the_worker_runs_in_the_container_sandbox_under_slurm(cluster, tmp_path, engine_image):
    from harness.sandbox import images

    engine_image(lambda: images.resolve("framac"))
    info, store, manifest = submit(tmp_path, "--sandbox", "container", "--shards", "1", "--task", FAST[0])
    job = info["submissions"][0]["array_job_id"]
    assert manifest["spec"]["sandbox"] == "container" and manifest["toolchain"]["image_digest"]
    _wait("the task ends", lambda: not _live(job), 240)
    out = tmp_path / "collected"
    assert main(["batch", "collect", store.uri, "--out", str(out)]) == 0, _log(store, job, 0)
    _same_as_reference(out)


@pytest.mark.realtool
def test_bad_input_is_one_message_and_submits_nothing(cluster, tmp_path, monkeypatch, capsys):
    base = [*RUN, "--sandbox", "host", "--task", FAST[0], "--out", str(tmp_path / "submit")]
    store = str(tmp_path / "store")
    (tmp_path / "a-file").write_text("")
    jobs_before = _sh("squeue", "-h", "-o", "%i")
    cases = [
        (["--store", "relative/store"], "give an absolute path"),
        (["--store", str(tmp_path / "a-file" / "store")], "not writable"),
        (["--store", store, "--partition", "nope"], "--partition nope: no such partition (the cluster has: debug)"),
        (["--store", store, "--account", "proj"], "this cluster keeps no accounts"),
        (["--store", store, "--time-limit", "5"], "shorter than the longest planned job"),
        (["--store", store, "--time-limit", "5 min"], "not a SLURM time"),
        ([], "needs --store DIR"),
    ]
    for extra, message in cases:
        assert main([*base, *extra]) == 2, extra
        err = capsys.readouterr().err.replace("\n", "")
        assert message in err and "Traceback" not in err, (extra, err)
    down = tmp_path / "down.conf"  # the same cluster, but the controller's port has nobody behind it
    down.write_text((cluster / "slurm.conf").read_text().replace("SlurmctldPort=6817", "SlurmctldPort=6999"))
    monkeypatch.setenv("SLURM_CONF", str(down))
    assert main([*base, "--store", store]) == 2
    assert "the SLURM controller does not answer" in capsys.readouterr().err
    monkeypatch.setenv("SLURM_CONF", str(cluster / "slurm.conf"))
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assert main([*base, "--store", store]) == 2
    assert "sbatch is not on PATH" in capsys.readouterr().err
    monkeypatch.undo()
    assert _sh("squeue", "-h", "-o", "%i") == jobs_before
    assert not (tmp_path / "submit").exists() and not list(Path(store).glob("casp-*"))
