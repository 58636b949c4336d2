"""The :class:`Dafny` verifier: the dialect from the probed version, a job's options and
command line (batched or separate files), and the per-method verdict
(:meth:`Dafny.parse`)."""

from __future__ import annotations

import re
import shlex

from ...model import GoalCounts, ProcResult, Verifier, VerifierResult
from .output import STATUSES, Counter_, parse_file_output
from .program import merged_view

NAME = "dafny"
TOOLCHAIN = "dafny"
#: Version of this module's command lines and parser (part of every job key).
MODULE_VERSION = "4"
DEFAULT_TIME_LIMIT_S = 30
#: Z3 resource limit per procedure (Dafny 2.3 ``/rlimit``), a deterministic budget next to
#: the time limit. Checked on the MBPP-DFY data: no correctness check reaches it.
DEFAULT_RLIMIT = 20_000_000


def dialect_for(version: str | None) -> str:
    """``"4"`` for Dafny 4.x and later, ``"2"`` for earlier versions (and when unknown:
    the Debian image's 2.3)."""
    m = re.match(r"(\d+)", version or "")
    return "4" if m and int(m.group(1)) >= 4 else "2"


def boogie_name(method: str) -> str:
    """Boogie's name of a Dafny method's body: ``Impl$$_module.__default.<name>`` with
    every ``_`` doubled (Dafny's name mangling)."""
    return "Impl$$_module.__default." + method.replace("_", "__")


class Dafny(Verifier):
    """Dafny in a sandbox. ``name = "dafny"``, toolchain ``dafny``."""

    name = NAME
    toolchain = TOOLCHAIN
    version = MODULE_VERSION

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
        when it does not resolve, not when it does not parse: the candidate's text is in
        every file alike) or each check file (``separate``), each output in ``<file>.out``
        with the exit code in ``<file>.rc`` (and ``<file>.xml`` for dialect 2), then
        prints the outputs without Z3's option noise. Collects every output."""
        batch, files = options.get("batch"), list(options.get("separate", []))
        lines = ["run() {", '  "$@" > "$F.out" 2>&1; echo $? > "$F.rc"', "}"]

        def one(path: str) -> str:
            return f"F={shlex.quote(path)}; run " + " ".join(shlex.quote(a) for a in self.file_argv(options, path))

        each = [one(f) for f in files]
        if options.get("strategy", "batched") == "batched" and batch:
            lines.append(one(batch))
            lines.append(f"if grep -qE 'resolution/type errors? detected' {shlex.quote(batch)}.out; then")
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
