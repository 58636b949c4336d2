"""Dafny verifier (``dafny``), two command-line dialects, results per method.

Dialects (chosen from the probed version, or forced with ``options(dialect=...)``):

- ``"2"``: the legacy Boogie-style command line of Dafny 2.x/3.x, the Debian ``dafny``
  package 2.3.0 of the ``dafny`` toolchain image (runs here)::

      dafny /compile:0 /nologo /timeLimit:<s> /rlimit:<n> /xml:<file>.xml [/dprint:<file>.dprint] <file>.dfy

  ``/dprint`` (option ``print_program``, on for dialect 2): Dafny prints the program as it
  parsed it, in the same process; :func:`program_view` reads it into declarations and
  :meth:`Dafny.parse` keeps the view of every completed file in ``extra["view"]``, so a
  benchmark judges what the candidate contains on Dafny's own reading (issue 26).

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
MODULE_VERSION = "3"
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
                "rlimit": DEFAULT_RLIMIT, "strategy": "batched", "verifier_module": f"{NAME}/{MODULE_VERSION}",
                "print_program": dialect_for(version) == "2"}
        opts.update(overrides)
        return opts

    def file_argv(self, options: dict, path: str) -> list[str]:
        """The command verifying one file in the job's dialect."""
        t, r = int(options["time_limit_s"]), int(options["rlimit"])
        if options["dialect"] == "4":
            return ["dafny", "verify", "--allow-warnings", "--verification-time-limit", str(t),
                    "--resource-limit", str(r), path]
        printed = [f"/dprint:{path}.dprint"] if options.get("print_program") else []
        return ["dafny", "/compile:0", "/nologo", f"/timeLimit:{t}", f"/rlimit:{r}", f"/xml:{path}.xml", *printed, path]

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
        if options.get("print_program") and options["dialect"] == "2":
            collect += [f + ".dprint" for f in shown]
        return ["sh", "-c", "\n".join(lines)], {}, collect

    # ------------------------------------------------------------------ parsing
    def parse(self, proc: ProcResult, options: dict | None = None) -> VerifierResult:
        """Per-method results of a job (``goal_results``: one entry per method of
        ``options["units"]``: ``{"name", "status", "failure", "messages", "file",
        "time_s"}``; ``status`` one of :data:`STATUSES`, ``failure`` ``postcondition``
        when a failed method's errors are all postcondition violations, else ``other``).

        The job's verdict: ``infra_error`` only when no output file was collected at all
        (the script's redirections did not run: the kit's side; ``extra["kit_side"]``),
        ``failed`` with ``extra["crashed"]`` when Dafny ran on the candidate's files and no
        file produced a summary or stop message (a crash is the candidate's), ``invalid`` (no method could be verified: every
        file failed to parse/resolve), ``verified`` (every method verified and no error
        outside them), ``failed`` otherwise. ``extra``: ``{"runs": [{"file", "exit_code",
        "outcome"}], "fallback": bool, "stopped": {file: message}, "outside": [message]}``;
        ``outside``: verification errors (and non-``correct`` outcomes of the ``/xml``
        report) of declarations outside the units, e.g. a helper function whose body does
        not meet its ``ensures``: the whole file is verified, and such an error is never
        dropped (it makes the job ``failed`` even when every unit verified); ``view``
        (option ``print_program``): :func:`merged_view` of the ``/dprint`` printouts.
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
            # the script's redirections create every <file>.out before Dafny starts: none at all
            # means the script itself did not run (the kit's side)
            return VerifierResult("infra_error", "no verifier output was collected: "
                                  + (proc.stdout + proc.stderr).strip()[-300:], extra={"kit_side": True})
        view = merged_view(proc, runs, units) if options.get("print_program") else None
        if all(r["outcome"] == "crashed" for r in runs):
            # the script ran and Dafny was started on the candidate's files: a crash is the candidate's
            tail = "; ".join(proc.files.get(r["file"] + ".out", b"").decode("utf-8", "replace").strip()[-200:]
                             for r in runs[:2])
            return VerifierResult("failed", "dafny crashed on the candidate's input (neither a summary nor a "
                                  f"parse/resolution message; exit {runs[0]['exit_code']}): " + tail,
                                  extra={"runs": runs, "crashed": True, "view": view})
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
        if options.get("print_program"):
            extra["view"] = view
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


# ------------------------------------------------------------------ Dafny's printed program
#: Reserved words of Dafny 2.3 (the scanner's keywords, Dafny.atg of 2.3.0, and the
#: built-in type names): in :func:`program_view` a token that is one of these is a
#: keyword, never a user name. A judge compares them with an allow-list.
KEYWORDS = frozenset("""
abstract allocated array as assert assume bool break by calc case char class codatatype colemma const constructor
copredicate datatype decreases default else ensures exists export expect extends false forall free fresh function
ghost if imap import in include inductive int invariant iset iterator label lemma map match method modifies modify
module multiset nat new newtype null object object? old opened ORDINAL predicate print protected provides reads real
refines requires return returns reveal reveals seq set static string then this trait true twostate type unchanged
var where while witness yield yields
""".split())
#: Modifiers and keywords that may open a top-level declaration in Dafny 2.3.
DECL_WORDS = frozenset("""abstract ghost static protected inductive twostate copredicate colemma function predicate
method lemma class trait datatype codatatype newtype type module import const var iterator export include""".split())
_CLAUSES = ("requires", "ensures", "reads", "modifies", "decreases")
_TOKEN = re.compile(r"""
 (?P<ws>\s+)
|(?P<comment>//[^\n]*|/\*(?:[^*]|\*(?!/))*\*/)
|(?P<vstring>@"(?:""|[^"])*")
|(?P<string>"(?:\\.|[^"\\\n])*")
|(?P<char>'(?:\\u[0-9A-Fa-f]{4}|\\.|[^'\\\n])')
|(?P<number>0x[0-9A-Fa-f_]+|\d[\d_]*(?:\.\d[\d_]*)?)
|(?P<ident>[A-Za-z_?\\][\w'?]*)
|(?P<punct>:=|:\||::|==>|<==>|<==|==|!=|<=|>=|&&|\|\||!!|\.\.|->|-->|~>|=>|<-|[^\s\w])
""", re.X)


def printed_tokens(text: str) -> list[tuple[str, str, int, int]]:
    """Tokens of Dafny's printed program (``/dprint``): ``[(kind, text, line, column)]``
    (1-based), ``kind`` one of ``ident``, ``number``, ``string``, ``vstring`` (verbatim),
    ``char``, ``punct``; comments (the printer's own, e.g. ``/*special witness*/``) and
    whitespace dropped. The printed program has no comment of the candidate (Dafny's
    parser drops them), so only literals need care; a character no rule matches becomes a
    ``punct`` token of its own."""
    out, pos, line, col0 = [], 0, 1, 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        kind = m.lastgroup
        val = m.group(kind)
        if kind not in ("ws", "comment"):
            out.append((kind, val, line, pos - col0 + 1))
        nl = val.count("\n")
        if nl:
            line += nl
            col0 = pos + val.rfind("\n") + 1
        pos = m.end()
    return out


def program_view(text: str) -> dict:
    """The declarations of a program as Dafny 2.3 printed it after parsing (``/dprint``),
    for a judge that must not rely on its own parse of the candidate's text.

    The printer writes a header of ``//`` lines (``// Dafny 2.3.0.10506``, the command
    line, the file names; observed: some runs also print the ``_System`` module and ``/* CALL
    GRAPH for module _module: */`` before the declarations), then every top-level
    declaration starting in column 1, its clauses indented by two spaces, its body between
    a ``{`` and a ``}`` in column 1 (recorded: tests/test_dafny_integrity.py).

    Returns ``{"decls": [...], "unclassified": [str], "error": str | None}``; each decl is
    ``{"kind", "name", "line", "attributes" (of the header), "clauses": {kind: count},
    "requires_false": bool, "body": bool, "assume": n (anywhere), "attributes_all": {name:
    count} (anywhere), "keywords": {word: count} (header/clauses), "body_keywords": {word:
    count}, "puncts": [distinct operators], "types": [distinct ``bvN``/``arrayN`` names],
    "verbatim_multiline": bool}``. ``unclassified``: column-1 text that is neither a
    declaration start nor a body brace (judges fail closed on it). ``error``: the text is
    not a printed program of this form."""
    lines = text.split("\n")
    if not lines[0].startswith("// Dafny "):
        return {"decls": [], "unclassified": [], "error": "does not start with '// Dafny <version>'"}
    start = next((i for i, ln in enumerate(lines) if ln.startswith("/* CALL GRAPH for module _module:")), None)
    if start is not None:  # the resolved form (printed with the _System module and call graphs)
        end = next((i for i in range(start, len(lines)) if lines[i].strip() == "*/"), None)
        if end is None:
            return {"decls": [], "unclassified": [], "error": "unterminated call-graph comment"}
    else:  # the parsed form: a header of // lines (version, command line, file names)
        end = 0
        while end + 1 < len(lines) and lines[end + 1].startswith("//"):
            end += 1
    body_text = "\n".join(lines[end + 1:])
    toks = [(k, v, ln + end + 1, c) for k, v, ln, c in printed_tokens(body_text)]
    decls: list[dict] = []
    unclassified: list[str] = []
    cur = None
    region = "header"
    depth = 0
    for i, (kind, val, ln, col) in enumerate(toks):
        if col == 1 and depth == 0:
            if val == "{" and cur is not None and region != "body":
                cur["body"] = True
                region = "body"
                depth = 1
                continue
            if kind == "ident" and val in DECL_WORDS:
                cur = {"kind": None, "name": None, "line": ln, "attributes": [], "clauses": {}, "requires_false": False,
                       "body": False, "assume": 0, "attributes_all": {}, "keywords": {}, "body_keywords": {},
                       "puncts": set(), "types": set(), "verbatim_multiline": False, "_clause": []}
                cur["kind"], cur["attributes"], cur["name"] = _decl_head(toks, i)
                decls.append(cur)
                region = "header"
            elif val == "}" and region == "body":
                region = "after"
                continue
            else:
                unclassified.append(f"line {ln}: {val}")
                cur = None
                continue
        if cur is None:
            continue
        if region == "body":
            if val == "{":
                depth += 1
            elif val == "}":
                depth -= 1
                if depth == 0:
                    region = "after"
                    continue
        if region == "after":
            unclassified.append(f"line {ln}: {val} after the body of {cur['name']}")
            continue
        if region != "body" and col == 3 and kind == "ident" and val in _CLAUSES:
            _close_clause(cur)
            region = "clause"
            cur["clauses"][val] = cur["clauses"].get(val, 0) + 1
            cur["_clause"] = [val]
        elif region == "clause":
            cur["_clause"].append(val)
        if val == ":" and i and toks[i - 1][1] == "{" and i + 1 < len(toks):
            name = toks[i + 1][1]
            cur["attributes_all"][name] = cur["attributes_all"].get(name, 0) + 1
        if kind == "ident" and val == "assume":
            cur["assume"] += 1
        if kind == "ident" and val in KEYWORDS:
            key = "body_keywords" if region == "body" else "keywords"
            cur[key][val] = cur[key].get(val, 0) + 1
        if kind == "punct":
            cur["puncts"].add(val)
        if kind == "ident" and re.fullmatch(r"(bv|array)\d+\??", val):
            cur["types"].add(val)
        if kind == "vstring" and "\n" in val:
            cur["verbatim_multiline"] = True
    for d in decls:
        _close_clause(d)
        d.pop("_clause", None)
        d["puncts"] = sorted(d["puncts"])
        d["types"] = sorted(d["types"])
        if d["name"] is None:
            unclassified.append(f"line {d['line']}: a declaration without a name")
    return {"decls": decls, "unclassified": unclassified, "error": None}


def _decl_head(toks: list, i: int) -> tuple[str | None, list[str], str | None]:
    """``(kind, header attributes, name)`` of the declaration starting at token ``i``:
    the declaration words, then attributes ``{:name ...}`` (skipped by brace matching),
    then the name (None when the next token is not a name)."""
    words, attrs = [], []
    j = i
    while j < len(toks):
        kind, val = toks[j][0], toks[j][1]
        if kind == "ident" and val in DECL_WORDS and not attrs:
            words.append(val)
            j += 1
        elif val == "{" and j + 1 < len(toks) and toks[j + 1][1] == ":":
            attrs.append(toks[j + 2][1] if j + 2 < len(toks) else "")
            depth, j = 1, j + 1
            while j < len(toks) and depth:
                depth += {"{": 1, "}": -1}.get(toks[j][1], 0)
                j += 1
        elif kind == "ident" and val not in KEYWORDS:
            return " ".join(words), attrs, val
        else:
            return " ".join(words), attrs, None
    return " ".join(words), attrs, None


def _close_clause(d: dict) -> None:
    words = [w for w in d.get("_clause", []) if w not in ("(", ")")]
    if words == ["requires", "false"]:
        d["requires_false"] = True
    if words[:1] == ["decreases"] and "*" in words:
        d["decreases_star"] = True
    d["_clause"] = []


def merged_view(proc: ProcResult, runs: list[dict], units: dict) -> dict:
    """Dafny's printed programs (``<file>.dprint``) of every file whose run completed
    (parsed, resolved and verified: what the verdict rests on), merged: ``{"decls",
    "unclassified", "errors", "missing", "files"}``. ``decls``: every declaration of the
    first completed file, and of the others those not already present with the same shape
    (the check files of the fallback share their helpers); ``missing``: completed files
    without a printout; ``errors``: a printout that is not one, or that lacks a method of
    the file's ``units``."""
    import json

    decls, unclassified, errors, missing, files, seen = [], [], [], [], [], set()
    for r in runs:
        if r["outcome"] != "completed":
            continue
        f = r["file"]
        raw = proc.files.get(f + ".dprint")
        if raw is None:
            missing.append(f)
            continue
        v = program_view(raw.decode("utf-8", "replace"))
        files.append(f)
        if v["error"]:
            errors.append(f"{f}: {v['error']}")
        unclassified += [f"{f}: {u}" for u in v["unclassified"]]
        names = {d["name"] for d in v["decls"]}
        lost = [n for n, _a, _b in units.get(f, []) if n not in names]
        if lost:
            errors.append(f"{f}: Dafny's printed program lacks the method(s) {', '.join(lost[:5])}")
        for d in v["decls"]:
            key = json.dumps({k: x for k, x in d.items() if k != "line"}, sort_keys=True)
            if key not in seen:
                seen.add(key)
                decls.append(d)
    return {"decls": decls, "unclassified": unclassified, "errors": errors, "missing": missing, "files": files}
