"""Upstream results JSON -> predictions JSONL (``verikit osvbench convert``).

Upstream's ``LLM_API_Invocations_passk.py`` writes ``results/<dir>/<llm>_<task>.json`` as
``{"<i>": {"<syscall>": [spec, ...]}}``, or ``{"<i>": {"<llm>": "Error!"}}`` when the API
call failed; each spec becomes one predictions line (schemas/predictions.schema.json).
"""

from __future__ import annotations

import json
from pathlib import Path

from .prompts import UPSTREAM_MODELS
from .tasks import RESULTS_JSON, ManifestError, Task, load_benchmark, path_of


def load_results(path: Path, rel: str) -> dict:
    """An upstream results JSON as a dict (not checked beyond being an object).

    Raises:
        ManifestError: not JSON (``rel:line:column``) or not an object.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ManifestError(f"{rel}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}") from exc
    if not isinstance(data, dict):
        raise ManifestError(f"{rel}:1: expected an object {{\"<task index>\": {{\"<syscall>\": [specs]}}}}")
    return data


def convert_upstream_results(path: str | Path, tasks: list[Task], *, model: str | None = None,
                             where: str | None = None) -> tuple[list[dict], list[str]]:
    """Predictions lines from an upstream results JSON (``results/<dir>/<llm>_<task>.json``
    as LLM_API_Invocations_passk.py writes it: ``{"<i>": {"<syscall>": [spec, ...]}}``,
    or ``{"<i>": {"<llm>": "Error!"}}`` when the API call failed).

    Each spec becomes ``{"task_id": "<i>", "model", "sample": j, "output": spec, "mode":
    "spec", "meta": {...}}`` (valid against schemas/predictions.schema.json). ``model``
    defaults to the ``<llm>`` part of the file name.

    Returns:
        ``(lines, notes)``: notes list tasks with no spec (failed calls, empty lists).

    Raises:
        ManifestError: not upstream's shape (names the file and the key), a key that is
            not a task index, or a syscall that is not the task's.
    """
    path = Path(path)
    rel = where or str(path)
    data = load_results(path, rel)
    model = model or path.stem.rsplit("_", 1)[0]
    by_index = {t.task_id: t for t in tasks}
    lines, notes = [], []
    for key, entry in sorted(data.items(), key=lambda kv: int(kv[0]) if kv[0].isdigit() else -1):
        if key not in by_index:
            raise ManifestError(f"{rel}: key {key!r} is not a task index (0..{len(tasks) - 1})")
        t = by_index[key]
        if not isinstance(entry, dict) or len(entry) != 1:
            raise ManifestError(f"{rel}: entry {key!r}: expected {{\"{t.syscall}\": [specs]}}")
        (name, specs), = entry.items()
        if specs == "Error!":
            notes.append(f"task {key} ({t.syscall}): the API call failed upstream ('Error!'): no spec")
            continue
        if name != t.syscall:
            raise ManifestError(f"{rel}: entry {key!r} is for {name!r}, but task {key} is {t.syscall!r}")
        if not isinstance(specs, list) or not all(isinstance(s, str) for s in specs):
            raise ManifestError(f"{rel}: entry {key!r}: expected a list of spec strings")
        if not specs:
            notes.append(f"task {key} ({t.syscall}): no spec (no ```python block in the model's answer)")
        for j, spec in enumerate(specs):
            meta = {"source": rel, "upstream_key": key, "syscall": t.syscall}
            if model in UPSTREAM_MODELS:
                meta["api_model"] = UPSTREAM_MODELS[model]
            lines.append({"task_id": key, "model": model, "sample": j, "output": spec, "mode": "spec", "meta": meta})
    return lines, notes


def write_predictions(lines: list[dict], path: str | Path) -> None:
    """Validate every line (schemas/predictions.schema.json) and write the JSONL file
    atomically. Raises ValidationError naming ``path:line``."""
    from ...results import validate, write_text_atomic

    for i, obj in enumerate(lines, 1):
        validate("predictions", obj, f"{path}:{i}")
    write_text_atomic(Path(path), "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in lines))


def convert(fetched, output: str | Path, results: str | Path | None = None,
            model: str | None = None) -> tuple[int, list[str]]:
    """``verikit osvbench convert``: write the predictions of an upstream results JSON
    (``results``; default the pinned ``results/Spec/claude3sonnet_Spec.json`` of
    ``fetched``) to ``output``.

    Returns:
        ``(number of predictions lines written, notes)`` (notes: tasks without a spec).

    Raises:
        ManifestError: the results file is not upstream's shape; FileNotFoundError: no
            such file; ValidationError: a line fails the predictions schema.
    """
    tasks = load_benchmark(fetched).tasks
    src = Path(results) if results else path_of(fetched, RESULTS_JSON)
    lines, notes = convert_upstream_results(src, tasks, model=model, where=None if results else RESULTS_JSON)
    write_predictions(lines, output)
    return len(lines), notes
