"""One run: dataset -> tasks -> candidates -> jobs -> executor -> records -> report.

Writes into the output directory ``run.json`` (manifest), ``records.jsonl`` (one record
per job) and ``report.json`` (metrics and comparison), each validated against its schema
before it is written. Re-running the same command into the same directory resumes: jobs
already recorded are not run again, and jobs in the result cache are copied, not re-run.
"""

from __future__ import annotations

import inspect
import os
import platform
import socket
import sys
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import psutil
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from . import __version__, datasets, predictions as predictions_mod, toolchains
from .benchmarks import get_benchmark
from .executor import Executor
from .report import build_report, canary_results, compare_gold, compare_study, print_summary
from .results import ROOT, SCHEMA_VERSION, RecordLog, ResultCache, write_json_atomic
from .sandbox import Limits, SandboxError, get_sandbox
from .verifiers import get_verifier


class RunError(RuntimeError):
    """The run cannot start (bad arguments, missing data, bad predictions)."""


@dataclass
class RunOptions:
    """Arguments of :func:`run` (the CLI's ``verikit run``).

    Attributes:
        benchmark: benchmark name; dataset: dataset name (None: the benchmark's default).
        modes: modes to run; predictions: JSONL file (one mode only) or None.
        sandbox: sandbox name; parallel: jobs at once; limits: per-job limits.
        out: output directory; cache_dir: result cache (None: default); use_cache.
        data_dir: data cache; keep_going: record good prediction lines despite bad ones.
        seed: seed for bootstrap CIs and for a benchmark's own randomness (Dafny intent's
            mutants; recorded); command: argv recorded in run.json.
        task_ids: run only these tasks (None: all); unknown ids are an error.
    """

    benchmark: str = "casp"
    dataset: str | None = None
    modes: list[str] = field(default_factory=lambda: ["gold"])
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


def git_commit() -> str | None:
    """The checkout's HEAD commit read from ``.git`` (no process started), or None."""
    git = ROOT / ".git"
    try:
        head = (git / "HEAD").read_text().strip()
        if not head.startswith("ref: "):
            return head
        ref = head[5:]
        if (git / ref).exists():
            return (git / ref).read_text().strip()
        for line in (git / "packed-refs").read_text().splitlines():
            if line.endswith(" " + ref):
                return line.split()[0]
    except OSError:
        return None
    return None


def host_info() -> dict:
    """Hostname, platform, Python version, CPU count and memory of this machine."""
    return {"hostname": socket.gethostname(), "platform": platform.platform(), "python": sys.version.split()[0],
            "cpus": os.cpu_count() or 1, "memory_gb": round(psutil.virtual_memory().total / 2**30, 1)}


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def run(opts: RunOptions, console: Console | None = None) -> tuple[dict, dict, int]:
    """Run a benchmark and write the run directory.

    Returns:
        ``(report, manifest, exit_code)``; exit code 0 = complete, 3 = canaries failed,
        4 = infra errors remain after retries, 5 = some prediction lines were bad
        (``--keep-going``: the good ones are recorded).

    Raises:
        RunError: bad arguments, unknown task ids / malformed predictions (without
            ``keep_going``), data not available (message says how to provide it).
    """
    console = console or Console(stderr=True)
    started = _now()
    try:
        bench = get_benchmark(opts.benchmark)
    except ValueError as exc:
        raise RunError(str(exc)) from exc
    dataset = opts.dataset or bench.DEFAULT_DATASET
    if dataset not in bench.DATASETS:
        raise RunError(f"dataset {dataset!r} is not a {bench.NAME} dataset; choose from {', '.join(bench.DATASETS)}")
    opts.modes = list(dict.fromkeys(opts.modes))  # a mode given twice runs once
    bad_modes = [m for m in opts.modes if m not in bench.MODES]
    if bad_modes:
        raise RunError(f"unknown mode(s) {bad_modes}; {bench.NAME} modes: {', '.join(bench.MODES)}")
    if opts.predictions and len(opts.modes) != 1:
        raise RunError("--predictions needs exactly one --mode")
    try:
        fetched = getattr(bench, "fetch", datasets.fetch)(dataset, data_dir=opts.data_dir)
    except datasets.DatasetError as exc:
        raise RunError(str(exc)) from exc
    tasks = bench.load_tasks(fetched)
    if opts.task_ids:
        unknown = sorted(set(opts.task_ids) - {t.task_id for t in tasks})
        if unknown:
            raise RunError(f"unknown task id(s) {unknown} in {dataset}")
        tasks = [t for t in tasks if t.task_id in set(opts.task_ids)]
    by_id = {t.task_id: t for t in tasks}
    preds = None
    if opts.predictions:
        try:
            preds = predictions_mod.load(opts.predictions, set(by_id), mode=opts.modes[0], keep_going=opts.keep_going)
        except predictions_mod.PredictionsError as exc:
            raise RunError(str(exc)) from exc
        except FileNotFoundError as exc:
            raise RunError(f"{opts.predictions}: no such file") from exc
        for e in preds.errors:
            console.print(f"skipped {e}", markup=False, highlight=False, soft_wrap=True)

    names = {bench.verifier_for(m) if hasattr(bench, "verifier_for") else bench.VERIFIER for m in opts.modes}
    if len(names) != 1:
        raise RunError(f"modes {opts.modes} use different verifiers ({', '.join(sorted(names))}); run them separately")
    verifier = get_verifier(names.pop())
    image = None
    try:
        if opts.sandbox == "host" and getattr(bench, "CONTAINER_ONLY", False):
            raise RunError(f"{bench.NAME} runs only in the container sandbox (--sandbox container): "
                           f"its toolchain is not installed on hosts")
        if opts.sandbox == "container" and hasattr(bench, "sandbox_image"):
            image = bench.sandbox_image(opts.modes[0], fetched,
                                        log=lambda m: console.print(m, markup=False, highlight=False))
        sandbox = get_sandbox(opts.sandbox, toolchain=verifier.toolchain, slots=opts.parallel, image=image)
    except SandboxError as exc:
        raise RunError(str(exc)) from exc
    try:
        return _run_in(opts, console, started, bench, dataset, fetched, tasks, by_id, preds, sandbox, verifier, image)
    finally:
        close = getattr(sandbox, "close", None)
        if close:
            close()


def _run_in(opts, console, started, bench, dataset, fetched, tasks, by_id, preds, sandbox, verifier, image):
    probed = toolchains.probe(verifier.toolchain, sandbox, flavor="host" if opts.sandbox == "host" else "debian")
    shared = verifier.prepare(sandbox, probed)
    ds_ref = {"name": dataset, "revision": fetched.dataset.source.revision}

    jobs, expected_canaries = [], {}
    for mode in opts.modes:
        options = verifier.options(probed, smoke=bench.smoke_tests(mode), cpus=opts.limits.cpus)
        ctx = None
        if hasattr(bench, "context"):  # seed: e.g. Dafny intent's mutation seed (recorded)
            takes_seed = "seed" in inspect.signature(bench.context).parameters
            ctx = bench.context(fetched, tasks, mode, verifier, **({"seed": opts.seed} if takes_seed else {}))
        extra = {"ctx": ctx} if ctx is not None else {}
        if preds is not None:
            cands = list(preds.candidates)
        elif mode == "gold":
            cands = bench.gold_candidates(tasks, mode)
        else:
            cands = bench.gold_candidates(tasks, mode) + [
                c for c in bench.bundled_candidates(fetched, mode) if c.task_id in by_id]
        for cand, expected in bench.canaries(tasks, mode):
            cands.append(cand)
            expected_canaries[(mode, cand.model)] = expected
        try:
            jobs += [bench.build_job(by_id[c.task_id], c, mode, options, ds_ref, **extra) for c in cands]
        except ValueError as exc:  # a task file the benchmark cannot read (names file:line)
            raise RunError(str(exc)) from exc

    opts.out.mkdir(parents=True, exist_ok=True)
    log = RecordLog(opts.out / "records.jsonl")
    cache = ResultCache(opts.cache_dir) if opts.use_cache else None
    executor = Executor(verifier, sandbox, probed, shared_files=shared, limits=opts.limits,
                        parallel=opts.parallel, cache=cache)
    show = opts.progress and console.is_terminal
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, disable=not show, transient=True) as bar:
        tid = bar.add_task(f"{bench.NAME} {'+'.join(opts.modes)}", total=len(jobs))
        try:
            records = executor.run(jobs, log, bench.judge, progress=lambda rec: bar.advance(tid))
        finally:
            keys = [j.key(probed, opts.limits) for j in jobs]
            stale = set(log.records) - set(keys)
            for k in stale:  # records of other commands: kept in the cache, not in this run
                log.records.pop(k)
            log.finalize(keys)
            log.close()

    if hasattr(bench, "compare"):
        comparison = bench.compare(records, by_id)
    else:
        comparison = compare_gold(records, by_id) + compare_study(records, bench.study_results(fetched))
    canaries = canary_results(records, expected_canaries)
    notes = ["toolchain drift from the published pins: "
             + (", ".join(f"{d['tool']} {d['probed'] or 'missing'} vs {d['published']}" for d in probed.drift) or "none")
             + ("; this is NOT a bit-exact reproduction" if not probed.pin_match else "")]
    dead = {r["task_id"]: r["verifier"]["extra"]["dead_code"] for r in records
            if r["candidate"]["model"] == "gold" and r["verifier"].get("extra", {}).get("dead_code")}
    for task_id, names in sorted(dead.items()):
        notes.append(f"WP smoke tests find unreachable code or calls under the gold contract of {task_id}: "
                     f"{', '.join(names)} (not a rejection: the precondition is consistent)")
    if stale:
        notes.append(f"{len(stale)} record(s) of another command were in {opts.out}/records.jsonl; "
                     "they were dropped from it (still in the result cache)")
    if hasattr(bench, "run_notes"):
        notes += bench.run_notes(records, opts.modes)
    report = build_report(bench.NAME, dataset, records, comparison=comparison, canaries=canaries,
                          seed=opts.seed, notes=notes)
    if hasattr(bench, "report_sections"):
        report["sections"] = bench.report_sections(records, tasks, opts.modes, seed=opts.seed)
    stats = executor.stats.to_json()
    status = "complete"
    code = 0
    if preds is not None and preds.errors:
        status, code = "partial", 5
    if stats["infra_error"]:
        status, code = "partial", 4
    if not canaries["ok"]:
        code = 3
    manifest = {
        "schema_version": SCHEMA_VERSION,
        "kit": {"version": __version__, "git_commit": git_commit(), "git_dirty": None},
        "command": opts.command or sys.argv,
        "started_at": started,
        "finished_at": _now(),
        "host": host_info(),
        "benchmark": bench.NAME,
        "benchmark_version": bench.VERSION,
        "modes": list(opts.modes),
        "dataset": fetched.provenance(),
        "predictions": preds.manifest() if preds else None,
        "toolchains": [probed.to_json()],
        "sandbox": opts.sandbox,
        "image": ({"ref": image, "id": getattr(sandbox, "image_digest", None)} if image else None),
        "adaptation": getattr(bench, "ADAPTATION", {}).get(opts.modes[0]),
        "limits": opts.limits.to_json(),
        "jobs_parallel": opts.parallel,
        "seeds": {"bootstrap": opts.seed, **({"benchmark": opts.seed} if getattr(bench, "SEEDED", False) else {})},
        "status": status,
        "counts": stats,
        "input_errors": [e.to_json() for e in preds.errors] if preds else [],
    }
    write_json_atomic(opts.out / "report.json", report, kind="report")
    write_json_atomic(opts.out / "run.json", manifest, kind="run")
    print_summary(report, console)
    console.print(f"jobs: {stats['jobs']} (ran {stats['ran']}, cached {stats['cached']}, resumed {stats['resumed']},"
                  f" infra errors {stats['infra_error']}); wrote {opts.out}/run.json, records.jsonl, report.json")
    return report, manifest, code
