"""The program side of Model-Bench's behaviour check: the inputs a model must be run on
and what the Python program returns on each.

A task of the kit's oracle set declares its program's bounded input domain in
``data/tasks.json`` (``domain``: one entry per parameter, in the function's order)::

    {"int": [lo, hi]}                       # integers lo..hi
    {"seq": [lo, hi], "of": <entry>}        # lists of length lo..hi
    {"str": [lo, hi], "of": "Alphabet"}     # strings of length lo..hi over character codes

where a bound is an integer, a constant's name (``"MaxValue"``) or its negation
(``"-MaxValue"``), with the task's constant values; an alphabet is a constant holding a
TLA+ set of character codes (``{97, 98}``). :func:`behaviour_option` adds the inputs of the
program's own tests (``assert candidate(...)`` calls with literal arguments) that fit the
declared types and fixed bounds, widens the constants named by the bounds so that they
do (``MaxValue`` 4 -> 144 for ``candidate(144, 60)``), and runs the program once on every
input (:func:`program_outputs`) to get its return values. The TLC verifier then runs the
candidate's model on those inputs (:mod:`harness.verifiers.tlc.behaviour`).
"""

from __future__ import annotations

import ast
import hashlib
import itertools
import json
import re
from pathlib import Path


def _bound(bound, constants: dict) -> int:
    if isinstance(bound, int):
        return bound
    neg = bound.startswith("-")
    value = int(constants[bound.lstrip("-")])
    return -value if neg else value


def _alphabet(spec, constants: dict) -> list[int]:
    if isinstance(spec, list):
        return sorted(spec)
    return sorted(int(x) for x in re.findall(r"-?\d+", constants[spec]))


def enumerate_domain(entry: dict, constants: dict) -> list:
    """Every value of one parameter's domain entry, in a fixed order.

    Raises:
        ValueError: an entry of no known kind.
    """
    if "int" in entry:
        lo, hi = (_bound(b, constants) for b in entry["int"])
        return list(range(lo, hi + 1))
    if "seq" in entry:
        lo, hi = (_bound(b, constants) for b in entry["seq"])
        elems = enumerate_domain(entry["of"], constants)
        return [list(t) for n in range(lo, hi + 1) for t in itertools.product(elems, repeat=n)]
    if "str" in entry:
        lo, hi = (_bound(b, constants) for b in entry["str"])
        chars = [chr(c) for c in _alphabet(entry["of"], constants)]
        return ["".join(t) for n in range(lo, hi + 1) for t in itertools.product(chars, repeat=n)]
    raise ValueError(f"unknown domain entry {entry!r} (int, seq or str)")


def _fits(value, entry: dict, constants: dict, widen: dict) -> bool:
    """Whether ``value`` is of the entry's type and within its fixed bounds; records in
    ``widen`` what the named constants need (a bound: its minimum value; an alphabet: the
    sorted codes it must hold)."""
    def need(bound, v: int, upper: bool) -> bool:
        if isinstance(bound, int):
            return v <= bound if upper else v >= bound
        name, neg = bound.lstrip("-"), bound.startswith("-")
        # hi = C needs C >= v; lo = -C needs C >= -v; lo = C (or hi = -C) cannot widen
        if upper != neg:
            widen[name] = max(widen.get(name, int(constants[name])), -v if neg else v)
            return True
        return (v >= _bound(bound, constants)) if not upper else (v <= _bound(bound, constants))

    if "int" in entry:
        return (isinstance(value, int) and not isinstance(value, bool) and need(entry["int"][0], value, False)
                and need(entry["int"][1], value, True))
    if "seq" in entry:
        return (isinstance(value, list) and need(entry["seq"][0], len(value), False)
                and need(entry["seq"][1], len(value), True) and all(_fits(v, entry["of"], constants, widen)
                                                                     for v in value))
    if "str" in entry:
        if not (isinstance(value, str) and need(entry["str"][0], len(value), False)
                and need(entry["str"][1], len(value), True)):
            return False
        if isinstance(entry["of"], str):
            codes = set(_alphabet(entry["of"], constants)) | {ord(c) for c in value}
            widen[entry["of"]] = sorted(codes | set(widen.get(entry["of"], [])))
        return isinstance(entry["of"], str) or all(ord(c) in entry["of"] for c in value)
    return False


def test_inputs(tests: str) -> list[list]:
    """The argument lists of the ``candidate(...)`` calls in a HumanEval ``check``
    function whose arguments are all literals, in order, without repeats (tuples as
    lists, as JSON keeps them)."""
    try:
        tree = ast.parse(tests)
    except SyntaxError:
        return []
    check = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "check"), None)
    name = check.args.args[0].arg if check and check.args.args else "candidate"
    out: list[list] = []
    for node in ast.walk(check or tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name \
                and not node.keywords:
            try:
                args = json.loads(json.dumps([ast.literal_eval(a) for a in node.args]))
            except (ValueError, TypeError, SyntaxError):
                continue
            if args not in out:
                out.append(args)
    return out


#: The recorded return values (``{task_id: {"program_sha256", "inputs", "expected"}}``).
OUTPUTS_FILE = Path(__file__).resolve().parent / "data" / "outputs.json"


def program_sha256(code: str, entry_point: str) -> str:
    """sha256 hex of a program and its entry point (the key of its recorded outputs)."""
    return hashlib.sha256(f"{entry_point}\0{code}".encode()).hexdigest()


def recorded_outputs(task_id: str, code: str, entry_point: str, inputs: list[list]) -> list:
    """The program's return values on ``inputs`` from :data:`OUTPUTS_FILE`.

    Raises:
        ValueError: no entry for the task, or one recorded for another program or other
            inputs (names the file and the script that rewrites it).
    """
    try:
        table = json.loads(OUTPUTS_FILE.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{OUTPUTS_FILE}:{exc.lineno}: invalid JSON: {exc.msg}") from None
    entry = table.get(task_id)
    fix = "run scripts/modelbench_outputs.py to record the program's return values"
    if entry is None:
        raise ValueError(f"{OUTPUTS_FILE}: no return values of {task_id}'s program; {fix}")
    if entry["program_sha256"] != program_sha256(code, entry_point) or entry["inputs"] != inputs:
        raise ValueError(f"{OUTPUTS_FILE}: the return values of {task_id} were recorded for another program or "
                         f"other inputs; {fix}")
    return list(entry["expected"])


def behaviour_inputs(domain: list[dict], constants: dict, tests: str) -> tuple[list[list], int, dict, list]:
    """``(inputs, bounded, widened, left_out)``: the bounded domain's argument lists, then
    the tests' inputs not already in it; how many are of the first kind; the widened
    constants (TLA+ text); the tests' inputs outside the declared types or fixed bounds.

    Raises:
        ValueError: a domain entry of no known kind.
    """
    columns = [enumerate_domain(e, constants) for e in domain]
    bounded = [list(t) for t in itertools.product(*columns)]
    widen: dict = {}
    extra, left_out = [], []
    for args in test_inputs(tests):
        trial: dict = dict(widen)
        if len(args) == len(domain) and all(_fits(a, e, constants, trial) for a, e in zip(args, domain)):
            widen = trial
            if args not in bounded and args not in extra:
                extra.append(args)
        else:
            left_out.append(args)
    widened = {}
    for name, value in sorted(widen.items()):
        if isinstance(value, list):  # an alphabet: the set of codes
            widened[name] = "{" + ", ".join(str(c) for c in value) + "}"
        elif value != int(constants[name]):
            widened[name] = str(value)
    return bounded + extra, len(bounded), widened, left_out


def behaviour_option(task_id: str, domain: list[dict], parameters: list[str], constants: dict, code: str,
                     entry_point: str, tests: str) -> dict:
    """The TLC job option ``behaviour`` of a task (see
    :mod:`harness.verifiers.tlc.behaviour`): ``parameters``, ``inputs`` (the bounded
    domain, then the tests' inputs not already in it), ``bounded`` (how many of the first
    kind), ``expected`` (the program's return values), ``constants`` (the widened ones,
    as TLA+ text) and ``left_out`` (tests' inputs outside the declared types or fixed
    bounds).

    Raises:
        ValueError: a domain entry of no known kind, not one entry per parameter, or as
            :func:`recorded_outputs`.
    """
    if len(domain) != len(parameters):
        raise ValueError(f"{task_id}: {len(domain)} domain entries for {len(parameters)} parameters")
    inputs, bounded, widened, left_out = behaviour_inputs(domain, constants, tests)
    return {"parameters": list(parameters), "inputs": inputs, "bounded": bounded,
            "expected": recorded_outputs(task_id, code, entry_point, inputs), "constants": widened,
            "left_out": left_out}


def parameters_of(code: str, entry_point: str) -> list[str]:
    """The positional parameter names of the program's entry point.

    Raises:
        ValueError: no such function in ``code``.
    """
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.FunctionDef) and node.name == entry_point:
            return [a.arg for a in node.args.args]
    raise ValueError(f"no function {entry_point!r} in the program")
