"""What the proof-checker verifiers (``rocq``, ``lean``, ``isabelle``: the NTP4VC
languages) share: the :class:`Theorem` of a task file, its statement hash, and the
lexer helpers that hide comments, strings and cartouches without moving offsets
(:func:`nested_end` follows Coq's rule for strings inside comments when asked).

A proof checker adds to the :class:`harness.model.Verifier` interface
``theorem(task_text, where) -> Theorem`` (the theorem and its proof placeholder;
ValueError naming ``where:line`` if absent or ambiguous), ``forbidden(proof) -> list[str]``
(fail-closed integrity scan of a candidate proof, comments and strings excluded),
``declared_axioms(text) -> set[str]`` (names a file declares without proof: the task's own
allow-list) and ``splice(task_text, theorem, proof) -> str`` (the file to check: the
candidate in place of the placeholder, with the prover's own assumption report; Rocq and
Isabelle also have ``job_files``, Rocq's adding the kit's ``check.v`` that reports on
the theorem by its fully qualified name);
``parse`` puts the assumptions the prover reported in ``VerifierResult.extra["assumptions"]``
and turns one outside ``options["allowed_assumptions"]`` (or the theorem itself) into
``rejected``.

Imports nothing but the standard library.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Theorem:
    """The theorem of an interactive-prover task file and where its proof goes.

    Attributes:
        name: the theorem's name as the prover knows it (e.g. ``power'vc``).
        statement: the statement text exactly as in the file (from the theorem keyword to
            the end of the statement, proof placeholder excluded).
        statement_sha256: :func:`statement_sha256` of ``statement`` (the "statement hash"
            of the integrity rules: docs/integrity.md, and "Checking proofs" on the NTP4VC
            page, harness/benchmarks/ntp4vc/docs.md).
        start, end: character offsets in the task text of the placeholder that the
            candidate proof replaces (``Admitted.``, ``sorry``).
        line: 1-based line of the theorem keyword (for messages).
    """

    name: str
    statement: str
    statement_sha256: str
    start: int
    end: int
    line: int


def normalize_statement(statement: str) -> str:
    """``statement`` with runs of white space collapsed to one space, ends stripped."""
    return " ".join(statement.split())


def statement_sha256(statement: str) -> str:
    """sha256 hex (64 chars) of :func:`normalize_statement` of ``statement`` (UTF-8): two
    statements that differ only in layout have the same hash."""
    return hashlib.sha256(normalize_statement(statement).encode("utf-8")).hexdigest()


def blank_span(chars: list[str], start: int, end: int) -> None:
    """Replace ``chars[start:end]`` by spaces, keeping newlines, so that offsets and line
    numbers of the text stay valid (the lexers of the proof-checker modules use it to hide
    comments and strings before scanning for keywords)."""
    for k in range(start, min(end, len(chars))):
        if chars[k] != "\n":
            chars[k] = " "


def nested_end(text: str, i: int, opens: tuple[str, ...], closes: tuple[str, ...], *,
               quote: str | None = None) -> int:
    """Offset just after the delimiter that closes the nested block opening at ``i``
    (e.g. ``(* (* *) *)`` with ``opens=("(*",)``, ``closes=("*)",)``), or -1 when the
    block is not closed before the end of ``text``.

    ``quote`` (Rocq: ``'"'``): inside the block, that character starts a string literal
    that runs to the next ``quote`` not doubled (``""`` is an escaped quote), and
    delimiters inside it do not count; an unterminated string gives -1. This is Coq's own
    rule (``comment`` and ``string ~comm_level`` in Coq's ``parsing/cLexer.ml``): with it
    ``(* "(*" *)`` is one closed comment. Lean's ``/- -/`` and Isabelle's ``(* *)``
    comments have no strings (Isabelle: ``Symbol_Pos.scan_comment``, nesting only), so
    their lexers leave ``quote`` unset.
    """
    depth, j, n = 0, i, len(text)
    while j < n:
        if quote and depth > 0 and text.startswith(quote, j):
            j = string_end(text, j, quote)
            if j < 0:
                return -1
            continue
        o = next((s for s in opens if text.startswith(s, j)), None)
        c = None if o else next((s for s in closes if text.startswith(s, j)), None)
        if o:
            depth, j = depth + 1, j + len(o)
        elif c:
            depth, j = depth - 1, j + len(c)
            if depth == 0:
                return j
        else:
            j += 1
    return -1


def string_end(text: str, i: int, quote: str = '"') -> int:
    """Offset just after the string literal opening with ``quote`` at ``i``, where a
    doubled ``quote`` is an escaped one (Coq's strings), or -1 when it is not closed."""
    j = i + len(quote)
    while True:
        j = text.find(quote, j)
        if j < 0:
            return -1
        if text.startswith(quote * 2, j):
            j += 2 * len(quote)
            continue
        return j + len(quote)
