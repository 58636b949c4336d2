"""Metrics: verdict counts and rates, pass@k (unbiased estimator), bootstrap CIs, and the
statistical comparison of a re-run with a published figure.

pass@k follows Chen et al. 2021, "Evaluating Large Language Models Trained on Code"
(the unbiased estimator ``1 - C(n-c, k) / C(n, k)`` per task, averaged over tasks).
Every confidence interval is a percentile bootstrap over tasks (Efron & Tibshirani 1993,
"An Introduction to the Bootstrap", ch. 13): :data:`BOOTSTRAP_ITERS` resamples of the
tasks with replacement, drawn with ``random.Random(seed)`` (the run's ``--seed``).
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from math import comb

from .model import VERDICTS, Record
from .results import is_canary

#: Resamples of every bootstrap of the kit (report.json's ``ci95``, pass@k curves, the
#: statistical figures of a generated re-run).
BOOTSTRAP_ITERS = 2000
#: The confidence level of every interval the kit reports.
CI_LEVEL = 0.95
#: ``basis`` of a reproduced figure: recomputed exactly from published outputs or a
#: deterministic re-run (compared by equality), or re-run from newly generated samples
#: (compared by a bootstrap confidence interval).
BASIS_EXACT = "exact"
BASIS_STATISTICAL = "re-run, statistical"


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for one task with ``n`` samples of which ``c`` are correct.

    Raises:
        ValueError: ``k > n`` (too few samples for k; never silently dropped), or
            ``c`` outside ``0..n``.
    """
    if not 0 <= c <= n:
        raise ValueError(f"c={c} must be within 0..n={n}")
    if k > n:
        raise ValueError(f"pass@{k} needs at least {k} samples per task, got n={n}")
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def mean_pass_at_k(per_task: dict[str, tuple[int, int]], k: int) -> float:
    """pass@k averaged over tasks; ``per_task`` maps task -> (n, c).

    Raises:
        ValueError: a task has fewer than k samples (names it), or no tasks.
    """
    if not per_task:
        raise ValueError("no tasks")
    total = 0.0
    for task, (n, c) in per_task.items():
        try:
            total += pass_at_k(n, c, k)
        except ValueError as exc:
            raise ValueError(f"task {task}: {exc}") from exc
    return total / len(per_task)


def bootstrap_ci(values: list[float], *, iters: int = BOOTSTRAP_ITERS, alpha: float = 0.05, seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of the mean of ``values``.

    Args:
        values: per-task scores (e.g. 0/1 verified, or per-task pass@k).
        iters: resamples; alpha: 1 - confidence level; seed: RNG seed (recorded by callers).

    Returns:
        (low, high); (nan, nan) for an empty list.
    """
    if not values:
        return (float("nan"), float("nan"))
    return _bootstrap_cis([values], iters=iters, alpha=alpha, seed=seed)[0]


def _bootstrap_cis(columns: list[list[float]], *, iters: int = BOOTSTRAP_ITERS, alpha: float = 0.05,
                   seed: int = 0) -> list[tuple[float, float]]:
    """:func:`bootstrap_ci` of each of ``columns`` (non-empty, all of one length: scores
    of the same tasks), from one drawing of the resamples: each column's interval is
    the one ``bootstrap_ci(column, seed=seed)`` gives, to the last bit (the same draws,
    ``rng.choice`` of a sequence of that length, summed in the same order)."""
    rng = random.Random(seed)
    n = len(columns[0])
    pick = range(n)
    means: list[list[float]] = [[] for _ in columns]
    for _ in range(iters):
        drawn = [rng.choice(pick) for _ in range(n)]
        for column, out in zip(columns, means):
            out.append(sum(column[i] for i in drawn) / n)
    lo, hi = int(alpha / 2 * iters), min(iters - 1, int((1 - alpha / 2) * iters))
    return [(m[lo], m[hi]) for m in map(sorted, means)]


def verdict_counts(records: list[Record]) -> dict:
    """Counts for a group of records.

    Returns:
        ``{"n", "verified", "rate", "by_verdict", "infra_error"}``; ``n`` counts every
        sample, ``infra_error`` included as not verified (a sample is never
        dropped, which would raise a model's score; the report and the Hub refusal name
        the count, and re-running the same command retries them); ``rate`` is None when
        ``n`` is 0.
    """
    by = Counter(r["verdict"] for r in records)
    n = sum(by.values())
    return {
        "n": n,
        "verified": by.get("verified", 0),
        "rate": (by.get("verified", 0) / n) if n else None,
        "by_verdict": {v: by.get(v, 0) for v in VERDICTS},
        "infra_error": by.get("infra_error", 0),
    }


def group_metrics(records: list[Record], *, seed: int = 0) -> dict:
    """Per-mode metrics: overall and per model, with pass@k for every k up to the
    smallest per-task sample count when models have several samples, and a 95% bootstrap
    CI of the verified rate (over tasks, ``seed`` recorded).

    Records marked ``task_defect`` (the task's own bug: a known defect of the pinned data,
    or one the benchmark's checks found) are kept out of the counts, gold and candidates
    alike, and listed per mode under ``"excluded"`` (task id -> defect).

    Returns:
        ``{mode: {"overall": counts, "per_model": {model: counts + pass_at_k + ci95},
        "excluded": {task_id: defect}}}`` (``excluded`` only when a record was left out).
    """
    out: dict = {}
    by_mode: dict[str, list[dict]] = defaultdict(list)
    excluded: dict[str, dict[str, str]] = defaultdict(dict)
    for r in records:
        if r.get("task_defect"):
            excluded[r["mode"]].setdefault(r["task_id"], r["task_defect"])
        else:
            by_mode[r["mode"]].append(r)
    for mode in excluded:
        by_mode.setdefault(mode, [])
    for mode, recs in sorted(by_mode.items()):
        per_model: dict = {}
        by_model: dict[str, list[dict]] = defaultdict(list)
        for r in recs:
            by_model[r["candidate"]["model"]].append(r)
        for model, mrecs in sorted(by_model.items()):
            counts = verdict_counts(mrecs)
            tasks: dict[str, list[int]] = defaultdict(lambda: [0, 0])
            for r in mrecs:  # an infra_error sample counts as not verified, never dropped
                tasks[r["task_id"]][0] += 1
                tasks[r["task_id"]][1] += r["verdict"] == "verified"
            if tasks:
                kmax = min(n for n, _ in tasks.values())
                counts["pass_at_k"] = {str(k): mean_pass_at_k({t: tuple(v) for t, v in tasks.items()}, k)
                                       for k in (1, 2, 4, 8, 16) if k <= kmax}
                lo, hi = bootstrap_ci([c / n for n, c in tasks.values()], seed=seed)
                counts["ci95"] = [lo, hi]
                counts["tasks"] = len(tasks)
            per_model[model] = counts
        scored = [r for r in recs if not is_canary(r["candidate"]["model"])]
        out[mode] = {"overall": verdict_counts(scored), "per_model": per_model,
                     **({"excluded": dict(sorted(excluded[mode].items()))} if excluded.get(mode) else {})}
    return out


def pass_at_k_curves(records: list[Record], *, seed: int = 0, kmax: int = 16) -> dict:
    """pass@k for every k from 1 to the smallest per-task sample count (at most ``kmax``),
    with a 95% percentile-bootstrap CI over tasks (the per-task unbiased estimates of
    :func:`pass_at_k` resampled, ``seed`` as in :func:`bootstrap_ci`), per mode and model.
    Canaries (models ``canary:*``) and records of a task with a defect (``task_defect``)
    are left out; an ``infra_error`` sample counts as not verified (never dropped). At a k that
    :func:`group_metrics` also reports the value is the same number.

    Returns:
        ``{mode: {model: [(k, value, ci_low, ci_high), ...]}}``, values in 0..1; a model
        whose tasks have no scored sample is absent.
    """
    tasks: dict = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for r in records:
        if is_canary(r["candidate"]["model"]) or r.get("task_defect"):
            continue
        nc = tasks[(r["mode"], r["candidate"]["model"])][r["task_id"]]
        nc[0] += 1
        nc[1] += r["verdict"] == "verified"
    out: dict = defaultdict(dict)
    for (mode, model), per_task in sorted(tasks.items()):
        top = min(kmax, min(n for n, _ in per_task.values()))
        ks = range(1, top + 1)
        cis = _bootstrap_cis([[pass_at_k(n, c, k) for n, c in per_task.values()] for k in ks], seed=seed)
        out[mode][model] = [(k, mean_pass_at_k({t: tuple(v) for t, v in per_task.items()}, k), lo, hi)
                            for k, (lo, hi) in zip(ks, cis)]
    return dict(out)


def bootstrap_ratio_ci(pairs: list[tuple[float, float]], *, iters: int = BOOTSTRAP_ITERS, alpha: float = 0.05,
                       seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of ``sum(num) / sum(den)`` over tasks.

    Args:
        pairs: one ``(numerator, denominator)`` per task: ``(pass@k estimate, 1)`` for a
            mean over tasks, ``(sum of a per-sample value, number of samples)`` for a mean
            over samples (e.g. the fixes of :func:`fixes_per_task`; Model-Bench's similarity
            over runnable samples). Resampling tasks keeps a task's samples together.
        iters: resamples; alpha: 1 - confidence level; seed: RNG seed (the run's).

    Returns:
        ``(low, high)``: the ``alpha/2`` and ``1 - alpha/2`` percentiles of the resampled
        statistic (the same draws and the same index rule as :func:`bootstrap_ci`, so with
        every denominator 1 it is :func:`bootstrap_ci` of the numerators to the last bit).
        A resample whose denominators sum to 0 has no value and is left out; (nan, nan)
        when no resample has one (or ``pairs`` is empty).
    """
    if not pairs:
        return (float("nan"), float("nan"))
    rng = random.Random(seed)
    n = len(pairs)
    pick = range(n)
    stats = []
    for _ in range(iters):
        drawn = [rng.choice(pick) for _ in range(n)]
        den = sum(pairs[i][1] for i in drawn)
        if den:
            stats.append(sum(pairs[i][0] for i in drawn) / den)
    if not stats:
        return (float("nan"), float("nan"))
    stats.sort()
    m = len(stats)
    lo, hi = int(alpha / 2 * m), min(m - 1, int((1 - alpha / 2) * m))
    return (stats[lo], stats[hi])


def ratio(pairs: list[tuple[float, float]]) -> float | None:
    """``sum(num) / sum(den)`` of :func:`bootstrap_ratio_ci`'s pairs; None when the
    denominators sum to 0."""
    den = sum(d for _, d in pairs)
    return sum(x for x, _ in pairs) / den if den else None


def pass_at_k_per_task(per_task: dict[str, tuple[int, int]], k: int) -> dict[str, tuple[float, float]]:
    """``{task: (pass@k estimate, 1)}`` from ``{task: (n, c)}`` (the pairs of
    :func:`bootstrap_ratio_ci` whose ratio is :func:`mean_pass_at_k`).

    Raises:
        ValueError: a task has fewer than k samples (names it).
    """
    out = {}
    for task, (n, c) in per_task.items():
        try:
            out[task] = (pass_at_k(n, c, k), 1)
        except ValueError as exc:
            raise ValueError(f"task {task}: {exc}") from exc
    return out


def fixes_per_task(fixes: dict[str, list[int]]) -> dict[str, tuple[float, float]]:
    """The average number of fixes as :func:`bootstrap_ratio_ci` pairs: ``{task: (sum of
    its samples' fixes, number of samples)}`` from ``{task: [fixes of each sample]}``.

    A sample's fixes is the number of verifier-feedback rounds of its chat that were
    answered by a new candidate (``meta.fixes`` of a predictions line written by ``verikit
    generate``): 0 when the first answer was the final one. The average is over every
    sample of the model, verified or not (a sample that never verified counts the rounds
    it was given, at most ``--feedback-turns``). This is the kit's reading of Model-Bench's
    "average number of fixes under Runnable@1" (paper 002, Section 5.1 and Table 2, which
    refer to Section 4.1.1; that section defines Runnable@k only and gives no formula for
    the fixes): each sample is one Runnable@1 trial, and its fixes are the rounds of
    "self-correct via error feedback and iterative multi-turn chats" (Section 4) it took.
    Table 2's zero-shot rows, where models with about 1 % Runnable@1 show 5.00 fixes,
    suggest the paper too counts a sample that never ran with its whole budget of rounds.
    """
    return {task: (float(sum(xs)), float(len(xs))) for task, xs in fixes.items() if xs}


def published_inside(published: float, low: float, high: float, *, decimals: int = 2) -> bool:
    """Whether a published value lies inside the interval ``[low, high]``, read as printed:
    a value printed with ``decimals`` decimals stands for anything that rounds to it, so
    it is inside when ``[published - h, published + h]`` (``h`` half a unit of the last
    printed digit) meets the interval. Bounds are inclusive; a nan bound is never met."""
    h = 0.5 * 10 ** -decimals
    return low - h <= published <= high + h
