"""Hyperkernel verifier (OSVBench): checks a candidate state-machine specification of one
system call against Hyperkernel's implementation, with Z3.

Paper: OSVBench (../shared/papers/004_72c6ea11fc103012.txt), section 4.1; upstream code of
lishangyu-hkust/OSVBench (``spec_util.py``, ``verify.sh``, ``Dockerfile``,
``run_spec_check.sh``, ``stats.py``; read at commits 57e3bff8 / 3247b75e) and Hyperkernel's
``hv6/Makefrag`` (uw-unsat/hyperkernel). Toolchain (published): Python 2.7, LLVM 5.0,
Z3 4.5.0, all inside the upstream image :data:`UPSTREAM_IMAGE`.

What upstream does, per spec (``spec_util.py``, Python 2, run by ``verify.sh`` in the
image): write :data:`SPEC_HEADER` + spec + ``"\\n"`` to
``o.x86_64/hv6/hv6py/kernel/spec/spec/specs.py`` and run
``make hv6-verify -- -v --failfast HV6.test_<syscall>``, i.e. (Makefrag)
``python2 o.x86_64/hv6/hv6py/kernel/spec/main.py -v --failfast HV6.test_<syscall>`` with
``PYTHONPATH=$PYTHONPATH:irpy:o.x86_64/hv6/``; then append ``"\\nSyscall <name>:\\n" +
stdout + "\\n" + stderr`` to ``outputs/output_<name>``. Its defects, fixed here:

- the log is opened in append mode, so a second run doubles it (and upstream's
  ``stats.py`` then fails its ``len == 245`` assertion): here each job is one record,
  keyed by content, written atomically by the executor's :class:`~harness.results.RecordLog`;
  :func:`write_upstream_log` rewrites an upstream-format log atomically, one entry per task;
- the timeout does not work: ``signal.alarm(600)`` guards only ``Popen`` (which returns at
  once), ``process.communicate()`` is outside the ``try``, and the handler raises
  ``TimeoutError``, a name Python 2 does not have: a 600 s run kills the whole runner with
  a ``NameError`` and no ``Error: Timeout.`` entry is ever written (the published log has
  none). Here: ``timeout(1)`` inside the container plus the sandbox's wall-time limit
  (which kills the worker), verdict ``timeout``;
- no resume: a crash loses the run. Here: resume by job key (:func:`run_specs`);
- with n samples per task, upstream stops at the first passing sample (and logs the last
  sample otherwise), so only "any of n" can be computed. Here every sample is verified and
  pass@k uses the unbiased estimator (:func:`pass_at_k`).

How the kit runs one job (:meth:`Hyperkernel.command`): in the job image
:data:`JOB_IMAGE` (the upstream image with the Hyperkernel tree made readable, see
:data:`DERIVED_CONTAINERFILE`; jobs run as ``nobody`` with no network and a read-only
root), the script :data:`JOB_SCRIPT` copies ``o.x86_64/hv6/hv6py`` into the job's
scratch directory, puts the candidate module there as ``specs.py``, and runs the same
``main.py`` command as ``make`` does, under ``timeout``. Model-written specs never run on
the host: :func:`run_specs` refuses the host sandbox.

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

import os
import re
import sys
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..sandbox import Limits, ProcResult, SandboxError
from ..toolchains import toolchain_spec
from . import VerifierResult

NAME = "hyperkernel"
TOOLCHAIN = "hyperkernel"
#: Version of this module's command line and parser (part of every job key).
MODULE_VERSION = "1"

#: The image OSVBench's Dockerfile builds on (Docker Hub): Hyperkernel built with LLVM 5,
#: Z3 4.5.0's Python bindings, Python 2.
UPSTREAM_IMAGE = "lsysimpure/osvbench:001"
#: The job image the kit runs: UPSTREAM_IMAGE + permissions (DERIVED_CONTAINERFILE).
JOB_IMAGE = "verikit/hyperkernel:osvbench-001"
HK_ROOT = "/root/hyperkernel"
#: Z3's Python bindings in the upstream image (OSVBench Dockerfile: ENV PYTHONPATH).
Z3_PYTHON = "/root/Projects/z3-z3-4.5.0/build/python"
BUILD_DIR = "o.x86_64"
SPEC_MODULE = f"{BUILD_DIR}/hv6/hv6py/kernel/spec/spec/specs.py"
MAIN = f"{BUILD_DIR}/hv6/hv6py/kernel/spec/main.py"
SPEC_FILE = "specs.py"
SCRIPT_FILE = "verikit_hyperkernel.sh"
#: Published versions of the ``hyperkernel`` toolchain, read from images/toolchains.json (the
#: only place versions are written; paper section 4.1): python 2.7, z3 4.5.0, llvm 5.0. LLVM
#: is used only when the image was built (it compiled Hyperkernel to the Python model the
#: checks import), not per job.
PUBLISHED = {tool: spec["published"] for tool, spec in toolchain_spec(TOOLCHAIN)["tools"].items()}
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

#: Containerfile of JOB_IMAGE. Nothing of the toolchain changes: the Hyperkernel tree and
#: Z3 become readable by the unprivileged job user, and the entrypoint is cleared so the
#: sandbox's worker command runs.
DERIVED_CONTAINERFILE = f"""\
# verikit job image for the OSVBench Hyperkernel verifier (harness/verifiers/hyperkernel.py).
# Base: OSVBench's upstream image (Python 2.7, LLVM 5.0, Z3 4.5.0, Hyperkernel built in
# {HK_ROOT}). verikit jobs run as user nobody, with no network and a read-only root, in
# their own scratch directory: they must be able to read the Hyperkernel tree and Z3.
FROM {UPSTREAM_IMAGE}
USER root
RUN chmod a+rx /root && chmod -R a+rX {HK_ROOT} /root/Projects
ENTRYPOINT []
CMD ["sleep", "infinity"]
LABEL verikit.toolchain="hyperkernel" verikit.base="{UPSTREAM_IMAGE}"
"""

#: Python 2 one-liner printing the versions a job really has (trusted; the job script and
#: :func:`probe` run it): ``verikit-probe: python <x.y.z> z3 <version>``.
PROBE_CODE = ("import sys, z3; sys.stdout.write(\"verikit-probe: python %d.%d.%d z3 %s\\n\" % "
              "(tuple(sys.version_info[:3]) + (z3.get_version_string(),)))")

#: The job script (POSIX sh, trusted): $1 = syscall, $2 = time limit in seconds.
JOB_SCRIPT = f"""\
#!/bin/sh
# verikit: one OSVBench check, as upstream's
#   make hv6-verify -- -v --failfast HV6.test_<syscall>
# (hv6/Makefrag: python2 $(O)/hv6/hv6py/kernel/spec/main.py $(ARGS) with
# PYTHONPATH=$PYTHONPATH:irpy:$(O)/hv6/), on this job's own copy of hv6py (first on the
# path; the image's build directory after it, for anything else it holds).
set -u
syscall="$1"
limit="$2"
hk="${{VERIKIT_HK_ROOT:-{HK_ROOT}}}"
z3py="${{VERIKIT_Z3_PYTHON:-{Z3_PYTHON}}}"
mkdir -p {BUILD_DIR}/hv6 || exit {EXIT_SETUP}
if ! cp -Rp "$hk/{BUILD_DIR}/hv6/hv6py" {BUILD_DIR}/hv6/hv6py; then
    echo "verikit: cannot copy $hk/{BUILD_DIR}/hv6/hv6py (is this the job image {JOB_IMAGE}?)" >&2
    exit {EXIT_SETUP}
fi
cp {SPEC_FILE} {SPEC_MODULE} || exit {EXIT_SETUP}
rm -f {SPEC_MODULE}c
ln -s "$hk/irpy" irpy || exit {EXIT_SETUP}
PYTHONPATH="$z3py:irpy:{BUILD_DIR}/hv6/:$hk/{BUILD_DIR}/hv6/"
export PYTHONPATH
python2 -c '{PROBE_CODE}' 1>&2 || exit {EXIT_PROBE}
if command -v timeout >/dev/null 2>&1; then
    exec timeout -k 10 "$limit" python2 {MAIN} -v --failfast "HV6.test_$syscall"
fi
echo "verikit: no timeout(1) in the image; the sandbox wall-time limit applies" >&2
exec python2 {MAIN} -v --failfast "HV6.test_$syscall"
"""

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


class HyperkernelUnavailable(SandboxError):
    """No container engine, or the job image is missing; the message names the image and
    says how to get it (``docker pull``/``docker load``, then ``docker build``)."""


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


class Hyperkernel:
    """Hyperkernel (OSVBench) verifier: ``name = "hyperkernel"``, toolchain ``hyperkernel``."""

    name = NAME
    toolchain = TOOLCHAIN

    def prepare(self, sandbox, probed) -> dict[str, bytes]:
        """Files every job gets: the job script."""
        return {SCRIPT_FILE: JOB_SCRIPT.encode()}

    def options(self, probed=None, *, syscall: str, timeout_s: float = UPSTREAM_TIMEOUT_S, **_) -> dict:
        """Options of one job.

        Args:
            syscall: the system call whose test runs (``HV6.test_<syscall>``).
            timeout_s: time limit of the check itself, seconds (upstream: 600).

        Raises:
            ValueError: ``syscall`` is not an identifier, or ``timeout_s`` <= 0.
        """
        if not _SYSCALL.match(syscall or ""):
            raise ValueError(f"bad syscall name {syscall!r}: expected an identifier such as sys_map_pml4")
        if not timeout_s > 0:
            raise ValueError(f"timeout_s must be > 0, got {timeout_s}")
        return {"syscall": syscall, "timeout_s": float(timeout_s), "image": JOB_IMAGE,
                "verifier_module": f"{NAME}/{MODULE_VERSION}"}

    def files(self, spec: str) -> dict[str, str]:
        """The job's input files for candidate ``spec``: ``specs.py`` and the script."""
        return {SPEC_FILE: spec_module(spec), SCRIPT_FILE: JOB_SCRIPT}

    def command(self, options: dict) -> tuple[list[str], dict[str, str], list[str]]:
        """``(argv, env, files to collect)``: ``/bin/sh verikit_hyperkernel.sh <syscall>
        <timeout>`` with the Hyperkernel and Z3 locations in the environment."""
        argv = ["/bin/sh", SCRIPT_FILE, options["syscall"], f"{options['timeout_s']:g}"]
        env = {"VERIKIT_HK_ROOT": HK_ROOT, "VERIKIT_Z3_PYTHON": Z3_PYTHON, "PYTHONDONTWRITEBYTECODE": "1"}
        return argv, env, []

    def parse(self, proc: ProcResult, options: dict | None = None) -> VerifierResult:
        """Turn a finished job into a :class:`VerifierResult`.

        Verdicts: ``infra_error`` (could not start, image layout wrong, worker died),
        ``timeout`` (``timeout(1)`` or the sandbox limit; upstream's class ``semantic``),
        ``memout``, ``verified`` (``test_<syscall> ... ok``, ``OK``, exit 0), ``failed``
        (a counterexample: upstream's semantic error), ``invalid`` (the spec does not
        compile or raises: upstream's "syntax error"), ``infra_error`` when the output has
        neither a test outcome nor an exception. ``extra`` holds the classification
        (``upstream_class``, ``cause``, ``kind``, ``exception``, ``raised_in``,
        ``spec_line``...) and the versions the job printed.
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
        if proc.start_error:
            return VerifierResult("infra_error", f"the job did not start: {proc.start_error}")
        if proc.returncode in (EXIT_SETUP, EXIT_PROBE):
            return VerifierResult("infra_error", "the image does not have the expected Hyperkernel/Z3 layout: "
                                  + _tail(proc.stderr), messages=[_tail(proc.stderr)])
        if proc.timed_out or proc.returncode == EXIT_TIMEOUT:
            c = classify(as_entry(syscall, text), syscall)
            extra = {**c.to_json(), "upstream_class": "semantic", "cause": "timeout", "kind": "timeout",
                     "versions": versions}
            limit = (options or {}).get("timeout_s")
            return VerifierResult("timeout", f"no result within {limit:g} s" if limit else "time limit reached",
                                  extra=extra)
        if proc.memout:
            return VerifierResult("memout", f"killed at the memory limit after {proc.wall_s:.0f} s",
                                  extra={"versions": versions})
        c = classify(as_entry(syscall, text), syscall)
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


# ---------------------------------------------------------------------------------------
# Image, sandbox, toolchain
# ---------------------------------------------------------------------------------------

def image_help() -> str:
    """How to get the job image, for error messages and the README."""
    return (f"The Hyperkernel verifier runs in the container image {JOB_IMAGE}, built from OSVBench's "
            f"upstream image {UPSTREAM_IMAGE} (Python 2.7, LLVM 5.0, Z3 4.5.0; Docker Hub).\n"
            f"  1. get the upstream image: docker pull {UPSTREAM_IMAGE}\n"
            f"     (offline: on a machine with access, 'docker save {UPSTREAM_IMAGE} -o osvbench-001.tar', "
            f"copy the file, then 'docker load -i osvbench-001.tar')\n"
            f"  2. build the job image: python -m harness.verifiers.hyperkernel containerfile | "
            f"docker build -t {JOB_IMAGE} -\n"
            f"  3. check: python -m harness.verifiers.hyperkernel check")


def ensure_image(base_url: str | None = None, client=None) -> str:
    """Check that a container engine answers and has :data:`JOB_IMAGE`.

    Returns:
        The image ID (``sha256:...``).

    Raises:
        HyperkernelUnavailable: no engine, or the image is missing; the message names
            :data:`JOB_IMAGE`/:data:`UPSTREAM_IMAGE` and the commands that get them.
    """
    from ..sandbox.container import EngineUnavailable, connect

    if client is None:
        try:
            client = connect(base_url)
        except EngineUnavailable as exc:
            raise HyperkernelUnavailable(f"{exc}\n{image_help()}") from None
    try:
        return client.images.get(JOB_IMAGE).id
    except Exception:  # docker.errors.ImageNotFound or any API error: not usable
        pass
    try:
        client.images.get(UPSTREAM_IMAGE)
        have = f"{UPSTREAM_IMAGE} is present, but the job image {JOB_IMAGE} is not built."
    except Exception:
        have = f"neither {JOB_IMAGE} nor {UPSTREAM_IMAGE} is in the container engine."
    raise HyperkernelUnavailable(f"Hyperkernel verifier: {have}\n{image_help()}") from None


def open_sandbox(slots: int = 1, base_url: str | None = None):
    """A container sandbox of :data:`JOB_IMAGE` (no network, read-only root, jobs as
    nobody). Raises HyperkernelUnavailable when the engine or the image is missing."""
    from ..sandbox.container import ContainerSandbox

    ensure_image(base_url)
    return ContainerSandbox(JOB_IMAGE, slots=slots, base_url=base_url)


def probe(sandbox):
    """The toolchain the sandbox really has: Python and Z3 versions from inside it (the
    same trusted one-liner as every job), compared with :data:`PUBLISHED`.

    Returns:
        :class:`harness.toolchains.ProbedToolchain` named ``hyperkernel``. Its flavor is
        ``host`` ("whatever the sandbox has", probed): the toolchain schema has no flavor
        for an upstream image. LLVM is not probed (used only when the image was built).
    """
    from ..toolchains import ProbedToolchain, version_matches

    argv = ["python2", "-c", PROBE_CODE]
    res = sandbox.run(argv, env={"PYTHONPATH": Z3_PYTHON}, limits=Limits(wall_s=60, output_bytes=65536))
    m = _PROBE.search(res.stdout or "")
    got = {"python": m.group(1), "z3": m.group(2)} if m else {}
    lines = (res.stdout + res.stderr).strip().splitlines()
    raw = res.start_error or (lines[0] if lines else "")
    tools = {}
    for tool in ("python", "z3"):
        v = got.get(tool)
        tools[tool] = {"version": v, "raw": str(raw)[:200], "published": PUBLISHED[tool],
                       "match": version_matches(PUBLISHED[tool], v)}
    tools["llvm"] = {"version": None, "raw": "not probed: used only to build the image", "published": PUBLISHED["llvm"],
                     "match": None}
    return ProbedToolchain(name=TOOLCHAIN, flavor="host", sandbox=getattr(sandbox, "name", "?"), tools=tools,
                           image=getattr(sandbox, "image", None), image_digest=getattr(sandbox, "image_digest", None))


# ---------------------------------------------------------------------------------------
# The runner (upstream's spec_util.py, fixed) and pass@k
# ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SpecJob:
    """One candidate spec to check: ``task_id``, ``syscall``, ``model``, ``sample``,
    ``spec`` (Python source of the spec function(s), as the model wrote it), ``origin``
    (where it came from, e.g. ``predictions:<file>:<line>``), ``task_sha256`` (hash of the
    task's content: part of the job key), ``precheck`` (``(verdict, reason)`` decided
    without running, e.g. a rejected spec), ``checks`` (integrity checks made)."""

    task_id: str
    syscall: str
    model: str
    sample: int
    spec: str
    origin: str
    task_sha256: str
    precheck: tuple[str, str] | None = None
    checks: tuple[dict, ...] = ()


def build_jobs(items: list[SpecJob], *, benchmark: str, benchmark_version: str, dataset: dict,
               timeout_s: float = UPSTREAM_TIMEOUT_S, mode: str = "spec") -> list:
    """Executor jobs (:class:`harness.executor.Job`) for ``items``."""
    from ..executor import Job, sha256_text

    hk = Hyperkernel()
    jobs = []
    for it in items:
        opts = hk.options(syscall=it.syscall, timeout_s=timeout_s)
        jobs.append(Job(benchmark=benchmark, benchmark_version=benchmark_version, dataset=dataset, mode=mode,
                        task_id=it.task_id, task_sha256=it.task_sha256,
                        candidate={"model": it.model, "sample": it.sample, "sha256": sha256_text(it.spec),
                                   "origin": it.origin},
                        files=hk.files(it.spec), options=opts, checks=list(it.checks), precheck=it.precheck))
    return jobs


def run_specs(items: list[SpecJob], sandbox, out_dir: str | Path, *, benchmark: str, benchmark_version: str,
              dataset: dict, timeout_s: float = UPSTREAM_TIMEOUT_S, mem_mb: int = 8192, parallel: int = 1,
              cache=None, toolchain=None, progress=None) -> tuple[list[dict], dict]:
    """Check every spec of ``items``; upstream's runner with its defects fixed.

    One record per (task, model, sample) in ``<out_dir>/records.jsonl`` (validated,
    flushed per record, rewritten atomically at the end: a rerun or a resumed run never
    duplicates an entry); a rerun into the same directory resumes (jobs recorded are not
    run again; ``infra_error`` ones are retried); the check of each job has a real time
    limit (``timeout_s`` inside the container, ``timeout_s`` + :data:`SETUP_S` for the
    worker); every sample is checked (no stopping at the first pass).

    Args:
        sandbox: a container sandbox of :data:`JOB_IMAGE` (:func:`open_sandbox`), or any
            object with the sandbox ``run`` contract except the host sandbox.
        toolchain: a ProbedToolchain (default: :func:`probe` of ``sandbox``).

    Returns:
        ``(records in item order, executor stats)``.

    Raises:
        ValueError: ``sandbox`` is the host sandbox (model-written Python never runs on
            the host), or an item is malformed.
    """
    from ..executor import Executor
    from ..results import RecordLog

    if getattr(sandbox, "name", None) == "host":
        raise ValueError("OSVBench specs are model-written Python: they run only in a container sandbox "
                         f"with no network ({JOB_IMAGE}), never on the host")
    hk = Hyperkernel()
    toolchain = toolchain or probe(sandbox)
    jobs = build_jobs(items, benchmark=benchmark, benchmark_version=benchmark_version, dataset=dataset,
                      timeout_s=timeout_s)
    limits = Limits(wall_s=timeout_s + SETUP_S, mem_mb=mem_mb)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    log = RecordLog(out / "records.jsonl")
    ex = Executor(hk, sandbox, toolchain, shared_files={}, limits=limits, parallel=parallel, cache=cache)
    try:
        records = ex.run(jobs, log, judge, progress=progress)
    finally:
        log.finalize([j.key(toolchain, limits) for j in jobs])
        log.close()
    return records, ex.stats.to_json()


def judge(job, result: VerifierResult) -> tuple[str, str]:
    """The final verdict of a job is the verifier's (no benchmark-level rewrite)."""
    return result.verdict, result.reason


def pass_at_k(records: list[dict], ks: tuple[int, ...] = (1, 3, 5)) -> dict:
    """pass@k per model with the unbiased estimator (Chen et al. 2021,
    :func:`harness.metrics.pass_at_k`) from n samples per task.

    ``records``: result records (``task_id``, ``candidate.model``, ``verdict``);
    ``infra_error`` records are left out (ours, not the model's) and counted. A k larger
    than some task's n is reported as None with the reason (never estimated from fewer
    samples).

    Returns:
        ``{model: {"tasks", "samples_per_task": {"min", "max"}, "infra_error",
        "pass_at_k": {"k": value or None}, "notes"}}``.
    """
    from ..metrics import mean_pass_at_k

    per: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    infra: Counter = Counter()
    for r in records:
        model = r["candidate"]["model"]
        if r["verdict"] == "infra_error":
            infra[model] += 1
            continue
        nc = per[model][r["task_id"]]
        nc[0] += 1
        nc[1] += r["verdict"] == "verified"
    out = {}
    for model, tasks in sorted(per.items()):
        ns = [n for n, _ in tasks.values()]
        res, notes = {}, []
        for k in ks:
            if k > min(ns):
                res[str(k)] = None
                notes.append(f"pass@{k} needs {k} samples for every task; the fewest is {min(ns)}")
            else:
                res[str(k)] = mean_pass_at_k({t: (n, c) for t, (n, c) in tasks.items()}, k)
        out[model] = {"tasks": len(tasks), "samples_per_task": {"min": min(ns), "max": max(ns)},
                      "infra_error": infra[model], "pass_at_k": res, "notes": notes}
    return out


def write_upstream_log(records: list[dict], order: list[tuple[str, str]], path: str | Path) -> int:
    """Write an upstream-format log (``outputs/output_<name>``, readable by upstream's
    ``stats.py``) from records, atomically, one entry per task in ``order`` (list of
    ``(task_id, syscall)``): per task the first verified sample, else the last sample (the
    entry upstream's runner would have written). Records keep an excerpt of a job's
    output (:func:`excerpt`: head and tail), so long entries are shortened in the middle.
    Returns the number of entries.

    Raises:
        ValueError: a task of ``order`` has no record.
    """
    from ..results import write_text_atomic

    by_task: dict[str, list[dict]] = defaultdict(list)
    for r in records:
        by_task[r["task_id"]].append(r)
    parts = []
    for task_id, syscall in order:
        recs = sorted(by_task.get(task_id, []), key=lambda r: (r["candidate"]["model"], r["candidate"]["sample"]))
        if not recs:
            raise ValueError(f"task {task_id} ({syscall}) has no record")
        chosen = next((r for r in recs if r["verdict"] == "verified"), recs[-1])
        body = chosen["verifier"].get("extra", {}).get("output_excerpt") or chosen["verifier"].get("log_tail", "")
        if chosen["verdict"] == "timeout":
            body = "Error: Timeout.\n"  # what upstream's runner meant to write
        parts.append("\nSyscall " + syscall + ":\n" + body)  # spec_util.py: header + stdout + "\n" + stderr
    write_text_atomic(Path(path), "".join(parts))
    return len(parts)


# ---------------------------------------------------------------------------------------
# python -m harness.verifiers.hyperkernel check | containerfile
# ---------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    """``check``: is the job image there (exit 0) or not (exit 2, with how to get it);
    ``containerfile``: print :data:`DERIVED_CONTAINERFILE` (for ``docker build -``)."""
    import argparse

    p = argparse.ArgumentParser(prog="python -m harness.verifiers.hyperkernel",
                                description="OSVBench's Hyperkernel verifier: job image")
    p.add_argument("cmd", choices=["check", "containerfile"])
    p.add_argument("--engine-url", help="Docker API address (default: DOCKER_HOST or the default socket)")
    args = p.parse_args(argv)
    if args.cmd == "containerfile":
        sys.stdout.write(DERIVED_CONTAINERFILE)
        return 0
    try:
        digest = ensure_image(args.engine_url or os.environ.get("DOCKER_HOST"))
    except HyperkernelUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{JOB_IMAGE} is available ({digest})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
