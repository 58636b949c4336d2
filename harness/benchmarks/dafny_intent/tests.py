"""Test programs: the method under test, its specification and helpers, and the test cases
of an MBPP-DFY-style program (:func:`read_task`), or why a program cannot be used
(:class:`Skipped`, with ``path:line``).

The test forms the MBPP-DFY files use, all read from the test method's parse tree and the
comments around it: ``assert out == V``, ``expect out == V``, ``//assert out == V``,
``print(out)`` followed by ``//expected V`` (also ``// expected``, ``PrintArray(out); //
expected V`` on one line, ``//expeced`` (sic)), with values given inline or through ``var``
declarations, and ``var e<k> := V`` declared with the inputs and never asserted (the JSON
test-case style).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from .grammar import Decl, TaskFileError, declarations, lex, parse, to_type
from .values import ValueError_, coerce, evaluate


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
    """One MBPP-DFY-style test program.

    Attributes:
        task_id: the MBPP task id (``"2"`` for ``task_id_2.dfy``); in a directory of one's
            own programs, the file's path relative to the directory without ``.dfy``.
        path: dataset-relative POSIX path of the file; text: its content; sha256: of the text.
        source: ``gpt-4`` (the file's specification is the RQ3 GPT-4 generation) or
            ``gold`` (not in the RQ3 file: written by the dataset's authors, or by the user
            for a directory of one's own programs; its candidate is the gold one).
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
        tree, _ = parse(text, path)
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
    main_calls = [n for n in _calls(lex(main.body)) if n in by_name]
    specced = {d.name for d in decls if d.kind == "method" and any(c.kind == "ensures" for c in d.clauses)}
    for test_name in main_calls:
        tm = by_name[test_name]
        if tm.body is None:
            continue
        under = [n for n in dict.fromkeys(_calls(lex(tm.body))) if n in specced and n != test_name]
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
    tests, notes, category = _extract_tests(text, path, tm, method)
    if not tests:
        reason = "; ".join(notes) if notes else f"{path}:{tm.line}: the test method {tm.name} has no test"
        return Skipped(task_id, path, reason, category or "no-test")
    return Task(task_id=task_id, path=path, text=text, sha256=sha, source=source, method=method,
                helpers=helpers, tests=tuple(tests), notes=tuple(notes), label=label,
                test_method=tm.name)


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


def _is_var(tree) -> bool:
    import lark

    return isinstance(tree, lark.Tree) and tree.data == "var"


def _op(tree, data: str) -> str | None:
    import lark

    return str(tree.children[0]) if isinstance(tree, lark.Tree) and tree.data == data else None


def _extract_tests(text: str, path: str, tm: Decl, method: Decl) -> tuple[list, list, str | None]:
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
            try:
                vtree, _ = parse(rest, f"{where(line)} (comment)", "value")
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
    return None
