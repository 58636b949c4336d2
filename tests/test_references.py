"""The committed reference runs (results/reproduced/) against the previous ones.

``tests/fixtures/reference_outcomes.json`` holds what the reference runs committed before
the restructuring into one benchmark interface established: per job (mode, task, model,
sample) its verdict and goals proved/total, and per published figure its status and
reproduced value. The references re-made with the current code must establish exactly
the same (timings, keys, reasons aside). Every run directory under results/reproduced/
must also be schema-valid and carry its run spec. Changing a reference on purpose means
changing the fixture in the same commit, with the reason in its message.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.results import load_records, validate_run_dir
from harness.runspec import RunSpec

ROOT = Path(__file__).resolve().parents[1] / "results" / "reproduced"
FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "reference_outcomes.json").read_text())
RUN_DIRS = sorted(p.parent for p in ROOT.rglob("run.json"))


def outcomes(run_dir: Path) -> dict[str, list]:
    """``{"mode|task|model|sample": [verdict, proved, total]}`` of a run directory."""
    out = {}
    for r in load_records(run_dir / "records.jsonl"):
        c, g = r["candidate"], r.get("goals") or {}
        out["|".join([r["mode"], r["task_id"], c["model"], str(c["sample"])])] = [r["verdict"], g.get("proved"),
                                                                               g.get("total")]
    return out


def figures(run_dir: Path) -> dict[str, list]:
    """``{"table|row|column": [status, reproduced]}`` of a reproduction's report.json."""
    rep = json.loads((run_dir / "report.json").read_text())["reproduction"]
    return {f"{f['table']}|{f['row']}|{f['column']}": [f["status"], f.get("reproduced")] for f in rep["figures"]}


def test_there_are_reference_runs():
    assert {p.relative_to(ROOT).as_posix() for p in RUN_DIRS} >= set(FIXTURE["runs"]) | set(FIXTURE["figures"])


@pytest.mark.parametrize("run_dir", RUN_DIRS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_reference_run_is_valid(run_dir):
    assert validate_run_dir(run_dir) == []


@pytest.mark.parametrize("run_dir", RUN_DIRS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_reference_run_has_a_spec_of_its_modes(run_dir):
    """validate (re-judge, --recheck) and rerun re-plan a run from its run.json ``spec``
    only (a run.json without one is refused): every reference has one, readable, of the
    run's benchmark and modes (those of its records)."""
    run = json.loads((run_dir / "run.json").read_text())
    spec = RunSpec.from_json(run["spec"])
    assert spec.benchmark == run["benchmark"] and list(spec.modes) == run["modes"]
    assert {r["mode"] for r in load_records(run_dir / "records.jsonl")} <= set(spec.modes)


@pytest.mark.parametrize("name", sorted(FIXTURE["runs"]))
def test_same_verdicts_and_goals_as_before(name):
    before, now = FIXTURE["runs"][name], outcomes(ROOT / name)
    changed = {k: (before.get(k), now.get(k)) for k in set(before) | set(now) if before.get(k) != now.get(k)}
    assert not changed, f"{len(changed)} job(s) differ from the previous reference, e.g. {list(changed.items())[:5]}"


@pytest.mark.parametrize("name", sorted(FIXTURE["figures"]))
def test_same_published_figures_as_before(name):
    before, now = FIXTURE["figures"][name], figures(ROOT / name)
    changed = {k: (before.get(k), now.get(k)) for k in set(before) | set(now) if before.get(k) != now.get(k)}
    assert not changed, f"{len(changed)} figure(s) differ from the previous reference: {list(changed.items())[:5]}"


def test_the_comparison_can_fail(tmp_path):
    """A changed verdict is seen: the check is not vacuous."""
    name = "casp"
    run = tmp_path / name
    run.mkdir()
    recs = load_records(ROOT / name / "records.jsonl")
    recs[0]["verdict"] = "failed" if recs[0]["verdict"] != "failed" else "verified"
    (run / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    assert outcomes(run) != FIXTURE["runs"][name]


# Running the published data in full grew two references: ntp4vc/rocq (every library
# tree pinned, so the real-C statements can load) and dafny-intent/reproduce (166 test
# programs instead of 126). ``grown_before[name]`` holds the previous reference's
# outcomes and the jobs it could not decide (``undecided``: the 370 NTP4VC statements
# whose library was not pinned, ``invalid`` without running).
GROWN = FIXTURE.get("grown_before", {})


@pytest.mark.parametrize("name", sorted(GROWN))
def test_grown_reference_keeps_every_outcome_decided_before(name):
    before, now = GROWN[name], outcomes(ROOT / name)
    undecided = set(before["undecided"])
    assert set(before["outcomes"]) <= set(now), "a job of the previous reference is missing"
    later = set(FIXTURE.get("verdict_changes", {}).get(name, {}))  # changed on purpose by a new rule (tested below)
    changed = {k: (v, now[k]) for k, v in before["outcomes"].items()
               if k not in undecided and k not in later and now[k] != v}
    assert not changed, f"{len(changed)} job(s) decided before have another outcome: {list(changed.items())[:5]}"
    assert len(before["outcomes"]) - len(undecided) == before["decided_count"]


def test_ntp4vc_rocq_reference_loads_at_least_590_statements_and_explains_the_rest():
    rep = json.loads((ROOT / "ntp4vc" / "rocq" / "report.json").read_text())
    loads = rep["sections"]["task_loads"]
    assert loads["checked"] == 600 and loads["loads"] >= 590
    assert loads["by_source"]["frama_c"]["loads"] >= 295
    assert len(loads["failures"]) == loads["does_not_load"]
    for f in loads["failures"]:  # Coq's own error and a classified one-line cause, each
        assert f["reason"] and not f["cause"].startswith("unclassified"), f


# References re-made under integrity rules that change some of their verdicts:
# ``verdict_before[name]`` holds the previous outcomes and ``verdict_changes[name]``
# every job that differs, each with the rule that changed it.
@pytest.mark.parametrize("name", sorted(FIXTURE.get("verdict_changes", {})))
def test_verdict_changes_are_exactly_the_explained_ones(name):
    before, now, told = FIXTURE["verdict_before"][name], outcomes(ROOT / name), FIXTURE["verdict_changes"][name]
    changed = {k for k in set(before) | set(now) if before.get(k) != now.get(k)}
    assert changed == set(told), f"unexplained: {sorted(changed - set(told))[:5]}, no longer: {sorted(set(told) - changed)[:5]}"
    for k, c in told.items():
        assert c["why"] and [c["before"], c["after"]] == [before.get(k), now.get(k)], k
    assert (ROOT / name / "outputs").is_dir()  # re-made with the tools' outputs: validate re-judges it


@pytest.mark.slow
@pytest.mark.parametrize("run_dir", RUN_DIRS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_validate_re_derives_every_verdict_of_the_reference(run_dir):
    """One judge for a run and its validation: ``verikit validate`` re-derives every record
    of every reference run from its stored tool output, with the rules, allow-lists and
    library data the run used (run.json ``verifier_state``: Rocq's library axioms), and
    finds no difference."""
    from rich.console import Console

    from harness.cli.results import _rejudge

    assert _rejudge(run_dir, Console(stderr=True, quiet=True)) == []
