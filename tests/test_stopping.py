"""Stopping a run (issue 14): SIGINT/SIGTERM end it within seconds with nothing left
running and no retry; after SIGKILL of the kit, the job leaders die with it and the next
run removes what is left. Measured on real processes (the host sandbox and the real
executor); the verifier is a stand-in whose job is ``sh`` starting two ``sleep``s, so
that each job is a process tree like a prover's."""

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
    from harness.cli import Terminated, _on_sigterm
    from harness.executor import Executor
    from harness.model import Job, Limits, VerifierResult
    from harness.results import RecordLog
    from harness.sandbox.local import HostSandbox
    import signal

    signal.signal(signal.SIGTERM, _on_sigterm)

    class Sleeper:
        name = "sleeper"
        def command(self, options):
            return ["sh", "-c", "sleep 300 & sleep 300"], {}, []
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


def _start(tmp_path: Path) -> subprocess.Popen:
    script = tmp_path / "prog.py"
    script.write_text(PROGRAM)
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    proc = subprocess.Popen([sys.executable, str(script), str(tmp_path)], stdout=subprocess.PIPE, env=env, text=True)
    assert proc.stdout.readline().strip() == "READY"
    deadline = time.monotonic() + 20
    while len(_marked_by(proc.pid)) < 6 and time.monotonic() < deadline:  # 2 jobs x (sh + 2 sleeps)
        time.sleep(0.1)
    if len(_marked_by(proc.pid)) < 6:
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


def test_sigkill_leaders_die_and_the_next_run_removes_the_rest(tmp_path):
    proc = _start(tmp_path)
    pid = proc.pid
    proc.kill()
    proc.wait(timeout=10)
    time.sleep(0.5)
    left = _marked_by(pid)
    assert all(p.name() == "sleep" for p in left), [p.name() for p in left]  # the sh leaders got PDEATHSIG
    killed, _ = remove_leftovers()
    assert killed >= len(left)
    time.sleep(0.3)
    assert _marked_by(pid) == []
    assert not list(Path(os.environ.get("TMPDIR", "/tmp")).glob(f"verikit-job-{pid}-*"))
