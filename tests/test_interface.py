"""One declared interface, one registry, one CLI for every benchmark: each
registered benchmark is a :class:`harness.plugin.Benchmark` whose verifiers are
registered :class:`harness.model.Verifier` s; the same commands work for all of them
(``reproduce --out DIR`` writes a run directory that ``validate`` accepts); ``--lang``
belongs to NTP4VC only; ``--sample``; ``validate --against``; run.json's ``git_dirty``."""

from __future__ import annotations

import json
import shutil

import pytest

from harness import registry
from harness.cli import main
from harness.model import Verifier
from harness.plugin import Benchmark
from harness.runner import git_state


@pytest.mark.parametrize("name", sorted(registry.BENCHMARKS))
def test_every_benchmark_implements_the_interface(name):
    bench = registry.benchmark(name)
    assert isinstance(bench, Benchmark) and bench.name == name
    assert bench.modes and set(bench.default_modes or bench.modes) <= set(bench.modes)
    assert bench.default_dataset in bench.datasets
    for mode in bench.modes:
        v = registry.verifier(bench.verifier_for(mode))
        assert isinstance(v, Verifier), (name, mode)


def test_unknown_names_are_clear_errors():
    with pytest.raises(registry.UnknownName, match="available: casp"):
        registry.benchmark("nope")
    with pytest.raises(registry.UnknownName, match="unknown sandbox"):
        registry.sandbox("nope")


def test_lang_is_ntp4vc_s_own_option(tmp_path, capsys):
    assert main(["run", "casp", "--lang", "rocq", "--sandbox", "host", "--out", str(tmp_path)]) == 2
    assert "casp takes --mode, not --lang" in capsys.readouterr().err
    assert main(["run", "ntp4vc", "--mode", "rocq", "--sandbox", "host", "--out", str(tmp_path)]) == 2
    assert "ntp4vc takes --lang, not --mode" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("name", ["ntp4vc", "osvbench"])
def test_rescoring_reproduction_is_a_valid_run_directory(name, tmp_path, capsys):
    out = tmp_path / name
    assert main(["reproduce", name, "--out", str(out)]) == 0  # no engine needed: nothing runs
    assert main(["validate", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["reproduction"]["summary"]["differs"] == 0 and report["reproduction"]["summary"]["reproduced"] > 0
    assert (out / "records.jsonl").read_text() == ""
    # and it establishes what the committed reference does
    assert main(["validate", str(out), "--against", f"results/reproduced/{name}/reproduce"]) == 0


def test_validate_against_sees_a_difference(tmp_path, capsys):
    ref = tmp_path / "ref"
    shutil.copytree("results/reproduced/casp", ref)
    assert main(["validate", str(ref), "--against", "results/reproduced/casp"]) == 0
    lines = (ref / "records.jsonl").read_text().splitlines()
    rec = json.loads(lines[0])
    rec["goals"]["proved"] -= 1
    (ref / "records.jsonl").write_text("\n".join([json.dumps(rec)] + lines[1:]) + "\n")
    assert main(["validate", str(ref), "--against", "results/reproduced/casp"]) == 1
    assert "goals.proved" in capsys.readouterr().err


@pytest.mark.realtool
@pytest.mark.skipif(shutil.which("frama-c") is None, reason="needs frama-c on the host")
def test_sample_draws_tasks_and_is_recorded(tmp_path):
    out = tmp_path / "run"
    args = ["run", "casp", "--mode", "gold", "--sample", "2", "--seed", "7", "--sandbox", "host", "--out", str(out),
            "--no-cache"]
    assert main(args) == 0
    run = json.loads((out / "run.json").read_text())
    sel = run["task_selection"]
    assert sel["sample"] == 2 and sel["seed"] == 7 and len(sel["task_ids"]) == 2
    assert registry.benchmark("casp").sample([t for t in _casp_tasks()], "gold", 2, 7) == sel["task_ids"]
    both = ["run", "casp", "--mode", "gold", "--sample", "2", "--task", "01_57", "--sandbox", "host", "--out",
            str(tmp_path / "x")]
    assert main(both) == 2  # --sample with --task


def _casp_tasks():
    from harness import datasets
    bench = registry.benchmark("casp")
    return bench.load_tasks(datasets.fetch(bench.default_dataset))


def test_prompts_and_convert_for_osvbench(tmp_path):
    prompts, preds = tmp_path / "p.jsonl", tmp_path / "c.jsonl"
    assert main(["prompts", "osvbench", "--shots", "5", "--task", "0", "-o", str(prompts)]) == 0
    (line,) = [json.loads(x) for x in prompts.read_text().splitlines()]
    assert line["task_id"] == "0" and "def " in line["prompt"]
    assert main(["convert", "osvbench", "-o", str(preds)]) == 0
    assert len(preds.read_text().splitlines()) == 245
    assert main(["prompts", "casp", "--mode", "gold", "-o", str(prompts)]) == 2  # gold has no prompts: a clear error


def test_git_state_is_read_without_git():
    commit, dirty = git_state()
    assert commit is None or len(commit) == 40
    assert dirty in (True, False, None)
