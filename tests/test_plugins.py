"""Benchmarks are plugins (issue 27): the kit finds them by entry point and knows none by name.

- The kit's code outside ``harness/benchmarks/`` (and noxfile.py, tasks.py, the images
  workflow) uses no registered benchmark's name as code: no identifier, no string
  literal (docstrings and comments may name them as examples). The check walks the AST,
  so it sees what runs, and it is shown to fail on a planted name.
- Entry points: the kit's own benchmarks and verifiers come from its pyproject.toml
  declarations (also when the package runs from its source tree, as in a runner image),
  and a name registered twice differently is an error.
- Every registered benchmark answers every hook of :class:`harness.plugin.Benchmark`.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest

from harness import plugin, registry
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
