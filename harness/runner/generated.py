"""The statistical side of ``verikit reproduce BENCH --generate``: a model's published
figures (:meth:`harness.plugin.Benchmark.published_model_figures`) next to the kit's
values from a run on newly generated samples, each with a percentile bootstrap confidence
interval over tasks (:func:`harness.metrics.bootstrap_ratio_ci`, seeded by the run's
seed). A figure is ``reproduced`` when the published value lies inside the interval
(:func:`harness.metrics.published_inside`), else ``differs``; it is never compared by
equality (``basis: "re-run, statistical"``).

Also: where a predictions file's generation.json is (:func:`generation_link`), the
``generation`` section of report.json (:func:`generation_report`), and the choice of the
mode and of the paper's model name (:func:`generate_mode`, :func:`check_published_model`).
"""

from __future__ import annotations

import json
from pathlib import Path

from ..datasets import sha256_file
from ..metrics import (BASIS_STATISTICAL, BOOTSTRAP_ITERS, CI_LEVEL, bootstrap_ratio_ci, fixes_per_task,
                       pass_at_k_per_task, published_inside, ratio)
from ..model import Record
from ..plugin import Benchmark, Reproduction
from ..report import generation_section
from .plan import RunError

#: The file ``verikit generate`` writes beside predictions.jsonl.
GENERATION_JSON = "generation.json"
#: The note of a comparison whose benchmark and mode have no per-model figure.
NO_FIGURE = "no published figure for this model"


def generate_mode(bench: Benchmark, modes: tuple[str, ...] | list[str]) -> str:
    """The one mode ``reproduce --generate`` runs: the one given, else the first of the
    benchmark's default modes (then its other modes) that has a generation protocol and
    published per-model figures, else the first that has a protocol.

    Raises:
        RunError: several modes given, an unknown mode, a mode without a protocol, or a
            benchmark without any (names the modes that have one).
    """
    with_protocol = [m for m in dict.fromkeys((*bench.default_modes, *bench.modes)) if bench.protocol(m) is not None]
    opt = f"--{bench.mode_option}"
    if len(modes) > 1:
        raise RunError(f"reproduce --generate runs one {bench.mode_option}; got {opt} {' '.join(modes)}")
    if modes:
        mode = modes[0]
        if mode not in bench.modes:
            raise RunError(f"unknown {bench.mode_option} {mode!r}; {bench.name} {bench.mode_option}s: "
                           f"{', '.join(bench.modes)}")
        if mode not in with_protocol:
            raise RunError(f"{bench.name} has no generation protocol for {opt} {mode} (it has one for: "
                           f"{', '.join(with_protocol) or 'none'})")
        return mode
    if not with_protocol:
        raise RunError(f"{bench.name} defines no generation protocol: it cannot be generated for")
    return next((m for m in with_protocol if bench.published_model_figures(m)), with_protocol[0])


def check_published_model(bench: Benchmark, mode: str, name: str) -> list[dict]:
    """The published figures of the model the paper calls ``name`` in ``mode`` (empty when
    the paper gives no per-model figure for ``mode`` at all: the comparison then says
    :data:`NO_FIGURE`).

    Raises:
        RunError: the paper has per-model figures for ``mode`` but none of ``name`` (the
            message lists the paper's model names; exit 2).
    """
    figures = bench.published_model_figures(mode)
    if not figures:
        return []
    mine = [f for f in figures if f["model"] == name]
    if not mine:
        names = sorted({f["model"] for f in figures})
        raise RunError(f"{bench.name} --{bench.mode_option} {mode}: the paper has no model called {name!r} "
                       f"(--published-model; default: --model); its models: {', '.join(names)}")
    return mine


def default_samples(figures: list[dict], protocol_samples: int) -> int:
    """The samples per task of a re-run: what the paper drew for the model (its figures'
    ``samples``, the largest when they differ), else the protocol's."""
    given = [f["samples"] for f in figures if isinstance(f.get("samples"), int)]
    return max(given) if given else protocol_samples


def generation_link(predictions: str | Path, predictions_sha256: str, run_dir: Path | None = None) -> dict | None:
    """The generation.json that made a predictions file: ``generation.json`` beside it
    whose recorded predictions sha256 (``predictions.sha256``) is ``predictions_sha256``.

    Returns:
        ``{"path", "sha256", "predictions_sha256"}`` (``path`` relative to ``run_dir``
        when it lies inside it), or None: no generation.json there, not JSON, or made for
        another predictions file.
    """
    where = Path(predictions).parent / GENERATION_JSON
    try:
        data = json.loads(where.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    recorded = (data.get("predictions") or {}).get("sha256") if isinstance(data, dict) else None
    if recorded != predictions_sha256:
        return None
    path = where.resolve()
    if run_dir is not None and path.is_relative_to(Path(run_dir).resolve()):
        shown = str(path.relative_to(Path(run_dir).resolve()))
    else:
        shown = str(path)
    return {"path": shown, "sha256": sha256_file(where), "predictions_sha256": predictions_sha256}


def predictions_metas(preds) -> dict[tuple, dict]:
    """``{(task_id, model, sample): meta}`` of a loaded predictions file's candidates."""
    return {(c.task_id, c.model, c.sample): (c.meta if isinstance(c.meta, dict) else {}) for c in preds.candidates}


def predicted(records: list[Record]) -> list[Record]:
    """The records of prediction candidates (gold, bundled and canaries left out)."""
    return [r for r in records if str(r["candidate"].get("origin", "")).startswith("predictions:")]


def generation_report(records: list[Record], preds, link: dict, *, seed: int) -> dict:
    """report.json's ``generation`` section (:func:`harness.report.generation_section`) of
    the prediction records of a run whose predictions ``verikit generate`` made."""
    return generation_section(predicted(records), predictions_metas(preds), link, seed=seed)


def _scaled(x: float | None, unit: str) -> float | None:
    if x is None:
        return None
    return round(x * 100.0 if unit == "percent" else x, 6)


def _values(bench: Benchmark, fig: dict, records: list[Record], mine: list[Record], mode: str, model: str,
            metas: dict) -> tuple[dict | None, str | None]:
    """Per-task ``(num, den)`` of a figure's metric over the model's records, or (None,
    why it cannot be computed)."""
    metric = fig["metric"]
    kind = metric.get("kind")
    per_task: dict[str, list] = {}
    for r in mine:
        per_task.setdefault(r["task_id"], []).append(r)
    if kind == "pass_at_k":
        k = int(metric["k"])
        nc = {t: (len(rs), sum(r["verdict"] == "verified" for r in rs)) for t, rs in per_task.items()}
        low = min(n for n, _ in nc.values())
        if k > low:
            return None, (f"pass@{k} needs at least {k} samples per task; the run has {low} "
                          f"(--samples {fig.get('samples') or k} as the paper)")
        return pass_at_k_per_task(nc, k), None
    if kind == "fixes":
        fixes: dict[str, list[int]] = {}
        for t, rs in per_task.items():
            given = [(metas.get((t, model, r["candidate"]["sample"])) or {}).get("fixes") for r in rs]
            fixes[t] = [x for x in given if isinstance(x, int)]
        pairs = fixes_per_task(fixes)
        if not pairs:
            return None, "no sample carries a fix count (predictions meta.fixes of verikit generate)"
        return pairs, None
    try:
        return bench.model_metric_values(metric, records, mode, model), None
    except ValueError as exc:
        return None, str(exc)


def statistical_reproduction(bench: Benchmark, mode: str, published_model: str, figures: list[dict],
                             records: list[Record], preds, *, seed: int, dataset: str, population: int | None = None,
                             selection: str = "all", iters: int = BOOTSTRAP_ITERS) -> Reproduction:
    """The model's published figures vs the kit's, from a run on generated predictions.

    Args:
        figures: :func:`check_published_model`'s (empty: the paper has none for ``mode``;
            the kit's pass@k for k = 1 .. the samples per task is listed with
            :data:`NO_FIGURE`).
        records: every record of the run (gold and canaries included: a benchmark metric
            may need the gold as reference); the model's are the prediction records.
        preds: the run's loaded predictions (their ``meta``: fixes).
        seed: the bootstrap's seed (the run's); dataset: the run's dataset name (a figure
            made on another dataset gets a note).
        population: the tasks of the dataset (None: the run's own); selection: how the
            run's tasks were chosen: ``all``, ``sample`` (``--sample``: drawn at random with
            the seed) or ``chosen`` (``--task``). A run over fewer tasks than the dataset
            is a subset, said in a note: a random sample is compared (its CI is over the
            tasks drawn), chosen tasks are not (their value does not estimate a figure over
            the whole dataset: ``not_reproducible``, "not comparable").

    Returns:
        A :class:`~harness.plugin.Reproduction` whose figures each carry ``basis: "re-run,
        statistical"``, ``ci`` ([low, high] in the figure's unit, or None when the value
        cannot be computed), ``ci_level``, ``model``, ``unit``, ``tasks`` and
        ``samples_per_task``; status ``reproduced`` (the published value inside the CI),
        ``differs``, or ``not_reproducible`` (no published figure, or a value the run cannot
        give, e.g. pass@8 from 1 sample per task; the note says why).

    Raises:
        RunError: the predictions hold no candidate, or several models.
    """
    mine = predicted(records)
    models = sorted({r["candidate"]["model"] for r in mine})
    if len(models) != 1:
        raise RunError(f"reproduce --generate compares one model; the run's predictions hold "
                       f"{', '.join(models) or 'no candidate'}")
    model = models[0]
    metas = predictions_metas(preds)
    tasks = {r["task_id"] for r in mine}
    counts = {}
    for r in mine:
        counts[r["task_id"]] = counts.get(r["task_id"], 0) + 1
    per_task_n = {"min": min(counts.values()), "max": max(counts.values())}
    subset = population is not None and len(tasks) < population
    chosen = subset and selection != "sample"
    why_chosen = (f"not comparable: this run covers {len(tasks)} of the {population} tasks of {dataset}, "
                  + ("chosen with --task" if selection == "chosen" else "the others without a candidate")
                  + f"; chosen tasks do not estimate a figure over all {population} (draw them with --sample N for a "
                  f"statistical comparison); the kit's value over these tasks is listed with its CI")
    if not figures:  # the kit's own values, listed with the missing figure
        figures = [{"name": f"{bench.name}.{mode}.pass_at_{k}", "table": "-", "row": published_model,
                    "column": f"pass@{k} ({mode})", "model": published_model, "metric": {"kind": "pass_at_k", "k": k},
                    "value": None, "unit": "percent", "notes": [NO_FIGURE]} for k in range(1, per_task_n["min"] + 1)]
    out = []
    for fig in figures:
        unit = fig.get("unit", "percent")
        entry = {"name": fig["name"], "table": fig["table"], "row": fig["row"], "column": fig["column"],
                 "model": published_model, "run_model": model, "published": fig["value"], "unit": unit,
                 "basis": BASIS_STATISTICAL, "ci_level": CI_LEVEL, "tasks": len(tasks),
                 "samples_per_task": per_task_n, "notes": list(fig.get("notes") or [])}
        if fig.get("dataset") and fig["dataset"] != dataset:
            entry["notes"].append(f"the published figure is over {fig['dataset']}; this run is over {dataset}")
        pairs, why = _values(bench, fig, records, mine, mode, model, metas)
        value = ratio(list(pairs.values())) if pairs else None
        if value is None:
            entry.update(reproduced=None, ci=None, status="not_reproducible")
            entry["notes"].append(why or "no task gives this metric a value in this run")
            out.append(entry)
            continue
        lo, hi = bootstrap_ratio_ci(list(pairs.values()), iters=iters, seed=seed)
        entry.update(reproduced=_scaled(value, unit), ci=[_scaled(lo, unit), _scaled(hi, unit)],
                     tasks=len(pairs))
        if fig["value"] is None:
            entry["status"] = "not_reproducible"
        elif chosen:
            entry["status"] = "not_reproducible"
            entry["notes"].append(why_chosen)
        else:
            inside = published_inside(fig["value"], entry["ci"][0], entry["ci"][1], decimals=fig.get("decimals", 2))
            entry["status"] = "reproduced" if inside else "differs"
        out.append(entry)
    notes = [f"re-run from newly generated samples of {model} compared with the paper's {published_model}: "
             f"statistical, never exact: each figure is reproduced when the published value lies inside the "
             f"kit's {CI_LEVEL:.0%} percentile bootstrap confidence interval over tasks ({iters} resamples, "
             f"seed {seed})"]
    if chosen:
        notes.insert(0, f"a subset: {why_chosen}")
    elif subset:
        notes.insert(0, f"a subset: this run covers {len(tasks)} of the {population} tasks of {dataset}, drawn at "
                        f"random (--sample, seed {seed}); each figure is compared through the CI over these "
                        f"{len(tasks)} tasks, which is as wide as so few tasks make it")
    return Reproduction(figures=out, notes=notes)
