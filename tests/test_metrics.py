"""Tests of harness/metrics.py: pass@k (Chen et al. 2021 unbiased estimator), bootstrap
confidence intervals, verdict counts and per-mode metrics."""

from __future__ import annotations

import math
import random
import statistics
from itertools import combinations

import pytest

from harness.metrics import bootstrap_ci, group_metrics, mean_pass_at_k, pass_at_k, pass_at_k_curves, verdict_counts
from harness.verifiers import VERDICTS


def brute_pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that a random k-subset of n samples (c correct) contains a correct one."""
    samples = [1] * c + [0] * (n - c)
    subsets = list(combinations(range(n), k))
    return sum(any(samples[i] for i in s) for s in subsets) / len(subsets)


@pytest.mark.parametrize("n, c, k, expected", [
    (5, 2, 1, 0.4),
    (5, 0, 1, 0.0),
    (5, 0, 5, 0.0),
    (5, 5, 1, 1.0),
    (5, 5, 5, 1.0),
    (5, 4, 2, 1.0),    # n - c < k: every k-subset has a correct sample
    (10, 3, 2, 1 - 21 / 45),
    (1, 1, 1, 1.0),
    (1, 0, 1, 0.0),
])
def test_pass_at_k_known_values(n, c, k, expected):
    assert pass_at_k(n, c, k) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("n", range(1, 8))
def test_pass_at_k_matches_brute_force(n):
    for c in range(n + 1):
        for k in range(1, n + 1):
            assert pass_at_k(n, c, k) == pytest.approx(brute_pass_at_k(n, c, k), abs=1e-12), (n, c, k)


def test_pass_at_k_is_monotone_in_k_and_c():
    n = 12
    for c in range(n + 1):
        vals = [pass_at_k(n, c, k) for k in range(1, n + 1)]
        assert vals == sorted(vals)
    for k in (1, 4):
        vals = [pass_at_k(n, c, k) for c in range(n + 1)]
        assert vals == sorted(vals)


@pytest.mark.parametrize("n, c, k", [(3, 1, 4), (0, 0, 1), (1, 0, 2)])
def test_pass_at_k_needs_k_samples(n, c, k):
    with pytest.raises(ValueError, match=f"pass@{k} needs at least {k}"):
        pass_at_k(n, c, k)


@pytest.mark.parametrize("n, c", [(5, 6), (5, -1)])
def test_pass_at_k_c_out_of_range(n, c):
    with pytest.raises(ValueError, match="must be within"):
        pass_at_k(n, c, 1)


def test_mean_pass_at_k():
    per_task = {"a": (5, 2), "b": (5, 5), "c": (5, 0)}
    assert mean_pass_at_k(per_task, 1) == pytest.approx((0.4 + 1.0 + 0.0) / 3)
    assert mean_pass_at_k(per_task, 5) == pytest.approx(2 / 3)


def test_mean_pass_at_k_names_the_task():
    with pytest.raises(ValueError, match=r"task 07_71: pass@4 needs at least 4 samples per task, got n=2"):
        mean_pass_at_k({"00_327": (5, 1), "07_71": (2, 1)}, 4)
    with pytest.raises(ValueError, match="no tasks"):
        mean_pass_at_k({}, 1)


def test_bootstrap_ci_deterministic_and_brackets_the_mean():
    values = [1, 0, 1, 1, 0, 1, 0, 1, 1, 1, 0, 0, 1, 1, 1, 0.5, 0.25]
    a = bootstrap_ci(values, seed=3)
    b = bootstrap_ci(values, seed=3)
    assert a == b
    lo, hi = a
    mean = statistics.fmean(values)
    assert 0 <= lo < mean < hi <= 1
    others = {bootstrap_ci(values, seed=s) for s in range(6)}
    assert len(others) > 1  # the seed is really used
    narrow = bootstrap_ci(values, alpha=0.5, seed=3)
    assert lo <= narrow[0] <= narrow[1] <= hi


def _bootstrap_ci_as_first_written(values, iters=2000, alpha=0.05, seed=0):
    rng = random.Random(seed)
    n = len(values)
    means = sorted(sum(rng.choice(values) for _ in range(n)) / n for _ in range(iters))
    return (means[int(alpha / 2 * iters)], means[min(iters - 1, int((1 - alpha / 2) * iters))])


def test_bootstrap_ci_gives_the_published_intervals_to_the_last_bit():
    """Reports written before must stay reproducible: the same draws, summed in the same
    order, also when pass@k's curves draw once for every k."""
    gen = random.Random(1)
    for n in (1, 2, 7, 30):
        values = [gen.random() / 3 for _ in range(n)]
        for seed, alpha in ((0, 0.05), (5, 0.2)):
            assert bootstrap_ci(values, seed=seed, alpha=alpha) == _bootstrap_ci_as_first_written(values, seed=seed,
                                                                                                  alpha=alpha)
    recs = [_rec("verified" if gen.random() < 0.4 else "failed", task=f"t{i % 7}") for i in range(7 * 5)]
    (points,) = pass_at_k_curves(recs, seed=4)["spec-from-code"].values()
    assert [k for k, *_ in points] == [1, 2, 3, 4, 5]
    for k, _, lo, hi in points:
        per_task = {}
        for r in recs:
            nc = per_task.setdefault(r["task_id"], [0, 0])
            nc[0] += 1
            nc[1] += r["verdict"] == "verified"
        scores = [pass_at_k(n, c, k) for n, c in per_task.values()]
        assert (lo, hi) == _bootstrap_ci_as_first_written(scores, seed=4)


def test_bootstrap_ci_edge_cases():
    assert all(math.isnan(x) for x in bootstrap_ci([]))
    assert bootstrap_ci([1.0, 1.0, 1.0]) == (1.0, 1.0)
    assert bootstrap_ci([0.7]) == (0.7, 0.7)


def _rec(verdict, model="m", task="t1", mode="spec-from-code"):
    return {"verdict": verdict, "mode": mode, "task_id": task, "candidate": {"model": model}}


def test_verdict_counts_count_infra_error_as_not_verified():
    """A sample is never dropped (dropping an infra_error would raise the score)."""
    recs = [_rec(v) for v in ("verified", "verified", "failed", "rejected", "infra_error", "infra_error")]
    c = verdict_counts(recs)
    assert c["n"] == 6
    assert c["verified"] == 2
    assert c["rate"] == pytest.approx(2 / 6)
    assert c["by_verdict"] == {"verified": 2, "failed": 1, "rejected": 1, "timeout": 0, "memout": 0,
                               "invalid": 0, "infra_error": 2}
    assert set(c["by_verdict"]) == set(VERDICTS)


def test_verdict_counts_only_infra_errors():
    c = verdict_counts([_rec("infra_error")])
    assert c["n"] == 1 and c["rate"] == 0.0 and c["verified"] == 0 and c["infra_error"] == 1
    assert verdict_counts([])["rate"] is None


def test_verdict_counts_has_the_documented_infra_error_key():
    assert verdict_counts([_rec("infra_error"), _rec("verified")])["infra_error"] == 1


def test_group_metrics_pass_at_k_and_canaries():
    recs = []
    # model a: 2 samples per task on 3 tasks
    for task, vs in {"t1": ("verified", "failed"), "t2": ("failed", "failed"), "t3": ("verified", "verified")}.items():
        recs += [_rec(v, "a", task) for v in vs]
    recs += [_rec("verified", "b", "t1"), _rec("infra_error", "b", "t2")]
    recs += [_rec("rejected", "canary:no-ensures", "t1")]
    recs += [_rec("verified", "gold", "t1", mode="gold")]
    m = group_metrics(recs, seed=1)
    assert set(m) == {"gold", "spec-from-code"}
    a = m["spec-from-code"]["per_model"]["a"]
    assert a["n"] == 6 and a["verified"] == 3 and a["tasks"] == 3
    assert set(a["pass_at_k"]) == {"1", "2"}
    assert a["pass_at_k"]["1"] == pytest.approx((0.5 + 0 + 1) / 3)
    assert a["pass_at_k"]["2"] == pytest.approx((1 + 0 + 1) / 3)
    lo, hi = a["ci95"]
    assert lo <= 0.5 <= hi
    b = m["spec-from-code"]["per_model"]["b"]
    assert b["n"] == 2 and b["tasks"] == 2 and b["pass_at_k"] == {"1": 0.5}  # the infra error counts as not verified
    assert "canary:no-ensures" in m["spec-from-code"]["per_model"]
    overall = m["spec-from-code"]["overall"]
    assert overall["n"] == 8 and overall["by_verdict"]["rejected"] == 0  # canaries are not scored
    assert overall["by_verdict"]["infra_error"] == 1
    assert m["gold"]["overall"]["rate"] == 1.0
    assert group_metrics(recs, seed=1) == m


def test_a_task_with_a_defect_is_kept_out_of_every_metric():
    """A task's own bug (``task_defect``) is not the candidates': its records, gold and
    candidates alike, are left out of the counts, pass@k and the curves, and listed."""
    bug = "inconsistent-task: the prelude's axiom is false at INT_MIN"
    recs = [_rec("verified", "a", "t1"), _rec("failed", "a", "t2"),
            {**_rec("rejected", "a", "t3"), "task_defect": bug},
            {**_rec("rejected", "gold", "t3", mode="gold"), "task_defect": bug}, _rec("verified", "gold", "t1", mode="gold")]
    m = group_metrics(recs, seed=1)
    a = m["spec-from-code"]["per_model"]["a"]
    assert a["n"] == 2 and a["tasks"] == 2 and a["pass_at_k"] == {"1": 0.5}  # t3's rejection is not a's failure
    assert m["spec-from-code"]["excluded"] == {"t3": bug} and m["gold"]["excluded"] == {"t3": bug}
    assert m["gold"]["overall"]["rate"] == 1.0
    assert pass_at_k_curves(recs, seed=1)["spec-from-code"]["a"][0][1] == 0.5
    # a mode whose every record is excluded is still listed, with nothing counted
    only = group_metrics([{**_rec("failed", "a", "t3"), "task_defect": bug}])
    assert only["spec-from-code"]["overall"]["n"] == 0 and only["spec-from-code"]["excluded"] == {"t3": bug}
    assert "excluded" not in group_metrics([_rec("verified")])["spec-from-code"]
