"""CASP: the rules that keep a WP proof inside the fragment where it is evidence about the
program gcc builds (docs/integrity.md "CASP: the fragment where a WP proof is evidence
about the compiled program").

WP proves a property of the C program as its Typed memory model and Frama-C's own libc
see it. Each rule below names an assumption of that model the compiled program may break,
and is decided on a tool's own view of what the candidate wrote: Frama-C's (the ``memory``
facts and the ``from`` clauses of ``framac_view.ml``) or gcc's (its diagnostics on the
verified file, ``compiler.log`` of the job driver). A broken rule makes the verdict
``rejected`` and its detail names the construct, its line and the assumption.

- ``typed-memory``: memory is read through the type it was written with. No union read or
  written through more than one member (WP 25 proves ``u.x = a; u.y = 7; return u.x``
  returns ``a``); no cast between pointers to different types or between a pointer and
  an integer (WP 25 warns "Cast with incompatible pointers types" and, measured here,
  proves ``\\result == a`` of a function that overwrites a byte of ``a`` through a
  ``char *``); no value stored into a bit-field unless it is known to fit the field's
  width (WP gives the field its declared type's range; gcc truncates).
- ``no-from``: no ``\\from`` in a contract the candidate writes: WP proves the locations
  an ``assigns`` names, never their dependencies (measured: ``assigns \\result \\from
  \\nothing`` is ``verified`` on a body that computes the result from its argument).
- ``well-founded-logic``: a recursive logic definition the candidate adds is well founded:
  every recursive call passes, for some integer parameter ``x``, ``x - c`` (``c > 0``) in a
  branch where a condition bounds ``x`` from below (``framac_view.ml`` ``logic_recursion``).
  WP 25 takes a definition as an axiom: measured here, ``logic integer f(integer x) =
  f(x) + 1`` lets CVC4 prove ``\\result == 5 || f(a) == 0`` of ``return a``.
- ``compiler-agrees``: gcc reads the candidate's code as Frama-C does. No K&R definition
  with parameters (Frama-C converts the arguments to the parameters' types; gcc passes
  them promoted, ``-Wold-style-definition``); no unsequenced side effects (Frama-C picks an
  order, the C standard none, ``-Wsequence-point``); no declaration that conflicts with a
  gcc builtin (``-Wbuiltin-declaration-mismatch``); no function of the candidate's named
  like a C library function (:data:`LIBC_NAMES`): gcc gives the call the library's
  meaning (measured with gcc 12 here, at -O0 and -O2: ``strlen("abc")`` is 3 and
  ``abs(-3)`` is 3 although the file defines ``strlen`` to return 42 and ``abs`` to
  return 5), Frama-C the file's definition; no global initialiser that overflows
  (``-Woverflow``: measured, WP 25 proves ``\\result == 5`` of ``return a`` beside
  ``const int K = 2147483647 + 1;``, reading ``K`` as 2147483648 and as an ``int``).
"""

from __future__ import annotations

import re

from .allowlists import LIBC, written
from .checks import checked

#: The names of the rules of this module (the records' ``checks``).
RULES = ("typed-memory", "no-from", "compiler-agrees", "well-founded-logic")
#: C library functions of the headers ``scripts/casp_libc.py`` reads
#: (``libc_callees.json``: allowed, refused and never-returning): a function the candidate
#: defines or declares may not take one of these names.
LIBC_NAMES = frozenset(LIBC["allowed"]) | frozenset(LIBC["refused"]) | frozenset(LIBC["never_return"])
#: gcc's warnings (``-W...`` as it tags them) that mark a difference between gcc's reading
#: and Frama-C's, with the assumption each breaks.
COMPILER_WARNINGS = {
    "-Wold-style-definition": "a K&R definition: gcc passes the arguments promoted, Frama-C converts them to the "
                              "parameters' types",
    "-Wsequence-point": "unsequenced side effects: Frama-C verifies one order, the C standard gives none",
    "-Wbuiltin-declaration-mismatch": "a declaration conflicting with gcc's builtin of that name: gcc keeps the "
                                      "builtin's meaning",
    "-Woverflow": "a constant that overflows its type: WP reads the initialiser's mathematical value beside the "
                  "type's range (a contradiction that proves anything), the compiled program a wrapped one",
}
_IN_FUNCTION = re.compile(r"^[^:\n]+: In function '([^']+)':$")
_AT_TOP = re.compile(r"^[^:\n]+: At top level:$")
_WARNING = re.compile(r"^[^:\n]+:(\d+):\d+: (?:warning|error): (.*?)(?: \[(-W[\w=-]+)\])?$")
_BUILTIN_NAME = re.compile(r"built-in function '([^']+)'")


def _memory(w: dict) -> list[str]:
    problems: list[str] = []
    members: dict[str, dict[str, tuple[str, int]]] = {}  # union -> member -> first (function, line)
    for f in w["code"]:
        for m in f.get("memory", []):
            if m["kind"] == "union member":
                union, member = m["what"].rsplit(".", 1)
                members.setdefault(union, {}).setdefault(member, (f["name"], m["line"]))
            elif m["kind"] == "pointer cast":
                problems.append(f"pointer cast {m['what']} in {f['name']}() (line {m['line']}): WP's Typed model reads "
                                "memory as the type it was written with, the compiled program as the cast says")
            elif m["kind"] == "bit-field store":
                name, width = m["what"].rsplit(":", 1)
                problems.append(f"a value stored into bit-field {name} ({width} bits) in {f['name']}() (line "
                                f"{m['line']}) is not known to fit: WP gives the field its declared type's range, "
                                "the compiled program truncates it")
            else:
                problems.append(f"{m['kind']} {m['what']} in {f['name']}() (line {m['line']}): not classified")
    for union, used in sorted(members.items()):
        if len(used) > 1:
            where = ", ".join(f"{n} ({fn}(), line {line})" for n, (fn, line) in sorted(used.items()))
            problems.append(f"union {union} accessed through {len(used)} members: {where}: WP's Typed model keeps "
                            "each member apart, the compiled program shares their bytes")
    return problems


def compiler_problems(log: str | None, w: dict) -> tuple[list[str], str]:
    """What gcc's diagnostics (``compiler.log``) say of the candidate's own code.

    Args:
        log: the driver's ``compiler.log`` (gcc ``-fsyntax-only -fdiagnostics-plain-output``,
            ``LC_ALL=C``), or None when it was not made.
        w: :func:`.allowlists.written` of the job.

    Returns:
        ``(problems, detail when there are none)``. A diagnostic counts when it is in a
        function whose code the candidate wrote (gcc's "In function" context) or, at top
        level, names a function the candidate declares. A K&R definition counts when the
        function has parameters (``int f()`` is read alike by both); at top level, a
        diagnostic on the line of a global variable the candidate declares counts
        (``-Woverflow`` of its initialiser). When gcc could not
        compile the file, its errors in the candidate's code count and the rest is "not
        judged" (said in the detail): a task gcc cannot build is the benchmark's, not the
        candidate's.
    """
    if log is None:
        return ["gcc's diagnostics on the verified file are missing (compiler.log not made)"], ""
    code = {f["name"]: f for f in w["code"]}
    own = {f["name"] for f in w["functions"]}
    variable_lines = {v["line"] for v in w["variables"]}
    problems: list[str] = []
    function = None
    failed = "verikit: gcc exited" in log
    for line in log.splitlines():
        if m := _IN_FUNCTION.match(line):
            function = m.group(1)
            continue
        if _AT_TOP.match(line):
            function = None
            continue
        m = _WARNING.match(line)
        if not m:
            continue
        lineno, message, flag = m.group(1), m.group(2), m.group(3)
        is_error = ": error: " in line
        if flag == "-Woverflow" and "integer overflow" not in message:
            continue  # a conversion that changes a value (unsigned char c = 300): defined, and WP models it
        if function is not None and function in code:
            if flag == "-Wold-style-definition" and not code[function].get("formals"):
                continue
            if flag in COMPILER_WARNINGS:
                problems.append(f"{message} in {function}() (line {lineno}): {COMPILER_WARNINGS[flag]}")
            elif is_error:
                problems.append(f"gcc: {message} in {function}() (line {lineno})")
        elif function is None and flag in COMPILER_WARNINGS:
            named = _BUILTIN_NAME.search(message)
            if (named and named.group(1) in own) or int(lineno) in variable_lines:
                problems.append(f"{message} (line {lineno}): {COMPILER_WARNINGS[flag]}")
    for name in sorted(own & LIBC_NAMES):
        problems.append(f"function {name}() has the name of a C library function: gcc gives its calls the library's "
                        "meaning (its builtin), Frama-C the candidate's definition")
    ok = "gcc reads the candidate's code as Frama-C does (no K&R definition, unsequenced side effect, builtin name)"
    if failed and not problems:
        ok = "gcc could not compile the file outside the candidate's code: not judged"
    return list(dict.fromkeys(problems)), ok


def fragment_checks(view: dict, task_view: dict, target: str, mode: str, compiler_log: str | None) -> list[dict]:
    """The rules of this module on Frama-C's views and gcc's diagnostics.

    Args:
        view, task_view: Frama-C's views of the verified file and of the task's fixed part.
        target: the function the candidate writes or specifies; mode: the candidate mode.
        compiler_log: the driver's ``compiler.log`` (None: not made).

    Returns:
        ``[{"name", "ok", "detail"}]`` for ``typed-memory``, ``no-from``,
        ``compiler-agrees``, ``well-founded-logic``. A view without ``memory`` facts or
        ``recursive_logic`` (not written by this kit's view script) breaks the rule that
        reads it (fail closed).
    """
    w = written(view, task_view, target, mode)
    if any("memory" not in f for f in w["code"]):
        memory = ["Frama-C's view lacks the memory facts (not written by this kit's view script)"]
    else:
        memory = list(dict.fromkeys(_memory(w)))
    froms = [f"\\from in the contract of {f['name']}() ({k['text']}): WP proves the locations an assigns clause names, "
             "never their dependencies" for f in w["contracts"] for k in f["clauses"] if k["kind"] == "from"]
    compiler, compiler_ok = compiler_problems(compiler_log, w)
    if "recursive_logic" not in view or "recursive_logic" not in task_view:
        logic = ["Frama-C's view lacks the recursive logic definitions (not written by this kit's view script)"]
    else:
        task_logic = {r["name"] for r in task_view["recursive_logic"]}
        logic = [f"recursive logic definition {r['name']} (line {r['line']}) without an integer parameter that "
                 "decreases by a constant under a lower bound at each recursive call: WP takes the definition as an "
                 "axiom, which no function may satisfy (f(x) = f(x) + 1 proves anything)"
                 for r in view["recursive_logic"] if r["recursion"] != "guarded" and r["name"] not in task_logic]
    return [
        checked("typed-memory", memory, "no union punning, pointer cast or bit-field store outside WP's Typed model"),
        checked("no-from", froms, "no \\from clause (WP does not check dependencies)"),
        checked("compiler-agrees", compiler, compiler_ok),
        checked("well-founded-logic", logic, "every recursive logic definition the candidate adds decreases an integer "
                                            "parameter under a lower bound"),
    ]
