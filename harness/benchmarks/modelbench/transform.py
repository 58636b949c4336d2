"""Model-Bench's code transformation (Section 3.2): Python -> a state machine with a ``pc``
variable.

Deterministic: the function's body becomes a control-flow graph of basic blocks
(if/else, while/for, break/continue and return end a block), each block gets a number,
and the function is rewritten as::

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
lists of code points (:mod:`.lowering`). Whatever the transformer cannot lower exactly
(string methods, f-strings, strings inside containers or passed to other calls,
try/with/match, nested functions) raises :class:`TransformError`: the problem is dropped
at the Execution stage.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass, field

from .lowering import (
    CHAR,
    OTHER,
    STR,
    Lowering,
    TransformError,
    is_none,
    is_str_annotation,
)

__all__ = ["END_PC", "Block", "TransformError", "transform", "transform_function"]

#: The ``pc`` value that ends the state machine.
END_PC = -1


@dataclass
class Block:
    """A basic block: ``id``, straight-line ``stmts`` and a terminator ``term``:
    ``("goto", target)`` or ``("cond", test, if_true, if_false)`` (targets are block ids
    or :data:`END_PC`)."""

    id: int
    stmts: list = field(default_factory=list)
    term: tuple | None = None


class _CFG:
    def __init__(self, low: Lowering, str_result: bool):
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
                if self.str_result and t == OTHER and not is_none(value):
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
    low = Lowering(fn)
    str_params = [a.arg for a in fn.args.args + fn.args.posonlyargs + fn.args.kwonlyargs
                  if is_str_annotation(a.annotation)]
    returns = [low.type_of(r.value) for r in ast.walk(fn) if isinstance(r, ast.Return) and r.value is not None
               and not is_none(r.value)]
    str_result = bool(returns) and all(t in (STR, CHAR) for t in returns)
    if fn.returns is not None and is_str_annotation(fn.returns):
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
