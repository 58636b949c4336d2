"""The vocabulary of verikit and its declared interfaces (docs/architecture.md, "Vocabulary").

This module imports nothing else of the package: every other layer builds on it.

Data: :class:`Candidate`, :class:`Limits`, :class:`ProcResult`, :class:`GoalCounts`,
:class:`VerifierResult`, :class:`Job`, the verdicts :data:`VERDICTS`; the run directory's
documents as typed dicts: :class:`Record` (one line of records.jsonl,
``schemas/record.schema.json``) and :class:`Report` (report.json,
``schemas/report.schema.json``), kept equal to their schemas by a test.

Interfaces (what the runner, the executor and the CLI call; nothing probes a module for
optional attributes):

- :class:`Verifier` -- one tool (BenchExec's "tool-info" idea): the command line for a
  job, the version probe (through ``images/toolchains.json``) and the result from the
  finished process. Per-task arguments travel in ``Job.options``.
- :class:`Sandbox` -- where a job runs: argv + input files + :class:`Limits` in,
  :class:`ProcResult` out. The only place that starts processes.
- the benchmark interface, :class:`harness.plugin.Benchmark`, is in :mod:`harness.plugin`
  with the rest of what a plugin supplies.

Termination by the sandbox (could not start, wall-time limit, memory limit) is mapped to
a verdict once, by :func:`termination`, before a verifier reads the output.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any, Protocol, TypedDict, runtime_checkable

#: Every verdict a record can carry (docs/architecture.md, "Vocabulary"). Only ``infra_error`` is retried; it never
#: counts as a model failure.
VERDICTS = ("verified", "failed", "rejected", "timeout", "memout", "invalid", "infra_error")

#: The model name of the gold solution (the dataset's own answer) in every benchmark.
GOLD = "gold"


def sha256_text(text: str | bytes) -> str:
    """sha256 hex digest (64 chars) of a str (encoded as UTF-8) or of bytes."""
    return hashlib.sha256(text.encode("utf-8") if isinstance(text, str) else text).hexdigest()


def utc_now() -> str:
    """The current UTC time as the kit writes it everywhere (records' ``finished_at``,
    run.json, manifests, image and bundle metadata): ISO 8601 to the second with offset,
    e.g. ``2026-11-26T19:12:03+00:00``."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def canonical_json(obj) -> str:
    """Canonical JSON of ``obj``: sorted keys, no whitespace, non-ASCII kept (keys, hashes).

    Raises:
        TypeError: ``obj`` holds a value JSON cannot represent.
    """
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


# ---- the run directory's documents, typed (TypedDict: the JSON objects stay plain dicts,
# written and read as they are, and type checkers see their keys; a dataclass or a pydantic
# model would copy every record twice per run and turn the schema into a second source of
# truth, where here the schema stays the one and tests/test_types.py keeps these equal to it)


class CandidateRef(TypedDict):
    """A record's ``candidate``: who wrote what (the output itself is not in the record)."""

    model: str
    sample: int
    sha256: str
    origin: str


class DatasetRef(TypedDict):
    """A record's ``dataset``: the pinned dataset's name (or a local dataset's) and its revision."""

    name: str
    revision: str


class _GoalsRequired(TypedDict):
    proved: int
    total: int


class Goals(_GoalsRequired, total=False):
    """A record's ``goals`` (or None): proved of total, and the unproved by cause."""

    failed: int
    timeout: int
    unknown: int


class Check(TypedDict):
    """One integrity check of a record: its name, whether it held, and what was seen."""

    name: str
    ok: bool
    detail: str


class _VerifierRunRequired(TypedDict):
    name: str
    argv: list[str]
    options: dict[str, Any]
    exit_code: int | None


class VerifierRun(_VerifierRunRequired, total=False):
    """A record's ``verifier``: the command line, its options and how it ended;
    ``all_goals``: the verifier's ``verified`` means every goal proved (said by the
    verifier, :attr:`Verifier.all_goals`)."""

    messages: list[str]
    extra: dict[str, Any]
    log_tail: str
    all_goals: bool


class _TimingsRequired(TypedDict):
    wall_s: float
    cpu_s: float
    max_rss_mb: float


class Timings(_TimingsRequired, total=False):
    """Wall and CPU seconds and peak memory (MiB) of a job: its run and its follow-up run
    together; ``followup_wall_s`` the follow-up's own wall seconds, when one ran."""

    followup_wall_s: float


class ToolOutput(TypedDict):
    """Where the tool's own output is stored: sha256 of its uncompressed bytes, and their number."""

    sha256: str
    bytes: int


class _RecordRequired(TypedDict):
    schema_version: str
    key: str
    verification_key: str
    benchmark: str
    benchmark_version: str
    dataset: DatasetRef
    mode: str
    task_id: str
    candidate: CandidateRef
    verdict: str
    reason: str
    goals: Goals | None
    checks: list[Check]
    verifier: VerifierRun
    toolchain: dict[str, Any]
    limits: dict[str, Any]
    timings: Timings
    attempts: int
    finished_at: str


class Record(_RecordRequired, total=False):
    """One line of ``records.jsonl``: one job's verdict with everything needed to trust it
    (``schemas/record.schema.json``; the keys here are the schema's, a test checks it)."""

    task_sha256: str
    goal_results: list[dict[str, Any]]
    vacuous: list[str]
    task_defect: str  # the task's own bug (``kind: detail``): the record is kept out of the metrics
    tool_output: ToolOutput


class _ReportRequired(TypedDict):
    schema_version: str
    benchmark: str
    dataset: str
    metrics: dict[str, Any]
    published: dict[str, Any]
    comparison: list[dict[str, Any]]
    toolchains: list[dict[str, Any]]
    infra_errors: int


class Report(_ReportRequired, total=False):
    """``report.json`` (``schemas/report.schema.json``): metrics per mode and model, the
    published figures, the comparison, canaries, notes, the benchmark's sections, a
    reproduction's figures and, for predictions made by ``verikit generate``, the
    generation section (pass@k and fixes per model)."""

    canaries: dict[str, Any]
    bootstrap_seed: int
    notes: list[str]
    sections: dict[str, Any]
    reproduction: dict[str, Any]
    generation: dict[str, Any]


@dataclass(frozen=True)
class Candidate:
    """What is checked for a task: the gold solution or one sample of a model's output.

    Attributes:
        task_id: upstream task id.
        model: model name (``gold`` for the gold solution, ``canary:<name>`` for canaries).
        sample: sample index (0-based) among the model's samples for the task.
        output: the raw text to check.
        origin: where it came from (``gold``, ``bundled:<path>``, ``canary``,
            ``predictions:<file>:<line>``).
        meta: the predictions line's free-form ``meta`` object (e.g. Model-Bench's
            ``fixes``), or None.
    """

    task_id: str
    model: str
    sample: int
    output: str
    origin: str
    meta: dict | None = field(default=None, hash=False)


#: Environment variable of a gate or verification run: the CPUs it may use at run time (an
#: integer; ``harness.executor.Executor.job_cpus``). A command must compute the same whatever
#: it says, only faster: it is in no key.
CPUS_ENV = "VERIKIT_CPUS"


@dataclass(frozen=True)
class Limits:
    """Resource limits for one job.

    Attributes:
        wall_s: wall-clock limit in seconds; the whole process tree is killed at it.
        mem_mb: resident-memory limit in MiB, summed over the process tree.
        cpus: number of CPUs the job may use (passed to tools that parallelise).
        output_bytes: cap on each of stdout and stderr, in bytes; the tree is killed
            when a stream exceeds it and the result is flagged ``output_truncated``.

    Raises:
        ValueError: a limit that is not finite and above 0 (``wall_s`` NaN or infinite
            would disable the wall limit and cannot be written as JSON).
    """

    wall_s: float = 600.0
    mem_mb: int = 4096
    cpus: int = 1
    output_bytes: int = 8 * 1024 * 1024

    def __post_init__(self):
        for name in ("wall_s", "mem_mb", "cpus", "output_bytes"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise ValueError(f"Limits.{name} must be a finite number above 0, not {value!r}")
        # seconds as a float, so that equal limits key a job alike (120 and 120.0 wrote
        # different JSON into the verification key: a cache written by a run that gave an
        # int missed the CLI's, which always gives a float)
        object.__setattr__(self, "wall_s", float(self.wall_s))

    def to_json(self) -> dict:
        """The limits as a JSON-able dict (keys as the attribute names)."""
        return asdict(self)


@dataclass
class ProcResult:
    """Outcome of one sandboxed command.

    Attributes:
        argv: the command that ran.
        returncode: exit status (negative: killed by that signal); None if it never started.
        stdout, stderr: decoded output (UTF-8, errors replaced), each at most
            ``Limits.output_bytes`` long.
        wall_s: elapsed wall time in seconds.
        cpu_s: user+system CPU seconds of the process tree (children included).
        max_rss_mb: peak resident set size of the tree seen by the watchdog, in MiB.
        timed_out: killed at the wall-time limit.
        memout: killed at the memory limit.
        output_truncated: killed because stdout or stderr exceeded the cap.
        files: output files collected from the scratch directory (name -> bytes).
        start_error: why the process could not start (infrastructure problem), or None.
    """

    argv: list[str]
    returncode: int | None
    stdout: str = ""
    stderr: str = ""
    wall_s: float = 0.0
    cpu_s: float = 0.0
    max_rss_mb: float = 0.0
    timed_out: bool = False
    memout: bool = False
    output_truncated: bool = False
    files: dict[str, bytes] = field(default_factory=dict)
    start_error: str | None = None


@dataclass
class GoalCounts:
    """Proof-obligation (VC) counts of one run, as the tool counts them.

    Attributes:
        proved: goals proved (by Qed or a prover).
        total: goals generated, smoke tests excluded.
        failed: goals a prover refuted or that failed outright.
        timeout: goals whose provers all hit the per-goal time/step limit.
        unknown: goals left unproved for another reason (prover answered unknown).
    """

    proved: int = 0
    total: int = 0
    failed: int = 0
    timeout: int = 0
    unknown: int = 0

    def to_json(self) -> dict:
        """The counts as a dict with the attribute names as keys."""
        return asdict(self)


@dataclass
class VerifierResult:
    """A verifier's reading of one run.

    Attributes:
        verdict: one of :data:`VERDICTS` as far as the tool can tell (the benchmark may
            turn it into ``rejected`` after its integrity checks).
        reason: one-line human explanation of the verdict.
        goals: :class:`GoalCounts`, or None when the tool produced no goals (parse error).
        goal_results: per goal ``{"name", "status", "prover", "time_s"}``; at least every
            goal that was not proved.
        vacuous: names of smoke tests that failed (the contract or code is inconsistent).
        messages: error/warning lines worth showing (with file:line when the tool gives it).
        extra: tool-specific details (e.g. counts of Terminating/Unreachable goals);
            recorded. The benchmark's judge may add what it establishes from the tool's
            output (e.g. CASP's ``termination``).
        artifacts: what the tool produced for the benchmark's judge to read (e.g.
            Frama-C's view of the verified file as a dict); not recorded.
        checks: integrity checks made on the tool's output by the benchmark's judge,
            ``[{"name", "ok", "detail"}]``; recorded after the job's own checks.
        task_defect: the task's own bug that the benchmark's judge found in this run
            (e.g. CASP: a task whose contract WP's smoke tests find inconsistent), as
            ``kind: detail``; None when none. Recorded as ``task_defect`` (a known defect
            of the pinned data, from its dataset entry, is recorded instead:
            its text does not depend on the run): the record is kept out of the metrics,
            the candidate is not blamed.
    """

    verdict: str
    reason: str
    goals: GoalCounts | None = None
    goal_results: list[dict] = field(default_factory=list)
    vacuous: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    extra: dict = field(default_factory=dict)
    artifacts: dict = field(default_factory=dict)
    checks: list[dict] = field(default_factory=list)
    task_defect: str | None = None


def termination(proc: ProcResult, tool: str) -> VerifierResult | None:
    """The verdict when the sandbox, not the tool, ended the job: ``infra_error`` (the tool
    did not start), ``timeout`` (killed at the wall-time limit), ``memout`` (killed at the
    memory limit); None when the tool ran to its end and its output must be read.

    The executor applies it before :meth:`Verifier.parse`, so no verifier maps these
    itself. ``tool`` is the name used in the reason.
    """
    if proc.start_error:
        return VerifierResult("infra_error", f"{tool} did not start: {proc.start_error}")
    if proc.timed_out:
        return VerifierResult("timeout", f"{tool} killed at the wall-time limit after {proc.wall_s:.1f} s")
    if proc.memout:
        return VerifierResult("memout", f"{tool} killed at the memory limit ({proc.max_rss_mb:.0f} MiB seen)")
    return None


@dataclass
class Job:
    """One verification job: (task, candidate, toolchain, limits, options).

    Attributes:
        benchmark, benchmark_version: benchmark name and version.
        dataset: ``{"name", "revision"}``.
        mode: benchmark mode (CASP task direction, Model-Bench prompt setting; NTP4VC's
            proof language).
        task_id: upstream task id; task_sha256: hash of the task content.
        candidate: ``{"model", "sample", "sha256", "origin"}``.
        files: files for the verifier, relative path -> text (e.g. ``candidate.c``).
        options: verifier options (from ``Verifier.options``, plus the per-task
            arguments the benchmark adds); part of the key.
        checks: integrity checks made before running, ``[{"name", "ok", "detail"}]``.
        precheck: ``(verdict, reason)`` decided without running the tool (e.g. the
            candidate changed the code it must specify), or None to run it.
        limits: this job's :class:`Limits` when they differ from the run's (e.g. a
            canary that must time out quickly), else None.
        reject: integrity findings that make the verdict ``rejected`` whatever the tool
            says; the tool still runs so its own reading is recorded (the benchmark's
            judge applies it), or None.
        task_run: files that depend on the task alone, never on the candidate (CASP:
            the task's soundness smoke tests ``sound.c``, the task's fixed part ``task.c``
            for its view), or None. The executor makes one run per file, once per run for
            each distinct content, with the verifier's own command, and adds the files
            those runs collected to the output of every job that names them (see
            :class:`harness.executor.Executor`); part of the key.
    """

    benchmark: str
    benchmark_version: str
    dataset: dict
    mode: str
    task_id: str
    task_sha256: str
    candidate: dict
    files: dict[str, str]
    options: dict
    checks: list[dict] = field(default_factory=list)
    precheck: tuple[str, str] | None = None
    limits: Limits | None = None
    reject: str | None = None
    task_run: dict[str, str] | None = None

    def key(self, toolchain, limits: Limits) -> str:
        """The job's key (sha256 hex): :meth:`verification_key` plus the task id and the
        candidate's identity (model, sample, origin), so every (task, candidate) gets its
        own record even when two tasks have byte-identical files (NTP4VC has such pairs).
        ``toolchain``: anything with a ``fingerprint`` (a probed toolchain)."""
        return sha256_text(canonical_json({
            "verification": self.verification_key(toolchain, self.limits or limits),
            "task_id": self.task_id, "model": self.candidate["model"], "sample": self.candidate["sample"],
            "origin": self.candidate["origin"]}))

    def verification_key(self, toolchain, limits: Limits) -> str:
        """The content address of the verification (sha256 hex): benchmark name and
        version, mode, task hash, candidate content hash, files, toolchain fingerprint,
        options, integrity findings and limits. Two candidates with the same text and
        findings share it (one tool run, one judgement). ``task_run`` is in it only
        when the job has one."""
        limits = self.limits or limits
        return sha256_text(canonical_json({
            "benchmark": self.benchmark, "benchmark_version": self.benchmark_version, "mode": self.mode,
            "task_sha256": self.task_sha256, "candidate_sha256": self.candidate["sha256"],
            "files_sha256": {k: sha256_text(v) for k, v in sorted(self.files.items())},
            **({"task_run_sha256": {k: sha256_text(v) for k, v in sorted(self.task_run.items())}}
               if self.task_run else {}),
            "toolchain": toolchain.fingerprint, "options": self.options,
            # the benchmark's integrity findings decide the verdict with the tool's output
            "checks": self.checks, "precheck": self.precheck, "reject": self.reject,
            "limits": {"wall_s": limits.wall_s, "mem_mb": limits.mem_mb, "cpus": limits.cpus},
        }))


def candidate_ref(cand: Candidate) -> dict:
    """The ``Job.candidate`` dict of a candidate: model, sample, sha256 of the output, origin."""
    return {"model": cand.model, "sample": cand.sample, "sha256": sha256_text(cand.output), "origin": cand.origin}


# ------------------------------------------------------------------------- interfaces


@runtime_checkable
class Task(Protocol):
    """One benchmark item. Every benchmark's task type has at least these attributes."""

    task_id: str

    @property
    def sha256(self) -> str:
        """Hash of the task's content (sha256 hex): part of every job key."""


class Verifier:
    """One tool (BenchExec's tool-info idea, ``benchexec.tools.template.BaseTool2``: every
    optional hook has a default here). Implementations subclass it: ``harness.verifiers.*``,
    and a plugin's (entry point group ``verikit.verifiers``); ``verikit check-verifier NAME``
    (:func:`harness.verifiers.check.check_verifier`) checks one.

    A subclass sets ``name``, ``toolchain`` and ``version`` and implements :meth:`options`,
    :meth:`command` and :meth:`parse`; the other hooks have defaults that do nothing, and
    the executor calls every hook of every verifier (none is probed for).

    Attributes:
        name: the verifier's name (registry key).
        toolchain: the toolchain of ``images/toolchains.json`` whose tools it runs.
        version: the module's own version, part of every verification key (a parser
            change invalidates cached results); ``"0"`` until a subclass says.
        all_goals: its ``verified`` means every goal proved (recorded as
            ``verifier.all_goals``; ``validate`` then flags a verified record with goals
            left unproved). Default False.
    """

    name: str = ""
    toolchain: str = ""
    version: str = "0"
    all_goals: bool = False

    def prepare(self, sandbox, probed) -> dict:
        """Files every job of a run gets (e.g. a prover configuration), made once in
        ``sandbox`` (a :class:`harness.sandbox.Sandbox`): ``{relative path: str | bytes}``. Default: none."""
        return {}

    def options(self, probed, *, smoke: bool = False, cpus: int = 1) -> dict:
        """Verifier options of a run (JSON-able; part of each job key)."""
        raise NotImplementedError(f"{type(self).__name__}.options")

    def command(self, options: dict) -> tuple[list[str], dict, list[str]]:
        """``(argv, env, output files to collect)`` for a job with these options."""
        raise NotImplementedError(f"{type(self).__name__}.command")

    def parse(self, proc: ProcResult, options: dict | None = None) -> VerifierResult:
        """The tool's reading of a finished run (the sandbox did not end it: see
        :func:`termination`)."""
        raise NotImplementedError(f"{type(self).__name__}.parse")

    def task_command(self, options: dict) -> tuple[list[str], dict, list[str]]:
        """The command of a job's task run (``Job.task_run``: work that depends on the task
        alone, made once per task and kept in the result cache). Default: :meth:`command`."""
        return self.command(options)

    def gate(self, options: dict) -> tuple[list[str], dict, list[str]] | None:
        """A cheap first run of a candidate whose ``rejected`` and ``invalid`` verdicts are
        final (CASP's view of the candidate before any proof), as ``(argv, env, collect)``;
        None (the default): no gate. A gate must read the candidate's input as the
        verification does, so that an input it rejects (``invalid``) the verification
        would reject too; any other verdict of the gate leads to the verification."""
        return None

    def command_after_gate(self, options: dict, gate_files: dict[str, bytes]) -> tuple[list[str], dict, list[str]]:
        """The verification's command when :meth:`gate` ran to its own end and did not
        decide: ``gate_files`` are what it collected, with the job's task run. A verifier
        may leave out of the verification what the gate's output shows cannot decide the
        verdict (Frama-C: the smoke tests that cannot decide it); its :meth:`parse` then reads from the
        stored command what ran. Default: :meth:`command`."""
        return self.command(options)

    def carry_from_gate(self, options: dict, gate_files: dict[str, bytes]) -> dict[str, bytes]:
        """Files of the gate's output that the verification after it (:meth:`command_after_gate`)
        gets in its directory instead of making them again, when the gate made them with the
        same command on the same files (Frama-C: the requires probe's log); the verification
        collects them as its own, so its stored output holds them and the verdict stays
        re-derivable. ``{relative path: bytes}``; default: none."""
        return {}

    def ahead(self, files: dict[str, str], options: dict, limits: Limits) -> tuple[dict, list[str], list[str]]:
        """Work of the :meth:`followup` that the verification's run makes ahead, on a guess
        made from the job's ``files`` and ``options`` before the run (TLC: the behaviour
        harness's tests' check, its mapping guessed from names): ``(files it gets besides
        the job's, arguments appended to its command, files it collects besides the
        command's)``. The verifier's follow-up and parse use what ran ahead only where the
        follow-up would have made the same run; a wrong guess costs time, never the
        verdict. Default: ``({}, [], [])``."""
        return {}, [], []

    def followup(self, files: dict[str, str], proc: ProcResult, options: dict) -> tuple[dict, list, list] | None:
        """A second run in the same sandbox decided from the first run's output (TLC's
        invariant probe): ``(files, argv, collect)``, or None (the default): none. The
        executor runs it when the first run came to its own end and adds its files, its
        output and how it ended to the first run's files under :data:`FOLLOWUP` (see
        :func:`followup_files`), so ``parse`` reads both and the verdict stays re-derivable."""
        return None

    def state(self) -> dict:
        """What :meth:`prepare` read in the sandbox that :meth:`parse` needs (Rocq: the
        library's axioms), written to run.json (``verifier_state``). Default: ``{}``."""
        return {}

    def restore(self, state: dict) -> None:
        """Take back a run's :meth:`state` before records are judged outside the run's
        sandbox (``validate``, ``batch collect``), so that a run and its validation judge
        with the same data. Default: nothing to take back."""


#: Prefix of a follow-up run's files in the first run's ``ProcResult.files``.
FOLLOWUP = "followup/"


def followup_files(given: dict[str, str], proc: ProcResult | None, error: str | None = None) -> dict[str, bytes]:
    """What a follow-up run leaves in the first run's files: the files it was given, the
    files it collected, ``stdout``/``stderr``, and ``ended``: ``exit <status>``; or, when it
    did not come to its own end, the sandbox's verdict and reason (``timeout: ...``,
    ``memout: ...``, ``infra_error: ...``: :func:`termination`), or ``error: ...`` (it
    could not be made or started). All under :data:`FOLLOWUP`."""
    out = {FOLLOWUP + k: v.encode() for k, v in given.items()}
    ended = None
    if proc is not None:
        out.update({FOLLOWUP + k: v for k, v in proc.files.items()})
        out[FOLLOWUP + "stdout"] = proc.stdout.encode()
        out[FOLLOWUP + "stderr"] = proc.stderr.encode()
        ended = termination(proc, "the follow-up run")
    line = (f"error: {error}" if error else f"{ended.verdict}: {ended.reason}" if ended
            else f"exit {proc.returncode}")
    out[FOLLOWUP + "ended"] = line.encode()
    return out



