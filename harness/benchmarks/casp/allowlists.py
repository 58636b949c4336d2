"""The CASP allow-lists and fail-closed rules on what the candidate wrote, as Frama-C parsed
it (harness/benchmarks/casp/docs.md "Allow-lists"): ``view-complete``, ``no-reserved-names``,
``no-redeclarations``, ``allow-list``, ``local-storage`` (:func:`allowlist_checks`), and
what the candidate wrote (:func:`written`)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from .checks import checked, functions_by_name, global_key

# --- allow-lists for what the candidate wrote (harness/benchmarks/casp/docs.md "Allow-lists") ---
# Judged on Frama-C's view; anything not listed is rejected, naming the construct and its
# line. Derived from the gold solutions and the bundled model outputs of casp-sample10
# (scripts/casp_allowlists.py re-derives what they use and checks it is allowed), plus
# the constructs an honest C function needs that those ten tasks happen not to use.

#: Name prefixes reserved by Frama-C (its libc, builtins, E-ACSL) and by the kit; a name
#: the candidate declares or defines (function, variable, local, type, logic symbol) may
#: not start with one. ``RESERVED_PREFIXES_ANY_CASE`` in any letter case.
RESERVED_PREFIXES = ("__fc_", "__FC_", "Frama_C_", "__builtin_", "__e_acsl", "__E_ACSL", "__gen_e_acsl",
                     "__VERIFIER_", "__frama_c", "__FRAMAC", "FC_BUILTIN", "__va_params")
RESERVED_PREFIXES_ANY_CASE = ("verikit",)
#: Statement kinds of Frama-C's normalised code (``framac_view.ml`` names them): no
#: inline assembly, no ghost statement, no C++ exception statement. ``goto`` is judged by
#: the termination rule (a goto that forms a loop fails it); "annotation" is the place of
#: an ACSL code annotation, whose kind is judged by ``ALLOWED_CODE_ANNOTATIONS``.
ALLOWED_STATEMENTS = ("set", "call", "local init", "local init call", "skip", "return", "goto", "break", "continue",
                      "if", "switch", "loop", "block", "unspecified sequence", "annotation")
#: C type constructs, in signatures, locals, casts, sizeof, globals and the candidate's own
#: struct/union fields and typedefs. Floats: the gold code of 05_125 converts to double.
#: Not listed: ``long double``, variable-length arrays, variadic functions, ``va_list``;
#: ``_Complex`` is refused by Frama-C 25's parser itself (invalid).
ALLOWED_TYPES = ("void", "bool", "integer", "pointer", "array", "array without size", "function", "struct",
                 "union", "enum", "bit-field", "float", "double")
#: Attributes (GCC attributes and type qualifiers as Frama-C stores them) that change
#: nothing for WP. Not listed, hence rejected: ``volatile``, ``restrict``, ``ghost``,
#: Frama-C's own (``FC_BUILTIN``...), and every other GCC attribute. Storage classes
#: (``static``, ``extern``, ``register``) and ``inline`` are not attributes: allowed; so is
#: Frama-C's tag ``fc_local_static`` on the global a ``static`` local becomes (:func:`_local_static`).
ALLOWED_ATTRIBUTES = ("const", "unused", "noinline", "always_inline")
#: What ``scripts/casp_libc.py`` derived from Frama-C's own libc (``libc_callees.json``):
#: the libc functions whose Frama-C contract frames the call (an assigns clause, no
#: allocation, no hidden state, returns), and the macros and typedefs whose values
#: Frama-C's headers and this platform's disagree on (compiled with both).
LIBC = json.loads((Path(__file__).with_name("libc_callees.json")).read_text(encoding="utf-8"))
#: Frama-C libc functions a candidate may call, when the task's own includes declare them
#: (a libc function the task does not include is the candidate's own declaration: see
#: ``no-trusted-declarations``): those derived (``LIBC["allowed"]``: string, memory,
#: character-class, numeric-conversion and math functions), and ``exit``, ``abort``,
#: ``_Exit``, judged by the termination rule (never return: ``failed``). No Frama-C
#: builtin, ever; a function refused by the derivation is named with its reason
#: (``LIBC["refused"]``: e.g. ``strrchr``, whose Frama-C 25 contract is a known soundness bug).
ALLOWED_LIBC_CALLEES = tuple(sorted(LIBC["allowed"])) + tuple(LIBC["never_return"])
#: Names whose meaning differs between Frama-C's libc and this platform's headers: the
#: macros and typedefs ``scripts/casp_libc.py`` found to disagree (``RAND_MAX`` is 32767
#: in Frama-C 25's ``stdlib.h``, 2147483647 in glibc's; ``int_fast32_t`` is 4 bytes for
#: Frama-C, 8 for gcc on x86_64...), and ``errno`` (Frama-C's libc contracts do not set it
#: as the platform's functions do). A proof about Frama-C's meaning says nothing about the
#: program gcc builds: ``platform-names`` rejects a candidate whose text names one.
PLATFORM_MISMATCH = {**{n: f"Frama-C's libc defines {a}, this platform's headers {b}"
                        for n, (a, b) in LIBC["constants"]["disagree"].items()},
                     **{n: f"Frama-C's libc makes it {a}, this platform's headers {b}"
                        for n, (a, b) in LIBC["constants"]["types_disagree"].items()},
                     "errno": "Frama-C's libc contracts do not set errno as this platform's libc functions do"}
_PLATFORM_NAME = re.compile(r"\b(" + "|".join(map(re.escape, sorted(PLATFORM_MISMATCH))) + r")\b")
#: Contract clause kinds (``framac_view.ml``'s names) in a contract the candidate writes:
#: no ``exits``/``breaks``/``continues``/``returns``, allocation or extended clause, no
#: ``decreases`` with a relation; ``terminates`` only ``\true``.
ALLOWED_CLAUSES = ("requires", "assumes", "ensures", "assigns", "complete", "disjoint", "decreases", "terminates")
#: ACSL code annotations in code the candidate writes: no statement contract, general
#: ``invariant``, ``loop allocation``, ``loop pragma`` or extension, no loop variant with a
#: relation (integer measures only).
ALLOWED_CODE_ANNOTATIONS = ("assert", "loop invariant", "loop assigns", "loop variant")
#: Kinds of top-level globals the candidate may add (``framac_view.ml``'s "declarations"
#: and "occurrences"; "type": a struct/union/enum written without a declarator): no
#: global ``asm``, ``#pragma``, ``_Static_assert``, ``extern "C"`` or verbatim text.
ALLOWED_DECLARATIONS = ("function declaration", "function definition", "variable declaration", "variable definition",
                        "typedef", "struct", "union", "struct declaration", "union declaration", "enum",
                        "enum declaration", "annotation", "type")
#: Bound on the storage of a function's locals (bytes, all locals together).
MAX_LOCAL_BYTES = 1 << 20
#: Bound on the locals of the functions of one call chain together (bytes): half the 8 MiB
#: stack Linux gives a process by default (``ulimit -s``). WP does not model the stack: a
#: chain of frames past it overflows at run time in code WP proves.
MAX_STACK_BYTES = 4 << 20


#: The keys a view written by this kit's ``framac_view.ml`` has (an older script's view
#: lacks some: fail closed).
_VIEW_KEYS = ("functions", "variables", "types", "declarations", "occurrences", "globals", "unclassified")


def platform_check(region_pp: dict | None) -> dict | None:
    """``platform-names``: the candidate's text (as the preprocessor gives it back, comments
    kept: the ``no-preprocessing`` rule makes it the candidate's own) names no macro,
    typedef or variable of :data:`PLATFORM_MISMATCH`. None when there is no text (gold)."""
    text = (region_pp or {}).get("comments")
    if text is None:
        return None
    found = sorted(set(_PLATFORM_NAME.findall(text)))
    return checked("platform-names", [f"{n}: {PLATFORM_MISMATCH[n]}" for n in found],
                  "no name whose meaning Frama-C's libc and this platform's headers disagree on")


def _local_static(variable: dict, construct: dict) -> bool:
    """Frama-C's own tag on a ``static`` local: the kernel lifts it to a global named
    ``<function>_<name>`` with the attribute ``fc_local_static`` (read in Frama-C 25's view
    here); WP treats it as any global with static storage, so the tag is allowed there."""
    return (construct["kind"], construct["name"]) == ("attribute", "fc_local_static") \
        and variable.get("storage") == "static"


def reserved_name(name: str) -> bool:
    return name.startswith(RESERVED_PREFIXES) or name.lower().startswith(RESERVED_PREFIXES_ANY_CASE)


def _in_file(entry: dict) -> bool:
    """Declared in the verified file (not in Frama-C's libc, not a builtin without a place)."""
    return not entry.get("libc") and entry.get("file", "") != ""


def _count(entries, key) -> dict:
    out: dict = {}
    for e in entries:
        out[key(e)] = out.get(key(e), 0) + 1
    return out


def written(view: dict, task_view: dict, target: str, mode: str) -> dict[str, list[dict]]:
    """What the candidate wrote, as Frama-C parsed it.

    Returns:
        ``{"code": functions whose body, locals, calls and annotations are the
        candidate's (its own functions; the target in code-from-spec), "contracts":
        functions whose contract is the candidate's (its own; the target in
        spec-from-code), "functions": the candidate's own functions (not in the task,
        declared in the file), "variables", "types", "globals" (annotations),
        "declarations": the top-level globals of the typed AST the candidate added,
        "occurrences": the declarations as written (Frama-C's untyped AST) the candidate
        added: every re-declaration of a function counts}``.
    """
    mine, task = functions_by_name(view), functions_by_name(task_view)
    own = [f for n, f in mine.items() if n not in task and _in_file(f)]
    tgt = [mine[target]] if target in mine else []
    task_vars = {v["name"] for v in task_view.get("variables", [])}
    task_types = {(t["kind"], t["name"]) for t in task_view.get("types", [])}
    task_globals = {global_key(g) for g in task_view.get("globals", [])}

    def added(key):  # the entries of view[key] in the file beyond the task view's count of each
        before = _count((d for d in task_view.get(key, []) if _in_file(d)), lambda d: (d["kind"], d["name"]))
        seen: dict = {}
        out = []
        for d in view.get(key, []):
            if _in_file(d):
                k = (d["kind"], d["name"])
                seen[k] = seen.get(k, 0) + 1
                if seen[k] > before.get(k, 0):
                    out.append(d)
        return out
    return {
        "code": own + (tgt if mode == "code-from-spec" else []),
        "contracts": own + (tgt if mode == "spec-from-code" else []),
        "functions": own,
        "variables": [v for v in view.get("variables", []) if v["name"] not in task_vars and _in_file(v)],
        "types": [t for t in view.get("types", []) if (t["kind"], t["name"]) not in task_types and _in_file(t)],
        "globals": [g for g in view.get("globals", []) if global_key(g) not in task_globals],
        "declarations": added("declarations"),
        "occurrences": added("occurrences"),
    }


def _frame(f: dict) -> int:
    """The bytes of a function's locals (an unknown size counts 0: ``local-storage`` refuses it)."""
    return sum(v["bytes"] or 0 for v in f.get("locals", []))


def _deepest_chain(name: str, functions: dict[str, dict]) -> tuple[int, list[str]]:
    """The call chain from ``name`` through defined functions whose frames take the most
    bytes together, as ``(bytes, [names])`` (a call back into the chain ends it: recursion
    is the termination rule's)."""
    best: dict[str, tuple[int, list[str]]] = {}

    def go(n: str, path: tuple[str, ...]) -> tuple[int, list[str]]:
        if n in best:
            return best[n]
        f = functions.get(n) or {}
        top = (0, [])
        for c in f.get("calls", []):
            g = c["callee"]
            if g and g not in path and (functions.get(g) or {}).get("defined"):
                top = max(top, go(g, path + (g,)), key=lambda x: x[0])
        best[n] = (_frame(f) + top[0], [n] + top[1])
        return best[n]

    return go(name, (name,))


def _where(c: dict) -> str:
    return f"line {c['line']}"


def allowlist_checks(view: dict, task_view: dict, target: str, mode: str) -> list[dict]:
    """The allow-lists and the fail-closed rules on Frama-C's view (harness/benchmarks/casp/docs.md
    "Allow-lists"): ``view-complete``, ``no-reserved-names``, ``no-redeclarations``,
    ``allow-list``, ``local-storage``.

    Only what the candidate wrote is judged (:func:`written`); the task's own code,
    contracts and declarations are the task's, compared by ``task-unchanged``.
    """
    missing = [k for k in _VIEW_KEYS if k not in view or k not in task_view]
    if missing:
        problem = [f"Frama-C's view lacks {', '.join(missing)} (not written by this kit's view script)"]
        return [checked(n, problem, "") for n in ("view-complete", "no-reserved-names", "no-redeclarations", "allow-list",
                                                 "local-storage")]
    mine, task = functions_by_name(view), functions_by_name(task_view)
    w = written(view, task_view, target, mode)

    # view-complete: nothing the view script could not classify (beyond the task's own)
    task_unclassified = {u["what"] for u in task_view["unclassified"]}
    incomplete = [f"unclassified by the view script: {u['what']} (line {u['line']})" for u in view["unclassified"]
                  if u["what"] not in task_unclassified]

    # no-reserved-names: names the candidate declares; functions it marks as builtins
    reserved = []
    for f in w["functions"]:
        if reserved_name(f["name"]):
            reserved.append(f"function {f['name']}() (line {f['line']}): reserved name")
        if f.get("builtin"):
            reserved.append(f"function {f['name']}() (line {f['line']}) is marked as a Frama-C builtin")
        reserved += [f"parameter {p} of {f['name']}(): reserved name" for p in f["formals"] if reserved_name(p)]
    for f in w["code"]:
        reserved += [f"local {v['name']} of {f['name']}() (line {v['line']}): reserved name" for v in f.get("locals", [])
                     if not v["temp"] and reserved_name(v["name"])]
    for name, f in mine.items():  # the task's functions (the target first) may not become builtins
        if name in task and f.get("builtin") and not task[name].get("builtin"):
            reserved.append(f"function {name}() of the task is marked as a Frama-C builtin")
    reserved += [f"variable {v['name']} (line {v['line']}): reserved name" for v in w["variables"] if reserved_name(v["name"])]
    reserved += [f"{t['kind']} {t['name']} (line {t['line']}): reserved name" for t in w["types"] if reserved_name(t["name"])]
    for g in w["globals"]:
        names = [g["name"]] + [m["name"] for m in g.get("members", [])]
        reserved += [f"logic name {n} (line {g['line']}): reserved name" for n in names if n and reserved_name(n)]

    # no-redeclarations: every function the task's view has (its own and the libc its
    # includes declare) keeps its declarations: one the candidate adds merges its
    # contract and attributes into the task's or libc's (assumed, never proved). The
    # target is exempt: its contract and attributes are judged whole.
    redecl = [f"{d['kind']} of {d['name']}() added (line {d['line']}"
              + (", with a contract" if d.get("contract") else "") + "): the task or Frama-C's libc declares it"
              for d in w["occurrences"] if d["kind"].startswith("function") and d["name"] in task and d["name"] != target]
    redecl += [f"the contract of libc function {n}() differs from Frama-C's libc (a declaration added to it)"
               for n, t in task.items() if t.get("libc") and n in mine and mine[n].get("spec_digest") != t.get("spec_digest")]
    # ... also from a block-scope prototype (not among the occurrences), which merges its
    # attributes into the function's (e.g. noreturn, FC_BUILTIN on a libc function)
    for n, t in task.items():
        if n != target and n in mine:
            extra = [a for a in mine[n].get("attribute_names", []) if a not in t.get("attribute_names", [])]
            redecl += [f"attribute {a} added to {n}() of the " + ("libc" if t.get("libc") else "task") for a in extra]

    # allow-list
    bad = []
    for d in w["declarations"] + w["occurrences"]:
        if d["kind"] not in ALLOWED_DECLARATIONS:
            bad.append(f"global {d['kind']} {d['name']} (line {d['line']})".replace("  ", " "))
    for f in w["functions"]:
        if f.get("variadic") and f["defined"]:
            bad.append(f"variadic function definition {f['name']}() (line {f['line']})")
    tgt_attrs = set((task.get(target) or {}).get("attribute_names", []))
    for f in w["functions"] + ([mine[target]] if target in mine else []):
        old = tgt_attrs if f["name"] == target else set()
        bad += [f"attribute {a} on {f['name']}() (line {f['line']})" for a in f.get("attribute_names", [])
                if a not in ALLOWED_ATTRIBUTES and a not in old]
    allowed_kinds = {"statement": ALLOWED_STATEMENTS, "type": ALLOWED_TYPES, "attribute": ALLOWED_ATTRIBUTES}
    for f in w["code"]:
        for c in f.get("constructs", []):
            if c["name"] not in allowed_kinds.get(c["kind"], ()):
                bad.append(f"{c['kind']} {c['name']} in {f['name']}() ({_where(c)})")
        for a in f["annotations"]:
            if a["kind"] not in ALLOWED_CODE_ANNOTATIONS:
                bad.append(f"{a['kind']} in {f['name']}() (line {a['line']})")
        for c in f["calls"]:
            callee = c["callee"]
            if callee is None:
                bad.append(f"indirect call in {f['name']}() (line {c['line']})")
                continue
            g = mine.get(callee, {})
            if g.get("builtin"):
                bad.append(f"call to Frama-C builtin {callee}() in {f['name']}() (line {c['line']})")
            elif g.get("libc"):
                if not (task.get(callee, {}).get("libc") and callee in ALLOWED_LIBC_CALLEES):
                    bad.append(f"call to libc function {callee}() in {f['name']}() (line {c['line']}): "
                               + ((f"not among the allowed libc functions ({LIBC['refused'][callee]})"
                                   if callee in LIBC["refused"] else "not among the allowed libc functions")
                                  if callee in task else "not declared by the task's includes"))
            elif not (g.get("defined") or callee in task):
                bad.append(f"call to {callee}() in {f['name']}() (line {c['line']}): neither defined in the file "
                           f"nor the task's")
    for f in w["contracts"]:
        for k in f["clauses"]:
            if k["kind"] == "from":  # judged by the rule no-from (fragment.py)
                continue
            if k["kind"] not in ALLOWED_CLAUSES:
                bad.append(f"{k['kind']} clause in the contract of {f['name']}()")
            elif k["kind"] == "terminates" and k["text"].strip() != "\\true":
                bad.append(f"terminates {k['text']} in the contract of {f['name']}() (only \\true)")
    for v in w["variables"]:
        bad += [f"{c['kind']} {c['name']} of variable {v['name']} ({_where(c)})" for c in v.get("constructs", [])
                if c["name"] not in allowed_kinds.get(c["kind"], ()) and not _local_static(v, c)]
        if v.get("ghost") and not any(c["name"] == "ghost" for c in v.get("constructs", [])):
            bad.append(f"ghost variable {v['name']} (line {v['line']})")
    for t in w["types"]:
        bad += [f"{c['kind']} {c['name']} in {t['kind']} {t['name']} ({_where(c)})" for c in t.get("constructs", [])
                if c["name"] not in allowed_kinds.get(c["kind"], ())]

    # local-storage: no variable-length array; the locals of a function fit the bound
    storage = []
    for f in w["code"]:
        locs = f.get("locals", [])
        storage += [f"variable-length array {v['name']} in {f['name']}() (line {v['line']})" for v in locs if v["vla"]]
        storage += [f"local {v['name']} of {f['name']}() (line {v['line']}): size unknown" for v in locs
                    if v["bytes"] is None and not v["vla"]]
        total = _frame(f)
        if total > MAX_LOCAL_BYTES:
            big = max(locs, key=lambda v: v["bytes"] or 0)
            storage.append(f"locals of {f['name']}() take {total} bytes > {MAX_LOCAL_BYTES} "
                           f"(largest: {big['name']}, line {big['line']}, {big['bytes']} bytes)")

    for f in w["code"]:  # every call chain from the candidate's code, its frames together
        size, chain = _deepest_chain(f["name"], mine)
        if size > MAX_STACK_BYTES:
            storage.append(f"the call chain {' -> '.join(chain)} takes {size} bytes of locals > {MAX_STACK_BYTES} "
                           "(WP does not model the stack)")

    def once(problems):
        return list(dict.fromkeys(problems))

    incomplete, reserved, redecl, bad, storage = map(once, (incomplete, reserved, redecl, bad, storage))
    return [
        checked("view-complete", incomplete, "the view script classified everything"),
        checked("no-reserved-names", reserved, "no reserved name, no function marked as a Frama-C builtin"),
        checked("no-redeclarations", redecl, "no declaration added to a function of the task or of Frama-C's libc"),
        checked("allow-list", bad, "statements, types, attributes, callees, clauses and annotations on the allow-lists"),
        checked("local-storage", storage, f"locals within {MAX_LOCAL_BYTES} bytes per function, no variable-length array"),
    ]
