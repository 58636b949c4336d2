"""Loop invariants as SMT-LIB terms: an allow-list parser, a printer and an evaluator.

A candidate is one SMT-LIB 2.6 term over the loop's integer variables (the ``Ints``
theory, linear and non-linear): integer numerals, the variables, ``+ - *``, ``<= < >= >
=``, ``and or not =>``, ``ite``, ``true``/``false``. Nothing else is allowed: no
command (``assert``, ``check-sat``, ``push``...), no binder (``forall``, ``let``), no
attribute (``!``), no quoted symbol, string, keyword or comment. The parser reads exactly
one term and nothing after it, and checks sorts (the invariant is ``Bool``). The kit
never sends the candidate's text to Z3: it prints the parsed term again
(:func:`to_smt`), so what Z3 reads is what the allow-list admitted.

:func:`evaluate` gives a term's value on concrete integers with SMT-LIB's semantics for
the admitted operators (unbounded integers), for the execution cross-check.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Operators: name -> (argument sort or None for "Int or Bool, all equal", result sort, arity range).
OPERATORS = {
    "+": ("Int", "Int", (1, None)), "-": ("Int", "Int", (1, None)), "*": ("Int", "Int", (2, None)),
    "<=": ("Int", "Bool", (2, None)), "<": ("Int", "Bool", (2, None)), ">=": ("Int", "Bool", (2, None)),
    ">": ("Int", "Bool", (2, None)), "=": (None, "Bool", (2, None)),
    "and": ("Bool", "Bool", (1, None)), "or": ("Bool", "Bool", (1, None)), "not": ("Bool", "Bool", (1, 1)),
    "=>": ("Bool", "Bool", (2, None)), "ite": (None, None, (3, 3)),
}
MAX_CHARS = 4000
MAX_DEPTH = 60
_TOKEN = re.compile(r"\s*(?:(\()|(\))|(0|[1-9][0-9]*)|([A-Za-z_][A-Za-z0-9_]*|[+\-*<>=]+))")


class TermError(ValueError):
    """A candidate that is not one admitted term: ``forbidden`` is True for a construct
    outside the allow-list (a cheat class: ``rejected``), False for a malformed or
    ill-sorted term (``invalid``)."""

    def __init__(self, message: str, *, forbidden: bool):
        super().__init__(message)
        self.forbidden = forbidden


@dataclass(frozen=True)
class Term:
    """A parsed term: ``op`` is an operator, a variable name, ``true``/``false`` or an
    integer numeral (``value`` set); ``args`` its arguments; ``sort`` ``Int`` or ``Bool``."""

    op: str
    args: tuple["Term", ...] = ()
    sort: str = "Int"
    value: int | None = None


def _tokens(text: str) -> list[str]:
    if len(text) > MAX_CHARS:
        raise TermError(f"the invariant is {len(text)} characters long (at most {MAX_CHARS})", forbidden=False)
    out, pos = [], 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            ch = text[pos:].lstrip()[:1]
            raise TermError(f"character {ch!r} at offset {pos} is not allowed in an invariant "
                            "(no comments, strings, quoted symbols, keywords or attributes)", forbidden=True)
        out.append(next(g for g in m.groups() if g is not None))
        pos = m.end()
    return out


def parse(text: str, variables: tuple[str, ...], sort: str = "Bool") -> Term:
    """The term ``text`` over ``variables`` (all ``Int``), of ``sort`` (``Bool`` or ``Int``).

    Raises:
        TermError: not exactly one admitted, well-sorted Boolean term (see the module doc).
    """
    toks = _tokens(text)
    if not toks:
        raise TermError("the invariant is empty", forbidden=False)
    pos = 0

    def term(depth: int) -> Term:
        nonlocal pos
        if depth > MAX_DEPTH:
            raise TermError(f"the invariant nests deeper than {MAX_DEPTH}", forbidden=False)
        if pos >= len(toks):
            raise TermError("the invariant ends inside a term (unbalanced parentheses)", forbidden=False)
        tok = toks[pos]
        pos += 1
        if tok == ")":
            raise TermError("unexpected ')'", forbidden=False)
        if tok != "(":
            return _atom(tok, variables)
        if pos >= len(toks):
            raise TermError("the invariant ends after '('", forbidden=False)
        op = toks[pos]
        pos += 1
        if op not in OPERATORS:
            raise TermError(f"{op!r} is not an allowed operator (allowed: {' '.join(OPERATORS)})", forbidden=True)
        args = []
        while pos < len(toks) and toks[pos] != ")":
            args.append(term(depth + 1))
        if pos >= len(toks):
            raise TermError(f"({op} ...) is not closed", forbidden=False)
        pos += 1
        return _apply(op, tuple(args))

    out = term(0)
    if pos != len(toks):
        raise TermError(f"text after the invariant's term: {' '.join(toks[pos:pos + 5])!r} (one term only)",
                        forbidden=True)
    if out.sort != sort:
        raise TermError(f"the term is of sort {out.sort}, not {sort}", forbidden=False)
    return out


def _atom(tok: str, variables: tuple[str, ...]) -> Term:
    if tok.isdigit():
        return Term(tok, sort="Int", value=int(tok))
    if tok in ("true", "false"):
        return Term(tok, sort="Bool")
    if tok in variables:
        return Term(tok, sort="Int")
    raise TermError(f"{tok!r} is neither a loop variable ({', '.join(variables)}) nor a numeral, true or false",
                    forbidden=True)


def _apply(op: str, args: tuple[Term, ...]) -> Term:
    want, result, (low, high) = OPERATORS[op]
    if len(args) < low or (high is not None and len(args) > high):
        raise TermError(f"({op} ...) takes {low}{'' if high == low else '+' if high is None else f'-{high}'} "
                        f"argument(s), got {len(args)}", forbidden=False)
    sorts = [a.sort for a in args]
    if op == "ite":
        if sorts[0] != "Bool" or sorts[1] != sorts[2]:
            raise TermError("(ite c a b) needs a Boolean c and a, b of one sort", forbidden=False)
        return Term(op, args, sorts[1])
    if want is None:
        if len(set(sorts)) != 1:
            raise TermError(f"({op} ...) compares terms of different sorts", forbidden=False)
    elif any(s != want for s in sorts):
        raise TermError(f"({op} ...) takes {want} arguments", forbidden=False)
    return Term(op, args, result)


def to_smt(t: Term) -> str:
    """The SMT-LIB text of a parsed term (what Z3 reads)."""
    if not t.args:
        return t.op
    return f"({t.op} {' '.join(to_smt(a) for a in t.args)})"


def evaluate(t: Term, env: dict[str, int]):
    """The value (int or bool) of ``t`` with the variables of ``env``.

    Raises:
        KeyError: a variable missing from ``env``.
    """
    if t.value is not None:
        return t.value
    if not t.args:
        return {"true": True, "false": False}[t.op] if t.op in ("true", "false") else env[t.op]
    v = [evaluate(a, env) for a in t.args]
    op = t.op
    if op == "+":
        return sum(v)
    if op == "-":
        return -v[0] if len(v) == 1 else v[0] - sum(v[1:])
    if op == "*":
        out = 1
        for x in v:
            out *= x
        return out
    if op in ("<=", "<", ">=", ">", "="):
        cmp = {"<=": lambda a, b: a <= b, "<": lambda a, b: a < b, ">=": lambda a, b: a >= b,
               ">": lambda a, b: a > b, "=": lambda a, b: a == b}[op]
        return all(cmp(a, b) for a, b in zip(v, v[1:]))
    if op == "and":
        return all(v)
    if op == "or":
        return any(v)
    if op == "not":
        return not v[0]
    if op == "=>":  # right-associative: (=> a b c) is (=> a (=> b c))
        out = v[-1]
        for x in reversed(v[:-1]):
            out = (not x) or out
        return out
    if op == "ite":
        return v[1] if v[0] else v[2]
    raise ValueError(f"unknown operator {op!r}")
