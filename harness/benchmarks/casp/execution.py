"""CASP execution cross-check: "verified" means proved by WP *and* not refuted by running it.

For a candidate-mode job the kit ships, beside the verified file,
a generated test driver and the files :mod:`harness.verifiers.drivers` ``exec_check.sh``
(run inside the job's sandbox, before WP) builds and runs:

- ``ea``: the verified file + the driver instrumented by Frama-C's E-ACSL
  (``frama-c -e-acsl``; Frama-C's own reading of the contract, not the kit's), compiled
  with gcc -O0 against E-ACSL's runtime. It checks at run time the contracts of the
  verified file's functions: the task's on the target (code-from-spec) or the candidate's
  on the task's real code (spec-from-code), and RTE's ``\\initialized`` assertions on their
  reads (``-rte-initialized``: a read of an uninitialised local, which WP's model gives
  some value, fails). An input whose ``requires`` fails on entry to the target is
  *discarded* (not counted); any other E-ACSL failure is a violation.
- ``gcc-O0``, ``gcc-O2`` (and ``clang-O0``, ``clang-O2`` when clang is in the image):
  the same source, not instrumented, under ``-fsanitize=undefined,address
  -fno-sanitize-recover=all``, run on the inputs that satisfied the ``requires``.
- spec-from-code only, ``mut``: the candidate's contract over a dispatcher whose body
  runs the task's original body (``vk_mutant = 0``) or one of its seeded mutants
  (operator swaps, constants +-1, dropped statements), E-ACSL-instrumented: the spec
  strength (share of behaviour-changing mutants whose run violates the contract); and
  ``mutg``, the same mutants under the task's own contract (the reference: a candidate is
  vacuous by execution only where the task's contract kills some mutant).

Inputs are drawn here (seeded, recorded) from the task's own declarator (the task is fixed
data, never the candidate's text): per C integer type boundary values (min, -1, 0, 1, max),
the pairs (min, -1) of two signed parameters (``INT_MIN % -1``), values aimed at the
branches of the code (each integer constant the candidate wrote, and spec-from-code the
task's code, with its neighbours: ``x == 12345`` gets 12344, 12345, 12346; recorded in the
plan as ``directed``), small and uniform values,
buffers of 1..16 elements for pointer parameters (NUL-terminated for ``char *``) with
lengths correlated to the integer parameters. The ``requires`` are not
read by the kit: E-ACSL evaluates them at run time.

A contract violation, a sanitizer report, a crash, a timeout or two builds that disagree on
an input's output make the record ``rejected``, the reason naming the input. A verified
file E-ACSL cannot instrument (a construct it does not translate, or more than 60 s) gives
``execution: not-run`` with E-ACSL's message: the tool's limit, not the candidate's. Parameters or
return types the driver cannot build (floating point, structs, pointers to pointers,
typedef names) give ``execution: not-run`` with the reason (not a pass, not a rejection).

What this cannot check: ``assigns`` clauses and other constructs E-ACSL 25 does not
translate (listed per record in ``execution["unchecked"]``); inputs outside the drawn set;
termination beyond the per-run timeout; a recursive call's own precondition failure before
any other annotation is evaluated is counted as a discarded input, not a violation.

The driver and its inputs are in :mod:`.exec_driver`, the mutants in :mod:`.exec_mutants`;
this module makes a job's files (:func:`job_files`) and reads the driver's log
(:func:`verdict`). Their names are importable from here too.
"""

from __future__ import annotations

import re

from .exec_driver import (CONF, GOLD, HARNESS, MUT, MUT_GOLD, N_INPUTS, N_MUTANTS, RUN, RUN_TIMEOUT_S, Unsupported,
                          directed_values, draw_inputs, harness_c, signature)
from .cfront import CSyntaxError, function_names
from .exec_mutants import body_tokens, mutant_file, mutants

from ...model import Record
from ...results import is_canary

#: The execution status of a record without one (decided before the cross-check ran).
DECIDED_BEFORE = "not-run (decided before)"

# --------------------------------------------------------------------------- job files


def job_files(task, mode: str, candidate_c: str, header: str | None, seed: int, *, n_inputs: int = N_INPUTS,
              n_mutants: int = N_MUTANTS, region: str = "") -> tuple[dict[str, str], dict]:
    """The files of the execution cross-check for one job, and what to record.

    Args:
        candidate_c: the verified file (prelude included) as the job verifies it.
        header: spec-from-code: the candidate's text before the function (its contract),
            for the mutants; None in code-from-spec.
        region: the candidate's own text: its constants (and, spec-from-code, the task
            code's) direct some inputs at its branches (:func:`.exec_driver.directed_values`).

    Returns:
        ``(files, plan)``: ``files`` to ship (empty when the signature is unsupported),
        ``plan`` recorded in the job options: ``{"seed", "inputs" (how many drawn),
        "params" ([name, type]: the inputs are re-drawn from them and the seed),
        "directed" (values from the code's constants), "mutants": [...without bodies],
        "not_run": reason or None}``.
    """
    plan: dict = {"seed": seed, "inputs": n_inputs, "mutants": [], "not_run": None}
    try:
        ret, params = signature(task)
    except Unsupported as exc:
        plan["not_run"] = str(exc)
        return {}, plan
    except Exception as exc:  # a task the lexer cannot read: the check is not made, said so
        plan["not_run"] = f"the task's signature cannot be read: {exc}"
        return {}, plan
    plan["params"] = [[name, t] for name, t in params]
    plan["directed"] = directed_values((task.code + "\n" if mode == "spec-from-code" else "") + region)
    inputs = draw_inputs(params, seed, n_inputs, plan["directed"])
    driver = harness_c(task.function, ret, params, inputs)
    harness = "int vk_mutant;\n" + driver
    include = f'\n#include "{HARNESS}"\n'
    files = {HARNESS: harness, RUN: candidate_c + include, GOLD: task.gold + "\n" + task.suffix + include}
    muts: list[dict] = []
    if header is not None and n_mutants:
        toks = body_tokens(task)
        if not any(t.text == "goto" for t in toks):
            original, muts = mutants(task, seed, n_mutants)
            if muts:
                inc_m = "\n#include \"vk_exec_harness_m.h\"\n"
                files[MUT] = mutant_file(task, header, original, muts).replace(include, inc_m)
                # the task's own contract over the same mutants: the reference a candidate is held to
                files[MUT_GOLD] = mutant_file(task, task.contract, original, muts).replace(include, inc_m)
                files["vk_exec_harness_m.h"] = driver
    plan["mutants"] = [{k: v for k, v in m.items() if k != "body"} for m in muts]
    try:  # the functions whose reads of uninitialised locals and whose contracts E-ACSL checks
        checked = function_names(candidate_c)
    except CSyntaxError:
        checked = []
    checked = [task.function] + [f for f in checked if f != task.function]
    files[CONF] = (f"VK_TARGET={task.function}\nVK_FUNCTIONS={','.join(checked)}\nVK_N={len(inputs)}\nVK_M={len(muts)}\n"
                   f"VK_TIMEOUT={RUN_TIMEOUT_S}\n")
    return files, plan


# --------------------------------------------------------------------------- verdict

_ERR = re.compile(r"^\S+:\d+: Error: (\w[\w ]*?) failed:")
_FCT = re.compile(r"In function '([^']+)'")


def parse_log(text: str) -> dict:
    """Read the driver's log (``vk_exec.log``).

    Returns:
        ``{"builds": {name: {"ok", "messages"}}, "runs": {(build, mutant, input): {"rc",
        "out", "err"}}, "unchecked": [E-ACSL warnings], "info": {"compilers", "flags"},
        "slow": inputs on which the task's gold times out too (discarded)}``.
    """
    builds: dict = {}
    runs: dict = {}
    unchecked: list[str] = []
    slow: set[int] = set()
    info: dict = {}
    cur = None
    for line in text.splitlines():
        if line.startswith("build "):
            parts = line.split(" ", 2)
            cur = builds.setdefault(parts[1], {"ok": parts[2].startswith("ok"), "messages": []}) if len(parts) > 2 else None
            run = None
        elif line.startswith("| ") and cur is not None:
            cur["messages"].append(line[2:])
        elif line.startswith("unchecked "):
            unchecked.append(line[len("unchecked "):])
        elif line.startswith("slow "):
            slow.add(int(line.split()[1]))
        elif line.startswith("info "):
            k, _, v = line[5:].partition(" ")
            info[k] = v
        elif line.startswith("@ "):
            p = line.split()
            if len(p) == 5:
                run = runs[(p[1], int(p[2]), int(p[3]))] = {"rc": int(p[4]), "out": "", "err": []}
                cur = None
        elif line.startswith("> ") and runs and run is not None:
            run["out"] = line[2:]
        elif line.startswith("! ") and runs and run is not None:
            run["err"].append(line[2:])
    return {"builds": builds, "runs": runs, "unchecked": unchecked, "info": info, "slow": slow}


def _first_error(err: list[str]) -> tuple[str | None, str | None]:
    """(kind of the first E-ACSL failure, its function) or (None, None)."""
    fct = None
    for line in err:
        m = _FCT.search(line)
        if m:
            fct = m.group(1)
        m = _ERR.match(line)
        if m:
            return m.group(1), fct
    return None, None


def _describe(inp: dict | None, params) -> str:
    if inp is None:
        return "?"
    parts = []
    for (name, _t), v in zip(params, inp["args"]):
        parts.append(f"{name}={v}" if not isinstance(v, list) else f"{name}=[{', '.join(map(str, v))}]")
    return ", ".join(parts)


def _why(run: dict) -> str:
    rc = run["rc"]
    text = " ".join(e.strip() for e in run["err"][:4])
    if rc == 124:
        return "timeout"
    for pat in ("runtime error: ", "ERROR: AddressSanitizer: ", "Error: "):
        i = text.find(pat)
        if i >= 0:
            return text[i: i + 200]
    return f"exit status {rc}" + (f" (signal {rc - 128})" if rc > 128 else "")


def verdict(function: str, plan: dict, log: str | None) -> tuple[dict, dict | None, tuple[str, str] | None]:
    """The cross-check's finding from the driver's log.

    Returns:
        ``(execution, strength, decision)``: ``execution`` for ``verifier.extra`` (status
        ``passed`` | ``refuted`` | ``not-run``, ``builds``, ``seed``, ``drawn``,
        ``satisfying``, ``runs``, ``unchecked``, ``reason``); ``strength`` (spec-from-code
        with mutants: ``{"mutants", "changed" (a different output on an input, or killed),
        "crashed" (only crashes or timeouts: the contract cannot be asked about them, not
        counted), "killed", "score" = killed / changed, "seed", "survivors", "gold_killed"
        (mutants the task's own contract rejects; None when not run: it runs only when the
        candidate kills none)}``, ``rejected`` as
        vacuous only when the candidate kills none of the behaviour-changing mutants while
        the task's contract kills at least one,
        else None); ``decision``: ``("rejected", reason)`` or None.
    """
    ex: dict = {"status": "not-run", "seed": plan.get("seed"), "drawn": plan.get("inputs"), "satisfying": 0, "runs": 0}
    if plan.get("not_run"):
        ex["reason"] = plan["not_run"]
        return ex, None, None
    if log is None:
        ex["reason"] = "the driver wrote no log (the job stopped before the cross-check)"
        return ex, None, None
    data = parse_log(log)
    builds, runs = data["builds"], data["runs"]
    ex["builds"] = {k: ("ok" if v["ok"] else "failed") for k, v in builds.items()}
    ex["compilers"] = data["info"].get("compilers", "").split()
    ex["flags"] = data["info"].get("flags", "")
    ex["unchecked"] = data["unchecked"][:20]
    ex["runs"] = len(runs)
    if data["info"].get("missing"):
        ex["reason"] = f"the sandbox has no {data['info']['missing']}: the check was not made"
        return ex, None, None
    params = [(name, t) for name, t in plan.get("params", [])]
    inputs = draw_inputs(params, plan["seed"], plan["inputs"], plan.get("directed", ()))

    def inp(i):
        return _describe(inputs[i] if i < len(inputs) else None, params)

    ea = builds.get("ea")
    if ea is None or not ea["ok"]:
        # E-ACSL's limits (a construct it cannot translate, a contract it runs on for
        # minutes) are the tool's, not the candidate's: the check is not run, said so, and
        # the fragment rules stand alone (gcc's own errors on the candidate's code are
        # the rule compiler-agrees')
        gold = builds.get("gold-ea")
        msg = "; ".join((ea or {}).get("messages", [])[:3])
        if gold is not None and gold["ok"]:
            ex["reason"] = (f"E-ACSL + gcc could not build the verified file (the task's gold builds): {msg}; "
                            "the check is not made")
        else:
            ex["reason"] = f"the task itself does not build for execution: {msg or 'no build'}"
        return ex, None, None
    satisfying = []
    for i in range(plan["inputs"]):
        r = runs.get(("ea", 0, i))
        if r is None or i in data["slow"]:  # slow: the task's gold times out on it too
            continue
        kind, fct = _first_error(r["err"])
        if r["rc"] == 0 and kind is None:
            satisfying.append(i)
            continue
        if kind == "Precondition" and fct == function:
            continue  # the drawn input does not satisfy the requires: discarded
        ex["satisfying"] = len(satisfying) + 1
        ex["status"] = "refuted"
        ex["reason"] = f"input {i} ({inp(i)}): E-ACSL build (gcc -O0): {_why(r)}" + (f" in {fct}" if fct else "")
        return ex, None, ("rejected", f"execution cross-check: {ex['reason']}")
    ex["satisfying"] = len(satisfying)
    for name, b in builds.items():
        if name in ("ea", "gold-ea", "gold") or name.startswith("mut") or name.startswith("gold-"):
            continue
        if not b["ok"]:
            gold_ok = builds.get(f"gold-{name}", {}).get("ok")
            if gold_ok:
                ex["status"] = "refuted"
                ex["reason"] = f"{name}: the verified file does not compile while the task's gold does: " \
                               + "; ".join(b["messages"][:2])
                return ex, None, ("rejected", f"execution cross-check: {ex['reason']}")
            continue
        for i in satisfying:
            r = runs.get((name, 0, i))
            if r is None:
                continue
            if r["rc"] != 0:
                ex["status"] = "refuted"
                ex["reason"] = f"input {i} ({inp(i)}): {name} -fsanitize=undefined,address: {_why(r)}"
                return ex, None, ("rejected", f"execution cross-check: {ex['reason']}")
            base = runs[("ea", 0, i)]["out"]
            if r["out"] != base:
                ex["status"] = "refuted"
                ex["reason"] = f"input {i} ({inp(i)}): builds disagree: ea (gcc -O0 E-ACSL) printed {base!r}, " \
                               f"{name} printed {r['out']!r}"
                return ex, None, ("rejected", f"execution cross-check: {ex['reason']}")
    if not satisfying:
        ex["reason"] = f"none of the {plan['inputs']} drawn inputs satisfies the requires (checked by E-ACSL)"
        return ex, None, None
    ex["status"] = "passed"
    used = [b for b, v in builds.items() if v["ok"] and not b.startswith(("gold", "mut"))]
    ex["reason"] = f"{len(satisfying)} input(s) satisfying the requires ran on {len(used)} build(s) " \
                   f"({', '.join(used)}) without a contract violation, a sanitizer report, a crash, a timeout or a disagreement"
    strength, decision = _strength(plan, builds, runs, satisfying)
    return ex, strength, decision


def _strength(plan: dict, builds: dict, runs: dict, satisfying: list[int]) -> tuple[dict | None, tuple | None]:
    muts = plan.get("mutants") or []
    if not muts:
        return None, None
    st: dict = {"mutants": len(muts), "changed": 0, "crashed": 0, "killed": 0, "score": None, "seed": plan["seed"],
                "survivors": []}
    if "mut" not in builds or not builds["mut"]["ok"]:
        st["not_run"] = "the mutant build failed: " + "; ".join(builds.get("mut", {}).get("messages", [])[:2])
        return st, None
    for m in muts:
        killed = changed = crashed = False
        for i in satisfying:
            base = runs.get(("mut", 0, i))
            r = runs.get(("mut", m["id"], i))
            if r is None or base is None:
                continue
            kind, _fct = _first_error(r["err"])
            if kind is not None and kind != "Precondition":
                killed = changed = True
                break
            if r["rc"] == 0 and base["rc"] == 0 and r["out"] != base["out"]:
                changed = True
            elif r["rc"] != 0:
                crashed = True
        st["changed"] += changed
        st["crashed"] += crashed and not changed
        st["killed"] += killed
        if changed and not killed:
            st["survivors"].append({k: m[k] for k in ("id", "kind", "token", "to")})
    st["score"] = round(st["killed"] / st["changed"], 3) if st["changed"] else None
    # the task's own contract on the same mutants (all drawn inputs, its own requires)
    st["gold_killed"] = None
    if builds.get("mutg", {}).get("ok"):
        st["gold_killed"] = sum(
            any((_first_error(r["err"])[0] or "Precondition") != "Precondition"
                for (b, mm, _i), r in runs.items() if b == "mutg" and mm == m["id"])
            for m in muts)
    if st["changed"] and not st["killed"] and st["gold_killed"]:
        return st, ("rejected", f"vacuous by execution: the contract rejects none of the {st['changed']} mutant(s) of the "
                                f"task's body that change its behaviour on the drawn inputs, while the task's own contract "
                                f"rejects {st['gold_killed']} of the {len(muts)} (seed {plan['seed']})")
    return st, None


def report_notes(records: list[Record]) -> list[str]:
    """Report lines: per candidate mode the execution statuses, and (spec-from-code) the
    mean spec strength per model (canaries left out), beside the verified rate."""
    out = []
    for mode in ("code-from-spec", "spec-from-code"):
        recs = [r for r in records if r["mode"] == mode and not is_canary(r["candidate"]["model"])]
        counts: dict[str, int] = {}
        for r in recs:
            status = (r["verifier"].get("extra", {}).get("execution") or {}).get("status", DECIDED_BEFORE)
            counts[status] = counts.get(status, 0) + 1
        if recs:
            out.append(f"{mode}: execution cross-check {', '.join(f'{k} {v}' for k, v in sorted(counts.items()))} "
                       f"(harness/benchmarks/casp/docs.md 'Execution cross-check')")
    by_model: dict[str, list[float]] = {}
    for r in records:
        st = r["verifier"].get("extra", {}).get("strength")
        if r["mode"] == "spec-from-code" and st and st.get("score") is not None \
                and not is_canary(r["candidate"]["model"]):
            by_model.setdefault(r["candidate"]["model"], []).append(st["score"])
    for model, scores in sorted(by_model.items()):
        out.append(f"spec-from-code: spec strength of {model}: mean {sum(scores) / len(scores):.2f} over {len(scores)} "
                   f"candidate(s) (share of behaviour-changing mutants of the task's body the contract rejects at run time)")
    return out
