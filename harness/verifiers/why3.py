"""Why3 verifier module (Why3 1.8.0 of the Debian trixie ``rocq`` image and its provers).

Its toolchain is ``rocq`` (:data:`TOOLCHAIN`), not ``why3``: the ``rocq`` toolchain of
images/toolchains.json pins Rocq with stdpp and CoqHammer *and* Why3 with its provers, and
its image bundles both (Debian: Why3 1.8.0, Z3, CVC4, CVC5, E). The name stays ``rocq``
because a toolchain's name is part of its probed fingerprint, and so of every job key, of
every record's ``toolchain`` and of the image's name (``verikit/rocq:debian-...``):
renaming it would re-key the committed NTP4VC Why3 runs. The toolchain named ``why3`` in
images/toolchains.json is another one, the Nix flavor's Why3 with the paper's whole prover
set (SPASS, Alt-Ergo and Vampire too), which no verifier declares.

Two ways of running Why3 on one goal (``theory``, ``goal``) of a WhyML file (job files in
the scratch directory, ``WHY3CONFIG=why3.conf`` from :meth:`Why3.prepare`):

``mode="strategy"`` -- apply a Why3 IDE strategy such as ``Auto_level_3`` (the NTP4VC
paper's "ATP pass" baseline, Xu et al., ICLR 2026, section 4 / Table 2; the
repository's README runs ``tools/why3_auto_3.py`` with a modified Why3 1.8.0 whose
``why3 shell`` prints the proof tree as JSON)::

    python3 verikit_why3_strategy.py -L . --mlw FILE.mlw --theory T --goal G
            --strategy Auto_level_3 --max-wall S --session session

The driver (``harness/verifiers/drivers/why3_shell.py``, :data:`DRIVER_PATH`: a file of
its own, never imported, read at run time by :func:`driver_source` and shipped with every
job as ``verikit_why3_strategy.py``; stdlib only; its sha256 is the ``driver_sha256``
option, so a change invalidates cached results) runs the stock tools
``why3 session create -L . -o session FILE.mlw`` and then
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
proof), ``timeout`` (strategy cut at ``max_wall_s``; a job the sandbox killed at its
wall-time limit is mapped by the executor, :func:`harness.model.termination`),
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
from pathlib import Path

from ..model import GoalCounts, Limits, ProcResult, Verifier, VerifierResult, sha256_text

NAME = "why3"
TOOLCHAIN = "rocq"  # the toolchain that bundles Rocq and Why3 with its provers (see the module docstring)
#: Version of this module's command line and parser; part of every job key. Bump on change.
MODULE_VERSION = "1"
WHY3CONF = "why3.conf"
#: The job file name of the strategy driver, and the driver's source file in the package
#: (package data, not a module of the package).
DRIVER = "verikit_why3_strategy.py"
DRIVER_PATH = Path(__file__).resolve().parent / "drivers" / "why3_shell.py"
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


def driver_source() -> str:
    """The strategy driver's text, read now from :data:`DRIVER_PATH`.

    Raises:
        OSError: the file is missing (a broken installation: it is package data).
    """
    return DRIVER_PATH.read_text(encoding="utf-8")


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


class Why3(Verifier):
    """Why3 verifier. ``name = "why3"``, toolchain ``rocq`` (Rocq's toolchain bundles Why3).

    :meth:`prepare` runs ``why3 config detect`` once per run; the configuration's sha256
    and the strategies it generated are then part of :meth:`options` (so of every key).
    """

    name = NAME
    toolchain = TOOLCHAIN
    version = MODULE_VERSION

    def __init__(self) -> None:
        #: What :meth:`prepare` found in the sandbox (None before it ran).
        self.prepared: Why3Setup | None = None

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
        """Files to ship with every job: ``why3.conf`` (from :meth:`setup`, with
        ``running_provers_max`` of :data:`PAPER_OPTIONS`) and the driver. Kept in
        :attr:`prepared` for :meth:`options`.

        Raises:
            RuntimeError: as :meth:`setup`.
        """
        self.prepared = self.setup(sandbox, running_provers_max=PAPER_OPTIONS["running_provers_max"])
        return self.files(self.prepared)

    @staticmethod
    def files(setup: Why3Setup) -> dict[str, bytes]:
        """``{why3.conf, verikit_why3_strategy.py}`` for jobs, from a :class:`Why3Setup`
        (the driver read now from :data:`DRIVER_PATH`)."""
        return {WHY3CONF: setup.conf, DRIVER: driver_source().encode("utf-8")}

    # ------------------------------------------------------------------ jobs
    def options(self, probed=None, *, smoke: bool = False, cpus: int = 1, **overrides) -> dict:
        """Options of a run, or of one job: the paper's strategy run unless overridden.

        The target of a job (``mlw``: file name in the job directory; Why3 ``theory`` and
        ``goal`` names) is given here or added per task by the benchmark; :meth:`command`
        needs it. ``mode="prove"`` takes ``prover`` (a name or shortcut ``why3 prove -P``
        accepts), ``time_limit_s``, optional ``mem_limit_mb`` and ``transformations``
        (list). ``smoke``/``cpus`` (the runner's generic arguments) do not apply: provers
        run one at a time (``running_provers_max``).

        Returns:
            dict with ``mode``, the mode's settings, the target when given, ``libs``
            (``-L`` dirs, default ``["."]``), ``why3_version`` (probed, or None),
            ``verifier_module``, ``driver_sha256`` (of :data:`DRIVER_PATH`, read now) and,
            after :meth:`prepare`, ``why3_conf_sha256`` and ``strategy_code`` (the code
            Why3 generated for the strategy, None if it has no such strategy).

        Raises:
            ValueError: unknown mode, or ``prove`` without ``prover``/``time_limit_s``.
        """
        opts = dict(PAPER_OPTIONS)
        opts.update(overrides)
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
        opts["driver_sha256"] = sha256_text(driver_source())
        if self.prepared is not None:
            opts["why3_conf_sha256"] = sha256_text(self.prepared.conf)
            if opts["mode"] == "strategy":
                opts["strategy_code"] = self.prepared.strategies.get(opts["strategy"])
        return opts

    def command(self, options: dict) -> tuple[list[str], dict[str, str], list[str]]:
        """Build the command of one job (files: the ``.mlw`` files + :meth:`files`).

        Returns:
            (argv, env, files to collect).

        Raises:
            ValueError: the options name no target (``mlw``, ``theory``, ``goal``).
        """
        missing = [k for k in ("mlw", "theory", "goal") if not options.get(k)]
        if missing:
            raise ValueError(f"why3 job options need {', '.join(missing)} (set per task by the benchmark)")
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

        The sandbox's own endings (did not start, wall-time or memory limit) are mapped by
        the executor before this is called (:func:`harness.model.termination`).

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

