"""Tests of harness/sandbox/local.py (HostSandbox) with real processes.

Every test starts real commands (sh, python3, sleep, yes) on this machine. Limits are
checked for being enforced, never for speed: the only time bounds are generous margins
("the run came back within seconds instead of the 100 s the command asked for").
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import psutil
import pytest

from harness.registry import sandbox as get_sandbox
from harness.sandbox import Limits, ProcResult, SandboxError
from harness.sandbox.local import HostSandbox

PY = sys.executable  # a python3 that certainly exists


def _alive(pid: int, name: str | None = None) -> bool:
    """True when ``pid`` is a live (non-zombie) process, named ``name`` when given.

    The name check guards against a recycled pid being mistaken for a survivor.
    """
    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return False
        return name is None or proc.name() == name
    except psutil.NoSuchProcess:
        return False


def _survivors(pids: list[int], name: str | None = None, grace_s: float = 3.0) -> list[int]:
    """The pids still alive after a short grace period (SIGKILL delivery is asynchronous)."""
    deadline = time.monotonic() + grace_s
    while True:
        alive = [p for p in pids if _alive(p, name)]
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.05)


def _pids(stdout: str) -> list[int]:
    return [int(tok) for tok in stdout.split() if tok.isdigit()]


@pytest.fixture
def sandbox() -> HostSandbox:
    return HostSandbox()


def test_get_sandbox_host():
    sb = get_sandbox("host")
    assert isinstance(sb, HostSandbox)
    assert sb.name == "host" and sb.image is None
    with pytest.raises(ValueError, match="host"):
        get_sandbox("no-such-sandbox")


def test_streams_returncode_files_and_collect(sandbox):
    script = (
        "echo to-stdout; echo to-stderr >&2; "
        "cat in.txt; echo; pwd; "
        "cat sub/dir/data.bin > copy.bin; "
        "printf produced > out.txt; "
        "exit 3"
    )
    res = sandbox.run(
        ["sh", "-c", script],
        files={"in.txt": "héllo input", "sub/dir/data.bin": b"\x00\x01\xff"},
        collect=["out.txt", "copy.bin", "never-written.txt"],
        limits=Limits(wall_s=30),
    )
    assert isinstance(res, ProcResult)
    assert res.start_error is None
    assert res.returncode == 3
    assert not (res.timed_out or res.memout or res.output_truncated)
    lines = res.stdout.splitlines()
    assert lines[0] == "to-stdout"
    assert lines[1] == "héllo input"  # str content written as UTF-8 into the scratch dir
    assert "to-stderr" not in res.stdout
    assert res.stderr.strip() == "to-stderr"
    # collect returns exactly the output files that exist, as bytes
    assert res.files == {"out.txt": b"produced", "copy.bin": b"\x00\x01\xff"}
    # the command ran in a scratch directory that is gone after the run
    cwd = lines[2]
    assert os.path.isabs(cwd) and "verikit-job-" in cwd
    assert not os.path.exists(cwd)


def test_scratch_dirs_are_fresh_per_run(sandbox):
    first = sandbox.run(["sh", "-c", "pwd; ls -A; echo x > left-over"], files={"a.txt": "a"})
    second = sandbox.run(["sh", "-c", "pwd; ls -A"])
    cwd1, cwd2 = first.stdout.splitlines()[0], second.stdout.splitlines()[0]
    assert cwd1 != cwd2
    assert "a.txt" in first.stdout
    assert "left-over" not in second.stdout and "a.txt" not in second.stdout


def test_wall_limit_kills_whole_tree(sandbox):
    # $$ is the shell, each $! a background sleep; printed before anything sleeps.
    script = "echo $$; sleep 100 & echo $!; sleep 100 & echo $!; wait"
    t0 = time.monotonic()
    res = sandbox.run(["sh", "-c", script], limits=Limits(wall_s=1))
    elapsed = time.monotonic() - t0
    assert res.timed_out is True
    assert not res.memout and not res.output_truncated
    assert res.returncode is not None and res.returncode < 0  # killed by a signal
    assert elapsed < 20, f"run did not stop near its 1 s wall limit (took {elapsed:.1f} s)"
    assert res.wall_s >= 1.0
    pids = _pids(res.stdout)
    assert len(pids) == 3, res.stdout
    shell, *sleeps = pids
    assert _survivors(sleeps, "sleep") == [], "background sleeps survived the wall limit"
    assert _survivors([shell], "sh") == []


SETSID_CHILD = """
import os, sys, time
pid = os.fork()
if pid == 0:
    os.setsid()
    print("child", os.getpid(), os.getsid(0), flush=True)
    time.sleep(100)
    os._exit(0)
print("parent", os.getpid(), os.getsid(0), flush=True)
{parent_tail}
"""


def _parse_roles(stdout: str) -> dict[str, tuple[int, int]]:
    roles = {}
    for line in stdout.splitlines():
        role, pid, sid = line.split()
        roles[role] = (int(pid), int(sid))
    return roles


def test_setsid_child_killed_at_wall_limit(sandbox):
    code = SETSID_CHILD.format(parent_tail="os.waitpid(pid, 0)")
    res = sandbox.run([PY, "-c", code], limits=Limits(wall_s=1))
    assert res.timed_out is True
    roles = _parse_roles(res.stdout)
    (_ppid, psid), (cpid, csid) = roles["parent"], roles["child"]
    assert csid == cpid and csid != psid, "the child did not leave the job's session"
    assert _survivors([cpid]) == [], "a setsid'ed child survived the wall limit"


def test_setsid_orphan_killed_when_run_ends(sandbox):
    """The parent exits normally while its setsid'ed child keeps sleeping: nothing the
    job started may be left running after run() returns (docs/architecture.md, "A sandbox":
    it must leave nothing running)."""
    code = SETSID_CHILD.format(parent_tail="time.sleep(0.5)")
    res = sandbox.run([PY, "-c", code], limits=Limits(wall_s=60))
    assert res.timed_out is False and res.returncode == 0
    cpid, _ = _parse_roles(res.stdout)["child"]
    assert _survivors([cpid]) == [], "the orphaned setsid'ed child outlived the run"


def test_double_forked_daemon_killed_at_wall_limit(sandbox):
    marker = f"{90 + uuid.uuid4().int % 1000 / 1000:.3f}"  # unique 'sleep 90.xyz' argv
    # five independent escapes, so a lucky watchdog poll cannot catch them all
    script = "; ".join([f"(setsid sleep {marker} &)"] * 5) + "; sleep 100"
    try:
        res = sandbox.run(["sh", "-c", script], limits=Limits(wall_s=1))
        assert res.timed_out is True
        time.sleep(0.3)
        left = [p.pid for p in psutil.process_iter(["cmdline"])
                if p.info["cmdline"] == ["sleep", marker] and _alive(p.pid)]
        assert left == [], f"{len(left)} double-forked daemons survived the job"
    finally:
        for p in psutil.process_iter(["cmdline"]):
            if p.info["cmdline"] == ["sleep", marker]:
                try:
                    p.kill()
                except psutil.Error:
                    pass


MEMHOG = """
import time
chunks = []
for i in range(60):
    chunks.append(b"\\x01" * (10 * 2**20))  # 10 MiB, every page written
    time.sleep(0.03)
print("allocated", len(chunks) * 10, "MiB", flush=True)
"""


def test_memory_limit(sandbox):
    res = sandbox.run([PY, "-c", MEMHOG], limits=Limits(wall_s=60, mem_mb=200))
    assert res.memout is True
    assert res.timed_out is False
    assert res.returncode is not None and res.returncode < 0
    assert "allocated" not in res.stdout  # killed before reaching 600 MiB
    assert res.max_rss_mb > 200  # the watchdog saw the tree above the limit


def test_memory_limit_not_hit_below_it(sandbox):
    code = MEMHOG.replace("range(60)", "range(5)")  # 50 MiB
    res = sandbox.run([PY, "-c", code], limits=Limits(wall_s=60, mem_mb=400))
    assert res.memout is False and res.returncode == 0
    assert "allocated 50 MiB" in res.stdout
    assert res.max_rss_mb > 0


@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_output_cap(sandbox, stream):
    argv = ["yes"] if stream == "stdout" else ["sh", "-c", "yes >&2"]
    res = sandbox.run(argv, limits=Limits(wall_s=60, output_bytes=100_000))
    assert res.output_truncated is True
    assert res.timed_out is False
    text = getattr(res, stream)
    assert 0 < len(text.encode()) <= 100_000
    assert text.startswith("y\ny\n")


def test_missing_binary_is_start_error(sandbox):
    res = sandbox.run(["verikit-no-such-binary-4711", "--version"], collect=["x"])
    assert res.returncode is None
    assert res.start_error and "verikit-no-such-binary-4711" in res.start_error
    assert not (res.timed_out or res.memout or res.output_truncated)
    assert res.stdout == "" and res.files == {}


def test_environment(sandbox, monkeypatch):
    monkeypatch.setenv("VERIKIT_SHOULD_NOT_LEAK", "secret")
    script = ('echo "home=$HOME"; echo "cwd=$(pwd)"; echo "extra=$VERIKIT_EXTRA"; '
              'echo "leak=$VERIKIT_SHOULD_NOT_LEAK"; echo "tmp=$TMPDIR"; echo "lang=$LANG"')
    res = sandbox.run(["sh", "-c", script], env={"VERIKIT_EXTRA": "two words"})
    vals = dict(line.split("=", 1) for line in res.stdout.splitlines())
    assert os.path.realpath(vals["home"]) == os.path.realpath(vals["cwd"])
    assert vals["extra"] == "two words"
    assert vals["leak"] == ""  # minimal environment, not the caller's
    assert vals["tmp"].startswith(vals["home"])
    assert vals["lang"] == "C.UTF-8"


def test_env_can_override_defaults(sandbox):
    res = sandbox.run(["sh", "-c", 'echo "$LANG"'], env={"LANG": "C"})
    assert res.stdout.strip() == "C"


BUSY = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.5:\n    pass\n"


@pytest.mark.parametrize("wrap", ["direct", "grandchild"])
def test_cpu_and_wall_time(sandbox, wrap):
    argv = [PY, "-c", BUSY]
    if wrap == "grandchild":  # the busy process is a child of the job's shell
        argv = ["sh", "-c", f"'{PY}' -c '{BUSY}'; true"]
    res = sandbox.run(argv, limits=Limits(wall_s=60))
    assert res.returncode == 0, res.stderr
    # the command burnt >= 0.5 CPU seconds by construction
    assert res.cpu_s >= 0.4
    assert res.wall_s >= 0.4


def test_parallel_runs_keep_their_own_results(sandbox):
    def job(tag: str, limits: Limits, cmd: str) -> ProcResult:
        return sandbox.run(["sh", "-c", cmd], files={"tag.txt": tag}, limits=limits,
                           collect=["out.txt"])

    script = "cat tag.txt; sleep 1.5; cat tag.txt > out.txt; cat tag.txt"
    with ThreadPoolExecutor(max_workers=3) as pool:
        fa = pool.submit(job, "alpha", Limits(wall_s=60), script)
        fb = pool.submit(job, "beta", Limits(wall_s=60), script)
        fk = pool.submit(job, "killed", Limits(wall_s=0.5), "cat tag.txt; sleep 100")
        a, b, k = fa.result(timeout=120), fb.result(timeout=120), fk.result(timeout=120)
    assert (a.stdout, a.files, a.returncode, a.timed_out) == ("alphaalpha", {"out.txt": b"alpha"}, 0, False)
    assert (b.stdout, b.files, b.returncode, b.timed_out) == ("betabeta", {"out.txt": b"beta"}, 0, False)
    assert k.timed_out is True and k.stdout == "killed"


def test_cancel_kills_running_jobs(sandbox):
    sandbox.cancel()  # nothing running: a no-op
    with ThreadPoolExecutor(max_workers=1) as pool:
        t0 = time.monotonic()
        fut = pool.submit(sandbox.run, ["sh", "-c", "echo $$; sleep 100 & echo $!; wait"],
                          limits=Limits(wall_s=30))
        while not fut.done() and time.monotonic() - t0 < 20:
            time.sleep(0.2)
            sandbox.cancel()
        res = fut.result(timeout=60)
    assert time.monotonic() - t0 < 20, "cancel() did not stop the job"
    assert res.timed_out is False  # stopped by cancel, not by the 30 s limit
    assert res.returncode is not None and res.returncode < 0
    shell, sleep = _pids(res.stdout)
    assert _survivors([sleep], "sleep") == []
    sandbox.cancel()  # idempotent after the job is gone


def test_files_cannot_escape_scratch(sandbox, tmp_path, monkeypatch):
    root = tmp_path / "scratch-parent"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))  # scratch dirs go under root
    try:
        sandbox.run(["true"], files={"../escaped.txt": "x"})
    except (ValueError, OSError, SandboxError):
        pass  # refusing the path is an acceptable answer
    assert not (root / "escaped.txt").exists(), "a job input was written outside its scratch dir"
