"""CASP integrity rules, judged on Frama-C's own view of the verified file.

The candidate is adversarial. Every rule below is checked on what Frama-C parsed (the
view written by ``harness/verifiers/drivers/framac_view.ml`` from the same parse that WP
verifies, after preprocessing), compared with Frama-C's view of the task's fixed part
(``task.c``), never on the candidate's raw text. The kit's C lexer (:mod:`.cfront`) only
cuts a candidate into pieces to assemble the verified file.

Rules (a broken rule makes the verdict ``rejected``):

- ``no-preprocessing``: the candidate's own text (``region.c``), run through the
  preprocessor with Frama-C's flags, comes out unchanged (whitespace aside): a directive in
  any spelling (``#``, ``%:``, spliced across lines, trigraphs) changes it. The task fixes
  the includes.
- ``task-unchanged``: every function of the task's fixed part has, in the verified file,
  the same type, contract and body (spec-from-code: the target's body and type;
  code-from-spec: the target's contract and type; the target's name must be defined).
- ``no-trusted-declarations``: a function the candidate declares without a body may
  neither carry a contract nor be called (its contract would be assumed, never proved);
  the task's own declarations and Frama-C's libc are allowed.
- ``no-axioms``: no ``axiom`` (in any axiomatic), global/type invariant, ``volatile``
  clause or other global annotation but logic definitions, logic types and lemmas (WP
  proves lemmas) added by the candidate.
- ``no-admit-or-check``: no ``admit``/``check`` clause or annotation in what the candidate
  wrote (an ``admit`` is assumed and never proved; a ``check`` is proved but not used).
- ``no-asm``: no inline assembly in candidate code.
- ``view-complete``: nothing the view script could not classify (fail closed: the view
  lists every function, Frama-C's builtins flagged, every global, every declaration).
- ``no-reserved-names``: no name reserved by Frama-C or the kit (``RESERVED_PREFIXES``)
  declared by the candidate; no function of the candidate's or the task's marked as a
  Frama-C builtin (``FC_BUILTIN``).
- ``no-redeclarations``: no declaration added to a function the task's view has (its own,
  and the libc functions its includes declare): it would merge the candidate's contract
  into theirs.
- ``allow-list``: every statement kind, type construct, attribute, callee, contract
  clause, code annotation, global annotation and kind of global the candidate wrote is on
  a list (``ALLOWED_*``); ``local-storage``: no variable-length array, locals within
  ``MAX_LOCAL_BYTES`` per function (docs/casp.md "Allow-lists").
- spec-from-code only, ``not-vacuous``: the contract is rejected when every one of its
  ensures clauses (all behaviors) is proved by WP for a body that returns an arbitrary
  value and assigns nothing (``havoc.c``), or when it has none; and a behavior whose
  ``assumes`` fails its WP smoke test (can never hold) is rejected.

Total correctness (code-from-spec, Frama-C 25): WP 25 proves partial correctness only
and generates no termination goal. The kit establishes termination of the target and of
every function it calls, as Frama-C >= 27 does by default (``terminates \\true`` unless
stated; a loop without ``loop variant``, a recursive call without a proved
``decreases``, or a call to a function that may not return fails the *Terminating*
goal): every loop has a ``loop variant`` (WP 25 proves its decrease and positivity as
ordinary goals), no ``goto`` that forms a loop (its target reaches it again in Frama-C's CFG
without a loop statement's back edge; forward gotos are fine), no recursion (WP 25 does not
check ``decreases``), no indirect call, no call to a function that never returns
(``noreturn``, ``ensures \\false``, ``terminates \\false`` or ``exits`` in its contract:
``exit``, ``abort``...). Breaking one makes a ``verified`` candidate ``failed``
(as the failed Terminating goal does with Frama-C 30). ``termination`` is recorded:
``proved`` (all of the above, variants proved), ``assumed`` (also calls to body-less
functions the task or Frama-C's libc provide: their termination is their contract's
word), ``failed`` (a rule broken or a variant not proved), ``not-checked`` (gold and
spec-from-code: the code is the task's, as in the paper's protocol).
"""

from __future__ import annotations

import re

from ...model import Job, VerifierResult

#: The names of the rules checked on Frama-C's view (the records' ``checks``).
RULES = ("no-preprocessing", "task-unchanged", "no-trusted-declarations", "no-axioms", "no-admit-or-check", "no-asm",
         "not-vacuous", "task-view", "view-complete", "no-reserved-names", "no-redeclarations", "allow-list",
         "local-storage")
#: Global annotation kinds a candidate may add, also inside an axiomatic
#: (``framac_view.ml``'s names): logic definitions ("logic"), logic functions without a
#: body ("logic declaration", only inside an axiomatic: uninterpreted), inductive
#: definitions, logic types, lemmas (WP proves them) and axiomatics (without axioms).
ALLOWED_GLOBALS = ("logic", "logic declaration", "inductive", "type", "lemma", "check lemma", "axiomatic")

# --- allow-lists for what the candidate wrote (docs/casp.md "Allow-lists") -----------------
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
#: (``static``, ``extern``, ``register``) and ``inline`` are not attributes: allowed.
ALLOWED_ATTRIBUTES = ("const", "unused", "noinline", "always_inline")
#: Frama-C libc functions a candidate may call, when the task's own includes declare them
#: (a libc function the task does not include is the candidate's own declaration: see
#: ``no-trusted-declarations``). Pure or buffer functions with complete contracts in
#: Frama-C's libc; ``exit``, ``abort``, ``_Exit``: allowed here, judged by the
#: termination rule (never return: ``failed``). No Frama-C builtin, ever.
ALLOWED_LIBC_CALLEES = ("abs", "labs", "llabs", "exit", "abort", "_Exit",
                        "strlen", "strnlen", "strcmp", "strncmp", "strchr", "strrchr", "memcmp", "memchr", "memset",
                        "memcpy", "memmove", "strcpy", "strncpy",
                        "isalnum", "isalpha", "isblank", "iscntrl", "isdigit", "isgraph", "islower", "isprint",
                        "ispunct", "isspace", "isupper", "isxdigit", "tolower", "toupper")
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
_VARIANT_GOAL = re.compile(r"_loop_variant_")
_ASSUMES_SMOKE = re.compile(r"_wp_smoke_\w*_assumes$")
#: The files a candidate-mode job ships besides ``candidate.c``: the candidate's own
#: text, the task's fixed part, and (spec-from-code) the do-nothing body.
REGION, REFERENCE, HAVOC = "region.c", "task.c", "havoc.c"


def _check(name: str, problems: list[str], ok_detail: str) -> dict:
    return {"name": name, "ok": not problems, "detail": "; ".join(problems[:4]) if problems else ok_detail}


def preprocessing_check(region: str | None, region_pp: dict | None, region_err: str | None) -> dict | None:
    """``no-preprocessing``: the candidate's text goes through the preprocessor unchanged.

    Args:
        region: the candidate's own text (None: not a candidate mode, no check).
        region_pp: the driver's outputs ``{"comments", "no_comments", "tokens"}``: the text
            preprocessed as Frama-C does (comments kept), preprocessed with comments
            dropped, and only tokenised (``-fpreprocessed``: no directive run, no splice).
        region_err: the preprocessor's messages.

    Whitespace aside, ``comments`` must equal the text (what Frama-C reads is what the
    candidate wrote) and ``no_comments`` must equal ``tokens`` (no line is a directive
    once comments are gone, e.g. ``/* c */ # define``, which Frama-C's C lexer would
    also read as a directive line).
    """
    if region is None:
        return None
    outs = region_pp or {}
    if "exited" in (region_err or "") or any(outs.get(k) is None for k in ("comments", "no_comments", "tokens")):
        first = [x for x in (region_err or "no output").strip().splitlines() if "exited" in x][:1]
        return _check("no-preprocessing", [f"the preprocessor failed on the candidate's text: {first[0] if first else ''}"],
                      "")
    def ws(t):
        return re.sub(r"\s+", "", t)
    same = ws(region) == ws(outs["comments"]) and ws(outs["no_comments"]) == ws(outs["tokens"])
    return _check("no-preprocessing", [] if same else
                  ["the preprocessor changes the candidate's text (a directive, in some spelling, or a line splice)"],
                  "the preprocessor leaves the candidate's text unchanged")


def _functions(view: dict) -> dict[str, dict]:
    return {f["name"]: f for f in view.get("functions", [])}


def _same_type(a: str, b: str) -> bool:
    """Frama-C's printed types are equal, reading an empty parameter list ``()`` (the
    task's declarator ``f()`` declared alone) as the ``(void)`` its definition gives."""
    def norm(t):
        return t[:-2] + "(void)" if t.endswith("()") else t
    return norm(a) == norm(b)


def _global_key(g: dict) -> tuple:
    return g["kind"], g["name"], g["text"]


def view_checks(view: dict, task_view: dict, target: str, mode: str) -> list[dict]:
    """The rules on Frama-C's views (see the module docstring).

    Args:
        view: Frama-C's view of the verified file; task_view: of the task's fixed part.
        target: the function the candidate writes (code-from-spec) or specifies.
        mode: ``spec-from-code`` or ``code-from-spec``.

    Returns:
        ``[{"name", "ok", "detail"}]`` for task-unchanged, no-trusted-declarations,
        no-axioms, no-admit-or-check, no-asm.
    """
    mine, task = _functions(view), _functions(task_view)
    changed, trusted, admits, asm = [], [], [], []
    f = mine.get(target)
    if f is None or not f["defined"]:
        changed.append(f"{target}() is not defined")
    for name, t in task.items():
        c = mine.get(name)
        if c is None:
            changed.append(f"{name}() of the task is missing")
            continue
        if not _same_type(c["type"], t["type"]):
            changed.append(f"signature of {name}(): {c['type']} instead of the task's {t['type']}")
        if not (name == target and mode == "spec-from-code") and c["spec"] != t["spec"]:
            changed.append(f"the contract of {name}() differs from the task's")
        if name == target and mode == "code-from-spec":
            continue
        if c["defined"] != t["defined"] or c["body"] != t["body"]:
            changed.append(f"the body of {name}() differs from the task's")
    called = {c["callee"] for g in mine.values() for c in g["calls"] if c["callee"]}
    for name, c in mine.items():
        if name in task or c.get("libc") or c.get("file", "") == "":  # Frama-C's builtins: see allow-list
            continue
        if not c["defined"] and (c["spec"] or name in called):
            trusted.append(f"{name}() is declared without a body and "
                           + ("carries a contract (assumed, never proved)" if c["spec"] else "is called"))
    written = [c for n, c in mine.items() if n not in task or (n == target)]
    for c in written:
        own_clauses = c["clauses"] if (c["name"] not in task or mode == "spec-from-code") else []
        admits += [f"{k['status']} {k['kind']} in the contract of {c['name']}()" for k in own_clauses
                   if k["status"] != "assert"]
        if c["name"] not in task or mode == "code-from-spec":
            admits += [f"{a['text']} (line {a['line']})" for a in c["annotations"] if a["status"] != "assert"]
            asm += [f"inline assembly in {c['name']}() (line {line})" for line in c["asm"]]
    task_globals = {_global_key(g) for g in task_view.get("globals", [])}
    added = [g for g in view.get("globals", []) if _global_key(g) not in task_globals]
    axioms = [f"{g['kind']} {g['name']} (line {g['line']})".replace("  ", " ") for g in added
              if g["kind"] not in ALLOWED_GLOBALS or g["axioms"]]
    axioms += [f"{m['kind']} {m['name']} in axiomatic {g['name']} (line {g['line']})".replace("  ", " ")
               for g in added for m in g.get("members", []) if m["kind"] not in ALLOWED_GLOBALS]
    return [
        _check("task-unchanged", changed, "the task's functions, signatures and fixed contract/body as Frama-C parsed them"),
        _check("no-trusted-declarations", trusted, "no body-less function of the candidate's carries a contract or is called"),
        _check("no-axioms", axioms, f"{len(added)} global annotation(s) added: logic definitions/types/lemmas only"),
        _check("no-admit-or-check", admits, "no admit or check in what the candidate wrote"),
        _check("no-asm", asm, "no inline assembly"),
    ] + allowlist_checks(view, task_view, target, mode)


#: The keys a view written by this kit's ``framac_view.ml`` has (an older script's view
#: lacks some: fail closed).
_VIEW_KEYS = ("functions", "variables", "types", "declarations", "occurrences", "globals", "unclassified")


def _reserved(name: str) -> bool:
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
    mine, task = _functions(view), _functions(task_view)
    own = [f for n, f in mine.items() if n not in task and _in_file(f)]
    tgt = [mine[target]] if target in mine else []
    task_vars = {v["name"] for v in task_view.get("variables", [])}
    task_types = {(t["kind"], t["name"]) for t in task_view.get("types", [])}
    task_globals = {_global_key(g) for g in task_view.get("globals", [])}

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
        "globals": [g for g in view.get("globals", []) if _global_key(g) not in task_globals],
        "declarations": added("declarations"),
        "occurrences": added("occurrences"),
    }


def _where(c: dict) -> str:
    return f"line {c['line']}"


def allowlist_checks(view: dict, task_view: dict, target: str, mode: str) -> list[dict]:
    """The allow-lists and the fail-closed rules on Frama-C's view (docs/casp.md
    "Allow-lists"): ``view-complete``, ``no-reserved-names``, ``no-redeclarations``,
    ``allow-list``, ``local-storage``.

    Only what the candidate wrote is judged (:func:`written`); the task's own code,
    contracts and declarations are the task's, compared by ``task-unchanged``.
    """
    missing = [k for k in _VIEW_KEYS if k not in view or k not in task_view]
    if missing:
        problem = [f"Frama-C's view lacks {', '.join(missing)} (not written by this kit's view script)"]
        return [_check(n, problem, "") for n in ("view-complete", "no-reserved-names", "no-redeclarations", "allow-list",
                                                 "local-storage")]
    mine, task = _functions(view), _functions(task_view)
    w = written(view, task_view, target, mode)

    # view-complete: nothing the view script could not classify (beyond the task's own)
    task_unclassified = {u["what"] for u in task_view["unclassified"]}
    incomplete = [f"unclassified by the view script: {u['what']} (line {u['line']})" for u in view["unclassified"]
                  if u["what"] not in task_unclassified]

    # no-reserved-names: names the candidate declares; functions it marks as builtins
    reserved = []
    for f in w["functions"]:
        if _reserved(f["name"]):
            reserved.append(f"function {f['name']}() (line {f['line']}): reserved name")
        if f.get("builtin"):
            reserved.append(f"function {f['name']}() (line {f['line']}) is marked as a Frama-C builtin")
        reserved += [f"parameter {p} of {f['name']}(): reserved name" for p in f["formals"] if _reserved(p)]
    for f in w["code"]:
        reserved += [f"local {v['name']} of {f['name']}() (line {v['line']}): reserved name" for v in f.get("locals", [])
                     if not v["temp"] and _reserved(v["name"])]
    for name, f in mine.items():  # the task's functions (the target first) may not become builtins
        if name in task and f.get("builtin") and not task[name].get("builtin"):
            reserved.append(f"function {name}() of the task is marked as a Frama-C builtin")
    reserved += [f"variable {v['name']} (line {v['line']}): reserved name" for v in w["variables"] if _reserved(v["name"])]
    reserved += [f"{t['kind']} {t['name']} (line {t['line']}): reserved name" for t in w["types"] if _reserved(t["name"])]
    for g in w["globals"]:
        names = [g["name"]] + [m["name"] for m in g.get("members", [])]
        reserved += [f"logic name {n} (line {g['line']}): reserved name" for n in names if n and _reserved(n)]

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
                               + ("not among the allowed libc functions" if callee in task
                                  else "not declared by the task's includes"))
            elif not (g.get("defined") or callee in task):
                bad.append(f"call to {callee}() in {f['name']}() (line {c['line']}): neither defined in the file "
                           f"nor the task's")
    for f in w["contracts"]:
        for k in f["clauses"]:
            if k["kind"] not in ALLOWED_CLAUSES:
                bad.append(f"{k['kind']} clause in the contract of {f['name']}()")
            elif k["kind"] == "terminates" and k["text"].strip() != "\\true":
                bad.append(f"terminates {k['text']} in the contract of {f['name']}() (only \\true)")
    for v in w["variables"]:
        bad += [f"{c['kind']} {c['name']} of variable {v['name']} ({_where(c)})" for c in v.get("constructs", [])
                if c["name"] not in allowed_kinds.get(c["kind"], ())]
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
        total = sum(v["bytes"] or 0 for v in locs)
        if total > MAX_LOCAL_BYTES:
            big = max(locs, key=lambda v: v["bytes"] or 0)
            storage.append(f"locals of {f['name']}() take {total} bytes > {MAX_LOCAL_BYTES} "
                           f"(largest: {big['name']}, line {big['line']}, {big['bytes']} bytes)")

    def once(problems):
        return list(dict.fromkeys(problems))

    incomplete, reserved, redecl, bad, storage = map(once, (incomplete, reserved, redecl, bad, storage))
    return [
        _check("view-complete", incomplete, "the view script classified everything"),
        _check("no-reserved-names", reserved, "no reserved name, no function marked as a Frama-C builtin"),
        _check("no-redeclarations", redecl, "no declaration added to a function of the task or of Frama-C's libc"),
        _check("allow-list", bad, "statements, types, attributes, callees, clauses and annotations on the allow-lists"),
        _check("local-storage", storage, f"locals within {MAX_LOCAL_BYTES} bytes per function, no variable-length array"),
    ]


def termination(view: dict, target: str, unproved: list[str]) -> tuple[str, list[str]]:
    """Termination of ``target`` and of everything it calls (see the module docstring).

    Args:
        unproved: names of the goals WP did not prove (a loop variant among them fails).

    Returns:
        ``(status, problems)``: status ``proved`` | ``assumed`` | ``failed``; problems
        say why it failed or what was assumed.
    """
    mine = _functions(view)
    problems, assumed = [], []
    reach, stack = [], [target]
    while stack:  # the functions the target reaches through direct calls
        name = stack.pop()
        if name in reach or name not in mine:
            continue
        reach.append(name)
        stack += [c["callee"] for c in mine[name]["calls"] if c["callee"]]
    for name in reach:
        f = mine[name]
        if not f["defined"]:
            if f["noreturn"]:
                problems.append(f"{name}() never returns (noreturn, or its contract says so)")
            else:
                assumed.append(f"{name}() ({'Frama-C libc' if f.get('libc') else 'declared without a body'})")
            continue
        problems += [f"loop without a loop variant in {name}() (line {lp['line']})" for lp in f["loops"] if not lp["variant"]]
        problems += [f"goto forming a loop in {name}() (line {g['line'] if isinstance(g, dict) else g})"
                     for g in f["gotos"] if not isinstance(g, dict) or g.get("cycle", True)]
        problems += [f"indirect call in {name}() (line {c['line']})" for c in f["calls"] if c["callee"] is None]
    cycle = _cycle({n: [c["callee"] for c in mine[n]["calls"] if c["callee"] in reach] for n in reach if mine[n]["defined"]})
    if cycle:
        problems.append(f"recursion {' -> '.join(cycle)}: Frama-C 25 does not check decreases")
    problems += [f"loop variant not proved: {g}" for g in unproved if _VARIANT_GOAL.search(g)]
    if problems:
        return "failed", problems
    return ("assumed", assumed) if assumed else ("proved", [])


def _cycle(graph: dict[str, list[str]]) -> list[str]:
    """A call cycle in ``graph`` (name -> callees) as ``[f, g, ..., f]``, or []."""
    state: dict[str, int] = {}

    def visit(n, path):
        state[n] = 1
        for m in graph.get(n, ()):
            if state.get(m) == 1:
                return path[path.index(m):] + [m] if m in path else [n, m]
            if m not in state and m in graph:
                found = visit(m, path + [m])
                if found:
                    return found
        state[n] = 2
        return []

    for n in graph:
        if n not in state:
            found = visit(n, [n])
            if found:
                return found
    return []


def vacuity_check(havoc: VerifierResult | None, inconsistent: list[str], dead: list[str]) -> dict:
    """``not-vacuous`` (spec-from-code): WP on the candidate's ensures over a body that
    returns an arbitrary value and assigns nothing must fail at least one of them; no
    smoke test of the requires may fail (``inconsistent``: the verifier's
    ``VerifierResult.vacuous``) nor one of a behavior's ``assumes`` (among ``dead``, the
    other failed smoke tests)."""
    problems = [f"behavior can never apply: smoke test {n} failed (its assumes contradict the requires)"
                for n in dead if _ASSUMES_SMOKE.search(n)]
    problems += [f"inconsistent precondition: smoke test {n} failed" for n in inconsistent]
    if havoc is None or havoc.verdict == "invalid" or havoc.goals is None:
        problems.append("the do-nothing-body check could not run: "
                        + (havoc.reason if havoc else "no output") + " (fail closed)")
        detail = ""
    else:
        g = havoc.goals
        detail = f"{g.proved}/{g.total} ensures proved for a body that returns an arbitrary value and assigns nothing"
        if g.total == 0:
            problems.append("the contract has no ensures clause")
        elif g.proved == g.total:
            problems.append(f"vacuous: every ensures holds whatever the function does ({detail})")
    return _check("not-vacuous", problems, detail)


def judge(job: Job, result: VerifierResult, target: str) -> tuple[str, str] | None:
    """Apply the rules to a candidate-mode job; append the checks to ``result.checks`` and
    ``termination`` (and ``trivial_task``) to ``result.extra``.

    Returns:
        ``("rejected", reason)`` when a rule is broken (on the executor's gate run, only
        the rules that read the view and the preprocessor: ``extra["gate"]``),
        ``("failed", reason)`` when a code-from-spec candidate's termination is not established (the reason says so
        before WP's own), ``("verified", ...)`` for a trivial task on which WP generated
        no goal, None to keep the verifier's verdict.
    """
    art = result.artifacts
    gate = bool(result.extra.get("gate"))  # the gate's output: the view and the preprocessor only
    if gate and (art.get("view") is None or art.get("task_view") is None):
        return None  # nothing final without both views: the verification decides, failing closed there
    checks = []
    pp = preprocessing_check(job.files.get(REGION), art.get("region_pp"), art.get("region_err"))
    if pp:
        checks.append(pp)
    view, task_view = art.get("view"), art.get("task_view")
    if task_view is None:
        checks.append(_check("task-view", ["Frama-C could not parse the task's fixed part"], ""))
    elif view is not None:
        checks += view_checks(view, task_view, target, job.mode)
    if gate:  # the gate's output: the rules that read the view and the preprocessor, no more
        result.checks.extend(checks)
        result.extra["termination"] = "not-checked"
        broken = [c for c in checks if not c["ok"]]
        return ("rejected", _broken_reason(broken)) if broken else None
    if job.mode == "spec-from-code" and view is not None:
        checks.append(vacuity_check(art.get("havoc"), result.vacuous, result.extra.get("dead_code", [])))
    if view is not None:  # issue 26: a proof that depends on dead code (task_sound: core.judge set it)
        sound = result.extra.get("task_sound")
        checks.append(dead_code_check(result.extra.get("dead_code", []), art.get("smoke_by_function") or {}, view,
                                      sound if isinstance(sound, bool) else None))
    result.checks.extend(checks)
    status = "not-checked"
    term_problems: list[str] = []
    if job.mode == "code-from-spec" and view is not None and task_view is not None:
        status, term_problems = termination(view, target, [g["name"] for g in result.goal_results])
        t = _functions(task_view).get(target) or {}
        if not any(k["kind"] == "ensures" for k in t.get("clauses", [])):
            result.extra["trivial_task"] = True
    result.extra["termination"] = status
    if term_problems:
        result.extra["termination_detail"] = term_problems[:6]
    broken = [c for c in checks if not c["ok"]]
    if broken:
        return "rejected", _broken_reason(broken)
    if view is None:
        return None  # Frama-C did not parse the file: its own verdict (invalid) stands
    if status == "failed" and result.verdict in ("verified", "failed"):
        return "failed", f"termination not established: {'; '.join(term_problems[:3])} ({result.reason})"
    if result.extra.get("trivial_task"):
        if result.verdict == "failed" and result.goals and result.goals.total == 0:
            return "verified", "trivial task: the task's contract has no ensures and WP generated no proof obligation"
        if result.verdict == "verified":
            return "verified", f"trivial task: the task's contract has no ensures ({result.reason})"
    return None


def _broken_reason(broken: list[dict]) -> str:
    """The reason of a rejection: each broken check as ``name: detail``."""
    return "; ".join(f"{c['name']}: {c['detail']}" for c in broken)


# --------------------------------------------------------------------------- issue 26
# Task soundness, proofs that depend on dead code, requires not stronger than the task's.
# See docs/casp.md "Task soundness and requires".

#: The files a job ships for these checks: the task's fixed part with its gold code (every
#: mode), and the requires probe (spec-from-code).
SOUND, REQUIRES = "sound.c", "requires.c"
#: Names of the rules of this part (the records' ``checks``).
SOUNDNESS_RULES = ("no-dead-code-proof",)
_DEAD_CALL = re.compile(r"^typed_(?P<callee>\w+)_wp_smoke_dead_call_s(?P<sid>\d+)$")
_DEAD_SID = re.compile(r"_wp_smoke_dead_(?:code|call|loop)\w*?_s(\d+)$")


def task_soundness(sound: VerifierResult | None,
                   smoke_by_function: dict | None = None) -> tuple[bool | None, list[str]]:
    """Is the task's fixed part consistent, as far as WP's smoke tests see?

    Args:
        sound: the driver's smoke-test run on ``sound.c`` (the task's prelude and contract
            with its gold code, and a probe per contract that calls its function twice: see
            ``core._soundness_file``; smoke tests of requires, behaviours' assumes and
            calls, see ``framac.py`` ``VERIKIT_SOUND_ARGS``), or None when not run.
        smoke_by_function: that run's smoke tests by function (from its report).

    A failed smoke test of a requires or an assumes makes the task inconsistent; so does
    an unreachable call that follows, in the same function, a call that is reached (a
    contract whose ensures contradict its requires, the prelude's axioms on the symbols
    it uses included): a call in a defensive branch of the gold code, unreachable from
    the start, is not the task's inconsistency.

    Returns:
        ``(True, [])`` when no smoke test failed; ``(False, [failed smoke tests])`` when one
        did (an inconsistent precondition, a behaviour that never applies, or a call after
        which nothing is reachable: the prelude's contracts or axioms contradict); ``(None,
        [why])`` when the run did not give an answer (not run, Frama-C rejected the file).
    """
    if sound is None:
        return None, ["the soundness run was not made"]
    if sound.verdict in ("invalid", "infra_error"):
        return None, [f"the soundness run gave no answer: {sound.reason}"]
    dead = list(sound.extra.get("dead_code", []))
    failed = list(sound.vacuous) + [n for n in dead if not _DEAD_SID.search(n)]
    calls = [n for n in dead if _DEAD_CALL.match(n)]
    if not smoke_by_function:
        failed += calls  # no report to place them: every unreachable call counts (fail closed)
    for fn, tests in (smoke_by_function or {}).items():
        reached = [int(_DEAD_CALL.match(n)["sid"]) for n in tests if _DEAD_CALL.match(n) and n not in dead]
        failed += [f"{n} (a call in {fn}() after one that returns)" for n in tests
                   if n in calls and any(sid < int(_DEAD_CALL.match(n)["sid"]) for sid in reached)]
    return (not failed), failed


def record_soundness(job: Job, result: VerifierResult) -> bool | None:
    """Write the task's soundness into ``result.extra``: ``task_sound`` (True, False or
    ``"unknown"``) and, when not True, ``task_sound_detail`` (the failed smoke tests, or why
    there is no answer). Returns the soundness (None: unknown)."""
    art = result.artifacts or {}
    sound, detail = task_soundness(art.get("sound"), art.get("sound_smoke_by_function"))
    result.extra["task_sound"] = "unknown" if sound is None else sound
    if sound is not True:
        result.extra["task_sound_detail"] = detail[:6]
    return sound


def dead_code_check(dead: list[str], smoke_by_function: dict[str, list[str]], view: dict | None,
                    task_sound: bool | None) -> dict:
    """``no-dead-code-proof``: the proof does not depend on unreachable code.

    Args:
        dead: the failed smoke tests of the verification other than requires (WP's
            ``dead_code``/``dead_call``/``dead_loop``/assumes tests, ``result.extra["dead_code"]``).
        smoke_by_function: every smoke test WP made, by the function whose code holds it
            (``framac.py`` ``artifacts()["smoke_by_function"]``).
        view: Frama-C's view of the verified file (which callees have no body).
        task_sound: :func:`task_soundness` of the task.

    Unreachable code is allowed where an honest candidate has it: a defensive branch the
    precondition excludes (CASP 04_140's gold). It is not allowed (the check fails) when

    - the task is inconsistent (``task_sound`` False) and the verification has any failed
      dead-code smoke test: the unreachable code may be made so by the task's own
      contradiction (CASP 06_114);
    - in one function, a call to a function without a body (a contract the kit trusts:
      the task's declarations, Frama-C's libc) is reachable (its ``dead_call`` smoke test
      passed) and a statement after it (a larger statement id) is not: the call cannot
      return in that state, so everything after it is proved from a contradiction.
      (A candidate's own function has a body whose contract WP proves, and termination is
      judged separately, so a call to it cannot be the source.)

    Returns:
        ``{"name", "ok", "detail"}``.
    """
    dead = [n for n in dead if _DEAD_SID.search(n)]
    if not dead:
        return _check("no-dead-code-proof", [], "no unreachable code")
    if task_sound is False:
        return _check("no-dead-code-proof", [f"unreachable code in a proof on an inconsistent task: smoke test {n} failed"
                                             for n in dead], "")
    bodiless = {f["name"] for f in (view or {}).get("functions", []) if not f.get("defined")}
    problems = []
    failed = set(dead)
    for fn, tests in smoke_by_function.items():
        dead_sids = sorted((int(_DEAD_SID.search(n).group(1)), n) for n in tests if n in failed and _DEAD_SID.search(n))
        for n in tests:
            m = _DEAD_CALL.match(n)
            if not m or n in failed or m["callee"] not in bodiless:
                continue
            after = [name for sid, name in dead_sids if sid > int(m["sid"])]
            if after:
                problems.append(f"in {fn}(), the call to {m['callee']}() (statement s{m['sid']}) is reachable but what "
                                f"follows it is not (smoke test {after[0]} failed): the call cannot return there, "
                                f"the proof depends on dead code")
    return _check("no-dead-code-proof", problems,
                  f"unreachable code only where the precondition excludes it ({', '.join(dead[:3])})")


def requires_check(run: VerifierResult | None) -> tuple[bool | str, str]:
    """spec-from-code: are the candidate's requires implied by the task's (gold) requires?

    Args:
        run: the driver's WP run on ``requires.c``: a probe with the task's own contract
            and the target's parameters calls the target, declared with the candidate's
            contract (and the candidate's logic definitions in scope); WP's goals are the
            call's preconditions (the candidate's requires, per behaviour under its
            assumes) under the task's requires. None when the probe was not built.

    Returns:
        ``(value, detail)``: value True (every precondition goal proved, or none: the
        candidate requires nothing), False (a goal not proved within the run's time:
        the candidate may require more than the task), ``"unknown"`` (no probe, or
        Frama-C rejected it).
    """
    if run is None:
        return "unknown", "no probe (the candidate has no contract, or the task's parameters cannot be read)"
    if run.verdict in ("invalid", "infra_error") or run.goals is None:
        return "unknown", f"the probe gave no answer: {run.reason}"
    g = run.goals
    if g.total == 0:
        return True, "the candidate's contract has no requires"
    if g.proved == g.total:
        return True, f"the task's requires imply the candidate's ({g.proved}/{g.total} goals proved)"
    names = ", ".join(x["name"] for x in run.goal_results[:3])
    return False, f"the task's requires do not imply the candidate's: {g.proved}/{g.total} proved; not proved: {names}"
