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
  ``MAX_LOCAL_BYTES`` per function (harness/benchmarks/casp/docs.md "Allow-lists").
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

The rules that keep a proof inside WP's sound fragment (``typed-memory``, ``no-from``,
``compiler-agrees``, ``well-founded-logic``) are in :mod:`.fragment`. The allow-lists are
in :mod:`.allowlists`, the checks of task soundness, dead code and requires in
:mod:`.soundness`, what the rules share in :mod:`.checks`; their names are importable from
here too.
"""

from __future__ import annotations

import re

from ...model import Job, VerifierResult
from .allowlists import allowlist_checks, platform_check
from .checks import checked, functions_by_name, global_key
from .fragment import RULES as FRAGMENT_RULES
from .fragment import fragment_checks
from .soundness import dead_code_check



#: The names of the rules checked on Frama-C's view (the records' ``checks``).
RULES = ("no-preprocessing", "task-unchanged", "no-trusted-declarations", "no-axioms", "no-admit-or-check", "no-asm",
         "not-vacuous", "task-view", "view-complete", "no-reserved-names", "no-redeclarations", "allow-list",
         "local-storage", "platform-names") + FRAGMENT_RULES
#: Global annotation kinds a candidate may add, also inside an axiomatic
#: (``framac_view.ml``'s names): logic definitions ("logic"), logic functions without a
#: body ("logic declaration", only inside an axiomatic: uninterpreted), inductive
#: definitions, logic types, lemmas (WP proves them) and axiomatics (without axioms).
ALLOWED_GLOBALS = ("logic", "logic declaration", "inductive", "type", "lemma", "check lemma", "axiomatic")
_VARIANT_GOAL = re.compile(r"_loop_variant_")
_ASSUMES_SMOKE = re.compile(r"_wp_smoke_\w*_assumes$")
#: The files a candidate-mode job ships besides ``candidate.c``: the candidate's own
#: text, the task's fixed part, and (spec-from-code) the do-nothing body.
REGION, REFERENCE, HAVOC = "region.c", "task.c", "havoc.c"


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
        return checked("no-preprocessing", [f"the preprocessor failed on the candidate's text: {first[0] if first else ''}"],
                      "")
    def ws(t):
        return re.sub(r"\s+", "", t)
    same = ws(region) == ws(outs["comments"]) and ws(outs["no_comments"]) == ws(outs["tokens"])
    return checked("no-preprocessing", [] if same else
                  ["the preprocessor changes the candidate's text (a directive, in some spelling, or a line splice)"],
                  "the preprocessor leaves the candidate's text unchanged")


def _same_type(a: str, b: str) -> bool:
    """Frama-C's printed types are equal, reading an empty parameter list ``()`` (the
    task's declarator ``f()`` declared alone) as the ``(void)`` its definition gives."""
    def norm(t):
        return t[:-2] + "(void)" if t.endswith("()") else t
    return norm(a) == norm(b)


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
    mine, task = functions_by_name(view), functions_by_name(task_view)
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
    written = [c for n, c in mine.items() if n not in task or (n == target)]  # noqa: F811  (a local list; written() is re-exported above)
    for c in written:
        own_clauses = c["clauses"] if (c["name"] not in task or mode == "spec-from-code") else []
        admits += [f"{k['status']} {k['kind']} in the contract of {c['name']}()" for k in own_clauses
                   if k["status"] != "assert"]
        if c["name"] not in task or mode == "code-from-spec":
            admits += [f"{a['text']} (line {a['line']})" for a in c["annotations"] if a["status"] != "assert"]
            asm += [f"inline assembly in {c['name']}() (line {line})" for line in c["asm"]]
    task_globals = {global_key(g) for g in task_view.get("globals", [])}
    added = [g for g in view.get("globals", []) if global_key(g) not in task_globals]
    axioms = [f"{g['kind']} {g['name']} (line {g['line']})".replace("  ", " ") for g in added
              if g["kind"] not in ALLOWED_GLOBALS or g["axioms"]]
    axioms += [f"{m['kind']} {m['name']} in axiomatic {g['name']} (line {g['line']})".replace("  ", " ")
               for g in added for m in g.get("members", []) if m["kind"] not in ALLOWED_GLOBALS]
    return [
        checked("task-unchanged", changed, "the task's functions, signatures and fixed contract/body as Frama-C parsed them"),
        checked("no-trusted-declarations", trusted, "no body-less function of the candidate's carries a contract or is called"),
        checked("no-axioms", axioms, f"{len(added)} global annotation(s) added: logic definitions/types/lemmas only"),
        checked("no-admit-or-check", admits, "no admit or check in what the candidate wrote"),
        checked("no-asm", asm, "no inline assembly"),
    ] + allowlist_checks(view, task_view, target, mode)


def termination(view: dict, target: str, unproved: list[str]) -> tuple[str, list[str]]:
    """Termination of ``target`` and of everything it calls (see the module docstring).

    Args:
        unproved: names of the goals WP did not prove (a loop variant among them fails).

    Returns:
        ``(status, problems)``: status ``proved`` | ``assumed`` | ``failed``; problems
        say why it failed or what was assumed.
    """
    mine = functions_by_name(view)
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
    return checked("not-vacuous", problems, detail)


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
    if gate and result.verdict != "invalid" and (art.get("view") is None or art.get("task_view") is None):
        return None  # nothing final without both views: the verification decides, failing closed there
    # (a file Frama-C rejected has no view: the rules below read what the verification's would)
    checks = []
    pp = preprocessing_check(job.files.get(REGION), art.get("region_pp"), art.get("region_err"))
    if pp:
        checks.append(pp)
        if pp["ok"]:
            checks.append(platform_check(art.get("region_pp")))
    view, task_view = art.get("view"), art.get("task_view")
    if task_view is None:
        checks.append(checked("task-view", ["Frama-C could not parse the task's fixed part"], ""))
    elif view is not None:
        checks += view_checks(view, task_view, target, job.mode)
        checks += fragment_checks(view, task_view, target, job.mode, art.get("compiler_log"))
    if gate:  # the gate's output: the rules that read the view and the preprocessor, no more
        result.checks.extend(checks)
        result.extra["termination"] = "not-checked"
        broken = [c for c in checks if not c["ok"]]
        return ("rejected", _broken_reason(broken)) if broken else None
    if job.mode == "spec-from-code" and view is not None:
        checks.append(vacuity_check(art.get("havoc"), result.vacuous, result.extra.get("dead_code", [])))
    if view is not None:  # a proof that depends on dead code (task_sound: jobs.judge set it)
        sound = result.extra.get("task_sound")
        checks.append(dead_code_check(result.extra.get("dead_code", []), art.get("smoke_by_function") or {}, view,
                                      sound if isinstance(sound, bool) else None))
    result.checks.extend(checks)
    status = "not-checked"
    term_problems: list[str] = []
    if job.mode == "code-from-spec" and view is not None and task_view is not None:
        status, term_problems = termination(view, target, [g["name"] for g in result.goal_results])
        t = functions_by_name(task_view).get(target) or {}
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
