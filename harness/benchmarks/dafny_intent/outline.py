"""The outline of a candidate the kit's grammar does not parse: its specification clauses
and declarations, found from tokens and brackets only (:func:`outline`).

The kit's grammar (``dafny.lark``) covers the Dafny of the MBPP-DFY data; Dafny accepts
more (lambdas, let and map comprehensions, a leading ``&&``, ...). The grammar is a
pre-filter, never the judge of validity: a candidate outside it is split here into the
clauses and declarations the check files need, the check files are built and Dafny
judges them. What Dafny reports decides: a parse or resolution error makes the
candidate ``invalid`` with Dafny's message, and what the candidate contains is judged on
Dafny's own printed program (:mod:`.view`), which must agree with this outline
(declarations, bodies, clause counts) or the candidate is ``rejected``.

The outline knows Dafny's declaration keywords, its clause keywords and its brackets. A
declaration runs from its keyword to the end of its body (a ``{ ... }`` group after the
signature that does not follow an operator, so a set display ``in {1, 2}`` in a clause is
not taken for one) or to the next declaration or, for a declaration without a body, to
the next clause the candidate itself states (in the form "clauses and helpers")."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...verifiers.dafny.program import DECL_WORDS as PRINTED_DECL_WORDS
from .grammar import Clause, Decl, Formal, TaskFileError, declarations, nested_comment_regex, parse
from .values import Ty

#: Words that open a declaration of their own: Dafny 2.3's top-level declaration words and
#: modifiers (those of its printed program, :data:`harness.verifiers.dafny.program.DECL_WORDS`)
#: but ``var``, which in a clause opens a let expression, and ``export``. Only functions
#: and predicates are helpers; the others are outlined so that a check can name them.
DECL_WORDS = PRINTED_DECL_WORDS - {"var", "export"}
#: Declaration kinds (the word naming what is declared).
KIND_WORDS = ("function", "predicate", "method", "lemma", "copredicate", "colemma", "class", "trait", "datatype",
              "codatatype", "newtype", "type", "module", "import", "const", "iterator", "include")
CLAUSE_WORDS = ("requires", "ensures", "reads", "modifies", "decreases")
#: Tokens after which a ``{`` opens a value (a set display or a block inside an
#: expression), not a declaration's body.
_OPERAND_EXPECTED = frozenset("""( [ { , : := :: :| == != < <= > >= + - * / % ! && || ==> <== <==> => in !in
then else if var case returns reads requires ensures decreases modifies set iset multiset seq map imap | ^ &
""".split())

#: Words that open an expression ended by its own ``;`` (a let, a statement expression).
_STATEMENT_EXPRESSIONS = frozenset({"var", "assert", "assume", "expect", "reveal", "calc"})

_TOKEN = re.compile(r"""
 (?P<ws>\s+)
|(?P<comment>//[^\n]*|""" + nested_comment_regex() + r""")
|(?P<vstring>@"(?:""|[^"])*")
|(?P<string>"(?:\\.|[^"\\\n])*")
|(?P<char>'(?:\\u[0-9A-Fa-f]{4}|\\.|[^'\\\n])')
|(?P<number>0x[0-9A-Fa-f_]+|\d[\d_]*(?:\.\d[\d_]*)?)
|(?P<attr>\{\s*:)
|(?P<ident>[A-Za-z_?\\][\w'?]*)
|(?P<punct>:=|:\||::|==>|<==>|<==|==|!=|<=|>=|&&|\|\||!!|\.\.|->|-->|~>|=>|<-|[^\s\w])
""", re.X)


@dataclass(frozen=True)
class Token:
    """One token of a candidate: ``kind`` (``ident``, ``number``, ``string``,
    ``vstring``, ``char``, ``attr`` (``{:``), ``punct``), ``text``, ``pos`` (offset),
    ``line`` (1-based)."""

    kind: str
    text: str
    pos: int
    line: int


def tokens(text: str) -> list[Token]:
    """Every token of ``text`` but whitespace and comments (Dafny's nested block comments
    up to :data:`.grammar.COMMENT_DEPTH` levels; deeper, the comment's text is read as
    code, which can only make a check stricter). Never fails: a character no rule
    matches is a ``punct`` token of its own."""
    out, pos, line = [], 0, 1
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        kind = m.lastgroup
        val = m.group(kind)
        if kind not in ("ws", "comment"):
            out.append(Token(kind, val, pos, line))
        line += val.count("\n")
        pos = m.end()
    return out


def _column(text: str, pos: int) -> int:
    """1-based column of offset ``pos``."""
    return pos - (text.rfind("\n", 0, pos) + 1) + 1


def _depths(toks: list[Token]) -> tuple[list[int], int]:
    """Bracket depth before each token (``(``, ``[``, ``{`` and ``{:`` open), and after
    the last one."""
    out, d = [], 0
    for t in toks:
        out.append(d)
        if t.kind == "attr" or t.text in ("(", "[", "{"):
            d += 1
        elif t.text in (")", "]", "}"):
            d = max(0, d - 1)
    return out, d


def _close(toks: list[Token], i: int) -> int:
    """Index of the bracket closing the one at ``i``."""
    d = 0
    for j in range(i, len(toks)):
        t = toks[j]
        if t.kind == "attr" or t.text in ("(", "[", "{"):
            d += 1
        elif t.text in (")", "]", "}"):
            d -= 1
            if d == 0:
                return j
    return len(toks) - 1


@dataclass(frozen=True)
class Outline:
    """A candidate's outline: ``clauses`` (the top-level clauses, as :class:`.grammar.Clause`),
    ``decls`` (:class:`.grammar.Decl`, in order), ``attributes`` (``[(line, name)]`` of every
    ``{:name ...}``), ``tokens``."""

    clauses: tuple
    decls: tuple
    attributes: tuple
    tokens: tuple


def outline(text: str, where: str) -> Outline:
    """The :class:`Outline` of a candidate text (clauses and declarations in any order).

    Raises:
        TaskFileError: ``where:line:col`` when a bracket is not closed, or text stands
            outside any clause or declaration.
    """
    toks = tokens(text)
    depth, final = _depths(toks)
    for t, d in zip(toks, depth):
        if d == 0 and t.text in (")", "]", "}"):
            raise TaskFileError(f"{where}:{t.line}:{_column(text, t.pos)}: {t.text!r} closes no bracket")
    if final:
        raise TaskFileError(f"{where}:{toks[-1].line}:1: a bracket is not closed")
    attributes = tuple((t.line, toks[i + 1].text if i + 1 < len(toks) else "")
                       for i, t in enumerate(toks) if t.kind == "attr")
    clauses, decls = [], []
    i = 0
    while i < len(toks):
        t = toks[i]
        if depth[i] == 0 and t.kind == "ident" and t.text in CLAUSE_WORDS:
            end = _clause_end(toks, depth, i + 1)
            clauses.append(_clause(text, toks, i, end))
            i = end
        elif depth[i] == 0 and t.kind == "ident" and t.text in DECL_WORDS:
            d, i = _declaration(text, toks, depth, i, where)
            decls.append(d)
        elif t.text == ";" and depth[i] == 0:
            i += 1
        else:
            raise TaskFileError(f"{where}:{t.line}:{_column(text, t.pos)}: {t.text!r} is neither a clause nor a declaration")
    return Outline(tuple(clauses), tuple(decls), attributes, tuple(toks))


def _clause_end(toks, depth, i) -> int:
    """Index after a clause's expression: the next clause or declaration word at depth 0,
    a ``{`` at depth 0 that opens a body (not after an operator), a ``;`` that ends no
    let or statement expression (``var x := e; ...``, ``assert p; ...``), or the end."""
    pending = 0
    while i < len(toks):
        t = toks[i]
        if depth[i] == 0 and t.kind == "ident" and (t.text in CLAUSE_WORDS or t.text in DECL_WORDS):
            return i
        if depth[i] == 0 and t.text == "{" and toks[i - 1].text not in _OPERAND_EXPECTED:
            return i
        if depth[i] == 0 and t.kind == "ident" and t.text in _STATEMENT_EXPRESSIONS:
            pending += 1
        if depth[i] == 0 and t.text == ";":
            if not pending:
                return i + 1
            pending -= 1
        i += 1
    return i


def _clause(text, toks, a, b) -> Clause:
    kw = toks[a]
    j = a + 1
    while j < b and toks[j].kind == "attr":
        j = _close(toks, j) + 1
    body = [t for t in toks[j:b] if t.text != ";"] or []
    etext = text[body[0].pos:body[-1].pos + len(body[-1].text)] if body else ""
    last = toks[b - 1]
    ctext = text[kw.pos:last.pos + len(last.text)].rstrip().rstrip(";").rstrip()
    names = frozenset(t.text for t in toks[a:b] if t.kind == "ident")
    return Clause(kw.text, ctext, etext, kw.line, names)


def _declaration(text, toks, depth, i, where) -> tuple[Decl, int]:
    start = i
    words = []
    while i < len(toks) and toks[i].kind == "ident" and toks[i].text in DECL_WORDS:
        words.append(toks[i].text)
        i += 1
    kinds = [w for w in words if w in KIND_WORDS]
    if not kinds:
        raise TaskFileError(f"{where}:{toks[start].line}:1: {' '.join(words)!r} declares nothing")
    kind = " ".join(kinds) if kinds[0] in ("function", "predicate") else kinds[0]
    kw_end = toks[i - 1].pos + len(toks[i - 1].text)
    while i < len(toks) and toks[i].kind == "attr":
        i = _close(toks, i) + 1
    name = toks[i].text if i < len(toks) and toks[i].kind == "ident" else ""
    # the signature: up to the first clause word, body or next declaration at depth 0
    j = i + 1
    while j < len(toks):
        t = toks[j]
        if depth[j] == 0 and t.kind == "ident" and (t.text in CLAUSE_WORDS or t.text in DECL_WORDS):
            break
        if depth[j] == 0 and t.text == "{" and toks[j - 1].text not in _OPERAND_EXPECTED:
            break
        if depth[j] == 0 and t.text in ("=", ";") and kind not in ("function", "predicate", "method", "lemma"):
            break
        j += 1
    head_end = j
    clauses = []
    while j < len(toks) and depth[j] == 0 and toks[j].kind == "ident" and toks[j].text in CLAUSE_WORDS:
        end = _clause_end(toks, depth, j + 1)
        clauses.append(_clause(text, toks, j, end))
        j = end
    body = None
    body_start = None
    if j < len(toks) and toks[j].text == "{" and depth[j] == 0:
        k = _close(toks, j)
        body = text[toks[j].pos:toks[k].pos + 1]
        body_start = toks[j].pos
        j = k + 1
    elif kind not in ("function", "predicate", "method", "lemma", "function method", "predicate method"):
        # other declarations (datatype, const, ...): up to the next declaration word at depth 0
        while j < len(toks) and not (depth[j] == 0 and toks[j].kind == "ident"
                                     and (toks[j].text in DECL_WORDS or toks[j].text in CLAUSE_WORDS)):
            j += 1
    last = toks[j - 1]
    dtext = text[toks[start].pos:last.pos + len(last.text)]
    header = text[toks[start].pos:toks[head_end - 1].pos + len(toks[head_end - 1].text)]
    params, returns = _signature(kind, header, where)
    names = frozenset(t.text for t in toks[start:j] if t.kind == "ident")
    d = Decl(kind=kind, name=name, ghost="ghost" in words, params=params, returns=returns, clauses=tuple(clauses),
             text=dtext, header=header, body=body, body_start=body_start, line=toks[start].line,
             end_line=last.line, names=names, keyword_span=(0, kw_end - toks[start].pos))
    return d, j


#: The name of the one parameter of a method header the kit's grammar cannot read (its
#: ``type_text`` holds the header as written).
UNREAD = "?"


def _signature(kind: str, header: str, where: str) -> tuple[tuple, tuple]:
    """Parameters and results of a method header, read by the kit's grammar from the
    header alone (they are compared with the task's); ``()`` for other declarations or a
    header the grammar cannot read (a method header that differs from the task's is
    rejected by the signature check, so nothing is trusted on an unread header)."""
    if kind not in ("method", "lemma"):
        return (), ()
    try:
        tree, _ = parse(header + "\n{}", where, "start")
    except TaskFileError:
        return (Formal(UNREAD, Ty(UNREAD), header),), ()
    d = declarations(header + "\n{}", where, tree)[0]
    return d.params, d.returns
