"""Scheduling, limits, cache lookup, resume and infra-only retries.

The executor knows neither tools nor datasets: a benchmark hands it :class:`Job` objects
(files to verify, verifier options, integrity checks already made) and a ``judge``
callback; a verifier module builds the command and parses the output; a sandbox runs it.

Resume is by content (docs/guarantees.md): a job's key is the sha256 of the canonical JSON of the
benchmark name and version, mode, task hash, candidate hash, toolchain fingerprint,
verifier options and limits. A job whose key is already in the run's ``records.jsonl``
or in the result cache is not run again. Only ``infra_error`` is retried (``retries``
times, with backoff); it is never cached, so a later run retries it too.

Failures belong to the candidate: ``infra_error`` is kept only for what the kit
can show is its own side: the tool did not start (image or engine), the verifier marks
its finding so (``extra["kit_side"]``: e.g. the image's library is broken), or the
candidate is the gold. A tool that started and came to its own end without a readable
result on a model's candidate (a crash, a missing output) gives that candidate ``failed``.
An exception in the kit's own reading or judging of one candidate makes it ``invalid``
with the reason; the run goes on.

Verdicts are re-derivable: every record names the tool's own output (``tool_output``,
stored gzip'd by content hash in ``outputs/`` beside ``records.jsonl`` and in the result
cache); :func:`derive` makes the verdict from it, here, in ``validate`` and on every
cache read (an entry whose verdict its output does not give is ignored and its job runs).

A job's ``task_run`` (files that depend on the task alone, e.g. CASP's task-soundness smoke
tests and the task's own view) is made by one run per file, each run once for each distinct
content, with the same command as the jobs, and kept
in the result cache like a job (keyed by its files, command, toolchain fingerprint and
limits), so later runs and other users of the cache read it instead of making it again;
the runs are made first, ``-j`` at a time, before the jobs (so that no job waits idle while
another makes its task's run); the files a run collected are added to the output of every
job that names it, where the
candidate's own run cannot overwrite them; the stored tool output holds them, so the
verdict stays re-derivable.

A verifier may ask for a follow-up run decided from the first run's output (its optional
``followup``, e.g. TLC's invariant probe on states made from the reachable ones): the
executor runs it in the same sandbox with the job's limits when the first run came to its
own end, and stores its files and output with the first run's (``followup/``, see
:func:`harness.model.followup_files`); it is counted in ``RunStats.followups``. What of it
the first run may make ahead on a guess (``ahead``) is added to that run's files and command.

A verifier may also have a gate (its optional ``gate(options)``, e.g. Frama-C's view of the
candidate from a parse only): a cheap first run whose output (with the job's task run)
the benchmark's judge reads through :func:`derive`; when that gives ``rejected`` (a rule
broken) or ``invalid`` (the tool rejected the candidate's input, which the verification
reads too: a gate parses it as the verification does) the record is made from it and the
verification is not run (nothing else of the candidate is run: no prover time, no
execution), counted in ``RunStats.gated``. Any other verdict,
and a gate that did not come to its own end, lead to the verification as usual. The
stored output is the gate's, so the verdict stays re-derivable. When the gate came to its
own end without deciding, the verification's command is the verifier's
``command_after_gate(options, gate files)`` (Frama-C: the smoke tests that can decide a
verdict on what the gate's view and requires probe show); the verification's stored output holds the
command it ran. The verifier's ``carry_from_gate(options, gate files)`` names gate outputs that the
verification gets in its directory instead of making them again (Frama-C: the requires probe's
log); the verification collects them, so its stored output holds them too.

A verification run, a gate run and a task run are told how many CPUs they may use at run time
(:data:`harness.model.CPUS_ENV`, :meth:`Executor.job_cpus`): more than the job's
``limits.cpus`` when ``-j`` leaves CPUs of the machine idle and the sandbox does not hold a
job to its limit, so that a verifier's driver may use them (Frama-C's: its side steps beside
WP, which then runs that many provers at a time; Rocq's: ``coqchk`` beside the check
file). It is not part of a job's key: what a run computes never depends on it, only how long.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Callable

from .model import (CPUS_ENV, Job, Limits, ProcResult, VerifierResult, canonical_json, followup_files, sha256_text,
                    termination, utc_now)
from .results import OUTPUTS, RECORD_SCHEMA_VERSION, OutputStore, RecordLog, ResultCache
from .sandbox import SandboxError
from .toolchains import Fingerprint, ProbedToolchain

LOG_TAIL_CHARS = 4000


def with_identity(record: dict, key: str, job: Job) -> dict:
    """A copy of a verification's record for one candidate: its job ``key`` and its
    ``candidate`` (model, sample, hash, origin); the verification fields are shared."""
    return {**record, "key": key, "candidate": dict(job.candidate), "task_id": job.task_id}


def _failure(what: str, exc: Exception) -> str:
    return f"the kit could not {what} this candidate ({type(exc).__name__}: {str(exc)[:300]}): counted as invalid"


def derive(verifier, job: Job, proc: ProcResult | None, judge) -> tuple[str, str, VerifierResult | None]:
    """The verdict of ``job`` from the tool's own output ``proc``, with the current parser
    and judge: what the executor records, what ``validate`` and a cache read re-check.

    Args:
        verifier: the verifier module (``name``, ``parse``); judge: the benchmark's
            ``judge(job, result) -> (verdict, reason)``; proc: None only for a job decided
            without running (``job.precheck``).

    Returns:
        ``(verdict, reason, result)``; ``result`` is the verifier's reading (None for a
        precheck or when the output could not be read). Never raises for a candidate's
        sake: see the module docstring for ``infra_error``, ``failed`` and ``invalid``.
    """
    if job.precheck is not None:
        return job.precheck[0], job.precheck[1], None
    if proc is None:
        return "infra_error", "no tool output", None
    try:
        result = termination(proc, verifier.name) or verifier.parse(proc, job.options)
    except Exception as exc:  # noqa: BLE001  # one candidate's odd output must not stop the run
        return "invalid", _failure("read the tool's output on", exc), None
    if result.verdict == "infra_error":
        gold = str(job.candidate.get("origin", "")) == "gold"
        if proc.start_error is not None or result.extra.get("kit_side") or gold:
            return "infra_error", result.reason, result
        result.verdict = "failed"
        result.reason = (f"{verifier.name} failed on this candidate: {result.reason} (the tool started and ended "
                         f"on its own: the candidate's failure, not the kit's)")
    try:
        verdict, reason = judge(job, result)
    except Exception as exc:  # noqa: BLE001
        return "invalid", _failure("judge", exc), result
    return verdict, reason, result


#: The verdicts of a gate run (through the benchmark's judge) that are the job's: the rules
#: rejected the candidate, or the tool rejected its input (the verification reads the same).
GATE_FINAL = ("rejected", "invalid")
_UNASKED = object()  # a follow-up not asked yet for the last run (Executor._followup_spec)


def verification_command(verifier, options: dict, gate_files: dict[str, bytes] | None) -> tuple:
    """The verification's ``(argv, env, collect, carried)``: ``command``, or after a gate that came to its own
    end (``gate_files``) ``command_after_gate`` and the gate's files ``carry_from_gate`` ships with it."""
    if gate_files is None:
        return (*verifier.command(options), {})
    return (*verifier.command_after_gate(options, gate_files), verifier.carry_from_gate(options, gate_files))


@dataclass
class RunStats:
    """What a run did: ``jobs`` distinct jobs, ``ran`` started a verifier, ``cached`` came from the
    result cache, ``resumed`` were already in records.jsonl, ``infra_error`` still failed on our
    side after retries, ``verifier_runs`` counts every tool start (retries included), ``task_runs``
    the jobs' task runs made (``Job.task_run``: one per distinct task run), ``followups`` the
    verifier's follow-up runs, ``gated`` the jobs the gate's run decided (:data:`GATE_FINAL`)."""

    jobs: int = 0
    ran: int = 0
    cached: int = 0
    resumed: int = 0
    infra_error: int = 0
    verifier_runs: int = 0
    task_runs: int = 0
    followups: int = 0
    gated: int = 0

    def to_json(self) -> dict:
        """The counters as a dict."""
        return dict(self.__dict__)


class Stopped(Exception):
    """A job ended by the run's stop (Ctrl-C, SIGTERM): no verdict, not recorded; the next run does it again."""


class Drained(Exception):
    """A job that had not started when the run was drained: it is simply not run."""


class Executor:
    """Runs jobs through one verifier in one sandbox with one probed toolchain.

    Args:
        verifier: verifier module instance (``command``/``parse``).
        sandbox: sandbox instance (``run``/``cancel``).
        toolchain: the :class:`ProbedToolchain` of that sandbox.
        shared_files: files every job gets (e.g. ``why3.conf`` from ``verifier.prepare``).
        limits: per-job :class:`Limits`.
        parallel: number of jobs run at once (``-j``).
        retries: extra attempts for ``infra_error``.
        cache: :class:`ResultCache`, or None to disable the cache.
    """

    def __init__(self, verifier, sandbox, toolchain: ProbedToolchain, *, shared_files: dict | None = None,
                 limits: Limits = Limits(), parallel: int = 1, retries: int = 2,
                 cache: ResultCache | None = None):
        self.verifier = verifier
        self.sandbox = sandbox
        self.toolchain = toolchain
        self.shared_files = shared_files or {}
        self.limits = limits
        self.parallel = max(1, parallel)
        self.retries = retries
        self.cache = cache
        self.outputs: OutputStore | None = None  # set by run(): outputs/ beside the run's records.jsonl
        self.stats = RunStats()
        self._lock = threading.Lock()
        self._task_runs: dict[str, dict[str, bytes]] = {}  # task_run content key -> collected files
        self._task_locks: dict[str, threading.Lock] = {}
        self._stopping = threading.Event()
        self._draining = threading.Event()

    def job_cpus(self, limits: Limits) -> int:
        """CPUs a verification run with ``limits`` may use at run time: ``limits.cpus``, or
        the machine's CPUs (its affinity mask) divided by ``parallel`` when that is more and
        the sandbox does not hold a job to ``limits.cpus`` (its ``isolation["cpus"]`` is
        ``"none"``, the default). Example: ``-j 1`` on a 2-CPU machine, host sandbox: 2."""
        own = int(limits.cpus)
        if (self.sandbox.isolation or {}).get("cpus", "none") != "none":
            return own
        machine = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        return max(own, machine // self.parallel)

    def drain(self) -> None:
        """Start no more jobs; the running ones finish and are recorded (a batch worker's
        answer to the spot interruption notice). Safe from a signal handler."""
        self._draining.set()

    @property
    def draining(self) -> bool:
        """True once :meth:`drain` was called."""
        return self._draining.is_set()

    def run(self, jobs: list[Job], log: RecordLog, judge: Callable[[Job, VerifierResult], tuple[str, str]],
            progress: Callable[[dict], None] | None = None) -> list[dict]:
        """Run ``jobs``, appending one record per job to ``log``.

        Args:
            jobs: the jobs (duplicates by key are run once).
            log: the run's :class:`RecordLog` (already-present keys are resumed).
            judge: benchmark callback turning the verifier's reading into the final
                ``(verdict, reason)`` (e.g. a failed smoke test -> ``rejected``).
            progress: called with each new record (for a progress bar).

        Returns:
            The records of ``jobs`` in job order (one per distinct key).
        """
        self.outputs = OutputStore(log.path.parent / OUTPUTS)
        keyed: dict[str, Job] = {}
        toolchain = Fingerprint(self.toolchain.fingerprint)  # read once for every job's keys
        for job in jobs:
            keyed.setdefault(job.key(toolchain, self.limits), job)
        self.stats.jobs = len(keyed)
        done = log.done
        todo: dict[str, list[tuple[str, Job]]] = {}  # verification key -> jobs sharing it
        for key, job in keyed.items():
            if key in done:
                self.stats.resumed += 1
                if progress:
                    progress(done[key])
                continue
            todo.setdefault(job.verification_key(toolchain, self.limits), []).append((key, job))
        # one verification per key, judged as the gold's when a gold candidate shares it
        # (a crash on the gold's text is the kit's side: derive()); so is a cache entry
        first = {v: next((j for _, j in todo[v] if j.candidate.get("origin") == "gold"), todo[v][0][1]) for v in todo}
        for vkey in list(todo) if self.cache else ():
            cached = self.cache.get(vkey)
            if cached is None or not self._trusted(vkey, first[vkey], cached, judge):
                continue
            for key, job in todo.pop(vkey):
                self.stats.cached += 1
                self._emit(log, with_identity(cached, key, job), progress)
        if todo:
            self._run_pending(todo, first, log, judge, progress)
        return [log.records[k] for k in keyed if k in log.records]

    def _trusted(self, vkey: str, job: Job, cached: dict, judge) -> bool:
        """A cache entry is used only when its verdict and goal counts are the ones its
        stored tool output gives with the current parser and judge (:func:`derive`, with
        the job a run would judge the verification as); its output is then copied beside
        the run's records. Otherwise the entry is named in the cache's problems and the
        job runs again."""
        why = None
        out = cached.get("tool_output")
        if job.precheck is None and not out:
            why = "it keeps no tool output to re-derive its verdict from"
        else:
            try:
                data = self.cache.outputs.read_bytes(out["sha256"]) if out else None
                proc = self.cache.outputs.decode(out["sha256"], data) if out else None
                verdict, _, result = derive(self.verifier, job, proc, judge)
                goals = result.goals.to_json() if result and result.goals else None
                if verdict != cached["verdict"] or (goals != cached.get("goals") and job.precheck is None):
                    why = f"its verdict {cached['verdict']} is not the {verdict} its tool output gives"
                elif out and not self.outputs.has(out["sha256"]):
                    self.outputs.write_bytes(out["sha256"], data)  # the file just checked, as is
            except (OSError, ValueError) as exc:
                why = f"its tool output cannot be read ({exc})"
        if why:
            self.cache.problems.append(f"cache entry {vkey[:12]}: ignored, the job re-runs: {why}")
            return False
        return True

    def _emit(self, log: RecordLog, record: dict, progress) -> None:
        log.append(record)
        if progress:
            progress(record)

    def _run_pending(self, todo: dict, first: dict, log, judge, progress) -> None:
        pool = ThreadPoolExecutor(max_workers=self.parallel, thread_name_prefix="verikit-job")
        # Longest first (input size as the estimate of proof effort) so that with -j N the
        # slowest job does not start last and leave the other slots idle.
        order = sorted(todo, key=lambda v: -sum(len(t) for t in todo[v][0][1].files.values()))
        # Task runs first, -j at a time: otherwise a job waits idle while another job makes
        # its task's run (the jobs of one task come together in this order).
        tasks: dict[str, tuple[Job, str]] = {}
        for vkey in order:
            for name in sorted(first[vkey].task_run or {} if first[vkey].precheck is None else {}):
                tasks.setdefault(self._task_file_spec(first[vkey], name)[0], (first[vkey], name))
        pending = {pool.submit(self._task_run_ahead, job, name): None for job, name in tasks.values()}
        pending.update({pool.submit(self._execute, vkey, first[vkey], judge): vkey for vkey in order})
        try:
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    vkey = pending.pop(fut)
                    try:
                        result = fut.result()
                    except Drained:
                        continue
                    if vkey is None:  # a task run: its files wait in self._task_runs for the jobs
                        continue
                    for key, job in todo[vkey]:  # the run directory first: the cache is only a speed-up
                        record = with_identity(result, key, job)
                        if record["verdict"] == "infra_error":
                            self.stats.infra_error += 1
                        self._emit(log, record, progress)
                    if self.cache:
                        self.cache.put(vkey, result)  # a failure is kept in cache.problems, never raised
                        if result.get("tool_output") and result["verdict"] != "infra_error":
                            try:
                                self.cache.outputs.copy_from(self.outputs, result["tool_output"]["sha256"])
                            except (OSError, ValueError) as exc:
                                self.cache.problems.append(f"result cache {self.cache.root}: output not written ({exc})")
        except BaseException:
            self._stopping.set()  # no job starts and none is retried from now on
            for fut in pending:
                fut.cancel()
            self.sandbox.cancel()
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _execute(self, vkey: str, job: Job, judge) -> dict:
        """Run one verification (with infra retries) and return its record."""
        if job.precheck is not None:
            verdict, reason = job.precheck
            return self._record(vkey, job, verdict, reason, None, None, [], attempts=0)
        if self._draining.is_set():
            raise Drained()
        gated, gate_files = self._gate(vkey, job, judge)
        if gated is not None:
            return gated
        argv, env, collect, carried = verification_command(self.verifier, job.options, gate_files)
        limits = job.limits or self.limits
        given, tail, more = self.verifier.ahead(job.files, job.options, limits)
        argv, collect, carried = [*argv, *tail], [*collect, *more], {**given, **carried}
        env = {**env, CPUS_ENV: str(self.job_cpus(limits))}
        attempts = 0
        while True:
            asked = _UNASKED  # the follow-up of this attempt's run, once asked
            if self._stopping.is_set():
                raise Stopped("the run is stopping")
            attempts += 1
            with self._lock:
                self.stats.verifier_runs += 1
                self.stats.ran += attempts == 1
            try:
                proc = self.sandbox.run(argv, files={**self.shared_files, **job.files, **carried}, env=env,
                                        collect=collect, limits=limits)
            except SandboxError as exc:  # our side failed (e.g. a worker died): infra_error, retried
                proc = ProcResult(argv=list(argv), returncode=None, start_error=f"sandbox: {exc}")
            # The sandbox's own ending (did not start, wall-time, memory) is mapped here,
            # once; the verifier reads only runs that came to their own end.
            if self._stopping.is_set():  # killed by the stop: its result is not a verdict
                raise Stopped("the run is stopping")
            ended = termination(proc, self.verifier.name)
            if job.task_run and ended is None:  # the run came to its own end: add the task's files (they win)
                proc.files = {**proc.files, **self._task_run(job)}
            try:
                first = ended or self.verifier.parse(proc, job.options)
            except Exception:  # noqa: BLE001  # derive() below makes it the candidate's invalid
                break
            if first.verdict != "infra_error" or attempts > self.retries:
                break
            if ended is None and proc.start_error is None:
                asked = self._followup_spec(job, proc)
                if asked is not None:
                    break  # what this run alone reads is not the verdict: its follow-up run decides
            self._stopping.wait(0.5 * attempts)
        second = None
        if ended is None and proc.start_error is None:
            files, second = self._followup(job, self._followup_spec(job, proc) if asked is _UNASKED else asked, env)
            proc.files = {**proc.files, **files}
        verdict, reason, result = derive(self.verifier, job, proc, judge)
        return self._record(vkey, job, verdict, reason, result, proc, argv, attempts=attempts, followup=second)

    def _task_run(self, job: Job) -> dict[str, bytes]:
        """The files collected by ``job.task_run``'s runs: one run per file (so that a file
        several jobs share, e.g. one of the task alone, is made once even when the job's
        other task files differ), merged in the file names' order."""
        out: dict[str, bytes] = {}
        for name in sorted(job.task_run or {}):
            out.update(self._task_file_run(job, name))
        return out

    def _task_run_ahead(self, job: Job, name: str) -> None:
        """Make the run of task file ``name`` before the jobs that read it (none once the run
        is draining: a task run is made for jobs, and no job starts then)."""
        if not self._draining.is_set():
            self._task_file_run(job, name)

    def _task_file_spec(self, job: Job, name: str) -> tuple[str, list[str], dict, list[str], dict]:
        """``(key, argv, env, collect, files)`` of the run of task file ``name`` of
        ``job.task_run``: the verifier's ``task_command``, the file, and the content key of
        both (the file, argv and env)."""
        argv, env, collect = self.verifier.task_command(job.options)
        files = {name: job.task_run[name]}
        return sha256_text(canonical_json({"files": files, "argv": list(argv), "env": env})), argv, env, collect, files

    def _task_file_run(self, job: Job, name: str) -> dict[str, bytes]:
        """The files collected by the run of task file ``name`` of ``job.task_run``, made
        once for each distinct (file, command) and shared by the jobs that name it (a job
        waits while another makes it); a run already in the result cache (same toolchain and limits) is read
        from it, and a new one is put there. The command is the verifier's ``task_command(options)`` (only
        what a task run reads: jobs whose other options differ, e.g. a gold and a candidate
        mode, share it; by default the job's own command). A run that did not start is
        not kept (the next job tries again) and gives no files; nor does a run the sandbox
        ended (wall time, memory) or that exited non-zero (kept: it is not tried again):
        the benchmark's judge then reads "not run", never a partial output."""
        key, argv, env, collect, files = self._task_file_spec(job, name)
        with self._lock:
            lock = self._task_locks.setdefault(key, threading.Lock())
        with lock:
            if key in self._task_runs:
                return self._task_runs[key]
            # in the result cache, keyed like a job: its content, the toolchain, the limits
            cache_key = sha256_text(canonical_json({"task_run": key, "toolchain": self.toolchain.fingerprint,
                                                    "limits": self.limits.to_json()}))
            proc = self.cache.get_task_run(cache_key) if self.cache else None
            if proc is None:
                if self._stopping.is_set():
                    raise Stopped("the run is stopping")
                with self._lock:
                    self.stats.task_runs += 1
                try:
                    proc = self.sandbox.run(argv, files={**self.shared_files, **files},
                                            env={**env, CPUS_ENV: str(self.job_cpus(self.limits))},
                                            collect=collect, limits=self.limits)  # the run's: it is the task's
                except SandboxError:
                    return {}
                if self._stopping.is_set():
                    raise Stopped("the run is stopping")
                if proc.start_error is not None:
                    return {}
                if self.cache:
                    self.cache.put_task_run(cache_key, proc)
            ended = termination(proc, self.verifier.name) is not None or proc.returncode != 0
            self._task_runs[key] = {} if ended else dict(proc.files)
            return self._task_runs[key]

    def _gate(self, vkey: str, job: Job, judge) -> tuple[dict | None, dict[str, bytes] | None]:
        """``(record, files)``: the record of ``job`` from the verifier's gate run when the
        judge's verdict on it is final (:data:`GATE_FINAL`, see the module docstring), else None (the
        verification runs); the gate run's files (with the job's task run: the same task
        run as the verification's) when it came to its own end, for the verifier's
        ``command_after_gate``, else None."""
        spec = self.verifier.gate(job.options)
        if spec is None:
            return None, None
        argv, env, collect = spec
        env = {**env, CPUS_ENV: str(self.job_cpus(job.limits or self.limits))}
        with self._lock:
            self.stats.verifier_runs += 1
        try:
            proc = self.sandbox.run(argv, files={**self.shared_files, **job.files}, env=env, collect=collect,
                                    limits=job.limits or self.limits)
        except SandboxError:
            return None, None
        if self._stopping.is_set():
            raise Stopped("the run is stopping")
        if termination(proc, self.verifier.name) is not None:
            return None, None
        if job.task_run:
            proc.files = {**proc.files, **self._task_run(job)}
        verdict, reason, result = derive(self.verifier, job, proc, judge)
        if verdict not in GATE_FINAL:
            return None, dict(proc.files)
        with self._lock:
            self.stats.gated += 1
            self.stats.ran += 1
        return self._record(vkey, job, verdict, reason, result, proc, argv, attempts=1), None

    def _followup_spec(self, job: Job, proc: ProcResult) -> tuple | Exception | None:
        """The verifier's follow-up of ``job`` after ``proc``, asked once per run: its
        ``(files, argv, collect)``, None (it asks for none), or the exception it raised
        (:meth:`_followup` records it). Asked in the retry loop too: a first run that reads
        ``infra_error`` and asks for a follow-up (Rocq's first phase, until its full check
        ran) is not retried."""
        try:
            return self.verifier.followup(job.files, proc, job.options)
        except Exception as exc:  # noqa: BLE001 - the candidate's reading, never the run's end
            return exc

    def _followup(self, job: Job, spec, env: dict) -> tuple[dict[str, bytes], ProcResult | None]:
        """The follow-up run of ``job`` (``spec``: :meth:`_followup_spec`; none when it is
        None): its files as :func:`~harness.model.followup_files`, and the run (None when
        none was made: its time is the job's too, see :meth:`_record`).
        An exception while making it, or a sandbox failure, is recorded in its ``ended``
        (the verifier's parse decides what that means for the candidate)."""
        if isinstance(spec, Exception):
            return followup_files({}, None, f"the kit could not make the follow-up run "
                                            f"({type(spec).__name__}: {spec})"), None
        if spec is None:
            return {}, None
        files, argv, collect = spec
        if self._stopping.is_set():
            raise Stopped("the run is stopping")
        with self._lock:
            self.stats.followups += 1
        try:
            second = self.sandbox.run(argv, files={**self.shared_files, **job.files, **files}, env=env,
                                      collect=collect, limits=job.limits or self.limits)
        except SandboxError as exc:
            return followup_files(files, None, f"sandbox: {exc}"), None
        if self._stopping.is_set():
            raise Stopped("the run is stopping")
        return followup_files(files, second), second

    def _record(self, vkey, job: Job, verdict, reason, result: VerifierResult | None, proc, argv, attempts,
                followup: ProcResult | None = None) -> dict:
        """The job's record. ``timings``: the job's run and its follow-up run (``followup``)
        together (wall and CPU seconds added, the larger peak memory), the follow-up's wall
        also as ``followup_wall_s``; task runs, shared by a task's jobs, are not in it."""
        log, output = "", None
        if proc is not None:
            log = (proc.stdout + ("\n[stderr]\n" + proc.stderr if proc.stderr else ""))[-LOG_TAIL_CHARS:]
            output = self.outputs.put(proc)  # an OSError here is the run's (disk full): not a verdict
        runs = [r for r in (proc, followup) if r is not None]
        return {
            "schema_version": RECORD_SCHEMA_VERSION,
            "key": vkey,
            "verification_key": vkey,
            "benchmark": job.benchmark,
            "benchmark_version": job.benchmark_version,
            "dataset": job.dataset,
            "mode": job.mode,
            "task_id": job.task_id,
            "task_sha256": job.task_sha256,
            "candidate": job.candidate,
            "verdict": verdict,
            "reason": reason,
            "goals": result.goals.to_json() if result and result.goals else None,
            "goal_results": result.goal_results if result else [],
            "vacuous": result.vacuous if result else [],
            "checks": job.checks + (result.checks if result else []),
            # a known defect of the pinned data first: its text does not depend on what a prover
            # found within its time in this run (the metrics list it, and runs are compared)
            **({"task_defect": defect} if (defect := known_defect(job) or (result.task_defect if result else None))
               else {}),
            "verifier": {
                "name": self.verifier.name, "argv": list(argv), "options": job.options,
                "exit_code": proc.returncode if proc is not None else None,
                "messages": result.messages if result else [],
                "extra": result.extra if result else {},
                "log_tail": log,
                "all_goals": bool(self.verifier.all_goals),
            },
            "toolchain": self.toolchain.to_json(),
            "limits": (job.limits or self.limits).to_json(),
            "timings": {
                "wall_s": round(sum(r.wall_s for r in runs), 3),
                "cpu_s": round(sum(r.cpu_s for r in runs), 3),
                "max_rss_mb": max((r.max_rss_mb for r in runs), default=0.0),
                **({"followup_wall_s": round(followup.wall_s, 3)} if followup else {}),
            },
            "attempts": attempts,
            **({"tool_output": output} if output else {}),
            "finished_at": utc_now(),
        }


def known_defect(job: Job) -> str | None:
    """The dataset entry's known defect of the job's task in its mode (``kind: detail``),
    for the pinned revision of a pinned dataset (:meth:`harness.datasets.Dataset.task_defect`);
    None otherwise (a user's own dataset, another revision, a sound task)."""
    from .datasets import DatasetError, entries

    try:  # the kit's entries first: a plugin's are read only for a name the kit does not have
        ds = entries.dataset((job.dataset or {}).get("name") or "")
    except DatasetError:  # a user's own dataset (not registered): no known defect
        return None
    defect = ds.task_defect(job.task_id, job.mode, job.dataset.get("revision"))
    return defect.describe() if defect else None
