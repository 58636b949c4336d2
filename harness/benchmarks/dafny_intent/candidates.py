"""Candidates: a specification for a task's method read from a model's output (or the
task file's own), the fail-closed integrity checks on it (DESIGN.md "Integrity"), and
the helper predicates/functions it needs."""

from __future__ import annotations

from dataclasses import dataclass

from .grammar import Decl, TaskFileError, clause_of, decl_of, declarations, lex, parse
from .tests import Task


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
                d = decl_of(text, node)
                helpers[d.name] = d
            elif node.data in ("requires", "ensures"):
                clauses.append(clause_of(text, node))
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
        toks = lex(text)
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
