"""Metrics (paper, Section I-C): correctness and completeness of a specification from the
per-method results of its checks (:func:`score_checks`), the labels they give (Section
II-B) and their agreement with the human labels, per-model averages, and the paper's
task-level findings as they show in a run."""

from __future__ import annotations

from collections import Counter, defaultdict

from ...model import Record
from ...results import is_canary

#: Paper, Section II-B: STRONG_SPEC above, WEAK_SPEC below this completeness.
LABEL_THRESHOLD = 0.66
AGREEMENT_THRESHOLDS = (0.2, 0.4, 0.5, 0.6, 0.66, 0.7, 0.8, 0.9, 1.0)

UNDECIDED = ("timeout", "out_of_resource", "unknown", "not_run", "invalid")


def score_checks(checks: list[dict], goal_results: list[dict]) -> dict:
    """Correctness and completeness of one (task, candidate) from its per-method results.

    - A test is correct when its ``Correct`` method verified and its ``Smoke`` method
      ``failed`` (the expected outcome of ``assert false``). A verified smoke check means
      the precondition excludes the test input or the assumptions are inconsistent: the
      test is ``vacuous``; a smoke check that is ``invalid``, timed out or missing proves
      nothing, and the test is ``unguarded``: neither is counted as correct (fail closed).
    - A mutant is ``rejected`` on positive evidence only: its refutation (``Refute``:
      ``assert !(postcondition)`` on the mutant's output) verified and the test's smoke
      check failed (the inputs are consistent). A mutant whose check failed ("might not
      hold") without a verified refutation is ``unknown``: Dafny says "might not hold" of
      true postconditions it cannot prove too. A mutant whose check timed out, ran out of
      resources or could not run is ``undecided``.
    - The paper's own count is kept beside it, labelled: ``rejected_paper`` counts a
      mutant whose check failed with postcondition violations only (the reference
      script's rule); ``completeness_paper`` is the published metric.
    - completeness = rejected / mutants (all tests, ``|T2| / |T1|``);
      ``completeness_if_correct`` (and ``_paper``) is the completeness when every test is
      correct, else None (the paper checks completeness only for correct specifications).

    Returns ``{"tests", "correct", "correctness", "vacuous": [tests], "unguarded": [tests],
    "mutants", "rejected", "unknown", "undecided", "completeness", "completeness_if_correct",
    "rejected_paper", "completeness_paper", "completeness_if_correct_paper", "per_test":
    [{"test", "correct", "smoke", "mutants": [{"value", "status", "refutation",
    "rejected", "rejected_paper"}]}], "probes": [{"test", "value", "status", "accepted"}]}``.
    """
    res = {g["name"]: g for g in goal_results}
    tests = sorted({c["test"] for c in checks})
    per_test, probes = [], []
    correct = rejected = paper = total = undecided = unknown = 0
    vacuous, unguarded = [], []
    for t in tests:
        mine = [c for c in checks if c["test"] == t]
        cc = next(c for c in mine if c["kind"] == "correct")
        sm = next((c for c in mine if c["kind"] == "smoke"), None)
        cs = res.get(cc["method"], {}).get("status", "not_run")
        ss = res.get(sm["method"], {}).get("status", "not_run") if sm else None
        ok = cs == "verified" and ss == "failed"
        if cs == "verified" and ss == "verified":
            vacuous.append(t)
        elif cs == "verified" and not ok:
            unguarded.append(t)
        correct += ok
        refutes = {c["n"]: res.get(c["method"], {}).get("status", "not_run") for c in mine if c["kind"] == "refute"}
        muts = []
        for c in mine:
            g = res.get(c["method"], {})
            st = g.get("status", "not_run")
            if c["kind"] == "mutant":
                by_paper = st == "failed" and g.get("failure") == "postcondition"
                refuted = refutes.get(c["n"], "not_run")
                rej = refuted == "verified" and ss == "failed" and st != "verified"
                total += 1
                rejected += rej
                paper += by_paper
                undecided += st in UNDECIDED
                unknown += st == "failed" and not rej
                muts.append({"value": c["value"], "status": st, "refutation": refuted, "rejected": rej,
                             "rejected_paper": by_paper})
            elif c["kind"] == "probe":
                probes.append({"test": t, "value": c["value"], "status": st, "accepted": st == "verified"})
        per_test.append({"test": t, "correct": cs, "smoke": ss, "mutants": muts})
    n = len(tests)
    completeness = rejected / total if total else None
    completeness_paper = paper / total if total else None
    all_correct = bool(n) and correct == n
    return {"tests": n, "correct": correct, "correctness": correct / n if n else None, "vacuous": vacuous,
            "unguarded": unguarded, "mutants": total, "rejected": rejected, "unknown": unknown,
            "undecided": undecided, "completeness": completeness,
            "completeness_if_correct": completeness if all_correct else None,
            "rejected_paper": paper, "completeness_paper": completeness_paper,
            "completeness_if_correct_paper": completeness_paper if all_correct else None,
            "per_test": per_test, "probes": probes}


def score(record: dict) -> dict | None:
    """:func:`score_checks` of a result record, or None when the record has no per-method
    results (rejected/invalid before running, infrastructure errors), or when the
    candidate failed an integrity check or Dafny reported an error outside the check
    methods (its check results measure nothing: they are never averaged in)."""
    if any(not c.get("ok", True) for c in record.get("checks") or []) \
            or (record["verifier"].get("extra") or {}).get("outside"):
        return None
    checks = record["verifier"]["options"].get("checks")
    if not checks or not record.get("goal_results"):
        return None
    return score_checks(checks, record["goal_results"])


def kit_label(s: dict, threshold: float = LABEL_THRESHOLD, metric: str = "completeness_paper") -> str | None:
    """The label the metrics give (paper, Section II-B): ``WRONG`` when a correctness check
    fails, else ``STRONG`` when the completeness ``metric`` (default the paper's,
    ``completeness_paper``; ``completeness`` for the kit's positive-evidence one) >=
    ``threshold``, else ``WEAK``; None when undecided (no result)."""
    if s is None or s["correctness"] is None:
        return None
    if s["correct"] < s["tests"]:
        return "WRONG"
    if s[metric] is None:
        return None
    return "STRONG" if s[metric] >= threshold else "WEAK"


def label_agreement(records: list[Record], thresholds=AGREEMENT_THRESHOLDS, model: str = "gpt-4") -> dict:
    """Agreement of the kit's labels (on the paper's completeness, ``completeness_paper``:
    this reproduces the paper's comparison) with the human labels of one model's specifications
    (default the bundled RQ3 GPT-4 ones; a converted RQ1-RQ3 file's model carries its own
    labels, see :func:`harness.benchmarks.dafny_intent.dataset.convert_generations`), per
    completeness threshold.

    Returns ``{"labelled": n, "rows": [{"threshold", "agree", "total", "rate", "confusion":
    {"<human>-><kit>": n}}], "strong_weak": [...same restricted to the STRONG/WEAK human
    labels with correct specifications...], "per_task": [{"task_id", "human", "kit",
    "kit_positive" (the label on the kit's positive-evidence completeness), "correctness",
    "completeness", "completeness_paper"}]}`` (kit labels at :data:`LABEL_THRESHOLD`).
    """
    per_task = []
    for r in records:
        lab = r["verifier"]["options"].get("label")
        if r["candidate"]["model"] != model or lab is None:
            continue
        s = score(r)
        per_task.append({"task_id": r["task_id"], "human": lab, "verdict": r["verdict"],
                         "kit": kit_label(s) if s else None,
                         "kit_positive": kit_label(s, metric="completeness") if s else None,
                         "correctness": s["correctness"] if s else None,
                         "completeness": s["completeness"] if s else None,
                         "completeness_paper": s["completeness_paper"] if s else None, "_s": s})
    out_rows, sw_rows = [], []
    for th in thresholds:
        conf: Counter = Counter()
        agree = total = sw_agree = sw_total = 0
        sw_conf: Counter = Counter()
        for p in per_task:
            k = kit_label(p["_s"], th) if p["_s"] else None
            if k is None:
                continue
            total += 1
            agree += k == p["human"]
            conf[f"{p['human']}->{k}"] += 1
            if p["human"] in ("STRONG", "WEAK") and k != "WRONG":
                sw_total += 1
                sw_agree += k == p["human"]
                sw_conf[f"{p['human']}->{k}"] += 1
        out_rows.append({"threshold": th, "agree": agree, "total": total,
                         "rate": round(agree / total, 4) if total else None, "confusion": dict(sorted(conf.items()))})
        sw_rows.append({"threshold": th, "agree": sw_agree, "total": sw_total,
                        "rate": round(sw_agree / sw_total, 4) if sw_total else None,
                        "confusion": dict(sorted(sw_conf.items()))})
    for p in per_task:
        p.pop("_s")
    return {"labelled": len(per_task), "label_threshold": LABEL_THRESHOLD, "rows": out_rows,
            "strong_weak": sw_rows, "per_task": sorted(per_task, key=lambda p: int(p["task_id"]))}


def agreement_by_model(records: list[Record], thresholds=AGREEMENT_THRESHOLDS) -> dict:
    """:func:`label_agreement` for every scored model whose records carry a human label
    (``{model: {"labelled", "label_threshold", "rows", "strong_weak"}}``; the per-task rows
    are left out), so a converted RQ1/RQ2 run compares with the RQ3 GPT-4 one."""
    models = sorted({r["candidate"]["model"] for r in scored_records(records)
                     if r["verifier"]["options"].get("label") is not None})
    out = {}
    for m in models:
        a = label_agreement(records, thresholds, model=m)
        a.pop("per_task")
        out[m] = a
    return out


def scored_records(records: list[Record]) -> list[dict]:
    """The records that count in the metrics: every candidate but the canaries."""
    return [r for r in records if not is_canary(r["candidate"]["model"])]


def summarize(records: list[Record]) -> dict:
    """Per model: verdict counts and the averages over its tasks: ``avg_correctness``
    (tasks with per-method results), ``avg_completeness`` (tasks with mutants, every
    candidate: the reference script's average), ``avg_completeness_if_correct`` (only the
    tasks whose correctness is 1: the paper's rule), each on the kit's positive evidence
    and, suffixed ``_paper``, on the paper's count (:func:`score_checks`);
    ``fully_correct`` tasks; mutant totals (``rejected``, ``rejected_paper``, ``unknown``:
    "might not hold" without a proved refutation, ``undecided``)."""
    by_model: dict = defaultdict(list)
    for r in scored_records(records):
        by_model[r["candidate"]["model"]].append(r)
    out = {}
    for model, rs in sorted(by_model.items()):
        ss = [s for s in (score(r) for r in rs) if s is not None]
        out[model] = {
            "candidates": len(rs), "verdicts": dict(Counter(r["verdict"] for r in rs)),
            "scored": len(ss), "fully_correct": sum(1 for s in ss if s["tests"] and s["correct"] == s["tests"]),
            "avg_correctness": _mean(s["correctness"] for s in ss),
            "avg_completeness": _mean(s["completeness"] for s in ss),
            "avg_completeness_if_correct": _mean(s["completeness_if_correct"] for s in ss),
            "avg_completeness_paper": _mean(s["completeness_paper"] for s in ss),
            "avg_completeness_if_correct_paper": _mean(s["completeness_if_correct_paper"] for s in ss),
            "tests": sum(s["tests"] for s in ss), "mutants": sum(s["mutants"] for s in ss),
            "rejected": sum(s["rejected"] for s in ss), "rejected_paper": sum(s["rejected_paper"] for s in ss),
            "unknown": sum(s["unknown"] for s in ss), "undecided": sum(s["undecided"] for s in ss),
            "vacuous_tests": sum(len(s["vacuous"]) for s in ss),
        }
    return out


def _mean(values) -> float | None:
    """The mean of the values that are not None, rounded to 4 places (None when there is none)."""
    vs = [v for v in values if v is not None]
    return round(sum(vs) / len(vs), 4) if vs else None


#: The paper's task-level findings (Sections I-C and II-B) checked by :func:`findings`.
PAPER_FINDINGS = {
    "2": "SharedElements: correct, completeness 0.6; mutants [4] and [5] of test 1 verify (STRONG_SPEC label)",
    "234": "CubeVolume: correctness check fails: the test expects 25 instead of 125 for the cube of 5",
    "240": "ReplaceLastElement: correctness check fails: wrong expected output copied from Python",
    "445": "MultiplyElements: correctness check fails: 32 replaced by 31 in an expected output",
    "572": "RemoveDuplicates: WRONG specification, the correctness check fails",
    "61": "countSubstrings: WEAK specification (count >= 0), low completeness",
    "145": "maxAbsDiff: labelled STRONG but weaker than the precise specification",
    "161": "removeElements: labelled STRONG but weaker than the precise specification",
}


def findings(records: list[Record]) -> dict:
    """For each task of :data:`PAPER_FINDINGS`: the paper's statement and what this run
    shows (verdict, correctness per test with the expected output of failing tests,
    completeness on positive evidence and the paper's, the probes of task 2), for the GPT-4 specification (or any candidate
    when the task is not in the run)."""
    by_task = {}
    for r in scored_records(records):
        if r["task_id"] in PAPER_FINDINGS and (r["task_id"] not in by_task or r["candidate"]["model"] == "gpt-4"):
            by_task[r["task_id"]] = r
    out = {}
    for tid, claim in PAPER_FINDINGS.items():
        r = by_task.get(tid)
        if r is None:
            out[tid] = {"paper": claim, "kit": None, "note": "task not in this run (skipped or filtered)"}
            continue
        s = score(r)
        checks = {c["method"]: c for c in r["verifier"]["options"].get("checks", [])}
        failing = []
        if s:
            for p in s["per_test"]:
                if p["correct"] != "verified" or p["test"] in s["vacuous"]:
                    c = checks.get(f"VkT{p['test']}Correct", {})
                    failing.append({"test": p["test"], "status": p["correct"], "expected_output": c.get("value")})
        out[tid] = {"paper": claim, "model": r["candidate"]["model"], "verdict": r["verdict"], "reason": r["reason"],
                    "label": r["verifier"]["options"].get("label"),
                    "correctness": s["correctness"] if s else None,
                    "completeness": s["completeness"] if s else None,
                    "completeness_paper": s["completeness_paper"] if s else None,
                    "failing_tests": failing, "probes": s["probes"] if s else []}
    return out
