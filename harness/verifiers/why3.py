"""Why3 verifier module (Why3 1.8.0 of the Debian trixie ``rocq`` image and its provers).

Two ways of running Why3 on one goal (``theory``, ``goal``) of a WhyML file (job files in
the scratch directory, ``WHY3CONFIG=why3.conf`` from :meth:`Why3.prepare`):

``mode="strategy"`` -- apply a Why3 IDE strategy such as ``Auto_level_3`` (the NTP4VC
paper's "ATP pass" baseline, 001_fb0027e113adb610.txt section 3 / Table 2; the
repository's README runs ``tools/why3_auto_3.py`` with a modified Why3 1.8.0 whose
``why3 shell`` prints the proof tree as JSON)::

    python3 verikit_why3_strategy.py -L . --mlw FILE.mlw --theory T --goal G
            --strategy Auto_level_3 --max-wall S --session session

The driver (:data:`DRIVER_SOURCE`, shipped with the job, stdlib only) runs the stock
tools ``why3 session create -L . -o session FILE.mlw`` and then
``why3 shell --debug=shell_proto -L . session``, and types on the shell's standard input
``p`` (tree with node ids), ``goto ID``, the strategy name, ``goto 0``, marker commands
until the proof tree is quiescent, ``Save``, ``Exit``. Stock Why3 1.8.0 has no
command-line option to apply a strategy: ``why3 prove`` takes one prover (``-P``) and
transformations (``-a``), ``why3 replay``/``bench``/``session update`` only (re)run
recorded proof attempts or add provers; strategies are run by the ITP server, whose
text front end is ``why3 shell`` (its ``help`` lists ``<strategy shortcut>``, and
``list-strategies`` the ``Auto_level_0..3`` and ``Split_VC`` strategies that
``why3 config detect`` generated for the detected provers). The result is read from the
saved ``session/why3session.xml`` (collected), cross-checked with the driver's summary
line ``VERIKIT-WHY3 {json}``.

``mode="prove"`` -- one prover, optional transformations::

    why3 prove -L . -P PROVER -t TIME [-m MEM] [-a TRANSF]... FILE.mlw -T T -G G

whose output is ``Goal G.`` / ``Prover result is: Valid (0.01s, 62 steps).`` per
(sub)goal (``Sub-goal ... of goal G.`` after ``-a split_vc``).

Verdicts: ``verified`` (goal proved), ``failed`` (strategy or prover finished without a
proof), ``timeout`` (strategy cut at ``max_wall_s``, or job killed at the sandbox limit),
``invalid`` (the WhyML file does not parse/typecheck, or has no such goal),
``infra_error`` (tool or driver missing or crashed, unreadable results).

Quirks of the trixie image, found by running it (recorded in tests/recorded/why3/):
Eprover 3.2.5 is "not recognized" by Why3 1.8.0 and driven with the E 2.0 command line,
which E 3 rejects (``Option -t (--term-ordering) requires LPO, LPO4, KBO or KBO6``): every
E call is a ``HighFailure``. Alt-Ergo and SPASS are not packaged in the image.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from ..sandbox import Limits, ProcResult
from . import GoalCounts, VerifierResult

NAME = "why3"
TOOLCHAIN = "rocq"  # Why3 1.8.0 and its provers live in the rocq image (Debian trixie)
#: Version of this module's command line and parser; part of every job key. Bump on change.
MODULE_VERSION = "1"
WHY3CONF = "why3.conf"
DRIVER = "verikit_why3_strategy.py"
SESSION = "session"
SESSION_XML = f"{SESSION}/why3session.xml"
MARK = "VERIKIT-WHY3 "
MODES = ("strategy", "prove")

#: The NTP4VC baseline: Why3's Auto_level_3 strategy, one goal at a time. The paper
#: calls a VC hard when AL3 fails "in 10 minutes on a 12-core workstation" (600 s);
#: provers run one at a time here (``running_provers_max``).
PAPER_OPTIONS = {"mode": "strategy", "strategy": "Auto_level_3", "max_wall_s": 600.0, "running_provers_max": 1}

_RESULT = re.compile(r"^Prover result is: ([A-Za-z][A-Za-z ]*?)(?: \((?![\d.]+s[,)])([^()]*)\))?"
                     r"(?: \(([\d.]+)s(?:, (\d+) steps)?\))?\.?$")
_GOAL_LINE = re.compile(r"^(?:Goal (\S+)\.|Sub-goal (.+) of goal (\S+)\.)$")
_LOCATED = re.compile(r'File "([^"]+)", line (\d+), characters (\d+)-(\d+):\s*(.*)')
_STRATEGY = re.compile(r'\[strategy\]\s*\ncode = "(.*?)"\s*\ndesc = "(.*?)"\s*\nname = "(.*?)"', re.S)
_FOUND = re.compile(r"^(Found prover .*|Prover .* is not recognized.*|\d+ prover\(s\) added.*)$", re.M)
_STATUS_VERDICT = {"valid": "verified", "timeout": "timeout", "outofmemory": "memout",
                   "steplimitexceeded": "timeout"}


@dataclass
class Why3Setup:
    """What ``why3 config detect`` made of the sandbox's provers.

    Attributes:
        conf: the ``why3.conf`` to ship with every job (``running_provers_max`` set).
        detect_log: the detection messages (``Found prover Z3 version 4.13.3, OK.``...).
        strategies: strategy name -> code, as ``why3 config show`` prints them (generated
            by Why3 from the detected provers; Auto_level_3 among them).
        provers: detected provers as Why3 names them (``Z3 4.13.3``, ``CVC5 1.1.2``...).
    """

    conf: bytes
    detect_log: str
    strategies: dict[str, str] = field(default_factory=dict)
    provers: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        """Detection log lines, provers and strategies (not the conf bytes)."""
        return {"detect": _FOUND.findall(self.detect_log), "provers": self.provers,
                "strategies": self.strategies}


def strategy_provers(code: str) -> list[str]:
    """Provers a strategy's code calls, in first-call order (``CVC4,1.8``, ``Z3,4.13.3``...)."""
    seen: list[str] = []
    for line in code.splitlines():
        if line.startswith("c "):
            for part in line[2:].split("|"):
                name = part.split()[0]
                if name not in seen:
                    seen.append(name)
    return seen


class Why3:
    """Why3 verifier. ``name = "why3"``, toolchain ``rocq`` (Why3 lives in the rocq image)."""

    name = NAME
    toolchain = TOOLCHAIN

    # ------------------------------------------------------------------ setup
    def setup(self, sandbox, *, running_provers_max: int = 1) -> Why3Setup:
        """Run ``why3 config detect`` and ``why3 config show`` in ``sandbox`` (once per run).

        Raises:
            RuntimeError: why3 is missing or wrote no configuration (message has its output).
        """
        env = {"WHY3CONFIG": WHY3CONF}
        res = sandbox.run(["why3", "config", "detect"], env=env, collect=[WHY3CONF], limits=Limits(wall_s=120))
        if WHY3CONF not in res.files:
            raise RuntimeError(f"why3 config detect wrote no {WHY3CONF} (exit {res.returncode}): "
                               f"{(res.stdout + res.stderr).strip()[-500:] or res.start_error}")
        conf = set_running_provers_max(res.files[WHY3CONF].decode(), running_provers_max).encode()
        show = sandbox.run(["why3", "config", "show"], env=env, files={WHY3CONF: conf}, limits=Limits(wall_s=120))
        strategies = {name: code for code, _desc, name in _STRATEGY.findall(show.stdout)}
        lp = sandbox.run(["why3", "config", "list-provers"], env=env, files={WHY3CONF: conf},
                         limits=Limits(wall_s=120))
        provers = [ln.strip() for ln in lp.stdout.splitlines() if ln.strip() and not ln.startswith("Known")]
        return Why3Setup(conf=conf, detect_log=res.stdout + res.stderr, strategies=strategies, provers=provers)

    def prepare(self, sandbox, probed=None) -> dict[str, bytes]:
        """Files to ship with every job: ``why3.conf`` (from :meth:`setup`) and the driver."""
        return self.files(self.setup(sandbox))

    @staticmethod
    def files(setup: Why3Setup) -> dict[str, bytes]:
        """``{why3.conf, verikit_why3_strategy.py}`` for jobs, from a :class:`Why3Setup`."""
        return {WHY3CONF: setup.conf, DRIVER: DRIVER_SOURCE.encode()}

    # ------------------------------------------------------------------ jobs
    def options(self, probed=None, *, mlw: str, theory: str, goal: str, **overrides) -> dict:
        """Options of one job: the target (``mlw`` file name in the job directory, Why3
        ``theory`` and ``goal`` names) and the paper's strategy run unless overridden.

        ``mode="prove"`` takes ``prover`` (a name or shortcut ``why3 prove -P`` accepts),
        ``time_limit_s``, optional ``mem_limit_mb`` and ``transformations`` (list).

        Returns:
            dict with the target, ``mode``, the mode's settings, ``libs`` (``-L`` dirs,
            default ``["."]``), ``why3_version`` (probed, or None) and ``verifier_module``.

        Raises:
            ValueError: unknown mode, or ``prove`` without ``prover``/``time_limit_s``.
        """
        opts = dict(PAPER_OPTIONS)
        opts.update(overrides)
        opts.update(mlw=mlw, theory=theory, goal=goal)
        opts.setdefault("libs", ["."])
        if opts["mode"] not in MODES:
            raise ValueError(f"unknown why3 mode {opts['mode']!r}; available: {', '.join(MODES)}")
        if opts["mode"] == "prove":
            for k in ("strategy", "max_wall_s"):
                opts.pop(k, None)
            if not opts.get("prover") or not opts.get("time_limit_s"):
                raise ValueError("why3 mode 'prove' needs prover and time_limit_s")
            opts.setdefault("transformations", [])
        versions = getattr(probed, "versions", None) or {}
        opts["why3_version"] = versions.get("why3")
        opts["verifier_module"] = f"{NAME}/{MODULE_VERSION}"
        return opts

    def command(self, options: dict) -> tuple[list[str], dict[str, str], list[str]]:
        """Build the command of one job (files: the ``.mlw`` files + :meth:`files`).

        Returns:
            (argv, env, files to collect).
        """
        libs = [x for d in options.get("libs", ["."]) for x in ("-L", d)]
        env = {"WHY3CONFIG": WHY3CONF}
        if options["mode"] == "strategy":
            argv = ["python3", DRIVER, *libs, "--mlw", options["mlw"], "--theory", options["theory"],
                    "--goal", options["goal"], "--strategy", options["strategy"],
                    "--max-wall", _num(options["max_wall_s"]), "--session", SESSION]
            return argv, env, [SESSION_XML]
        argv = ["why3", "prove", *libs, "-P", options["prover"], "-t", _num(options["time_limit_s"])]
        if options.get("mem_limit_mb"):
            argv += ["-m", str(options["mem_limit_mb"])]
        for tr in options.get("transformations") or []:
            argv += ["-a", tr]
        argv += [options["mlw"], "-T", options["theory"], "-G", options["goal"]]
        return argv, env, []

    # ------------------------------------------------------------------ parsing
    def parse(self, proc: ProcResult, options: dict | None = None) -> VerifierResult:
        """Turn a finished run into a :class:`VerifierResult` (see the module docstring).

        ``goal_results`` holds the target goal (``name`` = ``Theory.goal``) and, in
        strategy mode, every leaf of the proof tree the strategy built that is not proved
        (``status`` = best attempt result, or ``unproved``); ``extra`` has the driver's
        summary (``driver``), attempt counts by result (``attempts``), the provers that
        closed leaves (``proved_by``), the transformations applied and the session file's
        prover list.
        """
        options = options or {}
        mode = options.get("mode") or ("prove" if proc.argv[:2] == ["why3", "prove"] else "strategy")
        log = proc.stdout + ("\n" + proc.stderr if proc.stderr else "")
        if proc.start_error:
            return VerifierResult("infra_error", f"{proc.argv[:1]} did not start: {proc.start_error}")
        if proc.memout:
            return VerifierResult("memout", "job killed at the memory limit")
        if proc.timed_out:
            return VerifierResult("timeout", f"job killed at the wall-time limit after {proc.wall_s:.1f} s")
        if proc.output_truncated:
            return VerifierResult("infra_error", "output exceeded the cap; the run was stopped")
        if mode == "prove":
            return _parse_prove(proc, log, options)
        return _parse_strategy(proc, log, options)


def set_running_provers_max(conf: str, n: int) -> str:
    """``why3.conf`` text with ``running_provers_max = n`` in ``[main]``."""
    if re.search(r"(?m)^running_provers_max\s*=", conf):
        return re.sub(r"(?m)^running_provers_max\s*=.*$", f"running_provers_max = {n}", conf)
    return re.sub(r"(?m)^\[main\]\s*$", f"[main]\nrunning_provers_max = {n}", conf, count=1)


def _num(x) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def _located(log: str) -> list[str]:
    """``File "f.mlw", line L, characters A-B: message`` errors (message on the same or next line)."""
    lines = log.splitlines()
    out = []
    for i, line in enumerate(lines):
        m = _LOCATED.search(line)
        if m:
            msg = m.group(5) or (lines[i + 1].strip() if i + 1 < len(lines) else "")
            out.append(f"{m.group(1)}:{m.group(2)}:{m.group(3)}-{m.group(4)}: {msg}")
    return list(dict.fromkeys(out))[:20]


def driver_summary(stdout: str) -> dict | None:
    """The driver's last ``VERIKIT-WHY3 {json}`` line, or None."""
    found = None
    for line in stdout.splitlines():
        if line.startswith(MARK):
            try:
                found = json.loads(line[len(MARK):])
            except ValueError:
                found = None
    return found


def _parse_prove(proc: ProcResult, log: str, options: dict) -> VerifierResult:
    target = f"{options.get('theory', '?')}.{options.get('goal', '?')}"
    results: list[dict] = []
    current = None
    for line in log.splitlines():
        m = _GOAL_LINE.match(line.strip())
        if m:
            current = m.group(1) or f"{m.group(3)}/{m.group(2)}"
            continue
        m = _RESULT.match(line.strip())
        if m and current is not None:
            answer = m.group(1).strip()
            results.append({"name": current, "status": answer.lower().replace(" ", ""),
                            "detail": m.group(2), "prover": options.get("prover"),
                            "time_s": float(m.group(3)) if m.group(3) else None,
                            "steps": int(m.group(4)) if m.group(4) else None})
            current = None
    messages = _located(log)
    if not results:
        if messages and proc.returncode not in (0, None):
            return VerifierResult("invalid", f"Why3 rejected the input: {messages[0]}", messages=messages)
        return VerifierResult("infra_error", f"why3 prove exited {proc.returncode} without a prover result: "
                              f"{log.strip()[-300:]}", messages=messages)
    proved = sum(r["status"] == "valid" for r in results)
    statuses = [r["status"] for r in results]
    goals = GoalCounts(proved=proved, total=len(results), timeout=statuses.count("timeout"),
                       failed=statuses.count("invalid") + statuses.count("highfailure") + statuses.count("failure"),
                       unknown=statuses.count("unknown") + statuses.count("outofmemory")
                       + statuses.count("steplimitexceeded"))
    unproved = [r for r in results if r["status"] != "valid"]
    if not unproved:
        verdict, reason = "verified", f"{target}: {len(results)} goal(s) proved by {options.get('prover')}"
    else:
        first = unproved[0]
        verdict = "timeout" if all(r["status"] == "timeout" for r in unproved) else "failed"
        reason = (f"{target}: {proved}/{len(results)} proved; {first['name']}: {first['status']}"
                  + (f" ({first['detail']})" if first["detail"] else ""))
    return VerifierResult(verdict, reason, goals=goals, goal_results=results, messages=messages,
                          extra={"mode": "prove"})


def _parse_strategy(proc: ProcResult, log: str, options: dict) -> VerifierResult:
    summary = driver_summary(proc.stdout)
    messages = _located(log)
    if summary is None:
        why = "python3 or the driver is missing" if proc.returncode in (126, 127) else "no driver summary line"
        return VerifierResult("infra_error", f"strategy driver exited {proc.returncode}: {why}: "
                              f"{log.strip()[-300:]}", messages=messages)
    status = summary.get("status")
    target = f"{summary.get('theory', options.get('theory'))}.{summary.get('goal', options.get('goal'))}"
    extra = {"mode": "strategy", "driver": summary}
    if status == "invalid":
        first = messages[0] if messages else summary.get("message", "")[-300:]
        return VerifierResult("invalid", f"Why3 rejected the input: {first}", messages=messages, extra=extra)
    if status == "goal_not_found":
        return VerifierResult("invalid", f"no goal {options.get('theory')}.{options.get('goal')} in "
                              f"{options.get('mlw')} ({len(summary.get('goals', []))} goals there)",
                              messages=messages, extra=extra)
    if status == "cut":
        proved = bool(summary.get("proved"))
        goals = GoalCounts(proved=int(proved), total=1, timeout=int(not proved))
        extra["attempts"] = summary.get("attempt_results", {})
        if proved:  # fail closed would be wrong here: the shell notified the proof, but no session was saved
            return VerifierResult("infra_error", f"{target}: notified proved but the run was cut before saving",
                                  goals=goals, extra=extra)
        return VerifierResult("timeout", f"{target}: {summary.get('strategy')} cut at "
                              f"{summary.get('strategy_wall_s')} s (max_wall_s) with "
                              f"{summary.get('attempts', 0)} prover attempt(s)", goals=goals,
                              goal_results=[{"name": target, "status": "cut", "prover": None,
                                             "time_s": summary.get("strategy_wall_s")}], extra=extra)
    if status != "done":
        return VerifierResult("infra_error", f"strategy driver: {status}: {summary.get('message', '')}",
                              messages=messages, extra=extra)
    xml = proc.files.get(SESSION_XML)
    if not xml:
        return VerifierResult("infra_error", f"no {SESSION_XML} collected", extra=extra)
    try:
        tree = read_session(xml)
    except ET.ParseError as exc:
        return VerifierResult("infra_error", f"{SESSION_XML} does not parse: {exc}", extra=extra)
    node = tree["goals"].get((summary.get("theory"), summary.get("goal")))
    if node is None:
        return VerifierResult("infra_error", f"{target} is not in {SESSION_XML}", extra=extra)
    proved = node["proved"]
    if proved != bool(summary.get("proved")):  # fail closed: the two readings must agree
        return VerifierResult("infra_error", f"{target}: session says proved={proved}, the shell's "
                              f"notifications say proved={summary.get('proved')}", extra=extra)
    leaves = list(_leaves(node))
    unproved = [leaf for leaf in leaves if not leaf["proved"]]
    attempts: dict[str, int] = {}
    proved_by: dict[str, int] = {}
    transformations: dict[str, int] = {}
    for g in _walk(node):
        for a in g["attempts"]:
            attempts[a["status"]] = attempts.get(a["status"], 0) + 1
            if a["status"] == "valid":
                proved_by[a["prover"]] = proved_by.get(a["prover"], 0) + 1
        for t in g["transformations"]:
            transformations[t["name"]] = transformations.get(t["name"], 0) + 1
    extra.update(attempts=dict(sorted(attempts.items())), proved_by=dict(sorted(proved_by.items())),
                 transformations=dict(sorted(transformations.items())), leaves=len(leaves),
                 leaves_proved=len(leaves) - len(unproved), session_provers=tree["provers"])
    goals = GoalCounts(proved=int(proved), total=1, failed=int(not proved))
    results = [{"name": target, "status": "proved" if proved else "unproved",
                "prover": None, "time_s": summary.get("strategy_wall_s")}]
    results += [{"name": leaf["path"], "status": _best(leaf), "prover": None, "time_s": None} for leaf in unproved]
    if proved:
        return VerifierResult("verified", f"{target}: proved by {summary.get('strategy')} "
                              f"({len(leaves)} leaf goal(s); {', '.join(sorted(proved_by))})",
                              goals=goals, goal_results=results, extra=extra)
    return VerifierResult("failed", f"{target}: {summary.get('strategy')} finished without a proof; "
                          f"{len(unproved)}/{len(leaves)} leaf goal(s) unproved", goals=goals,
                          goal_results=results, extra=extra)


def read_session(xml: bytes) -> dict:
    """A ``why3session.xml`` as ``{"provers": {id: "Name version"}, "goals": {(theory, goal): node}}``.

    A node is ``{"name", "path", "proved", "attempts": [{"prover", "status", "time_s",
    "steps"}], "transformations": [{"name", "proved", "goals": [node]}]}``.
    """
    root = ET.fromstring(xml)
    provers = {}
    for p in root.iter("prover"):
        alt = f" ({p.get('alternative')})" if p.get("alternative") else ""
        provers[p.get("id")] = f"{p.get('name')} {p.get('version')}{alt}"

    def goal(el, path):
        name = el.get("name")
        path = f"{path}/{name}" if path else name
        attempts = []
        for pr in el.findall("proof"):
            res = pr.find("result")
            attempts.append({"prover": provers.get(pr.get("prover"), pr.get("prover")),
                             "status": res.get("status") if res is not None else "undone",
                             "time_s": float(res.get("time")) if res is not None and res.get("time") else None,
                             "steps": int(res.get("steps")) if res is not None and res.get("steps") else None})
        trs = [{"name": tr.get("name"), "proved": tr.get("proved") == "true",
                "goals": [goal(g, f"{path}/{tr.get('name')}") for g in tr.findall("goal")]}
               for tr in el.findall("transf")]
        return {"name": name, "path": path, "proved": el.get("proved") == "true", "attempts": attempts,
                "transformations": trs}

    goals = {}
    for th in root.iter("theory"):
        for g in th.findall("goal"):
            goals[(th.get("name"), g.get("name"))] = goal(g, th.get("name"))
    return {"provers": provers, "goals": goals}


def _walk(node: dict):
    yield node
    for t in node["transformations"]:
        for g in t["goals"]:
            yield from _walk(g)


def _leaves(node: dict):
    """Goals of the proof tree with no transformation that produced subgoals."""
    subs = [g for t in node["transformations"] for g in t["goals"]]
    if not subs:
        yield node
        return
    for g in subs:
        yield from _leaves(g)


def _best(node: dict) -> str:
    """The most telling attempt result of an unproved leaf (timeout > unknown > failures)."""
    order = ["valid", "timeout", "steplimitexceeded", "outofmemory", "unknown", "invalid", "failure",
             "highfailure", "undone"]
    statuses = [a["status"] for a in node["attempts"]]
    for s in order:
        if s in statuses:
            return s
    return "unproved"


#: The in-sandbox driver of ``mode="strategy"`` (shipped as ``verikit_why3_strategy.py``).
DRIVER_SOURCE = r'''"""verikit why3 strategy driver (runs INSIDE the sandbox; Python 3 stdlib only).

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
'''
