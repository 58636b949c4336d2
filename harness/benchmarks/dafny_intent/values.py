"""Dafny types and test values: the :class:`Ty` of a declaration, the Python value of a
test expression (:func:`evaluate`), its coercion to a parameter's type (:func:`coerce`) and
its Dafny literal (:func:`render`).

Values: ``int``, ``bool``, ``Decimal`` (real), ``str`` (string), :class:`Char`, ``tuple``
(sequence), :class:`Arr` (array contents), :class:`Tup` (tuple). Expressions are the parse
trees of ``dafny.lark`` (module :mod:`.grammar`); this module only walks them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal


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
