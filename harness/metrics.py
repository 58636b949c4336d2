"""Metrics: verdict counts and rates, pass@k (unbiased estimator), bootstrap CIs.

pass@k follows Chen et al. 2021, "Evaluating Large Language Models Trained on Code"
(the unbiased estimator ``1 - C(n-c, k) / C(n, k)`` per task, averaged over tasks).
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from math import comb

from .model import VERDICTS, Record


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


def bootstrap_ci(values: list[float], *, iters: int = 2000, alpha: float = 0.05, seed: int = 0) -> tuple[float, float]:
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


def _bootstrap_cis(columns: list[list[float]], *, iters: int = 2000, alpha: float = 0.05,
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
        sample, ``infra_error`` included as not verified (issue 26: a sample is never
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

    Returns:
        ``{mode: {"overall": counts, "per_model": {model: counts + pass_at_k + ci95}}}``.
    """
    out: dict = {}
    by_mode: dict[str, list[dict]] = defaultdict(list)
    for r in records:
        by_mode[r["mode"]].append(r)
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
        scored = [r for r in recs if not r["candidate"]["model"].startswith("canary:")]
        out[mode] = {"overall": verdict_counts(scored), "per_model": per_model}
    return out


def pass_at_k_curves(records: list[Record], *, seed: int = 0, kmax: int = 16) -> dict:
    """pass@k for every k from 1 to the smallest per-task sample count (at most ``kmax``),
    with a 95% percentile-bootstrap CI over tasks (the per-task unbiased estimates of
    :func:`pass_at_k` resampled, ``seed`` as in :func:`bootstrap_ci`), per mode and model.
    Canaries (models ``canary:*``) are left out; an ``infra_error`` sample counts as not
    verified (never dropped). At a k that
    :func:`group_metrics` also reports the value is the same number.

    Returns:
        ``{mode: {model: [(k, value, ci_low, ci_high), ...]}}``, values in 0..1; a model
        whose tasks have no scored sample is absent.
    """
    tasks: dict = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for r in records:
        if r["candidate"]["model"].startswith("canary:"):
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
