"""The writer of a run directory: it takes the directory's one lock
(:func:`hold_run_dir_lock`, a use of :func:`harness.results.run_dir_lock`), sinks the
run's records into it (:class:`RecordSink`, for a local run and for a collected batch run)
and writes its run files (:func:`write_run`: report.json, run.json, the benchmark's files,
SHA256SUMS; :func:`write_report_html`). Whatever made the records (a local run's executor,
the batch workers), the directory is written by this code; what a run directory is (its
lock, SHA256SUMS, its id, its checks) is :mod:`harness.results.rundir`'s."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

from rich.console import Console

from ..model import Record, utc_now
from ..report import build_report, canary_results, print_summary
from ..resources import kit_info
from ..runspec import RunSettings
from ..results import (SCHEMA_VERSION, RecordLog, RunDirBusy, gc_paused, run_dir_lock, write_json_atomic,
                       write_sums, write_text_atomic)
from .generated import generation_link, generation_report
from .plan import RunError, Plan, Start, host_info, published_of


@contextlib.contextmanager
def hold_run_dir_lock(out: Path):
    """Hold the run directory's lock (:func:`harness.results.run_dir_lock`, the only
    lock of a run directory) on ``out`` (created if needed) for the ``with`` block, its
    failures said as :class:`RunError` for the command line.

    Raises:
        RunError: another verikit process holds it (names its PID), or ``out`` cannot be a
            run directory (a file, read-only).
    """
    try:
        with run_dir_lock(out):
            yield
    except RunDirBusy as exc:
        raise RunError(str(exc)) from None
    except OSError as exc:
        if exc.filename is None or not str(exc.filename).startswith(str(out)):
            raise
        raise RunError(f"--out {out}: cannot be used as a run directory: {exc.strerror}") from None


class RecordSink:
    """The run directory ``out`` as a run's record sink: its ``records.jsonl`` open for
    appending (:class:`~harness.results.RecordLog`; the records already there are the
    run's to resume, lines that are not valid records are set aside with a warning), then
    closed with one record per job of the run, in job order. A local run's executor
    appends to :attr:`log`; ``batch collect`` appends the records the batch workers put
    in S3 (after ``fresh``: nothing of an earlier collect is kept).

    Attributes:
        out: the directory; log: its record log; stale: after :meth:`close`, the keys of
            the records it held that are not jobs of the run (dropped from records.jsonl).
    """

    def __init__(self, out: Path, console: Console, *, fresh: bool = False):
        """Open ``out/records.jsonl`` (``fresh``: removed first). Raises OSError when
        ``out`` cannot be written."""
        self.out = Path(out)
        self.out.mkdir(parents=True, exist_ok=True)
        if fresh:
            (self.out / "records.jsonl").unlink(missing_ok=True)
        self.log = RecordLog(self.out / "records.jsonl")
        for problem in self.log.set_aside:
            console.print(f"[yellow]warning:[/] {problem}: set aside in {self.log.rejected_path.name}; its job runs again")
        self.stale: set[str] = set()

    def close(self, keys: list[str]) -> list[Record]:
        """Drop the records of jobs not in ``keys`` (another command's: they stay in the
        result cache) and rewrite records.jsonl with the others in ``keys`` order; returns
        those records."""
        self.stale = set(self.log.records) - set(keys)
        for k in self.stale:
            self.log.records.pop(k)
        records = self.log.finalize(keys)
        self.log.close()
        return records

    def notes(self) -> list[str]:
        """The report's notes on what :meth:`close` and opening did: lines set aside, stale
        records dropped (none: an empty list)."""
        notes = []
        if self.log.set_aside:
            notes.append(f"{len(self.log.set_aside)} line(s) of records.jsonl were not valid records; they were set "
                         f"aside in {self.log.rejected_path.name} and their jobs ran again: {self.log.set_aside[0]}")
        if self.stale:
            notes.append(f"{len(self.stale)} record(s) of another command were in {self.out}/records.jsonl; "
                         "they were dropped from it (still in the result cache)")
        return notes


def write_run(out: Path, settings: RunSettings, console: Console, started: Start, plan: Plan, probed,
              records: list[Record], expected: dict, stats: dict, *, notes: list[str] = (),
              image: dict | None = None) -> tuple[dict, dict, int]:
    """Write ``report.json``, ``run.json``, the benchmark's run files and ``SHA256SUMS``
    (last) into the run directory ``out`` from the records of the run ``plan`` planned
    (``records.jsonl`` is already there), and print the summary. Shared by local runs,
    reproductions and :mod:`harness.batch` (collect).

    Args:
        settings: the run's settings (the command recorded in run.json);
        probed: the :class:`~harness.toolchains.ProbedToolchain` the jobs ran with;
            expected: the canaries' expected verdicts (from :func:`harness.runner.build_jobs`); stats: the
            run's counts (:class:`harness.executor.RunStats` JSON); notes: run-level notes
            for the report; image: ``{"ref", "id"}`` of the image jobs ran in, or None.

    Returns:
        ``(report, manifest, exit_code)`` as :func:`harness.runner.run`.
    """
    bench = plan.bench
    by_id = {t.task_id: t for t in plan.all_tasks}
    canaries = canary_results(records, expected)
    notes = ["toolchain drift from the published pins: "
             + (", ".join(f"{d['tool']} {d['probed'] or 'missing'} vs {d['published']}" for d in probed.drift) or "none")
             + ("; this is NOT a bit-exact reproduction" if not probed.pin_match else ""), *notes]
    notes += bench.notes(records, list(plan.modes))
    comparison = bench.compare(records, by_id, plan.fetched)
    if not comparison and plan.fetched.dataset.source.kind == "local":
        notes.append(f"{plan.fetched.dataset.name} is a local dataset with no published verdicts to compare with: "
                     "the report has no published-vs-reproduced comparison")
    report = build_report(bench.name, plan.fetched.dataset.name, records, comparison=comparison,
                          canaries=canaries, seed=plan.given.seed, notes=notes, published=published_of(bench))
    report["sections"] = bench.report_sections(records, plan.tasks, list(plan.modes), seed=plan.given.seed)
    link = generation_link(plan.preds.path, plan.preds.sha256, out) if plan.preds is not None else None
    if link is not None:  # predictions made by verikit generate: pass@k and fixes per model
        report["generation"] = generation_report(records, plan.preds, link, seed=plan.given.seed)
    status, code = "complete", 0
    if plan.preds is not None and plan.preds.errors:
        status, code = "partial", 5
    if stats["infra_error"]:
        status, code = "partial", 4
    if not canaries["ok"]:
        code = 3
    manifest = run_manifest(settings, started, plan, status, stats)
    manifest.update({
        "toolchains": [probed.to_json()],
        "image": image,
        "adaptation": bench.adaptation(plan.modes[0]),
        "jobs_parallel": plan.given.parallel,
        "generation": link,
    })
    state = plan.verifier.state()
    if state:  # what prepare() read in the sandbox, for validate (verifier.restore)
        manifest["verifier_state"] = state
    for name, text in bench.run_files(records, plan.tasks).items():
        write_text_atomic(out / name, text)
    write_json_atomic(out / "report.json", report, kind="report")
    write_json_atomic(out / "run.json", manifest, kind="run")
    write_sums(out)  # last: the run directory is complete
    print_summary(report, console)
    console.print(f"jobs: {stats['jobs']} (ran {stats['ran']}, cached {stats['cached']}, resumed {stats['resumed']},"
                  f" infra errors {stats['infra_error']}); wrote {out}/run.json, records.jsonl, report.json")
    return report, manifest, code


def write_report_html(out: Path, console: Console) -> Path | None:
    """Write ``out/report.html`` (:func:`harness.htmlreport.write_html`) from a finished
    run directory, and say so. It is a view of the run's files, not one of them (not in
    SHA256SUMS): when it cannot be rendered the run stays as written, a warning names the
    reason, and ``verikit report OUT --html FILE`` can render it later. Returns its path,
    or None when it was not written."""
    from ..htmlreport import write_html

    target = Path(out) / "report.html"
    try:
        with gc_paused():  # it holds every record of the run: no cycle among them to look for
            write_html([out], target)
    except Exception as exc:  # noqa: BLE001 - the run is complete; its HTML view is not essential
        console.print(f"[yellow]warning:[/] {target} not written ({type(exc).__name__}: {exc}); the run's files are "
                      f"complete; render it later with: verikit report {out} --html {target}", highlight=False)
        return None
    console.print(f"wrote {target}", markup=False, highlight=False)
    return target


def run_manifest(settings: RunSettings, started: Start, plan: Plan, status: str, stats: dict) -> dict:
    """run.json of the run planned as ``plan``: its spec (:meth:`Plan.spec`), the command
    (``settings.command``, else this process's argv: provenance), kit, host, dataset,
    predictions, limits, seeds, task selection, ``status`` and the counts ``stats``;
    ``toolchains``, ``image`` and ``adaptation`` are left empty for the caller (:func:`write_run` fills them)."""
    spec = plan.given
    return {
        "schema_version": SCHEMA_VERSION,
        "kit": kit_info(started.git),
        "command": list(settings.command or sys.argv),
        "spec": plan.spec().to_json(),
        "started_at": started.at,
        "finished_at": utc_now(),
        "host": host_info(),
        "benchmark": plan.bench.name,
        "benchmark_version": plan.bench.version,
        "modes": list(plan.modes),
        "dataset": plan.fetched.provenance(),
        "predictions": plan.preds.manifest() if plan.preds else None,
        "toolchains": [],
        "sandbox": spec.sandbox,
        "image": None,
        "adaptation": None,
        "limits": spec.limits.to_json(),
        "jobs_parallel": spec.parallel,
        "seeds": {"bootstrap": spec.seed, **({"benchmark": spec.seed} if plan.bench.seeded else {}),
                  **({"sample": spec.seed} if spec.sample is not None else {})},
        "task_selection": ({"sample": spec.sample, "seed": spec.seed, "task_ids": list(plan.task_ids or ())}
                           if spec.sample is not None else {"task_ids": list(plan.task_ids)} if plan.task_ids else None),
        "status": status,
        "counts": stats,
        "input_errors": [e.to_json() for e in plan.preds.errors] if plan.preds else [],
    }

