"""Dafny verifier (``dafny``), two command-line dialects, results per method.

Dialects (chosen from the probed version, or forced with ``options(dialect=...)``):

- ``"2"``: the legacy Boogie-style command line of Dafny 2.x/3.x, the Debian ``dafny``
  package 2.3.0 of the ``dafny`` toolchain image (runs here)::

      dafny /compile:0 /nologo /timeLimit:<s> /rlimit:<n> /xml:<file>.xml <file>.dfy

  ``/timeLimit`` and ``/rlimit`` apply per Boogie procedure ("Prover options" of
  ``dafny /help``); ``/xml`` writes one ``<method name="Impl$$_module.__default.M">`` (and
  ``CheckWellformed$$...``) element per procedure with ``<conclusion outcome=...>``
  (``correct``, ``errors``, ``timedout``, ``outofmemory``, ``inconclusive``). Errors are
  printed as ``file(line,col): Error BP5003: A postcondition might not hold on this return
  path.``, a procedure over ``/timeLimit`` as ``file(line,col): Verification of
  'Impl$$_module.__default.M' timed out after N seconds`` followed by ``Timed out on: ...``
  (observed with Dafny 2.3.0.10506 + Z3 4.8.12; recorded in tests/recorded/dafny/).
  Two quirks of that pairing, both handled and recorded: Boogie 2.3 sends Z3 the option
  ``model_compress`` that Z3 4.8.12 no longer knows, so every query prints ``Prover error:
  ... unknown parameter 'model_compress'`` and a list of parameters (harmless: Z3 ignores
  the option and answers; verified and failed methods are reported normally), and a
  procedure that exceeds ``/rlimit`` prints ``Prover error: Invalid PING response ...
  max. resource limit exceeded`` and is counted in neither the verified nor the error
  total, its XML outcome being ``errors`` with no error element: read here as
  ``out_of_resource``, never as verified or failed.

- ``"4"``: the ``dafny verify`` command of Dafny 4.x, the version the paper pins (>= 4.6,
  the reference script runs ``dafny verify --allow-warnings``)::

      dafny verify --allow-warnings --verification-time-limit <s> --resource-limit <n> <file>.dfy

  Per-method results come from the error locations (``file(line,col): Error: ...``),
  ``Error: Verification of 'M' timed out after N seconds`` and ``Error: Verification out of
  resource (M)`` and the final ``Dafny program verifier finished with ...`` line. Dafny 4
  cannot be installed here: this dialect is tested only on real outputs recorded from
  dafny-lang/dafny's own test suite (tests/recorded/dafny/dafny4/, with their sources
  and commits); ``--resource-limit`` units follow Dafny 4's CLI and are not compared with
  ``/rlimit``.

A job holds one or more ``.dfy`` files (``options["units"]``: file -> ``[[method, first
line, last line], ...]``). Strategy ``batched``: the batch file (every check of a task as
its own method) is verified by ONE process; if it fails to parse or resolve, every
check file (one method each, same helpers) is verified separately, so one bad method
cannot hide the others (fallback). Strategy ``separate``: one process per check file.
Every error is attributed to the method whose line range contains it.
"""

from __future__ import annotations

import re
import shlex
import xml.etree.ElementTree as ET

from ..model import GoalCounts, ProcResult, VerifierResult

NAME = "dafny"
TOOLCHAIN = "dafny"
#: Version of this module's command lines and parser (part of every job key).
MODULE_VERSION = "2"
DEFAULT_TIME_LIMIT_S = 30
#: Z3 resource limit per procedure (Dafny 2.3 ``/rlimit``), a deterministic budget next to
#: the time limit. Checked on the MBPP-DFY data: no correctness check reaches it.
DEFAULT_RLIMIT = 20_000_000
STATUSES = ("verified", "failed", "timeout", "out_of_resource", "invalid", "not_run", "unknown")

_ERR = re.compile(r"^(?P<file>[^\s(][^(]*?)\((?P<line>\d+),(?P<col>\d+)\): (?:(?P<kind>Error|Related location|Warning)"
                  r"(?: BP\d+)?:? ?)?(?P<msg>.*)$")
_SUMMARY = re.compile(r"Dafny program verifier finished with (\d+) verified, (\d+) errors?"
                      r"(?:, (\d+) time outs?)?(?:, (\d+) out of resource)?")
_STOP = re.compile(r"(\d+) (parse|resolution/type) errors? detected in (\S+)")
_TIMEOUT4 = re.compile(r"Verification of '([^']+)' timed out")
_OOR4 = re.compile(r"Verification out of resource \(([^)]+)\)")
_POSTCONDITION = re.compile(r"postcondition (might not hold|could not be proved)", re.I)


def dialect_for(version: str | None) -> str:
    """``"4"`` for Dafny 4.x and later, ``"2"`` for earlier versions (and when unknown:
    the Debian image's 2.3)."""
    m = re.match(r"(\d+)", version or "")
    return "4" if m and int(m.group(1)) >= 4 else "2"


def boogie_name(method: str) -> str:
    """Boogie's name of a Dafny method's body: ``Impl$$_module.__default.<name>`` with
    every ``_`` doubled (Dafny's name mangling)."""
    return "Impl$$_module.__default." + method.replace("_", "__")


class Dafny:
    """Dafny in a sandbox. ``name = "dafny"``, toolchain ``dafny``."""

    name = NAME
    toolchain = TOOLCHAIN

    def prepare(self, sandbox, probed) -> dict:
        """Nothing to ship: the job files are self-contained."""
        return {}

    def options(self, probed, *, smoke: bool = False, cpus: int = 1, **overrides) -> dict:
        """Options of a job: ``dialect`` (from the probed Dafny version), ``dafny_version``,
        ``time_limit_s``, ``rlimit``, ``strategy`` (``batched``/``separate``),
        ``verifier_module``; the benchmark adds ``units``, ``batch`` and ``separate`` (the
        files). ``smoke``/``cpus``: not used by Dafny (the runner's generic arguments)."""
        version = probed.versions.get("dafny") if probed is not None else None
        opts = {"dialect": dialect_for(version), "dafny_version": version, "time_limit_s": DEFAULT_TIME_LIMIT_S,
                "rlimit": DEFAULT_RLIMIT, "strategy": "batched", "verifier_module": f"{NAME}/{MODULE_VERSION}"}
        opts.update(overrides)
        return opts

    def file_argv(self, options: dict, path: str) -> list[str]:
        """The command verifying one file in the job's dialect."""
        t, r = int(options["time_limit_s"]), int(options["rlimit"])
        if options["dialect"] == "4":
            return ["dafny", "verify", "--allow-warnings", "--verification-time-limit", str(t),
                    "--resource-limit", str(r), path]
        return ["dafny", "/compile:0", "/nologo", f"/timeLimit:{t}", f"/rlimit:{r}", f"/xml:{path}.xml", path]

    def command(self, options: dict) -> tuple[list[str], dict[str, str], list[str]]:
        """``sh -c <script>``: runs the batch file (strategy ``batched``; the check files
        when it does not parse/resolve) or each check file (``separate``), each output in
        ``<file>.out`` with the exit code in ``<file>.rc`` (and ``<file>.xml`` for dialect
        2), then prints the outputs without Z3's option noise. Collects every output."""
        batch, files = options.get("batch"), list(options.get("separate", []))
        lines = ["run() {", '  "$@" > "$F.out" 2>&1; echo $? > "$F.rc"', "}"]

        def one(path: str) -> str:
            return f"F={shlex.quote(path)}; run " + " ".join(shlex.quote(a) for a in self.file_argv(options, path))

        each = [one(f) for f in files]
        if options.get("strategy", "batched") == "batched" and batch:
            lines.append(one(batch))
            lines.append(f"if grep -qE 'parse errors? detected|resolution/type errors? detected' {shlex.quote(batch)}.out; then")
            lines += ["  " + e for e in each] or ["  :"]
            lines.append("fi")
        else:
            lines += each
        shown = ([batch] if batch and options.get("strategy", "batched") == "batched" else []) + files
        for f in shown:
            q = shlex.quote(f)
            lines.append(f"if [ -f {q}.out ]; then echo \"== {f} (exit $(cat {q}.rc))\"; "
                         f"grep -vE \"^Prover error: line [0-9]+ column [0-9]+: unknown parameter 'model_compress'|"
                         f"^Legal parameters are:|^  [a-z_0-9.]+ \\(\" {q}.out; fi")
        collect = []
        for f in shown:
            collect += [f + ".out", f + ".rc"] + ([f + ".xml"] if options["dialect"] == "2" else [])
        return ["sh", "-c", "\n".join(lines)], {}, collect

    # ------------------------------------------------------------------ parsing
    def parse(self, proc: ProcResult, options: dict | None = None) -> VerifierResult:
        """Per-method results of a job (``goal_results``: one entry per method of
        ``options["units"]``: ``{"name", "status", "failure", "messages", "file",
        "time_s"}``; ``status`` one of :data:`STATUSES`, ``failure`` ``postcondition``
        when a failed method's errors are all postcondition violations, else ``other``).

        The job's verdict: ``infra_error`` (the script did not start, or no file produced
        a verifier summary or stop message: a crash), ``invalid`` (no method could be verified: every
        file failed to parse/resolve), ``verified`` (every method verified and no error
        outside them), ``failed`` otherwise. ``extra``: ``{"runs": [{"file", "exit_code",
        "outcome"}], "fallback": bool, "stopped": {file: message}, "outside": [message]}``;
        ``outside``: verification errors (and non-``correct`` outcomes of the ``/xml``
        report) of declarations outside the units, e.g. a helper function whose body does
        not meet its ``ensures``: the whole file is verified, and such an error is never
        dropped (it makes the job ``failed`` even when every unit verified).
        """
        options = options or {}
        units: dict = options.get("units", {})
        batch = options.get("batch")
        results: dict[str, dict] = {}
        runs, stopped, outside = [], {}, []
        order = ([batch] if batch and options.get("strategy", "batched") == "batched" else []) + \
            list(options.get("separate", []))
        fallback = False
        for f in order:
            out = proc.files.get(f + ".out")
            if out is None:
                continue
            if f != batch:
                fallback = fallback or (batch is not None and options.get("strategy", "batched") == "batched")
            text = out.decode("utf-8", "replace")
            rc_raw = proc.files.get(f + ".rc", b"").decode().strip()
            rc = int(rc_raw) if rc_raw.lstrip("-").isdigit() else None
            xml = proc.files.get(f + ".xml")
            per, outcome = parse_file_output(text, units.get(f, []), options.get("dialect", "2"), xml, f,
                                             outside=outside)
            runs.append({"file": f, "exit_code": rc, "outcome": outcome})
            if outcome.startswith("stopped"):
                stopped[f] = outcome
            for name, r in per.items():
                prev = results.get(name)
                # a separate run replaces a batched result only when the batch did not verify the method
                if prev is None or prev["status"] in ("not_run", "invalid", "unknown"):
                    results[name] = dict(r, file=f)
        if not runs:
            return VerifierResult("infra_error", "no verifier output was collected: "
                                  + (proc.stdout + proc.stderr).strip()[-300:])
        if all(r["outcome"] == "crashed" for r in runs):
            return VerifierResult("infra_error", "dafny produced neither a summary nor a parse/resolution message: "
                                  + (proc.stdout + proc.stderr).strip()[-300:])
        names = [n for f in units for n, _a, _b in units[f]]
        names = list(dict.fromkeys(names))
        goal_results = []
        for n in names:
            r = results.get(n, {"status": "not_run", "failure": None, "messages": [], "time_s": None, "file": None})
            goal_results.append({"name": n, **r})
        counts = Counter_(goal_results)
        goals = GoalCounts(proved=counts["verified"], total=len(goal_results), failed=counts["failed"],
                           timeout=counts["timeout"] + counts["out_of_resource"],
                           unknown=counts["unknown"] + counts["not_run"] + counts["invalid"])
        outside = list(dict.fromkeys(outside))
        extra = {"runs": runs, "fallback": fallback, "stopped": stopped, "outside": outside}
        msgs = [m for g in goal_results for m in g["messages"][:1]][:20]
        if counts["invalid"] + counts["not_run"] == len(goal_results):
            first = next(iter(stopped.values()), "no method was verified")
            return VerifierResult("invalid", first, goals=goals, goal_results=goal_results, messages=msgs, extra=extra)
        if outside:
            return VerifierResult("failed", f"{len(outside)} error(s) outside the check methods: {outside[0]}",
                                  goals=goals, goal_results=goal_results, messages=(outside + msgs)[:20], extra=extra)
        if counts["verified"] == len(goal_results):
            return VerifierResult("verified", f"{len(goal_results)} method(s) verified", goals=goals,
                                  goal_results=goal_results, extra=extra)
        summary = ", ".join(f"{counts[s]} {s}" for s in STATUSES if counts[s])
        return VerifierResult("failed", summary, goals=goals, goal_results=goal_results, messages=msgs, extra=extra)


def Counter_(goal_results: list[dict]) -> dict:
    """Number of methods per status (every status of :data:`STATUSES` present)."""
    c = {s: 0 for s in STATUSES}
    for g in goal_results:
        c[g["status"]] += 1
    return c


def parse_file_output(text: str, methods: list, dialect: str, xml: bytes | None, path: str,
                      *, outside: list | None = None) -> tuple[dict, str]:
    """Results of one Dafny run on one file.

    Args:
        text: the run's combined output; methods: ``[[name, first line, last line], ...]``
        of the file; dialect: ``"2"`` or ``"4"``; xml: the ``/xml`` report (dialect 2) or
        None; path: the file name as given to Dafny (errors of other files are ignored);
        outside: when given, receives ``"<file>(<line>): <message>"`` for every error
        outside the methods' line ranges and every procedure of the ``/xml`` report that
        is not one of the methods and whose outcome is not ``correct`` (completed runs
        only: a stopped run's errors make its methods ``invalid``).

    Returns:
        ``({method: {"status", "failure", "messages", "time_s"}}, outcome)`` where
        ``outcome`` is ``completed``, ``stopped: <message>`` (parse/resolution errors: the
        methods with an error in their range are ``invalid``, the others ``not_run``) or
        ``crashed`` (no summary line: every method ``unknown``).
    """
    base = path.rsplit("/", 1)[-1]
    errors = []  # (line, kind, message)
    for raw in text.splitlines():
        m = _ERR.match(raw.strip())
        if m and m.group("file").rsplit("/", 1)[-1] == base:
            msg = m.group("msg").strip()
            kind = m.group("kind") or ("Error" if re.search(r"timed out|Timed out on", msg) else "Info")
            errors.append((int(m.group("line")), kind, msg))
    per = {n: {"status": "verified", "failure": None, "messages": [], "time_s": None} for n, _a, _b in methods}

    def owner(line: int) -> str | None:
        for n, a, b in methods:
            if a <= line <= b:
                return n
        return None

    stop = _STOP.search(text)
    if stop:
        for n in per:
            per[n]["status"] = "not_run"
        for line, kind, msg in errors:
            n = owner(line)
            if n and kind == "Error":
                per[n]["status"] = "invalid"
                per[n]["messages"].append(f"{base}({line}): {msg}")
        return per, f"stopped: {stop.group(0)}" + (f" (first: line {errors[0][0]}: {errors[0][2]})" if errors else "")
    summary = _SUMMARY.search(text)
    if not summary:
        for n in per:
            per[n]["status"] = "unknown"
        return per, "crashed"
    # errors by location (Related locations point into the same method's clauses)
    for line, kind, msg in errors:
        n = owner(line)
        if n is None and kind == "Error" and outside is not None:
            outside.append(f"{base}({line}): {msg}")
        if n is None or kind != "Error":
            continue
        r = per[n]
        t4, o4 = _TIMEOUT4.search(msg), _OOR4.search(msg)
        if t4 or "timed out" in msg or msg.startswith("Timed out on"):
            r["status"] = "timeout"
        elif o4:
            r["status"] = "out_of_resource"
        elif r["status"] not in ("timeout", "out_of_resource"):
            r["status"] = "failed"
            kind_ = "postcondition" if _POSTCONDITION.search(msg) else "other"
            r["failure"] = kind_ if r["failure"] in (None, kind_) else "other"
        r["messages"].append(f"{base}({line}): {msg}")
    if dialect == "4":
        for m in _TIMEOUT4.finditer(text):
            if m.group(1) in per:
                per[m.group(1)]["status"] = "timeout"
        for m in _OOR4.finditer(text):
            if m.group(1) in per:
                per[m.group(1)]["status"] = "out_of_resource"
    if xml is not None:
        _apply_xml(per, xml, outside, base)
    return per, "completed"


def _apply_xml(per: dict, xml: bytes, outside: list | None = None, base: str = "") -> None:
    """Dialect 2: fold the per-procedure outcomes of Boogie's ``/xml`` report into the
    results (timeouts, resource outs, durations; an ``errors`` outcome without an error
    message in the text is the resource-limit case, see the module docstring). A
    procedure that is none of the methods (a helper's well-formedness or body) with an
    outcome other than ``correct`` is appended to ``outside``."""
    try:
        root = ET.fromstring(xml.decode("utf-8-sig", "replace"))
    except ET.ParseError:
        return
    by_boogie = {}
    for n in per:
        suffix = n.replace("_", "__")
        by_boogie["Impl$$_module.__default." + suffix] = n
        by_boogie["CheckWellformed$$_module.__default." + suffix] = n
    seen = set()
    for m in root.iter("method"):
        n = by_boogie.get(m.get("name", ""))
        if n is None:
            concl = m.find("conclusion")
            oc = concl.get("outcome", "").replace(" ", "").lower() if concl is not None else "none"
            if oc != "correct" and outside is not None:
                outside.append(f"{base}: procedure {m.get('name', '?')}: outcome {oc or 'none'}")
            continue
        seen.add(n)
        concl = m.find("conclusion")
        if concl is None:
            per[n]["status"] = "unknown"
            continue
        outcome = concl.get("outcome", "").replace(" ", "").lower()  # Boogie 2.3 writes "timedout"
        dur = concl.get("duration")
        if dur is not None:
            per[n]["time_s"] = round((per[n]["time_s"] or 0.0) + float(dur), 3)
        r = per[n]
        if outcome == "timedout":
            r["status"] = "timeout"
        elif outcome == "outofresource":
            r["status"] = "out_of_resource"
        elif outcome == "outofmemory":
            r["status"] = "unknown"
            r["messages"].append("prover out of memory")
        elif outcome == "inconclusive":
            r["status"] = "unknown" if r["status"] == "verified" else r["status"]
        elif outcome == "errors" and r["status"] == "verified":
            has_error = m.find("error") is not None
            r["status"] = "failed" if has_error else "out_of_resource"
            if not has_error:
                r["messages"].append("the prover stopped without an answer (resource limit exceeded)")
        elif outcome not in ("correct", "errors"):  # fail closed on an outcome this parser does not know
            r["status"] = "unknown"
            r["messages"].append(f"unknown verifier outcome {concl.get('outcome')!r}")
    for n in per:
        if n not in seen and per[n]["status"] == "verified":
            per[n]["status"] = "unknown"
            per[n]["messages"].append("no outcome for this method in the verifier's XML report")
