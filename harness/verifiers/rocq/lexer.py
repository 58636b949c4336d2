"""The kit's own Coq lexer: comments and strings read as Coq does (:func:`blank_comments`),
sentences (:func:`sentences`) and their command keyword. Used to find the task's theorem
and to split whole-file candidates; what a candidate contains is judged on Coq's own
parse (:mod:`.commands`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..proof import blank_span, nested_end, string_end

THEOREM_KEYWORDS = ("Theorem", "Lemma", "Fact", "Remark", "Corollary", "Proposition", "Example")
ASSUMPTION_KEYWORDS = {"Axiom", "Axioms", "Parameter", "Parameters", "Conjecture", "Conjectures",
                        "Hypothesis", "Hypotheses", "Variable", "Variables"}
PREFIXES = {"Local", "Global", "Polymorphic", "Monomorphic", "Private", "Program", "Cumulative",
             "NonCumulative", "Export"}
_CLOSE = {"Qed", "Defined"}


@dataclass(frozen=True)
class Sentence:
    """One Coq sentence: ``text`` (comments blanked), ``start``/``end`` offsets in the
    source (``end`` just after the final dot), ``line`` (1-based, of its first token)."""

    text: str
    start: int
    end: int
    line: int

    @property
    def words(self) -> list[str]:
        return re.findall(r"[A-Za-z_][\w']*", self.text)


def blank_comments(text: str, *, strings: bool = False) -> str:
    """``text`` with every (nested) ``(* ... *)`` comment replaced by spaces (newlines
    kept), and with string literals too when ``strings``; offsets are preserved.

    Raises:
        ValueError: an unterminated comment or string (message gives the line).
    """
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        if text.startswith("(*", i):
            # strings inside comments are Coq strings: "(*" and "*)" in them do not count
            j = nested_end(text, i, ("(*",), ("*)",), quote='"')
            if j < 0:
                raise ValueError(f"line {text.count(chr(10), 0, i) + 1}: unterminated comment "
                                 "(or unterminated string inside it)")
            blank_span(out, i, j)
            i = j
        elif text[i] == '"':
            j = string_end(text, i)  # "" is an escaped quote in Coq strings
            if j < 0:
                raise ValueError(f"line {text.count(chr(10), 0, i) + 1}: unterminated string")
            if strings:
                blank_span(out, i, j)
            i = j
        else:
            i += 1
    return "".join(out)


def sentences(text: str) -> list[Sentence]:
    """Split Coq source into sentences: a sentence ends at a ``.`` followed by white space
    or the end of the text, outside comments and strings (``..`` and qualified names such
    as ``Why3.Base`` do not end one). Raises ValueError as :func:`blank_comments`."""
    code = blank_comments(text, strings=True)
    out, start = [], 0
    for m in re.finditer(r"(?<!\.)\.(?=\s|$)", code):
        end = m.end()
        chunk = code[start:end]
        if chunk.strip():
            lead = len(chunk) - len(chunk.lstrip())
            s = start + lead
            out.append(Sentence(code[s:end], s, end, text.count("\n", 0, s) + 1))
        start = end
    if code[start:].strip():
        s = start + len(code[start:]) - len(code[start:].lstrip())
        out.append(Sentence(code[s:], s, len(code), text.count("\n", 0, s) + 1))
    return out


def sentence_keyword(sentence: Sentence) -> tuple[str | None, list[str]]:
    """The sentence's command keyword (after attributes and Local/Global/Program...) and
    the words that follow it."""
    body = re.sub(r"^#\[[^\]]*\]\s*", "", sentence.text)
    words = re.findall(r"[A-Za-z_][\w']*", body)
    while words and words[0] in PREFIXES:
        words = words[1:]
    return (words[0], words[1:]) if words else (None, [])
