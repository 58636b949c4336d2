"""The CASP rules of WP's sound fragment that do not need Frama-C (``fragment.py``): the
reading of gcc's own diagnostics (``compiler-agrees``, with the real gcc of this machine),
the verdict of a job the sandbox ended, and the report's table of the second net.

What Frama-C's view says of unions, casts, bit-fields, ``\\from`` and recursive logic
definitions is tested on the real Frama-C's outputs in ``tests/test_casp_allowlist.py``
(recorded family ``casp-allowlist``), with the canaries of ``candidates.py``.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from harness.benchmarks import Candidate, casp
from harness.benchmarks.casp import fragment
from harness.benchmarks.casp.blocks import execution_table
from harness.executor import derive
from harness.model import ProcResult
from harness.verifiers import framac

SOURCE = """long k(x) long x; { return x; }
int u() { return 1; }
int s(int a) { int i = a; i = i++; return i; }
const int K = 2147483647 + 1;
unsigned char C = 300;
int abs(int x) { return x; }
int t(int a) { return k(a) + u() + s(a) + K + C + abs(a); }
"""


def _gcc_log(tmp_path) -> str:
    """gcc's diagnostics on SOURCE, as the job driver makes them (``framac_job.sh``)."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed on this machine")
    (tmp_path / "candidate.c").write_text(SOURCE)
    proc = subprocess.run(["gcc", "-fsyntax-only", "-fdiagnostics-plain-output", "-Wold-style-definition",
                           "-Wsequence-point", "-Wbuiltin-declaration-mismatch", "candidate.c"],
                          cwd=tmp_path, capture_output=True, text=True, env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"})
    return proc.stdout + proc.stderr


def _written(names_formals: dict[str, list[str]], variables: dict[str, int]) -> dict:
    functions = [{"name": n, "formals": f} for n, f in names_formals.items()]
    return {"code": functions, "functions": functions,
            "variables": [{"name": n, "line": line} for n, line in variables.items()]}


def test_the_compiler_rule_reads_gccs_own_diagnostics(tmp_path):
    """A K&R definition with parameters, unsequenced side effects, an initialiser whose
    signed arithmetic overflows and a function named like a libc function are the
    candidate's problems; ``int u()`` (no parameters) and a defined conversion
    (``unsigned char C = 300``) are not."""
    log = _gcc_log(tmp_path)
    w = _written({"k": ["x"], "u": [], "s": ["a"], "abs": ["x"], "t": ["a"]}, {"K": 4, "C": 5})
    problems, _ = fragment.compiler_problems(log, w)
    text = "\n".join(problems)
    assert "in k() (line 1): a K&R definition" in text, text
    assert "in u()" not in text, text
    assert "in s() (line 3): unsequenced side effects" in text, text
    assert "(line 4): a constant that overflows" in text, text
    assert "(line 5)" not in text, text
    assert "function abs() has the name of a C library function" in text, text
    assert len(problems) == 4, problems


def test_the_compiler_rule_judges_only_what_the_candidate_wrote(tmp_path):
    """The same diagnostics in the task's functions and globals are not the candidate's; a
    missing log fails closed."""
    log = _gcc_log(tmp_path)
    problems, ok = fragment.compiler_problems(log, _written({"t": ["a"]}, {}))
    assert problems == [] and "Frama-C" in ok
    problems, _ = fragment.compiler_problems(None, _written({"t": ["a"]}, {}))
    assert problems and "missing" in problems[0]


def test_a_job_the_sandbox_ended_keeps_that_verdict():
    """A candidate job killed at the wall-time limit (a step hung) is recorded as
    ``timeout``, not as a rule broken on an output that was never written."""
    t = casp.KIT_CANARY
    cand = Candidate(task_id=t.task_id, model="m", sample=0, output=t.code, origin="test")
    job = casp.build_job(t, cand, "code-from-spec", {}, {"name": "test", "revision": "0"})
    proc = ProcResult(argv=["sh", framac.DRIVER], returncode=-9, wall_s=600.0, timed_out=True)
    verdict, reason, _ = derive(framac.FramaC(), job, proc, casp.judge)
    assert verdict == "timeout", (verdict, reason)
    assert "wall-time limit" in reason


def _record(task, mode, model, verdict, extra):
    return {"task_id": task, "mode": mode, "candidate": {"model": model, "sample": 0}, "verdict": verdict,
            "verifier": {"extra": extra}}


def test_the_report_names_what_the_second_net_did_per_candidate():
    """Every candidate-mode record gets a row: its execution status with the reason when it
    did not pass (a target it cannot run is named), and the spec strength beside
    ``verified``; gold and canaries have none."""
    records = [
        _record("01_57", "spec-from-code", "m", "verified",
                {"execution": {"status": "passed", "reason": "40 inputs"},
                 "strength": {"score": 0.8, "killed": 4, "changed": 5}}),
        _record("05_125", "code-from-spec", "m", "verified",
                {"execution": {"status": "not-run", "reason": "parameter of type double"}}),
        _record("01_57", "gold", "gold", "verified", {}),
        _record("01_57", "code-from-spec", "canary:gold-code", "verified", {}),
    ]
    table = execution_table(records)
    assert table is not None and len(table.rows) == 2
    assert table.rows[0][4:] == ["verified", "passed", "", "0.80 (4/5)"]
    assert table.rows[1][5:7] == ["not-run", "parameter of type double"]
    assert execution_table(records[2:]) is None
