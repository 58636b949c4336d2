"""String lowering of Model-Bench's code transformation (Section 3.2 step 3): strings
become lists of code points.

``str`` parameters are converted on entry, string literals become lists of ints (a
one-character literal compared with a character becomes an int), a character (an index
or loop element of a string) is an int, ``ord``/``chr`` disappear, and a ``str`` result
is converted back on return. Whatever cannot be lowered exactly (string methods,
f-strings, strings inside containers or passed to other calls) raises
:class:`TransformError`.
"""

from __future__ import annotations

import ast
import copy

from .filters import annotation_names


class TransformError(ValueError):
    """The code transformer cannot lower the function exactly (the reason says why)."""


STR, CHAR, OTHER = "str", "char", "other"


def is_str_annotation(node) -> bool:
    """The annotation is plain ``str``."""
    return isinstance(node, ast.Name) and node.id == "str"


def _mentions_str(node) -> bool:
    return node is not None and "str" in annotation_names(node)


class Lowering:
    """Types (str / char / other) of a function's expressions and their lowered form."""

    def __init__(self, fn: ast.FunctionDef):
        self.fn = fn
        self.env: dict[str, str] = {}
        self.dicts: set[str] = set()
        for a in fn.args.args + fn.args.posonlyargs + fn.args.kwonlyargs:
            if is_str_annotation(a.annotation):
                self.env[a.arg] = STR
            elif _mentions_str(a.annotation):
                raise TransformError(f"parameter {a.arg}: strings inside containers are not lowered")
            if isinstance(a.annotation, (ast.Name, ast.Subscript)) and "Dict" in annotation_names(a.annotation) \
                    or (isinstance(a.annotation, ast.Name) and a.annotation.id == "dict"):
                self.dicts.add(a.arg)
        if fn.returns is not None and _mentions_str(fn.returns) and not is_str_annotation(fn.returns):
            if not (isinstance(fn.returns, ast.Subscript) and annotation_names(fn.returns)[:1] == ["Optional"]
                    and is_str_annotation(fn.returns.slice)):
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
            if is_none(operands[i]) or is_none(operands[i + 1]):
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


def is_none(node) -> bool:
    """The expression is the constant ``None``."""
    return isinstance(node, ast.Constant) and node.value is None
