"""CASP jobs and verdicts: the files of a job (:func:`build_job`: the verified file, and
those of the integrity rules, the soundness checks and the execution cross-check) and
the final verdict (:func:`judge`)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from ...model import Candidate, Job, VerifierResult, sha256_text
from . import execution, integrity, soundness
from .cfront import CSyntaxError, acsl_blocks, code_tokens, find_function, normalize_acsl, tokens
from .tasks import MODES, NAME, VERIFIER, VERSION, Task, task_declarator

REGION, REFERENCE, HAVOC = integrity.REGION, integrity.REFERENCE, integrity.HAVOC
_STORAGE = {"static", "inline", "__inline", "__inline__", "extern"}


def _havoc_definition(task: Task) -> str:
    """The task's function with a body that returns an arbitrary value (an
    uninitialised local) and assigns nothing, for the vacuity check; the declarator is
    the task's own text."""
    declarator = task_declarator(task).rstrip()
    toks = [t.text for t in tokens(declarator)]
    ret = [t for t in toks[: toks.index(task.function)] if t not in _STORAGE]
    if ret == ["void"]:
        return declarator + " { }"
    return f"{declarator} {{ {' '.join(ret)} vk_havoc_result; return vk_havoc_result; }}"


def _formals(task: Task) -> list[str] | None:
    """The parameter names of the task's function, read from its declarator (the task's
    own text, not a candidate's): see :func:`_param_names`."""
    return _param_names(task_declarator(task), task.function)


def _param_names(declarator: str, name: str) -> list[str] | None:
    """The parameter names in a declarator of function ``name`` (task text only): the
    last identifier of each top-level parameter; None when the list cannot be read so (a
    function-pointer parameter, a K&R declarator, varargs)."""
    toks = tokens(declarator)
    i = next((k for k, t in enumerate(toks) if t.text == name), None)
    if i is None or i + 1 >= len(toks) or toks[i + 1].text != "(":
        return None
    params, cur, depth = [], [], 0
    for t in toks[i + 2:]:
        if t.text == "(":
            return None
        if t.text == ")":
            break
        if t.text in "[]":
            depth += 1 if t.text == "[" else -1
        if t.text == "," and depth == 0:
            params.append(cur)
            cur = []
        else:
            cur.append(t)
    params.append(cur)
    names = []
    for p in params:
        idents = [t.text for t in p if t.kind == "ident"]
        if [t.text for t in p] in ([], ["void"]) and len(params) == 1:
            return []
        if len(idents) < 2 or any(t.text == "..." for t in p):
            return None
        names.append(idents[-1])
    return names


def _requires_probe(task: Task, header: str) -> str | None:
    """``requires.c`` (spec-from-code): the prelude, the candidate's text
    (its logic definitions and its contract) on a declaration of the target, then a probe
    function with the task's own contract and the target's parameters that calls the
    target: WP's goals on the call's preconditions say whether the task's requires imply
    the candidate's. None when the parameters cannot be read."""
    names = _formals(task)
    if names is None:
        return None
    declarator = task_declarator(task).rstrip()
    probe = re.sub(rf"\b{re.escape(task.function)}\b", "vk_requires_probe", declarator, count=1)
    toks = [t.text for t in tokens(declarator)]
    ret = [t for t in toks[: toks.index(task.function)] if t not in _STORAGE]
    call = f"{task.function}({', '.join(names)})"
    body = f"{{ {call}; }}" if ret == ["void"] else f"{{ return {call}; }}"
    return (task.prelude + header + _sep(header) + declarator + ";\n" + task.contract + "\n" + probe + " " + body + "\n")


def _prelude_declarations(prelude: str) -> list[tuple[str, str, str]]:
    """The body-less functions the task's prelude declares with a contract:
    ``[(contract, declarator, name)]`` as written (the task's own text, never a
    candidate's; a declaration this reading misses is simply not probed)."""
    toks = [t for t in tokens(prelude) if t.kind != "comment"]
    out, depth = [], 0
    for i, t in enumerate(toks):
        if t.text in ("{", "}") and t.kind == "punct":
            depth += 1 if t.text == "{" else -1
            continue
        if t.kind != "acsl" or depth != 0 or not t.text.startswith("/*@"):
            continue
        j = i + 1
        while j < len(toks) and toks[j].text not in (";", "{", "}") and toks[j].kind != "acsl":
            j += 1
        decl = toks[i + 1: j]
        if j >= len(toks) or toks[j].text != ";" or any(x.text in ("=", "typedef") or x.kind == "pp" for x in decl):
            continue
        k = next((n for n in range(len(decl) - 1) if decl[n].kind == "ident" and decl[n + 1].text == "("), None)
        if k is None or k == 0:
            continue
        out.append((t.text, prelude[decl[0].start: decl[-1].end], decl[k].text))
    return out


def _soundness_file(task: Task) -> str:
    """``sound.c``: the task's gold file, then for the target and every
    body-less function the prelude declares with a contract, a probe
    ``vk_sound_probe_<i>`` with that function's contract and parameters that calls it
    twice. WP's smoke test of the second call fails when what the first call's contract
    guarantees (its ensures, with the prelude's axioms on the symbols it uses) contradicts
    its requires; its requires smoke test when the requires itself does. Made once per
    task text (every candidate of a task has the same)."""
    return _soundness_text(task.gold, task.prelude, task.contract, task_declarator(task), task.function)


@lru_cache(maxsize=256)
def _soundness_text(gold: str, prelude: str, contract: str, declarator: str, function: str) -> str:
    decls = [(contract, declarator.rstrip(), function)] + _prelude_declarations(prelude)
    probes = []
    for i, (contract, declarator, name) in enumerate(decls):
        names = _param_names(declarator, name)
        if names is None:
            continue
        toks = [t.text for t in tokens(declarator)]
        ret = [x for x in toks[: toks.index(name)] if x not in _STORAGE]
        probe = re.sub(rf"\b{re.escape(name)}\b", f"vk_sound_probe_{i}", declarator, count=1)
        probe = " ".join(x for x in probe.split(" ") if x not in _STORAGE)
        call = f"{name}({', '.join(names)})"
        body = f"{{ {call}; {call}; }}" if ret == ["void"] else f"{{ (void) {call}; return {call}; }}"
        probes.append(f"{contract}\n{probe} {body}\n")
    return gold + "\n\n" + "".join(probes)


def _sep(text: str) -> str:
    return "\n" if text and not text.endswith("\n") else ""


def build_job(task: Task, cand: Candidate, mode: str, options: dict, dataset: dict, ctx: Any = None) -> Job:
    """Turn (task, candidate, mode) into a :class:`Job` (``ctx`` is not used: CASP needs no
    per-run state).

    The candidate's text is never trusted to carry the task's fixed part: the verified
    file always takes the task's prelude, and the task's function (spec-from-code) or
    contract (code-from-spec) verbatim. The kit's lexer only cuts the candidate; the
    integrity rules are judged on Frama-C's view (:mod:`.integrity`), for which the job
    also ships ``region.c`` (the candidate's own text) and, spec-from-code, ``havoc.c``;
    ``task.c`` (the task's fixed part, for its view) and ``sound.c`` (the soundness smoke
    tests) depend on the task alone and are the job's task runs (``Job.task_run``). Two
    policy checks are made here: the candidate's copy of the function it specifies
    (spec-from-code) and of the contract it implements (code-from-spec), when it writes
    one, must be the task's.
    """
    checks: list[dict] = []
    precheck = None
    files: dict[str, str] = {}
    task_part: dict[str, str] = {}  # the task's fixed part, for its view: a task run
    out = cand.output
    if mode != "gold":
        options = dict(options, function=task.function)  # the target, for the judge and the vacuity run
    try:
        if mode == "gold":
            files["candidate.c"] = task.gold
        elif mode == "spec-from-code":
            fdef = find_function(out, task.function)
            if fdef is None:
                header = out if acsl_blocks(out) else ""
            else:
                header = out[: fdef.start]
                same = code_tokens(out[fdef.start: fdef.end]) == code_tokens(task.code)
                checks.append({"name": "body-unchanged", "ok": same,
                               "detail": "C tokens identical to the task's function" if same
                               else "the candidate changed the C code of the function it must specify"})
            if not header.strip():
                precheck = ("invalid", "the candidate contains no ACSL contract")
            files["candidate.c"] = task.prelude + header + _sep(header) + task.code + task.suffix
            files[REGION] = header
            task_part[REFERENCE] = task.prelude + task.code + "\n" + task.suffix
            files[HAVOC] = task.prelude + header + _sep(header) + _havoc_definition(task) + "\n"
            probe = _requires_probe(task, header) if header.strip() else None
            if probe is not None:
                files[soundness.REQUIRES] = probe
        elif mode == "code-from-spec":
            fdef = find_function(out, task.function)
            if fdef is None:
                precheck = ("invalid", f"the candidate defines no function {task.function}()")
            else:
                before, function, after = out[: fdef.contract_start], out[fdef.start: fdef.end], out[fdef.end:]
                if fdef.contract is not None:
                    same = normalize_acsl(fdef.contract) == normalize_acsl(task.contract)
                    checks.append({"name": "contract-unchanged", "ok": same,
                                   "detail": "identical to the task's contract" if same
                                   else "the candidate's contract differs from the task's"})
                files["candidate.c"] = (task.prelude + before + _sep(before) + task.contract + "\n" + function + after + "\n"
                                        + task.suffix)
                files[REGION] = before + _sep(before) + function + after + "\n"
                task_part[REFERENCE] = (task.prelude + task.contract + "\n" + task_declarator(task).rstrip() + ";\n"
                                        + task.suffix)
        else:
            raise ValueError(f"unknown CASP mode {mode!r}; modes: {', '.join(MODES)}")
    except CSyntaxError as exc:
        precheck = ("invalid", f"candidate cannot be lexed: {exc}")
    failed = [c for c in checks if not c["ok"]]
    if precheck is None and failed:
        precheck = ("rejected", "; ".join(f"{c['name']}: {c['detail']}" for c in failed))
    if precheck is None and mode != "gold" and options.get("execution_check", True):
        # execution cross-check (:mod:`.execution`): inputs seeded by the task, the same for every candidate
        seed = int(options.get("execution_seed", int(task.sha256[:8], 16)))
        exec_files, plan = execution.job_files(task, mode, files["candidate.c"],
                                               files[REGION] if mode == "spec-from-code" else None, seed,
                                               region=files[REGION])
        files.update(exec_files)
        options = dict(options, execution=plan)
    if precheck is None and mode != "gold":
        # Frama-C's view first (FramaC.gate, parse only); a candidate the
        # integrity rules reject on it gets no WP run and is never executed
        options = dict(options, gate=True)
    return Job(
        benchmark=NAME, benchmark_version=VERSION, dataset=dataset, mode=mode,
        task_id=task.task_id, task_sha256=task.sha256,
        candidate={"model": cand.model, "sample": cand.sample, "sha256": sha256_text(cand.output),
                   "origin": cand.origin},
        files=files if precheck is None else {"candidate.c": files.get("candidate.c", "")},
        options=options, checks=checks, precheck=precheck,
        # what depends on the task alone, each made once per run (Job.task_run: one run per
        # file, kept in the result cache): the task's fixed part with its gold code for the
        # soundness smoke tests, and the task's fixed part alone for its view
        task_run=({soundness.SOUND: _soundness_file(task), **task_part} if precheck is None else None),
    )


def judge(job: Job, result: VerifierResult) -> tuple[str, str]:
    """Final verdict. Candidate modes: the integrity rules on Frama-C's view
    (:func:`.integrity.judge`, for the target ``job.options["function"]`` that
    :func:`build_job` set) win; then a failed WP smoke test on the requires (an
    inconsistent contract) is ``rejected``. Gold: the paper's protocol
    (``termination: not-checked``). Last, a proof refuted by the execution cross-check
    (:mod:`.execution`: a contract violation, a sanitizer report, a crash, a timeout, builds
    that disagree, or spec-from-code a contract that kills no mutant) is ``rejected``.
    A job the sandbox ended (``timeout``, ``memout``: a step hung or grew) keeps that
    verdict: no rule reads an output that was never written.

    The executor's gate run (``extra["gate"]``: Frama-C's view from a parse only)
    is judged on the rules that read the view alone (:func:`.integrity.judge`); it
    is ``rejected``, or, when no rule is broken, the gate's own reading: ``invalid``
    when Frama-C rejected the file (final: the verification parses it alike), else
    ``failed`` ("WP not run": never a verification, the executor then runs the job)."""
    if result.verdict in ("timeout", "memout") and not result.artifacts:
        # the sandbox ended the job (a step hung or grew past the limit): that is what happened;
        # the rules have no output to read, and their "missing view" is not the candidate's
        return result.verdict, f"{result.reason}; the job's steps wrote no output the rules could read"
    if (result.extra or {}).get("gate"):  # the gate's output (Frama-C's view only): the rules on the view, no more
        _soundness(job, result)
        decided = integrity.judge(job, result, job.options["function"])
        if decided is None and result.verdict == "invalid":  # final: the record a verification would give
            _requires(job, result)
        return decided or (result.verdict, result.reason)
    executed = None
    if job.mode != "gold" and job.options.get("execution") is not None:
        executed = _execution(job, result)
    _soundness(job, result)  # every record says whether its task is consistent
    _requires(job, result)
    if job.mode != "gold":
        decided = integrity.judge(job, result, job.options["function"])
        if decided is not None:
            return decided
    else:
        result.extra["termination"] = "not-checked"
    if result.vacuous and result.verdict in ("verified", "failed"):
        return "rejected", f"vacuous: smoke test(s) failed ({', '.join(result.vacuous[:3])}): " \
                           f"the precondition or the code is inconsistent"
    if executed is not None and result.verdict == "verified":
        return executed  # proved, but refuted by running it (or vacuous by execution)
    return result.verdict, result.reason


def _requires(job: Job, result: VerifierResult) -> None:
    """spec-from-code: whether the task's requires imply the candidate's, from the requires
    probe's run (:func:`.soundness.requires_check`), in ``result.extra``."""
    if job.mode == "spec-from-code":
        weaker, detail = soundness.requires_check((result.artifacts or {}).get("requires"))
        result.extra["requires_weaker_or_equal"] = weaker
        result.extra["requires_detail"] = detail


def _soundness(job: Job, result: VerifierResult) -> None:
    """The task's soundness into ``result.extra`` (:func:`.soundness.record_soundness`); an
    inconsistent task is the task's bug, not the candidate's: ``result.task_defect`` (the
    record is kept out of the metrics, whatever its verdict)."""
    if soundness.record_soundness(job, result) is False:
        result.task_defect = ("inconsistent-task: WP's smoke tests find the task's own contract or prelude "
                              f"inconsistent ({'; '.join(result.extra.get('task_sound_detail', [])[:2])})")


def _execution(job: Job, result: VerifierResult) -> tuple[str, str] | None:
    """Read the execution cross-check's log into ``result.extra["execution"]`` (and
    ``["strength"]``, spec-from-code); the decision (``("rejected", reason)``) or None."""
    plan = job.options["execution"]
    log = (result.artifacts or {}).get("execution_log")
    try:
        ex, strength, decision = execution.verdict(job.options["function"], plan, log)
    except Exception as exc:  # fail closed: a log the kit cannot read never passes a proof
        ex, strength, decision = ({"status": "error", "reason": f"the log cannot be read: {exc}"}, None,
                                  ("rejected", f"execution cross-check: the log cannot be read: {exc}"))
    result.extra["execution"] = ex
    if strength is not None:
        result.extra["strength"] = strength
    return decision


def verifier_for(mode: str) -> str:
    """Every mode is checked by Frama-C WP (:data:`.tasks.VERIFIER`)."""
    return VERIFIER


def smoke_tests(mode: str) -> bool:
    """Smoke tests run for candidate modes only (the paper's gold protocol has none)."""
    return mode != "gold"
