"""The documentation: the site (mkdocs.yml, docs/, each benchmark's page beside its code)
builds with ``mkdocs build --strict`` (every warning an error), has a page per registered
benchmark and the CLI reference of every command; the README stays short and starts with
the two commands; relative links in the README and the pages point to files that exist."""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from harness import registry
from harness.cli import parser

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
COMMANDS = ['    python3 -m pip install -q nox && VERIKIT_DATA_MIRRORS="$PWD/../shared/data" nox -s main',
            '    python3 -m pip install -q nox && VERIKIT_DATA_MIRRORS="$PWD/../shared/data" nox -s tests']


def _hooks():
    spec = importlib.util.spec_from_file_location("verikit_docs_hooks", ROOT / "docs" / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    if importlib.util.find_spec("mkdocs") is None:
        pytest.fail("mkdocs is not installed: pip install -e '.[dev]' (or '.[docs]')")
    out = tmp_path_factory.mktemp("site")
    got = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
                          "-d", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert got.returncode == 0, f"mkdocs build --strict failed:\n{got.stderr[-6000:]}"
    return out


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


@pytest.mark.slow
def test_site_builds_strict(site):
    assert (site / "index.html").is_file()
    home = (site / "index.html").read_text()
    assert "Not bit-exact." in home  # the README's status part, shown on the home page
    assert "<!-- README:" not in home


def test_every_registered_benchmark_has_its_page(site):
    for name, _, path, extras in _hooks().benchmark_pages():
        assert name in registry.BENCHMARKS
        assert path.is_file(), f"{name}: no page at {path}"
        page = site / "benchmarks" / name / "index.html"
        assert page.is_file(), f"{name}: {page} was not built"
        title = path.read_text().splitlines()[0].lstrip("# ").split(" (")[0]
        assert title in page.read_text()
        for uri, _ in extras:
            assert (site / uri.removesuffix(".md") / "index.html").is_file()
    assert len(_hooks().benchmark_pages()) == len(registry.BENCHMARKS)


def test_cli_reference_lists_every_command(site):
    html = (site / "reference" / "cli" / "index.html").read_text()
    top = _subcommands(parser())
    assert top
    for name, sub in top.items():
        assert f"verikit {name}" in html, name
        for child in _subcommands(sub):
            assert f"verikit {name} {child}" in html, f"{name} {child}"
    assert "--predictions" in html and "--sandbox" in html  # the options, with their help


def test_readme_is_short_and_starts_with_the_two_commands():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 300, f"README.md has {len(lines)} lines (at most 300; the rest belongs in docs/)"
    assert lines[:4] == ["# verikit", "", *COMMANDS]
    # CI runs the README's test command verbatim
    assert COMMANDS[1].strip() in (ROOT / ".ci" / "run").read_text()


# --- relative links --------------------------------------------------------------------------

LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^ *(```|~~~).*?^ *\1", re.S | re.M)
CODE = re.compile(r"`[^`\n]*`")


def _pages() -> list[Path]:
    pages = [README, *sorted((ROOT / "docs").rglob("*.md"))]
    for _, _, path, extras in _hooks().benchmark_pages():
        pages += [path, *(p for _, p in extras)]
    return pages


def _slugs(path: Path) -> set[str]:
    """Anchors of a page's headings, as GitHub and MkDocs make them (for plain headings)."""
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    out = set()
    for line in text.splitlines():
        if m := re.match(r"#+ (.*)", line):
            words = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower())
            out.add(words.replace(" ", "-"))
    return out


def test_relative_links_point_to_files_that_exist():
    generated = {"reference/cli.md", "benchmarks/index.md"}  # made by docs/hooks.py at build time
    problems = []
    for page in _pages():
        text = CODE.sub("", FENCE.sub("", page.read_text(encoding="utf-8")))
        for target in LINK.findall(text):
            if "://" in target or target.startswith(("#", "mailto:")):
                continue
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve()
            where = f"{page.relative_to(ROOT)}: {target}"
            if not file.exists():
                docs = (ROOT / "docs").resolve()
                if not (file.is_relative_to(docs) and file.relative_to(docs).as_posix() in generated):
                    problems.append(f"{where}: no such file")
                continue
            if anchor and file.suffix == ".md" and anchor not in _slugs(file):
                problems.append(f"{where}: no heading with that anchor")
    assert not problems, "\n".join(problems)
