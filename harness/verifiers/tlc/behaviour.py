"""The behaviour harness: does a model compute what the program computes?

A benchmark asks for it with the job option ``behaviour`` (Model-Bench:
:func:`harness.benchmarks.modelbench.programs.behaviour_option`)::

    {"parameters": ["a", "b"],          # the program's parameters, in order
     "inputs": [[3, 7], ...],           # argument tuples (JSON values): the bounded
     "bounded": 16,                     #   domain first (this many), then the tests' inputs
     "expected": [1, ...],              # the program's return value on each input
     "constants": {"MaxValue": "144"}}  # constants widened so the tests' inputs fit

After a verified run, :func:`map_parameters` maps each parameter to the model's variable
that holds it, on the run's initial states. The run itself dumped its complete state
graph (``-dump dot``: every state in full, initial states filled, every transition), so
the bounded domain is decided on that graph, from the initial states that are its inputs
(:func:`decide`): it is the graph TLC would build from those inputs alone, since fixing
variables in the initial predicate only selects initial states. The tests' inputs need
the widened constants, another model: :func:`harness_files` writes a module ``VKTests``
that extends the candidate's with ``VKSpec == VKFix /\\ Spec``, where ``VKFix`` is a
disjunction with one disjunct per input fixing the mapped variables (and their copies) to
that input, so TLC evaluates the candidate's own ``Init`` with the inputs already bound
(membership tests, not enumeration); TLC checks it in a follow-up run and dumps its graph
too. :func:`read_behaviour` decides on each graph:

- every input has an initial state (else ``missing_inputs``: the model's ``Init`` leaves
  out inputs of the program's domain);
- from every input, a final state (no successor but itself) is reachable, and every
  state reachable from it can still reach one (else ``no_end``: a behaviour that never
  returns);
- one variable holds the program's return value in every final state of every input: the
  model's result variable when it names one (:data:`_RESULT_NAMES`), else any variable
  (else ``differs``, with the first input on which it does not);
- TLC itself ended without error (else ``error``: an evaluation error is not evidence).

Values are compared as TLC prints them (:func:`render`: Python ints, booleans, lists and
strings as TLA+ integers, booleans, sequences and strings or sequences of character
codes, whichever the model uses).
"""

from __future__ import annotations

import re
from collections import deque

from ...model import FOLLOWUP
from .output import CLASS_ERROR, MSG_SUCCESS, error_text, parse_graph, split_messages

#: The harness module of the tests' inputs under the widened constants (the bounded domain
#: is read on the verified run's own graph). Its run writes ``<module>.dot``,
#: ``<module>.out`` (TLC's output) and ``<module>.rc`` (its exit status).
TESTS_MODULE = "VKTests"
#: How string values may be written in a model: TLA+ strings, or sequences of codes.
STRING_FORMS = ("string", "codes")
#: Name forms of a variable holding a parameter ``p`` (preferred over other candidates).
_NAME_FORMS = ("{p}", "{p}0", "{p}_0", "{p}_init", "{p}_in", "input_{p}", "init_{p}", "orig_{p}", "original_{p}")
#: Names of a result variable: when a model has one, it must hold the return value (a
#: variable that holds it by the way, like Euclid's ``a``, does not count).
_RESULT_NAMES = ("result", "res", "ret", "output", "out", "answer", "return_value")


class Unmapped(ValueError):
    """A parameter of the program has no variable in the model's initial states."""


def render(value, strings: str = "string") -> str:
    """A JSON value as TLC prints it: ``True`` -> ``TRUE``, ``3`` -> ``3``, ``[1, 2]`` ->
    ``<<1, 2>>``, ``"ab"`` -> ``"ab"`` (``strings="string"``) or ``<<97, 98>>``
    (``"codes"``).

    Raises:
        ValueError: a value with no TLA+ form here (None, a float, a dict).
    """
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        if strings == "codes":
            return "<<" + ", ".join(str(ord(c)) for c in value) + ">>"
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, (list, tuple)):
        return "<<" + ", ".join(render(v, strings) for v in value) + ">>"
    raise ValueError(f"no TLA+ form for the value {value!r} ({type(value).__name__})")


def _forms(value) -> list[str]:
    """The printed forms of ``value`` (two when it holds a string)."""
    out = []
    for s in STRING_FORMS:
        r = render(value, s)
        if r not in out:
            out.append(r)
    return out


def map_parameters(parameters: list[str], bounded: list[list], variables: list[str],
                   initial: list[dict[str, str]]) -> dict[str, dict]:
    """Which variable of the model holds each parameter, read on the run's initial states.

    For each parameter (in order) and string form, among the variables whose initial values
    hold some of the parameter's bounded-domain values, one named for it (:data:`_NAME_FORMS`,
    in that order) wins, else the one holding the most of them, then the first declared; a
    variable holds one parameter. Every other variable equal to a chosen one in every
    initial state is a copy of it (the first such), fixed with it.

    Returns:
        ``{parameter: {"variable", "copies", "strings", "overlap"}}``.

    Raises:
        Unmapped: a parameter none of whose bounded values any free variable takes.
    """
    values = {v: {s.get(v) for s in initial} for v in variables}
    used: set[str] = set()
    out: dict[str, dict] = {}
    for j, p in enumerate(parameters):
        preferred = [f.format(p=p).lower() for f in _NAME_FORMS]
        best = None
        for form in STRING_FORMS:
            domain = {render(args[j], form) for args in bounded}
            for order, v in enumerate(variables):
                if v in used:
                    continue
                overlap = len(domain & values[v])
                rank = preferred.index(v.lower()) if v.lower() in preferred else len(preferred)
                key = (rank, -overlap, order)
                if overlap and (best is None or key < best[0]):
                    best = (key, v, form, overlap)
        if best is None:
            raise Unmapped(f"no variable of the model takes a value of the program's parameter {p!r} in its initial "
                           f"states (variables: {', '.join(variables)})")
        _, v, form, overlap = best
        used.add(v)
        out[p] = {"variable": v, "copies": [], "strings": form, "overlap": overlap}
    for w in variables:
        if w in used or not initial:
            continue
        p = next((p for p, m in out.items() if all(s.get(w) == s.get(m["variable"]) for s in initial)), None)
        if p is not None:
            out[p]["copies"].append(w)
    return out


def guess_mapping(parameters: list[str], bounded: list[list], variables: list[str], text: str) -> dict | None:
    """What :func:`map_parameters` will likely give, guessed before the run from names
    alone, for the check made ahead (:meth:`~harness.verifiers.tlc.TLC.ahead`): each
    parameter held by the variable named for it first in :data:`_NAME_FORMS` order, else
    by the first declared variable named for no parameter and no result (a tie of equal
    overlaps goes to the first declared), the other variables named for it its copies; a
    parameter whose values hold strings in TLA+ strings when the module's text ``text``
    writes one of them as a string literal outside comments, else in sequences of character codes (as
    Model-Bench's lowering of strings writes them). A wrong guess costs time
    only: what ran on it is used only where its harness files are those of the mapping
    read on the run's initial states.

    Returns:
        ``{parameter: {"variable", "copies", "strings"}}``, or None: a parameter left with
        no variable.
    """
    text = re.sub(r"\(\*.*?\*\)|\\\*[^\n]*", "", text, flags=re.S)  # comments aside (not nested ones)
    forms = {p: [f.format(p=p).lower() for f in _NAME_FORMS] for p in parameters}
    named = {v for v in variables if any(v.lower() in f for f in forms.values()) or v.lower() in _RESULT_NAMES}
    out: dict[str, dict] = {}
    for j, p in enumerate(parameters):
        free = [v for v in variables if all(v != m["variable"] for m in out.values())]
        ranked = sorted((forms[p].index(v.lower()), order, v) for order, v in enumerate(free) if v.lower() in forms[p])
        unnamed = [v for v in free if v not in named]
        if not ranked and not unnamed:
            return None
        literal = any(render(x) in text for args in bounded for x in _strings(args[j]) if x)
        out[p] = {"variable": ranked[0][2] if ranked else unnamed[0], "copies": [],
                  "strings": "string" if literal or not any(_strings(args[j]) for args in bounded) else "codes"}
    chosen = {m["variable"] for m in out.values()}
    for w in variables:
        p = next((p for p in parameters if w.lower() in forms[p]), None)
        if p is not None and w not in chosen:
            out[p]["copies"].append(w)
    return out


def _strings(value) -> list[str]:
    """The strings in a JSON value (itself, or in its lists)."""
    if isinstance(value, str):
        return [value]
    return [x for v in value for x in _strings(v)] if isinstance(value, (list, tuple)) else []


def _module(name: str, module: str, params: list[str], inputs: list[list], mapping: dict) -> str:
    fixes = []
    for args in inputs:
        parts = []
        for p, value in zip(params, args):
            m = mapping[p]
            text = render(value, m["strings"])
            parts += [f"{v} = {text}" for v in (m["variable"], *m["copies"])]
        fixes.append("    \\/ " + " /\\ ".join(parts))
    return (f"---- MODULE {name} ----\nEXTENDS {module}\n"
            f"VKFix ==\n" + "\n".join(fixes) + "\nVKSpec == VKFix /\\ Spec\n====\n")


#: Config keywords that name what TLC checks: a follow-up run replaces them and keeps the
#: candidate's constants.
CHECK_KEYWORDS = ("SPECIFICATION", "INIT", "NEXT", "INVARIANT", "INVARIANTS", "PROPERTY", "PROPERTIES",
                  "CHECK_DEADLOCK")


def constants_only(cfg: str) -> list[str]:
    """The lines of a TLC config without those of :data:`CHECK_KEYWORDS` (blank lines dropped)."""
    return [ln for ln in cfg.splitlines() if ln.split()[:1] and ln.split()[0] not in CHECK_KEYWORDS]


def _config(cfg: str, widened: dict) -> str:
    lines = []
    for ln in constants_only(cfg):
        m = re.match(r"\s*([A-Za-z_]\w*)\s*=", ln)
        if m and m.group(1) in widened:
            ln = f"    {m.group(1)} = {widened[m.group(1)]}"
        lines.append(ln)
    return "\n".join(lines + ["SPECIFICATION VKSpec"]) + "\n"


def harness_files(module: str, cfg: str, option: dict, mapping: dict) -> dict[str, str]:
    """The tests' harness module :data:`TESTS_MODULE` (:func:`tests_module`) and its config
    for one candidate (see the module docstring): the candidate's constants with the widened
    ones replaced. Empty when there is no module to check.

    Args:
        module: the candidate's module name.
        cfg: the candidate's config text.
        option: the job's ``behaviour`` option.
        mapping: :func:`map_parameters` on the verified run's initial states.

    Returns:
        ``{file: text}``.
    """
    text = tests_module(module, option, mapping)
    if text is None:
        return {}
    return {f"{TESTS_MODULE}.tla": text, f"{TESTS_MODULE}.cfg": _config(cfg, dict(option.get("constants") or {}))}


def tests_module(module: str, option: dict, mapping: dict) -> str | None:
    """The text of :data:`TESTS_MODULE`: the tests' inputs, fixed on the mapped variables;
    None when the program's tests add no input or one has no TLA+ form (nothing to check)."""
    params, n = list(option["parameters"]), option["bounded"]
    try:
        return _module(TESTS_MODULE, module, params, option["inputs"][n:], mapping) if option["inputs"][n:] else None
    except ValueError:
        return None


def _reach(starts, edges: dict[str, set[str]]) -> set[str]:
    """The nodes reachable from ``starts`` (included) along ``edges`` (node -> nodes)."""
    seen, todo = set(starts), deque(starts)
    while todo:
        for b in edges.get(todo.popleft(), ()):
            if b not in seen:
                seen.add(b)
                todo.append(b)
    return seen


def _describe(params: list[str], args: list) -> str:
    return "(" + ", ".join(f"{p}={a!r}" for p, a in zip(params, args)) + ")"


def read_behaviour(graph: str, files: dict[str, bytes], option: dict, mapping: dict) -> dict:
    """The harness's outcome: ``{"outcome", "inputs", "tests", "mapping", "bounded_part",
    "tests_part", ...}``. The bounded domain decides, on ``graph`` (the verified run's own
    ``-dump dot`` text: :func:`decide`); the tests' inputs, run under widened constants in
    the follow-up (its files in ``files``: :func:`read_part`), can only add positive
    evidence against the model (``differs``, ``no_end``): when TLC cannot run them (e.g.
    it cannot build the model's initial sets at the widened constants) or the model's
    ``Init`` is bounded by constants of its own, that part is reported, not held against
    the candidate. ValueError: a graph line the kit cannot read (:func:`parse_graph`)."""
    n = option["bounded"]
    params = list(option["parameters"])
    base = {"inputs": len(option["inputs"]), "tests": len(option["inputs"]) - n, "mapping": mapping}
    bounded = decide(parse_graph(graph), params, option["inputs"][:n], option["expected"][:n], mapping)
    out = {**base, **bounded, "bounded_part": bounded["outcome"]}
    if not option["inputs"][n:]:
        return {**out, "tests_part": "none"}
    tests = read_part(files, TESTS_MODULE, params, option["inputs"][n:], option["expected"][n:], mapping)
    out["tests_part"] = tests["outcome"]
    if tests["outcome"] != "models_program":
        out["tests_detail"] = tests.get("detail")
    if bounded["outcome"] == "models_program" and tests["outcome"] in ("differs", "no_end"):
        return {**out, **tests}
    return out


def read_part(files: dict[str, bytes], name: str, params: list[str], inputs: list[list], expected: list,
              mapping: dict) -> dict:
    """A harness module's outcome from its follow-up files (``followup/<name>.out``,
    ``.rc``, ``.dot``): ``error`` (TLC's error, or no graph), ``not_run`` (no output), else
    :func:`decide` on its graph."""
    out_b = files.get(f"{FOLLOWUP}{name}.out")
    if out_b is None:
        why = files.get(FOLLOWUP + "ended", b"no follow-up run").decode("utf-8", "replace")
        return {"outcome": "not_run", "detail": f"the harness {name} did not run ({why})"}
    out = split_messages(out_b.decode("utf-8", "replace"))
    rc = files.get(f"{FOLLOWUP}{name}.rc", b"").decode().strip()
    errors = [i for i, m in enumerate(out.messages) if m.cls == CLASS_ERROR]
    if errors or out.first(MSG_SUCCESS) is None or rc != "0":
        detail = error_text(out, errors[0]) if errors else (out.free.strip()[-300:] or f"exit {rc}")
        return {"outcome": "error", "detail": f"TLC on the harness {name}: {detail}"}
    graph = files.get(f"{FOLLOWUP}{name}.dot")
    if graph is None:
        return {"outcome": "error", "detail": f"TLC wrote no {name}.dot"}
    return decide(parse_graph(graph.decode("utf-8", "replace")), params, inputs, expected, mapping)


def decide(graph: tuple[dict[str, dict], set[str], dict[str, set[str]]], params: list[str], inputs: list[list],
           expected: list, mapping: dict) -> dict:
    """The harness's decision on a state graph (:func:`parse_graph`) for ``inputs``: the
    initial states whose mapped variables hold an input, and what is reachable from them
    (initial states that are no input are left out). ``{"outcome", ...}`` where
    ``outcome`` is ``models_program`` (with ``result_variable`` and ``states``: the states
    reachable from the inputs), ``differs`` / ``no_end`` / ``missing_inputs`` (with
    ``input``, ``expected``, ``detail``)."""
    states, initial, succ = graph
    # which input each initial state is: the mapped variables' values
    key_of = {}
    for i, args in enumerate(inputs):
        key_of.setdefault(tuple(render(a, mapping[p]["strings"]) for p, a in zip(params, args)), i)
    starts: dict[int, list[str]] = {}
    for n in sorted(initial):
        k = tuple(states[n].get(mapping[p]["variable"]) for p in params)
        if k in key_of:
            starts.setdefault(key_of[k], []).append(n)
    missing = [i for i in range(len(inputs)) if i not in starts]
    if missing:
        i = missing[0]
        return {"outcome": "missing_inputs", "missing": len(missing), "input": inputs[i],
                "detail": f"Init leaves out {len(missing)} of the program's {len(inputs)} inputs, e.g. "
                          f"{_describe(params, inputs[i])}"}
    ends = {n for n in states if not succ.get(n)}
    # states that can reach a final state (backwards from the ends)
    pred: dict[str, set[str]] = {}
    for a, bs in succ.items():
        for b in bs:
            pred.setdefault(b, set()).add(a)
    can_end = _reach(ends, pred)
    variables = sorted({v for s in states.values() for v in s})
    holds = {v: True for v in variables}
    first_bad: dict[str, tuple] = {}
    reached: set[str] = set()
    for i, ns in sorted(starts.items()):
        seen = _reach(ns, succ)
        reached |= seen
        stuck = sorted(seen - can_end)
        finals = sorted(seen & ends)
        if stuck or not finals:
            return {"outcome": "no_end", "input": inputs[i], "expected": expected[i],
                    "detail": f"on input {_describe(params, inputs[i])} the model "
                              + ("has a behaviour that never reaches a final state" if stuck else
                                 "never reaches a final state") + f" (the program returns {expected[i]!r})"}
        want = set(_forms(expected[i]))
        for v in variables:
            bad = next((n for n in finals if states[n].get(v) not in want), None)
            if holds[v] and bad is not None:
                holds[v] = False
                first_bad[v] = (i, states[bad])
    # the model's own result variable, when it names one, must hold it; else any variable may
    named = [v for v in variables if v.lower() in _RESULT_NAMES]
    good = [v for v in (named or variables) if holds[v]]
    if good:
        good.sort(key=lambda v: (_RESULT_NAMES.index(v.lower()) if v.lower() in _RESULT_NAMES else len(_RESULT_NAMES),
                                 v))
        return {"outcome": "models_program", "result_variable": good[0], "states": len(reached)}
    # the model's result variable, else the variable that held the return value longest
    v = named[0] if named else max(variables, key=lambda x: (first_bad[x][0], x))
    i, state = first_bad[v]
    shown = ", ".join(f"{k} = {x}" for k, x in state.items())
    return {"outcome": "differs", "input": inputs[i], "expected": expected[i], "variable": v,
            "detail": f"on input {_describe(params, inputs[i])} the program returns {expected[i]!r}; no variable of "
                      f"the model holds it in every final state (e.g. {v} = {state.get(v)} in the final state "
                      f"{shown[:200]})"}
