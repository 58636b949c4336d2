"""The shape of the Model-Bench package: its modules import one another in one direction
only (no circle), none is over 600 lines, none starts a process or imports the runner
at import time, the names callers used before the split are still there, and the
Table-1 function the CLI calls (``filter_counts``) counts a user's MBPP file with the
Execution stage run for real in a HostSandbox subprocess."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from harness.benchmarks import modelbench
from harness.sandbox.local import HostSandbox

PKG = Path(modelbench.__file__).parent
#: The package's modules from the bottom up: each may import only modules before it.
ORDER = ["blocks", "dataset", "problems", "programs", "filters", "lowering", "transform", "stages", "commands", "postprocess",
         "integrity", "metrics", "tasks", "canaries", "published_models", "generation", "benchmark", "__init__"]


def _imports(path: Path) -> tuple[list[str], list[str]]:
    """(relative imports inside the package, absolute harness modules) at module level and
    inside functions."""
    tree = ast.parse(path.read_text())
    rel, absolute = [], []
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom):
            if n.level == 1:
                rel += [n.module] if n.module else [a.name for a in n.names]
            elif n.level > 1:
                absolute.append("harness." + (n.module or ""))
            elif n.module:
                absolute.append(n.module)
        elif isinstance(n, ast.Import):
            absolute += [a.name for a in n.names]
    return rel, absolute


def test_modules_import_one_way_and_stay_small():
    files = sorted(p.stem for p in PKG.glob("*.py"))
    assert sorted(files) == sorted(ORDER)
    for i, name in enumerate(ORDER):
        path = PKG / f"{name}.py"
        rel, absolute = _imports(path)
        later = [m for m in rel if m.split(".")[0] not in ORDER[:i]]
        assert not later, f"{name} imports {later}, which are not below it"
        assert not [m for m in absolute if m.startswith(("subprocess", "harness.executor", "harness.sandbox",
                                                         "harness.verifiers.tlc"))], (name, absolute)
        assert len(path.read_text().splitlines()) <= 600, name
        # a benchmark never calls the runner, not even lazily inside a function
        assert not [m for m in absolute if m.startswith("harness.runner")], (name, absolute)


def test_data_moved_into_the_package():
    assert modelbench.DATA_DIR == PKG / "data"
    assert sorted(p.name for p in (PKG / "data" / "oracles").glob("*.tla")) == [
        "HumanEval_13.tla", "HumanEval_35.tla", "HumanEval_48.tla", "HumanEval_52.tla"]
    assert not (PKG.parent / "modelbench_data").exists() and not (PKG.parent / "modelbench_cfg.py").exists()


def test_names_callers_use_are_reexported():
    for name in ("NAME", "VERSION", "MODES", "DEFAULT_MODES", "DATASETS", "DEFAULT_DATASET", "VERIFIER",
                 "CONTAINER_ONLY", "fetch", "load_tasks", "gold_candidates", "bundled_candidates", "canaries",
                 "smoke_tests", "study_results", "verifier_for", "build_job", "judge", "compare", "report_sections",
                 "run_notes", "reproduction", "table1_counts", "filter_counts", "HUMANEVAL_MEMBER", "HUMANEVAL_SHA256",
                 "ORACLE_MODEL", "BUNDLED_MODEL", "DATA_DIR", "prompt", "fix_prompt", "states_similar",
                 "similarity", "runnable_at_k", "similarity_table", "average_fixes", "load_published", "BENCHMARK"):
        assert hasattr(modelbench, name), name
    assert callable(modelbench.similarity) and callable(modelbench.filter_counts)


def test_filter_counts_on_a_users_mbpp_file(tmp_path):
    f = tmp_path / "mbpp.jsonl"
    lines = [
        {"task_id": 1, "code": "def sq(x):\n    return x * x\n", "test_list": ["assert sq(3) == 9"]},
        {"task_id": 2, "code": "import numpy\ndef f(x):\n    return x\n", "test_list": ["assert f(1) == 1"]},
        {"task_id": 3, "code": "def g(l):\n    return [x for x in l]\n", "test_list": ["assert g([1]) == [1]"]},
        {"task_id": 4, "code": "def h(x: set) -> int:\n    return 1\n", "test_list": ["assert h({1}) == 1"]},
        {"task_id": 5, "code": "def w(x):\n    return x + 1\n", "test_list": ["assert w(1) == 3"]},  # wrong test
    ]
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    out = modelbench.filter_counts({"MBPP": f}, HostSandbox(), humaneval=False)
    assert out["table1"]["MBPP"] == {"origin": 5, "libraries": 4, "language_features": 3, "types": 2, "execution": 1}
    assert out["table1"]["Total"] == out["table1"]["MBPP"] and out["table1"]["drop_pct"]["libraries"] == 20.0
    fate = {s["task_id"]: (s["kept_until"], s["reasons"]) for s in out["stages"]}
    assert fate["MBPP/1"] == ("execution", []) and fate["MBPP/2"] == ("origin", ["imports numpy"])
    assert fate["MBPP/3"][1] == ["list comprehension"] and fate["MBPP/4"][1] == ["type set"]
    assert fate["MBPP/5"][0] == "types" and "AssertionError" in fate["MBPP/5"][1][0]
    json.dumps(out)  # JSON-able as it is (the CLI's --json)
    text = modelbench.format_table1(out["table1"])
    assert text.splitlines()[0].split() == ["source", *modelbench.STAGES]
    assert text.splitlines()[1].split() == ["MBPP", "5", "4", "3", "2", "1"]
    assert text.splitlines()[-1].split() == ["drop", "%", "-", "20.0", "25.0", "33.3", "50.0"]
    f.write_text("{oops\n")
    with pytest.raises(modelbench.ProblemFileError, match=r"mbpp.jsonl:1: not valid JSON"):
        modelbench.filter_counts({"MBPP": f}, HostSandbox(), humaneval=False)


@pytest.mark.slow
def test_filter_counts_humaneval_file_and_static_table1(tmp_path):
    he = tmp_path / "HumanEval.jsonl"
    he.write_text(json.dumps({"task_id": "HumanEval/0", "prompt": "def inc(x: int) -> int:\n",
                              "canonical_solution": "    return x + 1\n", "entry_point": "inc",
                              "test": "def check(candidate):\n    assert candidate(1) == 2\n"}) + "\n")
    out = modelbench.filter_counts({"HumanEval": he}, HostSandbox())  # given: not fetched again
    assert set(out["table1"]) == {"HumanEval", "Total", "drop_pct"} and out["table1"]["HumanEval"]["execution"] == 1
    static = modelbench.table1_counts(modelbench.fetch())  # no execution: filters 1-3 and the transformer
    assert static["HumanEval"]["origin"] == 164 and static["Total"] == static["HumanEval"]
    assert [static["HumanEval"][s] for s in modelbench.STAGES] == [164, 157, 88, 82, 56]  # the reference run's


def test_the_filters_command_is_the_plugins(tmp_path, capsys):
    """``verikit modelbench filters`` (the benchmark's own command, from its plugin): the same
    table as the function, exit 2 with the file and line on a bad file."""
    from harness.cli import main

    f = tmp_path / "mbpp.jsonl"
    f.write_text(json.dumps({"task_id": 1, "code": "def sq(x):\n    return x * x\n",
                             "test_list": ["assert sq(3) == 9"]}) + "\n")
    assert main(["modelbench", "filters", "--mbpp", str(f), "--no-humaneval", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["table1"]["MBPP"] == {"origin": 1, "libraries": 1, "language_features": 1, "types": 1, "execution": 1}
    f.write_text("{oops\n")
    assert main(["modelbench", "filters", "--mbpp", str(f), "--no-humaneval"]) == 2
    assert "mbpp.jsonl:1: not valid JSON" in capsys.readouterr().err
