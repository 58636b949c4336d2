"""One run: dataset -> tasks -> candidates -> jobs -> executor -> records -> report.

The runner drives every benchmark through the declared interface
(:class:`harness.plugin.Benchmark`); it never asks a benchmark module what it happens to
define. It writes into the output directory ``run.json`` (manifest), ``records.jsonl``
(one record per job) and ``report.json`` (metrics and comparison), each validated
against its schema before it is written. Re-running the same command into the same
directory resumes: jobs already recorded are not run again, and jobs in the result cache
are copied, not re-run.

:func:`reproduce` is ``verikit reproduce``: the benchmark's reproduction modes run as an
ordinary run (if it has any), then the benchmark compares with the paper; a rescoring-only
reproduction writes the same three files with no records.
"""

from __future__ import annotations

import contextlib
import os
import platform
import random
import socket
import sys
import tempfile
from typing import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import psutil
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from . import __version__, datasets, predictions as predictions_mod, registry, toolchains
from .executor import Executor, derive
from .model import Job, Limits, candidate_ref
from .plugin import Benchmark, Reproduction
from .progress import PlainProgress
from .report import build_report, canary_results, print_summary
from .results import (OUTPUTS, ROOT, SCHEMA_VERSION, OutputStore, RecordLog, ResultCache, RunDirBusy, record_identity,
                      record_outcome, run_dir_lock, write_json_atomic, write_sums, write_text_atomic)
from .sandbox import SandboxError


#: Set in runner images (``verikit images build NAME --runner``): the kit runs inside the
#: toolchain's image, so the host sandbox there is the container (``harness.batch``).
RUNNER_ENV = "VERIKIT_RUNNER"


class RunError(RuntimeError):
    """The run cannot start (bad arguments, missing data, bad predictions, no image)."""


@dataclass
class RunOptions:
    """Arguments of :func:`run` (the CLI's ``verikit run``).

    Attributes:
        benchmark: benchmark name; dataset: a registry name or a path to the user's own
            dataset (directory or YAML description); None: the benchmark's default.
        modes: modes to run (NTP4VC: proof languages); predictions: JSONL file (one mode
            only) or None.
        sandbox: sandbox name; parallel: jobs at once; limits: per-job limits.
        out: output directory; cache_dir: result cache (None: default); use_cache.
        data_dir: data cache; keep_going: record good prediction lines despite bad ones.
        seed: seed for bootstrap CIs and for a benchmark's own randomness (Dafny intent's
            mutants; recorded); command: argv recorded in run.json.
        task_ids: run only these tasks (None: all); unknown ids are an error. Canaries run
            on their own fixed tasks whatever this selects.
        sample: run ``sample`` tasks drawn with ``seed`` by the benchmark
            (:meth:`harness.plugin.Benchmark.sample`) instead; recorded in run.json.
    """

    benchmark: str = ""
    dataset: str | None = None
    modes: list[str] = field(default_factory=list)
    predictions: str | None = None
    sandbox: str = "host"
    parallel: int = 1
    limits: Limits = field(default_factory=Limits)
    out: Path = Path("out")
    cache_dir: Path | None = None
    use_cache: bool = True
    data_dir: Path | None = None
    keep_going: bool = False
    seed: int = 0
    command: list[str] = field(default_factory=list)
    progress: bool = True
    task_ids: list[str] | None = None
    sample: int | None = None


def published_of(bench: Benchmark) -> dict:
    """report.json's ``published``: the benchmark's figures
    (:meth:`~harness.plugin.Benchmark.published`), or for a benchmark without any, just
    its paper as cited."""
    paper = bench.paper()
    return bench.published() or {"source": {"paper": paper.reference if paper else "no paper recorded"},
                                  "figures": []}


def git_state(root: Path = ROOT) -> tuple[str | None, bool | None]:
    """``(HEAD commit, dirty)`` of the kit's checkout, read with dulwich (no process
    started): dirty when a tracked file differs from HEAD or the index, or an untracked
    file that .gitignore does not ignore exists. ``(None, None)`` outside a git checkout."""
    try:
        from dulwich import porcelain
        from dulwich.repo import Repo

        with Repo(str(root)) as repo:
            commit = repo.head().decode()
            status = porcelain.status(repo, untracked_files="normal")
        staged = any(status.staged[k] for k in ("add", "delete", "modify"))
        return commit, bool(staged or status.unstaged or status.untracked)
    except Exception:  # noqa: BLE001  (no checkout, no dulwich, a repo dulwich cannot read: unknown)
        return None, None


def host_info() -> dict:
    """Hostname, platform, Python version, CPU count and memory (GiB) of this machine."""
    return {"hostname": socket.gethostname(), "platform": platform.platform(), "python": sys.version.split()[0],
            "cpus": os.cpu_count() or 1, "memory_gb": round(psutil.virtual_memory().total / 2**30, 1)}


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def open_dataset(bench: Benchmark, spec: str | None, data_dir: Path | None = None):
    """The data of a run: a registry dataset of ``bench`` by name, or the user's own
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
            from .datasets import local

            return local.open_dataset(Path(name))
    except datasets.DatasetError as exc:
        raise RunError(str(exc)) from exc
    raise RunError(f"dataset {name!r} is neither a {bench.name} dataset ({', '.join(bench.datasets)}) "
                   "nor an existing file or directory")


@dataclass
class _Plan:
    """Everything a run needs before its first job: the benchmark, its data, the tasks
    selected, the predictions and the verifier."""

    bench: Benchmark
    fetched: object
    all_tasks: list
    tasks: list
    preds: object
    verifier: object


def plan_run(opts: RunOptions, console: Console) -> _Plan:
    """The benchmark, data, selected tasks, predictions and verifier of a run (nothing
    runs, no sandbox is opened; prediction lines skipped under ``keep_going`` are printed).

    Raises:
        RunError: unknown benchmark, mode or task id, unavailable data, bad predictions.
    """
    try:
        bench = registry.benchmark(opts.benchmark)
    except registry.UnknownName as exc:
        raise RunError(str(exc)) from exc
    opts.modes = list(dict.fromkeys(opts.modes or bench.default_modes or bench.modes))  # a mode given twice runs once
    bad = [m for m in opts.modes if m not in bench.modes]
    if bad:
        raise RunError(f"unknown {bench.mode_option}(s) {bad}; {bench.name} {bench.mode_option}s: "
                       f"{', '.join(bench.modes)}")
    if opts.predictions and len(opts.modes) != 1:
        raise RunError(f"--predictions needs exactly one --{bench.mode_option}")
    names = {bench.verifier_for(m) for m in opts.modes}
    if len(names) != 1:
        raise RunError(f"{bench.mode_option}s {opts.modes} use different verifiers ({', '.join(sorted(names))}); "
                       "run them separately")
    fetched = open_dataset(bench, opts.dataset, opts.data_dir)
    try:
        all_tasks = bench.load_tasks(fetched)
    except ValueError as exc:  # a task file the benchmark cannot read (names file:line)
        raise RunError(str(exc)) from exc
    tasks = all_tasks
    if opts.sample is not None:
        if opts.task_ids:
            raise RunError("--sample and --task cannot be combined")
        try:
            opts.task_ids = bench.sample(all_tasks, opts.modes[0], opts.sample, opts.seed)
        except ValueError as exc:
            raise RunError(f"--sample {opts.sample}: {exc}") from exc
    if opts.task_ids:
        unknown = sorted(set(opts.task_ids) - {t.task_id for t in all_tasks})
        if unknown:
            raise RunError(f"unknown task id(s) {unknown} in {fetched.dataset.name}")
        tasks = [t for t in all_tasks if t.task_id in set(opts.task_ids)]
    preds = None
    if opts.predictions:
        try:
            preds = predictions_mod.load(opts.predictions, {t.task_id for t in all_tasks}, mode=opts.modes[0],
                                         keep_going=opts.keep_going)
        except predictions_mod.PredictionsError as exc:
            raise RunError(str(exc)) from exc
        except FileNotFoundError as exc:
            raise RunError(f"{opts.predictions}: no such file") from exc
        for e in preds.errors:
            console.print(f"skipped {e}", markup=False, highlight=False, soft_wrap=True)
    return _Plan(bench, fetched, all_tasks, tasks, preds, registry.verifier(names.pop()))


def run(opts: RunOptions, console: Console | None = None) -> tuple[dict, dict, int]:
    """Run a benchmark and write the run directory ``opts.out``.

    Returns:
        ``(report, manifest, exit_code)``; exit code 0 = complete, 3 = canaries failed,
        4 = infra errors remain after retries, 5 = some prediction lines were bad
        (``--keep-going``: the good ones are recorded).

    Raises:
        RunError: bad arguments, unknown task ids / malformed predictions (without
            ``keep_going``), data not available, no sandbox or image (the message says
            what to do).
    """
    console = console or Console(stderr=True)
    started = start_run()
    plan = plan_run(opts, console)
    with _locked(opts.out):
        report, manifest, code, _ = _execute(opts, console, started, plan)
        write_report_html(opts.out, console)
    return report, manifest, code


@contextlib.contextmanager
def _locked(out: Path):
    """:func:`harness.results.run_dir_lock` with its failures as :class:`RunError`."""
    try:
        with run_dir_lock(out):
            yield
    except RunDirBusy as exc:
        raise RunError(str(exc)) from None
    except OSError as exc:
        if exc.filename is None or not str(exc.filename).startswith(str(out)):
            raise
        raise RunError(f"--out {out}: cannot be used as a run directory: {exc.strerror}") from None


def _execute(opts: RunOptions, console: Console, started: _Start, plan: _Plan) -> tuple[dict, dict, int, list[dict]]:
    """The run of ``plan`` in its sandbox: :func:`run`'s result plus the run's records."""
    with open_sandbox(opts, plan, lambda m: console.print(m, markup=False, highlight=False)) as (sandbox, image):
        return _run_in(opts, console, started, plan, sandbox, image)


@contextlib.contextmanager
def open_sandbox(opts: RunOptions, plan: _Plan, log):
    """The run's sandbox and its image (None on the host) for the ``with`` block, closed
    after it; ``log`` gets the image build's messages.

    Raises:
        RunError: a container-only benchmark on the host, or the sandbox or image cannot
            be had (the message says what to do).
    """
    bench, image = plan.bench, None
    try:
        if opts.sandbox == "host" and bench.container_only and not os.environ.get(RUNNER_ENV):
            raise RunError(f"{bench.name} runs only in the container sandbox (--sandbox container): "
                           f"its toolchain is not installed on hosts")
        if opts.sandbox == "container":
            image = job_image(bench, opts.modes[0], plan.fetched, log)
        sandbox = registry.sandbox(opts.sandbox, toolchain=plan.verifier.toolchain, slots=opts.parallel, image=image)
    except SandboxError as exc:
        raise RunError(str(exc)) from exc
    try:
        yield sandbox, image
    finally:
        sandbox.close()


def job_image(bench: Benchmark, mode: str, fetched, log: Callable[[str], None] = print, *,
              build: bool = True) -> str | None:
    """The tag of the derived image ``mode``'s jobs run in (the benchmark's
    :meth:`~harness.plugin.Benchmark.derived_images`), built when missing (``build``), or
    None when they run in the verifier's toolchain image.

    Raises:
        harness.sandbox.SandboxError: no engine, the image cannot be built (its base is
            missing: the spec's ``base_hint`` says how to get it), or ``build=False`` and it
            is not built.
    """
    if mode not in bench.derived_images().values():
        return None
    from .sandbox import images
    from .sandbox.container import EngineUnavailable

    spec = bench.derived_image_spec(mode, fetched, images.fingerprint)
    try:
        return images.build_derived(spec, log=log) if build else images.resolve_derived(spec)
    except EngineUnavailable as exc:
        raise SandboxError(f"{exc}" + (f"\n{spec['base_hint']}" if spec.get("base_hint") else "")) from None


def probe_toolchain(opts: RunOptions, plan: _Plan, sandbox):
    """The toolchain probed in ``sandbox`` and the files the verifier ships with every job."""
    probed = toolchains.probe(plan.verifier.toolchain, sandbox, flavor="host" if opts.sandbox == "host" else "debian")
    return probed, plan.verifier.prepare(sandbox, probed)


def build_jobs(opts: RunOptions, plan: _Plan, probed, verifier) -> tuple[list, dict]:
    """The run's jobs (their keys depend on ``probed``, the toolchain they run with) and
    the canaries' expected verdicts ``{(mode, model): verdicts}``. Raises RunError."""
    bench = plan.bench
    by_id = {t.task_id: t for t in plan.all_tasks + bench.canary_tasks(plan.all_tasks)}
    selected = {t.task_id for t in plan.tasks}
    # a user's local dataset has no revision: its content address stands for one
    ds_ref = {"name": plan.fetched.dataset.name,
              "revision": plan.fetched.dataset.source.revision or f"sha256:{plan.fetched.provenance()['files_sha256']}"}
    jobs, expected = [], {}
    code_sha256 = registry.verdict_code_sha256(bench, verifier)  # in every key: no result of other code is reused
    for mode in opts.modes:
        options = dict(verifier.options(probed, smoke=bench.smoke_tests(mode), cpus=opts.limits.cpus),
                       kit_version=__version__, verdict_code_sha256=code_sha256)
        ctx = bench.context(plan.fetched, plan.all_tasks, mode, verifier, opts.seed)
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
    goes on, issue 26); on the gold or a canary it is the task's or the kit's problem.

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


def _run_in(opts: RunOptions, console: Console, started: _Start, plan: _Plan, sandbox,
            image) -> tuple[dict, dict, int, list[dict]]:
    bench, verifier = plan.bench, plan.verifier
    probed, shared = probe_toolchain(opts, plan, sandbox)
    jobs, expected = build_jobs(opts, plan, probed, verifier)

    opts.out.mkdir(parents=True, exist_ok=True)
    log = RecordLog(opts.out / "records.jsonl")
    for problem in log.set_aside:
        console.print(f"[yellow]warning:[/] {problem}: set aside in {log.rejected_path.name}; its job runs again")
    cache = ResultCache(opts.cache_dir) if opts.use_cache else None
    executor = Executor(verifier, sandbox, probed, shared_files=shared, limits=opts.limits,
                        parallel=opts.parallel, cache=cache)
    keys = [j.key(probed, opts.limits) for j in jobs]
    label = f"{bench.name} {'+'.join(opts.modes)}"
    show = opts.progress and console.is_terminal
    # no terminal (a log, CI): a plain line every 30 s instead of a live bar that shows nothing
    plain = PlainProgress(len(set(keys)), console, label) if opts.progress and not show else None
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, disable=not show, transient=True) as bar, (plain or contextlib.nullcontext()):
        tid = bar.add_task(label, total=len(jobs))
        instant = [0]  # resumed + cached so far: those records took no time (left out of the ETA)

        def progress(rec: dict) -> None:
            bar.advance(tid)
            if plain is not None:
                seen = executor.stats.resumed + executor.stats.cached
                plain.update(rec, instant=seen > instant[0])
                instant[0] = seen

        try:
            records = executor.run(jobs, log, bench.judge, progress=progress)
        finally:
            stale = set(log.records) - set(keys)
            for k in stale:  # records of other commands: kept in the cache, not in this run
                log.records.pop(k)
            log.finalize(keys)
            log.close()
            for problem in (cache.problems if cache else []):
                console.print(f"[yellow]warning:[/] {problem}")

    notes = []
    if log.set_aside:
        notes.append(f"{len(log.set_aside)} line(s) of records.jsonl were not valid records; they were set aside in "
                     f"{log.rejected_path.name} and their jobs ran again: {log.set_aside[0]}")
    if cache and cache.problems:
        notes.append(f"result cache: {len(cache.problems)} problem(s), the jobs concerned re-ran or their results "
                     f"were not stored: {cache.problems[0]}")
    if stale:
        notes.append(f"{len(stale)} record(s) of another command were in {opts.out}/records.jsonl; "
                     "they were dropped from it (still in the result cache)")
    stats = executor.stats.to_json()
    image_ref = {"ref": image, "id": getattr(sandbox, "image_digest", None)} if image else None
    report, manifest, code = write_run(opts, console, started, plan, probed, records, expected, stats,
                                       notes=notes, image=image_ref)
    return report, manifest, code, records


def write_run(opts: RunOptions, console: Console, started: _Start, plan: _Plan, probed, records: list[dict],
              expected: dict, stats: dict, *, notes: list[str] = (), image: dict | None = None) -> tuple[dict, dict, int]:
    """Write ``report.json``, ``run.json``, the benchmark's run files and ``SHA256SUMS``
    (last) into ``opts.out`` from a run's records (``records.jsonl`` is already there),
    and print the summary. Shared by local runs and :mod:`harness.batch` (collect).

    Args:
        probed: the :class:`~harness.toolchains.ProbedToolchain` the jobs ran with;
            expected: the canaries' expected verdicts (from :func:`plan_jobs`); stats: the
            run's counts (:class:`harness.executor.RunStats` JSON); notes: run-level notes
            for the report; image: ``{"ref", "id"}`` of the image jobs ran in, or None.

    Returns:
        ``(report, manifest, exit_code)`` as :func:`run`.
    """
    bench = plan.bench
    by_id = {t.task_id: t for t in plan.all_tasks}
    canaries = canary_results(records, expected)
    notes = ["toolchain drift from the published pins: "
             + (", ".join(f"{d['tool']} {d['probed'] or 'missing'} vs {d['published']}" for d in probed.drift) or "none")
             + ("; this is NOT a bit-exact reproduction" if not probed.pin_match else ""), *notes]
    notes += bench.notes(records, opts.modes)
    comparison = bench.compare(records, by_id, plan.fetched)
    if not comparison and plan.fetched.dataset.source.kind == "local":
        notes.append(f"{plan.fetched.dataset.name} is a local dataset with no published verdicts to compare with: "
                     "the report has no published-vs-reproduced comparison")
    report = build_report(bench.name, plan.fetched.dataset.name, records, comparison=comparison,
                          canaries=canaries, seed=opts.seed, notes=notes, published=published_of(bench))
    report["sections"] = bench.report_sections(records, plan.tasks, opts.modes, seed=opts.seed)
    status, code = "complete", 0
    if plan.preds is not None and plan.preds.errors:
        status, code = "partial", 5
    if stats["infra_error"]:
        status, code = "partial", 4
    if not canaries["ok"]:
        code = 3
    manifest = _manifest(opts, started, plan, status, stats)
    manifest.update({
        "toolchains": [probed.to_json()],
        "image": image,
        "adaptation": bench.adaptation(opts.modes[0]),
        "jobs_parallel": opts.parallel,
    })
    for name, text in bench.run_files(records, plan.tasks).items():
        write_text_atomic(opts.out / name, text)
    write_json_atomic(opts.out / "report.json", report, kind="report")
    write_json_atomic(opts.out / "run.json", manifest, kind="run")
    write_sums(opts.out)  # last: the run directory is complete
    print_summary(report, console)
    console.print(f"jobs: {stats['jobs']} (ran {stats['ran']}, cached {stats['cached']}, resumed {stats['resumed']},"
                  f" infra errors {stats['infra_error']}); wrote {opts.out}/run.json, records.jsonl, report.json")
    return report, manifest, code


def write_report_html(out: Path, console: Console) -> Path | None:
    """Write ``out/report.html`` (:func:`harness.htmlreport.write_html`) from a finished
    run directory, and say so. It is a view of the run's files, not one of them (not in
    SHA256SUMS): when it cannot be rendered the run stays as written, a warning names the
    reason, and ``verikit report OUT --html FILE`` can render it later. Returns its path,
    or None when it was not written."""
    from .htmlreport import write_html

    target = Path(out) / "report.html"
    try:
        write_html([out], target)
    except Exception as exc:  # noqa: BLE001 - the run is complete; its HTML view is not essential
        console.print(f"[yellow]warning:[/] {target} not written ({type(exc).__name__}: {exc}); the run's files are "
                      f"complete; render it later with: verikit report {out} --html {target}", highlight=False)
        return None
    console.print(f"wrote {target}", markup=False, highlight=False)
    return target


@dataclass(frozen=True)
class _Start:
    """When a run started and the kit's git state then (``(commit, dirty)``: what ran,
    even if the checkout changes while it runs)."""

    at: str
    git: tuple


def start_run() -> _Start:
    """Now, and the kit's git state now (a run records what ran, read at its start)."""
    return _Start(at=_now(), git=git_state())


def _manifest(opts: RunOptions, started: _Start, plan: _Plan, status: str, stats: dict) -> dict:
    commit, dirty = started.git
    return {
        "schema_version": SCHEMA_VERSION,
        "kit": {"version": __version__, "git_commit": commit, "git_dirty": dirty},
        "command": opts.command or sys.argv,
        "started_at": started.at,
        "finished_at": _now(),
        "host": host_info(),
        "benchmark": plan.bench.name,
        "benchmark_version": plan.bench.version,
        "modes": list(opts.modes),
        "dataset": plan.fetched.provenance(),
        "predictions": plan.preds.manifest() if plan.preds else None,
        "toolchains": [],
        "sandbox": opts.sandbox,
        "image": None,
        "adaptation": None,
        "limits": opts.limits.to_json(),
        "jobs_parallel": opts.parallel,
        "seeds": {"bootstrap": opts.seed, **({"benchmark": opts.seed} if plan.bench.seeded else {}),
                  **({"sample": opts.seed} if opts.sample is not None else {})},
        "task_selection": ({"sample": opts.sample, "seed": opts.seed, "task_ids": list(opts.task_ids)}
                           if opts.sample is not None else {"task_ids": list(opts.task_ids)} if opts.task_ids else None),
        "status": status,
        "counts": stats,
        "input_errors": [e.to_json() for e in plan.preds.errors] if plan.preds else [],
    }


def reproduce(opts: RunOptions, console: Console | None = None) -> tuple[Reproduction, int]:
    """``verikit reproduce``: the paper's figures vs the kit's, written as a run directory.

    A benchmark with reproduction modes first runs them (gold, bundled candidates and
    canaries, exactly as :func:`run`) into ``opts.out``; then the benchmark compares with
    its published figures. A rescoring-only reproduction (the published per-item files
    are rescored, no tool runs) writes run.json, an empty records.jsonl and report.json.
    report.json gets a ``reproduction`` section (figures, notes, summary); extra files the
    benchmark produces (e.g. OSVBench's upstream-format log) are written beside them.

    Returns:
        ``(reproduction, exit_code)``: 0 all reproducible figures equal, 1 some differ,
        or the run's own exit code (3 canaries, 4 infra errors) when it is not 0.

    Raises:
        RunError: as :func:`run`.
    """
    console = console or Console(stderr=True)
    try:
        bench = registry.benchmark(opts.benchmark)
    except registry.UnknownName as exc:
        raise RunError(str(exc)) from exc
    modes = bench.reproduce_modes()
    with _locked(opts.out):
        return _reproduce_locked(opts, console, bench, modes)


def _reproduce_locked(opts: RunOptions, console: Console, bench, modes) -> tuple[Reproduction, int]:
    """:func:`reproduce` with the run directory locked."""
    if modes:
        opts.modes = list(modes)
        opts.predictions = None
        plan = plan_run(opts, console)
        report, manifest, code, records = _execute(opts, console, start_run(), plan)
        rep = bench.reproduce(plan.fetched, {"report": report, "records": records, "tasks": plan.all_tasks})
    else:
        started = start_run()
        opts.modes = ["reproduce"]
        plan = _Plan(bench, open_dataset(bench, opts.dataset, opts.data_dir), [], [], None, None)
        rep = bench.reproduce(plan.fetched, None)
        RecordLog(opts.out / "records.jsonl").close()
        report = build_report(bench.name, plan.fetched.dataset.name, [], comparison=[],
                              canaries={"ok": True, "results": []}, seed=opts.seed, notes=[],
                              published=published_of(bench))
        report["sections"] = {}
        manifest = _manifest(opts, started, plan, "complete", {"jobs": 0, "ran": 0, "cached": 0, "resumed": 0,
                                                               "infra_error": 0, "verifier_runs": 0})
        manifest["sandbox"] = "none (rescoring of published files)"
        code = 0
    report["reproduction"] = rep.to_json()
    report["sections"].update(rep.sections)
    report["notes"] += rep.notes
    for name, text in rep.files.items():
        write_text_atomic(opts.out / name, text)
    write_json_atomic(opts.out / "report.json", report, kind="report")
    if not modes:
        write_json_atomic(opts.out / "run.json", manifest, kind="run")
    write_sums(opts.out)  # last: the reproduction's report is final
    write_report_html(opts.out, console)
    if code == 0 and rep.summary()["differs"]:
        code = 1
    return rep, code


def recheck(opts: RunOptions, records: list[dict], n: int, *, seed: int = 0,
            console: Console | None = None) -> tuple[list[dict], list[str]]:
    """Re-run ``n`` records of a run, drawn with ``seed``, with the real verifier and
    compare: the independent check of a run directory (an artifact reviewer's, a Hub
    reader's). ``opts`` are the run's own options (from its run.json ``command``); the
    result cache is not used and nothing is written to the run directory.

    Returns:
        ``(rechecked records, differences)``: one message per record that the run's
        command does not make (unknown task id, model or sample), whose task hash is not
        the dataset's, or (the N drawn) whose verdict or goal counts differ on re-running.

    Raises:
        RunError: as :func:`run` (missing data, sandbox or predictions).
    """
    console = console or Console(stderr=True)
    plan = plan_run(opts, console)
    drawn = random.Random(seed).sample(records, min(n, len(records)))

    def job_identity(j: Job) -> tuple:  # as record_identity reads the job's record
        return j.mode, j.task_id, j.candidate["model"], j.candidate["sample"], j.candidate["origin"]

    with open_sandbox(opts, plan, lambda m: None) as (sandbox, _):
        probed, shared = probe_toolchain(opts, plan, sandbox)
        jobs, _ = build_jobs(opts, plan, probed, plan.verifier)
        by_id = {job_identity(j): j for j in jobs}
        differences = []
        for r in records:  # every record: a job of this command, on the dataset's task as it is
            j = by_id.get(record_identity(r))
            if j is None:
                differences.append(f"{r['mode']} {r['task_id']} {r['candidate']['model']}: the run's command does "
                                   f"not make this job (unknown task, model or sample)")
            elif j.task_sha256 != r["task_sha256"]:
                differences.append(f"{r['mode']} {r['task_id']} {r['candidate']['model']}: task hash "
                                   f"{r['task_sha256'][:12]} is not the dataset's {j.task_sha256[:12]}")
        wanted = [by_id[record_identity(r)] for r in drawn if record_identity(r) in by_id]
        executor = Executor(plan.verifier, sandbox, probed, shared_files=shared, limits=opts.limits,
                            parallel=opts.parallel, cache=None)
        with tempfile.TemporaryDirectory(prefix="verikit-recheck-") as tmp:
            log = RecordLog(Path(tmp) / "records.jsonl")
            try:
                again = executor.run(wanted, log, plan.bench.judge)
            finally:
                log.close()
    now = {record_identity(r): r for r in again}
    for r in drawn:
        a = now.get(record_identity(r))
        if a is None:
            continue
        before, after = record_outcome(r), record_outcome(a)
        if before != after:
            differences.append(f"{r['mode']} {r['task_id']} {r['candidate']['model']}: recorded {before['verdict']} "
                               f"{before['goals.proved']}/{before['goals.total']}, re-run {after['verdict']} "
                               f"{after['goals.proved']}/{after['goals.total']} ({a['reason']})")
    return again, differences


def rejudge(opts: RunOptions, records: list[dict], run_dir: Path,
            console: Console | None = None) -> tuple[int, int, list[str]]:
    """Re-derive every record's verdict from the tool output it names, with the current
    parser and judge, without running a tool (``verikit validate``): a verdict edited in
    either direction is found even when records, report and sums were fixed up to match.

    ``opts`` are the run's own options (its run.json ``command``): the jobs are re-planned
    from the dataset, and each record is re-judged as :func:`harness.executor.derive`
    judges a fresh run (same toolchain: the record's probed toolchain, checked by its
    fingerprint).

    Returns:
        ``(re-judged, legacy, differences)``: the records re-judged; the records made
        before verikit kept tool outputs (schema 1.0: checked against their goal counts
        only); one message per record that the run's command does not make, whose output
        is missing or edited, or whose verdict or goal counts differ from the re-derived.

    Raises:
        RunError: as :func:`plan_run` (missing data, bad predictions).
    """
    console = console or Console(stderr=True)
    plan = plan_run(opts, console)
    outputs = OutputStore(Path(run_dir) / OUTPUTS)
    groups: dict[str, list[dict]] = {}
    for r in records:
        groups.setdefault(r["toolchain"].get("fingerprint", ""), []).append(r)
    checked, legacy, differences = 0, 0, []

    def job_identity(j: Job) -> tuple:
        return j.mode, j.task_id, j.candidate["model"], j.candidate["sample"], j.candidate["origin"]

    for recs in groups.values():
        try:
            probed = toolchains.ProbedToolchain.from_json(recs[0]["toolchain"])
        except ValueError as exc:
            differences += [f"{_who(r)}: {exc}" for r in recs]
            continue
        jobs, _ = build_jobs(opts, plan, probed, plan.verifier)
        by_id = {job_identity(j): j for j in jobs}
        for r in recs:
            j = by_id.get(record_identity(r))
            if j is None:
                differences.append(f"{_who(r)}: the run's command does not make this job (unknown task, model or sample)")
                continue
            out = r.get("tool_output")
            if not out and r.get("attempts", 0) > 0:
                if r.get("schema_version") == "1.0":
                    legacy += 1
                else:
                    differences.append(f"{_who(r)}: no tool output recorded, its verdict cannot be re-derived")
                continue
            try:
                proc = outputs.get(out["sha256"]) if out else None
            except (OSError, ValueError) as exc:
                differences.append(f"{_who(r)}: tool output {out['sha256'][:12]}: {exc}")
                continue
            verdict, reason, result = derive(plan.verifier, j, proc, plan.bench.judge)
            goals = result.goals.to_json() if result and result.goals else None
            checked += 1
            if verdict != r["verdict"] or goals != r.get("goals"):
                g = r.get("goals") or {}
                differences.append(f"{_who(r)}: recorded {r['verdict']} {g.get('proved')}/{g.get('total')}, its tool "
                                   f"output gives {verdict} {(goals or {}).get('proved')}/{(goals or {}).get('total')} "
                                   f"({reason[:200]})")
    return checked, legacy, differences


def _who(r: dict) -> str:
    return f"{r['mode']} {r['task_id']} {r['candidate']['model']} #{r['candidate']['sample']}"
