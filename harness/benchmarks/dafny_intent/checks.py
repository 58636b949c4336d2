"""Check files: every check of one (task, candidate) as a method of one Dafny file (and of
one file each, for the fallback), with the line range of each method so that the verifier
can attribute Dafny's messages (:func:`build_files`).

A check is a Hoare triple ``{true} x := i; y := o {phi(x, y)}`` written as a method with the
task's signature, the candidate's requires/ensures and a body that assumes the test inputs
and assigns an output (:func:`render_check`): the expected output (correctness), a mutant
(completeness), the expected output followed by ``assert false`` (smoke: vacuous tests),
or an output the paper names (probe).

A mutant's check failing is not evidence that the specification rejects it: Dafny reports
"might not hold" also for a true postcondition its prover cannot prove. Each mutant
therefore has a second method, its refutation (:func:`render_refutation`): the same inputs
and output, and ``assert !(E1 && ... && En)`` over the candidate's ensures clauses. It
verifies only when Dafny proves that the mutant violates the specification: positive
evidence of rejection.
"""

from __future__ import annotations

from dataclasses import dataclass

from .candidates import Spec, helper_closure
from .grammar import Decl, TaskFileError, parse
from .identity import NAME, VERSION
from .mutants import mutants, output_key
from .tests import Task, TestCase
from .values import CHAR, Arr, Char, Ty, ValueError_, coerce, evaluate, render

#: Outputs the paper names for task 2 (Section I-C): ``[4]`` and ``[5]`` are accepted by the
#: GPT-4 specification (completeness 0.6), ``[6]`` is rejected. Checked as extra "probe"
#: methods of that task (not counted in completeness); keyed by the task file's path in the
#: ``dafny-intent`` dataset, so a program of one's own dataset never gets them.
PAPER_PROBES = {"MBPP-DFY-153/test/task_id_2.dfy": [(1, "[4]"), (1, "[5]"), (1, "[6]")]}


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


def _element_literals(value, elem: Ty) -> list[str]:
    """Dafny literals of the elements of a sequence or array ``value`` of element type
    ``elem`` (a string's characters as ``char`` literals)."""
    items = value.items if isinstance(value, Arr) else value
    return [render(Char(v) if isinstance(v, str) and elem == CHAR else v, elem) for v in items]


def _hints(expr: str, value, ty: Ty) -> list[str]:
    if ty.name in ("seq", "array") and ty.args and not (ty.name == "seq" and ty.args[0].name == "array"):
        if ty.args[0].name == "array":
            return []
        return [f"{expr}[{i}] == {lit}" for i, lit in enumerate(_element_literals(value, ty.args[0])[:MAX_HINTS])]
    return []


@dataclass(frozen=True)
class Check:
    """One generated method: ``method`` (its name), ``kind`` (``correct``, ``mutant``,
    ``refute`` (a mutant's refutation), ``smoke``, ``probe``), ``test`` (1-based test
    index), ``n`` (mutant number, 1-based; 0 otherwise) and ``value`` (the output
    assigned, as Dafny text)."""

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


def render_refutation(task: Task, spec: Spec, check: Check, test: TestCase, outputs: tuple, *, dialect: str) -> str:
    """The refutation of one mutant: the check method of :func:`render_check` with the
    candidate's ``requires`` clauses only, and after the output is assigned
    ``assert !((E1) && ... && (En));`` over the expressions of its ``ensures`` clauses. It
    verifies exactly when Dafny proves that no state with these inputs and this output
    satisfies the postcondition (the mutant is rejected on positive evidence)."""
    kept = Spec(tuple(c for c in spec.clauses if c.kind != "ensures"), spec.helpers, spec.header, spec.text,
                spec.others)
    text = render_check(task, kept, check, test, outputs, dialect=dialect)
    post = " && ".join(f"({c.expr})" for c in spec.clauses if c.kind == "ensures")
    head, _, _ = text.rpartition("\n}")
    terms = _membership_terms(task, test, outputs)
    return (head + "".join(f"\n  assert {t} || !({t});" for t in terms)
            + f"\n  assert !({post});  // verifies only if the output violates the postcondition\n}}")


def _membership_terms(task: Task, test: TestCase, outputs: tuple) -> list[str]:
    """``v in r`` for every sequence or array result ``r`` and every element value ``v``
    in which the mutant's ``r`` and the expected one differ (in one and not the other; at
    most :data:`MAX_HINTS`). A refutation asserts each as a tautology (``t || !t``): it
    states nothing, and gives the prover the ground term that triggers the
    specification's quantifiers at the witness (``forall x :: x in result <==> ...`` is
    refuted at the mutant's extra or missing element, which the prover does not invent).
    Only the differing values: a term per element of every sequence makes the prover
    instantiate far more (a string specification's refutations took 6-30 s instead of
    under 0.5 s)."""
    out = []
    for f, got, want in zip(task.method.returns, outputs, test.outputs):
        if f.type.name not in ("seq", "array") or not f.type.args or f.type.args[0].name in ("seq", "array"):
            continue
        a, b = _element_literals(got, f.type.args[0]), _element_literals(want, f.type.args[0])
        diff = [x for x in dict.fromkeys(a + b) if (x in a) != (x in b)]
        expr = f"{f.name}[..]" if f.type.name == "array" else f.name
        out += [f"{lit} in {expr}" for lit in diff[:MAX_HINTS]]
    return out


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
    the assumptions are inconsistent), ``VkT<t>Mutant<k>`` (the seeded mutants) and
    ``VkT<t>Refute<k>`` (their refutations, :func:`render_refutation`), and for
    the tasks of :data:`PAPER_PROBES` ``VkT<t>Probe<k>`` (the outputs the paper names).

    Returns ``{"files": {path: text}, "batch": "batch.dfy", "separate": [paths], "units":
    {path: [[method, first line, last line], ...]}, "checks": [Check.to_json()],
    "mutation": [{"test", "seed", "discarded", "draws", "mutants"}], "helpers": [names],
    "expect": {"helpers": [{"name", "kind", "origin" (candidate/task), "body", "clauses"}],
    "clauses": {kind: n} (the candidate's, in every check method but the refutations),
    "methods": {method: {"kind", "assume": n, "clauses": {kind: n}}}}}`` (``expect``: the
    kit's reading, compared with Dafny's printed program by :mod:`.view`).
    """
    helpers = helper_closure(spec, task)
    head = (f"// verikit {NAME} v{VERSION}: task {task.task_id} ({task.path}), method {task.method.name}; "
            f"Dafny CLI dialect {dialect}\n")
    helper_text = "\n\n".join([adapt_helper(h, dialect) for h in helpers] + [d.text for d in spec.others])
    prefix = head + (helper_text + "\n\n" if helper_text else "")
    types = [r.type for r in task.method.returns]
    methods: list[tuple[Check, str]] = []
    mutation = []
    for t in task.tests:
        methods.append((Check(f"VkT{t.index}Correct", "correct", t.index, 0, output_key(t.outputs, types)),
                        render_check(task, spec, Check(f"VkT{t.index}Correct", "correct", t.index, 0, ""), t,
                                     t.outputs, dialect=dialect)))
        smoke = Check(f"VkT{t.index}Smoke", "smoke", t.index, 0, output_key(t.outputs, types))
        methods.append((smoke, render_check(task, spec, smoke, t, t.outputs, dialect=dialect)))
        mut = mutants(task, t, seed)
        mutation.append({"test": t.index, "seed": mut["seed"], "discarded": mut["discarded"], "draws": mut["draws"],
                         "mutants": [output_key(m, types) for m in mut["mutants"]]})
        for k, m in enumerate(mut["mutants"], 1):
            c = Check(f"VkT{t.index}Mutant{k}", "mutant", t.index, k, output_key(m, types))
            methods.append((c, render_check(task, spec, c, t, m, dialect=dialect)))
            r = Check(f"VkT{t.index}Refute{k}", "refute", t.index, k, output_key(m, types))
            methods.append((r, render_refutation(task, spec, r, t, m, dialect=dialect)))
        for k, (ti, value) in enumerate([p for p in PAPER_PROBES.get(task.path, []) if p[0] == t.index], 1):
            try:
                tree, _ = parse(value, "probe", "value")
                vals = (coerce(evaluate(tree.children[0], {}, "probe"), types[0], "probe"),)
            except (TaskFileError, ValueError_):
                continue
            c = Check(f"VkT{t.index}Probe{k}", "probe", t.index, k, output_key(vals, types))
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
    origin = {h.name: ("candidate" if h.name in spec.helpers else "task") for h in helpers}
    origin.update({d.name: "candidate" for d in spec.others})
    expect = {"helpers": [{"name": h.name, "kind": h.kind, "origin": origin[h.name], "body": h.body is not None,
                           "clauses": _clause_counts(h.clauses)} for h in (*helpers, *spec.others)],
              "clauses": _clause_counts(spec.clauses),
              "methods": {c.method: {"kind": c.kind,
                                     "assume": sum(1 for ln in text.splitlines() if ln.lstrip().startswith("assume ")),
                                     "clauses": _clause_counts([x for x in spec.clauses
                                                                if c.kind != "refute" or x.kind != "ensures"])}
                          for c, text in methods}}
    return {"files": files, "batch": "batch.dfy", "separate": separate, "units": units,
            "checks": [c.to_json() for c, _ in methods], "mutation": mutation,
            "helpers": [h.name for h in helpers], "expect": expect}


def _clause_counts(clauses) -> dict:
    """``{clause kind: count}`` of a declaration's or a specification's clauses."""
    out: dict = {}
    for c in clauses:
        out[c.kind] = out.get(c.kind, 0) + 1
    return out
