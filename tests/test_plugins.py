"""Benchmarks are plugins: the kit finds them by entry point and knows none by name.

- The kit's code outside ``harness/benchmarks/`` (and noxfile.py, tasks.py, the images
  workflow) uses no registered benchmark's name as code: no identifier, no string
  literal (docstrings and comments may name them as examples). The check walks the AST,
  so it sees what runs, and it is shown to fail on a planted name.
- Entry points: the kit's own benchmarks and verifiers come from its pyproject.toml
  declarations (also when the package runs from its source tree, as in a runner image),
  and a name registered twice differently is an error.
- Every registered benchmark answers every hook of :class:`harness.plugin.Benchmark`.
- Every registered benchmark declares the JSON Schema of its report sections; every
  committed reference run's sections match it, and a planted wrong section is an error
  that names the file and the JSON path.
- Plugins are imported only when used: ``verikit --version`` and a shared command read no
  entry point, ``verikit --help`` reads the benchmark names only, and a kit dataset or
  toolchain is looked up without importing any plugin (each in a fresh interpreter).
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from harness import plugin, registry
from harness.results import schema as schema_mod
from harness.plugin import Bars, Benchmark, Scatter, Table, Text, VerdictBars

ROOT = Path(__file__).resolve().parents[1]
NAMES = sorted(registry.BENCHMARKS)


def _pattern(names) -> re.Pattern:
    words = {n for name in names for n in (name, name.replace("-", "_"))}
    return re.compile(r"(?<![A-Za-z0-9])(" + "|".join(sorted(map(re.escape, words))) + r")(?![A-Za-z0-9])")


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = getattr(node, "body", [])
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def names_as_code(source: str, where: str, pattern: re.Pattern) -> list[str]:
    """``where:line: text`` of each identifier or string literal (docstrings aside) that
    contains a benchmark's name."""
    tree = ast.parse(source, where)
    docs = _docstrings(tree)
    hits = []
    for node in ast.walk(tree):
        text = None
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            text = node.value
        elif isinstance(node, ast.Name):
            text = node.id
        elif isinstance(node, ast.Attribute):
            text = node.attr
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.arg)):
            text = getattr(node, "name", None) or getattr(node, "arg", None)
        if text and pattern.search(text):
            hits.append(f"{where}:{node.lineno}: {text[:80]!r}")
    return hits


def _kit_files() -> list[Path]:
    files = [p for p in sorted((ROOT / "harness").rglob("*.py"))
             if "benchmarks" not in p.relative_to(ROOT / "harness").parts[:1] and "drivers" not in p.parts]
    return files + [ROOT / "noxfile.py", ROOT / "tasks.py"]


@pytest.mark.slow
def test_the_kit_uses_no_benchmark_name_as_code():
    pattern = _pattern(NAMES)
    hits = [h for f in _kit_files() for h in names_as_code(f.read_text(encoding="utf-8"), str(f.relative_to(ROOT)),
                                                              pattern)]
    assert not hits, "benchmark names used as code outside harness/benchmarks/:\n" + "\n".join(hits)


def test_the_images_workflow_names_no_benchmark():
    text = (ROOT / ".github" / "workflows" / "images.yml").read_text(encoding="utf-8")
    lines = [f"images.yml:{i}: {ln.strip()}" for i, ln in enumerate(text.splitlines(), 1)
             if _pattern(NAMES).search(ln.split(" #")[0]) and not ln.lstrip().startswith("#")]
    assert not lines, "\n".join(lines)


def test_the_check_sees_a_planted_name():
    """The name check can fail: a dict key, a comparison and an identifier are caught; a
    docstring and a comment are not."""
    src = ('"""Mentions casp in a docstring."""\n'
           'TABLE = {"casp": 1}  # and ntp4vc in a comment\n'
           'def f(b):\n    """ntp4vc here is fine."""\n    return b == "dafny-intent" or osvbench_x\n')
    hits = names_as_code(src, "planted.py", _pattern(["casp", "ntp4vc", "dafny-intent", "osvbench"]))
    assert [h.split(":")[1] for h in hits] == ["2", "5", "5"], hits


def test_the_kits_own_plugins_are_declared_in_its_pyproject():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    assert set(declared["verikit.benchmarks"]) <= set(registry.BENCHMARKS)
    assert set(declared["verikit.verifiers"]) <= set(registry.VERIFIERS)
    # from a source tree that is not installed (a runner image): the same declarations
    assert plugin._declared_here("verikit.benchmarks") == declared["verikit.benchmarks"]


def test_a_name_registered_twice_differently_is_an_error(monkeypatch):
    class EP:
        name, value, dist = "casp", "elsewhere:BENCHMARK", None

    monkeypatch.setattr(plugin.importlib.metadata, "entry_points", lambda group: [EP()])
    with pytest.raises(plugin.PluginError, match="registered twice"):
        plugin.entry_points("verikit.benchmarks")


def test_a_broken_entry_point_is_named():
    with pytest.raises(plugin.PluginError, match="no_such_module"):
        plugin.load("no_such_module:X")


@pytest.mark.parametrize("name", NAMES)
def test_every_benchmark_answers_every_hook(name):
    b = registry.benchmark(name)
    assert isinstance(b, Benchmark) and b.name == name
    paper = b.paper()
    assert paper is None or (paper.title and paper.reference)
    published = b.published()
    assert published is None or "source" in published
    assert isinstance(b.k_metric, str) and b.k_metric
    for block in b.report_blocks({"sections": {}}, []):
        assert isinstance(block, (Table, Bars, VerdictBars, Scatter, Text))
    for claim in b.artifact_claims(ROOT / "results" / "reproduced"):
        assert claim.benchmark == name and claim.args[1] == name
    for cmd in b.commands():
        assert cmd.name and cmd.help and callable(cmd.arguments) and callable(cmd.run)
    page = b.docs_page()
    assert page is not None and page.is_file(), f"{name} has no documentation page"
    assert all(isinstance(i, str) for i in b.container_images())


# ---- report sections: each benchmark declares their schema

REFERENCES = sorted(p.parent for base in (ROOT / "results" / "reproduced", ROOT / "tests" / "plugins")
                    for p in base.rglob("report.json"))


@pytest.mark.parametrize("name", NAMES)
def test_every_benchmark_declares_the_schema_of_its_sections(name):
    """A valid JSON Schema of an object that admits no undescribed section; the kit's own
    benchmarks that write sections ship it as package data."""
    from jsonschema import Draft202012Validator

    b = registry.benchmark(name)
    schema = b.sections_schema()
    Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert schema_mod.sections_validators(name) is not None
    # what the benchmark writes with no records validates (each section's empty case)
    for modes in {tuple(b.default_modes), tuple(b.modes)}:
        assert list(schema_mod.sections_validators(name)[0].iter_errors(b.report_sections([], [], list(modes)))) == []
    file = Path(sys.modules[type(b).__module__].__file__).parent / plugin.SECTIONS_SCHEMA
    if file.is_file() and file.is_relative_to(ROOT / "harness"):
        data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["harness"]
        assert any(file.relative_to(ROOT / "harness").match(glob) for glob in data), f"{file} is not package data"
    assert schema == (json.loads(file.read_text()) if file.is_file() else plugin.NO_SECTIONS)


@pytest.mark.parametrize("run_dir", REFERENCES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_reference_sections_match_their_benchmarks_schema(run_dir):
    report = json.loads((run_dir / "report.json").read_text())
    checks = schema_mod.sections_validators(report["benchmark"])
    assert checks is not None, f"{report['benchmark']} is not registered: its sections would not be checked"
    whole, part = checks
    assert list(whole.iter_errors(report["sections"])) == []
    assert list(part.iter_errors(report.get("reproduction", {}).get("sections", {}))) == []
    schema_mod.validate("report", report, str(run_dir / "report.json"))


def _planted(rel: str, change) -> tuple[str, str]:
    """The message of validating the reference report ``rel`` after ``change(report)``."""
    path = ROOT / "results" / "reproduced" / rel / "report.json"
    report = json.loads(path.read_text())
    change(report)
    with pytest.raises(schema_mod.ValidationError) as err:
        schema_mod.validate("report", report, str(path))
    return str(err.value), str(path)


@pytest.mark.parametrize("rel, change, says", [
    ("ntp4vc/rocq", lambda r: r["sections"]["task_loads"].update(checked="600"),
     "sections/task_loads/checked: '600' is not of type 'integer'"),
    ("ntp4vc/rocq", lambda r: r["sections"]["task_loads"].pop("failures"),
     "sections/task_loads: 'failures' is a required property"),
    ("ntp4vc/why3", lambda r: r["sections"]["why3_auto_level_3"]["goals"][3].update(verdict="proved"),
     "sections/why3_auto_level_3/goals/3/verdict: 'proved' is not one of"),
    ("modelbench/reproduce", lambda r: r["sections"].pop("oracles"), "sections: 'oracles' is a required property"),
    ("modelbench/reproduce", lambda r: r["reproduction"]["sections"]["table1"].pop("Total"),
     "reproduction/sections/table1: 'Total' is a required property"),
    ("dafny-intent/reproduce", lambda r: r["sections"]["findings"]["2"].pop("verdict"),
     "sections/findings/2: 'verdict' is a required property"),
    ("osvbench/reproduce", lambda r: r["sections"].pop("published_run"), "sections: 'pass_at_k' is a required property"),
    ("osvbench/reproduce", lambda r: r["sections"]["published_run"]["classification"]["per_task"][0].update(line="2"),
     "sections/published_run/classification/per_task/0/line: '2' is not of type 'integer'"),
    ("casp", lambda r: r["sections"].update(extra={}), "sections: Additional properties are not allowed ('extra'"),
], ids=["wrong-type", "missing-key", "not-a-verdict", "missing-section", "reproduction-missing-key", "findings-entry",
        "no-run-or-rescoring-section", "per-task-line", "undeclared-section"])
def test_a_planted_wrong_section_is_named_with_its_path(rel, change, says):
    message, path = _planted(rel, change)
    assert message.startswith(f"{path}: does not match the sections schema of benchmark ")
    assert says in message, message


def test_validate_and_writing_refuse_a_wrong_section(tmp_path):
    """``verikit validate``'s check names it, and a report with it is never written."""
    from harness.results import validate_run_dir, write_json_atomic

    run = tmp_path / "run"
    shutil.copytree(ROOT / "results" / "reproduced" / "ntp4vc" / "rocq", run)
    report = json.loads((run / "report.json").read_text())
    report["sections"]["adaptation"]["statements_rewritten"] = "no"
    (run / "report.json").write_text(json.dumps(report))
    problems = validate_run_dir(run)
    assert (f"{run / 'report.json'}: does not match the sections schema of benchmark 'ntp4vc': "
            "sections/adaptation/statements_rewritten: 'no' is not of type 'boolean'") in problems
    with pytest.raises(schema_mod.ValidationError, match="sections/adaptation/statements_rewritten"):
        write_json_atomic(tmp_path / "new.json", report, kind="report")
    assert not (tmp_path / "new.json").exists()


def test_a_benchmark_without_a_schema_file_writes_no_sections(monkeypatch):
    """The default: an empty object only; a broken schema is named, not used."""
    casp = registry.benchmark("casp")
    report = json.loads((ROOT / "results" / "reproduced" / "casp" / "report.json").read_text())
    assert casp.sections_schema() == plugin.NO_SECTIONS
    schema_mod.validate("report", report)
    report["reproduction"] = {"figures": [], "notes": [], "summary": {"reproduced": 0, "differs": 0,
                                                                      "not_reproducible": 0}, "sections": {"x": 1}}
    with pytest.raises(schema_mod.ValidationError, match=r"reproduction/sections: Additional properties"):
        schema_mod.validate("report", report)
    monkeypatch.setattr(type(casp), "sections_schema", lambda self: {"type": 5})
    schema_mod.sections_validators.cache_clear()
    try:
        with pytest.raises(schema_mod.ValidationError, match="sections schema of benchmark 'casp' .* is not a valid JSON"):
            schema_mod.validate("report", report)
    finally:
        monkeypatch.undo()
        schema_mod.sections_validators.cache_clear()


def test_a_report_of_a_benchmark_not_installed_is_checked_by_report_schema_only():
    report = json.loads((ROOT / "results" / "reproduced" / "casp" / "report.json").read_text())
    report["benchmark"], report["sections"] = "not-installed-here", {"anything": [1]}
    schema_mod.validate("report", report)


#: Runs argv[1] in a fresh interpreter and prints, last, the entry point groups read and
#: the modules imported.
_PROBE = """
import importlib.metadata, json, sys
groups, real = [], importlib.metadata.entry_points
importlib.metadata.entry_points = lambda **kw: groups.append(kw.get("group")) or real(**kw)
try:
    exec(sys.argv[1])
except SystemExit:
    pass
print(json.dumps({"groups": groups, "modules": sorted(sys.modules)}))
"""


def _probe(code: str) -> tuple[list[str], list[str]]:
    """(entry point groups read, plugin modules imported) when ``code`` runs in a fresh
    interpreter; a plugin module is one an entry point of any group names, or a submodule,
    except the kit's own sandbox package (the CLI's image and engine commands are built on
    it: harness/sandbox/)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    out = subprocess.run([sys.executable, "-c", _PROBE, code], env=env, capture_output=True, text=True, cwd=ROOT,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    seen = json.loads(out.stdout.splitlines()[-1])
    plugins = {v.split(":")[0] for g in plugin.GROUPS for v in plugin.entry_points(g).values()
               if not v.startswith("harness.sandbox.")}
    return seen["groups"], [m for m in seen["modules"] if m in plugins or any(m.startswith(p + ".") for p in plugins)]


@pytest.mark.slow
@pytest.mark.parametrize("argv", [["--version"], ["compare", "--help"], ["cache", "--help"]])
def test_version_and_shared_commands_read_no_entry_point(argv):
    assert _probe(f"from harness.cli import main; main({argv!r})") == ([], [])


@pytest.mark.slow
def test_help_reads_the_benchmark_names_and_imports_no_plugin():
    groups, modules = _probe("from harness.cli import main; main(['--help'])")
    # the names its commands offer (benchmarks, sandboxes, verifiers), read once each; no module
    assert sorted(set(groups)) == ["verikit.benchmarks", "verikit.sandboxes", "verikit.verifiers"]
    assert len(groups) == 3 and modules == []


def test_a_kit_dataset_or_toolchain_imports_no_plugin():
    groups, modules = _probe("from harness import toolchains; from harness.datasets import entries\n"
                             "entries.dataset(next(iter(entries.load_entries())))\n"
                             "toolchains.toolchain_spec(next(iter(toolchains.load_pins(str(toolchains.PINS_FILE))"
                             "['toolchains'])))")
    assert modules == [] and "verikit.datasets" not in groups and "verikit.toolchains" not in groups


def test_a_benchmark_plugin_named_like_a_command_is_an_error_naming_both(monkeypatch, capsys):
    from harness import registry
    from harness.cli import main

    names = dict(registry.BENCHMARKS)
    monkeypatch.setattr(registry.BENCHMARKS, "_found", {**names, "compare": "evil_pkg:BENCHMARK"})
    assert main(["--help"]) == 2
    err = capsys.readouterr().err
    assert "the benchmark plugin 'compare' (evil_pkg:BENCHMARK) has the name of verikit's own command 'compare'" in err
    assert main(["casp"]) == 2  # any command that reads the names
