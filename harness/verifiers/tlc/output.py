"""Reading TLC's output: its ``-tool`` messages (:func:`split_messages`, the message codes),
the state graph a run dumps (``-dump dot``: :func:`parse_graph`, :func:`parse_dump`), the
states of an error trace, and the evidence a success must have (:func:`success_evidence`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

#: A run's state graph: ``-dump dot states`` writes ``states.dot`` (every distinct reachable
#: state in full, in the order TLC found it, initial states filled, every transition).
DUMP_BASENAME = "states"
DUMP_FILE = DUMP_BASENAME + ".dot"

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

    def place(text: str) -> None:
        """Text between two markers (or after the last): the open message's, else free
        text, and also the model's when SANY has finished (2219 seen)."""
        if stack:
            stack[-1].text += text
        else:
            free.append(text)
            if any(x.code == MSG_SANY_DONE for x in out.messages):
                after.append(text)

    pos = 0
    for m in _MARKER.finditer(log):
        place(log[pos:m.start()])
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
    place(log[pos:])
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


_NODE = re.compile(r'^(-?\d+) \[label="(.*)"(,style = filled)?\];?$')
_EDGE = re.compile(r'^(-?\d+) -> (-?\d+)')


def _nodes(text: str):
    """``(id, label, initial)`` of each node line of a ``-dump dot`` graph, in order
    (ValueError: a line starting with a number that is neither a node nor an edge)."""
    for ln in text.splitlines():
        if _EDGE.match(ln):
            continue
        m = _NODE.match(ln)
        if m:
            label = re.sub(r'\\(.)', lambda x: "\n" if x.group(1) == "n" else x.group(1), m.group(2))
            yield m.group(1), label, bool(m.group(3))
        elif re.match(r"^-?\d", ln):
            raise ValueError(f"a graph line the kit cannot read: {ln[:120]!r}")


def parse_graph(text: str) -> tuple[dict[str, dict], set[str], dict[str, set[str]]]:
    """TLC's ``-dump dot`` graph: ``(states, initial, successors)``: node id -> state
    (``{variable: normalized value}``, in TLC's order), the ids of initial states
    (``style = filled``), node id -> ids of its successors other than itself.

    A graph without a state is empty (TLC found no initial state), not unreadable.

    Raises:
        ValueError: a node line whose label is not a state, or an edge to a node the graph
            does not hold (a cut graph is not a view of the model).
    """
    states: dict[str, dict] = {}
    initial: set[str] = set()
    for node, label, filled in _nodes(text):
        states[node] = parse_state(label)
        if filled:
            initial.add(node)
    succ: dict[str, set[str]] = {}
    for m in filter(None, map(_EDGE.match, text.splitlines())):
        a, b = m.group(1), m.group(2)
        if a not in states or b not in states:
            raise ValueError(f"an edge {a} -> {b} to a state the graph does not hold")
        if a != b:
            succ.setdefault(a, set()).add(b)
    return states, initial, succ


def parse_dump(text: str, *, max_states: int | None = None) -> tuple[list[dict[str, str]], int]:
    """The states of a run's ``-dump dot`` graph, in TLC's order: ``(states, total)``,
    ``states`` at most ``max_states``, ``total`` every node line (a repeated node twice).

    Raises:
        ValueError: a malformed line or state (the message gives the node)."""
    states: list[dict[str, str]] = []
    total = 0
    for node, label, _ in _nodes(text):
        total += 1
        if max_states is not None and len(states) >= max_states:
            continue
        try:
            states.append(parse_state(label))
        except ValueError as exc:
            raise ValueError(f"{DUMP_FILE}: node {node}: {exc}") from None
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


def stats_of(msg: Message | None) -> tuple[int, int, int] | None:
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
    stats = stats_of(out.first(MSG_STATS))
    if stats is None:
        problems.append("no well-formed 2199 statistics message")
    else:
        if stats[2] != 0:
            problems.append(f"{stats[2]} state(s) left on the queue: the search did not complete")
        if dumped is not None and dumped != stats[1]:
            problems.append(f"{DUMP_FILE} holds {dumped} state(s), TLC's statistics say {stats[1]}")
    return problems


def one_line(text: str) -> str:
    return " ".join(text.split())


def error_text(out: ToolOutput, index: int) -> str:
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
    text = one_line(" ".join(parts))
    text = text.replace("TLC threw an unexpected exception. This was probably caused by an error in the spec or "
                        "model. See the User Output or TLC Console for clues to what happened. ", "")
    return text[:1000]


def sany_error(free: str) -> str:
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


def location(text: str | None) -> str | None:
    if not text:
        return None
    m = (re.search(r"line (\d+), col(?:umn)? (\d+)", text) or re.search(r"[Ll]ine (\d+), column (\d+)", text))
    return f"line {m.group(1)}, col {m.group(2)}" if m else None
