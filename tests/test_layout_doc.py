"""docs/layout.md and docs/architecture.md against the tree, so that the pages that say
where things are stay true. Fast: files and syntax trees only, no tool runs, no plugin
imported.

- every repository path either page names (``harness/...``, ``tests/...``, ``images/...``
  and the other top-level directories) exists: a module named ``x.py`` is a file, a
  package named ``x/`` a directory (a module that became a package is caught);
- layout.md lists every top-level module and package of ``harness/``, every package
  below them, and the top-level entries the product brief fixes (flake.nix, noxfile.py,
  tasks.py, images/, harness/, schemas/, results/, scripts/, tests/, docs/);
- every dotted name ``harness.x.y`` architecture.md gives is a module of the package, or a
  name a module defines (a class's own attribute one level down);
- architecture.md's table of layers is the layer test's (``LAYERS`` in
  tests/test_layers.py), and it names every entry-point group and every sandbox;
- the README, docs/ and every text file of harness/, tests/ (tests/recorded/ aside),
  scripts/, images/, noxfile.py, tasks.py and flake.nix send no reader to a file outside
  the repository (a design file, a paper's text, the papers' index), the data mirror
  (``VERIKIT_DATA_MIRRORS``, e.g. ``../shared/data``) aside; lines of files being rewritten
  elsewhere are listed in ``PENDING`` until they are fixed;
- every page a file under harness/ names (``docs/<name>.md``, a benchmark's ``docs.md``)
  exists, and every relative link of harness/'s Markdown pages reaches a file.
"""

from __future__ import annotations

import ast
import re
import tomllib
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "harness"
LAYOUT = ROOT / "docs" / "layout.md"
ARCHITECTURE = ROOT / "docs" / "architecture.md"

#: The top-level entries the product brief fixes: layout.md names each, and each exists.
FIXED = ("flake.nix", "noxfile.py", "tasks.py", "images/", "harness/", "schemas/", "results/", "scripts/",
         "tests/", "docs/")

#: Top-level directories whose paths the pages name; each such path must exist.
CHECKED = ("harness", "images", "schemas", "results", "scripts", "tests", "docs", "nix", ".github")

#: Where the wheel carries the kit's own top-level files (pyproject.toml's package data):
#: a path of an installed kit, never of a checkout.
WHEEL_ONLY = ("harness/_kit/",)

# A path: one of CHECKED, a slash, then path characters. A placeholder that follows
# (``tests/test_<family>.py``, ``harness/benchmarks/*/docs.md``) cuts it at its last slash.
PATH = re.compile(r"(?<![\w./$-])((?:%s)/[\w./-]*)([<*{$]?)" % "|".join(re.escape(d) for d in CHECKED))
DOTTED = re.compile(r"(?<![\w./-])harness(?:\.[A-Za-z_]\w*)+")


def _paths(text: str) -> list[str]:
    out = []
    for m in PATH.finditer(text):
        path, placeholder = m.group(1), m.group(2)
        if placeholder:
            path = path.rpartition("/")[0] + "/"
        path = path.rstrip(".")  # a sentence's full stop
        if path.endswith("..."):
            continue
        out.append(path)
    return out


def _missing(page: Path) -> list[str]:
    """The paths ``page`` names that are not in the tree."""
    bad = []
    for path in sorted(set(_paths(page.read_text(encoding="utf-8")))):
        if path.startswith(WHEEL_ONLY):
            continue
        target = ROOT / path
        if path.endswith("/") and not target.is_dir() or not path.endswith("/") and not target.exists():
            kind = "directory" if path.endswith("/") else "file"
            bad.append(f"{page.relative_to(ROOT)}: `{path}`: no such {kind}")
    return bad


def test_every_path_layout_names_exists():
    assert not _missing(LAYOUT), "\n".join(_missing(LAYOUT))


def test_every_path_architecture_names_exists():
    assert not _missing(ARCHITECTURE), "\n".join(_missing(ARCHITECTURE))


def test_the_path_reader_sees_what_it_must():
    """A module named where a package is, a placeholder, a sentence's full stop."""
    text = ("`harness/hub.py` moved; see harness/model.py. `tests/test_<family>.py`, "
            "`harness/benchmarks/*/docs.md`, `../shared/data`, `$PWD/tests`.")
    assert _paths(text) == ["harness/hub.py", "harness/model.py", "tests/", "harness/benchmarks/"]


def _named(text: str) -> set[str]:
    return set(_paths(text))


def _packages() -> list[str]:
    """``harness/`` and every directory below it with an ``__init__.py``, as ``harness/x/``."""
    return sorted(p.parent.relative_to(ROOT).as_posix() + "/" for p in PKG.rglob("__init__.py")
                  if "__pycache__" not in p.parts)


def _top_level() -> list[str]:
    """The top-level modules (``harness/x.py``) and packages (``harness/x/``) of harness."""
    mods = [f"harness/{p.name}" for p in PKG.glob("*.py")]
    pkgs = [f"harness/{p.name}/" for p in PKG.iterdir() if (p / "__init__.py").is_file()]
    return sorted(mods + pkgs)


def test_layout_lists_every_module_and_package_of_harness():
    named = _named(LAYOUT.read_text(encoding="utf-8"))
    missing = [p for p in sorted(set(_top_level() + _packages())) if p not in named]
    assert not missing, "docs/layout.md does not list: " + ", ".join(missing)


def test_layout_lists_the_fixed_top_level():
    text = LAYOUT.read_text(encoding="utf-8")
    missing = [name for name in FIXED if f"`{name}`" not in text]
    assert not missing, "docs/layout.md does not list: " + ", ".join(missing)
    absent = [name for name in FIXED if not (ROOT / name).exists()]
    assert not absent, "the product brief fixes these, and they are not in the repository: " + ", ".join(absent)


# --- dotted names -----------------------------------------------------------------------------


def _module_file(dotted: str) -> Path | None:
    rel = Path(*dotted.split("."))
    for f in (ROOT / rel.with_suffix(".py"), ROOT / rel / "__init__.py"):
        if f.is_file():
            return f
    return None


@cache
def _defined(file: Path) -> dict[str, ast.AST | None]:
    """Names a module defines at its top level (classes and functions with their node;
    assignments and imports with None)."""
    tree = ast.parse(file.read_text(encoding="utf-8"))
    out: dict[str, ast.AST | None] = {}
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            out[node.name] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        out.setdefault(n.id, None)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                out.setdefault((a.asname or a.name).split(".")[0], None)
    return out


def _class_members(node: ast.ClassDef) -> set[str]:
    names = set()
    for item in node.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(item.name)
        elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            names.add(item.target.id)
        elif isinstance(item, ast.Assign):
            names |= {t.id for t in item.targets if isinstance(t, ast.Name)}
    return names


def _unresolved(dotted: str) -> str | None:
    """Why ``dotted`` is not a module of the package or a name one defines, or None."""
    parts = dotted.split(".")
    for cut in range(len(parts), 1, -1):  # harness.x at least
        file = _module_file(".".join(parts[:cut]))
        if file is not None:
            break
    else:
        return "no such module"
    rest = parts[cut:]
    if not rest:
        return None
    names = _defined(file)
    if rest[0] not in names:
        return f"{'.'.join(parts[:cut])} defines no {rest[0]!r}"
    node = names[rest[0]]
    if len(rest) > 1 and isinstance(node, ast.ClassDef) and rest[1] not in _class_members(node):
        return f"{'.'.join(parts[:cut + 1])} has no {rest[1]!r}"
    return None


def test_every_dotted_name_architecture_gives_exists():
    text = ARCHITECTURE.read_text(encoding="utf-8")
    bad = [f"`{d}`: {why}" for d in sorted(set(DOTTED.findall(text))) if (why := _unresolved(d))]
    assert not bad, "docs/architecture.md:\n" + "\n".join(bad)


def test_the_dotted_name_reader_can_fail():
    assert _unresolved("harness.model.Job") is None
    assert _unresolved("harness.plugin.Benchmark.judge") is None
    assert _unresolved("harness.sandbox.images") is None
    assert _unresolved("harness.hub.publish") is None
    assert _unresolved("harness.nothing") == "no such module"
    assert "defines no" in _unresolved("harness.model.NoSuchThing")
    assert "has no" in _unresolved("harness.plugin.Benchmark.no_such_hook")


# --- layers, entry points, sandboxes -----------------------------------------------------------


def _layer_test_layers() -> dict[str, int]:
    """``LAYERS`` of tests/test_layers.py, read from its source (importing it walks the
    whole package)."""
    tree = ast.parse((ROOT / "tests" / "test_layers.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "LAYERS" for t in targets):
                return ast.literal_eval(node.value)
    raise AssertionError("tests/test_layers.py has no LAYERS")


def _section(text: str, heading: str) -> str:
    m = re.search(rf"^## {re.escape(heading)}.*?$(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert m, f"docs/architecture.md has no section '## {heading}'"
    return m.group(1)


def _documented_layers() -> dict[str, int]:
    out: dict[str, int] = {}
    for line in _section(ARCHITECTURE.read_text(encoding="utf-8"), "Layers").splitlines():
        if m := re.match(r"\|\s*(\d+)\s*\|(.*?)\|", line):
            for name in re.findall(r"`harness/(\w+)(?:\.py|/)`", m.group(2)):
                assert name not in out, f"{name} is in two rows of the layers table"
                out[name] = int(m.group(1))
    return out


def test_the_layers_table_is_the_layer_tests():
    documented, enforced = _documented_layers(), _layer_test_layers()
    assert documented == enforced, (
        "docs/architecture.md's layers differ from tests/test_layers.py's LAYERS: "
        f"only in the page {sorted(set(documented.items()) - set(enforced.items()))}, "
        f"only in the test {sorted(set(enforced.items()) - set(documented.items()))}")


def _literal(file: Path, name: str):
    for node in ast.parse(file.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return ast.literal_eval(node.value)
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
            return ast.literal_eval(node.value)
    raise AssertionError(f"{file.relative_to(ROOT)} has no literal {name}")


def _sandbox_names() -> list[str]:
    """The kit's own sandboxes: its pyproject.toml's ``verikit.sandboxes`` entry points,
    or, where sandboxes are not entry points, the registry's table ``SANDBOXES``."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = (project.get("entry-points") or {}).get("verikit.sandboxes")
    return sorted(declared) if declared else sorted(_literal(PKG / "registry.py", "SANDBOXES"))


def test_architecture_names_every_entry_point_group_and_sandbox():
    text = ARCHITECTURE.read_text(encoding="utf-8")
    groups = _literal(PKG / "plugin.py", "GROUPS")
    missing = [g for g in groups if not re.search(rf"(?<![\w.]){re.escape(g)}(?![\w.])", text)]
    missing += [s for s in _sandbox_names() if f"`{s}`" not in text]
    assert not missing, "docs/architecture.md does not name: " + ", ".join(missing)


# --- nothing outside the repository -------------------------------------------------------------

# What sends a reader outside: the design file or the papers beside the checkout (by path,
# or by a paper text's file name, ``NNN_<16 hex>.txt``), the papers' index, or any other
# path under the directory that holds the data mirror. A paper is cited by its title,
# authors and arXiv id, the architecture by docs/. (Spelled so that the pattern itself
# names no such file.)
OUTSIDE = re.compile(r"\bDESIG[N]\b|shared/paper[s]|\b\d{3}_[0-9a-f]{16}\.txt\b|\bINDEX\.md\b"
                     r"|\.\./shared/(?!data\b)|/work/share[d]")

#: What is read besides the README and docs/: every text file of these trees and these
#: top-level files. Not read: tests/recorded/ (tools' recorded outputs, data), and what
#: Python and pip leave in a checkout (``__pycache__``, ``build``, ``*.egg-info``).
SCANNED_TREES = ("harness", "tests", "scripts", "images")
SCANNED_FILES = ("noxfile.py", "tasks.py", "flake.nix")
TEXT_SUFFIXES = frozenset({".py", ".md", ".yaml", ".yml", ".json", ".jsonl", ".j2", ".sh", ".ml", ".toml", ".nix",
                           ".lark", ".tla", ".v", ".Containerfile", ".txt", ".cfg"})
NOT_SCANNED = ("tests/recorded/",)

#: Lines in files another change is rewriting now, so not changed with this check:
#: ``(file, a fragment of the line)``. The check skips exactly these lines, and
#: test_every_pending_line_is_still_pending fails as soon as one no longer names an
#: outside file: then its entry goes (the tuple may be left empty).
PENDING: tuple = ()


def _outside(text: str) -> list[str]:
    return [f"{n}: {line.strip()}" for n, line in enumerate(text.splitlines(), 1) if OUTSIDE.search(line)]


def _pending(rel: str, line: str) -> bool:
    return any(rel == file and fragment in line for file, fragment in PENDING)


def _scanned(area: str) -> list[Path]:
    """The text files of ``area`` (a tree of SCANNED_TREES, or a top-level file)."""
    top = ROOT / area
    if top.is_file():
        return [top]
    out = []
    for f in sorted(top.rglob("*")):
        rel = f.relative_to(ROOT).as_posix()
        if (f.suffix in TEXT_SUFFIXES and f.is_file() and not rel.startswith(NOT_SCANNED)
                and not any(part in ("__pycache__", "build") or part.endswith(".egg-info") for part in f.parts)):
            out.append(f)
    return out


def _outside_in(files: list[Path]) -> list[str]:
    bad = []
    for f in files:
        rel = f.relative_to(ROOT).as_posix()
        for n, line in enumerate(f.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if OUTSIDE.search(line) and not _pending(rel, line):
                bad.append(f"{rel}:{n}: {line.strip()[:160]}")
    return bad


@pytest.mark.parametrize("page", [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))],
                         ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_reader_is_sent_outside_the_repository(page):
    bad = _outside(page.read_text(encoding="utf-8"))
    assert not bad, f"{page.relative_to(ROOT)} names files outside the repository:\n" + "\n".join(bad)


@pytest.mark.parametrize("area", [*SCANNED_TREES, *SCANNED_FILES])
def test_no_file_of_the_repository_sends_a_reader_outside(area):
    """Code, tests, scripts, images and the top-level files name no file outside the
    repository but the data mirror (PENDING aside)."""
    files = _scanned(area)
    assert files, f"nothing to read in {area}"
    bad = _outside_in(files)
    assert not bad, (f"{area}: {len(bad)} line(s) name files outside the repository; cite a paper by its "
                     "title, authors and arXiv id, the architecture by docs/:\n" + "\n".join(bad))


def test_every_pending_line_is_still_pending():
    for file, fragment in PENDING:
        lines = [line for line in (ROOT / file).read_text(encoding="utf-8").splitlines() if fragment in line]
        assert lines, f"{file}: no line has {fragment!r} any more: remove it from PENDING"
        assert any(OUTSIDE.search(line) for line in lines), \
            f"{file}: the line with {fragment!r} names no outside file now: remove it from PENDING"


def test_the_outside_check_can_fail():
    up, word = ".." + "/shared/", "DESIG" + "N"  # so that this test's own lines name no outside file
    assert _outside(f'VERIKIT_DATA_MIRRORS="$PWD/{up}data"') == []
    design, papers = word + ".md", "papers/" + "001.txt"
    assert _outside(f"see {up}{design}") and _outside(f"`{up}{papers}`")
    assert _outside(f"{design}, 'Words'") and _outside(f"{up}notes.txt")
    assert _outside(f"{word}: 'nothing is left running'") and _outside("INDEX" + ".md: tags")
    assert _outside("the CASP paper, " + "000_d6c7d26d38965c5d" + ".txt, section 3")
    assert _outside("Hertzberg et al., arXiv:2508.18798, section 3") == []
    assert _outside("harness/benchmarks/casp/docs.md, docs/design-notes.md, DESIGNER") == []


def test_the_scan_reads_what_it_must():
    harness, tests = _scanned("harness"), _scanned("tests")
    names = {f.relative_to(ROOT).as_posix() for f in harness + tests}
    assert {"harness/model.py", "harness/benchmarks/casp/docs.md", "harness/benchmarks/casp/prompts.yaml",
            "harness/templates/report.html.j2", "tests/test_layout_doc.py"} <= names
    assert not any(n.startswith("tests/recorded/") or "__pycache__" in n for n in names)


# --- the pages harness/ names -------------------------------------------------------------------

# A relative Markdown link: ``[text](target)``, not a URL, not an anchor of the same page.
MD_LINK = re.compile(r"\]\((?![a-z][\w+.-]*:|#)([^)\s#]+)(?:#[^)\s]*)?\)")


def _pages_named(text: str) -> list[str]:
    """The Markdown pages of the repository ``text`` names by path (``docs/<name>.md``,
    ``harness/benchmarks/<package>/docs.md``)."""
    return [p for p in _paths(text) if p.endswith(".md")]


def test_every_page_harness_names_exists():
    """Every ``docs/<name>.md`` (and every other repository page) a file under harness/
    names exists, and every relative link of harness/'s Markdown pages reaches a file."""
    bad = []
    for f in _scanned("harness"):
        rel, text = f.relative_to(ROOT).as_posix(), f.read_text(encoding="utf-8", errors="replace")
        for page in sorted(set(_pages_named(text))):
            if not (ROOT / page).is_file():
                bad.append(f"{rel}: `{page}`: no such page")
        if f.suffix == ".md":
            for target in sorted(set(MD_LINK.findall(text))):
                if not (f.parent / target).exists():
                    bad.append(f"{rel}: link ({target}): no such file")
    assert not bad, "\n".join(bad)


def test_the_page_reader_sees_what_it_must():
    text = ("see docs/casp.md 'Allow-lists'; (harness/benchmarks/casp/docs.md 'Canaries'), "
            "[Integrity](../../../docs/integrity.md#x), [site](https://example.org/a.md), [here](#top)")
    assert _pages_named(text) == ["docs/casp.md", "harness/benchmarks/casp/docs.md"]
    assert MD_LINK.findall(text) == ["../../../docs/integrity.md"]
