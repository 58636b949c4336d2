"""Fault injection on the real command line: the kit runs as a subprocess
(``python -m harness run casp``) with the real Frama-C in the host sandbox, on
casp-sample10 in gold mode, four of its gold pairs (4 jobs, each with its task run; no
canaries: gold mode has none, and a candidate mode's canaries carry the execution
cross-check, which these tests of the run's mechanics do not need), 10-20 s at ``-j 2``
on this 2-core machine.

Each test injects one fault of the audit while Frama-C jobs are running and checks what
the user sees (exit code, one message, no traceback), what is left running (processes
counted by their job mark), what is kept (every record line valid) and that re-running
the same command resumes to a run directory ``verikit validate`` accepts. Every fault hits
a live run of the real Frama-C (nothing here is recorded), and the runs the faults hit are
fresh (``isolated_cache``); the resume after a fault reads the jobs the stopped run did not
finish from the session's shared result cache, where one complete run of the same command
(``reference_cache``, made once per session) left them, each re-derived from its stored
tool output by the kit's parser and judge; the resume itself (records kept, none lost or
duplicated, ``validate``) is what those tests check. The second run on a directory in use
and the full cache disk, whose runs complete and have no resume, run two of the four pairs
(``TWO``: a second run is refused while the first runs one of them, a cache that holds one
entry fills with the first two; neither depends on the count).

The full-disk tests mount a small tmpfs and so need root; they skip otherwise (CI runs as
root). The other faults of the audit have unit-level regression tests in
``test_reliability.py`` (cache tampering with the real Frama-C, validate's checks, bad
limits, torn and non-UTF-8 record lines) and ``test_stopping.py`` (stop mechanics).
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from harness.results import load_records
from harness.sandbox.local import MARK

pytestmark = pytest.mark.realtool

#: the four longest gold pairs of casp-sample10 but 09_52 (1.7-3.5 s each in the reference run)
TASKS = ["00_327", "01_57", "03_379", "08_377"]
ARGS = ["run", "casp", "--mode", "gold", "--sandbox", "host", "-j", "2"] + [a for t in TASKS for a in ("--task", t)]
JOBS = len(TASKS)
#: the runs that complete without a resume (a directory in use, a full cache disk): two pairs
TWO = TASKS[:2]
ARGS_TWO = ARGS[:ARGS.index("--task")] + [a for t in TWO for a in ("--task", t)]


@pytest.fixture
def env(casp_mirror, framac_host, isolated_cache) -> dict:
    return dict(isolated_cache)


@pytest.fixture(scope="module")
def reference_cache(casp_mirror, framac_host, shared_cache, tmp_path_factory) -> Path:
    """The session's shared result cache with the gold records of TASKS: one complete run
    of ARGS (once per session; its 4 jobs and task runs replace those of three resumes)."""
    base = tmp_path_factory.mktemp("reference")
    res = _cli({**os.environ, "VERIKIT_CACHE": str(shared_cache), "VERIKIT_DATA": str(base / "data")}, *ARGS,
               "--out", str(base / "run"))
    assert res.returncode == 0, res.stderr
    return shared_cache


def _start(env: dict, out: Path, *extra: str, args: list[str] = ARGS) -> subprocess.Popen:
    log = open(out.parent / f"{out.name}.stderr", "w")
    return subprocess.Popen([sys.executable, "-m", "harness", *args, "--out", str(out), *extra], env=env,
                            stdout=subprocess.DEVNULL, stderr=log, text=True)


def _stderr(out: Path) -> str:
    return (out.parent / f"{out.name}.stderr").read_text()


def _cli(env: dict, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness", *args], env=env, capture_output=True, text=True,
                          timeout=timeout)


def _job_processes(kit_pid: int) -> dict[str, list[psutil.Process]]:
    """Running job processes of the kit ``kit_pid``, by job mark (one mark = one job)."""
    jobs: dict[str, list[psutil.Process]] = {}
    for p in psutil.process_iter():
        try:
            mark = p.environ().get(MARK, "")
            if p.status() == psutil.STATUS_ZOMBIE:
                continue
        except psutil.Error:
            continue
        if mark.startswith(f"verikit-job-{kit_pid}-"):
            jobs.setdefault(mark, []).append(p)
    return jobs


def _runs_framac(p: psutil.Process) -> bool:
    try:
        return "frama-c" in " ".join(p.cmdline())
    except psutil.Error:  # ended meanwhile
        return False


def _wait_for_running_jobs(proc: subprocess.Popen, n: int) -> None:
    """Until ``n`` jobs of the kit run Frama-C at once (fails after 120 s)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the run ended before the fault could be injected"
        jobs = _job_processes(proc.pid)
        if sum(any(_runs_framac(p) for p in ps) for ps in jobs.values()) >= n:
            return
        time.sleep(0.05)
    proc.kill()
    pytest.fail(f"{n} Frama-C jobs were never running at once")


def _assert_resumes(env: dict, out: Path, cache: Path) -> None:
    """Every line kept is a record; the same command completes the run (the jobs not kept
    read from ``cache``, the reference run's); validate accepts it."""
    kept = load_records(out / "records.jsonl") if (out / "records.jsonl").exists() else []
    assert len(kept) < JOBS
    res = _cli({**env, "VERIKIT_CACHE": str(cache)}, *ARGS, "--out", str(out))
    assert res.returncode == 0, res.stderr
    recs = load_records(out / "records.jsonl")
    assert len(recs) == JOBS and len({r["key"] for r in recs}) == JOBS
    assert {r["key"] for r in kept} <= {r["key"] for r in recs}
    assert json.loads((out / "run.json").read_text())["counts"]["resumed"] >= len(kept)
    check = _cli(env, "validate", str(out))
    assert check.returncode == 0, check.stdout + check.stderr


def test_stop_signals_with_framac_running_are_prompt_and_resumable(env, tmp_path, reference_cache):
    """SIGINT (exit 130), then SIGTERM (exit 143) on the resumed run, each sent while two
    Frama-C jobs run: the kit stops within 3 s, leaves no job process, scratch directory
    or traceback, and the same command then completes the run."""
    out = tmp_path / "run"
    for sig, code in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
        kit = _start(env, out)  # the second start resumes what the first kept (two jobs at least are left)
        _wait_for_running_jobs(kit, 2)
        t0 = time.monotonic()
        kit.send_signal(sig)
        assert kit.wait(timeout=60) == code, _stderr(out)
        stop_s = time.monotonic() - t0
        time.sleep(0.2)
        left = _job_processes(kit.pid)
        print(f"{signal.Signals(sig).name}: stopped in {stop_s:.2f} s, {sum(map(len, left.values()))} job processes left")
        assert left == {}, {m: [p.pid for p in ps] for m, ps in left.items()}
        assert stop_s < 3, f"stopping took {stop_s:.1f} s with 2 Frama-C jobs running"
        assert "Traceback" not in _stderr(out)
        assert not list(Path(os.environ.get("TMPDIR", "/tmp")).glob(f"verikit-job-{kit.pid}-*"))
    _assert_resumes(env, out, reference_cache)


def test_sigkill_of_the_kit_leaves_no_job_process(env, tmp_path, reference_cache):
    out = tmp_path / "run"
    kit = _start(env, out)
    _wait_for_running_jobs(kit, 2)
    counted = sum(map(len, _job_processes(kit.pid).values()))
    kit.kill()  # the kit alone: not its process group, not its children
    kit.wait(timeout=10)
    t0 = time.monotonic()
    while _job_processes(kit.pid) and time.monotonic() - t0 < 10:
        time.sleep(0.05)
    left = _job_processes(kit.pid)
    gone_s = time.monotonic() - t0
    print(f"SIGKILL: {counted} job processes before, {sum(map(len, left.values()))} left after {gone_s:.2f} s")
    assert left == {}, {m: [p.pid for p in ps] for m, ps in left.items()}
    assert gone_s < 2
    scratch = list(Path(os.environ.get("TMPDIR", "/tmp")).glob(f"verikit-job-{kit.pid}-*"))
    _assert_resumes(env, out, reference_cache)
    assert not any(d.exists() for d in scratch)  # removed by the next run


def test_second_run_on_a_directory_in_use_exits_2_and_the_first_completes(env, tmp_path):
    out = tmp_path / "run"
    first = _start(env, out, args=ARGS_TWO)
    _wait_for_running_jobs(first, 1)
    second = _cli(env, *ARGS_TWO, "--out", str(out))
    assert second.returncode == 2
    assert f"PID {first.pid}" in second.stderr and "Traceback" not in second.stderr
    assert first.wait(timeout=600) == 0, _stderr(out)
    assert len(load_records(out / "records.jsonl")) == len(TWO)
    assert _cli(env, "validate", str(out)).returncode == 0


@pytest.fixture
def tmpfs(tmp_path):
    """``mount(size)``: a fresh tmpfs of ``size`` (e.g. "16k") under tmp_path; root only."""
    mounted = []

    def mount(size: str, name: str) -> Path:
        if os.geteuid() != 0:
            pytest.skip("mounting a small tmpfs needs root (CI runs as root)")
        where = tmp_path / name
        where.mkdir()
        res = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(where)],
                             capture_output=True, text=True)
        if res.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {res.stderr.strip()}")
        mounted.append(where)
        return where

    yield mount
    for where in mounted:
        subprocess.run(["umount", "-l", str(where)], check=False)


def test_full_out_directory_is_one_message_and_resumes_after_space_is_freed(env, tmp_path, tmpfs,
                                                                            reference_cache):
    out = tmpfs("32k", "out")  # 8 pages: the lock file and a few records, each with its tool output (a page)
    res = _cli(env, *ARGS, "--out", str(out))
    assert res.returncode == 2, res.stderr
    assert "No space left on device" in res.stderr and "re-run the same command to resume" in res.stderr
    assert "Traceback" not in res.stderr
    kept = (out / "records.jsonl").read_bytes()
    assert kept.count(b"\n") >= 1
    subprocess.run(["mount", "-o", "remount,size=8m", str(out)], check=True)
    _assert_resumes(env, out, reference_cache)
    # a record torn by the full disk is not lost silently: set aside, byte for byte
    rejected = out / "records.rejected.jsonl"
    if not kept.endswith(b"\n"):
        assert rejected.read_bytes().rstrip(b"\n").endswith(kept.rsplit(b"\n", 1)[-1])


def test_full_cache_disk_is_a_warning_and_loses_no_result(env, tmp_path, tmpfs):
    cache = tmpfs("8k", "cache")  # two pages: one cache entry at most
    out = tmp_path / "run"
    res = _cli(env, *ARGS_TWO, "--out", str(out), "--cache-dir", str(cache))
    assert res.returncode == 0, res.stderr
    assert "not written" in res.stderr and "Traceback" not in res.stderr
    assert len(load_records(out / "records.jsonl")) == len(TWO)
    assert _cli(env, "validate", str(out)).returncode == 0


def test_1gb_line_without_newline_under_a_512mib_address_space(env, tmp_path):
    big = tmp_path / "big.jsonl"
    with open(big, "wb") as fh:
        fh.write(b'{"task_id": "01_57", "model": "m", "sample": 0, "output": "')
        fh.truncate(1 << 30)  # 1 GiB, no newline (a sparse file: the bytes are NULs)

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (512 << 20, 512 << 20))

    t0 = time.monotonic()
    res = subprocess.run([sys.executable, "-m", "harness", *ARGS, "--predictions", str(big), "--out",
                          str(tmp_path / "run")], env=env, capture_output=True, text=True, preexec_fn=limit,
                         timeout=600)
    print(f"1 GiB line refused in {time.monotonic() - t0:.1f} s under RLIMIT_AS = 512 MiB")
    assert res.returncode == 2, res.stderr
    assert f"{big}:1" in res.stderr.replace("\n", "") and "bytes" in res.stderr
    assert "MemoryError" not in res.stderr and "Traceback" not in res.stderr
    assert not (tmp_path / "run" / "records.jsonl").exists()
