"""A run's plan: the benchmark, its data, the tasks selected, the predictions and the
verifier (:func:`plan_run`, :class:`Plan`), and its jobs (:func:`build_jobs`); nothing
runs and no sandbox is opened here."""

from __future__ import annotations

import os
import platform
import socket
import sys
from dataclasses import dataclass
from pathlib import Path

import psutil
from rich.console import Console

from .. import __version__, datasets, registry
from .. import predictions as predictions_mod
from ..model import Job, candidate_ref, utc_now
from ..plugin import Benchmark
from ..resources import git_state
from ..runspec import RunSpec


class RunError(RuntimeError):
    """The run cannot start (bad arguments, missing data, bad predictions, no image)."""


def published_of(bench: Benchmark) -> dict:
    """report.json's ``published``: the benchmark's figures
    (:meth:`~harness.plugin.Benchmark.published`), or for a benchmark without any, just
    its paper as cited."""
    paper = bench.paper()
    return bench.published() or {"source": {"paper": paper.reference if paper else "no paper recorded"},
                                  "figures": []}


def host_info() -> dict:
    """Hostname, platform, Python version, CPU count and memory (GiB) of this machine."""
    return {"hostname": socket.gethostname(), "platform": platform.platform(), "python": sys.version.split()[0],
            "cpus": os.cpu_count() or 1, "memory_gb": round(psutil.virtual_memory().total / 2**30, 1)}



def open_dataset(bench: Benchmark, spec: str | None, data_dir: Path | None = None):
    """The data of a run: a pinned dataset of ``bench`` by name, or the user's own
    dataset at a path (a directory in one of the benchmark's formats, or a YAML file
    describing it; see :mod:`harness.datasets.local`).

    Raises:
        RunError: neither a dataset of this benchmark nor an existing path, or the data
            cannot be had (the message says how to provide it).
    """
    name = spec or bench.default_dataset
    try:
        if name in bench.datasets:
            return datasets.fetch(name, data_dir=data_dir)
        if Path(name).exists():
            from ..datasets import local

            return local.open_dataset(Path(name))
    except datasets.DatasetError as exc:
        raise RunError(str(exc)) from exc
    raise RunError(f"dataset {name!r} is neither a {bench.name} dataset ({', '.join(bench.datasets)}) "
                   "nor an existing file or directory")


@dataclass(frozen=True)
class Plan:
    """Everything a run needs before its first job (:func:`plan_run`): what the spec left
    to defaults is resolved here, never in the spec.

    Attributes:
        given: the run's spec as given (:class:`~harness.runspec.RunSpec`); :meth:`spec`
            is it resolved. bench: the benchmark; fetched: its data (a :class:`harness.datasets.Fetched` or a
            user's local dataset); all_tasks: every task of the data; tasks: the selected
            ones; preds: the loaded predictions (:class:`harness.predictions.Predictions`)
            or None; verifier: the modes' verifier (None for a rescoring-only reproduction).
        modes: the resolved modes (given, else the benchmark's default; each once).
        task_ids: the resolved task selection (given, or drawn by ``sample``); None: all.
    """

    given: RunSpec
    bench: Benchmark
    fetched: object
    all_tasks: list
    tasks: list
    preds: object
    verifier: object
    modes: tuple[str, ...] = ()
    task_ids: tuple[str, ...] | None = None

    def spec(self) -> RunSpec:
        """The spec resolved: the plan's modes and task ids (a ``sample`` is recorded as
        the task ids it drew) and the predictions' sha256 (run.json ``spec``; re-planning
        it makes the same jobs)."""
        return self.given.replace(modes=self.modes, task_ids=self.task_ids,
                                  sample=None if self.task_ids is not None else self.given.sample,
                                  predictions_sha256=self.preds.sha256 if self.preds is not None else None)


def plan_run(spec: RunSpec, console: Console, *, data_dir: Path | None = None) -> Plan:
    """The benchmark, data, selected tasks, predictions and verifier of the run ``spec``
    (nothing runs, no sandbox is opened; prediction lines skipped under ``keep_going`` are
    printed). ``data_dir``: the data cache (the run's settings; None: the default). The
    spec is not changed: the resolved modes and task ids are the plan's.

    Raises:
        RunError: unknown benchmark, mode or task id, unavailable data, bad predictions,
            predictions whose sha256 is not ``spec.predictions_sha256`` (when given).
    """
    try:
        bench = registry.benchmark(spec.benchmark)
    except registry.UnknownName as exc:
        raise RunError(str(exc)) from exc
    modes = spec.modes or tuple(dict.fromkeys(bench.default_modes or bench.modes))
    bad = [m for m in modes if m not in bench.modes]
    if bad:
        raise RunError(f"unknown {bench.mode_option}(s) {bad}; {bench.name} {bench.mode_option}s: "
                       f"{', '.join(bench.modes)}")
    if spec.predictions and len(modes) != 1:
        raise RunError(f"--predictions needs exactly one --{bench.mode_option}")
    names = {bench.verifier_for(m) for m in modes}
    if len(names) != 1:
        raise RunError(f"{bench.mode_option}s {list(modes)} use different verifiers ({', '.join(sorted(names))}); "
                       "run them separately")
    fetched = open_dataset(bench, spec.dataset, data_dir)
    try:
        all_tasks = bench.load_tasks(fetched)
    except ValueError as exc:  # a task file the benchmark cannot read (names file:line)
        raise RunError(str(exc)) from exc
    tasks, task_ids = all_tasks, spec.task_ids
    if spec.sample is not None:
        if spec.task_ids:
            raise RunError("--sample and --task cannot be combined")
        try:
            task_ids = tuple(bench.sample(all_tasks, modes[0], spec.sample, spec.seed))
        except ValueError as exc:
            raise RunError(f"--sample {spec.sample}: {exc}") from exc
    if task_ids:
        unknown = sorted(set(task_ids) - {t.task_id for t in all_tasks})
        if unknown:
            raise RunError(f"unknown task id(s) {unknown} in {fetched.dataset.name}")
        tasks = [t for t in all_tasks if t.task_id in set(task_ids)]
    preds = None
    if spec.predictions:
        try:
            preds = predictions_mod.load(spec.predictions, {t.task_id for t in all_tasks}, mode=modes[0],
                                         keep_going=spec.keep_going)
        except predictions_mod.PredictionsError as exc:
            raise RunError(str(exc)) from exc
        except FileNotFoundError as exc:
            raise RunError(f"{spec.predictions}: no such file") from exc
        for e in preds.errors:
            console.print(f"skipped {e}", markup=False, highlight=False, soft_wrap=True)
    if preds is not None and spec.predictions_sha256 and preds.sha256 != spec.predictions_sha256:
        raise RunError(f"{spec.predictions}: sha256 {preds.sha256[:12]} is not the run's {spec.predictions_sha256[:12]} "
                       "(not the predictions the run scored)")
    return Plan(spec, bench, fetched, all_tasks, tasks, preds, registry.verifier(names.pop()), modes, task_ids or None)


def build_jobs(plan: Plan, probed, verifier) -> tuple[list, dict]:
    """The jobs of ``plan`` (their keys depend on ``probed``, the toolchain they run with)
    and the canaries' expected verdicts ``{(mode, model): verdicts}``. Raises RunError."""
    bench, spec = plan.bench, plan.given
    by_id = {t.task_id: t for t in plan.all_tasks + bench.canary_tasks(plan.all_tasks)}
    selected = {t.task_id for t in plan.tasks}
    # a user's local dataset has no revision: its content address stands for one
    ds_ref = {"name": plan.fetched.dataset.name,
              "revision": plan.fetched.dataset.source.revision or f"sha256:{plan.fetched.provenance()['files_sha256']}"}
    jobs, expected = [], {}
    code_sha256 = registry.verdict_code_sha256(bench, verifier)  # in every key: no result of other code is reused
    for mode in plan.modes:
        options = dict(verifier.options(probed, smoke=bench.smoke_tests(mode), cpus=spec.limits.cpus),
                       kit_version=__version__, verdict_code_sha256=code_sha256)
        ctx = bench.context(plan.fetched, plan.all_tasks, mode, verifier, spec.seed)
        if plan.preds is not None:  # --task selects among the predictions too
            cands = [c for c in plan.preds.candidates if c.task_id in selected]
        else:
            cands = [c for c in bench.gold_candidates(plan.tasks, mode) + bench.bundled_candidates(plan.fetched, mode)
                     if c.task_id in selected]
        for cand, verdicts in bench.canaries(plan.all_tasks, mode):
            cands.append(cand)
            expected[(mode, cand.model)] = verdicts
        jobs += [_job(bench, by_id[c.task_id], c, mode, options, ds_ref, ctx) for c in cands]
    return jobs, expected


def _job(bench: Benchmark, task, cand, mode: str, options: dict, ds_ref: dict, ctx) -> Job:
    """``bench.build_job`` for one candidate. An exception while reading a model's
    candidate makes that candidate's job ``invalid`` (a precheck with the reason: the run
    goes on); on the gold or a canary it is the task's or the kit's problem.

    Raises:
        RunError: the gold's or a canary's job cannot be built (e.g. a task file the
            benchmark cannot read: the message names file:line).
    """
    try:
        return bench.build_job(task, cand, mode, options, ds_ref, ctx)
    except Exception as exc:  # noqa: BLE001  # one odd candidate must not stop the run
        if cand.origin in ("gold", "canary"):
            raise RunError(str(exc)) from exc
        return Job(benchmark=bench.name, benchmark_version=bench.version, dataset=ds_ref, mode=mode,
                   task_id=task.task_id, task_sha256=task.sha256, candidate=candidate_ref(cand), files={},
                   options=options, precheck=("invalid", f"the kit could not read this candidate "
                                                         f"({type(exc).__name__}: {str(exc)[:300]}): counted as invalid"))


@dataclass(frozen=True)
class Start:
    """When a run started and the kit's git state then (:func:`start_run`): what ran, even
    if the checkout changes while it runs.

    Attributes:
        at: ISO 8601 UTC time; git: ``(HEAD commit, dirty)`` as :func:`git_state`.
    """

    at: str
    git: tuple[str | None, bool | None]


def start_run() -> Start:
    """Now, and the kit's git state now (a run records what ran, read at its start)."""
    return Start(at=utc_now(), git=git_state())

