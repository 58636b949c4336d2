"""Leader of one host job: a child subreaper that dies, with everything under it, when
the kit does.

Run as a script, not imported (``python -I -S reaper.py KIT_PID -- ARGV...``), by
:class:`harness.sandbox.local.HostSandbox` only. It

1. makes itself a *child subreaper* (``prctl(PR_SET_CHILD_SUBREAPER)``, Linux >= 3.4), so
   every process the job leaves behind -- a prover a tool started, a daemon that forked
   twice and called ``setsid`` -- is re-parented to it instead of to init;
2. asks for ``SIGTERM`` when the thread of the kit that started it dies
   (``prctl(PR_SET_PDEATHSIG)``), which is what happens when the kit is killed with
   SIGKILL; on that signal (or SIGINT/SIGHUP) it SIGKILLs every descendant;
3. runs ``ARGV``, reaps every descendant, and when ``ARGV``'s process ends kills and reaps
   whatever is left, then exits with ``ARGV``'s status (its exit code, or the same signal).

So the job's whole process tree ends with the job, and with the kit. What it cannot
survive is a SIGKILL aimed at itself (the kit's own kill path then kills the tree by
process group and by the job mark). Sources: prctl(2) (``PR_SET_CHILD_SUBREAPER``,
``PR_SET_PDEATHSIG``); proc(5) (``/proc/PID/stat`` field 4 is the parent PID).
"""

import ctypes
import os
import resource
import signal
import sys

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


def _children() -> list[int]:
    """PIDs whose parent is this process (its own children and adopted orphans)."""
    me = os.getpid()
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 1 and int(fields[1]) == me:
            out.append(int(name))
    return out


def _kill_children() -> None:
    for pid in _children():
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _finish() -> None:
    """Kill and reap every descendant: a killed child's own children are re-parented to
    this subreaper before the child can be reaped, so the loop ends with none left."""
    while True:
        _kill_children()
        try:
            os.wait()
        except ChildProcessError:
            return


def main(args: list[str]) -> int:
    if len(args) < 3 or args[1] != "--":
        sys.stderr.write("usage: reaper.py KIT_PID -- ARGV...\n")
        return 2
    kit, argv = int(args[0]), args[2:]
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.stderr.write(f"verikit reaper: prctl(PR_SET_CHILD_SUBREAPER): {os.strerror(ctypes.get_errno())}\n")
        return 125

    def on_signal(signum, frame):
        _kill_children()

    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, on_signal)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != kit:  # the kit died before the death signal was armed
        return 137
    pid = os.fork()
    if pid == 0:
        for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(s, signal.SIG_DFL)
        try:
            os.execvp(argv[0], argv)
        except OSError as exc:
            os.write(2, f"verikit reaper: cannot run {argv[0]}: {exc}\n".encode())
        os._exit(127)
    status = None
    while status is None:
        try:
            done, st = os.wait()
        except ChildProcessError:  # cannot happen while the child is unreaped
            break
        if done == pid:
            status = st
    _finish()
    if status is None:
        return 125
    if os.WIFSIGNALED(status):  # end the same way, so the verifier sees the same status
        sig = os.WTERMSIG(status)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if sig not in (signal.SIGKILL, signal.SIGSTOP):
            signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
        os.kill(os.getpid(), sig)
        return 128 + sig
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
