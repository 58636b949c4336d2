"""Candidates: a specification for a task's method read from a model's output (or the
task file's own), the fail-closed integrity checks on it (docs.md beside this module,
"Integrity (fail closed)"), and the helper predicates/functions it needs."""

from __future__ import annotations

from dataclasses import dataclass

from .grammar import Decl, TaskFileError, clause_of, decl_of, declarations, parse
from .outline import UNREAD, outline, tokens
from .tests import Task


@dataclass(frozen=True)
class Spec:
    """A candidate specification for a task: its ``requires``/``ensures`` clauses, the
    helper predicates/functions it declares itself (by name), the method header it gave
    (or None), the text it came from, and its declarations of other kinds (``others``: a
    datatype, a constant, a class...: written into the check files as they are, so that
    Dafny's printed program shows them and its allow-list decides)."""

    clauses: tuple
    helpers: dict
    header: Decl | None
    text: str
    others: tuple = ()


#: Integrity checks (docs.md, "Integrity (fail closed)"): a candidate that uses any of these is
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

#: Declaration kinds a candidate's helper may have in the kit's reading (Dafny's own
#: printed program is judged with its allow-list, :data:`.view.HELPER_KINDS`).
HELPER_DECLS = ("function", "predicate", "function method", "predicate method", "lemma")


#: Names of the kit's generated check methods start with this prefix (``VkT1Correct``,
#: ``VkT1Smoke``, ...): a candidate declaring a name with it is rejected, so that no
#: candidate declaration can collide with (and disable) a check method.
RESERVED_PREFIX = "VkT"


def read_candidate(output: str, task: Task, where: str) -> tuple[Spec | None, list[dict], str | None]:
    """Read a candidate's output: either specification clauses (``requires``/``ensures``
    lines, optionally with predicate/function declarations they use) or declarations
    including a method header with the task's method name (its clauses are taken).

    The kit's grammar reads the text first; text outside it is outlined from tokens and
    brackets (:func:`.outline.outline`) and left to Dafny to judge: the grammar is a
    pre-filter, never the judge of what Dafny accepts.

    Returns:
        ``(spec, checks, invalid)``: ``spec`` is None when the text cannot be read even
        as an outline, or has no ``ensures`` clause (``invalid`` then says where:
        ``where:line:col``); ``checks`` are the integrity checks ``[{"name", "ok",
        "detail"}]`` (a failed one makes the job ``rejected``), :func:`structure_checks`
        included whenever the text was read.
    """
    try:
        header, clauses, helpers, others, attributes = _read_grammar(output, task, where)
    except TaskFileError:
        try:
            header, clauses, helpers, others, attributes = _read_outline(output, task, where)
        except TaskFileError as exc:
            return None, token_checks(output), str(exc)
    gchecks = structure_checks(attributes, others)
    if not any(c.kind == "ensures" for c in clauses):
        return None, token_checks(output) + gchecks, f"{where}:1:1: the candidate has no ensures clause"
    spec = Spec(tuple(clauses), helpers, header, output,
                tuple(d for d in others if d.kind not in HELPER_DECLS + ("method",)))
    return spec, integrity_checks(spec, task) + gchecks, None


def _split(decls: list, task: Task) -> tuple:
    """``(header, helpers, others)`` of a candidate's declarations: the method header
    (the method or lemma with the task's method name, else the first method: its
    signature is then checked against the task's), the helpers (functions, predicates and
    lemmas but the header, by name) and every declaration but the header."""
    header = next((d for d in decls if d.kind in ("method", "lemma") and d.name == task.method.name),
                  next((d for d in decls if d.kind == "method"), None))
    helpers = {d.name: d for d in decls if d is not header and d.kind in HELPER_DECLS}
    return header, helpers, [d for d in decls if d is not header]


def _read_grammar(text: str, task: Task, where: str) -> tuple:
    """The candidate read with the kit's grammar: ``(header, clauses, helpers, others,
    attributes)`` (``attributes``: ``[(line, name)]`` of every attribute found). Raises
    :class:`TaskFileError` outside the grammar."""
    import lark

    try:
        tree, _ = parse(text, where, "start")
        decls = declarations(text, where, tree)
        header, helpers, others = _split(decls, task)
        if header is None:
            raise TaskFileError(f"{where}:1:1: no method header")
        clauses = [c for c in header.clauses if c.kind in ("requires", "ensures")]
    except TaskFileError:
        tree, _ = parse(text, where, "spec_list")
        header, helpers, others, clauses = None, {}, [], []
        for node in tree.children:
            if not isinstance(node, lark.Tree):
                continue
            if node.data == "function_decl":
                d = decl_of(text, node)
                helpers[d.name] = d
                others.append(d)
            elif node.data in ("requires", "ensures"):
                clauses.append(clause_of(text, node))
    return header, clauses, helpers, others, _tree_attributes(tree)


def _read_outline(text: str, task: Task, where: str) -> tuple:
    """The candidate read as an :class:`.outline.Outline` (text outside the kit's
    grammar): ``(header, clauses, helpers, others, attributes)`` as :func:`_read_grammar`.
    Raises :class:`TaskFileError` when it cannot be outlined."""
    o = outline(text, where)
    header, helpers, others = _split(list(o.decls), task)
    source = header.clauses if header is not None else o.clauses
    return header, [c for c in source if c.kind in ("requires", "ensures")], helpers, others, list(o.attributes)


def _tree_attributes(tree) -> list[tuple[int, str]]:
    """``[(line, name)]`` of every attribute in a Lark tree of a candidate: ``{:name args}``
    in a declaration, clause, quantifier or assertion, and a block ``{ :name ... }`` inside a
    body, whatever the spacing, arguments or parentheses."""
    import lark

    out = []
    for node in tree.iter_subtrees():
        if node.data == "attribute":
            out.append((node.meta.line, str(node.children[0])))
        elif node.data in ("body", "block") and node.children:
            first = node.children[0]
            if isinstance(first, lark.Token) and first.type == "OTHER" and first.startswith(":"):
                nxt = node.children[1] if len(node.children) > 1 else None
                name = str(nxt) if first == ":" and isinstance(nxt, lark.Token) and nxt.type == "NAME" else None
                out.append((first.line, name or str(first)[1:]))
    return out


def structure_checks(attributes: list[tuple[int, str]], decls: list) -> list[dict]:
    """Integrity checks on the kit's reading of a candidate (the grammar's parse, or the
    outline of text outside it):

    - ``allowed-attributes``: every attribute (``attributes``: ``[(line, name)]``) is in
      :data:`ALLOWED_ATTRIBUTES`;
    - ``declarations-have-bodies``: every function, predicate, lemma or method but the
      task method's header has a body (a body-less one is an unproved assumption: Dafny
      trusts its ``ensures``);
    - ``no-reserved-names``: no declaration's name starts with :data:`RESERVED_PREFIX`.

    Which kinds of declaration a candidate may make is not decided here: every declaration
    goes into the check files, and Dafny's printed program of them is judged on the view's
    allow-list (:mod:`.view`: functions and predicates; a datatype, constant, class... is
    not a specification's).

    ``decls``: the declarations other than the task method's header (:class:`Decl`).
    Returns ``[{"name", "ok", "detail"}]``."""
    bad_attr = [f"line {line}: {{:{name} ...}}" for line, name in attributes if name not in ALLOWED_ATTRIBUTES]
    bodiless = [f"line {d.line}: {d.kind} {d.name} has no body" for d in decls
                if d.body is None and d.kind in HELPER_DECLS + ("method",)]
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
    :func:`structure_checks`): no ``assume``, no ``{:axiom}``/``{:verify ...}``/``{:extern}``
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
    ``{:extern}`` outside comments and strings), done on any text (the outline's tokens,
    :func:`.outline.tokens`, which read every text)."""
    found = []
    toks = tokens(text)
    for i, t in enumerate(toks):
        if t.kind == "ident" and t.text == "assume":
            found.append(f"line {t.line}: assume")
        if t.kind == "attr" and i + 1 < len(toks) and toks[i + 1].text in FORBIDDEN_ATTRIBUTES:
            found.append(f"line {t.line}: {FORBIDDEN_ATTRIBUTES[toks[i + 1].text]}")
    return [{"name": "no-assume-axiom-verify-false", "ok": not found,
             "detail": "; ".join(found) if found else "no assume, {:axiom}, {:verify false} or {:extern}"}]


def _strip_parens(expr: str) -> str:
    e = " ".join(expr.split())
    while e.startswith("(") and e.endswith(")"):
        e = e[1:-1].strip()
    return e


def _signature(d: Decl) -> str:
    if [f.name for f in d.params] == [UNREAD]:  # a header the kit's grammar cannot read: quoted as written
        return f"{d.kind} {d.name} with the header {' '.join(d.params[0].type_text.split())!r}"
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
