"""A sixth benchmark as an outside plugin: ``tests/plugins/verikit-smtlib``, its
own distribution, installed into the test environment (``nox -s tests`` installs every
``tests/plugins/*``), found by entry points only, with zero edits of the kit.

Its verifier is the real Z3 of this machine (Debian's z3 4.8.12, installed by the
toolchain bootstrap with Frama-C's provers). One real run is shared by the tests: gold,
the two stand-in models and the 11 canaries on five loops. Checked through the CLI:
``verikit list`` shows it, ``run`` and ``validate`` work (re-judged from the stored Z3
output), the HTML report has its section, ``publish --dry-run`` includes it, its own
command ``verikit smtlib vcs`` runs; and its allow-list, execution cross-check and
fail-closed reading are unit-tested.
"""

from __future__ import annotations

import json
import shutil

import pytest

from harness import datasets, registry
from harness.cli import main
from harness.model import ProcResult, VerifierResult
from harness.results import load_records

pytest.importorskip("verikit_smtlib", reason="the example plugin is not installed (nox -s tests installs it)")

from verikit_smtlib import BENCHMARK, benchmark as smt, terms  # noqa: E402
from verikit_smtlib.z3 import Z3  # noqa: E402

needs_z3 = pytest.mark.skipif(shutil.which("z3") is None, reason="needs z3 on the host (scripts/bootstrap-debian.sh)")

EXPECTED = {  # (model, task) -> verdict, from the loops and invariants as written
    ("gold", "count-up"): "verified", ("gold", "count-down"): "verified", ("gold", "double"): "verified",
    ("gold", "triangle"): "verified", ("gold", "swap-sum"): "verified",
    ("model-a", "count-up"): "verified", ("model-a", "count-down"): "verified", ("model-a", "double"): "verified",
    ("model-a", "triangle"): "verified", ("model-a", "swap-sum"): "failed",  # a+b=k alone is not strong enough
    ("model-b", "count-up"): "verified", ("model-b", "count-down"): "failed",  # x>0 is false when n=0
    ("model-b", "double"): "failed", ("model-b", "triangle"): "verified",  # code fence: extracted
    ("model-b", "swap-sum"): "verified",
}


@pytest.fixture(scope="module")
def smt_run(tmp_path_factory, monkeypatch_module):
    """One real run of the plugin through the CLI (shared by the tests of this module)."""
    if shutil.which("z3") is None:
        pytest.skip("needs z3 on the host")
    out = tmp_path_factory.mktemp("smt") / "run"
    code = main(["run", "smtlib", "--sandbox", "host", "-j", "2", "--out", str(out), "--no-cache"])
    return out, code


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def test_the_plugin_is_registered_by_entry_points_only():
    assert "smtlib" in registry.BENCHMARKS and registry.BENCHMARKS["smtlib"] == "verikit_smtlib:BENCHMARK"
    assert registry.VERIFIERS["z3"] == "verikit_smtlib.z3:Z3"
    assert not any("smtlib" in p.name for p in (registry.Path(registry.__file__).parent / "benchmarks").iterdir())


@pytest.mark.slow
def test_verikit_list_shows_it(capsys):
    assert main(["list", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert "smtlib" in info["benchmarks"] and "smtlib-loops" in info["datasets"]
    assert "smtlib-z3" in info["toolchains"]


@needs_z3
@pytest.mark.realtool
def test_run_gives_the_expected_verdicts_and_validates(smt_run):
    out, code = smt_run
    assert code == 0
    recs = load_records(out / "records.jsonl")
    got = {(r["candidate"]["model"], r["task_id"]): r["verdict"] for r in recs
           if not r["candidate"]["model"].startswith("canary:")}
    assert got == EXPECTED
    report = json.loads((out / "report.json").read_text())
    assert report["canaries"]["ok"] and len(report["canaries"]["results"]) == 11
    run = json.loads((out / "run.json").read_text())
    (tc,) = run["toolchains"]
    assert tc["name"] == "smtlib-z3" and tc["tools"]["z3"]["version"] == "4.8.12"
    assert main(["validate", str(out)]) == 0  # schemas, sums, and every verdict re-derived from Z3's stored output


@needs_z3
@pytest.mark.realtool
def test_the_html_report_has_its_section(smt_run):
    out, _ = smt_run
    html = (out / "report.html").read_text()
    assert "Verdicts per model and loop" in html and "swap-sum" in html


@needs_z3
@pytest.mark.realtool
def test_publish_dry_run_includes_it(smt_run, tmp_path):
    out, _ = smt_run
    dest = tmp_path / "pub"
    assert main(["publish", str(out), "--repo", "me/loops", "--dry-run", "--out", str(dest), "--allow-dirty"]) == 0
    card = (dest / "README.md").read_text()
    assert "config_name: smtlib" in card and "| smtlib | smtlib-loops | model-a |" in card
    assert list((dest / "runs" / "smtlib").glob("*/records.parquet"))


@needs_z3
@pytest.mark.realtool
def test_its_own_command(capsys):
    assert main(["smtlib", "vcs", "count-up"]) == 0
    text = capsys.readouterr().out
    assert text.count("(check-sat)") == 3 and "(declare-fun n () Int)" in text
    assert main(["smtlib", "vcs", "no-such-loop"]) == 2


# ---- the plugin's own rules (no tool)

def _task(task_id: str):
    return next(t for t in smt.load_tasks(datasets.fetch("smtlib-loops")) if t.task_id == task_id)


@pytest.mark.parametrize("text, forbidden", [
    ("(and true true)) (assert false) (check-sat", True), ("(check-sat)", True), ("(forall ((k Int)) true)", True),
    ("(<= i n) ; x", True), ("(! (<= i n) :named a)", True), ("(<= i m)", True), ('(= i "a")', True),
    ("(+ i 1)", False), ("(<= i", False), ("", False), ("(and (<= 0 i) (<= i n)) (<= i n)", True),
])
def test_the_allow_list(text, forbidden):
    with pytest.raises(terms.TermError) as exc:
        terms.parse(text, ("i", "n"))
    assert exc.value.forbidden is forbidden


def test_z3_reads_the_kits_text_not_the_candidates():
    task = _task("count-up")
    inv = terms.parse("(and   (<= 0 i)\n (<= i n))", task.variables)
    text = smt.problem(task, inv, 1000)
    assert "(and (<= 0 i) (<= i n))" in text and "\n (<= i n))" not in text


def test_a_proof_the_loop_refutes_is_rejected():
    """The execution cross-check: were Z3 (or the VCs) to prove an invariant a run of the
    loop refutes, the verdict is rejected, not verified."""
    task = _task("count-down")
    inv = terms.parse("(> x 0)", task.variables)
    ok, detail = smt.execution_check(task, inv)
    assert not ok and "'x': 0" in detail
    job = BENCHMARK.build_job(task, smt.Candidate(task.task_id, "m", 0, "(> x 0)", "test"), smt.MODE,
                                            {"timeout_ms": 1000}, {"name": "d", "revision": "r"}, None)
    verdict, reason = BENCHMARK.judge(job, VerifierResult("verified", "z3 proved all 3 goals"))
    assert verdict == "rejected" and "running the loop refutes" in reason


@pytest.mark.parametrize("stdout, verdict", [
    ("unsat\nunsat\nunsat\n", "verified"), ("unsat\nsat\nunsat\n", "failed"), ("unsat\nunsat\n", "failed"),
    ("unsat\nunsat\nunsat\nunsat\n", "failed"), ("unsat\nunknown\nunsat\n", "failed"),
    ('(error "line 3")\nunsat\nunsat\nunsat\n', "failed"), ("unsat\nunsat\nunsat\nsomething\n", "failed"),
])
def test_the_reading_fails_closed(stdout, verdict):
    got = Z3().parse(ProcResult(argv=["z3"], returncode=0, stdout=stdout), {"goals": ["init", "preserve", "post"]})
    assert got.verdict == verdict
