"""Host sandbox: run a command as a subprocess in a fresh scratch directory, with limits.

The process starts in its own session (so in its own process group), under
:mod:`harness.sandbox.reaper`, a child subreaper that ends the job's whole tree when the
job ends and when the kit dies (even by SIGKILL); a watchdog thread
polls the tree every ``POLL_S`` seconds with psutil and kills the whole tree (process
group, then any descendant that left it) when the wall-time limit, the memory limit
(RSS summed over the tree) or the output cap is exceeded. The scratch directory is
removed afterwards, so nothing the job wrote survives except the files asked for.

This sandbox gives no network isolation and no read-only root: it is meant for trusted
gold solutions and for checkers whose input is data (C files given to Frama-C). Untrusted
code that executes (Python specs, proof scripts with tactics) belongs in the container
sandbox.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

from ..model import Limits, ProcResult
from .base import Sandbox, collect_files, write_files

POLL_S = 0.05


def _tree(proc: psutil.Process) -> list[psutil.Process]:
    try:
        return [proc, *proc.children(recursive=True)]
    except psutil.Error:
        return []


def _kill_tree(popen: subprocess.Popen, known: list[psutil.Process]) -> None:
    """SIGKILL the process group and every descendant seen, including ones that setsid'ed."""
    try:
        os.killpg(popen.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    for p in known:
        try:
            p.kill()
        except psutil.Error:
            pass


class HostSandbox(Sandbox):
    """Runs jobs as host subprocesses, with the tools installed on this machine. ``name ==
    "host"``; ``image`` is always None."""

    name = "host"
    host_tools = True
    image = None
    image_digest = None
    #: What is enforced on a job (recorded with the probed toolchain; docs/sandboxes.md):
    #: the host's network and filesystem, memory by the watchdog, no CPU or pids limit.
    isolation = {"network": "host", "root": "host", "memory": "watchdog", "cpus": "none", "pids": "none"}

    def __init__(self) -> None:
        self._running: dict[int, tuple[subprocess.Popen, dict]] = {}
        self._lock = threading.Lock()
        self.leftovers = remove_leftovers()  # of runs that were killed with SIGKILL

    def close(self) -> None:
        """Nothing to release: each job's scratch directory is removed when it ends."""

    def cancel(self) -> None:
        """Kill every job this sandbox is running (used on Ctrl-C / errors); idempotent."""
        with self._lock:
            running = list(self._running.values())
        for popen, known in running:
            _kill_tree(popen, list(known.values()))

    def run(
        self,
        argv: list[str],
        *,
        files: dict[str, str | bytes] | None = None,
        limits: Limits = Limits(),
        collect: list[str] | tuple[str, ...] = (),
        env: dict[str, str] | None = None,
    ) -> ProcResult:
        """Run ``argv`` in a new scratch directory holding ``files``.

        Args:
            argv: command and arguments; ``argv[0]`` is looked up on PATH.
            files: relative path -> content (str is written as UTF-8) put in the scratch dir.
            limits: wall time, memory, CPUs, output cap (see :class:`Limits`).
            collect: relative paths of output files to return in ``ProcResult.files``
                (missing ones are left out).
            env: extra environment variables (added to a minimal environment: PATH,
                LANG=C.UTF-8, HOME=scratch dir, TMPDIR=scratch/tmp).

        Returns:
            ProcResult; ``start_error`` is set (and ``returncode`` None) when the command
            could not be started, e.g. the tool is not installed.
        """
        with tempfile.TemporaryDirectory(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-") as scratch:
            root = Path(scratch)
            write_files(root, files)
            (root / "tmp").mkdir(exist_ok=True)
            run_env = {
                "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
                "LANG": "C.UTF-8",
                "LC_ALL": "C.UTF-8",
                "HOME": str(root),
                "TMPDIR": str(root / "tmp"),
                MARK: root.name,
            }
            run_env.update(env or {})
            command, run_env = self._enter(root, list(argv), run_env)
            result = self._run_in(root, command, run_env, limits)
            result.argv = list(argv)
            result.files.update(collect_files(root, collect))
            return result

    def _enter(self, root: Path, argv: list[str], env: dict[str, str]) -> tuple[list[str], dict[str, str]]:
        """The command and environment that run ``argv`` in the scratch directory ``root``:
        on the host, both unchanged. The image-file sandboxes
        (:mod:`harness.sandbox.imagefile`) wrap ``argv`` in their runtime's command line
        here, so that the runtime's process is the job's process tree under the same
        watchdog, limits and reaper."""
        return argv, env

    def _run_in(self, root: Path, argv: list[str], env: dict[str, str], limits: Limits) -> ProcResult:
        out_path, err_path = root / ".stdout", root / ".stderr"
        t0 = time.monotonic()
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            command = _with_reaper(argv, env)
            leader_rss = len(command) == len(argv)  # unwrapped; the reaper's own ~10 MB is not the job's
            try:
                popen = subprocess.Popen(
                    command, cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                    start_new_session=True,
                )
            except OSError as exc:
                return ProcResult(argv=list(argv), returncode=None, start_error=f"{type(exc).__name__}: {exc}")
            state = {"timed_out": False, "memout": False, "truncated": False, "rss": 0.0, "cpu": 0.0}
            known: dict[int, psutil.Process] = {}
            with self._lock:
                self._running[popen.pid] = (popen, known)
            stop = threading.Event()

            def watchdog() -> None:
                try:
                    top = psutil.Process(popen.pid)
                except psutil.Error:
                    return
                cpu_seen: dict[int, float] = {}
                while not stop.is_set():
                    procs = _tree(top)
                    rss = 0
                    for p in procs:
                        known.setdefault(p.pid, p)
                        try:
                            if p is not top or leader_rss:
                                rss += p.memory_info().rss
                            t = p.cpu_times()
                            cpu_seen[p.pid] = t.user + t.system
                        except psutil.Error:
                            pass
                    state["rss"] = max(state["rss"], rss / 2**20)
                    state["cpu"] = max(state["cpu"], sum(cpu_seen.values()))
                    reason = None
                    if time.monotonic() - t0 > limits.wall_s:
                        reason = "timed_out"
                    elif rss > limits.mem_mb * 2**20:
                        reason = "memout"
                    elif max(_size(out_path), _size(err_path)) > limits.output_bytes:
                        reason = "truncated"
                    if reason:
                        state[reason] = True
                        _kill_tree(popen, list(known.values()) + _marked(env[MARK]))
                        return
                    stop.wait(POLL_S)

            thread = threading.Thread(target=watchdog, daemon=True)
            thread.start()
            try:
                # wait4 gives this child's own rusage (with the descendants it reaped),
                # exact per job even when several jobs run in parallel threads.
                _, status, rusage = os.wait4(popen.pid, 0)
                returncode = os.waitstatus_to_exitcode(status)
                popen.returncode = returncode
            except BaseException:
                _kill_tree(popen, list(known.values()))
                popen.wait()
                raise
            finally:
                stop.set()
                thread.join()
                with self._lock:
                    self._running.pop(popen.pid, None)
            # Reap anything left: the group, descendants seen, and daemons that double-forked
            # away from the tree but still carry this job's mark in their environment.
            _kill_tree(popen, [p for p in known.values() if p.pid != popen.pid] + _marked(env[MARK]))
            cpu = max(state["cpu"], rusage.ru_utime + rusage.ru_stime)
        wall = time.monotonic() - t0
        return ProcResult(
            argv=list(argv),
            returncode=returncode,
            stdout=_read_capped(out_path, limits.output_bytes),
            stderr=_read_capped(err_path, limits.output_bytes),
            wall_s=wall,
            cpu_s=cpu,
            max_rss_mb=round(state["rss"], 1),
            timed_out=state["timed_out"],
            memout=state["memout"],
            output_truncated=state["truncated"],
        )


MARK = "VERIKIT_JOB"
#: The scratch directory prefix; the kit's PID follows it, so that a later run can tell
#: the directories of a dead run (SIGKILL) from those of a live one.
SCRATCH_PREFIX = "verikit-job-"


def _owner(mark: str) -> int | None:
    """The kit PID written in a job mark or scratch name (``verikit-job-<pid>-...``)."""
    rest = mark[len(SCRATCH_PREFIX):] if mark.startswith(SCRATCH_PREFIX) else ""
    pid = rest.split("-", 1)[0]
    return int(pid) if pid.isdigit() else None


def remove_leftovers(tmp: Path | None = None) -> tuple[int, int]:
    """Kill the job processes and remove the scratch directories that runs killed with
    SIGKILL left behind: those marked with a kit PID that is no longer running.

    Returns:
        ``(processes killed, directories removed)``.
    """
    tmp = Path(tmp or tempfile.gettempdir())
    killed = 0
    for p, mark in _marked_processes():
        owner = _owner(mark)
        if owner is not None and not psutil.pid_exists(owner):
            try:
                p.kill()
                killed += 1
            except psutil.Error:
                pass
    removed = 0
    for d in tmp.glob(SCRATCH_PREFIX + "*"):
        owner = _owner(d.name)
        if owner is not None and not psutil.pid_exists(owner) and d.is_dir():
            shutil.rmtree(d, ignore_errors=True)
            removed += 1
    return killed, removed


REAPER = Path(__file__).with_name("reaper.py")


def _with_reaper(argv: list[str], env: dict[str, str]) -> list[str]:
    """``argv`` run under :mod:`harness.sandbox.reaper` (a child subreaper that gets a
    death signal when the kit's thread that started it dies): the job's whole process
    tree then ends with the job, and with the kit even when the kit is killed with
    SIGKILL. A command that is not on PATH is left alone, so that it still fails to start
    (``start_error``) as before."""
    if shutil.which(argv[0], path=env.get("PATH")) is None:
        return list(argv)
    return [sys.executable, "-I", "-S", str(REAPER), str(os.getpid()), "--", *argv]


def _marked_processes():
    """``(process, mark)`` for every process whose environment carries a job mark
    (``VERIKIT_JOB``), readable by this user."""
    for p in psutil.process_iter():
        try:
            mark = p.environ().get(MARK)
        except psutil.Error:
            continue
        if mark:
            yield p, mark


def _marked(mark: str) -> list[psutil.Process]:
    """Processes whose environment carries ``VERIKIT_JOB=mark`` (escaped daemons)."""
    return [p for p, m in _marked_processes() if m == mark]


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _read_capped(path: Path, cap: int) -> str:
    with open(path, "rb") as fh:
        data = fh.read(cap)
    return data.decode("utf-8", errors="replace")
