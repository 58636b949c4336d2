"""The run's spec (:class:`harness.runspec.RunSpec`) and its settings
(:class:`harness.runspec.RunSettings`): JSON round trip, errors that name the key, frozen
settings apart from the spec (and a generation's settings of the same shape), a plan that
resolves instead of mutating, and a real CASP gold run (one task, the host's Frama-C)
whose run.json ``spec`` re-plans to the same jobs and is what recheck and rerun read (not
the command; a run.json without it is refused)."""

from __future__ import annotations

import dataclasses
import io
import json
import re
import shutil
from pathlib import Path

import pytest
from rich.console import Console

from harness import cli, runner
from harness.cli.options import run_predictions, spec_of_run_dir
from harness.model import Limits
from harness.results import load_records, write_sums
from harness.generate import GenerationSettings
from harness.runner import Run
from harness.runspec import RunSettings, RunSpec, SpecError

TASK = "00_327"


def _quiet() -> Console:
    return Console(file=io.StringIO())


# --- RunSpec ----------------------------------------------------------------------------------


def test_spec_json_round_trip():
    spec = RunSpec(benchmark="casp", dataset="casp-v1", modes=("gold", "gold", "spec-from-code"), task_ids=["a", "b"],
                   predictions="p.jsonl", predictions_sha256="0" * 64, keep_going=True, sandbox="container",
                   parallel=3, limits=Limits(wall_s=60.0, mem_mb=2048), seed=7)
    assert spec.modes == ("gold", "spec-from-code") and spec.task_ids == ("a", "b")
    data = json.loads(json.dumps(spec.to_json()))
    assert data["version"] == "1" and data["limits"]["wall_s"] == 60.0
    assert RunSpec.from_json(data) == spec
    assert RunSpec.from_json(RunSpec(benchmark="casp").to_json()) == RunSpec(benchmark="casp")


@pytest.mark.parametrize("change, key", [
    ({"modez": ["gold"]}, "modez"),
    ({"benchmark": ""}, "benchmark"),
    ({"benchmark": None}, "benchmark"),
    ({"version": "0"}, "version"),
    ({"limits": {"wall": 1}}, "wall"),
    ({"limits": {"wall_s": -1}}, "wall_s"),
])
def test_from_json_errors_name_the_key(change, key):
    data = {**RunSpec(benchmark="casp").to_json(), **change}
    with pytest.raises(SpecError, match=key):
        RunSpec.from_json(data)
    with pytest.raises(SpecError):
        RunSpec.from_json(["not", "a", "mapping"])


# --- RunSettings ------------------------------------------------------------------------------


def test_settings_are_frozen_and_apart_from_the_spec(tmp_path):
    """What a run verifies (the spec) and where it writes (the settings) share no field;
    a generation's settings are a run's plus ``offline``."""
    settings = RunSettings(cache_dir=tmp_path, command=["verikit", "run"])
    assert settings.command == ("verikit", "run") and settings.use_cache and settings.progress
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.use_cache = False
    assert settings.replace(progress=False).progress is False and settings.progress
    spec_fields = {f.name for f in dataclasses.fields(RunSpec)}
    settings_fields = {f.name for f in dataclasses.fields(RunSettings)}
    assert not spec_fields & settings_fields
    gen = GenerationSettings(cache_dir=tmp_path, offline=True, command=["verikit", "generate"])
    assert isinstance(gen, RunSettings) and gen.command == ("verikit", "generate")
    assert {f.name for f in dataclasses.fields(GenerationSettings)} == settings_fields | {"offline"}
    spec = RunSpec(benchmark="casp", modes=["gold", "gold"], task_ids=[TASK])
    assert spec.modes == ("gold",) and spec.task_ids == (TASK,)  # a mode given twice runs once


def test_plan_resolves_modes_and_tasks_without_changing_the_spec(casp_mirror, tmp_path):
    given = RunSpec(benchmark="casp", sample=2, seed=1)
    plan = runner.plan_run(given, _quiet(), data_dir=tmp_path / "data")
    assert given.modes == () and given.task_ids is None and plan.given is given  # untouched
    assert plan.modes == tuple(plan.bench.default_modes) and len(plan.task_ids) == 2
    assert [t.task_id for t in plan.tasks] == [t.task_id for t in plan.all_tasks if t.task_id in plan.task_ids]
    spec = plan.spec()  # the draw is recorded as the tasks it drew: re-planning it draws nothing
    assert spec.task_ids == plan.task_ids and spec.sample is None and spec.modes == plan.modes
    replanned = runner.plan_run(spec, _quiet(), data_dir=tmp_path / "data")
    assert replanned.task_ids == plan.task_ids and replanned.modes == plan.modes


# --- a real run: its spec re-plans to its jobs; recheck and rerun read it ------------------------


@pytest.fixture(scope="module")
def gold_run(casp_mirror, framac_host, tmp_path_factory) -> Path:
    """A CASP gold run of one task on the host (no result cache), its directory."""
    out = tmp_path_factory.mktemp("runspec") / "run"
    data = out.parent / "data"
    code = cli.main(["run", "casp", "--mode", "gold", "--task", TASK, "--sandbox", "host", "--no-cache",
                     "--data-dir", str(data), "--out", str(out)])
    assert code == 0
    return out


@pytest.mark.realtool
def test_run_json_spec_round_trips_and_replans_to_the_same_jobs(gold_run, framac_host):
    run = json.loads((gold_run / "run.json").read_text())
    spec = RunSpec.from_json(run["spec"])
    assert spec.to_json() == run["spec"]
    assert spec.benchmark == "casp" and spec.modes == ("gold",) == tuple(run["modes"]) and spec.task_ids == (TASK,)
    assert spec.sandbox == "host" and spec.limits.to_json() == run["limits"] and spec.predictions is None
    pipeline = Run(spec, _quiet(), settings=RunSettings(data_dir=gold_run.parent / "data", progress=False))
    with pipeline.opened():
        jobs, _ = pipeline.jobs()
        keys = set(pipeline.keys(jobs))
    assert keys == {r["key"] for r in load_records(gold_run / "records.jsonl")}


def _with_command(gold_run: Path, where: Path, command, *, spec: bool = True) -> Path:
    """A copy of the run with its run.json ``command`` replaced (and ``spec`` dropped
    unless ``spec``), SHA256SUMS recomputed."""
    copy = where / "copy"
    shutil.copytree(gold_run, copy)
    run = json.loads((copy / "run.json").read_text())
    run["command"] = command
    if not spec:
        run.pop("spec")
    (copy / "run.json").write_text(json.dumps(run, indent=2))
    write_sums(copy)
    return copy


@pytest.mark.realtool
def test_recheck_and_rerun_read_the_spec_not_the_command(gold_run, framac_host, tmp_path, capsys):
    copy = _with_command(gold_run, tmp_path, ["verikit", "no-such-command", "--garbage"])
    spec = RunSpec.from_json(json.loads((copy / "run.json").read_text())["spec"])
    again, settings = spec_of_run_dir(copy, "--recheck")
    assert again == spec and not settings.use_cache and not settings.progress
    over, over_settings = spec_of_run_dir(copy, "rerun", sandbox="container", parallel=2, data_dir=tmp_path)
    assert over == spec.replace(sandbox="container", parallel=2) and over_settings.data_dir == tmp_path
    assert cli.main(["validate", str(copy), "--recheck", "1"]) == 0
    assert "rechecked 1 record(s) with the real verifier: 0 difference(s)" in capsys.readouterr().err.replace("\n", "")
    assert cli.main(["rerun", str(copy), "--data-dir", str(gold_run.parent / "data")]) == 0


@pytest.mark.realtool
def test_a_run_json_without_spec_is_refused_naming_the_file(gold_run, framac_host, tmp_path, capsys):
    """A run.json without ``spec`` (made by a verikit that did not record it): validate
    (with or without --recheck) and rerun stop with exit 2 naming the file, however
    readable its recorded command is; no traceback."""
    command = json.loads((gold_run / "run.json").read_text())["command"]
    old = _with_command(gold_run, tmp_path, command, spec=False)
    where = str(old / "run.json")
    for argv in (["validate", str(old)], ["validate", str(old), "--recheck", "1"],
                 ["rerun", str(old), "--data-dir", str(gold_run.parent / "data")]):
        assert cli.main(argv) == 2, argv
        err = capsys.readouterr().err.replace("\n", "")
        # rerun reads run.json through its schema first (spec is required there), validate by the spec's reader
        assert (f"error: {where}: no 'spec'" in err or f"error: {where}: does not match run.schema.json: <root>: "
                "'spec' is a required property" in err) and "Traceback" not in err, (argv, err)
    with pytest.raises(runner.RunError, match=re.escape(f"{where}: no 'spec'")):
        spec_of_run_dir(old, "--recheck")


# --- a run's predictions file: where it was read, or beside run.json ----------------------------


RQ12 = Path(__file__).resolve().parents[1] / "results" / "reproduced" / "dafny-intent" / "rq1-rq2"


def _elsewhere(run: dict, tmp_path: Path) -> dict:
    """run.json ``run`` with its predictions path moved where no file is (the recorded
    ``/tmp/conv/rq12.jsonl`` may exist on the machine that made the run)."""
    return {**run, "predictions": {**run["predictions"], "path": str(tmp_path / "gone" / "rq12.jsonl")}}


@pytest.mark.slow
def test_a_committed_run_replans_from_the_predictions_beside_it(tmp_path):
    """The rq1-rq2 reference scored a file that is not here (run.json names its path in a
    temporary directory): its predictions.jsonl, with the recorded sha256, stands in under
    the recorded name, and re-planning the spec with it gives the recorded candidates
    (their sha256 and origin, which names the file and line)."""
    import hashlib

    run = _elsewhere(json.loads((RQ12 / "run.json").read_text()), tmp_path)
    recorded = Path(run["predictions"]["path"])
    with run_predictions(RQ12, run) as got:
        assert got.name == recorded.name and got.parent != RQ12
        assert hashlib.sha256(got.read_bytes()).hexdigest() == run["predictions"]["sha256"]
        spec, settings = spec_of_run_dir(RQ12, "--recheck", predictions=str(got), data_dir=tmp_path / "data")
        plan = runner.plan_run(spec, _quiet(), data_dir=settings.data_dir)
    assert plan.spec().predictions_sha256 == run["spec"]["predictions_sha256"]
    want = {(r["task_id"], r["candidate"]["model"], r["candidate"]["sample"]): r["candidate"]["sha256"]
            for r in load_records(RQ12 / "records.jsonl") if r["candidate"]["origin"] != "canary"}
    have = {(c.task_id, c.model, c.sample): hashlib.sha256(c.output.encode()).hexdigest()
            for c in plan.preds.candidates}
    assert have == want and len(have) == 436
    assert not got.exists()  # the temporary copy is removed


def test_a_missing_or_changed_predictions_file_is_refused_naming_both(tmp_path, capsys):
    copy = tmp_path / "rq"
    shutil.copytree(RQ12, copy)
    run = _elsewhere(json.loads((copy / "run.json").read_text()), tmp_path)
    (copy / "run.json").write_text(json.dumps(run, indent=2))
    write_sums(copy)
    (copy / "predictions.jsonl").write_text("{}\n")
    with pytest.raises(runner.RunError, match=re.escape(f"{copy / 'predictions.jsonl'}: not the file the run scored")):
        with run_predictions(copy, run):
            pass
    (copy / "predictions.jsonl").unlink()
    assert cli.main(["rerun", str(copy)]) == 2
    err = capsys.readouterr().err.replace("\n", "")
    assert f"{copy / 'predictions.jsonl'}: missing; the run scored {run['predictions']['path']}" in err
    assert "Traceback" not in err
