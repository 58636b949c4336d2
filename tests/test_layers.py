"""The import rules of docs/architecture.md ("Layers"), checked on the package's own source (an AST walk, every
``import`` statement counted, those inside functions too):

- no import circle between modules of ``harness``;
- imports point down the layers (model at the bottom, cli at the top), never back up;
- ``harness.model`` imports nothing else of the package;
- the registry's dynamic imports (the modules its entry points name) count as its imports;
- no module is over 600 lines;
- a benchmark never imports the runner, the CLI, the registry or the sandbox (it never
  opens an engine or makes an image: the kit does, from what it declares); a verifier never imports the
  executor, metrics, a benchmark, the runner or the CLI;
- nothing outside ``harness/sandbox/`` starts a process (no ``subprocess``,
  ``multiprocessing``, ``pty``, ``os.system``/``os.popen``/``os.exec*``/``os.spawn*``/
  ``os.fork``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from harness import plugin

PKG = Path(__file__).resolve().parents[1] / "harness"

#: Layer of each top-level module or package of harness (higher may import lower).
LAYERS = {
    "model": 0, "plugin": 0, "parts": 0, "resources": 0, "blocks": 0,
    "results": 1, "toolchains": 1, "datasets": 1, "runspec": 1, "predictions": 2,
    "sandbox": 3,
    "verifiers": 4,
    "executor": 5, "metrics": 5,
    "report": 6, "plots": 5, "progress": 5,
    "htmlreport": 9,
    "benchmarks": 7,
    "registry": 8,
    "runner": 9,
    "batch": 10, "hub": 10, "artifact": 10, "generate": 10,
    "cli": 11,
    "__main__": 12, "__init__": 0,
}

PROCESS_MODULES = {"subprocess", "multiprocessing", "pty", "concurrent.futures.process"}
PROCESS_CALLS = {"system", "popen", "fork", "forkpty", "execv", "execve", "execvp", "execvpe", "execl", "execle",
                 "execlp", "execlpe", "spawnv", "spawnve", "spawnvp", "spawnvpe", "spawnl", "spawnle", "posix_spawn",
                 "posix_spawnp"}


def _module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(module: str, is_pkg: bool, node: ast.ImportFrom) -> list[str]:
    if node.level == 0:
        base = node.module or ""
    else:
        parts = module.split(".")
        if not is_pkg:
            parts = parts[:-1]
        parts = parts[: len(parts) - (node.level - 1)]
        base = ".".join(parts + ([node.module] if node.module else []))
    if node.module is None or node.level and not node.module:
        return [f"{base}.{a.name}" for a in node.names]
    return [base] + [f"{base}.{a.name}" for a in node.names]


def _graph() -> tuple[dict[str, set[str]], dict[str, ast.AST]]:
    files = {p: _module_name(p) for p in PKG.rglob("*.py")}
    modules = set(files.values())
    graph: dict[str, set[str]] = {}
    trees = {}
    for path, mod in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        trees[mod] = tree
        deps: set[str] = set()
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = _resolve(mod, path.name == "__init__.py", node)
            for n in names:
                # the longest prefix that is a module of the package
                while n and n not in modules:
                    n = n.rpartition(".")[0]
                if n and n != mod and n.startswith("harness"):
                    deps.add(n)
        graph[mod] = deps
    # the registry's dynamic imports: every module an entry point of the kit names
    for group in ("verikit.benchmarks", "verikit.verifiers", "verikit.sandboxes"):
        for value in plugin.entry_points(group).values():
            target = value.split(":")[0]
            if target.startswith("harness."):
                graph["harness.registry"].add(target)
    return graph, trees


GRAPH, TREES = _graph()
MAX_LINES = 600


def _layer(mod: str) -> int:
    parts = mod.split(".")
    return LAYERS[parts[1]] if len(parts) > 1 else 0


def test_every_module_has_a_layer():
    missing = sorted({m.split(".")[1] for m in GRAPH if "." in m} - set(LAYERS))
    assert not missing, f"add these to LAYERS: {missing}"


def test_no_import_circles():
    index, low, stack, on, circles = {}, {}, [], set(), []

    def visit(v):  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in GRAPH.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                circles.append(sorted(comp))

    for v in sorted(GRAPH):
        if v not in index:
            visit(v)
    assert not circles, f"import circles: {circles}"


def _is_package_face(importer: str, imported: str) -> bool:
    """A package's __init__ re-exporting from a lower layer, or a module importing its own
    package's face, is not a step up."""
    return imported == ".".join(importer.split(".")[:2])


def test_imports_point_down_the_layers():
    up = [f"{m} -> {d}" for m, deps in GRAPH.items() for d in deps
          if _layer(d) > _layer(m) and not _is_package_face(m, d) and m != "harness"]
    assert not up, "imports that run back up the layers:\n" + "\n".join(sorted(up))


def test_the_registrys_dynamic_imports_are_in_the_graph():
    """The entry points of the kit's own plugins are counted as imports of the registry
    (so circles and steps up through them are seen)."""
    targets = {v.split(":")[0] for g in ("verikit.benchmarks", "verikit.verifiers")
               for v in plugin.entry_points(g).values() if v.startswith("harness.")}
    assert targets and targets <= GRAPH["harness.registry"] and targets <= set(GRAPH)


def test_no_module_is_over_the_line_limit():
    long = sorted(f"{p.relative_to(PKG.parent)}: {n} lines" for p in PKG.rglob("*.py")
                  if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES)
    assert not long, f"modules over {MAX_LINES} lines:\n" + "\n".join(long)


def test_model_imports_nothing_of_the_package():
    assert GRAPH["harness.model"] == set()


@pytest.mark.parametrize("prefix, forbidden", [
    ("harness.benchmarks", ("harness.runner", "harness.cli", "harness.registry", "harness.sandbox")),
    ("harness.verifiers", ("harness.executor", "harness.metrics", "harness.benchmarks", "harness.runner",
                           "harness.cli", "harness.report", "harness.registry")),
])
def test_forbidden_imports(prefix, forbidden):
    bad = [f"{m} -> {d}" for m, deps in GRAPH.items() if m.startswith(prefix) for d in deps
           if any(d == f or d.startswith(f + ".") for f in forbidden)]
    assert not bad, "\n".join(sorted(bad))


def _driver(mod: str) -> bool:
    """A driver: a script shipped into a sandbox and run there (``.../drivers/*.py``),
    never imported by the kit."""
    return ".drivers." in mod


def test_drivers_are_never_imported():
    bad = [f"{m} -> {d}" for m, deps in GRAPH.items() for d in deps if _driver(d)]
    assert not bad, "\n".join(bad)


def test_only_the_sandbox_starts_processes():
    bad = []
    for mod, tree in TREES.items():
        if mod.startswith("harness.sandbox") or _driver(mod):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                bad += [f"{mod}: import {a.name}" for a in node.names if a.name in PROCESS_MODULES]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in PROCESS_MODULES:
                bad.append(f"{mod}: from {node.module} import ...")
            elif (isinstance(node, ast.Attribute) and node.attr in PROCESS_CALLS
                  and isinstance(node.value, ast.Name) and node.value.id == "os"):
                bad.append(f"{mod}:{node.lineno}: os.{node.attr}")
    assert not bad, "processes started outside harness/sandbox/:\n" + "\n".join(bad)


def test_the_checker_sees_a_circle_and_a_step_up():
    """The rules can fail: a made-up graph with a circle and an upward import is caught."""
    global GRAPH
    saved = GRAPH
    try:
        GRAPH = {"harness.model": {"harness.runner"}, "harness.runner": {"harness.model"}}
        with pytest.raises(AssertionError, match="circles"):
            test_no_import_circles()
        with pytest.raises(AssertionError, match="back up"):
            test_imports_point_down_the_layers()
    finally:
        GRAPH = saved


def test_no_private_name_is_imported_from_another_module():
    """A name with a leading underscore is its module's own: another module of the package
    that needs it gets a public name (``from .x import _y`` is refused)."""
    found = []
    for mod, tree in TREES.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module != "__future__":
                private = [a.name for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
                if private:
                    found.append(f"{mod}:{node.lineno}: {', '.join(private)}")
    assert not found, found
