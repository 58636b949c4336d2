"""CASP's soundness checks: task soundness (WP's smoke tests on the task's fixed part with
its gold code), proofs that depend on dead code (``no-dead-code-proof``), and requires not
stronger than the task's. See harness/benchmarks/casp/docs.md "Task soundness and requires"."""

from __future__ import annotations

import re

from ...model import Job, VerifierResult
from .checks import checked

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
            ``jobs._soundness_file``; smoke tests of requires, behaviours' assumes and
            calls, see ``harness.verifiers.framac`` ``VERIKIT_SOUND_ARGS``), or None when not run.
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
            (``harness.verifiers.framac`` ``artifacts()["smoke_by_function"]``).
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
        return checked("no-dead-code-proof", [], "no unreachable code")
    if task_sound is False:
        return checked("no-dead-code-proof", [f"unreachable code in a proof on an inconsistent task: smoke test {n} failed"
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
    return checked("no-dead-code-proof", problems,
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
