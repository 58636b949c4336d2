"""Frama-C WP (+ RTE) verifier module.

Command line (the CASP paper, Hertzberg et al., arXiv:2508.18798, section "Verifying and Curating
CASP source files": Frama-C 30.0 WP + RTE, provers Z3 4.8.12, Alt-Ergo 2.6.0, CVC4 1.8,
500000 steps and 60 s per goal)::

    frama-c -wp -wp-rte -wp-prover alt-ergo,z3,cvc4 -wp-steps 500000 -wp-timeout 60
            -wp-par <cpus> -wp-cache none -wp-report-json wp-report.json
            [-wp-smoke-tests] FILE.c

with ``WHY3CONFIG`` pointing at a ``why3.conf`` produced by ``why3 config detect`` in the
same sandbox (:meth:`FramaC.prepare`). The command runs through the job driver
``drivers/framac_job.sh`` with ``-load-module drivers/framac_view.ml`` (compiled once per
run, :data:`PREPARED`): from the same parse that WP verifies, Frama-C writes its own view
of the file (functions, types, contracts, bodies, calls, loops, user and global
annotations) to ``view.json``; when the benchmark ships them, the driver also preprocesses
the candidate's own text (``region.c``), writes the view of the task's fixed part
(``task.c``) and runs the side WP runs (``havoc.c``, ``sound.c``, ``requires.c``).
:meth:`FramaC.parse` hands these to the benchmark's judge in ``VerifierResult.artifacts``.
Provers the sandbox lacks are left out of ``-wp-prover``; the omission is recorded.

Output parsing (:mod:`.output`) understands both log dialects:

- Frama-C 25 (Debian bookworm): one line per goal,
  ``[wp] [Z3 4.8.12] Goal typed_f_ensures : Valid (20ms)``, failures as
  ``[wp] [Failed] Goal typed_g_ensures`` followed by indented prover lines, smoke tests as
  ``[wp] [Passed|Failed] Smoke-test NAME``.
- Frama-C >= 26 (e.g. 30.0 as in the CASP study logs): only unproved goals are listed,
  ``[wp] [Timeout] typed_f_assert_rte_mem_access (Qed 35ms) (Alt-Ergo)``, and the summary
  counts ``Terminating`` and ``Unreachable`` goals that 25.0 does not generate.

Both end with ``[wp] Proved goals: P / T``, which is the tool's own count and is taken as
the authority; the JSON report (``-wp-report-json``) gives per-property counts and is used
to split off the smoke tests.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
from pathlib import Path

from ...model import Limits, ProcResult, Verifier, VerifierResult
from .output import error_messages, parse_goals

NAME = "framac"
TOOLCHAIN = "framac"
SOURCE = "candidate.c"
REPORT = "wp-report.json"
#: Version of this module's command line and parser; part of every job key, so results
#: cached under an older reading of the output are never reused. Bump on any change.
MODULE_VERSION = "6"  # "3": the gate; "4"-"6": smoke tests only where they decide; "5": unnamed ones not goals
WHY3CONF = "why3.conf"
#: Job file names of the driver and of Frama-C's view script, and their package sources.
DRIVER = "verikit_framac_job.sh"
VIEW_SCRIPT = "verikit_framac_view.ml"
_DRIVERS = Path(__file__).resolve().parent.parent / "drivers"
#: The execution cross-check's driver (run by the job driver when the job ships
#: ``vk_exec.conf``, see harness/benchmarks/casp/execution.py) and its log.
EXEC_DRIVER, EXEC_LOG = "verikit_exec_check.sh", "vk_exec.log"
_SHIPPED = {DRIVER: _DRIVERS / "framac_job.sh", VIEW_SCRIPT: _DRIVERS / "framac_view.ml",
            "verikit_framac_wp_cpus.ml": _DRIVERS / "framac_wp_cpus.ml",
            EXEC_DRIVER: _DRIVERS / "exec_check.sh"}
#: Built once per run by the driver's ``--prepare`` in the sandbox (:meth:`FramaC.prepare`),
#: from the shipped files and the toolchain alone: the view script compiled for this
#: Frama-C (otherwise every Frama-C start compiles it again, about half a second),
#: E-ACSL's runtime object (otherwise every execution cross-check compiles it),
#: Frama-C's share and library paths (otherwise each step that needs them starts Frama-C)
#: and the module that gives the verification's WP the job's CPUs once the side steps
#: beside it have ended (otherwise it keeps the job's ``-wp-par``).
PREPARED = ("verikit_framac_view.cmxs", "vk_rtl.o", "verikit_framac_paths", "verikit_framac_wp_cpus.cmxs")
#: Files the driver may write: Frama-C's views, the preprocessed candidate text, the
#: do-nothing-body WP log.
VIEW, TASK_VIEW, HAVOC_LOG = "view.json", "task-view.json", "havoc.log"
#: The driver's preprocessor outputs of the candidate's own text (see the driver).
REGION_PP = {"comments": "region.i", "no_comments": "region-nc.i", "tokens": "region-tok.i"}
REGION_ERR = "region.err"
#: The compiler's diagnostics on the verified file (gcc -fsyntax-only, see the driver).
COMPILER_LOG = "compiler.log"
#: Written by the driver in gate mode only (:meth:`FramaC.gate`): its output is the view's.
GATE_MARK = "vk-gate"
#: The task-soundness smoke-test run (``sound.c``) and the requires-implication
#: run (``requires.c``, spec-from-code) of the driver, and their WP logs.
SOUND_LOG, REQUIRES_LOG, SOUND_REPORT = "sound.log", "requires.log", "sound-report.json"
#: WP properties the soundness run leaves out: it is there for its smoke tests only
#: (requires, assumes, calls); the assigns goals it keeps are Qed's, in milliseconds.
SOUND_PROPS = ("-wp-prop=-@ensures,-@invariant,-@assert,-@variant,-@requires,-@check,-@lemma,"
               "-@exits,-@breaks,-@continues,-@returns")
#: WP options of the do-nothing-body (vacuity) run: seconds per goal. A trivially true
#: ensures is proved by Qed or a prover in milliseconds; the short limit bounds the cost
#: of the many that are not.
HAVOC_TIMEOUT_S = 2

#: WP's smoke tests of unreachable code (statements, loops, calls, local initialisations),
#: left out of a verification by :meth:`FramaC.command_after_gate` when they cannot decide
#: its verdict (:func:`dead_code_tests_needed`). The smoke tests of requires and of
#: behaviours' assumes always run.
DEAD_CODE_TESTS_OFF = ("-wp-no-smoke-dead-code", "-wp-no-smoke-dead-loop", "-wp-no-smoke-dead-call",
                       "-wp-no-smoke-dead-local-init")

#: WP options of the CASP paper (steps per goal, seconds per goal, provers in pin order).
PAPER_OPTIONS = {"wp_steps": 500000, "wp_timeout_s": 60, "provers": ["alt-ergo", "z3", "cvc4"], "rte": True}

_LOCATED = re.compile(r"(?:^|\s)(\S+\.c):(\d+):")


def parse_version(raw: str | None) -> tuple[int, int]:
    """``"25.0-beta (Manganese)"`` -> ``(25, 0)``; unknown -> ``(0, 0)``."""
    m = re.match(r"\s*(\d+)\.(\d+)", raw or "")
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


class FramaC(Verifier):
    """Frama-C WP verifier. ``name = "framac"``, toolchain ``framac``."""

    name = NAME
    toolchain = TOOLCHAIN
    version = MODULE_VERSION
    all_goals = True  # verified: every WP goal proved (the judge requires it)

    def prepare(self, sandbox, probed) -> dict[str, bytes]:
        """Detect the provers in ``sandbox`` once per run.

        Runs the driver's ``--prepare`` step and ``why3 config detect`` with
        ``WHY3CONFIG=why3.conf`` inside the sandbox.

        Returns:
            The files to ship with every job: the driver and the view script, what the
            driver's ``--prepare`` built (:data:`PREPARED`: the view script compiled for
            this Frama-C, E-ACSL's runtime object, Frama-C's paths; each absent when it
            did not build, and the jobs then build, load from source or ask Frama-C as
            before), and ``why3.conf`` (absent
            when why3 is missing: Frama-C then proves with Qed only and the drift is
            recorded).
        """
        shipped = {name: path.read_bytes() for name, path in _SHIPPED.items()}
        built = sandbox.run(["sh", DRIVER, "--prepare"], files=shipped, collect=list(PREPARED),
                            limits=Limits(wall_s=300)).files
        shipped.update({name: built[name] for name in PREPARED if built.get(name)})
        if probed.versions.get("why3") is None:
            return shipped
        res = sandbox.run(["why3", "config", "detect"], env={"WHY3CONFIG": WHY3CONF},
                          collect=[WHY3CONF], limits=Limits(wall_s=120))
        return {**shipped, WHY3CONF: res.files[WHY3CONF]} if WHY3CONF in res.files else shipped

    def options(self, probed, *, smoke: bool = False, cpus: int = 1, **overrides) -> dict:
        """The WP options for a job: paper options, provers present in ``probed``.

        Returns:
            dict with ``wp_steps``, ``wp_timeout_s``, ``provers`` (present ones, pin order),
            ``provers_missing``, ``rte``, ``smoke_tests``, ``wp_par``, ``framac_version``,
            ``verifier_module`` (this module's version), ``driver_sha256`` (the driver and
            view script), so the job key changes with any of them.
        """
        opts = dict(PAPER_OPTIONS, **overrides)
        versions = probed.versions
        opts["provers_missing"] = [p for p in opts["provers"] if versions.get(p) is None]
        opts["provers"] = [p for p in opts["provers"] if versions.get(p) is not None]
        opts["smoke_tests"] = smoke
        opts["wp_par"] = cpus
        opts["framac_version"] = versions.get("frama-c")
        opts["verifier_module"] = f"{NAME}/{MODULE_VERSION}"
        opts["driver_sha256"] = hashlib.sha256(b"".join(p.read_bytes() for p in _SHIPPED.values())).hexdigest()
        return opts

    def command(self, options: dict) -> tuple[list[str], dict[str, str], list[str]]:
        """Build the command for ``candidate.c`` in the job's scratch directory: the
        driver, then Frama-C's arguments.

        Returns:
            (argv, env, files to collect). ``env`` carries ``WHY3CONFIG`` and the
            do-nothing-body run's arguments (``VERIKIT_HAVOC_ARGS``: WP on ``@ensures``
            only, of ``options["function"]`` when given, the same provers,
            :data:`HAVOC_TIMEOUT_S` per goal, no RTE).
        """
        argv = ["sh", DRIVER, "-wp"]
        if options.get("rte", True):
            argv.append("-wp-rte")
        argv += _prover_args(options, options["wp_timeout_s"]) + ["-wp-report-json", REPORT]
        if options.get("smoke_tests"):
            argv.append("-wp-smoke-tests")
        argv.append(SOURCE)
        havoc = ["-wp", "-wp-prop=@ensures", *_prover_args(options, HAVOC_TIMEOUT_S)]
        if options.get("function"):
            havoc += ["-wp-fct", options["function"]]
        env = {"WHY3CONFIG": WHY3CONF, "VERIKIT_HAVOC_ARGS": shlex.join(havoc)}
        # soundness smoke tests (requires, assumes, calls; no dead-code/loop tests:
        # a defensive branch is not a task's inconsistency) and the requires implication,
        # each HAVOC_TIMEOUT_S per goal
        env["VERIKIT_SOUND_ARGS"] = shlex.join(["-wp", "-wp-smoke-tests", "-wp-no-smoke-dead-code", "-wp-no-smoke-dead-loop",
                                                "-wp-report-json", SOUND_REPORT,
                                                "-wp-smoke-timeout", str(HAVOC_TIMEOUT_S), SOUND_PROPS,
                                                *_prover_args(dict(options, provers=_sound_provers(options)),
                                                              HAVOC_TIMEOUT_S)])
        env["VERIKIT_REQUIRES_ARGS"] = shlex.join(["-wp", "-wp-prop=@requires", "-wp-fct", "vk_requires_probe",
                                                   *_prover_args(options, HAVOC_TIMEOUT_S)])
        return argv, env, [REPORT, VIEW, TASK_VIEW, *REGION_PP.values(), REGION_ERR, COMPILER_LOG, HAVOC_LOG, EXEC_LOG,
                                  SOUND_LOG, REQUIRES_LOG, SOUND_REPORT]

    def task_command(self, options: dict) -> tuple[list[str], dict[str, str], list[str]]:
        """The command of a task run (``Job.task_run``, one per file: CASP's soundness run on
        ``sound.c``, the view of the task's fixed part ``task.c``): the driver with only what
        it reads there (``WHY3CONFIG``, ``VERIKIT_SOUND_ARGS``) and those runs' outputs, so
        that the jobs of a task in every mode (gold's options differ from a candidate
        mode's) share one soundness run."""
        _, env, _ = self.command(options)
        return (["sh", DRIVER], {k: env[k] for k in ("WHY3CONFIG", "VERIKIT_SOUND_ARGS")},
                [SOUND_LOG, SOUND_REPORT, TASK_VIEW])

    def gate(self, options: dict) -> tuple[list[str], dict[str, str], list[str]] | None:
        """The executor's first run of a candidate when ``options["gate"]`` is set (CASP's
        candidate modes): the driver in gate mode (``VERIKIT_GATE=1``) writes the
        preprocessed candidate text, Frama-C's view of the verified file from a parse only
        and the requires probe of ``requires.c`` when shipped; no WP on the verified file,
        nothing of the candidate executed (about a second). The benchmark's judge reads it
        (with the task run's files): ``rejected`` is final, and so is ``invalid``: the
        view's parse is the verification's (the same files, view script and kernel
        options; a parse that fails with few plug-ins is made again with every plug-in,
        as the verification loads, and only that run counts), so an input it rejects the
        verification rejects too. Else the verification runs.

        Returns:
            ``(argv, env, collect)``, or None when the options ask for no gate.
        """
        if not options.get("gate"):
            return None
        argv, env, _ = self.command(options)
        return argv, {**env, "VERIKIT_GATE": "1"}, [VIEW, TASK_VIEW, *REGION_PP.values(), REGION_ERR, COMPILER_LOG,
                                                    REQUIRES_LOG, GATE_MARK]

    def command_after_gate(self, options: dict, gate_files: dict[str, bytes]) -> tuple[list[str], dict[str, str], list[str]]:
        """The verification's command after a gate that did not decide: :meth:`command`,
        with WP's smoke tests left out where the gate's files (its view, its requires probe,
        the task's soundness run) show that they cannot decide the verdict: those of
        unreachable code (:data:`DEAD_CODE_TESTS_OFF`, :func:`dead_code_tests_needed`) and,
        when those are out, all of them (:func:`contract_tests_needed`, for the target
        ``options["function"]``).

        Each passing smoke test waits out its prover limits (Z3's 500,000 steps, about 5 s
        here): they were most of a verified candidate's cost over the paper's command.
        """
        argv, env, collect = self.command(options)
        if "-wp-smoke-tests" not in argv or dead_code_tests_needed(gate_files, options.get("function")) is not None:
            return argv, env, collect
        at = argv.index("-wp-smoke-tests")
        if contract_tests_needed(gate_files, options.get("function")) is None:
            return argv[:at] + argv[at + 1:], env, collect
        return argv[:at + 1] + list(DEAD_CODE_TESTS_OFF) + argv[at + 1:], env, collect

    def carry_from_gate(self, options: dict, gate_files: dict[str, bytes]) -> dict[str, bytes]:
        """The gate's requires probe log (:data:`REQUIRES_LOG`), when it made one: the
        verification's driver then does not run the probe again (the same ``requires.c``,
        the same ``VERIKIT_REQUIRES_ARGS``), and collects that log as its own."""
        return {REQUIRES_LOG: gate_files[REQUIRES_LOG]} if REQUIRES_LOG in gate_files else {}

    def parse(self, proc: ProcResult, options: dict | None = None) -> VerifierResult:
        """Turn a finished Frama-C run into a :class:`VerifierResult`.

        Verdicts (the executor has already mapped a job the sandbox ended: could not
        start, wall-time or memory limit): ``infra_error`` (the tool crashed),
        ``invalid`` (C or ACSL does not parse/typecheck: Frama-C "invalid user input"),
        ``verified`` (all goals proved, no failed smoke test), ``failed`` otherwise.
        Failed smoke tests are listed in ``vacuous`` for the benchmark to reject.

        A gate run's output (:meth:`gate`, marked by :data:`GATE_MARK`) is never a
        verification: ``invalid`` when Frama-C rejected the file, else ``failed`` ("WP not
        run"), with ``extra["gate"] = True`` for the judge.

        With ``options["smoke_tests"]``, ``extra["dead_code_tests"]`` and
        ``extra["contract_tests"]`` say (``"run"``, ``"left-out"``) what its command ran
        (:meth:`command_after_gate`); left out where its own files show they could decide
        (:func:`dead_code_tests_needed`, :func:`contract_tests_needed`), it is ``failed``.
        """
        result = self._parse_main(proc)
        files = proc.files or {}
        if (options or {}).get("smoke_tests") and GATE_MARK not in files and result.goals is not None:
            ran = "-wp-smoke-tests" in proc.argv
            dead_out, contract_out = not ran or DEAD_CODE_TESTS_OFF[0] in proc.argv, not ran
            result.extra["dead_code_tests"] = "left-out" if dead_out else "run"
            result.extra["contract_tests"] = "left-out" if contract_out else "run"
            why = ((dead_code_tests_needed(files, options.get("function")) if dead_out else None)
                   or (contract_tests_needed(files, options.get("function")) if contract_out else None))
            if why is not None and result.verdict == "verified":
                result.verdict = "failed"
                result.reason = f"smoke tests were left out, but they can decide this verdict: {why} (fail closed)"
        if GATE_MARK in files:
            if result.verdict != "invalid":  # a parse that Frama-C accepted (or a crash): never a verification
                result = VerifierResult("failed", f"the gate: Frama-C's view only, WP not run ({result.reason})",
                                        messages=result.messages)
            result.extra["gate"] = True
        result.artifacts = artifacts(proc.files)
        return result

    def _parse_main(self, proc: ProcResult) -> VerifierResult:
        log = proc.stdout + ("\n" + proc.stderr if proc.stderr else "")
        messages = error_messages(log)
        if proc.output_truncated:
            return VerifierResult("failed", "output exceeded the cap; the run was stopped", messages=messages)
        if proc.returncode != 0:
            if "invalid user input" in log or "syntax error" in log:
                first = next((m for m in messages if _LOCATED.search(m)), messages[0] if messages else "")
                return VerifierResult("invalid", f"Frama-C rejected the input: {first}".strip(), messages=messages)
            return VerifierResult("infra_error", f"frama-c exited {proc.returncode}: "
                                  f"{messages[-1] if messages else log.strip()[-200:]}", messages=messages)
        return parse_goals(log, proc.files.get(REPORT), messages)


def artifacts(files: dict[str, bytes]) -> dict:
    """What the driver wrote besides the WP report, read for the benchmark's judge.

    Returns:
        ``{"view", "task_view"}``: Frama-C's views as dicts (see ``drivers/framac_view.ml``
        for the shape), or None when Frama-C did not get that far (parse error) or the
        file is unreadable; ``"region_pp"``: the candidate's text as the preprocessor
        outputs it ``{"comments", "no_comments", "tokens"}`` (each None when not made),
        ``"region_err"``: the preprocessor's messages; ``"compiler_log"``: gcc's
        diagnostics on the verified file (None when not made: not a candidate mode);
        ``"havoc"``, ``"sound"``, ``"requires"``: the :class:`VerifierResult` of the
        do-nothing-body, task-soundness and requires-probe WP runs (None when not run;
        ``invalid`` when Frama-C rejected the file); ``"execution_log"``: ``vk_exec.log``
        (None when not run); ``"smoke_by_function"``: ``{function: [smoke test names]}``
        of the verification's ``-wp-report-json`` ({} without a report), and
        ``"sound_smoke_by_function"`` the same of the soundness run.
    """
    havoc = _side_run(_text(files, HAVOC_LOG), "the do-nothing body")
    return {"view": _json(files, VIEW), "task_view": _json(files, TASK_VIEW), "havoc": havoc,
            "region_pp": {k: _text(files, v) for k, v in REGION_PP.items()}, "region_err": _text(files, REGION_ERR),
            "compiler_log": _text(files, COMPILER_LOG), "execution_log": _text(files, EXEC_LOG),
            "sound": _side_run(_text(files, SOUND_LOG)), "requires": _side_run(_text(files, REQUIRES_LOG)),
            "smoke_by_function": _smoke_by_function(files.get(REPORT)),
            "sound_smoke_by_function": _smoke_by_function(files.get(SOUND_REPORT))}


def dead_code_tests_needed(files: dict[str, bytes], function: str | None = None) -> str | None:
    """Why WP's smoke tests of unreachable code can decide the verdict of a verification
    of ``function`` (None: not known), or None when they cannot
    (:meth:`FramaC.command_after_gate` then leaves them out).

    Args:
        files: a run's collected files: Frama-C's view of the verified file
            (:data:`VIEW`, from the gate's parse or the verification's own), the task's
            soundness run (:data:`SOUND_LOG`) and view (:data:`TASK_VIEW`), both task runs,
            and the requires probe's log (:data:`REQUIRES_LOG`).

    They can decide it (the reason is returned) when the view is missing or unreadable,
    when a function with a body calls a function without one or calls through a pointer
    (a contract taken on trust, whose ensures may make what follows unreachable) other
    than in the task's own code (:func:`_task_call`), and when the soundness run is
    missing, gave no answer or failed a smoke test (the task may be inconsistent, and
    unreachable code is then a proof from its contradiction).
    """
    try:
        functions = _json(files, VIEW)["functions"]
        defined = {f["name"] for f in functions if f.get("defined")}
    except (KeyError, TypeError):
        return "no readable view of the verified file"
    for f in (f for f in functions if f.get("defined")):
        for call in f.get("calls") or []:
            callee = call.get("callee")
            if callee not in defined and not _task_call(files, f["name"], callee, function):
                return (f"{f['name']}() calls " + (f"{callee}(), which has no body" if callee else "through a pointer"))
    sound = _side_run(_text(files, SOUND_LOG))
    if sound is None or sound.goals is None or sound.verdict in ("invalid", "infra_error"):
        return "the task's soundness run gave no answer"
    if sound.vacuous or sound.extra.get("dead_code"):
        return "the task's soundness run failed a smoke test"
    return None


def contract_tests_needed(files: dict[str, bytes], function: str | None) -> str | None:
    """Why WP's smoke tests of requires and behaviours' assumes (an inconsistent
    precondition, a behaviour that never applies) can decide the verdict of a verification
    of ``function`` (None: not known), or None when they cannot.

    ``files``: Frama-C's views of the verified file (:data:`VIEW`) and of the task's fixed
    part (:data:`TASK_VIEW`, a task run), and the requires probe's log (:data:`REQUIRES_LOG`,
    CASP ``soundness.requires_check``). They cannot decide when ``function``'s requires and
    assumes in the view are none; or the task's own (its soundness run judges them: a
    failure is the task's defect); or the candidate's, without assumes, and the probe proved
    every goal (the task's requires imply them: a proof, not a prover's "don't know").
    Another function's requires are proved at its calls: never a caller's vacuity.
    """
    if function is None:
        return "no target function"
    mine, task = _precondition(files, VIEW, function), _precondition(files, TASK_VIEW, function)
    if mine is None:
        return f"no readable view of {function}() in the verified file"
    if not mine or mine == task:  # precondition \true, or the task's own contract
        return None
    if any(kind == "assumes" for _, kind, _ in mine):
        return f"the contract of {function}() has behaviours, whose assumes may never apply"
    probe = _side_run(_text(files, REQUIRES_LOG))
    if probe is None or probe.verdict in ("invalid", "infra_error") or probe.goals is None:
        return "no answer from the requires probe"
    if probe.goals.total == 0 or probe.goals.proved != probe.goals.total:
        return (f"the task's requires are not proved to imply those of {function}() "
                f"({probe.goals.proved}/{probe.goals.total} goals of the requires probe)")
    return None


def _precondition(files: dict[str, bytes], view: str, function: str) -> list | None:
    """``function``'s requires and assumes in a view, sorted; None: not in a readable view."""
    try:
        return sorted((c["behavior"], c["kind"], c["text"]) for c in _entry(files, view, function)["clauses"]
                      if c["kind"] in ("requires", "assumes"))
    except (KeyError, TypeError):
        return None


def _entry(files: dict[str, bytes], view: str, name: str, leave_out=("file", "line")) -> dict | None:
    """Function ``name`` in a view without its places (file, line); None: not there."""
    def unplaced(x):
        if isinstance(x, dict):
            return {k: unplaced(v) for k, v in x.items() if k not in leave_out}
        return [unplaced(v) for v in x] if isinstance(x, list) else x
    view_json = _json(files, view)
    fns = view_json.get("functions") if isinstance(view_json, dict) else None
    return next((unplaced(f) for f in fns or [] if isinstance(f, dict) and f.get("name") == name), None)


def _task_call(files: dict[str, bytes], caller: str, callee: str | None, function: str | None) -> bool:
    """A call to a function without a body that the task's code makes: ``caller``'s code
    (Frama-C's printed body, annotations, loops, calls) and ``callee``'s declaration and
    contract are those of the task's view (:data:`TASK_VIEW`), and ``caller``'s
    precondition is the task's or implied by it (the target ``function``:
    :func:`contract_tests_needed`). What is unreachable under it is unreachable under the
    task's own contract: the task's code, never the candidate's doing."""
    # a function's code: its entry without its contract (constructs list the contract's too)
    code = ("file", "line", "spec", "spec_digest", "clauses", "constructs")
    mine, task = _entry(files, VIEW, caller, code), _entry(files, TASK_VIEW, caller, code)
    if not callee or task is None or mine != task or _entry(files, VIEW, callee) != _entry(files, TASK_VIEW, callee):
        return False
    if caller == function:
        return contract_tests_needed(files, function) is None
    return _precondition(files, VIEW, caller) == _precondition(files, TASK_VIEW, caller) is not None


def _text(files: dict[str, bytes], name: str) -> str | None:
    raw = files.get(name)
    return raw.decode("utf-8", "replace") if raw is not None else None


def _json(files: dict[str, bytes], name: str):
    """File ``name`` read as JSON (a view); None when absent or unreadable."""
    try:
        return json.loads(files[name]) if name in files else None
    except ValueError:  # UnicodeDecodeError included
        return None


def _side_run(log: str | None, what: str = "the file") -> VerifierResult | None:
    """A driver side run's WP log as a :class:`VerifierResult`: None when not run,
    ``invalid`` when Frama-C rejected ``what`` it ran on, else its goals and smoke tests."""
    if log is None:
        return None
    if "invalid user input" in log or "syntax error" in log:
        return VerifierResult("invalid", f"Frama-C rejected {what}", messages=error_messages(log))
    return parse_goals(log, None, error_messages(log))


def _smoke_by_function(report: bytes | None) -> dict[str, list[str]]:
    """``{function: [smoke test names as the log prints them (typed_...)]}`` from
    ``-wp-report-json``; {} when there is no readable report."""
    try:
        data = json.loads(report) if report else None
    except (ValueError, UnicodeDecodeError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {fn: sorted("typed_" + p for p in props if "_wp_smoke_" in p)
            for fn, props in data.get("wp:functions", {}).items() if isinstance(props, dict)}


def _sound_provers(options: dict) -> list[str]:
    """The one prover of the task-soundness run: Z3 when present, else the
    first present. A smoke test that passes waits for its timeout in every prover, so
    one prover keeps the run's cost to about 2 s per smoke test."""
    present = list(options.get("provers") or [])
    return ["z3"] if "z3" in present else present[:1]


def _prover_args(options: dict, timeout_s) -> list[str]:
    """The WP arguments the verification and the do-nothing-body run share: provers,
    steps, ``timeout_s`` per goal, parallel provers and (Frama-C >= 21) no proof cache
    from outside the job."""
    args = ["-wp-prover", ",".join(options["provers"])] if options["provers"] else []
    args += ["-wp-steps", str(options["wp_steps"]), "-wp-timeout", str(timeout_s), "-wp-par", str(options.get("wp_par", 1))]
    if parse_version(options.get("framac_version")) >= (21, 0):
        args += ["-wp-cache", "none"]  # never reuse a proof from outside the job
    return args
