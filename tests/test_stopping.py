"""Stopping a run: SIGINT/SIGTERM end it within seconds with nothing left
running and no retry; after SIGKILL of the kit, the jobs' whole process trees die with it
(the reaper), and the next run removes scratch directories left behind. Measured on real
processes (the host sandbox and the real executor); the verifier is a stand-in whose job
is ``sh`` starting two ``sleep``s, one of them in a new session (a daemon that left the
job's process group), so that each job is a process tree like a prover's. The same with
the real Frama-C is in ``test_faults.py``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from harness.sandbox.local import MARK, remove_leftovers

PROGRAM = textwrap.dedent('''
    import sys
    from pathlib import Path
    from harness.cli import Terminated, on_sigterm
    from harness.executor import Executor
    from harness.model import Job, Limits, Verifier, VerifierResult
    from harness.results import RecordLog
    from harness.sandbox.local import HostSandbox
    import signal

    signal.signal(signal.SIGTERM, on_sigterm)

    class Sleeper(Verifier):
        name = "sleeper"
        def command(self, options):
            return ["sh", "-c", "setsid sleep 300 & sleep 300"], {}, []
        def parse(self, proc, options):
            return VerifierResult("infra_error", f"exit {proc.returncode}")  # would be retried

    class Probed:
        fingerprint = "f"
        def to_json(self):
            return {}

    jobs = [Job(benchmark="b", benchmark_version="1", dataset={"name": "d", "revision": "r"}, mode="m",
                task_id=f"t{i}", task_sha256="0", candidate={"model": "m", "sample": 0, "sha256": "0", "origin": "t"},
                files={"x": str(i)}, options={}) for i in range(2)]
    ex = Executor(Sleeper(), HostSandbox(), Probed(), limits=Limits(wall_s=600), parallel=2, retries=5)
    log = RecordLog(Path(sys.argv[1]) / "records.jsonl")
    print("READY", flush=True)
    try:
        ex.run(jobs, log, lambda job, result: (result.verdict, result.reason))
    except Terminated:
        sys.exit(143)
    except KeyboardInterrupt:
        sys.exit(130)
''')


def _marked_by(pid: int) -> list[psutil.Process]:
    out = []
    for p in psutil.process_iter():
        try:
            mark = p.environ().get(MARK, "")
        except psutil.Error:
            continue
        if mark.startswith(f"verikit-job-{pid}-"):
            out.append(p)
    return out


def _sleeps(pid: int) -> list[psutil.Process]:
    return [p for p in _marked_by(pid) if p.name() == "sleep"]


def _start(tmp_path: Path) -> subprocess.Popen:
    script = tmp_path / "prog.py"
    script.write_text(PROGRAM)
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    proc = subprocess.Popen([sys.executable, str(script), str(tmp_path)], stdout=subprocess.PIPE, env=env, text=True)
    assert proc.stdout.readline().strip() == "READY"
    deadline = time.monotonic() + 20
    while len(_sleeps(proc.pid)) < 4 and time.monotonic() < deadline:  # 2 jobs x 2 sleeps
        time.sleep(0.1)
    if len(_sleeps(proc.pid)) < 4:
        proc.kill()
        remove_leftovers()
        pytest.fail("the jobs did not start")
    return proc


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_stop_is_prompt_and_leaves_nothing_running(tmp_path, sig, code):
    proc = _start(tmp_path)
    t0 = time.monotonic()
    proc.send_signal(sig)
    assert proc.wait(timeout=30) == code
    stop_s = time.monotonic() - t0
    time.sleep(0.3)
    left = _marked_by(proc.pid)
    assert left == [], [p.pid for p in left]
    assert stop_s < 5, f"stopping took {stop_s:.1f} s"  # the jobs would have run 300 s, retried 5 times
    assert (tmp_path / "records.jsonl").read_text() == ""  # killed jobs are not verdicts: nothing recorded


def test_sigkill_of_the_kit_ends_every_job_process(tmp_path):
    proc = _start(tmp_path)
    pid = proc.pid
    assert len(_marked_by(pid)) == 8  # 2 jobs x (reaper + sh + 2 sleeps)
    proc.kill()
    proc.wait(timeout=10)
    t0 = time.monotonic()
    while _marked_by(pid) and time.monotonic() - t0 < 5:
        time.sleep(0.05)
    left = _marked_by(pid)
    assert left == [], [(p.pid, p.name()) for p in left]  # none, without any later run's help
    print(f"all job processes gone {time.monotonic() - t0:.2f} s after SIGKILL of the kit")
    # the scratch directories are what the next run removes
    scratch = list(Path(os.environ.get("TMPDIR", "/tmp")).glob(f"verikit-job-{pid}-*"))
    assert len(scratch) == 2
    assert remove_leftovers()[0] == 0  # no process was left to kill
    assert not any(d.exists() for d in scratch)
