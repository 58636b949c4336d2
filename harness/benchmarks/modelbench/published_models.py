"""Model-Bench's per-model figures (Table 2) in the form ``verikit reproduce modelbench
--generate`` compares a re-run with, and the per-task values of the state similarity
(:meth:`harness.plugin.Benchmark.published_model_figures`,
:meth:`~harness.plugin.Benchmark.model_metric_values`)."""

from __future__ import annotations

from ...model import Record
from .. import published_figures
from .metrics import ORACLE_MODEL, THETA, similarity_table
from .tasks import NAME

#: Table 2's prompt settings (``setting`` of results/published/modelbench.json) -> the kit's modes.
SETTINGS = {"Original Code / Few-shot": "original-fewshot", "Original Code / Zero-shot": "original-zeroshot",
            "Transformed Code / Few-shot": "transformed-fewshot"}
#: The paper's samples per task (Section 4.1.1: n = 3).
SAMPLES = 3
#: Table 2's columns (the last part of a figure's name) -> the metric the kit computes.
METRICS = {"runnable_at_1": {"kind": "pass_at_k", "k": 1}, "runnable_at_2": {"kind": "pass_at_k", "k": 2},
           "runnable_at_3": {"kind": "pass_at_k", "k": 3}, "similarity": {"kind": "similarity", "theta": THETA},
           "fixes": {"kind": "fixes"}}
NOTES = ["the paper's 400 programs come from HumanEval, MBPP and LiveCodeBench after its own normalisation "
         "(unpublished); the kit's tasks are the HumanEval problems its filters keep, so the task sets differ",
         "Runnable@k: a sample counts when its verdict is 'verified' (TLC checked it without failure and the "
         "kit's integrity rules hold); an infra_error sample counts as not runnable (the kit's rule; the "
         "benchmark's own runnable_at_k section leaves them out)"]


def model_figures(mode: str, model: str | None = None) -> list[dict]:
    """Table 2's rows of ``mode``'s prompt setting, one figure per (model, column), the
    Average rows left out (no model), in the format of
    :meth:`harness.plugin.Benchmark.published_model_figures` (values in percent, fixes in
    fix rounds, 2 decimals, 3 samples per task)."""
    out = []
    for fig in published_figures(NAME)["figures"]:
        if fig["table"] != "Table 2" or fig.get("model") in (None, "Average") or SETTINGS.get(fig["setting"]) != mode:
            continue
        if model is not None and fig["model"] != model:
            continue
        metric = METRICS[fig["name"].rsplit(".", 1)[1]]
        out.append({"name": fig["name"], "table": fig["table"], "row": fig["row"], "column": fig["column"],
                    "model": fig["model"], "mode": mode, "metric": dict(metric), "value": fig["value"],
                    "unit": "percent" if fig["unit"] == "percent" else fig["unit"], "decimals": 2,
                    "samples": SAMPLES, "notes": list(NOTES)})
    return out


def model_metric_values(metric: dict, records: list[Record], mode: str, model: str) -> dict:
    """The per-task values of Model-Bench's own metric ``similarity``:
    :func:`similarity_per_task` (theta from the metric, default :data:`THETA`).

    Raises:
        ValueError: another metric kind.
    """
    if metric.get("kind") != "similarity":
        raise ValueError(f"{NAME} has no metric {metric.get('kind')!r}")
    return similarity_per_task(records, mode, model, theta=metric.get("theta", THETA))


def similarity_per_task(records: list[Record], mode: str, model: str, *, theta: float = THETA) -> dict:
    """Definition 4's state similarity (theta ``theta``) of ``model``'s runnable samples in
    ``mode`` against the task's oracle (the verified gold record), per task: ``{task_id:
    (sum of the similarities, number of runnable samples)}`` over the tasks that have a
    verified oracle in ``records`` (a task whose samples never ran gives ``(0, 0)``;
    tasks without an oracle are left out: no similarity can be computed there). The ratio
    is Table 2's "Avg Similarity": the mean over runnable samples."""
    oracles = {r["task_id"] for r in records
               if r["mode"] == mode and r["candidate"]["model"] == ORACLE_MODEL and r["verdict"] == "verified"}
    tasks = {r["task_id"] for r in records if r["mode"] == mode and r["candidate"]["model"] == model}
    out: dict = {t: [0.0, 0.0] for t in sorted(tasks & oracles)}
    table = similarity_table([r for r in records if r["mode"] == mode], theta=theta)
    for row in table["per_candidate"]:
        if row["model"] == model and row["task_id"] in out:
            out[row["task_id"]][0] += row["similarity"]
            out[row["task_id"]][1] += 1
    return {t: (a, b) for t, (a, b) in out.items()}


__all__ = ["SETTINGS", "model_figures", "similarity_per_task"]
