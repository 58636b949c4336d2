"""The pipeline of a run (:class:`Run`) and what drives it: :func:`run`, :func:`reproduce`,
:func:`recheck`, :func:`rejudge` (see :mod:`harness.runner`)."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import random
import tempfile
from pathlib import Path
from typing import Callable, Iterator

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from .. import registry, toolchains
from ..executor import Executor, derive
from ..metrics import BASIS_EXACT
from ..model import Job, ProcResult, Record
from ..plugin import Benchmark, Reproduction
from ..progress import PlainProgress
from ..report import build_report
from ..runspec import RunSettings, RunSpec
from ..results import (OUTPUTS, OutputStore, RecordLog, ResultCache, record_identity, record_outcome,
                       write_json_atomic, write_sums, write_text_atomic)
from ..sandbox import IMAGES, SandboxError
from ..toolchains import Fingerprint, ProbedToolchain
from .generated import check_published_model, statistical_reproduction
from .plan import RunError, Plan, Start, build_jobs, open_dataset, plan_run, published_of, start_run
from .writer import RecordSink, hold_run_dir_lock, run_manifest, write_report_html, write_run

#: Set in runner images (``verikit images build NAME --runner``): the kit runs inside the
#: toolchain's image, so the host sandbox there is the container (``harness.batch``).
RUNNER_ENV = "VERIKIT_RUNNER"


def run(spec: RunSpec, out: Path, *, settings: RunSettings | None = None, console: Console | None = None,
        html: bool = True) -> tuple[dict, dict, int]:
    """Run ``spec`` and write the run directory ``out`` (and its ``report.html`` view
    when ``html``; ``verikit generate``'s feedback turns leave it out). ``settings``: the
    result and data caches, progress, the command recorded (None: the defaults).

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
    settings = settings or RunSettings()
    out = Path(out)
    started = start_run()
    plan = plan_run(spec, console, data_dir=settings.data_dir)
    with hold_run_dir_lock(out):
        report, manifest, code, _ = _execute(out, settings, console, started, plan)
        if html:
            write_report_html(out, console)
    return report, manifest, code


def _execute(out: Path, settings: RunSettings, console: Console, started: Start,
             plan: Plan) -> tuple[dict, dict, int, list[dict]]:
    """The run of ``plan`` in its sandbox: :func:`run`'s result plus the run's records."""
    pipeline = Run(plan.given, console, plan, settings=settings)
    with pipeline.opened(lambda m: console.print(m, markup=False, highlight=False)):
        return _run_in(pipeline, started, out)


@contextlib.contextmanager
def open_sandbox(plan: Plan, log):
    """The run's sandbox and its image (None on the host) for the ``with`` block, closed
    after it; ``log`` gets the image build's messages.

    Raises:
        RunError: a container-only benchmark on the host, or the sandbox or image cannot
            be had (the message says what to do).
    """
    bench, spec = plan.bench, plan.given
    try:
        cls = registry.sandbox_class(spec.sandbox)
        if cls.host_tools and bench.container_only and not os.environ.get(RUNNER_ENV):
            raise RunError(f"{bench.name} runs only in a sandbox with its images (e.g. --sandbox container): "
                           f"its toolchain is not installed on hosts")
        image = job_image(bench, plan.modes[0], plan.fetched, log, sandbox=spec.sandbox)
        sandbox = cls.create(toolchain=plan.verifier.toolchain, slots=spec.parallel, image=image)
    except SandboxError as exc:
        raise RunError(str(exc)) from exc
    if (sandbox.isolation or {}).get("memory") == "none":  # rootless, no cgroup delegation
        log(f"warning: the {spec.sandbox} sandbox cannot limit memory, CPUs or processes here (no cgroup "
            f"delegation to this user); the wall-time and output limits hold; every record says so "
            f"(toolchain.isolation)")
    try:
        yield sandbox, image
    finally:
        sandbox.close()


def job_image(bench: Benchmark, mode: str, fetched, log: Callable[[str], None] = print, *,
              build: bool = True, sandbox: str = IMAGES) -> str | None:
    """What ``sandbox`` runs ``mode``'s jobs in when the benchmark derives an image for
    the mode (:meth:`~harness.plugin.Benchmark.derived_images`): the sandbox class's
    :meth:`~harness.sandbox.Sandbox.derived_image` (an engine image's tag, the image built
    first when missing and ``build``; an image file), or None when they run in the
    verifier's toolchain image (or the sandbox runs no image).

    Raises:
        harness.sandbox.SandboxError: no engine, the image cannot be built (its base is
            missing: the spec's ``base_hint`` says how to get it), or ``build=False`` and it
            is not built.
    """
    if mode not in bench.derived_images().values():
        return None
    from ..sandbox import images

    spec = bench.derived_image_spec(mode, fetched, images.fingerprint)
    cls = registry.sandbox_class(sandbox)
    if build and cls.image_kind == "engine":
        from ..sandbox.engine import EngineUnavailable

        try:
            images.build_derived(spec, log=log)
        except EngineUnavailable as exc:
            raise SandboxError(f"{exc}" + (f"\n{spec['base_hint']}" if spec.get("base_hint") else "")) from None
    return cls.derived_image(spec)


def probe_toolchain(plan: Plan, sandbox):
    """The toolchain of ``plan``'s verifier probed in ``sandbox`` and the files the verifier
    ships with every job."""
    probed = toolchains.probe(plan.verifier.toolchain, sandbox)
    return probed, plan.verifier.prepare(sandbox, probed)


class Run:
    """The one pipeline of a run: plan (from its :class:`~harness.runspec.RunSpec`), open the sandbox (its
    image via :func:`job_image`), probe the toolchain, build the jobs, execute them into a
    record sink, and write the run directory (:meth:`write`). A local run (:func:`run`,
    into its run directory, :class:`~harness.runner.writer.RecordSink`), :func:`recheck` and
    ``rerun`` (a log in a temporary directory), the batch worker
    (:func:`harness.batch.worker.work`, each record put in S3) and ``batch collect`` (the
    workers' records into a :class:`~harness.runner.writer.RecordSink`, then :meth:`write`)
    all go through it.

    Attributes:
        plan: the run's :class:`Plan` (its spec: ``plan.given``); settings: its settings
            (the result cache, progress, the command recorded); console: where it says
            things.
        sandbox, image, shared: while :meth:`opened`: the sandbox, the image jobs run in
            (None on the host) and the files the verifier ships with every job.
        probed: the toolchain the jobs run with: probed in the sandbox by :meth:`opened`,
            or given (jobs that ran elsewhere: a batch run's, probed in its runner image).
        executor: the :class:`~harness.executor.Executor` of :meth:`execute` (its stats,
            its outputs, :meth:`~harness.executor.Executor.drain`), once made.
    """

    def __init__(self, spec: RunSpec, console: Console, plan: Plan | None = None, *,
                 settings: RunSettings | None = None, probed: ProbedToolchain | None = None):
        """Plan ``spec`` (unless ``plan``, its plan, is given); ``settings``: None, the
        defaults; ``probed``: the toolchain its jobs ran with elsewhere (then :meth:`jobs`
        needs no sandbox). Raises RunError as :func:`plan_run`."""
        self.console = console
        self.settings = settings or RunSettings()
        self.plan = plan if plan is not None else plan_run(spec, console, data_dir=self.settings.data_dir)
        self.sandbox = self.image = None
        self.probed = probed
        self.shared: dict = {}
        self.executor: Executor | None = None

    @contextlib.contextmanager
    def opened(self, log: Callable[[str], None] | None = None) -> Iterator["Run"]:
        """The run with its sandbox open and its toolchain probed, for the ``with`` block;
        the sandbox is closed after it. ``log`` gets the image build's messages.

        Raises:
            RunError: as :func:`open_sandbox`.
        """
        with open_sandbox(self.plan, log or (lambda m: None)) as (sandbox, image):
            self.sandbox, self.image = sandbox, image
            try:
                self.probed, self.shared = probe_toolchain(self.plan, sandbox)
                yield self
            finally:
                self.sandbox = None

    def jobs(self) -> tuple[list[Job], dict]:
        """The run's jobs with its toolchain and the canaries' expected verdicts
        (:func:`build_jobs`; needs :meth:`opened`, or ``probed`` given)."""
        return build_jobs(self.plan, self.probed, self.plan.verifier)

    def keys(self, jobs: list[Job]) -> list[str]:
        """The record keys of ``jobs`` (the run's toolchain's, the run's limits)."""
        toolchain = Fingerprint(self.probed.fingerprint)  # read once for every job
        return [j.key(toolchain, self.plan.given.limits) for j in jobs]

    def write(self, out: Path, started: Start, records: list[Record], expected: dict, stats: dict, *,
              notes: list[str] = (), image: dict | None = None) -> tuple[dict, dict, int]:
        """Write the run's files into the run directory ``out`` from its records
        (records.jsonl is there): :func:`~harness.runner.writer.write_run` with this run's
        plan and toolchain. Returns ``(report, manifest, exit_code)`` as :func:`run`."""
        return write_run(out, self.settings, self.console, started, self.plan, self.probed, records, expected, stats,
                         notes=notes, image=image)

    def make_executor(self, cache: ResultCache | None = None) -> Executor:
        """The executor of the open sandbox (``cache``: the result cache, or None)."""
        self.executor = Executor(self.plan.verifier, self.sandbox, self.probed, shared_files=self.shared,
                                 limits=self.plan.given.limits, parallel=self.plan.given.parallel, cache=cache)
        return self.executor

    def execute(self, jobs: list[Job], sink: RecordLog,
                progress: Callable[[dict], None] | None = None) -> list[dict]:
        """Run ``jobs`` into ``sink`` (jobs it holds are resumed) with the benchmark's
        judge; ``progress`` gets each record. Returns the records, in job order."""
        executor = self.executor or self.make_executor()
        return executor.run(jobs, sink, self.plan.bench.judge, progress=progress)

    def execute_scratch(self, jobs: list[Job], progress: Callable[[dict], None] | None = None,
                        prefix: str = "verikit-run-") -> list[dict]:
        """:meth:`execute` into a record log in a temporary directory (removed after)."""
        with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
            log = RecordLog(Path(tmp) / "records.jsonl")
            try:
                return self.execute(jobs, log, progress)
            finally:
                log.close()


def _run_in(run: Run, started: Start, out: Path) -> tuple[dict, dict, int, list[dict]]:
    """The jobs of ``run`` (opened) executed into the run directory ``out`` (resumed from
    its records.jsonl, through the result cache), then run.json and report.json written."""
    settings, console, bench = run.settings, run.console, run.plan.bench
    jobs, expected = run.jobs()

    sink = RecordSink(out, console)
    cache = ResultCache(settings.cache_dir) if settings.use_cache else None
    executor = run.make_executor(cache)
    keys = run.keys(jobs)
    label = f"{bench.name} {'+'.join(run.plan.modes)}"
    show = settings.progress and console.is_terminal
    # no terminal (a log, CI): a plain line every 30 s instead of a live bar that shows nothing
    plain = PlainProgress(len(set(keys)), console, label) if settings.progress and not show else None
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
            records = run.execute(jobs, sink.log, progress)
        finally:
            sink.close(keys)
            for problem in (cache.problems if cache else []):
                console.print(f"[yellow]warning:[/] {problem}")

    notes = sink.notes()
    if cache and cache.problems:
        notes.append(f"result cache: {len(cache.problems)} problem(s), the jobs concerned re-ran or their results "
                     f"were not stored: {cache.problems[0]}")
    stats = executor.stats.to_json()
    image_ref = {"ref": run.image, "id": run.sandbox.image_digest} if run.image else None
    report, manifest, code = run.write(out, started, records, expected, stats, notes=notes, image=image_ref)
    return report, manifest, code, records


def reproduce(spec: RunSpec, out: Path, *, settings: RunSettings | None = None,
              console: Console | None = None) -> tuple[Reproduction, int]:
    """``verikit reproduce``: the paper's figures vs the kit's, written as the run
    directory ``out`` (``spec``: the benchmark, its dataset, sandbox, limits and seed;
    its modes and predictions are the reproduction's own).

    A benchmark with reproduction modes first runs them (gold, bundled candidates and
    canaries, exactly as :func:`run`) into ``out``; then the benchmark compares with
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
        bench = registry.benchmark(spec.benchmark)
    except registry.UnknownName as exc:
        raise RunError(str(exc)) from exc
    modes = bench.reproduce_modes()
    out = Path(out)
    with hold_run_dir_lock(out):
        return _reproduce_locked(spec, out, settings or RunSettings(), console, bench, modes)


def _reproduce_locked(spec: RunSpec, out: Path, settings: RunSettings, console: Console, bench,
                      modes) -> tuple[Reproduction, int]:
    """:func:`reproduce` with the run directory locked."""
    if modes:
        spec = spec.replace(modes=tuple(modes), predictions=None, predictions_sha256=None)
        plan = plan_run(spec, console, data_dir=settings.data_dir)
        report, manifest, code, records = _execute(out, settings, console, start_run(), plan)
        rep = bench.reproduce(plan.fetched, {"report": report, "records": records, "tasks": plan.all_tasks})
    else:
        started = start_run()
        plan = Plan(spec, bench, open_dataset(bench, spec.dataset, settings.data_dir), [], [], None, None,
                    modes=("reproduce",))
        rep = bench.reproduce(plan.fetched, None)
        RecordLog(out / "records.jsonl").close()
        report = build_report(bench.name, plan.fetched.dataset.name, [], comparison=[],
                              canaries={"ok": True, "results": []}, seed=spec.seed, notes=[],
                              published=published_of(bench))
        report["sections"] = {}
        manifest = run_manifest(settings, started, plan, "complete", {"jobs": 0, "ran": 0, "cached": 0, "resumed": 0,
                                                               "infra_error": 0, "verifier_runs": 0})
        manifest["sandbox"] = "none (rescoring of published files)"
        code = 0
    for f in rep.figures:  # recomputed from published outputs or a deterministic re-run: compared by equality
        f.setdefault("basis", BASIS_EXACT)
    if not modes:
        write_json_atomic(out / "run.json", manifest, kind="run")
    return rep, _write_reproduction(out, console, report, rep, code)


def _write_reproduction(out: Path, console: Console, report: dict, rep: Reproduction, code: int) -> int:
    """Put ``rep`` into ``report`` (figures, sections, notes), write its extra files,
    report.json, SHA256SUMS (last: the reproduction's report is final) and report.html.
    Returns the exit code: ``code``, or 1 when it is 0 and a figure differs."""
    report["reproduction"] = rep.to_json()
    report["sections"].update(rep.sections)
    report["notes"] += rep.notes
    for name, text in rep.files.items():
        write_text_atomic(out / name, text)
    write_json_atomic(out / "report.json", report, kind="report")
    write_sums(out)
    write_report_html(out, console)
    return 1 if code == 0 and rep.summary()["differs"] else code


def reproduce_generated(spec: RunSpec, out: Path, published_model: str, *, settings: RunSettings | None = None,
                        console: Console | None = None) -> tuple[Reproduction, int]:
    """The run-and-compare half of ``verikit reproduce BENCH --generate`` (the CLI generates
    first, into ``OUT/generation/``): the ordinary run of ``spec.predictions`` (one mode,
    gold and canaries as every run) into ``out``, then the published figures of the
    model the paper calls ``published_model`` next to the kit's, statistically
    (:func:`~harness.runner.generated.statistical_reproduction`: a bootstrap confidence
    interval, seeded by ``spec.seed``). report.json gets the ``reproduction`` (and, the
    predictions being generate's, the ``generation`` section); run.json links
    generation.json with its sha256. The caller holds the run directory's lock
    (:func:`~harness.runner.writer.hold_run_dir_lock`).

    Returns:
        ``(reproduction, exit_code)``: 0 every figure with a published value inside its
        CI, 1 some differ, or the run's own code (3 canaries, 4 infra errors, 5 bad lines).

    Raises:
        RunError: as :func:`run`; no predictions or not one mode; the paper has per-model
            figures for the mode but none of ``published_model`` (lists its models).
    """
    console = console or Console(stderr=True)
    settings, out = settings or RunSettings(), Path(out)
    if not spec.predictions or len(spec.modes) != 1:
        raise RunError("reproduce --generate scores one mode's generated predictions")
    plan = plan_run(spec, console, data_dir=settings.data_dir)
    figures = check_published_model(plan.bench, plan.modes[0], published_model)
    report, _, code, records = _execute(out, settings, console, start_run(), plan)
    rep = statistical_reproduction(plan.bench, plan.modes[0], published_model, figures, records, plan.preds,
                                   seed=spec.seed, dataset=plan.fetched.dataset.name, population=len(plan.all_tasks),
                                   selection="sample" if spec.sample is not None else "chosen" if spec.task_ids else "all")
    return rep, _write_reproduction(out, console, report, rep, code)


def recheck(spec: RunSpec, records: list[Record], n: int, *, settings: RunSettings | None = None, seed: int = 0,
            console: Console | None = None) -> tuple[list[dict], list[str]]:
    """Re-run ``n`` records of a run, drawn with ``seed``, with the real verifier and
    compare: the independent check of a run directory (an artifact reviewer's, a Hub
    reader's). ``spec`` is the run's own (its run.json ``spec``); ``settings``: the data
    cache. The result cache is not used and nothing is written to the run directory.

    Returns:
        ``(rechecked records, differences)``: one message per record that the run's
        spec does not make (unknown task id, model or sample), whose task hash is not
        the dataset's, or (the N drawn) whose verdict or goal counts differ on re-running.

    Raises:
        RunError: as :func:`run` (missing data, sandbox or predictions).
    """
    console = console or Console(stderr=True)
    pipeline = Run(spec, console, settings=settings)
    drawn = random.Random(seed).sample(records, min(n, len(records)))
    with pipeline.opened():
        jobs, _ = pipeline.jobs()
        by_id = {_job_identity(j): j for j in jobs}
        differences = []
        for r in records:  # every record: a job of this spec, on the dataset's task as it is
            j = by_id.get(record_identity(r))
            if j is None:
                differences.append(f"{r['mode']} {r['task_id']} {r['candidate']['model']}: the run's spec does "
                                   f"not make this job (unknown task, model or sample)")
            elif j.task_sha256 != r["task_sha256"]:
                differences.append(f"{r['mode']} {r['task_id']} {r['candidate']['model']}: task hash "
                                   f"{r['task_sha256'][:12]} is not the dataset's {j.task_sha256[:12]}")
        wanted = [by_id[record_identity(r)] for r in drawn if record_identity(r) in by_id]
        again = pipeline.execute_scratch(wanted, prefix="verikit-recheck-")
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


def rejudge(spec: RunSpec, records: list[Record], run_dir: Path, *, settings: RunSettings | None = None,
            verifier_state: dict | None = None, console: Console | None = None) -> tuple[int, int, list[str]]:
    """Re-derive every record's verdict from the tool output it names, with the current
    parser and judge, without running a tool (``verikit validate``): a verdict edited in
    either direction is found even when records, report and sums were fixed up to match.

    ``spec`` is the run's own (its run.json ``spec``): the jobs are re-planned from the
    dataset (``settings.data_dir``: the data cache), and each record is re-judged as :func:`harness.executor.derive`
    judges a fresh run (same toolchain: the record's probed toolchain, checked by its
    fingerprint). ``verifier_state`` is the run's run.json ``verifier_state`` (what its
    verifier's ``prepare`` read in the sandbox), restored before any record is re-judged.

    Returns:
        ``(re-judged, unkept, differences)``: the records re-judged; the records made
        before verikit kept tool outputs (schema 1.0: checked against their goal counts
        only); one message per record that the run's spec does not make, whose output
        is missing or edited, or whose verdict or goal counts differ from the re-derived.

    Raises:
        RunError: as :func:`plan_run` (missing data, bad predictions).
    """
    console = console or Console(stderr=True)
    plan = plan_run(spec, console, data_dir=(settings or RunSettings()).data_dir)
    plan.verifier.restore(verifier_state or {})  # what the run's prepare() read in its sandbox
    outputs = OutputStore(Path(run_dir) / OUTPUTS)
    groups: dict[str, list[dict]] = {}
    for r in records:
        groups.setdefault(r["toolchain"].get("fingerprint", ""), []).append(r)
    checked, unkept, differences = 0, 0, []
    # An output is read once; derive() runs once per output and job, where jobs that differ
    # only in the candidate's sample and origin (gold or not alike) count as one: the same
    # verification of the same text by the same model, which a run judges once too
    # (harness.executor). A record that this verdict and these goal counts do not match is
    # re-derived with its own job, which decides and gives the message (a judge may name the
    # candidate's origin in its reason).
    procs: dict[str, ProcResult] = {}
    derived: dict[tuple, list[tuple[tuple, tuple]]] = {}

    for recs in groups.values():
        try:
            probed = ProbedToolchain.from_json(recs[0]["toolchain"])
        except ValueError as exc:
            differences += [f"{_who(r)}: {exc}" for r in recs]
            continue
        jobs, _ = build_jobs(plan, probed, plan.verifier)
        by_id = {_job_identity(j): j for j in jobs}
        for r in recs:
            j = by_id.get(record_identity(r))
            if j is None:
                differences.append(f"{_who(r)}: the run's spec does not make this job (unknown task, model or sample)")
                continue
            out = r.get("tool_output")
            if not out and r.get("attempts", 0) > 0:
                if r.get("schema_version") == "1.0":
                    unkept += 1
                else:
                    differences.append(f"{_who(r)}: no tool output recorded, its verdict cannot be re-derived")
                continue
            try:
                proc = None
                if out:
                    proc = procs.get(out["sha256"])
                    if proc is None:
                        proc = procs[out["sha256"]] = outputs.get(out["sha256"])
            except (OSError, ValueError) as exc:
                differences.append(f"{_who(r)}: tool output {out['sha256'][:12]}: {exc}")
                continue
            c = j.candidate
            same = derived.setdefault((out["sha256"] if out else None, str(c.get("sha256")), str(c.get("model")),
                                       str(c.get("origin", "")) == "gold"), [])
            content = (*(getattr(j, f) for f in _JOB_FIELDS), {k: v for k, v in c.items() if k not in ("sample", "origin")})
            found = next((outcome for other, outcome in same if other == content), None)
            if found is None:
                found = _derived(plan, j, proc)
                same.append((content, found))
            if found[0] != r["verdict"] or found[2] != r.get("goals"):
                found = _derived(plan, j, proc)
            verdict, reason, goals = found
            checked += 1
            if verdict != r["verdict"] or goals != r.get("goals"):
                g = r.get("goals") or {}
                differences.append(f"{_who(r)}: recorded {r['verdict']} {g.get('proved')}/{g.get('total')}, its tool "
                                   f"output gives {verdict} {(goals or {}).get('proved')}/{(goals or {}).get('total')} "
                                   f"({reason[:200]})")
    return checked, unkept, differences


def _derived(plan: Plan, job: Job, proc: ProcResult | None) -> tuple[str, str, dict | None]:
    """:func:`~harness.executor.derive`'s verdict, reason and goal counts (JSON) of ``job``."""
    verdict, reason, result = derive(plan.verifier, job, proc, plan.bench.judge)
    return verdict, reason, result.goals.to_json() if result and result.goals else None


#: A job's fields but its candidate (see rejudge: the candidate is compared apart).
_JOB_FIELDS = tuple(f.name for f in dataclasses.fields(Job) if f.name != "candidate")


def _job_identity(j: Job) -> tuple:
    """A job's identity as :func:`harness.results.record_identity` reads its record."""
    return j.mode, j.task_id, j.candidate["model"], j.candidate["sample"], j.candidate["origin"]


def _who(r: dict) -> str:
    return f"{r['mode']} {r['task_id']} {r['candidate']['model']} #{r['candidate']['sample']}"
