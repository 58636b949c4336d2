"""Recorded real tool runs for the rule matrix: recorded once with the real tools, replayed
in every session through the kit's own executor, parser and judge.

A *family* is one rule matrix (the cases of one test module, e.g. ``casp-integrity``). Its
recording, under ``tests/recorded/runs/<family>/``, holds what the real tool did with each
command the kit started while judging the family's candidates:

- ``calls.jsonl``: one line per distinct command (a ``sandbox.run`` call): its key (sha256
  of the canonical JSON of argv, the sha256 of each file given, env, the files collected
  and the limits), argv, and the sha256 of its output;
- ``outputs/``: those outputs, as the run directory keeps them
  (:class:`harness.results.OutputStore`: exit status, stdout, stderr, the collected
  files, the sandbox's own ending);
- ``jobs.jsonl``: every job judged (the :class:`harness.model.Job` in full) with the
  verdict and reason the kit gave when it was recorded (the freshness test re-runs a
  sample of them live, ``tests/test_freshness.py``);
- ``provenance.json``: the probed toolchain (tool versions and binary hashes, image and
  digest), the sandbox, the kit's version and commit, the date and the recorder's command.

Replay (the default): :class:`ReplaySandbox` answers each command from the recording, so
the executor (gate, task run, verification, follow-up), the verifier's parser and the
benchmark's judge run unchanged on the real tool's output, as ``verikit validate``
re-derives a verdict from a stored output. A command the recording does not hold (the kit
now sends other files, another command line or other limits) fails the test with the
recorder's command: a recording never answers a command it did not see.

Record (``VERIKIT_RECORD=1``, set by ``scripts/record.py``): :class:`RecordingSandbox` runs
each command with the real tool (host or container) and keeps its output; the family's
recording is replaced as a whole when its module's tests end.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import hashlib
import json
import os
import shutil
import tempfile
import threading
from pathlib import Path

from harness.model import CPUS_ENV, Job, Limits, ProcResult, canonical_json
from harness.sandbox import Sandbox

ROOT = Path(__file__).parent / "recorded" / "runs"
RECORDER = "python scripts/record.py"


def recording_mode() -> bool:
    """True when the recorder runs the tests (``VERIKIT_RECORD=1``): real tools, new recordings."""
    return os.environ.get("VERIKIT_RECORD") == "1"


class RecordingMissing(LookupError):
    """The recording holds no output for a command the kit now starts (or no recording
    exists): the message names the family and the recorder's command to refresh it."""


def call_key(argv, files, env, collect, limits: Limits) -> str:
    """sha256 (hex) of what decides a tool's output: argv, each file's sha256, env, the
    names collected and the limits. The CPUs a run may use (``harness.model.CPUS_ENV``)
    decide how long it takes, not what it computes (the executor's contract, tested live in
    ``tests/test_executor.py``): they are left out, so that a recording replays on a
    machine with another number of CPUs and at another ``-j``."""
    def digest(v) -> str:
        return hashlib.sha256(v if isinstance(v, bytes) else str(v).encode()).hexdigest()

    return hashlib.sha256(canonical_json({
        "argv": [str(a) for a in argv], "files": {k: digest(v) for k, v in sorted((files or {}).items())},
        "env": dict(sorted((k, v) for k, v in (env or {}).items() if k != CPUS_ENV)), "collect": sorted(collect or ()),
        "limits": dataclasses.asdict(limits)}).encode()).hexdigest()


def job_to_json(job: Job) -> dict:
    """A job as JSON (``Job(**job_from_json(d))`` gives it back)."""
    d = dataclasses.asdict(job)
    d["limits"] = dataclasses.asdict(job.limits) if job.limits else None
    return d


def job_from_json(d: dict) -> Job:
    """The :class:`Job` of :func:`job_to_json`."""
    d = dict(d)
    d["limits"] = Limits(**d["limits"]) if d.get("limits") else None
    d["precheck"] = tuple(d["precheck"]) if d.get("precheck") else None
    return Job(**d)


class Recording:
    """One family's recording (see the module docstring), read from or written to ``root``.

    Raises:
        RecordingMissing: (on read) the family was never recorded.
    """

    def __init__(self, family: str, root: Path | None = None):
        from harness.results import OutputStore

        self.family = family
        self.root = Path(root) if root is not None else ROOT / family
        self.outputs = OutputStore(self.root / "outputs")
        self._calls: dict[str, str] | None = None

    @property
    def refresh(self) -> str:
        """The command that records this family anew."""
        return f"{RECORDER} {self.family}"

    def provenance(self) -> dict:
        """``provenance.json``. Raises RecordingMissing when there is none."""
        path = self.root / "provenance.json"
        if not path.is_file():
            raise RecordingMissing(f"no recording of {self.family} ({path}): make it with `{self.refresh}`")
        return json.loads(path.read_text(encoding="utf-8"))

    def calls(self) -> dict[str, str]:
        """``{call key: output sha256}`` of ``calls.jsonl``."""
        if self._calls is None:
            self.provenance()
            lines = (self.root / "calls.jsonl").read_text(encoding="utf-8").splitlines()
            self._calls = {c["key"]: c["output"] for c in map(json.loads, lines)}
        return self._calls

    def jobs(self) -> list[dict]:
        """``jobs.jsonl``: ``[{"job", "limits", "verdict", "reason", "test"}]`` in recording
        order (``limits``: the run's, which a job without its own runs with)."""
        self.provenance()
        return [json.loads(line) for line in (self.root / "jobs.jsonl").read_text(encoding="utf-8").splitlines()]

    def toolchain(self):
        """The probed toolchain the recording was made with (fingerprint checked)."""
        from harness.toolchains import ProbedToolchain

        return ProbedToolchain.from_json(self.provenance()["toolchain"])

    def output(self, key: str, argv) -> ProcResult:
        """A fresh copy of the tool's output for call ``key``.

        Raises:
            RecordingMissing: the recording holds no such call.
            ValueError: the stored output was edited (its sha256 is not its name).
        """
        sha = self.calls().get(key)
        if sha is None:
            raise RecordingMissing(
                f"the recording {self.root} holds no output for `{' '.join(map(str, argv))[:300]}` with these "
                f"files and limits (the kit now starts another command than was recorded): refresh it with "
                f"`{self.refresh}`")
        return self.outputs.get(sha)


class ReplaySandbox(Sandbox):
    """A sandbox that answers every command from a :class:`Recording` (see the module
    docstring); it presents the recorded sandbox's name, image and isolation, so the
    records it gives read as the recorded run's."""

    def __init__(self, recording: Recording):
        self.recording = recording
        sb = recording.provenance()["sandbox"]
        self.name = sb["name"]
        self.host_tools = sb.get("image") is None  # a recording of the host's own tools
        self.image = sb.get("image")
        self.image_digest = sb.get("image_digest")
        self.isolation = sb.get("isolation")
        reads = recording.provenance().get("reads") or {}
        if reads:  # a container's files read by the probe (the image's toolchain manifest)
            self.read_file = reads.get

    def run(self, argv, *, files=None, limits: Limits = Limits(), collect=(), env=None) -> ProcResult:
        """The recorded output of this exact command. Raises RecordingMissing."""
        return self.recording.output(call_key(argv, files, env, collect, limits), argv)

    def cancel(self) -> None:
        """Nothing runs."""

    def close(self) -> None:
        """Nothing to release."""


class RecordingSandbox:
    """Wraps a real sandbox: every command runs in it and its output is kept for the
    family's new recording (written by :meth:`save`). Other attributes are the real
    sandbox's."""

    def __init__(self, inner, family: str, verifier: str):
        from harness.results import OutputStore

        self.inner = inner
        self.family = family
        self.verifier = verifier
        self.staging = Path(tempfile.mkdtemp(prefix=f"record-{family}-"))
        self.outputs = OutputStore(self.staging / "outputs")
        self.calls: dict[str, dict] = {}
        self.jobs: list[dict] = []
        self.reads: dict[str, str | None] = {}
        self.probed = None  # the toolchain the family's jobs ran with (set by the first run)
        self._lock = threading.Lock()

    def __getattr__(self, name):
        attr = getattr(self.inner, name)
        if name == "read_file":  # what the probe reads from an image is kept too
            def read_file(path: str):
                raw = attr(path)
                self.reads[path] = raw.decode() if isinstance(raw, bytes) else raw  # kept as JSON text
                return self.reads[path]
            return read_file
        return attr

    def run(self, argv, *, files=None, limits: Limits = Limits(), collect=(), env=None) -> ProcResult:
        """Run the command in the real sandbox and keep its output."""
        proc = self.inner.run(argv, files=files, limits=limits, collect=collect, env=env)
        out = self.outputs.put(proc)
        with self._lock:
            self.calls[call_key(argv, files, env, collect, limits)] = {"argv": [str(a) for a in argv],
                                                                      "output": out["sha256"]}
        return proc

    def keep_jobs(self, jobs: list[Job], records: list[dict], limits: Limits) -> None:
        """Keep the jobs of one run (made with the run's ``limits``) with the verdicts the
        kit gave them (``records``: the run's records; jobs matched by mode, task,
        candidate model and sample), and the test that ran them."""
        test = os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0]
        by_id = {(r["mode"], r["task_id"], r["candidate"]["model"], r["candidate"]["sample"]): r for r in records}
        with self._lock:
            for job in jobs:
                r = by_id.get((job.mode, job.task_id, job.candidate["model"], job.candidate["sample"]))
                if r is not None:
                    self.jobs.append({"job": job_to_json(job), "limits": dataclasses.asdict(limits),
                                      "verdict": r["verdict"], "reason": r["reason"], "test": test})

    def save(self, probed=None) -> Path:
        """Replace the family's recording with what was run (``probed``: the toolchain
        probed in the real sandbox, default the one its jobs ran with). Returns its
        directory. Raises RuntimeError when no job ran."""
        from harness.resources import kit_info

        probed = probed or self.probed
        if probed is None or not self.jobs:
            raise RuntimeError(f"the recorder ran no job of {self.family}: nothing to record")
        sb = self.inner
        provenance = {
            "family": self.family,
            "recorded_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "recorder": f"{RECORDER} {self.family}",
            "kit": kit_info(),
            "sandbox": {"name": sb.name, "image": getattr(sb, "image", None),
                        "image_digest": getattr(sb, "image_digest", None),
                        "isolation": getattr(sb, "isolation", None)},
            "toolchain": probed.to_json(),
            "reads": self.reads,
            "verifier": self.verifier,
            "tests": sorted({j["test"] for j in self.jobs}),
            "calls": len(self.calls),
            "jobs": len(self.jobs),
        }
        (self.staging / "provenance.json").write_text(json.dumps(provenance, indent=2, sort_keys=True) + "\n")
        (self.staging / "calls.jsonl").write_text("".join(
            json.dumps({"key": k, **v}, sort_keys=True) + "\n" for k, v in sorted(self.calls.items())))
        seen, lines = set(), []
        for j in self.jobs:  # a job judged by two tests of the family is kept once
            line = json.dumps(j, sort_keys=True)
            ident = json.dumps([j["job"], j["limits"]], sort_keys=True)
            if ident not in seen:
                seen.add(ident)
                lines.append(line + "\n")
        (self.staging / "jobs.jsonl").write_text("".join(lines))
        dest = ROOT / self.family
        if dest.exists():
            shutil.rmtree(dest)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(self.staging, dest)
        shutil.rmtree(self.staging, ignore_errors=True)
        return dest



@contextlib.contextmanager
def family_sandbox(family: str, verifier: str, live):
    """The sandbox a family's tests run their jobs in: a :class:`ReplaySandbox` of its
    recording, or, in record mode, ``live()`` (the real sandbox) wrapped in a
    :class:`RecordingSandbox`, whose recording is saved when the block ends. In record
    mode every :class:`~harness.executor.Executor` run in that sandbox keeps its jobs and
    verdicts (for the freshness test) and the toolchain it ran with. Use a fresh result
    cache for the family's runs (a cached job starts no command, so nothing is recorded).

    Raises:
        RecordingMissing: replay of a family never recorded.
    """
    if not recording_mode():
        yield ReplaySandbox(Recording(family))
        return
    from harness.executor import Executor

    sandbox = RecordingSandbox(live(), family, verifier)
    run = Executor.run

    def keeping(self, jobs, log, judge, progress=None):
        records = run(self, jobs, log, judge, progress)
        if self.sandbox is sandbox:
            sandbox.probed = sandbox.probed or self.toolchain
            sandbox.keep_jobs(jobs, records, self.limits)
        return records

    Executor.run = keeping
    try:
        yield sandbox
    finally:
        Executor.run = run
        sandbox.inner.close()
    sandbox.save()


@contextlib.contextmanager
def pipeline_sandbox(sandbox):
    """Every run of the kit's pipeline (``verikit run`` in-process, ``harness.runner``) in
    the block uses ``sandbox`` (a family's, :func:`family_sandbox`) instead of opening its
    own; the image it reports is the recorded (or real) sandbox's."""
    from harness.runner import pipeline

    opened = pipeline.open_sandbox

    @contextlib.contextmanager
    def given(plan, log):
        yield sandbox, getattr(sandbox, "image", None)

    pipeline.open_sandbox = given
    try:
        yield sandbox
    finally:
        pipeline.open_sandbox = opened
