"""Coq's own view of a candidate: the sentences ``coqc -time`` executed
(:func:`time_lines`), Coq's grammar of commands (:func:`command_heads`), the allow-list
they are judged on (:func:`classify`, :func:`command_problems`), the agreement of the
kit's segmentation with Coq's (:func:`segmentation_problems`) and the known soundness
bugs of the pinned Coq (:func:`soundness_problems`)."""

from __future__ import annotations

import itertools
import re

from ...toolchains import toolchain_spec

#: Grammar entries whose alternatives start a vernacular command (``Print Grammar``).
COMMAND_ENTRIES = ("command", "gallina", "gallina_ext", "syntax_command", "query_command", "vernac_control")
#: Entries that only name the head tokens of other entries' rules (expanded in place).
TOKEN_ENTRIES = ("thm_token", "def_token", "assumption_token", "assumptions_token", "finite_token",
                 "inductive_token", "enable_enable_disable")
#: Allow-list of the vernacular commands a candidate proof may contain, by their head as
#: Coq printed the parsed sentence (``coqc -time``), with why each is harmless. Everything
#: else that Coq's grammar parses as a command is ``rejected``, naming it.
ALLOWED_COMMANDS = {
    "Proof": "starts the proof (Proof., Proof using ..., Proof with ...)",
    "Qed": "ends the proof (must be the last sentence, once)",
    "Defined": "ends the proof (must be the last sentence, once)",
    "Ltac": "a local tactic definition (tactics build terms the kernel checks)",
    "Unshelve": "brings shelved goals back (they must still be proved)",
    "Check": "a query (prints only)",
    "Show": "a query (prints only)",
}
#: Attributes (``#[...]``, also Coq's print of ``Local``/``Global``) allowed on those commands.
ALLOWED_ATTRIBUTES = {"local", "global", "export"}
#: Controls (``vernac_control``) allowed before a sentence.
ALLOWED_CONTROLS = {"Time"}
#: One line of ``coqc -time``: ``Chars <start> - <end> [<command as printed, blanks as ~>] <t> secs ...``
#: (offsets in bytes of the file; the print is Coq's ``Ppvernac`` of the parsed sentence,
#: cut to 30 characters + ``...``). Coq replaces every space, tab and newline of the print
#: by ``~``, so a real print has no space: the pattern is not anchored to a line start and
#: text the proof prints before a real line (without a newline) cannot swallow it.
_TIME = re.compile(r"Chars (\d+) - (\d+) \[([^ ]*)\] [0-9.]+ secs")
_SELECTOR = re.compile(r"^(?:all|par|!|\d+(?:-\d+)?(?:,\d+(?:-\d+)?)*|\[[^\]~]*\]):~?")


#: Known soundness bugs of the pinned Coq 8.20.1 (Coq's ``dev/doc/critical-bugs.md``), the
#: construct that triggers each, and what the kit does, read from images/toolchains.json
#: (toolchain ``rocq``, key ``soundness_bugs``: the one place they are written). ``rule``:
#: ``no-fix-in-proof-term`` (the theorem's proof term, as Coq prints it, has no ``fix``/
#: ``cofix``: the guard checker of 8.16-9.0.0 accepts wrong fixpoints, coqchk too);
#: ``coqchk`` (coqchk, which has no VM/native machine and rejects the file, re-checks it);
#: ``command-not-allowed`` (the triggering commands are not on :data:`ALLOWED_COMMANDS`).
SOUNDNESS_BUGS = toolchain_spec("rocq")["soundness_bugs"]
_FIX = re.compile(r"(?<![\w'.])(co)?fix(?![\w'])")


def time_lines(stdout: str) -> list[tuple[int, int, str]]:
    """``[(start, end, printed)]`` from ``coqc -time`` output: each sentence coqc executed,
    its byte offsets in the file and the command as Coq printed its parse (blanks shown as
    ``~``, cut to 30 characters followed by ``...``). Lines the proof itself prints may
    imitate these; they can only add sentences to judge (overlaps are rejected by
    :func:`segmentation_problems`)."""
    return [(int(m.group(1)), int(m.group(2)), m.group(3)) for m in _TIME.finditer(stdout)]


def command_heads(grammar: str) -> tuple[set[str], set[str]]:
    """From ``Print Grammar`` output (entries :data:`COMMAND_ENTRIES` and
    :data:`TOKEN_ENTRIES`): the set of words that start a vernacular command in this Coq
    with the plugins the job loaded (``Abort``, ``Theorem``, ``Require``...), and the set
    of rule-head non-terminals that were not printed (non-empty: the grammar could not be
    read completely; the judge then treats every sentence outside the allow-list as an
    unclassified command, fail closed)."""
    entries: dict[str, list[str]] = {}
    current = None
    for line in grammar.splitlines():
        m = re.match(r"^Entry (\w+) is", line)
        if m:
            current = entries.setdefault(m.group(1), [])
            continue
        m = re.match(r"^  [\[|] (.*)", line)
        if current is not None and m:
            current.append(re.sub(r"(\s*\])+$", "", m.group(1).split(";")[0]).strip())
    heads: set[str] = set()
    unknown: set[str] = set()
    for name in COMMAND_ENTRIES:
        if name not in entries:
            unknown.add(name)
        for first in entries.get(name, []):
            tok = re.fullmatch(r'(?:IDENT )?"([^"]+)"', first.split(" LEVEL")[0].strip())
            if tok:
                heads.add(tok.group(1))
            elif first in TOKEN_ENTRIES and first in entries:
                for sub in entries[first]:
                    t = re.fullmatch(r'(?:IDENT )?"([^"]+)"', sub.strip())
                    (heads.add(t.group(1)) if t else unknown.add(f"{first}:{sub}"))
            elif first not in ("SELF", "EOI", "vernac_control", "decorated_vernac", "quoted_attributes"):
                unknown.add(first)
    return heads, unknown


def _attributes(text: str) -> tuple[list[str], str] | None:
    """``#[a, b(...)]`` prefixes of a printed command -> (attribute texts, rest); None
    when a bracket is not closed (the print was cut)."""
    attrs: list[str] = []
    while text.startswith("#["):
        depth, i = 0, 1
        while i < len(text):
            depth += text[i] in "[(" and 1 or 0
            depth -= text[i] in "])" and 1 or 0
            if depth == 0:
                break
            i += 1
        if i >= len(text):
            return None
        parts, level, cur = [], 0, ""
        for ch in text[2:i]:
            level += ch in "([" and 1 or 0
            level -= ch in ")]" and 1 or 0
            if ch == "," and level == 0:
                parts.append(cur.strip("~ "))
                cur = ""
            else:
                cur += ch
        parts.append(cur.strip("~ "))
        attrs += [a for a in parts if a]
        text = text[i + 1:].lstrip("~")
    return attrs, text


def classify(printed: str, heads: set[str], unknown: set[str]) -> str | None:
    """Why one sentence, as Coq printed its parse (a ``-time`` line), is not allowed in a
    candidate proof, or None when it is: a command on :data:`ALLOWED_COMMANDS` (with
    attributes on :data:`ALLOWED_ATTRIBUTES` and controls on :data:`ALLOWED_CONTROLS`), a
    bullet or brace, or a tactic (a sentence whose head is not a command of Coq's grammar,
    :func:`command_heads`), optionally after a goal selector. A print cut before its head
    is shown is not allowed (fail closed)."""
    shown = printed.replace("~", " ")
    cut = printed.endswith("...")
    text = printed[:-3] if cut else printed
    split = _attributes(text)
    if split is None:
        return f"attributes not fully visible in Coq's print {shown!r}"
    attrs, text = split
    bad = [a for a in attrs if a not in ALLOWED_ATTRIBUTES]
    if bad:
        return f"attribute #[{', '.join(bad)}] is not allowed (in {shown!r})"
    while True:
        m = re.match(r"^([A-Za-z_][\w']*)(~|$)", text)
        if not (m and m.group(2) == "~" and m.group(1) in ALLOWED_CONTROLS | {"Fail", "Succeed", "Redirect",
                                                                                 "Timeout", "Instructions"}):
            break
        if m.group(1) not in ALLOWED_CONTROLS:
            return f"control {m.group(1)} is not allowed (in {shown!r})"
        text = text[m.end():]
    sel = _SELECTOR.match(text)
    if sel:
        text = text[sel.end():]
    if re.fullmatch(r"[-+*]+|\{|\}", text.rstrip(".")):
        return None if not attrs else f"attributes on a bullet ({shown!r})"
    m = re.match(r"^[A-Za-z_][\w']*", text)
    if not m:
        if not text:
            return f"nothing visible in Coq's print {shown!r}"
        return None if not attrs else f"attributes on a tactic ({shown!r})"  # ( [> ltac: ... : a tactic expression
    word = m.group(0)
    if cut and m.end() == len(text):
        return f"the command is cut in Coq's print {shown!r}"
    if word in ALLOWED_COMMANDS and not sel:
        return None
    if word in heads or (unknown and not sel):
        return f"command {word} is not allowed (Coq parsed {shown!r})"
    return None if not attrs else f"attributes on a tactic ({shown!r})"


def command_problems(ran: list[tuple[int, int, str]], proof_start: int, heads: set[str],
                     unknown: set[str]) -> list[str]:
    """Why the candidate's sentences (``-time`` lines at or after ``proof_start``) are not
    acceptable (empty list: they are): each must pass :func:`classify`, and exactly one
    ``Qed.``/``Defined.`` must end the proof as its last sentence. An empty grammar (the
    report is missing) rejects every command outside the allow-list."""
    own = sorted(t for t in ran if t[0] >= proof_start)
    problems = [f"{p} (bytes {a}-{b})" for a, b, pr in own if (p := classify(pr, heads, unknown))]
    closes = [i for i, (_, _, pr) in enumerate(own) if pr in ("Qed.", "Defined.")]
    if not closes:
        problems.append("the proof does not end with Qed. or Defined. (Coq's view)")
    elif closes != [len(own) - 1]:
        problems.append("Qed./Defined. must be the last sentence and appear once (Coq's view)")
    return problems


def segmentation_problems(ran: list[tuple[int, int, str]], proof_start: int, kit: list | None) -> list[str]:
    """Where the kit's segmentation of the candidate (``kit``: ``[[start, end]]`` bytes,
    :meth:`Rocq.proof_layout`) disagrees with Coq's (``ran``, the ``-time`` lines): a Coq
    sentence straddling the proof's start (the statement the kit split off is not the one
    Coq read), overlapping Coq sentences, or a kit sentence that does not start and end
    where Coq sentences do (a bullet or brace may share a kit sentence with what follows).
    ``kit`` None: the kit could not segment the proof (Coq could)."""
    out = []
    if any(a < proof_start < b for a, b, _ in ran):
        out.append("a sentence Coq read crosses the start of the proof (the statement is not where the kit split it)")
    own = sorted((a, b) for a, b, _ in ran if a >= proof_start)
    if any(b1 > a2 for (_, b1), (a2, _) in itertools.pairwise(own)):
        out.append("overlapping sentences in Coq's output")
    if kit is None:
        return out + ["the kit cannot segment the proof (unterminated comment or string) but Coq ran it"]
    starts, ends = {a for a, _ in own}, {b for _, b in own}
    bad = [(a, b) for a, b in kit if a not in starts or b not in ends]
    if bad:
        out.append(f"the kit's sentences disagree with Coq's at bytes {bad[0][0]}-{bad[0][1]}")
    return out


def soundness_problems(body: str, options: dict) -> list[str]:
    """Constructs of :data:`SOUNDNESS_BUGS` in the theorem's proof term as Coq printed it
    (``Print`` under ``Printing All`` with no depth limit: ``name =\n<term>\n     : <type>``):
    a ``fix`` or ``cofix`` (the guard-checker bugs; an honest proof does induction through
    the library's recursors). An unreadable print, or one with a subterm elided (``...``,
    which Coq prints for what lies deeper than ``Printing Depth``), is a problem (fail
    closed: the check must read the whole term)."""
    term = proof_term(body)
    if term is None:
        return ["unreadable proof term report"]
    if fix_in(term):
        ids = ", ".join(b["id"] for b in SOUNDNESS_BUGS if b["rule"] == "no-fix-in-proof-term")
        return [f"the proof term contains a fix/cofix (known guard-checker soundness bugs of Coq 8.20.1: {ids}; an "
                f"explicit fixpoint is outside the fragment of Coq 8.20.1 the kit accepts)"]
    if "..." in term:
        return ["the proof term report is elided (Coq printed '...' for a subterm): the whole term could not be read"]
    return []


def proof_term(body: str) -> str | None:
    """The term of a ``Print`` of a constant (``name =\n<term>\n     : <type>``, what
    :func:`soundness_problems` reads), None when the print does not have that shape."""
    m = re.search(r"=\s", body)
    cut = body.rfind("\n     : ")
    return body[m.end():cut] if m and cut >= m.end() else None


def fix_in(text: str) -> bool:
    """Whether ``text`` has a ``fix`` or ``cofix`` token (not part of a longer name)."""
    return bool(_FIX.search(text))
