"""Tests of harness/verifiers/framac/.

Part A (``recorded``): the Frama-C 30-era logs of the CASP LLM verification study, read
from the data mirror (``VERIKIT_DATA_MIRRORS``), parsed by ``FramaC.parse`` and compared
with the study's own ``framac_results.csv``.

Part B (``realtool``): the real Frama-C installed here (Debian's 25.0, why3 1.5.1, z3,
cvc4) run through ``HostSandbox`` on small C files written for these tests. A goal that
is expected to fail runs with ``wp_timeout_s=5`` so no test waits for the paper's 60 s.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import time
import types
from pathlib import Path

import psutil
import pytest

from harness import toolchains
from harness.sandbox import Limits, ProcResult
from harness.sandbox.local import HostSandbox
from harness.model import CPUS_ENV, termination
from harness.registry import verifier as get_verifier
from harness.verifiers import VERDICTS
from harness.verifiers.framac import (DEAD_CODE_TESTS_OFF, DRIVER, HAVOC_TIMEOUT_S, PAPER_OPTIONS, REPORT, REQUIRES_LOG,
                                      SOUND_LOG, SOURCE, TASK_VIEW, VIEW, WHY3CONF, FramaC, contract_tests_needed,
                                      dead_code_tests_needed, parse_version)

# --------------------------------------------------------------------------------------
# Part A: recorded Frama-C 30 logs of the CASP study
# --------------------------------------------------------------------------------------

CASP = Path("github/AbdelbasetKABOU/CASP-LLM-Verification-Study/2dd260bfecc15e4a4614bdea2e3001021bf2d646")
BEGIN = "# --- Begin frama-c output ---"
MIRRORS = os.environ.get("VERIKIT_DATA_MIRRORS")
LOCATION = re.compile(r"(\S+\.c):(\d+):")


def _casp_root() -> Path | None:
    for mirror in (MIRRORS or "").split(":"):
        if mirror and (Path(mirror) / CASP / "framac_results.csv").is_file():
            return Path(mirror) / CASP
    return None


def _casp_rows() -> list[dict]:
    root = _casp_root()
    if root is None:
        return []
    with open(root / "framac_results.csv", newline="") as fh:
        return list(csv.DictReader(fh))


CASP_ROOT = _casp_root()
CASP_ROWS = _casp_rows()


def _row_id(row: dict) -> str:
    return f"{row['directory']}-{row['provider']}-{row['model']}-rc{row['returncode']}"


def _count(cell: str) -> int:
    """A CSV count cell: '' -> 0, '14.0' -> 14."""
    return int(float(cell)) if cell.strip() else 0


def _log_body(row: dict) -> str:
    path = CASP_ROOT / "casp_10" / row["directory"] / f"framac_log_{row['provider']}_{row['model']}.log"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.rstrip("\n") == BEGIN]
    assert len(starts) == 1, f"{path}: expected one '{BEGIN}' line"
    return "".join(lines[starts[0] + 1:])


def _need_mirror() -> None:
    if not MIRRORS:
        pytest.skip("VERIKIT_DATA_MIRRORS is unset: no data mirror to read the CASP study logs from")
    if CASP_ROOT is None:
        pytest.fail(f"no mirror in VERIKIT_DATA_MIRRORS={MIRRORS!r} holds {CASP}/framac_results.csv")


@pytest.mark.recorded
def test_casp_mirror_has_all_40_logs():
    _need_mirror()
    assert len(CASP_ROWS) == 40
    assert {r["returncode"] for r in CASP_ROWS} == {"0", "1"}
    for row in CASP_ROWS:
        assert BEGIN not in _log_body(row)  # header fully stripped, body follows


@pytest.mark.recorded
@pytest.mark.parametrize("row", CASP_ROWS, ids=_row_id)
def test_casp_log_parses_like_the_study_csv(row):
    _need_mirror()
    body = _log_body(row)
    res = FramaC().parse(ProcResult(argv=[], returncode=int(row["returncode"]), stdout=body))
    assert res.verdict in VERDICTS
    if row["returncode"] == "1":
        assert res.verdict == "invalid", res.reason
        assert res.goals is None
        first = LOCATION.search(body)
        assert first, "the recorded log names no file:line (test data assumption)"
        assert f"{first.group(1)}:{first.group(2)}" in res.reason
        assert LOCATION.search(res.reason)
        return
    assert row["returncode"] == "0"
    proved, total = _count(row["proved_goals"]), _count(row["total_goals"])
    assert res.goals is not None
    assert (res.goals.proved, res.goals.total) == (proved, total)
    assert res.verdict == ("verified" if proved == total else "failed"), res.reason
    assert res.goals.timeout == _count(row["timeout"])
    for key, column in (("Terminating", "terminating"), ("Unreachable", "unreachable")):
        if row[column].strip():
            assert res.extra[key] == _count(row[column])
        else:
            assert key not in res.extra
    # every '[wp] [Timeout] NAME' line of the log is an unproved goal of the result
    timed_out = set(re.findall(r"^\[wp\] \[Timeout\] (\S+)", body, flags=re.M))
    assert {g["name"] for g in res.goal_results} == timed_out
    assert all(g["status"] == "timeout" for g in res.goal_results)
    assert res.vacuous == []


# --------------------------------------------------------------------------------------
# Part B: the real Frama-C of this machine through HostSandbox
# --------------------------------------------------------------------------------------

CORRECT = """\
/*@ requires n >= 0;
    requires \\valid(a + (0 .. n-1));
    assigns a[0 .. n-1];
    ensures \\forall integer k; 0 <= k < n ==> a[k] == 0;
*/
void zero(int *a, int n) {
  /*@ loop invariant 0 <= i <= n;
      loop invariant \\forall integer k; 0 <= k < i ==> a[k] == 0;
      loop assigns i, a[0 .. n-1];
      loop variant n - i;
  */
  for (int i = 0; i < n; i++) a[i] = 0;
}
"""

WRONG_POST = """\
/*@ assigns \\nothing;
    ensures \\result == 0;
*/
int one(void) {
  return 1;
}
"""

VACUOUS = """\
/*@ requires x > 0 && x < 0;
    assigns \\nothing;
    ensures \\result == x;
*/
int id(int x) {
  return x;
}
"""

SYNTAX_ERROR = """\
/* a C syntax error on line 4 */

int f(int x) {
  int y = x +;
  return y;
}
"""

ACSL_ERROR = """\
/* an unknown logic function on line 4 */

/*@ requires x >= 0;
    ensures \\result == no_such_logic_function(x);
*/
int f(int x) {
  return x;
}
"""

HARD_NONLINEAR = """\
/*@ requires 1 <= x <= 100000 && 1 <= y <= 100000 && 1 <= z <= 100000;
    assigns \\nothing;
    ensures \\result == 1;
*/
int fermat3(int x, int y, int z) {
  //@ assert (integer)x*x*x + (integer)y*y*y != (integer)z*z*z;
  return 1;
}
"""


class Env:
    """The probed toolchain of this machine and the prepared why3.conf."""

    def __init__(self):
        self.sandbox = HostSandbox()
        self.probed = toolchains.probe("framac", self.sandbox)
        self.framac = FramaC()
        self.prepared = self.framac.prepare(self.sandbox, self.probed)
        self._cache: dict = {}

    def run(self, src: str, *, smoke: bool = False, limits: Limits = Limits(wall_s=180), **overrides):
        """Run Frama-C on ``src`` as candidate.c; returns (argv, ProcResult, VerifierResult).

        Identical runs are shared between tests (each costs a real Frama-C call).
        """
        key = (src, smoke, limits, tuple(sorted(overrides.items())))
        if key not in self._cache:
            opts = self.framac.options(self.probed, smoke=smoke, **overrides)
            argv, env, collect = self.framac.command(opts)
            proc = self.sandbox.run(argv, files={**self.prepared, SOURCE: src}, env=env,
                                    collect=collect, limits=limits)
            # as the executor does: the sandbox's ending first, then the tool's reading
            self._cache[key] = (argv, proc, termination(proc, "frama-c") or self.framac.parse(proc))
        return self._cache[key]


@pytest.fixture(scope="module")
def fc() -> Env:
    if shutil.which("frama-c") is None:
        pytest.skip("frama-c is not installed on this machine")
    env = Env()
    assert env.probed.versions["frama-c"], env.probed.tools["frama-c"]
    return env


def _goal_lines(stdout: str) -> list[str]:
    """Frama-C 25 prints one '[wp] [PROVER] Goal NAME ...' line per goal (smoke excluded)."""
    return re.findall(r"^\[wp\] \[[^\]]+\] Goal (\S+)", stdout, flags=re.M)


@pytest.mark.realtool
def test_prepare_detects_installed_provers(fc):
    assert fc.probed.versions["why3"], "why3 is expected on this machine"
    conf = fc.prepared[WHY3CONF].decode()
    for prover, name in (("z3", "Z3"), ("cvc4", "CVC4")):
        if shutil.which(prover):
            assert f'name = "{name}"' in conf


@pytest.mark.realtool
def test_prepare_builds_the_view_plugin_and_runtime_the_same_every_time(fc):
    """The driver's --prepare step builds the compiled view script and E-ACSL's runtime
    object in the sandbox, byte for byte the same from a second build (jobs made from two
    builds have the same files, so the same keys), and a job loads that view plugin."""
    from harness.verifiers.framac import PREPARED

    again = fc.framac.prepare(fc.sandbox, fc.probed)
    for name in PREPARED:
        assert fc.prepared.get(name) and again.get(name) == fc.prepared[name], name
    res = fc.sandbox.run(["sh", DRIVER, SOURCE], files={**fc.prepared, SOURCE: "int f(int x) { return x; }\n"},
                         collect=["view.json"], limits=Limits(wall_s=120))
    assert res.returncode == 0, res.stderr
    assert [f["name"] for f in json.loads(res.files["view.json"])["functions"] if f.get("defined")] == ["f"]


@pytest.mark.realtool
def test_command_line_has_the_paper_options(fc):
    opts = fc.framac.options(fc.probed, smoke=False)
    argv, env, collect = fc.framac.command(opts)
    assert argv[:2] == ["sh", DRIVER] and argv[-1] == SOURCE  # the driver execs frama-c with the rest
    assert "-wp" in argv and "-wp-rte" in argv
    pairs = dict(zip(argv, argv[1:]))
    assert pairs["-wp-steps"] == "500000"
    assert pairs["-wp-timeout"] == "60"
    assert pairs["-wp-report-json"] == REPORT
    assert pairs["-wp-cache"] == "none"  # Frama-C 25 >= 21: no proof reused from outside
    assert "-wp-smoke-tests" not in argv
    installed = [p for p in PAPER_OPTIONS["provers"] if shutil.which(p)]
    assert installed, "no SMT prover installed"
    assert pairs["-wp-prover"].split(",") == installed  # only installed ones, pin order
    assert opts["provers_missing"] == [p for p in PAPER_OPTIONS["provers"] if p not in installed]
    if shutil.which("alt-ergo") is None:
        assert opts["provers_missing"] == ["alt-ergo"]
        assert "alt-ergo" not in pairs["-wp-prover"]
    assert env["WHY3CONFIG"] == WHY3CONF
    havoc = env["VERIKIT_HAVOC_ARGS"].split()  # the vacuity run: ensures only, short limit, no RTE
    assert havoc[:1] == ["-wp"] and "-wp-prop=@ensures" in havoc and "-wp-rte" not in havoc
    assert dict(zip(havoc, havoc[1:]))["-wp-timeout"] == str(HAVOC_TIMEOUT_S)
    assert collect[0] == REPORT and set(collect) >= {"view.json", "task-view.json", "region.i", "havoc.log"}
    assert opts["framac_version"] == fc.probed.versions["frama-c"]


@pytest.mark.realtool
def test_command_line_overrides(fc):
    opts = fc.framac.options(fc.probed, smoke=True, cpus=3, wp_timeout_s=5)
    argv, _, _ = fc.framac.command(opts)
    pairs = dict(zip(argv, argv[1:]))
    assert pairs["-wp-timeout"] == "5" and pairs["-wp-par"] == "3"
    assert "-wp-smoke-tests" in argv
    assert PAPER_OPTIONS["wp_timeout_s"] == 60  # the override did not leak into the pins


@pytest.mark.realtool
def test_correct_program_is_verified(fc):
    _, proc, res = fc.run(CORRECT, wp_timeout_s=5)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert res.verdict == "verified", res.reason
    assert res.goals.total > 0
    assert res.goals.proved == res.goals.total
    assert res.goals.total == len(_goal_lines(proc.stdout))
    assert res.goal_results == [] and res.vacuous == []
    report = json.loads(proc.files[REPORT])
    assert "zero" in report["wp:functions"]


@pytest.mark.realtool
@pytest.mark.parametrize("src", [CORRECT, WRONG_POST], ids=["verified", "failed"])
def test_the_verification_s_wp_takes_the_job_s_cpus_once_the_side_steps_have_ended(fc, src):
    """The job's command with two CPUs for the job (``VERIKIT_CPUS=2``): the side steps
    beside the verification (none shipped here, so they end at once) write vk-cpus-free,
    and the module built by the driver's --prepare step raises WP's prover processes from
    the job's ``-wp-par 1`` to 2 (Frama-C's own scheduler; the raise is written to the
    standard error). The verdict, the goal counts and each goal's status are those of the
    run with one CPU."""
    opts = fc.framac.options(fc.probed, wp_timeout_s=5)
    argv, env, collect = fc.framac.command(opts)
    runs = {}
    for cpus in (1, 2):
        proc = fc.sandbox.run(argv, files={**fc.prepared, SOURCE: src}, env={**env, CPUS_ENV: str(cpus)},
                              collect=collect, limits=Limits(wall_s=180))
        assert proc.returncode == 0, proc.stdout + proc.stderr
        runs[cpus] = proc, fc.framac.parse(proc)
    (one, r1), (two, r2) = runs[1], runs[2]
    assert "[verikit] WP: 2 provers at a time from here" in two.stderr, two.stderr
    assert "[verikit] WP:" not in one.stdout + one.stderr
    assert (r1.verdict, r1.goals, r1.reason) == (r2.verdict, r2.goals, r2.reason)
    # each goal's status (which prover answered first may differ: WP races a goal's provers)
    goal = r"^\[wp\] \[[^\]]+\] Goal (\S+) : (\w+)"
    assert sorted(re.findall(goal, one.stdout, flags=re.M)) == sorted(re.findall(goal, two.stdout, flags=re.M))


@pytest.mark.realtool
def test_wrong_postcondition_fails(fc):
    _, proc, res = fc.run(WRONG_POST, wp_timeout_s=5)
    assert proc.returncode == 0
    assert res.verdict == "failed", res.reason
    assert res.goals.proved < res.goals.total
    by_name = {g["name"]: g for g in res.goal_results}
    assert "typed_one_ensures" in by_name, res.goal_results
    assert by_name["typed_one_ensures"]["status"] != "valid"
    assert "typed_one_ensures" in res.reason
    assert REPORT in proc.files


@pytest.mark.realtool
def test_smoke_test_flags_vacuous_precondition(fc):
    argv, proc, res = fc.run(VACUOUS, smoke=True, wp_timeout_s=5)
    assert "-wp-smoke-tests" in argv
    doomed = set(re.findall(r"^\[wp\] \[Failed\] Smoke-test (\S+)", proc.stdout, flags=re.M))
    assert doomed, "Frama-C reported no failed smoke test for 'requires x > 0 && x < 0'"
    assert set(res.vacuous) == doomed
    assert any("requires" in name for name in res.vacuous)
    assert res.extra.get("smoke_tests", 0) >= 1
    # smoke tests are not counted as goals
    assert res.goals.total == len(_goal_lines(proc.stdout))


@pytest.mark.realtool
def test_without_smoke_tests_nothing_is_vacuous(fc):
    argv, proc, res = fc.run(VACUOUS, smoke=False, wp_timeout_s=5)
    assert "-wp-smoke-tests" not in argv
    assert "Smoke-test" not in proc.stdout
    assert res.vacuous == []
    assert res.verdict == "verified"  # a false precondition proves anything


@pytest.mark.realtool
def test_vacuous_contract_is_not_verified(fc):
    _, _, res = fc.run(VACUOUS, smoke=True, wp_timeout_s=5)
    assert res.vacuous
    assert res.verdict != "verified"


@pytest.mark.realtool
@pytest.mark.slow
def test_passed_smoke_tests_do_not_change_goal_counts(fc):
    _, plain_proc, plain = fc.run(CORRECT, wp_timeout_s=5)
    _, proc, res = fc.run(CORRECT, smoke=True, wp_timeout_s=5)
    passed = re.findall(r"^\[wp\] \[Passed\] Smoke-test (\S+)", proc.stdout, flags=re.M)
    assert passed, "expected passed smoke tests on a consistent contract"
    assert res.verdict == "verified" and res.vacuous == []
    assert (res.goals.proved, res.goals.total) == (plain.goals.proved, plain.goals.total)
    assert res.extra["smoke_tests"] == len(set(passed))


INVALID_CASES = [
    pytest.param(SYNTAX_ERROR, id="c-syntax-error"),
    pytest.param(ACSL_ERROR, id="acsl-unknown-logic-function"),
]


@pytest.mark.realtool
@pytest.mark.parametrize("src", INVALID_CASES)
def test_invalid_input(fc, src):
    _, proc, res = fc.run(src, wp_timeout_s=5)
    assert proc.returncode not in (0, None)
    assert res.verdict == "invalid", res.reason
    assert res.goals is None
    assert res.messages


@pytest.mark.realtool
@pytest.mark.parametrize("src", [
    pytest.param(SYNTAX_ERROR, id="c-syntax-error"),
    pytest.param(ACSL_ERROR, id="acsl-unknown-logic-function"),
])
def test_invalid_input_reason_names_the_line(fc, src):
    _, proc, res = fc.run(src, wp_timeout_s=5)
    assert "candidate.c:4:" in proc.stdout  # Frama-C itself locates the error on line 4
    assert res.verdict == "invalid"
    assert "candidate.c:4" in res.reason, res.reason


def _orphans_since(t0: float) -> list[str]:
    """Live processes started after ``t0`` whose HOME is a job scratch dir that is gone."""
    found = []
    for p in psutil.process_iter(["create_time", "status", "name"]):
        try:
            if p.info["create_time"] < t0 - 1 or p.info["status"] == psutil.STATUS_ZOMBIE:
                continue
            home = p.environ().get("HOME", "")
        except psutil.Error:
            continue
        if "verikit-job-" in home and not os.path.exists(home):
            found.append(f"{p.pid} {p.info['name']}")
    return found


@pytest.mark.realtool
def test_wall_limit_gives_timeout(fc):
    t0 = time.time()
    _, proc, res = fc.run(HARD_NONLINEAR, wp_timeout_s=30, limits=Limits(wall_s=1))
    assert proc.timed_out is True
    assert res.verdict == "timeout", res.reason
    assert res.goals is None
    deadline = time.monotonic() + 3
    while _orphans_since(t0) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _orphans_since(t0) == [], "Frama-C or a prover outlived the killed job"


@pytest.mark.parametrize("flags, verdict", [
    ({"timed_out": True}, "timeout"),
    ({"memout": True}, "memout"),
    ({"start_error": "FileNotFoundError: [Errno 2] No such file or directory: 'frama-c'"}, "infra_error"),
])
def test_job_level_outcomes(flags, verdict):
    """The sandbox's ending is mapped once (model.termination, applied by the executor)."""
    proc = ProcResult(argv=["frama-c"], returncode=None if "start_error" in flags else -9, **flags)
    res = termination(proc, get_verifier("framac").name)
    assert res.verdict == verdict
    assert res.goals is None
    if verdict == "infra_error":
        assert "FileNotFoundError" in res.reason


def test_missing_frama_c_binary_is_infra_error():
    proc = HostSandbox().run(["verikit-no-such-frama-c", "-version"])
    res = termination(proc, "frama-c")
    assert proc.start_error
    assert res.verdict == "infra_error"


@pytest.mark.parametrize("raw, expected", [
    ("25.0-beta (Manganese)", (25, 0)),
    ("30.0 (Zinc)", (30, 0)),
    ("27.1", (27, 1)),
    (None, (0, 0)),
    ("unknown", (0, 0)),
])
def test_parse_version(raw, expected):
    assert parse_version(raw) == expected


DEAD_BRANCH = """\
/*@ requires y > 10;
    assigns \\nothing;
    ensures \\result >= 0; */
int g(int y) {
  int x = 0;
  if (y > 0) { x = 50; } else { x = -1; }
  return x;
}
"""


@pytest.mark.realtool
def test_dead_branch_under_a_consistent_precondition_is_not_vacuous(fc):
    """CASP pair 04_140's shape: a strong precondition makes a branch dead. The smoke
    test on the branch fails, the one on the precondition passes: reported, not vacuous."""
    _, proc, res = fc.run(DEAD_BRANCH, smoke=True, wp_timeout_s=5)
    failed = re.findall(r"^\[wp\] \[Failed\] Smoke-test (\S+)", proc.stdout, flags=re.M)
    assert failed and all("requires" not in n for n in failed)
    assert res.vacuous == []
    assert res.extra["dead_code"] == sorted(set(failed))
    assert res.verdict == "verified", res.reason


#: Frama-C 25's output (captured here) for ``while (1) ;`` before ``return a;`` under
#: ``ensures \\result == a``, with smoke tests: the unreachable return is a failed smoke
#: test named only by its location, yet counted in the summary's total.
UNNAMED_SMOKE_LOG = """[kernel] Parsing c.c (with preprocessing)
[wp] Running WP plugin...
[rte:annot] annotating function f
[wp] c.c:6: Warning: Failed smoke-test
[wp] [CFG] Goal f_assigns : Valid (Unreachable)
[wp] [CFG] Goal f_ensures : Valid (Unreachable)
[wp] c.c:5: Warning: Missing assigns clause (assigns 'everything' instead)
[wp] 2 goals scheduled
[wp] [Passed] Smoke-test typed_f_wp_smoke_default_requires
[wp] [Passed] Smoke-test typed_f_wp_smoke_dead_loop_s1
[wp] Proved goals:    4 / 5
  Qed:             0  (0.34ms-0.90ms)
  CVC4 1.8:        2
  Z3 4.8.12:       2  (2s)
"""


def test_a_failed_smoke_test_named_only_by_its_location_is_not_a_goal():
    res = FramaC().parse(ProcResult(argv=["sh", DRIVER, "-wp", "-wp-smoke-tests", SOURCE], returncode=0,
                                    stdout=UNNAMED_SMOKE_LOG))
    assert (res.goals.proved, res.goals.total) == (2, 2) and res.verdict == "verified", res.goals
    assert res.extra["smoke_tests"] == 3 and res.extra["smoke_failed_unnamed"] == ["c.c:6"]
    # the located warning that follows a named failed smoke test is that test's, not another
    named = ("[wp] [Failed] Smoke-test typed_f_wp_smoke_default_requires\n       Qed: Valid\n"
             "[wp] c.c:3: Warning: Failed smoke-test\n"
             "[wp] [Qed] Goal typed_f_ensures : Valid (1ms)\n[wp] Proved goals:    1 / 2\n")
    res = FramaC().parse(ProcResult(argv=["sh", DRIVER, "-wp", "-wp-smoke-tests", SOURCE], returncode=0, stdout=named))
    assert (res.goals.proved, res.goals.total) == (1, 1) and "smoke_failed_unnamed" not in res.extra
    assert res.vacuous == ["typed_f_wp_smoke_default_requires"]


# --------------------------------------------------------------------------------------
# The smoke tests of unreachable code: run only where they can decide the verdict
# --------------------------------------------------------------------------------------

#: A soundness run's log in which every smoke test passed (Frama-C 25's dialect).
SOUND_OK = ("[wp] [Passed] Smoke-test typed_f_wp_smoke_default_requires\n"
            "[wp] Proved goals:    1 / 1\n")
SOUND_DOOMED = ("[wp] [Failed] Smoke-test typed_f_wp_smoke_default_requires\n"
                "[wp] Proved goals:    0 / 1\n")


def _view(*functions, clauses=()) -> bytes:
    """A view (``framac_view.ml``'s shape) of ``(name, defined, callees)`` functions; the
    first one's contract is ``clauses``: ``(behavior, kind, text)``."""
    return json.dumps({"functions": [{"name": n, "defined": d, "calls": [{"callee": c, "line": 1} for c in calls],
                                      "clauses": [{"behavior": b, "kind": k, "status": "assert", "text": t}
                                                  for b, k, t in (clauses if i == 0 else ())]}
                                     for i, (n, d, calls) in enumerate(functions)]}).encode()


@pytest.mark.parametrize("files, needed", [
    ({VIEW: _view(("f", True, []), ("g", True, ["f"])), SOUND_LOG: SOUND_OK.encode()}, None),
    ({VIEW: _view(("f", True, ["abs"]), ("abs", False, [])), SOUND_LOG: SOUND_OK.encode()}, "f() calls abs()"),
    ({VIEW: _view(("f", True, [None])), SOUND_LOG: SOUND_OK.encode()}, "through a pointer"),
    ({VIEW: _view(("f", False, ["g"])), SOUND_LOG: SOUND_OK.encode()}, None),  # no body: its calls are not code
    ({VIEW: _view(("f", True, [])), SOUND_LOG: SOUND_DOOMED.encode()}, "failed a smoke test"),
    ({VIEW: _view(("f", True, []))}, "soundness run gave no answer"),
    ({VIEW: b"{not json", SOUND_LOG: SOUND_OK.encode()}, "no readable view"),
    ({SOUND_LOG: SOUND_OK.encode()}, "no readable view"),
], ids=["no-bodiless-call", "bodiless-callee", "indirect-call", "declaration-only", "task-inconsistent",
        "no-soundness-run", "unreadable-view", "no-view"])
def test_dead_code_tests_needed(files, needed):
    why = dead_code_tests_needed(files)
    assert (why is None) == (needed is None), why
    assert needed is None or needed in why


def test_command_after_gate_leaves_dead_code_tests_out_only_where_they_cannot_decide():
    v = FramaC()
    probed = types.SimpleNamespace(versions={"frama-c": "25.0", "z3": "4.8.12"})
    quiet = {VIEW: _view(("f", True, [])), SOUND_LOG: SOUND_OK.encode()}
    smoke = v.options(probed, smoke=True)
    full, env, collect = v.command(smoke)
    argv, env2, collect2 = v.command_after_gate(smoke, quiet)
    assert (env2, collect2) == (env, collect)
    assert [a for a in argv if a not in DEAD_CODE_TESTS_OFF] == full
    assert argv.index(DEAD_CODE_TESTS_OFF[0]) == argv.index("-wp-smoke-tests") + 1
    needed = {VIEW: _view(("f", True, ["abs"])), SOUND_LOG: SOUND_OK.encode()}
    assert v.command_after_gate(smoke, needed)[0] == full
    plain = v.options(probed, smoke=False)
    assert v.command_after_gate(plain, quiet)[0] == v.command(plain)[0]


def test_the_verification_carries_the_gate_s_requires_probe_log_only():
    v = FramaC()
    probed = types.SimpleNamespace(versions={"frama-c": "25.0", "z3": "4.8.12"})
    opts = v.options(probed, smoke=True)
    gate_files = {VIEW: _view(("f", True, [])), REQUIRES_LOG: b"[wp] Proved goals:    1 / 1\n", "vk-gate": b""}
    assert v.carry_from_gate(opts, gate_files) == {REQUIRES_LOG: gate_files[REQUIRES_LOG]}
    assert v.carry_from_gate(opts, {VIEW: gate_files[VIEW]}) == {}  # no probe in the gate: none


def test_parse_says_which_smoke_tests_ran_and_fails_closed_when_left_out_wrongly():
    log = ("[wp] [Passed] Smoke-test typed_f_wp_smoke_default_requires\n"
           "[wp] [Qed] Goal typed_f_ensures : Valid (1ms)\n"
           "[wp] Proved goals:    2 / 2\n")
    opts = {"smoke_tests": True, "function": "f"}
    argv = ["sh", DRIVER, "-wp", "-wp-smoke-tests", *DEAD_CODE_TESTS_OFF, SOURCE]
    quiet = {VIEW: _view(("f", True, [])), SOUND_LOG: SOUND_OK.encode()}
    res = FramaC().parse(ProcResult(argv=argv, returncode=0, stdout=log, files=quiet), opts)
    assert res.verdict == "verified"
    assert (res.extra["dead_code_tests"], res.extra["contract_tests"]) == ("left-out", "run")
    # the verification's own view shows a call to a function without a body: they could decide
    wrong = {VIEW: _view(("f", True, ["abs"])), SOUND_LOG: SOUND_OK.encode()}
    res = FramaC().parse(ProcResult(argv=argv, returncode=0, stdout=log, files=wrong), opts)
    assert res.verdict == "failed" and "fail closed" in res.reason and "abs()" in res.reason
    full = [a for a in argv if a not in DEAD_CODE_TESTS_OFF]
    res = FramaC().parse(ProcResult(argv=full, returncode=0, stdout=log, files=wrong), opts)
    assert res.verdict == "verified" and res.extra["dead_code_tests"] == "run"
    # none ran: fine on the task's own contract, failed on a candidate's the probe does not imply
    none = [a for a in argv if a not in DEAD_CODE_TESTS_OFF and a != "-wp-smoke-tests"]
    plain = "[wp] [Qed] Goal typed_f_ensures : Valid (1ms)\n[wp] Proved goals:    1 / 1\n"
    own = {**quiet, VIEW: _view(("f", True, []), clauses=[REQ]), TASK_VIEW: _view(("f", False, []), clauses=[REQ])}
    res = FramaC().parse(ProcResult(argv=none, returncode=0, stdout=plain, files=own), opts)
    assert res.verdict == "verified"
    assert (res.extra["dead_code_tests"], res.extra["contract_tests"]) == ("left-out", "left-out")
    theirs = {**own, TASK_VIEW: _view(("f", False, [])), REQUIRES_LOG: PROBE_OPEN.encode()}
    res = FramaC().parse(ProcResult(argv=none, returncode=0, stdout=plain, files=theirs), opts)
    assert res.verdict == "failed" and "fail closed" in res.reason and "requires probe" in res.reason
    # a gold job asks for no smoke tests: nothing to say
    res = FramaC().parse(ProcResult(argv=none, returncode=0, stdout=plain, files=theirs), {"smoke_tests": False})
    assert res.verdict == "verified" and "contract_tests" not in res.extra


#: A requires clause of f's default behaviour, as the view prints it.
REQ = ("default!", "requires", "y > 10")
#: The requires probe's WP log (Frama-C 25): the task's requires imply the candidate's, or not.
PROBE_PROVED = ("[wp] [Qed] Goal typed_vk_requires_probe_call_f_requires : Valid (1ms)\n"
                "[wp] Proved goals:    1 / 1\n")
PROBE_OPEN = ("[wp] [Failed] Goal typed_vk_requires_probe_call_f_requires\n"
              "  Z3 4.8.12: Unknown (Qed:1ms) (10ms)\n"
              "[wp] Proved goals:    0 / 1\n")


def _with(view: bytes, name: str, **fields) -> bytes:
    """``view`` with ``fields`` set on function ``name``."""
    data = json.loads(view)
    next(f for f in data["functions"] if f["name"] == name).update(fields)
    return json.dumps(data).encode()


#: spec-from-code: the task's code calls abs(), which has no body; the candidate's contract
#: (REQ) is not in the task's view (that view has the task's code, not its contract)
TASK_CALL = {VIEW: _view(("f", True, ["abs"]), ("abs", False, []), clauses=[REQ]),
             TASK_VIEW: _view(("f", True, ["abs"]), ("abs", False, [])),
             REQUIRES_LOG: PROBE_PROVED.encode(), SOUND_LOG: SOUND_OK.encode()}


@pytest.mark.parametrize("change, needed", [
    ({}, None),
    ({REQUIRES_LOG: PROBE_OPEN.encode()}, "f() calls abs()"),  # the candidate's requires may be stronger
    ({VIEW: _with(TASK_CALL[VIEW], "f", body="{ abs(0); }")}, "f() calls abs()"),  # not the task's code
    ({VIEW: _with(TASK_CALL[VIEW], "abs", spec_digest="a contract of the candidate's")}, "f() calls abs()"),
    ({TASK_VIEW: _view(("f", True, []), ("abs", False, []))}, "f() calls abs()"),  # the task's code makes no call
    ({TASK_VIEW: b"{not json"}, "f() calls abs()"),
    ({SOUND_LOG: SOUND_DOOMED.encode()}, "failed a smoke test"),
], ids=["task-call-implied-requires", "probe-open", "other-body", "other-callee-contract", "call-not-in-task",
        "unreadable-task-view", "task-inconsistent"])
def test_dead_code_tests_left_out_on_the_task_own_calls_under_an_implied_precondition(change, needed):
    why = dead_code_tests_needed({**TASK_CALL, **change}, "f")
    assert (why is None) == (needed is None), why
    assert needed is None or needed in why
    # a function other than the target: its precondition must be the task's own
    assert "g() calls abs()" in dead_code_tests_needed(
        {**TASK_CALL, VIEW: _view(("g", True, ["abs"]), ("abs", False, []), clauses=[REQ]),
         TASK_VIEW: _view(("g", True, ["abs"]), ("abs", False, []))}, "f")
    assert dead_code_tests_needed({**TASK_CALL, VIEW: _view(("g", True, ["abs"]), ("abs", False, [])),
                                   TASK_VIEW: _view(("g", True, ["abs"]), ("abs", False, []))}, "f") is None


@pytest.mark.parametrize("files, needed", [
    ({VIEW: _view(("f", True, []))}, None),
    ({VIEW: _view(("f", True, []), clauses=[REQ]), TASK_VIEW: _view(("f", False, []), clauses=[REQ])}, None),
    ({VIEW: _view(("f", True, []), clauses=[REQ]), TASK_VIEW: _view(("f", False, [])),
      REQUIRES_LOG: PROBE_PROVED.encode()}, None),
    ({VIEW: _view(("f", True, []), clauses=[REQ]), TASK_VIEW: _view(("f", False, [])),
      REQUIRES_LOG: PROBE_OPEN.encode()}, "0/1 goals of the requires probe"),
    ({VIEW: _view(("f", True, []), clauses=[REQ]), TASK_VIEW: _view(("f", False, []))}, "no answer"),
    ({VIEW: _view(("f", True, []), clauses=[REQ]), TASK_VIEW: _view(("f", False, [])),
      REQUIRES_LOG: b"[kernel] User Error: ...\n[kernel] Frama-C aborted: invalid user input.\n"}, "no answer"),
    ({VIEW: _view(("f", True, []), clauses=[REQ, ("pos", "assumes", "y > 0")]), TASK_VIEW: _view(("f", False, [])),
      REQUIRES_LOG: PROBE_PROVED.encode()}, "behaviours"),
    ({VIEW: _view(("f", True, []), clauses=[REQ, ("default!", "requires", "y < 5")]),
      TASK_VIEW: _view(("f", False, []), clauses=[REQ])}, "no answer"),  # one clause added to the task's
    ({VIEW: _view(("g", True, []))}, "no readable view of f()"),
    ({VIEW: b"{not json"}, "no readable view"),
], ids=["no-precondition", "the-task-contract", "probe-proved", "probe-not-proved", "no-probe", "probe-rejected",
        "behaviours", "clause-added", "no-target", "unreadable-view"])
def test_contract_tests_needed(files, needed):
    why = contract_tests_needed(files, "f")
    assert (why is None) == (needed is None), why
    assert needed is None or needed in why
    assert contract_tests_needed(files, None) == "no target function"


def test_command_after_gate_leaves_every_smoke_test_out_only_where_none_can_decide():
    v = FramaC()
    probed = types.SimpleNamespace(versions={"frama-c": "25.0", "z3": "4.8.12"})
    smoke = v.options(probed, smoke=True, function="f")
    full, env, collect = v.command(smoke)
    own = {VIEW: _view(("f", True, []), clauses=[REQ]), TASK_VIEW: _view(("f", False, []), clauses=[REQ]),
           SOUND_LOG: SOUND_OK.encode()}
    argv, env2, collect2 = v.command_after_gate(smoke, own)
    assert (env2, collect2) == (env, collect)
    assert argv == [a for a in full if a != "-wp-smoke-tests"]
    # a candidate's contract the probe does not imply: the contract's tests run, not those of dead code
    theirs = {**own, TASK_VIEW: _view(("f", False, [])), REQUIRES_LOG: PROBE_OPEN.encode()}
    assert [a for a in v.command_after_gate(smoke, theirs)[0] if a not in DEAD_CODE_TESTS_OFF] == full
    # unreachable code can decide: every test runs, whatever the contract
    calls = {**own, VIEW: _view(("f", True, ["abs"]), clauses=[REQ])}
    assert v.command_after_gate(smoke, calls)[0] == full


DEFENSIVE = """/*@ requires y > 10;
    assigns \\nothing;
    ensures \\result >= 0;
*/
int g(int y) {
  int x = 0;
  if (y > 0) { x = 50; } else { x = -250; }
  return x;
}
"""

CALLS_WITHOUT_BODY = """/*@ assigns \\nothing;
    ensures \\false; */
void stop(void);

/*@ requires y > 10;
    assigns \\nothing;
    ensures \\result >= 0;
*/
int g(int y) {
  stop();
  return -1;
}
"""


@pytest.mark.realtool
@pytest.mark.slow
@pytest.mark.parametrize("src, left_out", [(DEFENSIVE, True), (CALLS_WITHOUT_BODY, False)],
                         ids=["defensive-branch", "call-without-body"])
def test_dead_code_tests_after_gate_with_the_real_tool(fc, src, left_out):
    """The gate's view, made by the real driver (with a consistent task's soundness log),
    decides whether the verification runs the smoke tests of unreachable code; where it
    does, it finds the unreachable code as before, and where it does not, the verdict and
    goal counts are the full command's."""
    opts = fc.framac.options(fc.probed, smoke=True, wp_timeout_s=5, gate=True)
    limits = Limits(wall_s=180)
    g_argv, g_env, g_collect = fc.framac.gate(opts)
    gate = fc.sandbox.run(g_argv, files={**fc.prepared, SOURCE: src}, env=g_env, collect=g_collect, limits=limits)
    task = {SOUND_LOG: SOUND_OK.encode()}
    gate_files = {**gate.files, **task}
    assert VIEW in gate_files and SOUND_LOG in gate_files
    argv, env, collect = fc.framac.command_after_gate(opts, gate_files)
    assert (DEAD_CODE_TESTS_OFF[0] in argv) is left_out
    proc = fc.sandbox.run(argv, files={**fc.prepared, SOURCE: src}, env=env, collect=collect, limits=limits)
    res = fc.framac.parse(ProcResult(**{**proc.__dict__, "files": {**proc.files, **task}}), opts)
    full_argv, _, _ = fc.framac.command(opts)
    full = res if full_argv == argv else fc.framac.parse(  # the same command: not run twice
        fc.sandbox.run(full_argv, files={**fc.prepared, SOURCE: src}, env=env, collect=collect, limits=limits), opts)
    assert full.extra.get("dead_code"), "the full command finds the unreachable code"
    assert (res.goals.proved, res.goals.total) == (full.goals.proved, full.goals.total)
    assert res.verdict == full.verdict == "verified"
    if left_out:
        assert res.extra["dead_code_tests"] == "left-out" and not res.extra.get("dead_code")
        assert res.extra["smoke_tests"] < full.extra["smoke_tests"]
    else:
        assert res.extra["dead_code_tests"] == "run" and res.extra["dead_code"] == full.extra["dead_code"]


#: The requires probe of a candidate's contract on ``g`` (``harness/benchmarks/casp/jobs.py``
#: ``_requires_probe``): the candidate's contract on a declaration, then a probe with the
#: task's contract (``requires y > 20``) that calls ``g``.
PROBE = """/*@ requires {requires};
    assigns \\nothing;
    ensures \\result >= 0;
*/
int g(int y);
/*@ requires y > 20; */
int vk_requires_probe(int y) {{ return g(y); }}
"""


@pytest.mark.realtool
@pytest.mark.slow
@pytest.mark.parametrize("requires, left_out", [("y > 10", True), ("y > 10 && y < 5", False)],
                         ids=["implied-by-the-task", "inconsistent"])
def test_contract_tests_after_gate_with_the_real_tool(fc, requires, left_out):
    """The gate runs the requires probe; where it proves that the task's requires imply the
    candidate's, the verification runs no smoke test and gets the full command's verdict
    and goal counts; where it does not (an inconsistent requires), the smoke tests of the
    contract run and find the inconsistency."""
    src = DEFENSIVE.replace("y > 10", requires)
    files = {**fc.prepared, SOURCE: src, "requires.c": PROBE.format(requires=requires)}
    opts = fc.framac.options(fc.probed, smoke=True, wp_timeout_s=5, gate=True, function="g")
    limits = Limits(wall_s=180)
    g_argv, g_env, g_collect = fc.framac.gate(opts)
    gate = fc.sandbox.run(g_argv, files=files, env=g_env, collect=g_collect, limits=limits)
    task = {SOUND_LOG: SOUND_OK.encode()}
    gate_files = {**gate.files, **task}
    assert REQUIRES_LOG in gate_files and "vk_requires_probe" in gate_files[REQUIRES_LOG].decode()
    argv, env, collect = fc.framac.command_after_gate(opts, gate_files)
    assert ("-wp-smoke-tests" not in argv) is left_out
    proc = fc.sandbox.run(argv, files=files, env=env, collect=collect, limits=limits)
    res = fc.framac.parse(ProcResult(**{**proc.__dict__, "files": {**proc.files, **task}}), opts)
    if left_out:
        assert res.extra["contract_tests"] == "left-out" and "smoke_tests" not in res.extra
        full = fc.framac.parse(fc.sandbox.run(fc.framac.command(opts)[0], files=files, env=env, collect=collect,
                                              limits=limits), opts)
        assert full.extra["smoke_tests"] >= 1 and not full.vacuous
        assert (res.verdict, res.goals.proved, res.goals.total) == (full.verdict, full.goals.proved, full.goals.total)
        assert res.verdict == "verified"
    else:
        assert res.extra["contract_tests"] == "run" and res.extra["dead_code_tests"] == "left-out"
        assert res.verdict == "failed" and res.vacuous == ["typed_g_wp_smoke_default_requires"]


#: spec-from-code on a task whose code calls a library function without a body: the
#: candidate's contract (``{contract}``) over the task's code, whose defensive branch after
#: ``abs`` is unreachable under any precondition (the task's code, not the candidate's).
TASK_CODE = """int g(int y) {
  int r = abs(y);
  if (r < 0) return 0;
  return r;
}
"""
CANDIDATE = "#include <stdlib.h>\n/*@ requires y > 10;\n    assigns \\nothing;\n    ensures \\result >= 0;\n*/\n"


@pytest.mark.realtool
@pytest.mark.slow
def test_dead_code_tests_left_out_on_the_task_own_library_call_with_the_real_tool(fc):
    """A task run writes the view of the task's code (``task.c``), the gate runs the
    requires probe; the call to ``abs`` is the task's own and the task's requires imply the
    candidate's, so the verification runs no smoke test, gets the full command's verdict
    and goal counts, and the task's unreachable defensive branch, which the full command
    finds, is not the candidate's to answer for."""
    files = {**fc.prepared, SOURCE: CANDIDATE + TASK_CODE, "task.c": "#include <stdlib.h>\n" + TASK_CODE,
             "requires.c": "#include <stdlib.h>\n" + PROBE.format(requires="y > 10")}
    opts = fc.framac.options(fc.probed, smoke=True, wp_timeout_s=5, gate=True, function="g")
    limits = Limits(wall_s=180)
    t_argv, t_env, t_collect = fc.framac.task_command(opts)
    task = {**fc.sandbox.run(t_argv, files={**fc.prepared, "task.c": files["task.c"]}, env=t_env, collect=t_collect,
                             limits=limits).files, SOUND_LOG: SOUND_OK.encode()}
    assert TASK_VIEW in task
    g_argv, g_env, g_collect = fc.framac.gate(opts)
    gate_files = {**fc.sandbox.run(g_argv, files=files, env=g_env, collect=g_collect, limits=limits).files, **task}
    assert dead_code_tests_needed({**gate_files, TASK_VIEW: b"{}"}, "g") == "g() calls abs(), which has no body"
    argv, env, collect = fc.framac.command_after_gate(opts, gate_files)
    assert "-wp-smoke-tests" not in argv
    proc = fc.sandbox.run(argv, files=files, env=env, collect=collect, limits=limits)
    res = fc.framac.parse(ProcResult(**{**proc.__dict__, "files": {**proc.files, **task}}), opts)
    assert (res.extra["dead_code_tests"], res.extra["contract_tests"]) == ("left-out", "left-out")
    full = fc.framac.parse(fc.sandbox.run(fc.framac.command(opts)[0], files=files, env=env, collect=collect,
                                          limits=limits), opts)
    assert full.extra.get("dead_code"), "the full command finds the task's unreachable branch"
    assert (res.verdict, res.goals.proved, res.goals.total) == (full.verdict, full.goals.proved, full.goals.total)
    assert res.verdict == "verified"


#: A loop annotation of Eva's (an ACSL extension): Frama-C parses it only with Eva loaded.
EVA_EXTENSION = "int f(int n) {\n  int s = 0;\n  //@ loop unroll 2;\n  for (int i = 0; i < n; i++) s += i;\n  return s;\n}\n"


@pytest.mark.realtool
def test_a_parse_that_few_plug_ins_cannot_make_is_made_again_with_every_plug_in(fc):
    """The driver's own steps start Frama-C with few plug-ins (its ``fc``). A file with an
    ACSL extension of a plug-in left out does not parse so: the gate's view is then made
    again with every plug-in, and it is that run's, byte for byte; the gate reads no
    parse error."""
    light = fc.sandbox.run(["frama-c", "-no-autoload-plugins", "-load-module", "frama-c-variadic", SOURCE],
                           files={SOURCE: EVA_EXTENSION}, limits=Limits(wall_s=120))
    assert light.returncode != 0 and "unroll" in light.stdout + light.stderr  # so the fallback is what is tested
    opts = fc.framac.options(fc.probed, gate=True)
    argv, env, collect = fc.framac.gate(opts)
    gate = fc.sandbox.run(argv, files={**fc.prepared, SOURCE: EVA_EXTENSION}, env=env, collect=collect,
                          limits=Limits(wall_s=120))
    assert gate.returncode == 0, gate.stdout + gate.stderr
    assert fc.framac.parse(gate, opts).verdict == "failed"  # "WP not run": a gate that parsed, not "invalid"
    full = fc.sandbox.run(["frama-c", "-load-module", "verikit_framac_view.cmxs", SOURCE], env={"VERIKIT_VIEW": VIEW},
                          files={**fc.prepared, SOURCE: EVA_EXTENSION}, collect=[VIEW], limits=Limits(wall_s=120))
    here = re.compile(rb"/[^\s\"']*?/verikit-job-[^/\s\"']*/")  # each run's own job directory
    assert here.sub(b"", gate.files[VIEW]) == here.sub(b"", full.files[VIEW])
    assert "loop unroll 2" in json.dumps(json.loads(gate.files[VIEW]))


@pytest.mark.realtool
def test_the_kit_s_own_frama_c_steps_compute_with_few_plug_ins_what_they_compute_with_every_plug_in(monkeypatch):
    """``scripts/framac_plugins_check.py`` on a task of casp-sample10, the gold and one
    LLM candidate in each candidate mode, every job in full: the task runs, the gate and
    the verification as shipped (few plug-ins for the kit's own steps and E-ACSL) and with
    a ``frama-c`` that refuses them (every step with every plug-in) write the same views,
    E-ACSL sources, WP logs (times aside) and execution logs."""
    import importlib.util

    if shutil.which("frama-c") is None:
        pytest.skip("frama-c is not installed on this machine")
    scripts = Path(__file__).resolve().parents[1] / "scripts"
    monkeypatch.syspath_prepend(str(scripts))
    spec = importlib.util.spec_from_file_location("framac_plugins_check", scripts / "framac_plugins_check.py")
    check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check)
    lines: list[str] = []
    res = check.check("casp-sample10", ["04_140"], keep=lambda j: j.candidate["model"] in ("gold", "openai/gpt-5.2"),
                      echo=lines.append)
    assert res["jobs"] == 3, lines  # the gold in both modes, the LLM in spec-from-code (none in code-from-spec here)
    assert res["differ"] == [], "\n".join(lines)
    assert all("the same" in line for line in lines)


def test_the_plug_in_check_tells_a_plug_in_s_difference_from_a_run_to_run_one(monkeypatch):
    """A log line on which two runs as shipped agree and the run with every plug-in does
    not is a difference; a line that differs between the two runs as shipped (a mutant
    returning what uninitialised memory holds) is not."""
    import importlib.util

    scripts = Path(__file__).resolve().parents[1] / "scripts"
    monkeypatch.syspath_prepend(str(scripts))
    spec = importlib.util.spec_from_file_location("framac_plugins_check", scripts / "framac_plugins_check.py")
    check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check)
    log = "job/vk_exec.log"

    def runs(*texts):
        return [{log: t.encode(), "job/view.json": b"{}"} for t in texts]

    light, again, full = runs("@ mut 8 0\n> R 17 | 0\n", "@ mut 8 0\n> R -5 | 0\n", "@ mut 8 0\n> R 3 | 0\n")
    assert check.run_to_run([log], light, again, full) == ([], [log])
    light, again, full = runs("@ mut 8 0\n> R 17 | 0\n", "@ mut 8 0\n> R -5 | 0\n", "@ mut 9 0\n> R 3 | 0\n")
    assert check.run_to_run([log], light, again, full) == ([log], [])
    light, again, full = runs("build ok\n", "build ok\n", "build failed\n")
    assert check.run_to_run([log], light, again, full) == ([log], [])
    light["job/view.json"] = b'{"globals": []}'  # a view that differs: exact text, no lines to align
    assert check.run_to_run(["job/view.json"], light, again, full) == ([], ["job/view.json"])
