"""The kit's own benchmarks, one module or package each: tasks, candidates, job
construction, judging, metrics inputs and the published numbers, each behind the plugin
interface :class:`harness.plugin.Benchmark` and registered by entry point in the kit's
pyproject.toml (as an outside plugin would be). A benchmark never starts a process,
never makes a sandbox and never calls the runner.
"""

from __future__ import annotations

import json

from .. import resources
from ..model import Candidate  # noqa: F401  (re-exported: the benchmarks' vocabulary)


def published_figures(name: str) -> dict:
    """``results/published/<name>.json``: a built-in benchmark's paper figures, each with
    its source (the format of :meth:`harness.plugin.Benchmark.published`).

    Raises:
        OSError, json.JSONDecodeError: the file is missing or not JSON.
    """
    return json.loads(resources.kit_file(f"results/published/{name}.json").read_text(encoding="utf-8"))


def published_model_figures(name: str, mode: str, model: str | None = None) -> list[dict]:
    """The ``model_figures`` of ``results/published/<name>.json`` for ``mode`` (and
    ``model``, when given): the paper's per-model figures in the format of
    :meth:`harness.plugin.Benchmark.published_model_figures` (each names its ``mode``).

    Raises:
        OSError, json.JSONDecodeError: as :func:`published_figures`.
    """
    return [f for f in published_figures(name).get("model_figures") or []
            if f["mode"] == mode and (model is None or f["model"] == model)]
