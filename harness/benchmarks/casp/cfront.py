"""A small C/ACSL lexer for the benchmark side: find a function definition, split ACSL
annotations from C code, compare code token by token.

This is deliberately not a C parser (Frama-C is the parser: whatever it rejects is
``invalid``). It only has to answer, reliably, questions a benchmark asks about a
candidate *before* the tool runs: where is the definition of ``f``, which ACSL comment is
its contract, and is the C code of ``f`` the same as the task's once comments,
annotations and whitespace are ignored. Comments, string and character literals are
lexed properly, so braces or ``*/`` inside them do not confuse it.

It only cuts a candidate into pieces: no integrity rule is judged on this lexer's
reading (the rules read Frama-C's own view, :mod:`harness.benchmarks.casp.integrity`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TOKEN = re.compile(
    r"""
    (?P<acsl>/\*@.*?\*/|//@[^\n]*)
  | (?P<comment>/\*.*?\*/|//[^\n]*)
  | (?P<string>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')
  | (?P<pp>^[ \t]*\#(?:\\\n|[^\n])*)
  | (?P<ws>\s+)
  | (?P<ident>[A-Za-z_]\w*)
  | (?P<number>\.?\d(?:[\w.]|[eEpP][+-])*)
  | (?P<punct>->|\+\+|--|<<=|>>=|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^]=|\.\.\.|[^\s\w])
    """,
    re.S | re.M | re.X,
)


class CSyntaxError(ValueError):
    """The text cannot be lexed (unterminated comment or literal); ``line`` is 1-based."""

    def __init__(self, msg: str, line: int):
        super().__init__(f"line {line}: {msg}")
        self.line = line


@dataclass(frozen=True)
class Token:
    """A lexeme: ``kind`` in acsl|comment|string|pp|ident|number|punct, ``text``, offsets."""

    kind: str
    text: str
    start: int
    end: int


def tokens(src: str) -> list[Token]:
    """Lex ``src`` into tokens (whitespace dropped).

    Raises:
        CSyntaxError: an unterminated comment, annotation or literal (with its line).
    """
    out: list[Token] = []
    pos = 0
    while pos < len(src):
        m = _TOKEN.match(src, pos)
        if not m or m.end() == pos:
            line = src.count("\n", 0, pos) + 1
            raise CSyntaxError(f"cannot lex {src[pos:pos + 20]!r}", line)
        kind = m.lastgroup
        if kind != "ws":
            out.append(Token(kind, m.group(), m.start(), m.end()))
        pos = m.end()
    for t in out:
        if t.kind == "punct" and t.text in ("/", "*") and src.startswith("/*", t.start):
            raise CSyntaxError("unterminated comment", src.count("\n", 0, t.start) + 1)
        if t.kind == "punct" and t.text in ('"', "'"):
            what = "string" if t.text == '"' else "character"
            raise CSyntaxError(f"unterminated {what} literal", src.count("\n", 0, t.start) + 1)
    return out


def code_tokens(src: str) -> list[str]:
    """The C tokens of ``src``: comments, ACSL annotations and whitespace removed."""
    return [t.text for t in tokens(src) if t.kind not in ("acsl", "comment")]


@dataclass(frozen=True)
class FunctionDef:
    """Location of a function definition in a source text.

    Attributes:
        name: function name.
        start: offset of the first token of the declaration (return type).
        end: offset just after the closing brace of the body.
        contract: text of the ACSL comment right before ``start`` (None if there is none).
        contract_start: offset of that comment (== start when there is none).
        body_start: offset of the body's opening brace (``src[start:body_start]`` is the
            declarator: return type, name, parameters).
    """

    name: str
    start: int
    end: int
    contract: str | None
    contract_start: int
    body_start: int = 0


def find_function(src: str, name: str) -> FunctionDef | None:
    """Find the (first) definition of function ``name`` at file scope.

    A definition is ``name`` followed by a parenthesised parameter list and a body
    ``{...}`` at brace depth 0. Returns None when there is none (a prototype alone does
    not count).

    Raises:
        CSyntaxError: the text cannot be lexed.
    """
    toks = tokens(src)
    depth = 0
    for i, t in enumerate(toks):
        if t.kind == "punct" and t.text == "{":
            depth += 1
        elif t.kind == "punct" and t.text == "}":
            depth -= 1
        if depth != 0 or t.kind != "ident" or t.text != name:
            continue
        j = _skip_noncode(toks, i + 1)
        if j >= len(toks) or toks[j].text != "(":
            continue
        close = _match(toks, j, "(", ")")
        k = _skip_noncode(toks, close + 1) if close is not None else None
        if k is None or k >= len(toks) or toks[k].text != "{":
            continue
        body_end = _match(toks, k, "{", "}")
        if body_end is None:
            return None
        first = i
        while first > 0 and toks[first - 1].kind in ("ident", "punct") and toks[first - 1].text not in (";", "}", "{", ")") :
            first -= 1
        before = first - 1
        while before >= 0 and toks[before].kind == "comment":  # plain comments between contract and function
            before -= 1
        contract_tok = toks[before] if before >= 0 and toks[before].kind == "acsl" else None
        return FunctionDef(
            name=name,
            start=toks[first].start,
            end=toks[body_end].end,
            contract=contract_tok.text if contract_tok else None,
            contract_start=contract_tok.start if contract_tok else toks[first].start,
            body_start=toks[k].start,
        )
    return None


def _skip_noncode(toks: list[Token], j: int) -> int:
    while j < len(toks) and toks[j].kind in ("acsl", "comment"):
        j += 1
    return j


def _match(toks: list[Token], i: int, open_: str, close: str) -> int | None:
    depth = 0
    for j in range(i, len(toks)):
        if toks[j].kind != "punct":
            continue
        if toks[j].text == open_:
            depth += 1
        elif toks[j].text == close:
            depth -= 1
            if depth == 0:
                return j
    return None


def function_names(code: str) -> list[str]:
    """Names of the functions defined in ``code``, in order: each identifier at file scope
    followed by a parameter list and a body.

    Raises:
        CSyntaxError: the text cannot be lexed.
    """
    toks = tokens(code)
    depth = 0
    out: list[str] = []
    for i, t in enumerate(toks):
        if t.kind == "punct" and t.text in "{}":
            depth += 1 if t.text == "{" else -1
        if depth == 0 and t.kind == "ident" and i + 1 < len(toks) and toks[i + 1].text == "(":
            close = _match(toks, i + 1, "(", ")")
            k = _skip_noncode(toks, close + 1) if close is not None else None
            if k is not None and k < len(toks) and toks[k].text == "{" and t.text not in out:
                out.append(t.text)
    return out


def function_name(code: str) -> str:
    """Name of the function defined in ``code`` (the first identifier followed by a
    parameter list and a body at file scope).

    Raises:
        ValueError: no function definition in ``code``.
    """
    names = function_names(code)
    if not names:
        raise ValueError("no function definition found")
    return names[0]


def acsl_blocks(src: str) -> list[Token]:
    """All ACSL annotations (``/*@ ... */`` and ``//@ ...``) in ``src``, in order."""
    return [t for t in tokens(src) if t.kind == "acsl"]


def normalize_acsl(text: str) -> str:
    """ACSL text with comment markers, leading ``@`` and whitespace normalised, for
    comparing contracts "verbatim" up to layout."""
    body = text.strip()
    body = body[3:-2] if body.startswith("/*@") else body[3:]
    body = re.sub(r"//[^\n]*", " ", body)  # line comments inside the annotation
    body = re.sub(r"(?m)^\s*@", " ", body)
    body = body.rstrip().rstrip("@")  # "/*@ ... @*/" closes like "/*@ ... */"
    return " ".join(body.split())
