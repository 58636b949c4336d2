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
#: ``rejected`` whatever Dafny says (also named in the token check of unparsable text).
FORBIDDEN_ATTRIBUTES = {"axiom": "{:axiom} (an unproved assumption)",
                        "verify": "{:verify ...} (switches verification off)",
                        "extern": "{:extern} (a declaration without a definition)"}

#: The only attributes a candidate may carry (anywhere: declarations, clauses, quantifiers,
#: bodies), found in the grammar's parse of the candidate. ``{:trigger}`` and
#: ``{:induction}`` only guide the prover; every other attribute (``{:verify (false)}``,
#: ``{:axiom}``, ``{:extern}``, Boogie pass-through attributes, ...) is rejected: an allow-list,
#: so a spelling the kit does not know is rejected rather than trusted. The MBPP-DFY test
#: programs use no attribute at all.
ALLOWED_ATTRIBUTES = frozenset({"trigger", "induction"})

#: Names of the kit's generated check methods start with this prefix (``VkT1Correct``,
#: ``VkT1Smoke``, ...): a candidate declaring a name with it is rejected, so that no
#: candidate declaration can collide with (and disable) a check method.
RESERVED_PREFIX = "VkT"


def read_candidate(output: str, task: Task, where: str) -> tuple[Spec | None, list[dict], str | None]:
    """Read a candidate's output: either specification clauses (``requires``/``ensures``
    lines, optionally with predicate/function declarations they use) or declarations
    including a method header with the task's method name (its clauses are taken).

    Returns:
        ``(spec, checks, invalid)``: ``spec`` is None when the text does not parse
        (``invalid`` then says where: ``where:line:col``); ``checks`` are the integrity
        checks ``[{"name", "ok", "detail"}]`` (a failed one makes the job ``rejected``),
        :func:`grammar_checks` included whenever the text parses.
    """
    text = output
    header = None
    helpers: dict = {}
    clauses: list = []
    others: list = []
    try:
        tree, _ = parse(text, where, "start")
        decls = declarations(text, where, tree)
        methods = [d for d in decls if d.kind in ("method", "lemma")]
        if not methods:
            raise TaskFileError(f"{where}:1:1: no method header")
        header = next((d for d in methods if d.name == task.method.name), methods[0])
        clauses = [c for c in header.clauses if c.kind in ("requires", "ensures")]
        helpers = {d.name: d for d in decls if d.kind in ("function", "predicate")
                   or (d.kind == "lemma" and d is not header)}
        others = [d for d in decls if d is not header]
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
                others.append(d)
            elif node.data in ("requires", "ensures"):
                clauses.append(clause_of(text, node))
    gchecks = grammar_checks(tree, others)
    if not any(c.kind == "ensures" for c in clauses):
        return None, token_checks(text) + gchecks, f"{where}:1:1: the candidate has no ensures clause"
    spec = Spec(tuple(clauses), helpers, header, text)
    return spec, integrity_checks(spec, task) + gchecks, None


def grammar_checks(tree, decls: list) -> list[dict]:
    """Integrity checks on the grammar's parse of a candidate (the text Dafny will read):

    - ``allowed-attributes``: every attribute (``{:name args}`` in a declaration, clause,
      quantifier or assertion; a block ``{ :name ... }`` inside a body, whatever the
      spacing, arguments or parentheses) is in :data:`ALLOWED_ATTRIBUTES`;
    - ``declarations-have-bodies``: every declaration but the task method's header has a
      body (a body-less function, predicate, lemma or method is an unproved assumption:
      Dafny trusts its ``ensures``);
    - ``no-reserved-names``: no declaration's name starts with :data:`RESERVED_PREFIX`.

    ``tree``: the Lark tree of the candidate; ``decls``: its declarations other than the
    task method's header (:class:`Decl`). Returns ``[{"name", "ok", "detail"}]``."""
    import lark

    bad_attr = []
    for node in tree.iter_subtrees():
        if node.data == "attribute":
            name = str(node.children[0])
            if name not in ALLOWED_ATTRIBUTES:
                bad_attr.append(f"line {node.meta.line}: {{:{name} ...}}")
        elif node.data in ("body", "block") and node.children:
            first = node.children[0]
            if isinstance(first, lark.Token) and first.type == "OTHER" and first.startswith(":"):
                nxt = node.children[1] if len(node.children) > 1 else None
                name = str(nxt) if first == ":" and isinstance(nxt, lark.Token) and nxt.type == "NAME" else None
                if name not in ALLOWED_ATTRIBUTES:
                    bad_attr.append(f"line {first.line}: attribute {{:{name or str(first)[1:]} ...}} in a body")
    bodiless = [f"line {d.line}: {d.kind} {d.name} has no body" for d in decls if d.body is None]
    reserved = [f"line {d.line}: {d.kind} {d.name}" for d in decls if d.name.startswith(RESERVED_PREFIX)]
    return [
        {"name": "allowed-attributes", "ok": not bad_attr,
         "detail": "; ".join(bad_attr) if bad_attr
         else f"no attribute but {', '.join('{:' + a + '}' for a in sorted(ALLOWED_ATTRIBUTES))}"},
        {"name": "declarations-have-bodies", "ok": not bodiless,
         "detail": "; ".join(bodiless) if bodiless else "every helper declaration has a body"},
        {"name": "no-reserved-names", "ok": not reserved,
         "detail": ("; ".join(reserved) + f" (names starting with {RESERVED_PREFIX} are the kit's check methods)")
         if reserved else f"no declared name starts with {RESERVED_PREFIX}"},
    ]


def integrity_checks(spec: Spec, task: Task) -> list[dict]:
    """The fail-closed checks of a candidate's text and clauses (see also
    :func:`grammar_checks`): no ``assume``, no ``{:axiom}``/``{:verify ...}``/``{:extern}``
    (tokens of the candidate text: comments and strings do not count), no ``requires
    false``, and the method header (when given) equal to the task's (name, parameter and
    result names and types)."""
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
    """The token-level integrity check (``assume``, ``{:axiom}``, ``{:verify ...}``,
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
    """The predicates/functions the specification uses, transitively, and every helper the
    candidate declares itself (functions, predicates, lemmas: all verified with the checks),
    in file order (the candidate's own declarations replace the task file's of the same
    name)."""
    pool = dict(task.helpers)
    pool.update(spec.helpers)
    need: set[str] = set()
    todo = [n for c in spec.clauses for n in c.names] + list(spec.helpers)
    while todo:
        n = todo.pop()
        if n in pool and n not in need:
            need.add(n)
            todo.extend(pool[n].names - {n})
    order = list(task.helpers) + [n for n in spec.helpers if n not in task.helpers]
    return [pool[n] for n in order if n in need]
