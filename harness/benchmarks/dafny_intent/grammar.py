"""Parsing Dafny with the Lark LALR(1) grammar ``dafny.lark`` (not by brace counting), and
the top-level declarations of a program: methods, lemmas, functions and predicates with
their signatures, specification clauses (full expressions) and bodies (token trees).

Start symbols (:func:`parse`): ``start`` (a file of declarations), ``test_body`` (the
statements of a test method), ``value`` (one expression: a test value written in a
comment) and ``spec_list`` (a candidate: specification clauses, maybe with helper
predicates/functions). Comments are not part of the trees: the lexer hands them to
:func:`parse`'s caller (they carry the ``//assert`` and ``//expected`` test forms).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .values import CHAR, Ty

GRAMMAR = Path(__file__).with_name("dafny.lark")


class TaskFileError(ValueError):
    """A task or candidate file cannot be read; the message names ``file:line:col``."""


#: Depth of nested block comments the grammar's lexer reads as Dafny does (Dafny's
#: ``/* /* */ */`` is one comment). Deeper nesting is not read as a comment by the kit;
#: what the candidate contains is judged on Dafny's own printed program anyway
#: (:mod:`.view`), and a disagreement rejects the candidate.
COMMENT_DEPTH = 8


def nested_comment_regex(depth: int | None = None) -> str:
    """A regular expression matching a Dafny block comment with nested block comments up
    to ``depth`` levels (default :data:`COMMENT_DEPTH`; ``//`` means nothing inside a block
    comment, as in Dafny's scanner). ``depth`` 0: the kit's earlier, non-nesting reading, where a
    block comment ends at the first ``*/`` whatever it contains."""
    depth = COMMENT_DEPTH if depth is None else depth
    if depth == 0:
        return r"/\*(?:[^*]|\*(?!/))*\*/"
    inner = r"(?:[^*/]|\*(?!/)|/(?!\*))"
    rx = r"/\*" + inner + r"*\*/"
    for _ in range(depth - 1):
        rx = r"/\*(?:" + inner[3:-1] + "|" + rx + r")*\*/"
    return rx


def _grammar_text() -> str:
    text = GRAMMAR.read_text(encoding="utf-8")
    old = "BLOCK_COMMENT: /\\/\\*(.|\\n)*?\\*\\//"
    assert old in text, "dafny.lark: BLOCK_COMMENT changed"
    return text.replace(old, "BLOCK_COMMENT: /" + nested_comment_regex().replace("/", "\\/") + "/")


_COMMENTS: list = []
_PARSE_LOCK = threading.Lock()


@lru_cache(maxsize=1)
def _parser():
    import lark

    def keep(tok):
        _COMMENTS.append((tok.line, tok.column, str(tok)))
        return tok

    return lark.Lark(_grammar_text(), parser="lalr", lexer="contextual",
                     start=["start", "test_body", "value", "spec_list"], propagate_positions=True,
                     lexer_callbacks={"LINE_COMMENT": keep, "BLOCK_COMMENT": keep})


def parse(text: str, where: str, start: str = "start"):
    """Parse ``text`` with the grammar's ``start`` symbol (``start``: a file of
    declarations; ``test_body``: a test method's ``{ ... }``; ``value``: one expression;
    ``spec_list``: specification clauses and helper predicates/functions).

    Returns ``(tree, comments)``: the Lark tree and the comments the grammar's lexer saw,
    as ``[(line, column, text)]`` (1-based), in source order.

    Raises:
        TaskFileError: ``where:line:col: ...`` for a lexical or syntax error.
    """
    import lark

    with _PARSE_LOCK:
        _COMMENTS.clear()
        try:
            tree = _parser().parse(text, start=start)
        except lark.exceptions.UnexpectedInput as exc:
            line, col = getattr(exc, "line", 0), getattr(exc, "column", 0)
            tok = getattr(exc, "token", None)
            if isinstance(exc, lark.exceptions.UnexpectedCharacters):
                what = f"unexpected character {text[exc.pos_in_stream]!r}"
            elif tok is not None and tok.type == "$END":
                what = "unexpected end of input"
            elif tok is not None:
                what = f"unexpected {str(tok)!r}"
            else:
                what = "unexpected input"
            raise TaskFileError(f"{where}:{line}:{col}: {what} (outside the Dafny subset this kit "
                                f"parses: harness/benchmarks/dafny_intent/dafny.lark)") from None
        comments = list(_COMMENTS)
    return tree, comments


@lru_cache(maxsize=1)
def _basic_lexer():
    import lark

    return lark.Lark(_grammar_text(), parser=None, lexer="basic", start="start")


def lex(text: str) -> list:
    """Tokens of ``text`` with the grammar's terminals and the context-free ("basic")
    lexer: keywords are their own terminals, comments are dropped.

    Raises:
        lark.exceptions.LarkError: a character no terminal matches.
    """
    return list(_basic_lexer().lex(text))


# ---------------------------------------------------------------------------------------
# Declarations
# ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Formal:
    """A parameter: ``name``, ``type`` (:class:`Ty`) and ``type_text`` as written."""

    name: str
    type: Ty
    type_text: str


@dataclass(frozen=True)
class Clause:
    """A specification clause: ``kind`` (requires/ensures/reads/modifies/decreases),
    ``text`` (the clause as written, keyword included, no trailing ``;``), ``expr`` (the
    expression text), ``line`` and ``names`` (identifiers it uses)."""

    kind: str
    text: str
    expr: str
    line: int
    names: frozenset


@dataclass(frozen=True)
class Decl:
    """A top-level declaration: ``kind`` (``method``/``lemma``/``function``/``predicate``),
    ``name``, ``ghost``, ``params``/``returns`` (:class:`Formal` tuples; functions: no
    returns), ``clauses``, ``text`` (the whole declaration), ``header`` (keyword to the end
    of the signature), ``body`` (text of the body block or None), ``line``/``end_line``,
    ``names`` (identifiers in its clauses and body)."""

    kind: str
    name: str
    ghost: bool
    params: tuple
    returns: tuple
    clauses: tuple
    text: str
    header: str
    body: str | None
    body_start: int | None
    line: int
    end_line: int
    names: frozenset
    keyword_span: tuple


def _tokens(tree) -> list:
    import lark

    if isinstance(tree, lark.Token):
        return [tree]
    return [t for t in tree.scan_values(lambda v: isinstance(v, lark.Token))]


def _names(tree) -> frozenset:
    return frozenset(str(t) for t in _tokens(tree) if t.type == "NAME")


def _slice(text: str, node) -> str:
    return text[node.meta.start_pos:node.meta.end_pos]


def to_type(tree) -> Ty:
    """The :class:`Ty` of a ``type`` parse tree."""
    import lark

    if tree.data == "tuple_type":
        return Ty("tuple", tuple(to_type(c) for c in tree.children))
    name_node = tree.children[0]
    name = str(name_node.children[0]) if isinstance(name_node, lark.Tree) else str(name_node)
    args = ()
    if len(tree.children) > 1:
        args = tuple(to_type(c) for c in tree.children[1].children)
    if name == "string":
        return Ty("seq", (CHAR,))
    return Ty(name, args)


def _formals(text: str, tree) -> tuple:
    out = []
    for f in tree.children if tree is not None else ():
        kids = [c for c in f.children if not (hasattr(c, "type") and c.type == "GHOST")]
        out.append(Formal(str(kids[0]), to_type(kids[1]), _slice(text, kids[1])))
    return tuple(out)


def declarations(text: str, where: str, tree=None) -> list[Decl]:
    """The top-level declarations of a Dafny source, in order.

    Raises:
        TaskFileError: the text is outside the grammar (names ``where:line:col``).
    """
    import lark

    if tree is None:
        tree, _ = parse(text, where)
    out = []
    for d in tree.children:
        if not isinstance(d, lark.Tree) or d.data not in ("method_decl", "function_decl"):
            continue
        out.append(decl_of(text, d))
    return out


def clause_of(text: str, c) -> Clause:
    """A :class:`Clause` from a specification-clause parse node."""
    import lark

    expr = [k for k in c.children if not (isinstance(k, lark.Token) and k.type in ("REQUIRES", "ENSURES"))
            and not (isinstance(k, lark.Tree) and k.data == "attribute")]
    ctext = _slice(text, c).rstrip().rstrip(";").rstrip()
    if expr:
        a = expr[0].start_pos if isinstance(expr[0], lark.Token) else expr[0].meta.start_pos
        b = expr[-1].end_pos if isinstance(expr[-1], lark.Token) else expr[-1].meta.end_pos
        etext = text[a:b]
    else:
        etext = ""
    return Clause(c.data, ctext, etext, c.meta.line, _names(c))


def decl_of(text: str, d) -> Decl:
    """A :class:`Decl` from a ``method_decl``/``function_decl`` parse node of ``text``."""
    import lark

    kw = d.children[0]
    words = [str(t) for t in kw.children]
    ghost = "ghost" in words
    kind = next(w for w in words if w in ("method", "lemma", "function", "predicate"))
    name = next(c for c in d.children[1:] if isinstance(c, lark.Token) and c.type == "NAME")
    params, returns, clauses, body, first_clause = None, None, [], None, None
    for c in d.children:
        if not isinstance(c, lark.Tree):
            continue
        if c.data == "formals" and params is None:
            params = c
        elif c.data == "returns":
            returns = c.children[0] if c.children else None
        elif c.data in ("requires", "ensures", "reads", "modifies", "decreases"):
            clauses.append(clause_of(text, c))
            first_clause = first_clause or c
        elif c.data == "body":
            body = c
    if params is None:
        params_t = ()
    else:
        params_t = _formals(text, params)
    body_text = _slice(text, body) if body is not None else None
    head_end = first_clause if first_clause is not None else body
    header = text[d.meta.start_pos:(head_end.meta.start_pos if head_end is not None else d.meta.end_pos)].rstrip()
    return Decl(kind=kind, name=str(name), ghost=ghost, params=params_t,
                returns=_formals(text, returns) if returns is not None else (),
                clauses=tuple(clauses), text=_slice(text, d), header=header, body=body_text,
                body_start=body.meta.start_pos if body is not None else None,
                line=d.meta.line, end_line=d.meta.end_line, names=_names(d),
                keyword_span=(kw.meta.start_pos - d.meta.start_pos, kw.meta.end_pos - d.meta.start_pos))
