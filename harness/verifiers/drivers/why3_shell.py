"""verikit why3 strategy driver (runs INSIDE the sandbox; Python 3 stdlib only).

Not imported by the package: ``harness/verifiers/why3.py`` reads this file at run time
and ships it with every strategy job as ``verikit_why3_strategy.py``; its sha256 is part
of the job options (``driver_sha256``), so a change here invalidates cached results.

Applies one Why3 IDE strategy (e.g. Auto_level_3) to one goal of a .mlw file with the
stock ``why3 shell`` of Why3 1.8:

1. ``why3 session create [-L DIR] -o SESSION FILE.mlw`` (a fresh session);
2. ``why3 shell --debug=shell_proto [-L DIR] SESSION``, fed one command at a time on its
   standard input: ``p`` (print the tree: node ids), ``goto ID``, the strategy name,
   then ``verikit-sync-N`` markers until the proof tree is quiescent, ``Save``, ``Exit``.

Quiescence: the shell reads its standard input only when the Why3 scheduler has no idle
handler left (transformations and strategy steps run as idle handlers), and
``--debug=shell_proto`` prints every server notification synchronously. So when the
echo of a marker appears and no proof attempt printed so far is still Undone/Scheduled/
Running, nothing is left that could start new work. Two such markers in a row, with no
notification in between, end the run.

Prints one line ``VERIKIT-WHY3 {json}`` (status, node ids, wall time) at the end.
Exit status: 0 done, 3 invalid input, 4 goal not found, 5 strategy cut at --max-wall,
6 driver/tool failure.
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET

MARK = "VERIKIT-WHY3 "
PENDING = ("Undone", "Scheduled", "Running")
_STATUS = re.compile(r"node change (\d+) Proof_status_change res=([A-Za-z]+)")
_NEW = re.compile(r"new node = (\d+), parent = (\d+)")
_DONE = re.compile(r"node change (\d+) Proof_status_change res=Done\(\s*([A-Za-z][A-Za-z ]*[A-Za-z]|[A-Za-z])")
_ACTIVITY = re.compile(r"new node = |node change ")
_GOAL = re.compile(r"Goal=(\S+?)(?: \[[^\]\n]*\])?, id = (\d+);\s*parent=([^;\s]+);")


def summarize(text, gid):
    """Counts from the notifications: attempts and their last results, target proved."""
    results = {}
    for n, res in _DONE.findall(text):
        results[n] = res.lower().replace(" ", "")  # as in why3session.xml: valid, highfailure...
    status = dict(_STATUS.findall(text))
    proved = re.findall(rf"node change {gid}: proved=(true|false)", text)
    counts = {}
    for res in results.values():
        counts[res] = counts.get(res, 0) + 1
    return {"proved": bool(proved) and proved[-1] == "true", "attempts": len(status),
            "attempt_results": dict(sorted(counts.items())),
            "attempts_unfinished": sum(1 for n in status if n not in results and status[n] != "Interrupted"),
            "nodes": len(set(_NEW.findall(text)))}


def emit(**kw):
    sys.stdout.write(MARK + json.dumps(kw, sort_keys=True) + "\n")
    sys.stdout.flush()


class Shell:
    def __init__(self, argv, log_path=None):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, bufsize=0,
                                     start_new_session=True)
        self.buf = ""
        self.cond = threading.Condition()
        self.log = open(log_path, "w", encoding="utf-8", errors="replace") if log_path else None
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        fd = self.proc.stdout.fileno()
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            text = chunk.decode("utf-8", "replace")
            if self.log:
                self.log.write(text)
            with self.cond:
                self.buf += text
                self.cond.notify_all()
        with self.cond:
            self.cond.notify_all()

    def send(self, cmd):
        self.proc.stdin.write((cmd + "\n").encode())
        self.proc.stdin.flush()

    def wait_for(self, pattern, start, timeout):
        """First match of ``pattern`` in the output from ``start``; None at timeout/exit."""
        rx = re.compile(pattern, re.S)
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                m = rx.search(self.buf, start)
                if m:
                    return m
                left = deadline - time.monotonic()
                if left <= 0 or (self.proc.poll() is not None and not self.reader.is_alive()):
                    return None
                self.cond.wait(min(left, 0.5))

    def close(self, timeout=30):
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.reader.join(5)
        if self.log:
            self.log.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mlw", required=True)
    ap.add_argument("--theory", required=True)
    ap.add_argument("--goal", required=True)
    ap.add_argument("--strategy", default="Auto_level_3")
    ap.add_argument("--session", default="session")
    ap.add_argument("--max-wall", type=float, default=600.0)
    ap.add_argument("--poll", type=float, default=0.5)
    ap.add_argument("--log", default=None, help="write the shell's whole transcript to this file")
    ap.add_argument("-L", dest="libs", action="append", default=[])
    a = ap.parse_args()
    t0 = time.monotonic()
    lib = [x for d in a.libs for x in ("-L", d)]
    create = ["why3", "session", "create", *lib, "-o", a.session, a.mlw]
    cp = subprocess.run(create, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = cp.stdout.decode("utf-8", "replace")
    sys.stdout.write(out if out.endswith("\n") or not out else out + "\n")
    xml_path = os.path.join(a.session, "why3session.xml")
    if cp.returncode != 0 or "with the following errors" in out or not os.path.isfile(xml_path):
        emit(status="invalid", phase="session create", returncode=cp.returncode,
             message=out.strip()[-4000:], wall_s=round(time.monotonic() - t0, 3))
        return 3
    goals = [(th.get("name"), g.get("name")) for th in ET.parse(xml_path).iter("theory")
             for g in th.findall("goal")]
    # exact name, else the last dot-component (goals of clones: "M.M.assoc" for "assoc")
    match = [g for t, g in goals if t == a.theory and g == a.goal] or \
        [g for t, g in goals if t == a.theory and g.split(".")[-1] == a.goal]
    if len(match) != 1:
        emit(status="goal_not_found", theory=a.theory, goal=a.goal, matches=len(match),
             goals=[f"{t}.{g}" for t, g in goals][:500], wall_s=round(time.monotonic() - t0, 3))
        return 4
    goal = match[0]
    sh = Shell(["why3", "shell", "--debug=shell_proto", *lib, a.session], a.log)
    info = {"strategy": a.strategy, "theory": a.theory, "goal": goal}

    def fail(msg, code=6):
        info.update(status="error", message=msg, wall_s=round(time.monotonic() - t0, 3))
        try:
            os.killpg(sh.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        sh.close(5)
        emit(**info)
        return code

    if not sh.wait_for(r"Session initialized successfully", 0, 300):
        return fail("why3 shell did not initialise the session")
    ids = []
    for _ in range(200):  # the shell applies notifications to its tree every 100 ms
        pos = len(sh.buf)
        sh.send("p")
        m = sh.wait_for(r"root .*?\n> ", pos, 120)
        if not m:
            return fail("no answer to 'p'")
        ids = [int(i) for name, i, parent in _GOAL.findall(m.group(0))
               if name == goal and parent == a.theory]
        if ids:
            break
        time.sleep(0.3)
    if len(ids) != 1:
        return fail(f"goal {a.theory}.{goal} found {len(ids)} times in the shell's tree")
    gid = ids[0]
    info["node"] = gid
    others = sorted(int(i) for _n, i, _p in _GOAL.findall(m.group(0)) if int(i) != gid)
    # The stock shell takes `goto N` only for N below its count of received nodes + 1,
    # but the server's ids skip those of theories without goals: the last goals of such
    # files cannot be selected. Each `assert true` on another goal adds three nodes
    # (a transformation and its two sub-goals) and so raises the count; nothing is
    # proved or changed on the target.
    info["helper_asserts"] = 0
    while True:
        pos = len(sh.buf)
        sh.send(f"goto {gid}")
        m = sh.wait_for(rf'get task\({gid},|command "goto {gid}"', pos, 120)
        if not m:
            return fail(f"no answer to 'goto {gid}'")
        if m.group(0).startswith("get task"):
            break
        if not others or info["helper_asserts"] >= 100:
            return fail(f"the shell does not let node {gid} be selected")
        pos = len(sh.buf)
        sh.send(f"goto {others[0]}")
        if not sh.wait_for(rf"get task\({others[0]},", pos, 120):
            return fail(f"no answer to 'goto {others[0]}'")
        pos = len(sh.buf)
        sh.send("assert true")
        m = sh.wait_for(r"new node = \d+, parent = \d+.*?get notified", pos, 120)
        if not m:
            return fail("'assert true' made no node")
        info["helper_asserts"] += 1
    pos = len(sh.buf)
    t_start = time.monotonic()
    sh.send(a.strategy)
    if not sh.wait_for(r'command "' + re.escape(a.strategy) + '"', pos, 120):
        return fail("the strategy command was not read")
    # the strategy has started once a node appears under the goal (or it is proved)
    if not sh.wait_for(rf"new node = \d+, parent = {gid}\b|node change {gid}: proved=true", pos, 300):
        return fail(f"strategy {a.strategy} did not start (unknown strategy?)")
    pos = len(sh.buf)
    sh.send("goto 0")  # the root: later commands do not print the goal again
    if not sh.wait_for(r"get task\(0,", pos, a.max_wall):
        cut = True
    else:
        cut = False
    k, quiet, last = 0, 0, -1
    while not cut:
        time.sleep(a.poll)
        k += 1
        pos = len(sh.buf)
        sh.send(f"verikit-sync-{k}")
        left = a.max_wall - (time.monotonic() - t_start)
        marker = r'command "verikit-sync-' + str(k) + '"'
        m = sh.wait_for(marker, pos, max(left, 0.1))
        if not m and re.search(rf"node change {gid}: proved=true", sh.buf):
            m = sh.wait_for(marker, pos, 60)  # proved: give the shell time to take Save
        if not m:
            cut = True
            break
        seen = sh.buf[: m.start()]
        if re.search(rf"node change {gid}: proved=true", seen):
            break  # nothing the strategy still does can change a proved goal
        status = dict(_STATUS.findall(seen))
        pending = [n for n, st in status.items() if st in PENDING]
        activity = len(_ACTIVITY.findall(seen))
        quiet = quiet + 1 if not pending and activity == last else 0
        last = activity
        if quiet >= 2:
            break
        if time.monotonic() - t_start > a.max_wall:
            cut = True
    info["strategy_wall_s"] = round(time.monotonic() - t_start, 3)
    info["polls"] = k
    info.update(summarize(sh.buf, gid))
    if cut:
        os.killpg(sh.proc.pid, signal.SIGKILL)
        sh.close(10)
        info.update(status="cut", wall_s=round(time.monotonic() - t0, 3))
        emit(**info)
        return 5
    pos = len(sh.buf)
    sh.send("Save")
    if not sh.wait_for(r"Session is saved", pos, 120) or not os.path.isfile(xml_path):
        return fail("the session was not saved")
    sh.send("Exit")
    sh.close(30)
    info.update(status="done", wall_s=round(time.monotonic() - t0, 3), shell_returncode=sh.proc.returncode)
    emit(**info)
    return 0


if __name__ == "__main__":
    sys.exit(main())
