"""Dafny user-intent formalization: symbolic testing of postconditions on MBPP-DFY.

Paper: S. K. Lahiri, "Evaluating LLM-driven User-Intent Formalization for
Verification-Aware Languages", FMCAD 2024 (../shared/papers/003_91678f5cbda6f3c8.txt).
Data: Mondego/dafny-synthesis at a57ce249 (the commit the paper names): the 126 test
programs ``MBPP-DFY-153/test/task_id_<N>.dfy`` (a specification + implementation + a test
method called from ``Main``), the RQ3 GPT-4 generations with the human labels as tags in
their ``note`` field, and MBPP-san-DFY-228. Reference implementation:
microsoft/nl-2-postcond ``eval-formal-specs-fmcad2024/spec_harness/eval_dafny_spec.py``.

The two metrics (paper, Section I-C), for a method ``m(x): y``, a candidate postcondition
``phi(x, y)`` and the tests ``T`` (input/output pairs):

- correctness: for each ``(i, o)`` in ``T``, ``|= {true} x := i; y := o {phi(x, y)}``; the
  task's correctness is the fraction of its tests for which the triple verifies (as the
  reference script's "Average Correctness").
- completeness: ``|T2| / |T1|`` where ``T1`` holds up to :data:`MUTANTS_PER_TEST` distinct
  output mutants ``(i, o')`` per test and ``T2`` those for which the triple does NOT hold
  (the verifier rejects the mutant).

Each triple is a Dafny method with the candidate's ``requires``/``ensures`` and a body that
assumes the inputs and assigns the (possibly mutated) output (:func:`render_check`); all
checks of one (task, candidate) -- correctness, mutants, a smoke check per test -- are
methods of ONE file verified by one Dafny process, and the verifier attributes the result
to each method (``harness/verifiers/dafny.py``). See docs/dafny-intent.md for every
decision (mutants equal to an allowed output, vacuous tests, timeouts, the Dafny 2.3
adaptation) and the differences from the reference script.

Parsing is done by a Lark LALR grammar (``dafny_grammar.lark``), not by brace counting:
declarations with their signatures and specification clauses (full expressions), bodies
as token trees, and the statements of the test method; the test forms the files use are
``assert out == V``, ``expect out == V``, ``//assert out == V``, ``print(out)`` followed by
``//expected V`` (also ``// expected``, ``PrintArray(out); // expected V`` on one line),
with values given inline or through ``var`` declarations.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import threading
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from functools import lru_cache
from pathlib import Path

from .. import datasets

NAME = "dafny-intent"
VERSION = "1"
DATASETS = ("dafny-intent",)
DEFAULT_DATASET = "dafny-intent"
MODES = ("spec",)
DEFAULT_MODES = ("spec",)
VERIFIER = "dafny"
CONTAINER_ONLY = True  # Dafny is installed only in the dafny toolchain image

TEST_DIR = "MBPP-DFY-153/test"
RQ3_JSON = ("RQs/RQ3-[Dynamic-Few-Shot-Prompting]/"
            "rq3-dynamic-few-shot-prompting-GPT-4-temp_0.5-verified-unverified-tagged.json")
SAN_JSON = "MBPP-san-DFY-228/mbpp-san-dfy-228-all-task-test.json"
GRAMMAR = Path(__file__).with_name("dafny_grammar.lark")

#: Paper, Section II-A: "we consider up to 5 distinct mutants of the output values for each test".
MUTANTS_PER_TEST = 5
#: Draws of the mutation operators per test before giving up on finding more distinct mutants.
MAX_DRAWS = 200
#: Paper, Section II-B: STRONG_SPEC above, WEAK_SPEC below this completeness.
LABEL_THRESHOLD = 0.66
AGREEMENT_THRESHOLDS = (0.2, 0.4, 0.5, 0.6, 0.66, 0.7, 0.8, 0.9, 1.0)
DEFAULT_SEED = 0
#: Lowercase letters: the reference script's alphabet for string mutations.
ALPHABET = "abcdefghijklmnopqrstuvwxyz"
#: Range of the random value inserted into an integer sequence (reference: randint(0, 100)).
INSERT_RANGE = (0, 100)

#: Outputs the paper names for task 2 (Section I-C): ``[4]`` and ``[5]`` are accepted by the
#: GPT-4 specification (completeness 0.6), ``[6]`` is rejected. Checked as extra "probe"
#: methods of task 2 (not counted in completeness).
PAPER_PROBES = {"2": [(1, "[4]"), (1, "[5]"), (1, "[6]")]}


class TaskFileError(ValueError):
    """A task or candidate file cannot be read; the message names ``file:line:col``."""


# ---------------------------------------------------------------------------------------
# Parsing (Lark)
# ---------------------------------------------------------------------------------------

_COMMENTS: list = []
_PARSE_LOCK = threading.Lock()


@lru_cache(maxsize=1)
def _parser():
    import lark

    def keep(tok):
        _COMMENTS.append((tok.line, tok.column, str(tok)))
        return tok

    return lark.Lark(GRAMMAR.read_text(encoding="utf-8"), parser="lalr", lexer="contextual",
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
                                f"parses: harness/benchmarks/dafny_grammar.lark)") from None
        comments = list(_COMMENTS)
    return tree, comments


# ---------------------------------------------------------------------------------------
# Declarations, types and values
# ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Ty:
    """A Dafny type: ``name`` (``int``, ``seq``, ``array``, ``tuple``, ``char``...) and its
    type arguments. ``string`` is read as ``seq<char>`` (Dafny: ``type string = seq<char>``)."""

    name: str
    args: tuple = ()

    def __str__(self) -> str:
        if self.name == "tuple":
            return "(" + ", ".join(map(str, self.args)) + ")"
        if self.name == "seq" and self.args == (CHAR,):
            return "string"
        return self.name + (f"<{', '.join(map(str, self.args))}>" if self.args else "")

    @property
    def is_int(self) -> bool:
        return self.name in ("int", "nat") or re.fullmatch(r"bv\d+", self.name) is not None


CHAR = Ty("char")


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
        out.append(_decl(text, d))
    return out


def _clause(text: str, c) -> Clause:
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


def _decl(text: str, d) -> Decl:
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
            clauses.append(_clause(text, c))
            first_clause = first_clause or c
        elif c.data in ("block", "fbody"):
            body = c if c.data == "block" else c.children[0]
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


@dataclass(frozen=True)
class Char:
    """A Dafny ``char`` value (distinct from a one-character string)."""

    c: str


@dataclass(frozen=True)
class Arr:
    """The contents of a Dafny array (a reference type: rendered as ``new T[] [...]``)."""

    items: tuple


@dataclass(frozen=True)
class Tup:
    """A Dafny tuple value."""

    items: tuple


class ValueError_(ValueError):
    """A test value cannot be read or does not have the expected type."""


def evaluate(tree, env: dict, where: str):
    """The Python value of a test expression (literals, displays, ``new T[] [...]``,
    unary minus, tuples, variables of ``env``). Values: int, bool, Decimal (real), str
    (string), :class:`Char`, tuple (seq), :class:`Arr`, :class:`Tup`.

    Raises:
        ValueError_: anything else (message names ``where`` and the construct).
    """
    import lark

    if isinstance(tree, lark.Token):
        raise ValueError_(f"{where}: unsupported token {str(tree)!r}")
    k = tree.data
    ch = tree.children
    if k == "int_lit":
        s = str(ch[0]).replace("_", "")
        return int(s, 16) if s.startswith("0x") else int(s)
    if k == "real_lit":
        return Decimal(str(ch[0]).replace("_", ""))
    if k == "true":
        return True
    if k == "false":
        return False
    if k == "string_lit":
        return _unescape_string(str(ch[0]), where)
    if k == "char_lit":
        return Char(_unescape_string('"' + str(ch[0])[1:-1] + '"', where))
    if k == "neg":
        v = evaluate(ch[0], env, where)
        if isinstance(v, bool) or not isinstance(v, (int, Decimal)):
            raise ValueError_(f"{where}: unary minus on a non-number")
        return -v
    if k == "seq_display":
        return tuple(evaluate(c, env, where) for c in (ch[0].children if ch else ()))
    if k == "tuple":
        return Tup(tuple(evaluate(c, env, where) for c in ch))
    if k == "new_array_init":
        _, dims, items = ch
        vals = tuple(evaluate(c, env, where) for c in (items.children if items is not None else ()))
        if dims is not None:
            n = evaluate(dims.children[0], env, where)
            if n != len(vals):
                raise ValueError_(f"{where}: array size {n} but {len(vals)} initial values")
        return Arr(vals)
    if k == "var":
        name = str(ch[0])
        if name not in env:
            raise ValueError_(f"{where}: unknown variable {name}")
        v = env[name]
        if isinstance(v, ValueError_):
            raise v
        return v
    raise ValueError_(f"{where}: unsupported test expression ({k})")


def _unescape_string(lit: str, where: str) -> str:
    if lit.startswith("@"):
        return lit[2:-1].replace('""', '"')
    body = lit[1:-1]
    out, i = [], 0
    simple = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", "'": "'", '"': '"'}
    while i < len(body):
        c = body[i]
        if c == "\\":
            nxt = body[i + 1:i + 2]
            if nxt == "u":
                out.append(chr(int(body[i + 2:i + 6], 16)))
                i += 6
                continue
            if nxt not in simple:
                raise ValueError_(f"{where}: unknown escape \\{nxt}")
            out.append(simple[nxt])
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def coerce(value, ty: Ty, where: str):
    """``value`` as a value of type ``ty`` (e.g. a sequence display given for an array,
    ``['a', 'b']`` for a string, an integer for a real).

    Raises:
        ValueError_: the value does not have that type (message names ``where``).
    """
    bad = ValueError_(f"{where}: value {render(value, None) if _renderable(value) else value!r} "
                      f"is not a {ty}")
    if ty.is_int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise bad
        if ty.name == "nat" and value < 0:
            raise bad
        m = re.fullmatch(r"bv(\d+)", ty.name)
        if m and not 0 <= value < 2 ** int(m.group(1)):
            raise bad
        return value
    if ty.name == "real":
        if isinstance(value, bool) or not isinstance(value, (int, Decimal)):
            raise bad
        return Decimal(value)
    if ty.name == "bool":
        if not isinstance(value, bool):
            raise bad
        return value
    if ty.name == "char":
        if isinstance(value, Char):
            return value
        raise bad
    if ty.name == "seq" and ty.args == (CHAR,):
        if isinstance(value, str):
            return value
        if isinstance(value, tuple) and all(isinstance(v, Char) for v in value):
            return "".join(v.c for v in value)
        raise bad
    if ty.name == "seq" and len(ty.args) == 1:
        items = value.items if isinstance(value, Arr) and ty.args[0].name == "array" else value
        if not isinstance(items, tuple) or isinstance(value, Tup):
            raise bad
        return tuple(coerce(v, ty.args[0], where) for v in items)
    if ty.name == "array" and len(ty.args) == 1:
        items = value.items if isinstance(value, Arr) else value
        if isinstance(items, str) and ty.args[0] == CHAR:
            items = tuple(Char(c) for c in items)
        if not isinstance(items, tuple) or isinstance(value, Tup):
            raise bad
        return Arr(tuple(coerce(v, ty.args[0], where) for v in items))
    if ty.name == "tuple":
        if not isinstance(value, Tup) or len(value.items) != len(ty.args):
            raise bad
        return Tup(tuple(coerce(v, t, where) for v, t in zip(value.items, ty.args)))
    raise ValueError_(f"{where}: values of type {ty} are not supported")


def _renderable(value) -> bool:
    return isinstance(value, (bool, int, Decimal, str, Char, tuple, Arr, Tup))


def render(value, ty: Ty | None) -> str:
    """Dafny literal of ``value`` (``ty`` names the element type of arrays: ``new T[] [...]``).
    Integers and reals are written in decimal (reals always with a ``.``); strings and chars
    with Dafny escapes."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Decimal):
        s = format(value, "f")
        return s if "." in s else s + ".0"
    if isinstance(value, str):
        return '"' + "".join(_escape(c, '"') for c in value) + '"'
    if isinstance(value, Char):
        return "'" + _escape(value.c, "'") + "'"
    if isinstance(value, tuple):
        inner = ty.args[0] if ty is not None and ty.args else None
        return "[" + ", ".join(render(v, inner) for v in value) + "]"
    if isinstance(value, Tup):
        args = ty.args if ty is not None and ty.name == "tuple" else [None] * len(value.items)
        return "(" + ", ".join(render(v, t) for v, t in zip(value.items, args)) + ")"
    if isinstance(value, Arr):
        elem = ty.args[0] if ty is not None and ty.args else Ty("int")
        if not value.items:
            return f"new {elem}[0]"
        return f"new {elem}[] [" + ", ".join(render(v, elem) for v in value.items) + "]"
    raise TypeError(f"cannot render {value!r}")


def _escape(c: str, quote: str) -> str:
    if c == quote or c == "\\":
        return "\\" + c
    if c == "\n":
        return "\\n"
    if c == "\t":
        return "\\t"
    if c == "\r":
        return "\\r"
    if ord(c) < 32 or ord(c) > 126:
        return "\\u%04x" % ord(c)
    return c


# ---------------------------------------------------------------------------------------
# Tasks: method under test, specification, helpers, tests
# ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class TestCase:
    """One test of a task: the call's inputs and the expected outputs.

    Attributes:
        index: 1-based position among the task's usable tests.
        line: line of the call in the task file.
        inputs: the argument values, one per parameter (coerced to the parameter types).
        outputs: the expected value of each out-parameter, in signature order.
        alternatives: other complete output tuples the test accepts (``assert r == A || r == B``).
        forms: how the expected values were written (``assert``, ``expect``, ``//assert``,
            ``//expected``).
    """

    index: int
    line: int
    inputs: tuple
    outputs: tuple
    alternatives: tuple = ()
    forms: tuple = ()


@dataclass(frozen=True)
class Task:
    """One MBPP-DFY test program.

    Attributes:
        task_id: the MBPP task id (``"2"`` for ``task_id_2.dfy``).
        path: repo-relative path of the file; text: its content; sha256: of the text.
        source: ``gpt-4`` (the file's specification is the RQ3 GPT-4 generation) or
            ``human`` (the task is not in the RQ3 file: written by the dataset's authors).
        method: the method under test (:class:`Decl`).
        helpers: the file's predicates/functions by name (:class:`Decl`).
        tests: the usable :class:`TestCase` s (at least one).
        notes: why some tests of the file are not used (``path:line: reason``).
        label: the human label of the RQ3 entry (``STRONG``/``WEAK``/``WRONG``) or None.
        test_method: name of the test method.
    """

    task_id: str
    path: str
    text: str
    sha256: str
    source: str
    method: Decl
    helpers: dict
    tests: tuple
    notes: tuple
    label: str | None
    test_method: str

    @property
    def spec(self) -> tuple:
        """The method's requires/ensures clauses."""
        return tuple(c for c in self.method.clauses if c.kind in ("requires", "ensures"))


@dataclass(frozen=True)
class Skipped:
    """A test program the kit does not evaluate, with the reason (``path:line: ...``)."""

    task_id: str
    path: str
    reason: str
    category: str


def _calls(block_tokens: list) -> list[str]:
    """Names directly followed by ``(`` in a token list (calls, in order)."""
    out = []
    for a, b in zip(block_tokens, block_tokens[1:]):
        if a.type == "NAME" and str(b).startswith("("):
            out.append(str(a))
    return out


def read_task(text: str, path: str, task_id: str, *, source: str = "gpt-4",
              label: str | None = None) -> Task | Skipped:
    """Extract a task from a test program, or say why it cannot be used.

    The method under test is the method with ``ensures`` clauses that the test method
    calls; the test method is the method ``Main`` calls that calls it. Predicates and
    functions are kept by name (the specification's closure is taken per candidate).

    Returns:
        :class:`Task`, or :class:`Skipped` with the reason and a category (``empty``,
        ``syntax``, ``no-test``, ``in-place``, ``partial-output``, ``value``...).
    """
    sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
    try:
        tree, comments = parse(text, path)
    except TaskFileError as exc:
        return Skipped(task_id, path, str(exc), "syntax")
    decls = declarations(text, path, tree)
    if not decls:
        return Skipped(task_id, path, f"{path}:1: no declaration (the file "
                       + ("is empty)" if not text.strip() else "holds only a comment)"), "empty")
    by_name = {d.name: d for d in decls}
    helpers = {d.name: d for d in decls if d.kind in ("function", "predicate")}
    main = by_name.get("Main")
    if main is None or main.body is None:
        return Skipped(task_id, path, f"{path}:1: no Main method calling a test method", "no-test")
    main_calls = [n for n in _calls(_lex(main.body)) if n in by_name]
    specced = {d.name for d in decls if d.kind == "method" and any(c.kind == "ensures" for c in d.clauses)}
    for test_name in main_calls:
        tm = by_name[test_name]
        if tm.body is None:
            continue
        under = [n for n in dict.fromkeys(_calls(_lex(tm.body))) if n in specced and n != test_name]
        if len(under) == 1:
            break
        if len(under) > 1:
            return Skipped(task_id, path, f"{path}:{tm.line}: the test method {test_name} calls "
                           f"several specified methods ({', '.join(under)})", "no-test")
    else:
        return Skipped(task_id, path, f"{path}:{main.line}: Main calls no test method that calls a "
                       f"method with ensures clauses (test method "
                       + (f"{main_calls[0]} is empty)" if main_calls else "missing)"), "no-test")
    method = by_name[under[0]]
    tests, notes, category = _extract_tests(text, path, tm, method, comments)
    if not tests:
        reason = "; ".join(notes) if notes else f"{path}:{tm.line}: the test method {tm.name} has no test"
        return Skipped(task_id, path, reason, category or "no-test")
    return Task(task_id=task_id, path=path, text=text, sha256=sha, source=source, method=method,
                helpers=helpers, tests=tuple(tests), notes=tuple(notes), label=label,
                test_method=tm.name)


@lru_cache(maxsize=1)
def _basic_lexer():
    import lark

    return lark.Lark(GRAMMAR.read_text(encoding="utf-8"), parser=None, lexer="basic", start="start")


def _lex(text: str) -> list:
    """Tokens of ``text`` with the grammar's terminals (comments dropped)."""
    return list(_basic_lexer().lex(text))


@dataclass
class _Call:
    line: int
    outs: list
    inputs: tuple | None = None
    error: str | None = None
    inplace: bool = False
    expected: dict = field(default_factory=dict)
    forms: list = field(default_factory=list)
    alternatives: list = field(default_factory=list)
    printed: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    evars: list = field(default_factory=list)


def _is_var(tree, name: str | None = None) -> bool:
    import lark

    return isinstance(tree, lark.Tree) and tree.data == "var" and (name is None or str(tree.children[0]) == name)


def _op(tree, data: str) -> str | None:
    import lark

    return str(tree.children[0]) if isinstance(tree, lark.Tree) and tree.data == data else None


def _extract_tests(text: str, path: str, tm: Decl, method: Decl, file_comments) -> tuple[list, list, str | None]:
    """Tests of ``method`` in the test method ``tm`` (see :func:`read_task`): ``(tests,
    notes, category of the first problem)``."""
    import lark

    src = re.sub(r"[^\n]", " ", text[:tm.body_start]) + tm.body  # keep the file's line:col
    try:
        tree, comments = parse(src, path, "test_body")
    except TaskFileError as exc:
        return [], [f"{exc} (in the test method {tm.name})"], "syntax"
    events = [((s.meta.line, s.meta.column), "stmt", s) for s in tree.children if isinstance(s, lark.Tree)]
    events += [((ln, col), "comment", txt) for ln, col, txt in comments]
    events.sort(key=lambda e: e[0])
    env: dict = {}
    calls: list[_Call] = []
    owner: dict[str, _Call] = {}
    params = method.params
    categories: list[str] = []

    def where(line):
        return f"{path}:{line}"

    pending_e: list = []

    def new_call(line, outs, args_tree, inplace=False):
        c = _Call(line=line, outs=outs, inplace=inplace, evars=list(pending_e))
        pending_e.clear()
        args = args_tree.children if args_tree is not None else []
        if len(args) != len(params):
            c.error = f"{where(line)}: {len(args)} argument(s) for {len(params)} parameter(s)"
        else:
            try:
                c.inputs = tuple(coerce(evaluate(a, env, where(line)), p.type, where(line))
                                 for a, p in zip(args, params))
            except ValueError_ as exc:
                c.error = str(exc)
        if not inplace and len(outs) != len(method.returns):
            c.error = c.error or (f"{where(line)}: {len(outs)} variable(s) receive "
                                  f"{len(method.returns)} result(s)")
        calls.append(c)
        for o in outs:
            owner[o] = c
        return c

    def call_of(expr):
        if isinstance(expr, lark.Tree) and expr.data == "call" and _is_var(expr.children[0]):
            return str(expr.children[0].children[0]), (expr.children[1] if len(expr.children) > 1 else None)
        return None, None

    def assertion(expr, line, form):
        disj = [expr]
        if isinstance(expr, lark.Tree) and expr.data == "logical" and all(
                _op(k, "logic_op") in (None, "||") for k in expr.children[1::2]):
            disj = expr.children[0::2]
        found = []
        for d in disj:
            if not (isinstance(d, lark.Tree) and d.data == "relation" and len(d.children) == 3
                    and _op(d.children[1], "rel_op") == "=="):
                return f"{where(line)}: unsupported assertion form ({form})"
            lhs, rhs = d.children[0], d.children[2]
            if not _is_var(lhs) or str(lhs.children[0]) not in owner:
                lhs, rhs = rhs, lhs
            if not _is_var(lhs) or str(lhs.children[0]) not in owner:
                return f"{where(line)}: the assertion ({form}) names no result of a call to {method.name}"
            try:
                found.append((str(lhs.children[0]), evaluate(rhs, env, where(line))))
            except ValueError_ as exc:
                return str(exc)
        name, value = found[0]
        c = owner[name]
        if c is not calls[-1] and name in c.expected:
            return (f"{where(line)}: the assertion ({form}) names {name}, the result of the call at line "
                    f"{c.line}, not of the latest call (line {calls[-1].line}): a copy-paste slip in the test")
        if name in c.expected and c.expected[name] != value:
            c.notes.append(f"{where(line)}: conflicting expected values for {name}")
        c.expected[name] = value
        c.forms.append(form)
        if len(found) > 1:
            c.alternatives += [(n, v) for n, v in found[1:]]
        return None

    notes: list[str] = []
    for (line, _col), kind, item in events:
        if kind == "comment":
            body = item[2:].strip() if item.startswith("//") else ""
            m = re.match(r"(assert|expect|expected|expeced)\b\s*(.*)$", body, re.S)
            if not m:
                continue
            rest = m.group(2).strip().rstrip(";").strip()
            vsrc = re.sub(r"[^\n]", " ", src[:0]) + rest
            try:
                vtree, _ = parse(vsrc, f"{where(line)} (comment)", "value")
                vexpr = vtree.children[0]
            except TaskFileError as exc:
                (calls[-1].notes if calls else notes).append(
                    f"{where(line)}: the expected value in the comment {item.strip()!r} does not parse "
                    f"({str(exc).split(': ', 2)[-1].split(' (outside')[0]})")
                continue
            if m.group(1) in ("assert", "expect"):
                problem = assertion(vexpr, line, "//" + m.group(1))
                if problem:
                    (calls[-1].notes if calls else notes).append(problem)
                continue
            if not calls:
                notes.append(f"{where(line)}: //expected before any call of {method.name}")
                continue
            c = calls[-1]
            problem = _expected(c, vexpr, env, line, where, owner)
            if problem:
                c.notes.append(problem)
            continue
        stmt = item
        k = stmt.data
        if k == "var_stmt":
            locs = [x for x in stmt.children if isinstance(x, lark.Tree) and x.data == "local"]
            inits = next((x.children for x in stmt.children if isinstance(x, lark.Tree) and x.data == "expr_list"), [])
            names = [str(x.children[0]) for x in locs]
            callee, args = call_of(inits[0]) if len(inits) == 1 else (None, None)
            if callee == method.name:
                new_call(line, names, args)
                continue
            for loc, init in zip(locs, inits):
                name = str(loc.children[0])
                try:
                    v = evaluate(init, env, where(line))
                    if len(loc.children) > 1:
                        v = coerce(v, to_type(loc.children[1]), where(line))
                    env[name] = v
                    if re.fullmatch(r"e\d+", name):
                        pending_e.append(name)
                except ValueError_ as exc:
                    env[name] = exc
            for loc in locs[len(inits):]:
                env[str(loc.children[0])] = ValueError_(f"{where(line)}: {loc.children[0]} has no value")
        elif k == "call_stmt":
            callee, args = call_of(stmt.children[0])
            if callee == method.name:
                c = new_call(line, [], args, inplace=True)
                for a in (args.children if args is not None else []):
                    if _is_var(a):
                        owner[str(a.children[0])] = c
            elif callee is not None and calls:
                calls[-1].printed += list(args.children) if args is not None else []
        elif k == "print_stmt" and calls:
            calls[-1].printed += [e for e in stmt.children[0].children
                                  if not (isinstance(e, lark.Tree) and e.data == "string_lit")]
        elif k in ("assert_stmt", "expect_stmt"):
            exprs = [x for x in stmt.children if isinstance(x, lark.Tree) and x.data != "attribute"]
            problem = assertion(exprs[0], line, k.split("_")[0])
            if problem:
                (calls[-1].notes if calls else notes).append(problem)
        elif k == "assign_stmt":
            notes.append(f"{where(line)}: assignment statement in the test method (ignored)")
    tests: list[TestCase] = []
    for c in calls:
        if c.inplace:
            notes.append(f"{where(c.line)}: in-place test: {method.name} modifies its array argument and "
                         f"the test checks the array afterwards (no out-parameter to mutate)")
            categories.append("in-place")
            continue
        if c.error:
            notes.append(c.error)
            categories.append("value")
            continue
        missing = [o for o in c.outs if o not in c.expected]
        if missing and len(missing) == len(c.outs) and len(c.evars) == len(c.outs):
            # "var e1 := <expected>" declared with the call's inputs and never asserted: the
            # expected-value variables of the MBPP-DFY JSON test cases (e.g. task 257)
            for o, e in zip(c.outs, c.evars):
                c.expected[o] = env[e]
            c.forms.append("var e<k>")
            missing = []
        if missing:
            why = "; ".join(c.notes) if c.notes else ""
            notes.append(f"{where(c.line)}: no expected value for {', '.join(missing)} (out-parameter"
                         f"{'s' if len(missing) > 1 else ''} "
                         f"{', '.join(r.name for o, r in zip(c.outs, method.returns) if o in missing)})"
                         + (f": {why}" if why else ""))
            categories.append("partial-output" if len(missing) < len(c.outs) else "no-expected")
            continue
        try:
            outs = tuple(coerce(c.expected[o], r.type, where(c.line)) for o, r in zip(c.outs, method.returns))
            alts = []
            for name, v in c.alternatives:
                alt = list(outs)
                alt[c.outs.index(name)] = coerce(v, method.returns[c.outs.index(name)].type, where(c.line))
                alts.append(tuple(alt))
        except ValueError_ as exc:
            notes.append(str(exc))
            categories.append("value")
            continue
        notes += [n for n in c.notes if "conflicting" in n]
        if any("conflicting" in n for n in c.notes):
            categories.append("value")
            continue
        tests.append(TestCase(index=len(tests) + 1, line=c.line, inputs=c.inputs, outputs=outs,
                              alternatives=tuple(alts), forms=tuple(dict.fromkeys(c.forms))))
    return tests, notes, (categories[0] if categories else None)


def _expected(c: _Call, vexpr, env, line, where, owner) -> str | None:
    """Assign a ``//expected V`` value to what the call's test printed since the call."""
    import lark

    try:
        value = evaluate(vexpr, env, where(line))
    except ValueError_ as exc:
        return str(exc)
    printed = c.printed
    if any(not _is_var(p) for p in printed):
        bad = next(p for p in printed if not _is_var(p))
        return (f"{where(line)}: the test prints an expression ({bad.data}), not a result, before "
                f"//expected")
    names = [str(p.children[0]) for p in printed]
    if c.inplace:
        return None  # reported as an in-place test
    if not names:
        names = list(c.outs)
    if any(n not in c.outs for n in names):
        return f"{where(line)}: //expected follows a print of {', '.join(names)}, not the call's result"
    if len(names) == 1:
        c.expected[names[0]] = value
    elif isinstance(value, tuple) and len(value) == len(names):
        for n, v in zip(names, value):
            c.expected[n] = v
    else:
        return f"{where(line)}: //expected gives one value for {len(names)} printed results"
    c.forms.append("//expected")
    c.printed = []
    del lark
    return None


# ---------------------------------------------------------------------------------------
# Candidates and integrity
# ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Spec:
    """A candidate specification for a task: its ``requires``/``ensures`` clauses, the
    helper predicates/functions it declares itself (by name), the method header it gave
    (or None) and the text it came from."""

    clauses: tuple
    helpers: dict
    header: Decl | None
    text: str


#: Integrity checks (DESIGN.md "Integrity"): a candidate that uses any of these is
#: ``rejected`` whatever Dafny says.
FORBIDDEN_ATTRIBUTES = {"axiom": "{:axiom} (an unproved assumption)",
                        "verify": "{:verify false} (switches verification off)",
                        "extern": "{:extern} (a declaration without a definition)"}


def read_candidate(output: str, task: Task, where: str) -> tuple[Spec | None, list[dict], str | None]:
    """Read a candidate's output: either specification clauses (``requires``/``ensures``
    lines, optionally with predicate/function declarations they use) or declarations
    including a method header with the task's method name (its clauses are taken).

    Returns:
        ``(spec, checks, invalid)``: ``spec`` is None when the text does not parse
        (``invalid`` then says where: ``where:line:col``); ``checks`` are the integrity
        checks ``[{"name", "ok", "detail"}]`` (a failed one makes the job ``rejected``).
    """
    text = output
    header = None
    helpers: dict = {}
    clauses: list = []
    try:
        tree, _ = parse(text, where, "start")
        decls = declarations(text, where, tree)
        methods = [d for d in decls if d.kind in ("method", "lemma")]
        if not methods:
            raise TaskFileError(f"{where}:1:1: no method header")
        header = next((d for d in methods if d.name == task.method.name), methods[0])
        clauses = [c for c in header.clauses if c.kind in ("requires", "ensures")]
        helpers = {d.name: d for d in decls if d.kind in ("function", "predicate")}
    except TaskFileError:
        try:
            tree, _ = parse(text, where, "spec_list")
        except TaskFileError as exc:
            return None, token_checks(text), str(exc)
        import lark

        for node in tree.children:
            if not isinstance(node, lark.Tree):
                continue
            if node.data == "function_decl":
                d = _decl(text, node)
                helpers[d.name] = d
            elif node.data in ("requires", "ensures"):
                clauses.append(_clause(text, node))
    if not any(c.kind == "ensures" for c in clauses):
        return None, token_checks(text), f"{where}:1:1: the candidate has no ensures clause"
    spec = Spec(tuple(clauses), helpers, header, text)
    return spec, integrity_checks(spec, task), None


def integrity_checks(spec: Spec, task: Task) -> list[dict]:
    """The fail-closed checks of a candidate: no ``assume``, no ``{:axiom}``/``{:verify
    false}``/``{:extern}`` (tokens of the candidate text: comments and strings do not
    count), no ``requires false``, and the method header (when given) equal to the task's
    (name, parameter and result names and types)."""
    checks = token_checks(spec.text)
    false_req = [c for c in spec.clauses if c.kind == "requires" and _strip_parens(c.expr) == "false"]
    checks.append({"name": "no-requires-false", "ok": not false_req,
                   "detail": (f"line {false_req[0].line}: {false_req[0].text}" if false_req
                              else "no precondition is the literal false")})
    if spec.header is not None:
        want = _signature(task.method)
        got = _signature(spec.header)
        checks.append({"name": "signature-unchanged", "ok": got == want,
                       "detail": "the method header equals the task's" if got == want
                       else f"changed signature: {got} (task: {want})"})
    return checks


def token_checks(text: str) -> list[dict]:
    """The token-level integrity check (``assume``, ``{:axiom}``, ``{:verify false}``,
    ``{:extern}`` outside comments and strings), done even on text that does not parse.
    Text the grammar's lexer cannot read fails the check (fail closed)."""
    import lark

    found = []
    try:
        toks = _lex(text)
    except lark.exceptions.LarkError as exc:
        return [{"name": "no-assume-axiom-verify-false", "ok": False,
                 "detail": f"the text cannot be lexed, so it cannot be checked: {str(exc).splitlines()[0]}"}]
    for i, t in enumerate(toks):
        if t.type == "NAME" and str(t) == "assume":
            found.append(f"line {t.line}: assume")
        if str(t) == "{:" and i + 1 < len(toks) and str(toks[i + 1]) in FORBIDDEN_ATTRIBUTES:
            attr = str(toks[i + 1])
            if attr != "verify" or (i + 2 < len(toks) and str(toks[i + 2]) == "false"):
                found.append(f"line {t.line}: {FORBIDDEN_ATTRIBUTES[attr]}")
    return [{"name": "no-assume-axiom-verify-false", "ok": not found,
             "detail": "; ".join(found) if found else "no assume, {:axiom}, {:verify false} or {:extern}"}]


def _strip_parens(expr: str) -> str:
    e = " ".join(expr.split())
    while e.startswith("(") and e.endswith(")"):
        e = e[1:-1].strip()
    return e


def _signature(d: Decl) -> str:
    p = ", ".join(f"{f.name}: {f.type}" for f in d.params)
    r = ", ".join(f"{f.name}: {f.type}" for f in d.returns)
    return f"method {d.name}({p}) returns ({r})"


def bundled_spec(task: Task) -> Spec:
    """The specification in the task file itself (the GPT-4 generation or the authors'),
    as a candidate: the method's requires/ensures clauses, with the file's helpers."""
    text = "\n".join(c.text for c in task.spec)
    return Spec(task.spec, {}, None, text)


def helper_closure(spec: Spec, task: Task) -> list[Decl]:
    """The predicates/functions the specification uses, transitively, in file order (the
    candidate's own declarations replace the task file's of the same name)."""
    pool = dict(task.helpers)
    pool.update(spec.helpers)
    need: set[str] = set()
    todo = [n for c in spec.clauses for n in c.names]
    while todo:
        n = todo.pop()
        if n in pool and n not in need:
            need.add(n)
            todo.extend(pool[n].names - {n})
    order = list(task.helpers) + [n for n in spec.helpers if n not in task.helpers]
    return [pool[n] for n in order if n in need]


# ---------------------------------------------------------------------------------------
# Mutation (paper, Section II-A), seeded
# ---------------------------------------------------------------------------------------

def test_seed(seed: int, task_id: str, test_index: int) -> int:
    """The RNG seed of one test's mutants: the first 8 bytes (big-endian) of
    sha256("verikit/dafny-intent/<seed>/<task_id>/<test>"). Independent of task order and
    of which other tasks run, so a task's mutants depend only on (seed, task, test)."""
    h = hashlib.sha256(f"verikit/dafny-intent/{seed}/{task_id}/{test_index}".encode()).digest()
    return int.from_bytes(h[:8], "big")


def random_value(ty: Ty, rng: random.Random):
    """A random value of ``ty`` for an insertion: integers in :data:`INSERT_RANGE` (as the
    reference script); other types (an extension of the paper's integer-only operator):
    booleans, lowercase letters, one-letter strings, reals with integer values, sequences
    of 0-3 such values, tuples component-wise."""
    if ty.is_int:
        hi = INSERT_RANGE[1]
        m = re.fullmatch(r"bv(\d+)", ty.name)
        if m:
            hi = min(hi, 2 ** int(m.group(1)) - 1)
        return rng.randint(INSERT_RANGE[0], hi)
    if ty.name == "bool":
        return rng.choice([False, True])
    if ty.name == "real":
        return Decimal(rng.randint(*INSERT_RANGE))
    if ty == CHAR:
        return Char(rng.choice(ALPHABET))
    if ty.name == "seq" and ty.args == (CHAR,):
        return rng.choice(ALPHABET)
    if ty.name in ("seq", "array") and ty.args:
        items = tuple(random_value(ty.args[0], rng) for _ in range(rng.randint(0, 3)))
        return Arr(items) if ty.name == "array" else items
    if ty.name == "tuple":
        return Tup(tuple(random_value(t, rng) for t in ty.args))
    raise ValueError_(f"no random values of type {ty}")


def mutate(value, ty: Ty, rng: random.Random):
    """One draw of the paper's output mutation operators (Section II-A):

    - bool: flipped;
    - integers (int, nat, bvN): a random k in 1..10 added or subtracted (rng.randint(1, 10),
      then rng.choice([True, False]): True adds);
    - strings: a random lowercase letter, then rng.choice(["replace", "append"]) (an empty
      string is appended to): replace puts it at rng.randrange(len) ;
    - integer arrays and sequences: rng.choice(["drop", "insert"]) (empty: insert); drop
      removes the element at rng.randrange(len); insert puts :func:`random_value` at
      rng.randint(0, len) (so appending is possible, unlike the reference script);

    and, outside the paper's types (extensions, reported as such): reals like integers;
    chars replaced by a random letter; sequences and arrays of other element types with
    drop/insert; tuples: one component (rng.randrange) mutated.
    """
    if ty.name == "bool":
        return not value
    if ty.is_int or ty.name == "real":
        k = rng.randint(1, 10)
        up = rng.choice([True, False])
        k = Decimal(k) if ty.name == "real" else k
        return value + k if up else value - k
    if ty == CHAR:
        return Char(rng.choice(ALPHABET))
    if ty.name == "seq" and ty.args == (CHAR,):
        c = rng.choice(ALPHABET)
        op = "append" if not value else rng.choice(["replace", "append"])
        if op == "append":
            return value + c
        pos = rng.randrange(len(value))
        return value[:pos] + c + value[pos + 1:]
    if ty.name in ("seq", "array") and ty.args:
        items = list(value.items if isinstance(value, Arr) else value)
        op = "insert" if not items else rng.choice(["drop", "insert"])
        if op == "drop":
            del items[rng.randrange(len(items))]
        else:
            pos = rng.randint(0, len(items))
            items.insert(pos, random_value(ty.args[0], rng))
        return Arr(tuple(items)) if ty.name == "array" else tuple(items)
    if ty.name == "tuple":
        i = rng.randrange(len(ty.args))
        items = list(value.items)
        items[i] = mutate(items[i], ty.args[i], rng)
        return Tup(tuple(items))
    raise ValueError_(f"no mutation operator for type {ty}")


PAPER_TYPES = ("bool", "int", "nat", "string", "seq<int>", "array<int>")


def paper_type(ty: Ty) -> bool:
    """True when the paper's operators cover ``ty`` (booleans, integers, strings, integer
    arrays and sequences); other output types use this kit's extensions."""
    return ty.name == "bool" or ty.is_int or (ty.name == "seq" and ty.args == (CHAR,)) or (
        ty.name in ("seq", "array") and len(ty.args) == 1 and ty.args[0].is_int)


def _key(values: tuple, types) -> str:
    return "|".join(render(v, t) for v, t in zip(values, types))


def mutants(task: Task, test: TestCase, seed: int) -> dict:
    """Up to :data:`MUTANTS_PER_TEST` distinct output mutants of one test.

    With several out-parameters one of them (rng.randrange) is mutated per draw. A draw is
    discarded, and another one made, when it equals the expected output or an alternative
    output the test accepts (a mutant equal to an allowed output must not count against the
    specification), repeats an earlier mutant, or is not a value of the output type (e.g. a
    negative ``nat``); at most :data:`MAX_DRAWS` draws.

    Returns ``{"seed": test seed, "mutants": [output tuples], "discarded": {"allowed": n,
    "duplicate": n, "ill-typed": n}, "draws": n}``.
    """
    types = [r.type for r in task.method.returns]
    rng = random.Random(test_seed(seed, task.task_id, test.index))
    allowed = {_key(test.outputs, types)} | {_key(a, types) for a in test.alternatives}
    seen: set[str] = set()
    out: list = []
    discarded = Counter()
    draws = 0
    while len(out) < MUTANTS_PER_TEST and draws < MAX_DRAWS:
        draws += 1
        i = rng.randrange(len(types)) if len(types) > 1 else 0
        vals = list(test.outputs)
        try:
            vals[i] = coerce(mutate(vals[i], types[i], rng), types[i], "mutant")
        except ValueError_:
            discarded["ill-typed"] += 1
            continue
        k = _key(tuple(vals), types)
        if k in allowed:
            discarded["allowed"] += 1
        elif k in seen:
            discarded["duplicate"] += 1
        else:
            seen.add(k)
            out.append(tuple(vals))
    return {"seed": test_seed(seed, task.task_id, test.index), "mutants": out,
            "discarded": {k: discarded.get(k, 0) for k in ("allowed", "duplicate", "ill-typed")}, "draws": draws}


# ---------------------------------------------------------------------------------------
# Check methods and files
# ---------------------------------------------------------------------------------------

#: Elements of an input or output sequence/array asserted one by one after it is fixed (the
#: reference script's "redundant asserts" for arrays, which give the solver the terms that
#: trigger quantifiers; here for sequences too), at most this many per value.
MAX_HINTS = 64


def _constraints(expr: str, value, ty: Ty) -> list[str]:
    """Boolean Dafny expressions fixing ``expr`` (a parameter) to ``value``."""
    if ty.name == "array" and ty.args:
        if ty.args[0].name == "array":
            out = [f"{expr}.Length == {len(value.items)}"]
            for i, v in enumerate(value.items):
                out += _constraints(f"{expr}[{i}]", v, ty.args[0])
            return out
        return [f"{expr}[..] == {render(tuple(value.items), Ty('seq', ty.args))}"]
    if ty.name == "seq" and ty.args and ty.args[0].name == "array":
        out = [f"|{expr}| == {len(value)}"]
        for i, v in enumerate(value):
            out += _constraints(f"{expr}[{i}]", v, ty.args[0])
        return out
    return [f"{expr} == {render(value, ty)}"]


def _hints(expr: str, value, ty: Ty) -> list[str]:
    if ty.name in ("seq", "array") and ty.args and not (ty.name == "seq" and ty.args[0].name == "array"):
        items = value.items if isinstance(value, Arr) else value
        elem = ty.args[0]
        if elem.name == "array":
            return []
        return [f"{expr}[{i}] == {render(Char(v) if isinstance(v, str) and elem == CHAR else v, elem)}"
                for i, v in enumerate(items[:MAX_HINTS])]
    return []


@dataclass(frozen=True)
class Check:
    """One generated method: ``method`` (its name), ``kind`` (``correct``, ``mutant``,
    ``smoke``, ``probe``), ``test`` (1-based test index), ``n`` (mutant number, 1-based;
    0 otherwise) and ``value`` (the output assigned, as Dafny text)."""

    method: str
    kind: str
    test: int
    n: int
    value: str

    def to_json(self) -> dict:
        return {"method": self.method, "kind": self.kind, "test": self.test, "n": self.n, "value": self.value}


def render_check(task: Task, spec: Spec, check: Check, test: TestCase, outputs: tuple | None,
                 *, dialect: str) -> str:
    """The Dafny method of one check: the task's signature under the check's name, the
    candidate's requires/ensures clauses, and a body that assumes the test inputs (and
    asserts their elements as hints), assigns ``outputs`` (the expected output, a mutant,
    or for a smoke check the expected output followed by ``assert false;``).

    ``dialect`` ``"2"`` (Dafny 2.x/3.x) or ``"4"``: both accept ``assume {:axiom}``."""
    m = task.method
    params = ", ".join(f"{f.name}: {f.type_text}" for f in m.params)
    rets = ", ".join(f"{f.name}: {f.type_text}" for f in m.returns)
    lines = [f"method {check.method}({params})" + (f" returns ({rets})" if rets else "")]
    lines += ["  " + c.text for c in spec.clauses]
    lines.append("{")
    for f, v in zip(m.params, test.inputs):
        for c in _constraints(f.name, v, f.type):
            lines.append(f"  assume {{:axiom}} {c};")
    for f, v in zip(m.params, test.inputs):
        for h in _hints(f.name, v, f.type):
            lines.append(f"  assert {h};")
    for f, v in zip(m.returns, outputs or ()):
        lines.append(f"  {f.name} := {render(v, f.type)};")
    for f, v in zip(m.returns, outputs or ()):
        for h in _hints(f.name, v, f.type):
            lines.append(f"  assert {h};")
    if check.kind == "smoke":
        lines.append("  assert false;  // must fail: it verifies only if the assumptions are inconsistent")
    lines.append("}")
    return "\n".join(lines)


def adapt_helper(d: Decl, dialect: str) -> str:
    """A helper's text for the dialect: Dafny 2/3 functions are ghost by default and reject
    ``ghost function``/``ghost predicate`` (dropped: same meaning); Dafny 4 rejects
    ``function method``/``predicate method`` (becomes ``function``/``predicate``)."""
    text = d.text
    a, b = d.keyword_span
    kw = " ".join(text[a:b].split())
    if dialect == "2" and kw.startswith("ghost "):
        kw = kw[len("ghost "):]
    if dialect == "4" and kw.endswith(" method"):
        kw = kw[: -len(" method")]
    return text[:a] + kw + text[b:]


def build_files(task: Task, spec: Spec, seed: int, dialect: str) -> dict:
    """Every check of (task, candidate) as Dafny text.

    Per test: ``VkT<t>Correct`` (the expected output), ``VkT<t>Smoke`` (expected output
    then ``assert false``: verifies only when the inputs contradict the precondition or
    the assumptions are inconsistent), ``VkT<t>Mutant<k>`` (the seeded mutants), and for
    the tasks of :data:`PAPER_PROBES` ``VkT<t>Probe<k>`` (the outputs the paper names).

    Returns ``{"files": {path: text}, "batch": "batch.dfy", "separate": [paths], "units":
    {path: [[method, first line, last line], ...]}, "checks": [Check.to_json()],
    "mutation": [{"test", "seed", "discarded", "draws", "mutants"}], "helpers": [names]}``.
    """
    helpers = helper_closure(spec, task)
    head = (f"// verikit {NAME} v{VERSION}: task {task.task_id} ({task.path}), method {task.method.name}; "
            f"Dafny CLI dialect {dialect}\n")
    helper_text = "\n\n".join(adapt_helper(h, dialect) for h in helpers)
    prefix = head + (helper_text + "\n\n" if helper_text else "")
    types = [r.type for r in task.method.returns]
    methods: list[tuple[Check, str]] = []
    mutation = []
    for t in task.tests:
        methods.append((Check(f"VkT{t.index}Correct", "correct", t.index, 0, _key(t.outputs, types)),
                        render_check(task, spec, Check(f"VkT{t.index}Correct", "correct", t.index, 0, ""), t,
                                     t.outputs, dialect=dialect)))
        smoke = Check(f"VkT{t.index}Smoke", "smoke", t.index, 0, _key(t.outputs, types))
        methods.append((smoke, render_check(task, spec, smoke, t, t.outputs, dialect=dialect)))
        mut = mutants(task, t, seed)
        mutation.append({"test": t.index, "seed": mut["seed"], "discarded": mut["discarded"], "draws": mut["draws"],
                         "mutants": [_key(m, types) for m in mut["mutants"]]})
        for k, m in enumerate(mut["mutants"], 1):
            c = Check(f"VkT{t.index}Mutant{k}", "mutant", t.index, k, _key(m, types))
            methods.append((c, render_check(task, spec, c, t, m, dialect=dialect)))
        for k, (ti, value) in enumerate([p for p in PAPER_PROBES.get(task.task_id, []) if p[0] == t.index], 1):
            try:
                tree, _ = parse(value, "probe", "value")
                vals = (coerce(evaluate(tree.children[0], {}, "probe"), types[0], "probe"),)
            except (TaskFileError, ValueError_):
                continue
            c = Check(f"VkT{t.index}Probe{k}", "probe", t.index, k, _key(vals, types))
            methods.append((c, render_check(task, spec, c, t, vals, dialect=dialect)))
    files, units = {}, {}
    batch_lines = prefix.count("\n") + 1
    parts, batch_units = [prefix], []
    for c, text in methods:
        start = batch_lines
        end = start + text.count("\n")
        batch_units.append([c.method, start, end])
        parts.append(text + "\n\n")
        batch_lines = end + 2
    files["batch.dfy"] = "".join(parts)
    units["batch.dfy"] = batch_units
    separate = []
    for c, text in methods:
        path = f"checks/{c.method}.dfy"
        start = prefix.count("\n") + 1
        files[path] = prefix + text + "\n"
        units[path] = [[c.method, start, start + text.count("\n")]]
        separate.append(path)
    return {"files": files, "batch": "batch.dfy", "separate": separate, "units": units,
            "checks": [c.to_json() for c, _ in methods], "mutation": mutation,
            "helpers": [h.name for h in helpers]}


# ---------------------------------------------------------------------------------------
# Dataset: tasks, labels, candidates
# ---------------------------------------------------------------------------------------

_LAST_SURVEY: dict = {}


def _path(fetched, rel: str) -> Path:
    if isinstance(fetched, datasets.FetchedDataset):
        if rel in fetched.files:
            return fetched.files[rel]
        if fetched.root is not None:
            return fetched.root / rel
        raise TaskFileError(f"{rel}: not in the fetched dataset")
    return Path(fetched) / rel


def _test_files(fetched) -> list[str]:
    if isinstance(fetched, datasets.FetchedDataset):
        rels = [p for p in fetched.files if p.startswith(TEST_DIR + "/") and p.endswith(".dfy")]
    else:
        rels = [f"{TEST_DIR}/{p.name}" for p in (Path(fetched) / TEST_DIR).glob("task_id_*.dfy")]
    return sorted(rels, key=lambda r: int(re.search(r"task_id_(\d+)\.dfy$", r).group(1)))


def read_labels(fetched) -> dict[str, dict]:
    """The RQ3 GPT-4 entries by task id: ``{"label": STRONG|WEAK|WRONG|None, "tags": [...],
    "verified": bool}``. The human label is a tag in ``note`` (INDEX.md): ``[STRONG-POST]``,
    ``[WEAK-POST]``, ``[WRONG]``; entries with none of them are unlabelled.

    Raises:
        TaskFileError: the file is not the expected JSON list (names the file and entry).
    """
    path = _path(fetched, RQ3_JSON)
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise TaskFileError(f"{path}: not JSON: {exc}") from None
    if not isinstance(entries, list):
        raise TaskFileError(f"{path}: expected a JSON list of generations")
    out = {}
    for i, e in enumerate(entries):
        if not isinstance(e, dict) or "task_id" not in e:
            raise TaskFileError(f"{path}: entry {i}: no task_id")
        tags = re.findall(r"\[([A-Z0-9_-]+)\]", e.get("note") or "")
        label = ("WRONG" if "WRONG" in tags else "STRONG" if "STRONG-POST" in tags
                 else "WEAK" if "WEAK-POST" in tags else None)
        out[str(e["task_id"])] = {"label": label, "tags": tags, "verified": bool(e.get("isVerified"))}
    return out


def survey(fetched) -> tuple[list[Task], list[Skipped]]:
    """Every test program of the dataset: the tasks the kit evaluates and the programs it
    skips, each with its reason (``path:line: ...``) and category."""
    labels = read_labels(fetched)
    tasks, skipped = [], []
    for rel in _test_files(fetched):
        tid = re.search(r"task_id_(\d+)\.dfy$", rel).group(1)
        text = _path(fetched, rel).read_text(encoding="utf-8")
        info = labels.get(tid)
        r = read_task(text, rel, tid, source="gpt-4" if info else "human", label=info["label"] if info else None)
        (tasks if isinstance(r, Task) else skipped).append(r)
    _LAST_SURVEY.clear()
    _LAST_SURVEY.update({"programs": len(tasks) + len(skipped), "tasks": [t.task_id for t in tasks],
                         "skipped": [{"task_id": s.task_id, "path": s.path, "category": s.category,
                                      "reason": s.reason} for s in skipped],
                         "notes": {t.task_id: list(t.notes) for t in tasks if t.notes}})
    return tasks, skipped


def load_tasks(fetched) -> list[Task]:
    """The tasks the kit evaluates (see :func:`survey` for the skipped programs)."""
    return survey(fetched)[0]


def gold_candidates(tasks: list[Task], mode: str) -> list:
    """The specifications the dataset's authors wrote (tasks not in the RQ3 GPT-4 file),
    model ``human``."""
    from . import Candidate

    return [Candidate(t.task_id, "human", 0, bundled_spec(t).text, f"gold:{t.path}") for t in tasks
            if t.source == "human"]


def bundled_candidates(fetched, mode: str) -> list:
    """The GPT-4 specifications (the RQ3 generations, as in the test programs), model ``gpt-4``."""
    from . import Candidate

    return [Candidate(t.task_id, "gpt-4", 0, bundled_spec(t).text, f"bundled:{t.path}")
            for t in load_tasks(fetched) if t.source == "gpt-4"]


CANARY_TASK = "17"
#: Known answers and known cheats on task 17 (SquarePerimeter(side: int) returns
#: (perimeter: int), ensures perimeter == 4 * side), run with every run that includes it.
CANARIES = {
    "spec": ("ensures perimeter == 4 * side", ("verified",)),
    "ensures-true": ("ensures true", ("verified",)),
    "wrong": ("ensures perimeter == 3 * side", ("failed",)),
    "syntax": ("ensures perimeter ==", ("invalid",)),
    "assume": ("method SquarePerimeter(side: int) returns (perimeter: int)\n  ensures perimeter == 0\n"
               "{\n  assume false;\n}", ("rejected",)),
    "axiom": ("ensures {:axiom} perimeter == 4 * side", ("rejected",)),
    "verify-false": ("method {:verify false} SquarePerimeter(side: int) returns (perimeter: int)\n"
                     "  ensures perimeter == 4 * side", ("rejected",)),
    "requires-false": ("requires false\nensures perimeter == 0", ("rejected",)),
    "changed-signature": ("method SquarePerimeter(side: int, k: int) returns (perimeter: int)\n"
                          "  ensures perimeter == k * side", ("rejected",)),
}


def canaries(tasks: list[Task], mode: str) -> list:
    """Canary candidates with their expected verdicts (when the canary task is run)."""
    from . import Candidate

    if not any(t.task_id == CANARY_TASK for t in tasks):
        return []
    return [(Candidate(CANARY_TASK, f"canary:{n}", 0, text, "canary"), exp) for n, (text, exp) in CANARIES.items()]


def smoke_tests(mode: str) -> bool:
    """Not a Frama-C benchmark: the smoke checks are the benchmark's own methods."""
    return False


def study_results(fetched) -> dict:
    """No per-candidate published verdicts."""
    return {}


def verifier_for(mode: str) -> str:
    """The verifier of every mode: ``dafny``."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; choose from {', '.join(MODES)}")
    return VERIFIER


SEEDED = True  # the run's --seed also seeds the mutants (recorded in run.json seeds)


@dataclass
class Context:
    """Per-run data for job construction: the mutation ``seed`` (recorded in every job's
    options and in the report)."""

    seed: int


def context(fetched, tasks: list[Task], mode: str, verifier, seed: int | None = None) -> Context:
    """The :class:`Context` of a run (mutation seed: the run's ``--seed``, else
    :data:`DEFAULT_SEED`)."""
    return Context(seed=int(DEFAULT_SEED if seed is None else seed))


ADAPTATION = {"spec": {
    "target": "Dafny >= 4.6, `dafny verify --allow-warnings` (paper; reference script)",
    "runs_on": "Dafny 2.3.0 (Debian bookworm package) with Z3 4.8.12, CLI dialect 2 "
               "(`dafny /compile:0 /timeLimit /rlimit /xml`)",
    "helpers": "`ghost function`/`ghost predicate` written as `function`/`predicate` for Dafny 2/3 "
               "(ghost by default there); nothing else is rewritten",
    "method_bodies": "not used: each check method has the task's signature and the candidate's "
                     "requires/ensures, and a body generated from one test",
}}


def build_job(task: Task, cand, mode: str, options: dict, dataset: dict, ctx: Context | None = None):
    """The job checking candidate ``cand`` on ``task``: every check method in ``batch.dfy``
    (and each alone in ``checks/<method>.dfy`` for the fallback), the integrity checks, and
    the mutation record (seed, per-test seeds, discarded draws) in the options."""
    from ..executor import Job, sha256_text

    seed = ctx.seed if ctx is not None else DEFAULT_SEED
    spec, checks, invalid = read_candidate(cand.output, task, cand.origin)
    opts = dict(options, mutation_seed=seed)
    precheck = None
    files: dict = {}
    if spec is None:
        precheck = ("invalid", f"the candidate does not parse: {invalid}")
        files = {"candidate.txt": cand.output}
    else:
        b = build_files(task, spec, seed, options.get("dialect", "2"))
        files = b["files"]
        opts.update(units=b["units"], batch=b["batch"], separate=b["separate"], checks=b["checks"],
                    mutation=b["mutation"], helpers=b["helpers"], method=task.method.name)
    opts.update(label=task.label, source=task.source)
    failed = [c for c in checks if not c["ok"]]
    reject = "; ".join(f"{c['name']}: {c['detail']}" for c in failed) or None
    if reject and precheck is not None:
        precheck = ("rejected", f"{reject} (and the candidate does not parse: {invalid})")
    return Job(benchmark=NAME, benchmark_version=VERSION, dataset=dataset, mode=mode, task_id=task.task_id,
               task_sha256=task.sha256,
               candidate={"model": cand.model, "sample": cand.sample, "sha256": sha256_text(cand.output),
                          "origin": cand.origin},
               files=files, options=opts, checks=checks, precheck=precheck, reject=reject)


# ---------------------------------------------------------------------------------------
# Metrics
# ---------------------------------------------------------------------------------------

UNDECIDED = ("timeout", "out_of_resource", "unknown", "not_run", "invalid")


def score_checks(checks: list[dict], goal_results: list[dict]) -> dict:
    """Correctness and completeness of one (task, candidate) from its per-method results.

    - A test is correct when its ``Correct`` method verified and its ``Smoke`` method did
      not (a verified smoke check means the precondition excludes the test input or the
      assumptions are inconsistent: the test is ``vacuous`` and not counted as correct).
    - A mutant is rejected when its method failed with postcondition violations only; a
      mutant whose check timed out, ran out of resources or could not run is not
      rejected (the paper reads only a verification failure as rejection) and is
      counted as ``undecided``.
    - correctness = correct tests / tests; completeness = rejected / mutants (all tests,
      ``|T2| / |T1|``); ``completeness_if_correct`` is the completeness when every test is
      correct, else None (the paper checks completeness only for correct specifications).

    Returns ``{"tests", "correct", "correctness", "vacuous": [tests], "mutants",
    "rejected", "undecided", "completeness", "completeness_if_correct", "per_test":
    [{"test", "correct", "smoke", "mutants": [{"value", "status", "rejected"}]}],
    "probes": [{"test", "value", "status", "accepted"}]}``.
    """
    res = {g["name"]: g for g in goal_results}
    tests = sorted({c["test"] for c in checks})
    per_test, probes = [], []
    correct = rejected = total = undecided = 0
    vacuous = []
    for t in tests:
        mine = [c for c in checks if c["test"] == t]
        cc = next(c for c in mine if c["kind"] == "correct")
        sm = next((c for c in mine if c["kind"] == "smoke"), None)
        cs = res.get(cc["method"], {}).get("status", "not_run")
        ss = res.get(sm["method"], {}).get("status", "not_run") if sm else None
        ok = cs == "verified" and ss != "verified"
        if cs == "verified" and ss == "verified":
            vacuous.append(t)
        correct += ok
        muts = []
        for c in mine:
            g = res.get(c["method"], {})
            st = g.get("status", "not_run")
            if c["kind"] == "mutant":
                rej = st == "failed" and g.get("failure") == "postcondition"
                total += 1
                rejected += rej
                undecided += st in UNDECIDED
                muts.append({"value": c["value"], "status": st, "rejected": rej})
            elif c["kind"] == "probe":
                probes.append({"test": t, "value": c["value"], "status": st, "accepted": st == "verified"})
        per_test.append({"test": t, "correct": cs, "smoke": ss, "mutants": muts})
    n = len(tests)
    completeness = rejected / total if total else None
    return {"tests": n, "correct": correct, "correctness": correct / n if n else None, "vacuous": vacuous,
            "mutants": total, "rejected": rejected, "undecided": undecided, "completeness": completeness,
            "completeness_if_correct": completeness if n and correct == n else None,
            "per_test": per_test, "probes": probes}


def score(record: dict) -> dict | None:
    """:func:`score_checks` of a result record, or None when the record has no per-method
    results (rejected/invalid before running, infrastructure errors)."""
    checks = record["verifier"]["options"].get("checks")
    if not checks or not record.get("goal_results"):
        return None
    return score_checks(checks, record["goal_results"])


def judge(job, result) -> tuple[str, str]:
    """Verdict of a job: integrity findings win (``rejected``, Dafny's reading noted);
    ``invalid`` when no check method could be verified (the specification does not
    parse or resolve); ``rejected`` when every test is vacuous (the precondition excludes
    all test inputs); ``verified`` when every test's correctness check verified;
    ``failed`` when one failed; ``timeout`` when none failed but one did not finish."""
    if job.reject:
        return "rejected", f"{job.reject} (dafny: {result.verdict}: {result.reason})"
    if result.verdict in ("infra_error", "timeout", "memout", "invalid"):
        return result.verdict, result.reason
    s = score_checks(job.options.get("checks", []), result.goal_results)
    summary = (f"correctness {s['correct']}/{s['tests']}, completeness "
               + (f"{s['rejected']}/{s['mutants']}" if s["mutants"] else "n/a (no mutant)")
               + (f" ({s['undecided']} undecided)" if s["undecided"] else ""))
    statuses = [p["correct"] for p in s["per_test"]]
    if all(st in ("invalid", "not_run") for st in statuses):
        msgs = [m for g in result.goal_results for m in g.get("messages", [])][:3]
        return "invalid", "the specification does not resolve: " + ("; ".join(msgs) or result.reason)
    if s["tests"] and len(s["vacuous"]) == s["tests"]:
        return "rejected", f"vacuous: the precondition excludes every test input (smoke checks verify); {summary}"
    if s["correct"] == s["tests"]:
        return "verified", summary
    bad = [p for p in s["per_test"] if p["correct"] != "verified" or p["test"] in s["vacuous"]]
    if any(p["correct"] == "failed" or p["test"] in s["vacuous"] for p in bad):
        which = ", ".join(f"test {p['test']}: " + ("vacuous" if p["test"] in s["vacuous"] else p["correct"])
                          for p in bad)
        return "failed", f"{summary}; {which}"
    return "timeout", f"{summary}; correctness undecided for " + ", ".join(f"test {p['test']} ({p['correct']})"
                                                                            for p in bad)


def kit_label(s: dict, threshold: float = LABEL_THRESHOLD) -> str | None:
    """The label the metrics give (paper, Section II-B): ``WRONG`` when a correctness check
    fails, else ``STRONG`` when completeness >= ``threshold``, else ``WEAK``; None when
    undecided (no result)."""
    if s is None or s["correctness"] is None:
        return None
    if s["correct"] < s["tests"]:
        return "WRONG"
    if s["completeness"] is None:
        return None
    return "STRONG" if s["completeness"] >= threshold else "WEAK"


def label_agreement(records: list[dict], thresholds=AGREEMENT_THRESHOLDS) -> dict:
    """Agreement of the kit's labels with the human labels of the RQ3 GPT-4 specifications,
    per completeness threshold.

    Returns ``{"labelled": n, "rows": [{"threshold", "agree", "total", "rate", "confusion":
    {"<human>-><kit>": n}}], "strong_weak": [...same restricted to the STRONG/WEAK human
    labels with correct specifications...], "per_task": [{"task_id", "human", "kit",
    "correctness", "completeness"}]}`` (kit labels at :data:`LABEL_THRESHOLD`).
    """
    per_task = []
    for r in records:
        lab = r["verifier"]["options"].get("label")
        if r["candidate"]["model"] != "gpt-4" or lab is None:
            continue
        s = score(r)
        per_task.append({"task_id": r["task_id"], "human": lab, "verdict": r["verdict"],
                         "kit": kit_label(s) if s else None,
                         "correctness": s["correctness"] if s else None,
                         "completeness": s["completeness"] if s else None, "_s": s})
    out_rows, sw_rows = [], []
    for th in thresholds:
        conf: Counter = Counter()
        agree = total = sw_agree = sw_total = 0
        sw_conf: Counter = Counter()
        for p in per_task:
            k = kit_label(p["_s"], th) if p["_s"] else None
            if k is None:
                continue
            total += 1
            agree += k == p["human"]
            conf[f"{p['human']}->{k}"] += 1
            if p["human"] in ("STRONG", "WEAK") and k != "WRONG":
                sw_total += 1
                sw_agree += k == p["human"]
                sw_conf[f"{p['human']}->{k}"] += 1
        out_rows.append({"threshold": th, "agree": agree, "total": total,
                         "rate": round(agree / total, 4) if total else None, "confusion": dict(sorted(conf.items()))})
        sw_rows.append({"threshold": th, "agree": sw_agree, "total": sw_total,
                        "rate": round(sw_agree / sw_total, 4) if sw_total else None,
                        "confusion": dict(sorted(sw_conf.items()))})
    for p in per_task:
        p.pop("_s")
    return {"labelled": len(per_task), "label_threshold": LABEL_THRESHOLD, "rows": out_rows,
            "strong_weak": sw_rows, "per_task": sorted(per_task, key=lambda p: int(p["task_id"]))}



def _scored(records: list[dict]) -> list[dict]:
    return [r for r in records if not r["candidate"]["model"].startswith("canary:")]


def summarize(records: list[dict]) -> dict:
    """Per model: verdict counts and the averages over its tasks: ``avg_correctness``
    (tasks with per-method results), ``avg_completeness`` (tasks with mutants, every
    candidate: the reference script's average), ``avg_completeness_if_correct`` (only the
    tasks whose correctness is 1: the paper's rule), ``fully_correct`` tasks, mutant totals."""
    by_model: dict = defaultdict(list)
    for r in _scored(records):
        by_model[r["candidate"]["model"]].append(r)
    out = {}
    for model, rs in sorted(by_model.items()):
        ss = [s for s in (score(r) for r in rs) if s is not None]
        corr = [s["correctness"] for s in ss if s["correctness"] is not None]
        comp = [s["completeness"] for s in ss if s["completeness"] is not None]
        compc = [s["completeness_if_correct"] for s in ss if s["completeness_if_correct"] is not None]
        out[model] = {
            "candidates": len(rs), "verdicts": dict(Counter(r["verdict"] for r in rs)),
            "scored": len(ss), "fully_correct": sum(1 for s in ss if s["tests"] and s["correct"] == s["tests"]),
            "avg_correctness": round(sum(corr) / len(corr), 4) if corr else None,
            "avg_completeness": round(sum(comp) / len(comp), 4) if comp else None,
            "avg_completeness_if_correct": round(sum(compc) / len(compc), 4) if compc else None,
            "tests": sum(s["tests"] for s in ss), "mutants": sum(s["mutants"] for s in ss),
            "rejected": sum(s["rejected"] for s in ss), "undecided": sum(s["undecided"] for s in ss),
            "vacuous_tests": sum(len(s["vacuous"]) for s in ss),
        }
    return out


#: The paper's task-level findings (Sections I-C and II-B) checked by :func:`findings`.
PAPER_FINDINGS = {
    "2": "SharedElements: correct, completeness 0.6; mutants [4] and [5] of test 1 verify (STRONG_SPEC label)",
    "234": "CubeVolume: correctness check fails: the test expects 25 instead of 125 for the cube of 5",
    "240": "ReplaceLastElement: correctness check fails: wrong expected output copied from Python",
    "445": "MultiplyElements: correctness check fails: 32 replaced by 31 in an expected output",
    "572": "RemoveDuplicates: WRONG specification, the correctness check fails",
    "61": "countSubstrings: WEAK specification (count >= 0), low completeness",
    "145": "maxAbsDiff: labelled STRONG but weaker than the precise specification",
    "161": "removeElements: labelled STRONG but weaker than the precise specification",
}


def findings(records: list[dict]) -> dict:
    """For each task of :data:`PAPER_FINDINGS`: the paper's statement and what this run
    shows (verdict, correctness per test with the expected output of failing tests,
    completeness, the probes of task 2), for the GPT-4 specification (or any candidate
    when the task is not in the run)."""
    by_task = {}
    for r in _scored(records):
        if r["task_id"] in PAPER_FINDINGS and (r["task_id"] not in by_task or r["candidate"]["model"] == "gpt-4"):
            by_task[r["task_id"]] = r
    out = {}
    for tid, claim in PAPER_FINDINGS.items():
        r = by_task.get(tid)
        if r is None:
            out[tid] = {"paper": claim, "kit": None, "note": "task not in this run (skipped or filtered)"}
            continue
        s = score(r)
        checks = {c["method"]: c for c in r["verifier"]["options"].get("checks", [])}
        failing = []
        if s:
            for p in s["per_test"]:
                if p["correct"] != "verified" or p["test"] in s["vacuous"]:
                    c = checks.get(f"VkT{p['test']}Correct", {})
                    failing.append({"test": p["test"], "status": p["correct"], "expected_output": c.get("value")})
        out[tid] = {"paper": claim, "model": r["candidate"]["model"], "verdict": r["verdict"], "reason": r["reason"],
                    "label": r["verifier"]["options"].get("label"),
                    "correctness": s["correctness"] if s else None,
                    "completeness": s["completeness"] if s else None,
                    "failing_tests": failing, "probes": s["probes"] if s else []}
    return out


def report_sections(records: list[dict], tasks: list[Task], modes: list[str], *, seed: int = 0) -> dict:
    """``report.json`` ``sections``: ``metrics`` (per model), ``labels`` (agreement with the
    human labels per threshold), ``findings`` (the paper's task-level statements),
    ``coverage`` (programs handled and skipped with reasons), ``mutation`` (seed and
    discarded draws), ``adaptation``."""
    mseeds = sorted({r["verifier"]["options"].get("mutation_seed") for r in records
                     if r["verifier"]["options"].get("mutation_seed") is not None})
    disc = Counter()
    for r in _scored(records):
        for m in r["verifier"]["options"].get("mutation", []):
            disc.update(m["discarded"])
    fallback = sum(1 for r in records if r["verifier"].get("extra", {}).get("fallback"))
    cov = dict(_LAST_SURVEY) if _LAST_SURVEY else {}
    if cov:
        cov["handled"] = len(cov.get("tasks", []))
        cov["skipped_by_category"] = dict(Counter(s["category"] for s in cov.get("skipped", [])))
    return {"metrics": summarize(records), "labels": label_agreement(records), "findings": findings(records),
            "coverage": cov,
            "mutation": {"seed": mseeds[0] if len(mseeds) == 1 else mseeds, "per_test": MUTANTS_PER_TEST,
                         "discarded": dict(disc), "operators": "paper Section II-A; extensions for other types"},
            "batching": {"jobs_with_fallback": fallback},
            "adaptation": ADAPTATION["spec"]}


def run_notes(records: list[dict], modes: list[str]) -> list[str]:
    """Notes for report.json."""
    notes = ["Dafny 4.6 (the paper's version) cannot be installed here: checks run with Dafny 2.3.0 "
             "(run.json 'adaptation'); per-method results, not only the final count"]
    m = summarize(records)
    for model, v in m.items():
        notes.append(f"{model}: {v['scored']} task(s) scored, average correctness {v['avg_correctness']}, "
                     f"average completeness {v['avg_completeness']} (if correct: {v['avg_completeness_if_correct']})")
    return notes


def compare(records: list[dict], tasks: dict) -> list[dict]:
    """No per-candidate published verdicts: the comparison with the human labels is the
    ``labels`` report section."""
    return []


# ---------------------------------------------------------------------------------------
# Published vs reproduced (`verikit reproduce dafny-intent`)
# ---------------------------------------------------------------------------------------

def load_published() -> dict:
    """``results/published/dafny-intent.json``."""
    from ..report import load_published as _load

    return _load(NAME)


def _figure(fig: dict, reproduced, holds: bool | None, notes: list[str]) -> dict:
    published = {k: fig[k] for k in ("passed", "total", "value", "printed") if k in fig}
    status = "not_reproducible" if holds is None else ("reproduced" if holds else "differs")
    return {"name": fig["name"], "table": fig["table"], "row": fig["row"], "column": fig["column"],
            "criterion": fig.get("criterion"), "published": published, "reproduced": reproduced,
            "equal": holds, "status": status, "notes": notes}


def figures_from_run(report: dict, records: list[dict], published: dict) -> list[dict]:
    """Published vs reproduced for every figure of ``results/published/dafny-intent.json``,
    from a run's report and records. ``status`` is ``reproduced`` when the figure's
    ``criterion`` holds on this run, ``differs`` when it does not (the paper's figures are a
    count and qualitative findings, see the published file's notes)."""
    sec = report["sections"]
    fnd = sec["findings"]
    out = []
    for fig in published["figures"]:
        name = fig["name"]
        if name == "handled":
            cov = sec.get("coverage", {})
            n, tot = cov.get("handled"), cov.get("programs")
            scored = sum(1 for r in _scored(records) if r["candidate"]["model"] in ("gpt-4", "human")
                         and score(r) is not None)
            rep = {"passed": scored, "total": tot, "percent": round(100 * scored / tot, 2) if tot else None}
            notes = [f"{n} of {tot} test programs extracted (method under test, specification, tests); "
                     f"{scored} checked with per-method results; skipped: "
                     + ", ".join(f"{k} {v}" for k, v in sorted(cov.get("skipped_by_category", {}).items()))]
            out.append(_figure(fig, rep, scored >= fig["passed"], notes))
        elif name == "labels.agreement":
            row = next(r for r in sec["labels"]["rows"] if r["threshold"] == LABEL_THRESHOLD)
            rep = {"passed": row["agree"], "total": row["total"],
                   "percent": round(100 * row["rate"], 2) if row["rate"] is not None else None}
            out.append(_figure(fig, rep, row["rate"] is not None and row["rate"] > 0.5,
                               [f"confusion (human->kit): {row['confusion']}"]))
        else:
            tid = name.split(".")[0][len("task"):]
            f = fnd.get(tid, {})
            if f.get("kit") is None and "verdict" not in f:
                out.append(_figure(fig, None, None, [f.get("note", "task not in the run")]))
                continue
            comp, corr = f.get("completeness"), f.get("correctness")
            rep = {"verdict": f["verdict"], "correctness": corr,
                   "completeness": None if comp is None else round(comp, 4)}
            if tid == "2":
                acc = {p["value"]: p["accepted"] for p in f.get("probes", [])}
                rep["probes"] = acc
                holds = (corr == 1 and comp is not None and comp < 1 and acc.get("[4]") is True
                         and acc.get("[5]") is True and acc.get("[6]") is False)
            elif name.endswith("wrong_expected") or name.endswith(".wrong"):
                rep["failing_tests"] = f.get("failing_tests")
                holds = corr is not None and corr < 1
            elif name.endswith(".weak"):
                holds = comp is not None and comp < LABEL_THRESHOLD
            else:
                holds = comp is not None and comp < 1
            out.append(_figure(fig, rep, holds, [f["reason"]]))
    return out


def reproduce(fetched, published: dict | None = None, *, seed: int = DEFAULT_SEED, out: Path | None = None,
              sandbox: str = "container", parallel: int = 1, timeout_s: float = 900.0, console=None) -> dict:
    """Run the bundled specifications (GPT-4 and the authors') with the real Dafny of the
    ``dafny`` image through :func:`harness.runner.run`, then compare with the paper.

    Args:
        fetched: the ``dafny-intent`` dataset; published: the published figures (default
            results/published/dafny-intent.json); seed: the mutation seed (recorded);
        out: run directory (default ``out/reproduce/dafny-intent``); sandbox, parallel,
            timeout_s: as ``verikit run``.

    Returns:
        ``{"benchmark", "figures": [...], "summary": {"reproduced", "differs",
        "not_reproducible"}, "kit": {model: averages}, "labels", "coverage", "findings",
        "run": {"dir", "seed", "exit_code"}, "notes"}`` (figures as in ntp4vc: ``published``,
        ``reproduced``, ``status``, plus the ``criterion`` each is judged by).

    Raises:
        harness.runner.RunError: the run cannot start (no engine or image: the message says
            how to get one).
    """
    from rich.console import Console

    from ..runner import RunOptions, run
    from ..sandbox import Limits

    published = published or load_published()
    out = Path(out) if out is not None else Path("out") / "reproduce" / NAME
    opts = RunOptions(benchmark=NAME, modes=["spec"], sandbox=sandbox, parallel=parallel,
                      limits=Limits(wall_s=timeout_s), out=out, seed=seed,
                      command=["verikit", "reproduce", NAME, "--seed", str(seed)])
    report, manifest, code = run(opts, console or Console(stderr=True))
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines() if line.strip()]
    figs = figures_from_run(report, records, published)
    counts = Counter(f["status"] for f in figs)
    sec = report["sections"]
    kit = sec["metrics"]
    notes = [f"{m}: {v['scored']} specification(s) checked, average correctness {v['avg_correctness']}, "
             f"average completeness {v['avg_completeness']} (tasks with correctness 1: "
             f"{v['avg_completeness_if_correct']}), {v['mutants']} mutants, {v['undecided']} undecided"
             for m, v in kit.items()]
    row = next(r for r in sec["labels"]["rows"] if r["threshold"] == LABEL_THRESHOLD)
    notes.append(f"human labels (RQ3 GPT-4): {row['agree']}/{row['total']} agree at threshold {LABEL_THRESHOLD}; "
                 "other thresholds: " + ", ".join(f"{r['threshold']}: {r['agree']}/{r['total']}"
                                                  for r in sec["labels"]["rows"]))
    for s in sec.get("coverage", {}).get("skipped", []):
        notes.append(f"skipped task {s['task_id']} ({s['category']}): {s['reason'][:300]}")
    notes.append(f"mutation seed {seed}; Dafny {manifest['toolchains'][0]['tools'].get('dafny', {}).get('version')} "
                 f"(the paper: Dafny >= 4.6); run directory {out}")
    return {"benchmark": NAME, "version": VERSION, "source": published.get("source"), "figures": figs,
            "summary": {"reproduced": counts["reproduced"], "differs": counts["differs"],
                        "not_reproducible": counts["not_reproducible"],
                        "all_reproducible_equal": counts["differs"] == 0},
            "kit": kit, "labels": sec["labels"], "coverage": sec.get("coverage"), "findings": sec["findings"],
            "run": {"dir": str(out), "seed": seed, "exit_code": code, "manifest": "run.json"},
            "dataset": fetched.provenance() if isinstance(fetched, datasets.FetchedDataset) else None,
            "notes": notes}
