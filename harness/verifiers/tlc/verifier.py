"""The :class:`TLC` verifier: a job's options and command line (SANY's XML export, then
TLC), the follow-up run (the invariant probe, the behaviour harness's tests), and the verdict from TLC's output
(:meth:`TLC.parse`)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from ...model import FOLLOWUP, Limits, ProcResult, Verifier, VerifierResult
from .output import (CLASS_ERROR, DUMP_BASENAME, DUMP_FILE, MSG_COMPUTING_INIT, MSG_DEPTH, MSG_INIT_DONE,
                     MSG_INVARIANT_BEHAVIOR, MSG_INVARIANT_INITIAL, MSG_NESTED_EXPRESSIONS, MSG_SANY_FAILED,
                     MSG_STATS, MSG_SUCCESS, MSG_VERSION, error_text, location, one_line, sany_error, stats_of,
                     model_output, parse_dump, parse_trace, split_messages, success_evidence)
from .behaviour import (TESTS_MODULE, Unmapped, constants_only, guess_mapping, harness_files, map_parameters,
                        read_behaviour, tests_module)
from .probe import PROBE_MODULE, probe_variants, read_probe
from .sany import sany_view

NAME = "tlc"
TOOLCHAIN = "tlaplus"
#: Version of this module's command line and parser (part of every job key; "1" also covered
#: the Model-Bench config and post-processing, which moved out unchanged; "2": success read
#: from the dump and exit status, cross-checked; "3": SANY's XML view collected in the same run,
#: failures of a run belong to the candidate; "4": the invariant probe, a follow-up run;
#: "5": the behaviour harness in the same follow-up; "6": SANY's export and TLC in one JVM;
#: "7": a follow-up's TLC checks in one JVM; "8": the run dumps its state graph, on which the
#: behaviour harness decides the bounded domain, the follow-up checks only the tests' inputs;
#: "9": the tests' check started ahead in the first run's JVM on a guessed mapping).
MODULE_VERSION = "9"
JAR = "/opt/verikit/tla2tools.jar"
METADIR = "tlc-meta"
DEFAULT_FP = 0
DEFAULT_SEED = 0
DEFAULT_HEAP_MB = 1024
#: At most this many dumped states are parsed into a record (the rest is counted only).
DEFAULT_MAX_STATES = 20000
#: SANY's XML export of the module (``tla2sany.xml.XMLExporter -o``: no schema validation), written
#: in the same JVM before TLC starts (then made read-only: the model TLC runs cannot rewrite
#: it), and SANY's messages of that export.
SANY_XML = "sany.xml"
SANY_ERR = "sany.err"
#: The job launcher (``drivers/VerikitTlc.java``): SANY's export, then TLC, in one JVM; with
#: ``--each``, a follow-up's TLC checks one after another in one JVM (:func:`_one_jvm`).
#: Compiled once per run in the sandbox by :meth:`TLC.prepare` and shipped with every job.
LAUNCHER = "VerikitTlc"
LAUNCHER_SOURCE = Path(__file__).resolve().parent.parent / "drivers" / f"{LAUNCHER}.java"
#: What in TLC's output shows the kit's own side failed (the jar or the JVM missing): only
#: these make a run without a TLC banner ``infra_error``; anything else is the candidate's.
KIT_SIDE = ("Unable to access jarfile", "Could not find or load main class", "java: not found",
            "java: No such file", "Error occurred during initialization of VM")
#: TLC version from which ``CHECK_DEADLOCK`` is a configuration keyword.
CHECK_DEADLOCK_SINCE = (2, 16)
#: The outputs of the tests' check (``-dump dot``: its graph), made ahead or in the follow-up.
TESTS_OUTPUTS = tuple(f"{TESTS_MODULE}.{x}" for x in ("out", "rc", "dot"))
#: What in a check's output depends on the JVM it shared (its heap, its stacks) rather than
#: on its files: a check ahead that printed one is made again in the follow-up.
JVM_BOUND = (b"OutOfMemoryError", b"StackOverflowError")


def _metadir(argv: list[str], name: str) -> list[str]:
    """``argv`` with its own metadata directory, ``tlc-meta/<name>``: TLC names a run's
    directory after the second it starts, and checks in one JVM start within one."""
    i = argv.index("-metadir") + 1
    return [*argv[:i], f"{METADIR}/{name}", *argv[i + 1:]]


def ran_ahead(files: dict[str, bytes], tests: dict[str, str]) -> bool:
    """Did the first run make the tests' check on exactly ``tests`` (the harness files the
    verified run's own mapping writes, :func:`~.behaviour.harness_files`; with the module
    alone where the job's config is not at hand), to its own end (its ``.out`` and ``.rc``), with no
    outcome that depends on the shared JVM (:data:`JVM_BOUND`)? Only then is its outcome the
    follow-up's: the same files, the same TLC command line."""
    out = files.get(f"{TESTS_MODULE}.out")
    return (all(files.get(k) == v.encode() for k, v in tests.items()) and f"{TESTS_MODULE}.rc" in files
            and out is not None and not any(m in out for m in JVM_BOUND))


def _one_jvm(runs: list[tuple[str, list[str]]], probe: bool) -> str:
    """The follow-up's script, one line per step: its TLC checks ``(name, TLC's own command
    line)`` in one JVM (the launcher's ``--each``: ``<name>.out``, ``<name>.rc``), then each
    check whose ``.rc`` is missing (a check that ended the JVM) again in a JVM of its own;
    with the probe, its output and exit status are the script's (as TLC's own command line).
    Each check gets a metadata directory of its own (``tlc-meta/<name>``): TLC names its
    run's directory after the second it starts, and checks in one JVM start within one."""
    runs = [(name, _metadir(argv, name)) for name, argv in runs]
    first = runs[0][1]
    each = [LAUNCHER, "--each"]
    for name, argv in runs:
        each += (["---"] if len(each) > 2 else []) + [name] + argv[argv.index("tlc2.TLC") + 1:]
    lines = [shlex.join(first[:first.index("-cp")] + ["-cp", f"{JAR}:."] + each)]
    lines += [f"[ -f {name}.rc ] || {{ {shlex.join(argv)} > {name}.out 2>&1; echo $? > {name}.rc; }}"
              for name, argv in runs]
    if probe:
        lines.append(f"cat {PROBE_MODULE}.out; exit $(cat {PROBE_MODULE}.rc)")
    return "\n".join(lines)


def version_tuple(version: str | None) -> tuple[int, ...]:
    """``"2.15"`` -> ``(2, 15)``; () when unknown."""
    return tuple(int(x) for x in re.findall(r"\d+", version or "")[:3])


class TLC(Verifier):
    """TLC model checker. ``name = "tlc"``, toolchain ``tlaplus``."""

    name = NAME
    toolchain = TOOLCHAIN
    version = MODULE_VERSION

    def prepare(self, sandbox, probed) -> dict:
        """Compile the job launcher (:data:`LAUNCHER`) once per run in ``sandbox``, with the
        JDK's own compiler module (``java -m jdk.compiler/com.sun.tools.javac.Main``: the
        JRE of the image has no ``javac`` command), against the image's ``tla2tools.jar``.

        Returns:
            ``{"VerikitTlc.class": bytes}`` to ship with every job; ``{}`` when it did not
            build (the jobs then fail as the kit's side: ``infra_error``, "Could not find
            or load main class").
        """
        source = f"{LAUNCHER}.java"
        res = sandbox.run(["java", "-XX:-UsePerfData", "-m", "jdk.compiler/com.sun.tools.javac.Main", "-cp", JAR,
                           "-d", ".", source], files={source: LAUNCHER_SOURCE.read_bytes()},
                          collect=[f"{LAUNCHER}.class"], limits=Limits(wall_s=120))
        built = (res.files or {}).get(f"{LAUNCHER}.class")
        return {f"{LAUNCHER}.class": built} if res.returncode == 0 and built else {}

    def options(self, probed, *, smoke: bool = False, cpus: int = 1, **overrides) -> dict:
        """Options of a job: ``module`` (set per job), ``workers`` (1), ``fp``, ``seed``,
        ``heap_mb`` (JVM ``-Xmx``, MiB), ``dump`` (write the state graph ``states.dot``),
        ``max_states`` (states parsed into the record), ``sany_view`` (export SANY's XML
        view first, :func:`sany_view`), ``deadlock_in_cfg`` (TLC >= 2.16,
        else ``-deadlock``), ``tlc_version``, ``java_version``, ``verifier_module``.
        ``smoke``/``cpus`` (the runner's generic arguments) do not apply: TLC always runs
        with one worker for determinism."""
        tlc_version = probed.versions.get("tlc") if probed is not None else None
        opts = {"module": None, "workers": 1, "fp": DEFAULT_FP, "seed": DEFAULT_SEED, "heap_mb": DEFAULT_HEAP_MB,
                "dump": True, "max_states": DEFAULT_MAX_STATES, "sany_view": True,
                "deadlock_in_cfg": version_tuple(tlc_version) >= CHECK_DEADLOCK_SINCE,
                "tlc_version": tlc_version,
                "java_version": probed.versions.get("java") if probed is not None else None,
                "verifier_module": f"{NAME}/{MODULE_VERSION}"}
        opts.update(overrides)
        return opts

    def command(self, options: dict) -> tuple[list[str], dict[str, str], list[str]]:
        """The command line of the package docstring; with ``sany_view`` (the default) the
        job launcher (:data:`LAUNCHER`) in its place: SANY's XML export of the module
        (:data:`SANY_XML`, read by :func:`sany_view`), then TLC with the same arguments, in
        one JVM; collects ``states.dot``, ``sany.xml`` and ``sany.err``.

        Raises:
            ValueError: ``options["module"]`` is not a TLA+ module name.
        """
        module = options.get("module")
        if not module or not re.fullmatch(r"[A-Za-z0-9_]+", module):
            raise ValueError(f"TLC job without a valid module name: {module!r}")
        sany = options.get("sany_view", True)
        # the launcher takes the module first and is found in the job directory
        classpath, main = (f"{JAR}:.", [LAUNCHER, module]) if sany else (JAR, ["tlc2.TLC"])
        argv = ["java", "-XX:-UsePerfData", "-XX:+UseParallelGC", f"-Xmx{int(options['heap_mb'])}m",
                "-Djava.io.tmpdir=tmp", "-cp", classpath, *main, "-tool",
                "-workers", str(int(options["workers"])), "-fp", str(int(options["fp"])),
                "-seed", str(int(options["seed"])), "-config", f"{module}.cfg", "-metadir", METADIR]
        if options.get("dump", True):
            argv += ["-dump", "dot", DUMP_BASENAME]
        if not options.get("deadlock_in_cfg", True):
            argv.append("-deadlock")
        argv.append(module)
        collect = ([DUMP_FILE] if options.get("dump", True) else []) + ([SANY_XML, SANY_ERR] if sany else [])
        return argv, {}, collect

    def ahead(self, files: dict[str, str], options: dict, limits: Limits) -> tuple[dict, list[str], list[str]]:
        """The behaviour harness's tests' check, started in the first run's JVM on a guess
        (:func:`~.behaviour.guess_mapping`: the parameters' variables from their names), so
        that a verified model whose mapping was guessed right needs no follow-up run: its
        harness files (``VKTests.tla``/``.cfg`` on the guess), and the launcher's tail
        ``--- VKTests UNTIL <TLC's arguments of the follow-up's check>``: run after a first
        TLC that ends with status 0, given until half the job's wall limit
        (``limits.wall_s / 2`` seconds after the start; abandoned then, its files removed),
        collected with its harness files. :meth:`followup` and :meth:`parse` use its outcome
        only where the run's own mapping writes the same files (:func:`ran_ahead`).

        Returns:
            ``(files, argv tail, files to collect)``; ``({}, [], [])`` when there is nothing
            to start ahead (no harness, no test input, no guess, no job launcher).
        """
        beh, module = options.get("behaviour"), options.get("module")
        if not beh or not module or not options.get("sany_view", True) or not options.get("dump", True):
            return {}, [], []
        guess = guess_mapping(list(beh["parameters"]), beh["inputs"][:beh["bounded"]],
                              list(options.get("variables") or []), files.get(f"{module}.tla", ""))
        tests = harness_files(module, files.get(f"{module}.cfg", ""), beh, guess) if guess else {}
        if not tests:
            return {}, [], []
        argv = self._tests_argv(options)
        tail = ["---", TESTS_MODULE, f"{limits.wall_s / 2:g}", *argv[argv.index("tlc2.TLC") + 1:]]
        return tests, tail, [*tests, *TESTS_OUTPUTS]

    def _tests_argv(self, options: dict) -> list[str]:
        """TLC's own command line of the tests' check: the job's switches on ``VKTests``,
        its graph dumped, its own metadata directory."""
        argv, _, _ = self.command({**options, "module": TESTS_MODULE, "dump": False, "sany_view": False})
        argv[-1:-1] = ["-dump", "dot", TESTS_MODULE]
        return _metadir(argv, TESTS_MODULE)

    def followup(self, files: dict[str, str], proc: ProcResult, options: dict) -> tuple[dict, list, list] | None:
        """After a verified run, one more container run with up to three TLC checks, asked by
        a benchmark's options, in one JVM when there are several (:func:`_one_jvm`):

        - ``probe`` (``{"invariant": name}``): the invariant probe. TLC checks the invariant
          on states that are NOT reachable, each a reachable state with one variable changed
          to a value that variable takes in another reachable state (:func:`probe_variants`).
          An invariant that holds on all of them reads the state in no way that the model's
          behaviour could break: true by construction. The probe module extends the
          candidate's (``EXTENDS <module>, TLC``: TLC prints functions with ``:>``/``@@``)
          with ``VKInit`` (the variants) and ``VKNext`` (stutter), checked with the
          candidate's constants and the same TLC switches (no dump, no SANY export); its
          output is the follow-up's standard output.
        - ``behaviour``: the behaviour harness's tests' part (:mod:`.behaviour`): the model
          started on the inputs of the program's tests under the widened constants, its
          complete state graph dumped (``VKTests.out``, ``.rc`` and ``.dot``). Nothing to run
          when the tests add no input or no variable holds a parameter (the bounded domain is
          decided on the verified run's own graph, :meth:`parse`), or when the first run made
          this very check ahead (:meth:`ahead`, :func:`ran_ahead`).

        Returns:
            ``(files, argv, collect)``, or None: nothing asked, the run not verified, or
            nothing to run (no probe variant and no harness).
        """
        probe, beh = options.get("probe"), options.get("behaviour")
        if not probe and not beh:
            return None
        first = self._parse(proc, options)
        if first.verdict != "verified":
            return None
        module = options["module"]
        states = first.extra.get("states") or []
        keep = constants_only(files.get(f"{module}.cfg", ""))
        given: dict[str, str] = {}
        runs: list[tuple[str, list[str]]] = []  # (name of its .out and .rc, TLC's own command line)
        collect: list[str] = []
        variants = probe_variants(states, seed=int(options.get("seed") or 0)) if probe else []
        if variants:
            names = sorted({v for st in variants for v in st})
            inits = "\n".join("    \\/ " + " /\\ ".join(f"{v} = {st[v]}" for v in names) for st in variants)
            given[f"{PROBE_MODULE}.tla"] = (f"---- MODULE {PROBE_MODULE} ----\nEXTENDS {module}, TLC\n"
                                            f"VKInit ==\n{inits}\nVKNext == UNCHANGED <<{', '.join(names)}>>\n====\n")
            given[f"{PROBE_MODULE}.cfg"] = "\n".join(keep + ["INIT VKInit", "NEXT VKNext",
                                                             f"INVARIANT {probe['invariant']}"]) + "\n"
            argv, _, _ = self.command({**options, "module": PROBE_MODULE, "dump": False, "sany_view": False})
            runs.append((PROBE_MODULE, argv))
        if beh:
            try:
                tests = harness_files(module, files.get(f"{module}.cfg", ""), beh, self._mapping(first, options))
            except ValueError:  # Unmapped, or a value with no TLA+ form: no harness to run; parse reports why
                tests = {}
            if tests and not ran_ahead(proc.files or {}, tests):
                given.update(tests)
                runs.append((TESTS_MODULE, self._tests_argv(options)))
                collect += list(TESTS_OUTPUTS)
        if not runs:
            return None
        if not beh:  # the probe alone: TLC's own command line
            return given, argv, []
        return given, ["sh", "-c", _one_jvm(runs, bool(variants))], collect

    def parse(self, proc: ProcResult, options: dict | None = None) -> VerifierResult:
        """Verdict of one TLC run (see the package docstring for the mapping), with SANY's view
        of the module (:func:`sany_view`) in ``extra["sany"]`` when the job collected it.

        ``extra``: ``outcome`` (``parse_error``, ``semantic_error``, ``config_error``,
        ``invariant_violated``, ``runtime_error``, ``success``, ``tool_crash``, ``no_result``,
        ``unreadable_output``), ``exit_code``,
        ``states_generated``, ``distinct_states``, ``depth``, ``error`` (first error
        message text), ``location`` (``line L, col C`` when TLC gives one), ``trace``
        (error trace, see :func:`parse_trace`), and on success ``states`` (the dumped
        states, at most ``max_states``), ``states_total`` (= ``distinct_states``: the
        dump's count), ``states_truncated``, ``states_left`` (2199), ``init_states``
        (2190), ``stuttering_only`` (no state reachable but the initial ones),
        ``model_output`` (text the model printed, when any). A success that TLC's own
        evidence contradicts (:func:`success_evidence`) is ``rejected`` with outcome
        ``inconsistent_output``. Failures belong to the candidate: a run that ends without
        a banner or a result is ``failed`` unless the output shows the kit's side failed
        (:data:`KIT_SIDE`: ``infra_error``); an exception while reading the output makes
        the run ``invalid`` (never raised).
        """
        options = options or {}
        try:
            result = self._parse(proc, options)
        except Exception as exc:  # the kit's reading of one candidate's run: that candidate is invalid
            result = VerifierResult("invalid", f"the kit could not read TLC's output ({type(exc).__name__}: {exc})",
                                    extra={"outcome": "unreadable_output", "exit_code": proc.returncode})
        if options.get("sany_view", True) and SANY_XML in (proc.files or {}):
            try:
                result.extra["sany"] = sany_view(proc.files[SANY_XML].decode("utf-8", "replace"),
                                                 proc.files.get(SANY_ERR, b"").decode("utf-8", "replace"))
            except Exception as exc:  # noqa: BLE001 - recorded, judged fail-closed by the benchmark
                result.extra["sany"] = {"error": f"{type(exc).__name__}: {exc}"}
        if options.get("probe") and result.verdict == "verified":
            try:
                result.extra["probe"] = read_probe(proc, result.extra.get("states") or [],
                                                   seed=int(options.get("seed") or 0))
            except Exception as exc:  # noqa: BLE001 - recorded, judged fail-closed by the benchmark
                result.extra["probe"] = {"outcome": "unreadable", "error": f"{type(exc).__name__}: {exc}"}
        if options.get("behaviour") and result.verdict == "verified":
            result.extra["behaviour"] = self._behaviour(proc, result, options)
        return result

    @staticmethod
    def _mapping(first: VerifierResult, options: dict) -> dict:
        """:func:`map_parameters` (Unmapped as it) on a verified run's initial states (the
        first ``init_states`` dumped) and variables (the job's, else the first state's)."""
        beh, states = options["behaviour"], first.extra.get("states") or []
        variables = list(options.get("variables") or (list(states[0]) if states else []))
        return map_parameters(list(beh["parameters"]), beh["inputs"][:beh["bounded"]], variables,
                              states[:first.extra.get("init_states") or 0])

    def _behaviour(self, proc: ProcResult, result: VerifierResult, options: dict) -> dict:
        """The behaviour harness's outcome (:func:`read_behaviour`: the bounded domain on the
        run's own graph, the tests' inputs from the follow-up or, when none ran, from the
        check made ahead on the module the run's own mapping writes); ``unmapped`` when no
        variable holds a parameter, ``unreadable`` when a graph could not be read (both fail
        closed in the benchmark's judgement)."""
        files = proc.files or {}
        try:
            mapping = self._mapping(result, options)
            module = tests_module(options["module"], options["behaviour"], mapping)
            if FOLLOWUP + "ended" not in files and module and ran_ahead(files, {f"{TESTS_MODULE}.tla": module}):
                files = {**files, **{FOLLOWUP + k: files[k] for k in TESTS_OUTPUTS if k in files}}
            return read_behaviour(files[DUMP_FILE].decode("utf-8", "replace"), files, options["behaviour"], mapping)
        except Unmapped as exc:
            return {"outcome": "unmapped", "detail": str(exc)}
        except Exception as exc:  # noqa: BLE001 - recorded, judged fail-closed by the benchmark
            return {"outcome": "unreadable", "detail": f"{type(exc).__name__}: {exc}"}

    def _parse(self, proc: ProcResult, options: dict) -> VerifierResult:
        options = options or {}
        log = proc.stdout + ("\n" + proc.stderr if proc.stderr else "")
        if "java.lang.OutOfMemoryError" in log:
            return VerifierResult("memout", f"TLC ran out of memory (JVM heap {options.get('heap_mb')} MiB)")
        out = split_messages(proc.stdout)
        extra: dict = {"exit_code": proc.returncode}
        stats = stats_of(out.first(MSG_STATS))
        if stats:
            extra["states_generated"], extra["distinct_states"], extra["states_left"] = stats
        depth = out.first(MSG_DEPTH)
        if depth:
            m = re.search(r"depth of the complete state graph search is (\d+)", depth.text)
            extra["depth"] = int(m.group(1)) if m else None
        if out.first(MSG_VERSION) is None:
            if any(k in log for k in KIT_SIDE):
                return VerifierResult("infra_error", f"no TLC banner in the output (exit {proc.returncode}), the kit's "
                                      f"side: {log.strip()[-300:]}", extra=extra)
            extra.update(outcome="tool_crash", error=log.strip()[-300:])
            return VerifierResult("failed", f"TLC crashed on the candidate's model before its banner (exit "
                                  f"{proc.returncode}): {log.strip()[-300:]}", extra=extra)
        if out.first(MSG_SANY_FAILED) is not None:
            free = out.free
            kind = "parse_error" if ("***Parse Error***" in free or "Lexical error" in free) else "semantic_error"
            detail = sany_error(free)
            extra.update(outcome=kind, error=detail, location=location(detail))
            label = "parse error" if kind == "parse_error" else "semantic error"
            return VerifierResult("invalid", f"{label}: {detail}", messages=[detail], extra=extra)
        codes = out.codes()
        init_at = codes.index(MSG_COMPUTING_INIT) if MSG_COMPUTING_INIT in codes else None
        errors = [(i, m) for i, m in enumerate(out.messages) if m.cls == CLASS_ERROR]
        violated = next((m for _, m in errors if m.code in (MSG_INVARIANT_INITIAL, MSG_INVARIANT_BEHAVIOR)), None)
        if violated is not None:
            trace = parse_trace(out)
            extra.update(outcome="invariant_violated", error=one_line(violated.text), trace=trace)
            return VerifierResult("failed", f"{one_line(violated.text)} (trace of {len(trace)} state(s))",
                                  messages=[violated.text], extra=extra)
        if errors:
            i, first = errors[0]
            text = error_text(out, i)
            nested = next((m for m in out.messages[i + 1:] if m.code == MSG_NESTED_EXPRESSIONS), None)
            loc = location(nested.text) if nested else None
            if init_at is None or i < init_at:
                extra.update(outcome="config_error", error=text)
                return VerifierResult("invalid", f"configuration error: {text}", messages=[text], extra=extra)
            extra.update(outcome="runtime_error", error=text, location=loc, trace=parse_trace(out))
            return VerifierResult("failed", f"runtime error: {text}" + (f" ({loc})" if loc else ""),
                                  messages=[text], extra=extra)
        if out.first(MSG_SUCCESS) is not None:
            extra["outcome"] = "success"
            printed = model_output(out)
            if printed:
                extra["model_output"] = printed[:1000]
            init = out.first(MSG_INIT_DONE)
            m = re.search(r"([\d,]+) distinct states? generated", init.text) if init else None
            extra["init_states"] = int(m.group(1).replace(",", "")) if m else None
            dump = proc.files.get(DUMP_FILE)
            if options.get("dump", True):
                if dump is None:
                    extra["outcome"] = "unreadable_output"
                    return VerifierResult("invalid", f"TLC reported success but wrote no {DUMP_FILE} (fail closed)",
                                          extra=extra)
                try:
                    states, total = parse_dump(dump.decode("utf-8", "replace"),
                                               max_states=int(options.get("max_states") or DEFAULT_MAX_STATES))
                except ValueError as exc:
                    extra["outcome"] = "unreadable_output"
                    return VerifierResult("invalid", f"unreadable state dump: {exc}", extra=extra)
                extra.update(states=states, states_total=total, states_truncated=total > len(states),
                             distinct_states=total)
            problems = success_evidence(out, proc.returncode, extra.get("states_total"))
            if extra.get("states") and len({tuple(sorted(x.items())) for x in extra["states"]}) < len(extra["states"]):
                problems.append(f"{DUMP_FILE} repeats a state (distinct states expected; tlaplus#407)")
            if problems:
                extra.update(outcome="inconsistent_output", error="; ".join(problems))
                return VerifierResult("rejected", "TLC's success is not backed by its own evidence (fail closed): "
                                      + "; ".join(problems), messages=problems, extra=extra)
            extra["stuttering_only"] = (extra["init_states"] is not None
                                        and extra.get("distinct_states") == extra["init_states"])
            return VerifierResult("verified", f"no error found: {extra.get('distinct_states')} distinct states "
                                  f"({extra.get('states_generated')} generated), depth {extra.get('depth')}",
                                  extra=extra)
        extra.update(outcome="no_result", error=log.strip()[-300:])
        return VerifierResult("failed", f"TLC ended without a result on the candidate's model (exit {proc.returncode}): "
                              f"{log.strip()[-300:]}", extra=extra)
