"""Hyperkernel verifier (OSVBench): checks a candidate state-machine specification of one
system call against Hyperkernel's implementation, with Z3. The tool only: the command of
a job, and the reading of its output (also used to rescore the published log). The job
loop, pass@k, the job image and the benchmark's tasks live in
:mod:`harness.benchmarks.osvbench`.

Paper: OSVBench (Li et al., arXiv:2504.20964), section 4.1; upstream code of
lishangyu-hkust/OSVBench (``spec_util.py``, ``verify.sh``, ``Dockerfile``,
``run_spec_check.sh``, ``stats.py``; read at commits 57e3bff8 / 3247b75e) and Hyperkernel's
``hv6/Makefrag`` (uw-unsat/hyperkernel). Toolchain (published, ``images/toolchains.json``):
Python 2.7, LLVM 5.0, Z3 4.5.0, all inside OSVBench's upstream image
``lsysimpure/osvbench:001`` (the kit's job image is derived from it:
:mod:`harness.benchmarks.osvbench.image`).

What upstream does, per spec (``spec_util.py``, Python 2, run by ``verify.sh`` in the
image): write :data:`SPEC_HEADER` + spec + ``"\\n"`` to
``o.x86_64/hv6/hv6py/kernel/spec/spec/specs.py`` and run
``make hv6-verify -- -v --failfast HV6.test_<syscall>``, i.e. (Makefrag)
``python2 o.x86_64/hv6/hv6py/kernel/spec/main.py -v --failfast HV6.test_<syscall>`` with
``PYTHONPATH=$PYTHONPATH:irpy:o.x86_64/hv6/``; then append ``"\\nSyscall <name>:\\n" +
stdout + "\\n" + stderr`` to ``outputs/output_<name>``. Its timeout does not work
(``signal.alarm(600)`` guards only ``Popen``, and the handler raises ``TimeoutError``, a
name Python 2 does not have), so no ``Error: Timeout.`` entry is ever written. Here the
check runs under ``timeout(1)`` inside the container (exit 124: verdict ``timeout``)
within the sandbox's wall-time limit.

How the kit runs one job (:meth:`Hyperkernel.command`): the job script ``job.sh`` (a file
of this package, :data:`JOB_SCRIPT`) copies ``o.x86_64/hv6/hv6py`` of the image into the
job's scratch directory, puts the candidate module there as ``specs.py``, and runs the same
``main.py`` command as ``make`` does, under ``timeout``. Jobs run as ``nobody`` with no
network and a read-only root; model-written specs never run on the host (the benchmark is
container-only).

Output (:func:`classify`), unittest's verbose format as in the published log
(``outputs/output_claude3sonnet_Spec``): ``test_<syscall> (__main__.HV6) ... ok|FAIL|ERROR``,
``Ran 1 test in <s>s``, ``OK`` / ``FAILED (failures=1|errors=1)``; an unproved
obligation prints ``Could not prove, trying to find a minimal ce`` and fails with
``AssertionError: [<model>] != []``; any exception raised while evaluating the spec is a
traceback ending in ``<ExceptionClass>: <message>``; a spec that is not Python fails at
import (``SyntaxError``) before any test runs. Upstream's scoring rule (``stats.py``) is
:func:`upstream_class`; the finer cause is in :class:`Classification`.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ...model import ProcResult, Verifier, VerifierResult

NAME = "hyperkernel"
TOOLCHAIN = "hyperkernel"
#: Version of this module's command line and parser (part of every job key).
MODULE_VERSION = "2"

#: Where the upstream image has Hyperkernel built (OSVBench Dockerfile: WORKDIR).
HK_ROOT = "/root/hyperkernel"
#: Z3's Python bindings in the upstream image (OSVBench Dockerfile: ENV PYTHONPATH).
Z3_PYTHON = "/root/Projects/z3-z3-4.5.0/build/python"
BUILD_DIR = "o.x86_64"
SPEC_MODULE = f"{BUILD_DIR}/hv6/hv6py/kernel/spec/spec/specs.py"
MAIN = f"{BUILD_DIR}/hv6/hv6py/kernel/spec/main.py"
SPEC_FILE = "specs.py"
SCRIPT_FILE = "verikit_hyperkernel.sh"
#: Upstream's per-spec time limit (spec_util.py: ``signal.alarm(600)``), seconds.
UPSTREAM_TIMEOUT_S = 600
#: Time the job needs besides the check itself (copy of hv6py, version probe), seconds.
SETUP_S = 60
#: Exit codes of JOB_SCRIPT: the image lacks the expected layout (ours, not the spec's).
EXIT_SETUP, EXIT_PROBE = 90, 91
#: Exit code of ``timeout(1)`` when it stopped the check.
EXIT_TIMEOUT = 124

#: The module header upstream writes before every spec (spec_util.py ``specs_content``,
#: itself Hyperkernel's specs.py header, Apache-2.0, Copyright 2017 Hyperkernel Authors).
SPEC_HEADER = """
#
# Copyright 2017 Hyperkernel Authors
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
#

import z3
from libirpy import util
import hv6py.kernel.spec.datatypes as dt
import types

from hv6py.base import Accessor, BaseStruct, Struct, Map, Refcnt, Refcnt2

from helpers import (
        is_dmapn_valid,
        is_fd_valid,
        is_fn_valid,
        is_intremap_valid,
        is_pcipn_valid,
        is_pid_valid,
        is_pn_valid,
)

"""
#: Lines of SPEC_HEADER: line L of specs.py is line L - SPEC_HEADER_LINES of the candidate.
SPEC_HEADER_LINES = SPEC_HEADER.count("\n")

#: The job script (POSIX sh, trusted; ``job.sh`` beside this module): ``$1`` = syscall,
#: ``$2`` = time limit of the check in seconds. It prints the versions the job really has
#: (``verikit-probe: python <x.y.z> z3 <version>`` on stderr) before the check.
JOB_SCRIPT = (Path(__file__).resolve().parent / "job.sh").read_text(encoding="utf-8")

_SYSCALL = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_TEST_LINE = re.compile(r"^(test_\w+) \(__main__\.HV6\) \.\.\. (\S.*)$", re.M)
_RAN = re.compile(r"^Ran (\d+) tests? in ([\d.]+)s$", re.M)
_SUMMARY = re.compile(r"^(OK|FAILED \(([^)]*)\))\s*$", re.M)
_Z3 = re.compile(r"^Using z3 v(\S+)$", re.M)
_PROBE = re.compile(r"^verikit-probe: python (\S+) z3 (\S+)$", re.M)
_FRAME = re.compile(r'^  File "([^"]+)", line (\d+)(?:, in (.+))?$')
_EXCEPTION = re.compile(r"^([A-Za-z_][\w.]*)(?::\s?(.*))?$")
COULD_NOT_PROVE = "Could not prove, trying to find a minimal ce"
#: Upstream log entries start with this header (spec_util.py: "\nSyscall " + key + ":\n").
_LOG_HEADER = re.compile(r"^Syscall ([A-Za-z_]\w*):$", re.M)

UPSTREAM_CLASSES = ("pass", "semantic", "syntax")


class LogError(ValueError):
    """An upstream verifier log cannot be read; the message names ``file:line``."""


# ---------------------------------------------------------------------------------------
# Output parsing and classification
# ---------------------------------------------------------------------------------------

def upstream_class(entry: str) -> str | None:
    """Upstream's scoring rule (``stats.py`` of OSVBench), verbatim, on one log entry.

    ``"pass"`` when ``"... ok"`` occurs anywhere; else ``"semantic"`` when ``"Could not
    prove, trying to find a minimal ce"`` or ``"Timeout"`` occurs; else ``"syntax"``. An
    entry without ``":"`` is skipped by upstream (counted nowhere): None.
    """
    if ":" not in entry:
        return None
    if "... ok" not in entry:
        if COULD_NOT_PROVE in entry or "Timeout" in entry:
            return "semantic"
        return "syntax"
    return "pass"


@dataclass
class Frame:
    """One traceback frame: ``file``, ``line`` (1-based), ``function`` (None at module level
    of a SyntaxError report), ``code`` (the source line shown, stripped, or None)."""

    file: str
    line: int
    function: str | None
    code: str | None

    @property
    def origin(self) -> str:
        """Which code the frame is in: ``candidate`` (the spec module), ``hv6py``
        (Hyperkernel's model classes, e.g. base.py), ``z3``, ``libirpy`` (irpy), or
        ``harness`` (Hyperkernel's checker: main.py, equiv.py, ...)."""
        f = self.file
        if f.endswith("/spec/spec/specs.py") or f == SPEC_MODULE:
            return "candidate"
        if "/z3/" in f or f.endswith(("z3.py", "z3core.py")):
            return "z3"
        if "/irpy/" in f or f.startswith("irpy/") or "libirpy" in f:
            return "libirpy"
        if "/hv6py/kernel/spec/" in f or f.startswith(f"{BUILD_DIR}/hv6/hv6py/kernel/spec/"):
            return "harness"
        if "/hv6py/" in f:
            return "hv6py"
        return "harness"


@dataclass
class Classification:
    """What one Hyperkernel check (one log entry or one job's output) says.

    Attributes:
        upstream: upstream's class (:func:`upstream_class`): ``pass`` | ``semantic`` |
            ``syntax``, or None (skipped by upstream's rule).
        cause: the finer cause: ``verified``; ``counterexample`` (Z3 found a state where
            the spec and the implementation differ) or ``timeout`` (semantic); for syntax
            the exception class (``AttributeError``, ``AssertionError``, ``Z3Exception``,
            ``SyntaxError``...) or ``no_test_result`` (no outcome and no exception).
        kind: ``verified`` | ``counterexample`` | ``timeout`` | ``python_syntax`` (the
            module does not compile: nothing ran) | ``python_exception`` | ``z3_exception``
            | ``no_test_result``.
        exception: exception class name of the last traceback, or None.
        message: first line of the exception message ('' when none), at most 300 chars.
        raised_in: :attr:`Frame.origin` of the innermost frame (None without traceback).
        spec_line: line in the candidate (1-based, header excluded) of the innermost frame
            in the spec module, or None.
        spec_code: the source line of that frame as the traceback shows it.
        test: the test name (``test_<syscall>``) or None; outcome: ``ok`` | ``FAIL`` |
            ``ERROR`` | None (no test ran).
        summary: ``OK`` / ``FAILED (...)`` or None; ran_s: unittest's "Ran 1 test in" time.
        z3_version: from ``Using z3 v<version>`` (printed by main.py), or None.
        frames: the innermost traceback's frames.
    """

    upstream: str | None
    cause: str
    kind: str
    exception: str | None = None
    message: str = ""
    raised_in: str | None = None
    spec_line: int | None = None
    spec_code: str | None = None
    test: str | None = None
    outcome: str | None = None
    summary: str | None = None
    ran_s: float | None = None
    z3_version: str | None = None
    frames: list[Frame] = field(default_factory=list)

    def to_json(self, frames: bool = False) -> dict:
        """As a dict (frames left out unless ``frames``)."""
        d = asdict(self)
        if not frames:
            d.pop("frames")
        return d


def _last_traceback(lines: list[str]) -> tuple[list[Frame], str | None, str]:
    """(frames, exception class, message) of the last traceback in ``lines``."""
    starts = [i for i, line in enumerate(lines) if line.startswith("Traceback (most recent call last):")]
    if not starts:
        return [], None, ""
    frames: list[Frame] = []
    i = starts[-1] + 1
    while i < len(lines):
        line = lines[i]
        m = _FRAME.match(line)
        if m:
            code = None
            if i + 1 < len(lines) and lines[i + 1].startswith("    ") and not _FRAME.match(lines[i + 1]):
                code = lines[i + 1].strip()
                i += 1
            frames.append(Frame(m.group(1), int(m.group(2)), m.group(3), code))
            i += 1
            continue
        if line.startswith(" "):  # caret lines of a SyntaxError report, continuation lines
            i += 1
            continue
        m = _EXCEPTION.match(line)
        if m:
            return frames, m.group(1).rsplit(".", 1)[-1], (m.group(2) or "").strip()[:300]
        break
    return frames, None, ""


def classify(text: str, syscall: str | None = None) -> Classification:
    """Classify one check's output (an upstream log entry, or stdout + stderr of a job).

    ``syscall``: when given, only the status line of ``test_<syscall>`` counts as the
    test outcome (a spec cannot pass another test's line off as its own).

    Returns:
        :class:`Classification`; ``upstream`` is upstream's rule applied to ``text``,
        ``cause``/``kind`` the kit's reading (they agree on pass/semantic/syntax for every
        entry of the published log, see tests/test_osvbench.py).
    """
    lines = text.splitlines()
    tests = [(m.group(1), m.group(2).strip()) for m in _TEST_LINE.finditer(text)]
    if syscall is not None:
        tests = [t for t in tests if t[0] == f"test_{syscall}"]
    test, outcome = tests[-1] if tests else (None, None)
    summaries = _SUMMARY.findall(text)
    summary = summaries[-1][0] if summaries else None
    ran = _RAN.findall(text)
    z3v = _Z3.findall(text)
    frames, exc, msg = _last_traceback(lines)
    c = Classification(upstream=upstream_class(text), cause="no_test_result", kind="no_test_result",
                       exception=exc, message=msg, test=test, outcome=outcome, summary=summary,
                       ran_s=float(ran[-1][1]) if ran else None, z3_version=z3v[-1] if z3v else None,
                       frames=frames)
    if frames:
        c.raised_in = frames[-1].origin
        spec_frames = [f for f in frames if f.origin == "candidate"]
        if spec_frames:
            c.spec_line = spec_frames[-1].line - SPEC_HEADER_LINES
            c.spec_code = spec_frames[-1].code
    if outcome == "ok" and summary == "OK" and exc is None:
        c.cause = c.kind = "verified"
    elif COULD_NOT_PROVE in text and exc == "AssertionError":
        c.cause = c.kind = "counterexample"
    elif exc in ("SyntaxError", "IndentationError", "TabError") and outcome is None:
        c.cause, c.kind = exc, "python_syntax"
    elif exc == "Z3Exception":
        c.cause, c.kind = exc, "z3_exception"
    elif exc is not None:
        c.cause, c.kind = exc, "python_exception"
    return c


@dataclass
class LogEntry:
    """One entry of an upstream log: ``index`` (0-based), ``syscall``, ``line`` (1-based
    line of its ``Syscall <name>:`` header), ``text`` (from the name to the next header,
    as upstream's ``split("Syscall ")`` gives it)."""

    index: int
    syscall: str
    line: int
    text: str


def split_upstream_log(text: str, where: str = "<log>") -> list[LogEntry]:
    """Split an upstream verifier log (``outputs/output_<name>``) into its entries.

    Entries start at lines ``Syscall <name>:`` (what spec_util.py writes); unlike
    upstream's ``text.split("Syscall ")``, the words "Syscall " inside an output do not
    start a new entry. Raises LogError (``where:line``) for text before the first header,
    or no header at all.
    """
    heads = list(_LOG_HEADER.finditer(text))
    if not heads:
        raise LogError(f"{where}: no 'Syscall <name>:' entry header: not an OSVBench verifier log")
    lead = text[: heads[0].start()]
    if lead.strip():
        line = next(i for i, s in enumerate(lead.splitlines(), 1) if s.strip())
        raise LogError(f"{where}:{line}: text before the first 'Syscall <name>:' header")
    out = []
    for i, m in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        body = text[m.start() + len("Syscall "): end]
        out.append(LogEntry(i, m.group(1), text.count("\n", 0, m.start()) + 1, body))
    return out


def upstream_split(text: str) -> list[str]:
    """Upstream's own split of a log (stats.py: ``text.split("Syscall ")[1:]``)."""
    return text.split("Syscall ")[1:]


def repeated_runs(entries: list[LogEntry], expected: list[str]) -> int:
    """How many complete runs over the syscalls ``expected`` (one per task, in order) the
    log holds back to back: 2 when a second run of upstream's runner appended to it, 0
    when the entries are not whole runs."""
    names = [e.syscall for e in entries]
    n = len(expected)
    if not n or len(names) % n:
        return 0
    k = len(names) // n
    return k if names == expected * k else 0


def as_entry(syscall: str | None, output: str) -> str:
    """What upstream's stats.py sees of a job's output (``stdout + "\n" + stderr``): the
    piece after ``"Syscall "``, i.e. ``"<syscall>:\n" + output`` (its ``":"`` rule
    depends on that header)."""
    return f"{syscall or '?'}:\n{output}"


# ---------------------------------------------------------------------------------------
# The verifier module
# ---------------------------------------------------------------------------------------

def spec_module(spec: str) -> str:
    """The ``specs.py`` upstream writes for ``spec``: SPEC_HEADER + spec + newline."""
    return SPEC_HEADER + spec + "\n"



class Hyperkernel(Verifier):
    """Hyperkernel (OSVBench) verifier, a :class:`harness.model.Verifier`: ``name =
    "hyperkernel"``, toolchain ``hyperkernel``.

    Per-task argument: the system call whose test runs, ``options["syscall"]``, added by
    the benchmark (:meth:`task_options`). Files of a job: :meth:`files`.
    """

    name = NAME
    toolchain = TOOLCHAIN
    version = MODULE_VERSION

    def prepare(self, sandbox, probed) -> dict[str, bytes]:
        """Files every job of a run gets: none (the job script travels in each job's own
        files, :meth:`files`, so that it is part of every verification key)."""
        return {}

    def options(self, probed=None, *, smoke: bool = False, cpus: int = 1,
                timeout_s: float = UPSTREAM_TIMEOUT_S) -> dict:
        """Options of a run: ``{"timeout_s", "verifier_module"}``.

        Args:
            probed: the probed toolchain (unused: one command for every version).
            smoke, cpus: unused (Hyperkernel has no smoke tests; one check is one process).
            timeout_s: time limit of the check itself, seconds (upstream: 600); the
                sandbox's wall-time limit must leave :data:`SETUP_S` more.

        Raises:
            ValueError: ``timeout_s`` <= 0.
        """
        if not timeout_s > 0:
            raise ValueError(f"timeout_s must be > 0, got {timeout_s}")
        return {"timeout_s": float(timeout_s), "verifier_module": f"{NAME}/{MODULE_VERSION}"}

    @staticmethod
    def task_options(options: dict, syscall: str) -> dict:
        """``options`` with the per-task argument ``syscall`` (the test
        ``HV6.test_<syscall>``).

        Raises:
            ValueError: ``syscall`` is not an identifier (it becomes a shell argument and
                a test name).
        """
        if not _SYSCALL.match(syscall or ""):
            raise ValueError(f"bad syscall name {syscall!r}: expected an identifier such as sys_map_pml4")
        return {**options, "syscall": syscall}

    @staticmethod
    def files(spec: str) -> dict[str, str]:
        """The job's input files for candidate ``spec`` (Python source of the spec
        function(s)): ``specs.py`` (:func:`spec_module`) and the job script."""
        return {SPEC_FILE: spec_module(spec), SCRIPT_FILE: JOB_SCRIPT}

    def command(self, options: dict) -> tuple[list[str], dict[str, str], list[str]]:
        """``(argv, env, files to collect)``: ``/bin/sh verikit_hyperkernel.sh <syscall>
        <timeout>`` with the Hyperkernel and Z3 locations in the environment.

        Raises:
            ValueError: ``options`` has no valid ``syscall`` (see :meth:`task_options`).
        """
        syscall = options.get("syscall")
        if not _SYSCALL.match(syscall or ""):
            raise ValueError(f"hyperkernel options need the task's syscall (an identifier), got {syscall!r}")
        argv = ["/bin/sh", SCRIPT_FILE, syscall, f"{options['timeout_s']:g}"]
        env = {"VERIKIT_HK_ROOT": HK_ROOT, "VERIKIT_Z3_PYTHON": Z3_PYTHON, "PYTHONDONTWRITEBYTECODE": "1"}
        return argv, env, []

    def parse(self, proc: ProcResult, options: dict | None = None) -> VerifierResult:
        """Read a job that came to its own end (the sandbox did not stop it: the executor
        maps that with :func:`harness.model.termination` first).

        Verdicts: ``verified`` (``test_<syscall> ... ok``, ``OK``, exit 0); ``failed`` (a Z3
        counterexample: upstream's semantic error); ``timeout`` (the job script's
        ``timeout(1)`` stopped the check, exit 124; upstream's class ``semantic``);
        ``invalid`` (the spec does not compile or raises: upstream's "syntax error");
        ``infra_error`` (the image lacks the Hyperkernel/Z3 layout, exit 90/91; ``ok``
        printed but a non-zero exit; neither a test outcome nor an exception). ``extra``
        holds the classification (``upstream_class``, ``cause``, ``kind``, ``exception``,
        ``raised_in``, ``spec_line``...), the versions the job printed, an excerpt of the
        output (``output_excerpt``, :func:`excerpt`) and its length (``output_chars``).
        """
        syscall = (options or {}).get("syscall")
        text = proc.stdout + "\n" + proc.stderr  # the order of upstream's log entries
        probe = _PROBE.findall(text)
        versions = {"python": probe[-1][0], "z3": probe[-1][1]} if probe else {}
        result = self._parse(proc, options, text, syscall, versions)
        result.extra["output_excerpt"] = excerpt(text)
        result.extra["output_chars"] = len(text)
        return result

    def _parse(self, proc: ProcResult, options, text: str, syscall, versions: dict) -> VerifierResult:
        if proc.returncode in (EXIT_SETUP, EXIT_PROBE):
            return VerifierResult("infra_error", "the image does not have the expected Hyperkernel/Z3 layout: "
                                  + _tail(proc.stderr), messages=[_tail(proc.stderr)], extra={"versions": versions})
        c = classify(as_entry(syscall, text), syscall)
        if proc.returncode == EXIT_TIMEOUT:
            extra = {**c.to_json(), "upstream_class": "semantic", "cause": "timeout", "kind": "timeout",
                     "versions": versions}
            limit = (options or {}).get("timeout_s")
            return VerifierResult("timeout", f"no result within {limit:g} s" if limit else "time limit reached",
                                  extra=extra)
        extra = {**c.to_json(), "upstream_class": c.upstream, "versions": versions}
        where = f" (spec line {c.spec_line}: {c.spec_code})" if c.spec_line else ""
        if c.kind == "verified" and proc.returncode == 0:
            return VerifierResult("verified", f"{c.test} ... ok", extra=extra)
        if c.kind == "verified":  # printed ok but exited non-zero: fail closed
            extra.update(cause="no_test_result", kind="no_test_result")
            return VerifierResult("infra_error", f"test reported ok but exited {proc.returncode}", extra=extra)
        if c.kind == "counterexample":
            return VerifierResult("failed", "Z3 found a counterexample: the spec and the implementation differ",
                                  extra=extra)
        if c.kind in ("python_syntax", "python_exception", "z3_exception"):
            return VerifierResult("invalid", f"{c.exception}: {c.message}"[:300] + where, extra=extra,
                                  messages=[f"{c.exception}: {c.message}"])
        return VerifierResult("infra_error", "no test outcome and no exception in the output: "
                              + _tail(text), extra=extra)


def excerpt(text: str, head: int = 2000, tail: int = 4000) -> str:
    """``text`` if at most ``head + tail`` characters, else its head and tail joined by a
    line saying how much was left out (kept in records: the head has the ``Could not
    prove`` lines, the tail the unittest outcome and the traceback)."""
    if len(text) <= head + tail:
        return text
    return f"{text[:head]}\n[... {len(text) - head - tail} characters left out ...]\n{text[-tail:]}"


def _tail(text: str, n: int = 300) -> str:
    text = text.strip()
    return text[-n:] if text else "(no output)"

