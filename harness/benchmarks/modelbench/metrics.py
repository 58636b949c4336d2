"""Model-Bench's metrics (paper, Section 4.1.1): Runnable@k, the state similarity of
Definitions 1-4, the average number of fixes, and TLC's outcomes per model.

The reference of the similarity is the task's oracle: the verified record of the gold
candidate (:data:`ORACLE_MODEL`) of the same mode. Gold and canary records are not
scored.
"""

from __future__ import annotations

from collections import defaultdict

from ...metrics import pass_at_k
from ...model import GOLD, Record
from ...results import is_canary

#: The model name of the oracle records (the kit's hand-written TLA+ models, run as the
#: gold candidate of each task that has one).
ORACLE_MODEL = GOLD
#: Definition 4's threshold (the paper's default).
THETA = 1.0
#: The k of Runnable@k reported (the paper: n = 3 samples per task).
RUNNABLE_K = (1, 2, 3)

SIMILARITY_NOTE = ("Definition 4 divides the matching variable-value pairs by |State_g| (the generated model's "
                   "state), so an auxiliary variable of the generated model lowers the ratio; the paper's worked "
                   "example ({a=1,b=2} vs {b=2,pc=3,a=1} -> 1.0) instead divides by |State_o|. The kit reports "
                   "Definition 4 as written ('similarity') and the example's reading ('similarity_oracle_side')")



def state_values(state: dict) -> list:
    """The values of a state (Definition 1: a set of variable-value pairs)."""
    return list(state.values())


def states_similar(s_o: dict, s_g: dict, theta: float = THETA, *, side: str = "generated") -> bool:
    """Definition 4: ``s_g`` is similar to ``s_o`` when the share of ``s_g``'s
    variable-value pairs whose value occurs among ``s_o``'s values is >= ``theta``
    (variable names are ignored). ``side="oracle"``: the worked example's reading, the
    share of ``s_o``'s pairs whose value occurs among ``s_g``'s values.

    Raises:
        ValueError: ``theta`` outside [0, 1] or an unknown side.
    """
    if not 0.0 <= theta <= 1.0:
        raise ValueError(f"theta must be within [0, 1], got {theta}")
    if side not in ("generated", "oracle"):
        raise ValueError(f"side must be 'generated' or 'oracle', got {side!r}")
    a, b = (s_g, s_o) if side == "generated" else (s_o, s_g)
    if not a:
        return theta == 0.0
    pool = set(b.values())
    return sum(v in pool for v in a.values()) / len(a) >= theta


def similarity(oracle_states: list[dict], generated_states: list[dict], theta: float = THETA, *,
               side: str = "generated") -> float:
    """Definition 3: the share of the oracle's states (``States(M_o)``, Definition 2)
    that some state of the generated model matches (Definition 4 with ``theta``).

    Returns a value in [0, 1].

    Raises:
        ValueError: no oracle state, or as :func:`states_similar`.
    """
    if not oracle_states:
        raise ValueError("the oracle has no state")
    if side == "generated" and theta == 1.0:  # fast path: s_g's values must be a subset of s_o's
        gens = {frozenset(s.values()) for s in generated_states if s}
        hit = 0
        for s_o in oracle_states:
            vals = set(s_o.values())
            hit += any(g <= vals for g in gens)
        return hit / len(oracle_states)
    hit = sum(any(states_similar(s_o, s_g, theta, side=side) for s_g in generated_states) for s_o in oracle_states)
    return hit / len(oracle_states)


def scored(records: list[Record]) -> list[dict]:
    """The records of model candidates: gold (the oracles) and canaries left out."""
    return [r for r in records
            if r["candidate"]["model"] != ORACLE_MODEL and not is_canary(r["candidate"]["model"])]


def runnable(record: Record) -> bool:
    """The paper's "runnable" (Section 4.1.1): TLC checked the model without failure (its
    own outcome ``success``, read by the verifier with its evidence cross-checks), whatever
    the kit's integrity rules and behaviour harness then judged."""
    return (record["verifier"].get("extra") or {}).get("outcome") == "success"


def runnable_at_k(records: list[Record], *, ks=RUNNABLE_K) -> dict:
    """Runnable@k (Section 4.1.1, Equation 1: ``E[1 - C(n-c, k) / C(n, k)]``) per mode and
    model: a sample counts as runnable by :func:`runnable` (the paper's definition, not the
    kit's ``verified``); ``infra_error`` samples are left out. A k larger than a task's n is an error entry.

    Returns ``{mode: {model: {"tasks", "samples", "runnable", "runnable_at_k": {k: value |
    {"error"}}}}}`` (values in [0, 1]).
    """
    per: dict = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for r in scored(records):
        if r["verdict"] == "infra_error":
            continue
        cell = per[(r["mode"], r["candidate"]["model"])][r["task_id"]]
        cell[0] += 1
        cell[1] += runnable(r)
    out: dict = {}
    for (mode, model), by_task in sorted(per.items()):
        entry = {"tasks": len(by_task), "samples": sum(n for n, _ in by_task.values()),
                 "runnable": sum(c for _, c in by_task.values()), "runnable_at_k": {}}
        for k in ks:
            short = [t for t, (n, _) in by_task.items() if n < k]
            if short:
                entry["runnable_at_k"][str(k)] = {"error": f"Runnable@{k} needs n >= {k} samples per task; "
                                                  f"{len(short)} task(s) have fewer (e.g. {short[0]})"}
                continue
            vals = [pass_at_k(n, c, k) for n, c in by_task.values()]
            entry["runnable_at_k"][str(k)] = sum(vals) / len(vals)
        out.setdefault(mode, {})[model] = entry
    return out


def similarity_table(records: list[Record], *, theta: float = THETA) -> dict:
    """State similarity of every runnable candidate against its task's oracle (the
    verified gold record (:data:`ORACLE_MODEL`) of the same mode), and the averages per mode and
    model over runnable candidates with an oracle (the paper: "Only models that pass TLC
    verification have the opportunity to calculate state similarity").

    Returns ``{"theta", "note", "per_candidate": [{"mode", "model", "task_id", "sample",
    "similarity", "similarity_oracle_side", "oracle_states", "candidate_states",
    "truncated"}], "average": {mode: {model: {"n", "similarity", "similarity_oracle_side"}}}}``.
    """
    oracles = {(r["mode"], r["task_id"]): r for r in records
               if r["candidate"]["model"] == ORACLE_MODEL and r["verdict"] == "verified"}
    rows = []
    for r in scored(records):
        o = oracles.get((r["mode"], r["task_id"]))
        if not runnable(r) or o is None:
            continue
        so = o["verifier"]["extra"].get("states") or []
        sg = r["verifier"]["extra"].get("states") or []
        if not so:
            continue
        rows.append({"mode": r["mode"], "model": r["candidate"]["model"], "task_id": r["task_id"],
                     "sample": r["candidate"]["sample"],
                     "similarity": similarity(so, sg, theta), "similarity_oracle_side": similarity(so, sg, theta,
                                                                                                side="oracle"),
                     "oracle_states": len(so), "candidate_states": len(sg),
                     "truncated": bool(o["verifier"]["extra"].get("states_truncated")
                                       or r["verifier"]["extra"].get("states_truncated"))})
    avg: dict = {}
    groups: dict = defaultdict(list)
    for row in rows:
        groups[(row["mode"], row["model"])].append(row)
    for (mode, model), rs in sorted(groups.items()):
        avg.setdefault(mode, {})[model] = {
            "n": len(rs), "similarity": sum(x["similarity"] for x in rs) / len(rs),
            "similarity_oracle_side": sum(x["similarity_oracle_side"] for x in rs) / len(rs)}
    return {"theta": theta, "note": SIMILARITY_NOTE, "per_candidate": rows, "average": avg}


def average_fixes(records: list[Record]) -> dict:
    """Average number of fixes per mode and model, over the samples whose predictions line
    gave ``meta.fixes`` (Table 2's "Avg Fixes"); ``{"available": False, ...}`` when none
    did."""
    groups: dict = defaultdict(list)
    for r in scored(records):
        if isinstance(r["candidate"].get("fixes"), int):
            groups[(r["mode"], r["candidate"]["model"])].append(r["candidate"]["fixes"])
    if not groups:
        return {"available": False, "note": "no candidate carries a fix count (predictions meta.fixes)"}
    out: dict = {"available": True}
    for (mode, model), xs in sorted(groups.items()):
        out.setdefault(mode, {})[model] = {"n": len(xs), "average": sum(xs) / len(xs)}
    return out


def outcomes(records: list[Record]) -> dict:
    """TLC outcomes per mode and model (``parse_error``, ``semantic_error``,
    ``config_error``, ``runtime_error``, ``invariant_violated``, ``success``...)."""
    out: dict = {}
    for r in scored(records):
        o = r["verifier"].get("extra", {}).get("outcome") or r["verdict"]
        cell = out.setdefault(r["mode"], {}).setdefault(r["candidate"]["model"], {})
        cell[o] = cell.get(o, 0) + 1
    return out


#: The metric-level weaknesses of the paper's definitions, measured with TLC 2.15
#: on the kit's oracle tasks (tests/test_tlc_integrity.py; harness/benchmarks/modelbench/docs.md).
WEAKNESSES_NOTE = ("Definition 4 (theta 1.0, generated side) gives similarity 1.0 to a model with one variable "
                   "ranging over values the oracle's states hold, and to a model whose initial states are the "
                   "cartesian product of the oracle variables' value domains; Runnable counts any model TLC checks "
                   "without failure, e.g. a model that only stutters with Assertion == TRUE. The kit keeps the "
                   "paper's definitions and flags runnable samples whose state graph has no transition other than "
                   "stuttering (no state reachable but the initial ones: 'stuttering_only')")


def weaknesses(records: list[Record]) -> dict:
    """Runnable samples per mode and model that TLC found ``stuttering_only`` (every
    reachable state is initial: the next-state relation computes nothing); they count as
    runnable under the paper's definition. Returns ``{"note", "stuttering_only": {mode:
    {model: {"runnable", "stuttering_only", "samples": [[task_id, sample], ...]}}}}``."""
    out: dict = {}
    for r in scored(records):
        if not runnable(r):
            continue
        cell = out.setdefault(r["mode"], {}).setdefault(r["candidate"]["model"],
                                                         {"runnable": 0, "stuttering_only": 0, "samples": []})
        cell["runnable"] += 1
        if r["verifier"].get("extra", {}).get("stuttering_only"):
            cell["stuttering_only"] += 1
            cell["samples"].append([r["task_id"], r["candidate"]["sample"]])
    return {"note": WEAKNESSES_NOTE, "stuttering_only": out}


#: What the behaviour section reports, for the report's notes.
BEHAVIOUR_NOTE = ("behaviour harness: on the kit's oracle tasks a sample is verified only when TLC, run on every "
                  "input of the program's bounded domain and of its own tests (constants widened to fit them), finds "
                  "that every behaviour ends and one variable holds the program's return value in every final state; "
                  "Runnable@k keeps the paper's definition (TLC checks the model without failure) and counts samples "
                  "the harness refuses")


def behaviour_table(records: list[Record]) -> dict:
    """The behaviour harness's outcome (``verifier.extra.behaviour``, see
    :mod:`harness.verifiers.tlc.behaviour`) of every runnable scored sample on a task that
    has one.

    Returns ``{"note", "per_candidate": [{"mode", "model", "task_id", "sample", "outcome",
    "inputs", "tests", "detail"}], "summary": {mode: {model: {"runnable", "compared",
    "models_program"}}}}``.
    """
    rows, summary = [], {}
    for r in scored(records):
        if not runnable(r):
            continue
        cell = summary.setdefault(r["mode"], {}).setdefault(r["candidate"]["model"],
                                                            {"runnable": 0, "compared": 0, "models_program": 0})
        cell["runnable"] += 1
        b = r["verifier"].get("extra", {}).get("behaviour")
        if not b:
            continue
        cell["compared"] += 1
        cell["models_program"] += b["outcome"] == "models_program"
        rows.append({"mode": r["mode"], "model": r["candidate"]["model"], "task_id": r["task_id"],
                     "sample": r["candidate"]["sample"], "outcome": b["outcome"], "inputs": b.get("inputs"),
                     "tests": b.get("tests"), "detail": b.get("detail")})
    return {"note": BEHAVIOUR_NOTE, "per_candidate": rows, "summary": summary}
