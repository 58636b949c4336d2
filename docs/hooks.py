"""MkDocs hooks (``hooks:`` in mkdocs.yml): the pages that live with the code.

At build time this module adds to the site:

- ``benchmarks/<name>.md``: the page of every registered benchmark, written with its
  plugin: ``bench.docs_page()`` when the benchmark defines it, else (or when it returns
  None) ``docs.md`` beside the module that defines the benchmark's class
  (``harness/benchmarks/<pkg>/docs.md``). Further pages of the same package
  (``docs-<topic>.md`` beside it) become ``benchmarks/<name>-<topic>.md``. A registered
  benchmark without a page is a warning, so ``mkdocs build --strict`` fails on it.
- ``benchmarks/index.md``: the list of the registered benchmarks.
- ``reference/cli.md``: the CLI reference, generated from the argparse parser
  (``harness.cli.parser()``), so it cannot drift from ``verikit --help``.

Relative links are written so that they work on GitHub (from the file's place in the
repository, e.g. ``../harness/benchmarks/casp/docs.md`` in a page of ``docs/``); here they
are rewritten to the page's place in the site. A link to a file that is not part of the
site is left alone, and MkDocs reports it (a warning: ``--strict`` fails).

The docstrings' Sphinx roles (``:class:`Job```) are shown as plain code in the API pages.

The README's status table is shown on the site's home page: ``index.md`` holds the
placeholder ``<!-- README: status -->``, replaced by the README's lines between
``<!-- site:status -->`` and ``<!-- /site:status -->``.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import posixpath
import re
import sys
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parent.parent

log = logging.getLogger("mkdocs.hooks.verikit")

#: screenshots of the HTML report that pages show, copied into the site
SCREENSHOTS = ROOT / "results" / "screenshots"



def _harness(module: str):
    """``harness.<module>`` of this checkout, not of an installed copy (MkDocs restores
    ``sys.path`` after loading a hook, so the checkout goes first at each call)."""
    if sys.path[:1] != [str(ROOT)]:
        sys.path.insert(0, str(ROOT))
    import harness

    if Path(harness.__file__).resolve().parent != ROOT / "harness":
        raise RuntimeError(f"harness was imported from {harness.__file__}, not from {ROOT}")
    return importlib.import_module(f"harness.{module}")


# the generated files of this build: abs path on disk -> path in the site (for the links)
_site_paths: dict[Path, str] = {}


# --- benchmark pages ----------------------------------------------------------------------


def benchmark_pages() -> list[tuple[str, str, Path, list[tuple[str, Path]]]]:
    """``(name, site path, page on disk, [(site path, extra page on disk), ...])`` of
    every registered benchmark, in registry order."""
    registry = _harness("registry")
    out = []
    for name in registry.BENCHMARKS:
        bench = registry.benchmark(name)
        page = getattr(bench, "docs_page", None)
        if callable(page):
            page = page()  # None: the benchmark has no page (reported in on_files)
        default = Path(sys.modules[type(bench).__module__].__file__).parent / "docs.md"
        path = Path(page) if page is not None else default
        extras = [(f"benchmarks/{name}-{p.stem[len('docs-'):]}.md", p)
                  for p in sorted(path.parent.glob("docs-*.md"))]
        out.append((name, f"benchmarks/{name}.md", path, extras))
    return out


def benchmarks_index(pages) -> str:
    registry = _harness("registry")
    lines = ["# Benchmarks", "",
             "One page per registered benchmark (`harness/registry.py`), written with its plugin: "
             "`harness/benchmarks/<package>/docs.md`, beside the code it describes. How every "
             "benchmark is run, reproduced and validated: [Using it](../using.md).", "",
             "| benchmark | page | modes | datasets |", "|---|---|---|---|"]
    for name, uri, _, extras in pages:
        bench = registry.benchmark(name)
        more = "".join(f", [{posixpath.basename(u)[:-3]}]({posixpath.basename(u)})" for u, _ in extras)
        lines.append(f"| `{name}` | [{name}]({posixpath.basename(uri)}){more} | "
                     f"{', '.join(f'`{m}`' for m in bench.modes) or '-'} | "
                     f"{', '.join(f'`{d}`' for d in bench.datasets) or '-'} |")
    return "\n".join(lines) + "\n"


# --- the CLI reference ----------------------------------------------------------------------


def _cell(text) -> str:
    """Text for a Markdown table cell."""
    text = " ".join(str(text).split())
    for a, b in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ("|", "\\|"), ("*", "\\*"), ("_", "\\_")):
        text = text.replace(a, b)
    return text


def _code(text) -> str:
    """Inline code for a Markdown table cell (``|`` escaped: tables split on it first)."""
    return "`" + str(text).replace("|", "\\|") + "`"


def _subcommands(parser: argparse.ArgumentParser):
    """``[(name, help, subparser)]`` of the parser's subcommands (none: [])."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in getattr(action, "_choices_actions", [])}
            return [(name, helps.get(name) or sub.description or "", sub) for name, sub in action.choices.items()]
    return []


def _options(parser: argparse.ArgumentParser) -> list[str]:
    """Markdown tables of the parser's arguments, one per argument group."""
    formatter = parser._get_formatter()
    out = []
    groups = getattr(parser, "_action_groups", None) or [argparse.Namespace(title="arguments", _group_actions=parser._actions)]
    for group in groups:
        rows = []
        for action in group._group_actions:
            if isinstance(action, argparse._SubParsersAction) or action.help == argparse.SUPPRESS:
                continue
            invocation = formatter._format_action_invocation(action)
            text = formatter._expand_help(action) if action.help else ""
            default = action.default
            if (default in (None, argparse.SUPPRESS) or isinstance(default, bool)
                    or isinstance(action, (argparse._HelpAction, argparse._VersionAction))):
                shown = ""
            else:
                shown = _code(default)
            rows.append(f"| {_code(invocation)} | {_cell(text)} | {shown} |")
        if rows:
            out += ["", f"*{_cell(group.title)}*", "", "| argument | what | default |", "|---|---|---|", *rows]
    return out


def cli_reference() -> str:
    _parser = _harness("cli").parser
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"  # usage lines wrapped the same on every machine
    try:
        parser = _parser()
        lines = ["# CLI reference", "",
                 "Generated at build time from the command line's own parser (`harness.cli.parser()`, "
                 "by `docs/hooks.py`): what `verikit COMMAND --help` prints, as tables. `python -m harness` "
                 "is the same command line. Exit codes: [Using it](../using.md#exit-codes).", ""]
        lines += ["| command | what |", "|---|---|"]
        lines += [f"| [`verikit {name}`](#verikit-{name}) | {_cell(text)} |" for name, text, _ in _subcommands(parser)]
        lines += ["", "## verikit", "", "```", parser.format_usage().strip(), "```", *_options(parser), ""]
        _command(parser, ["verikit"], lines)
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old
    return "\n".join(lines) + "\n"


def _command(parser, path: list[str], lines: list[str]) -> None:
    for name, text, sub in _subcommands(parser):
        words = [*path, name]
        level = "#" * min(len(words), 4)
        lines += [f"{level} {' '.join(words)}", ""]
        if text:
            lines += [_cell(text), ""]
        if sub.description and sub.description != text:
            lines += [_cell(sub.description), ""]
        lines += ["```", sub.format_usage().strip(), "```", *_options(sub), ""]
        children = _subcommands(sub)
        if children:
            lines += ["Subcommands: " + ", ".join(f"[`{c}`](#{'-'.join([*words, c])})" for c, _, _ in children), ""]
        _command(sub, words, lines)


# --- links ---------------------------------------------------------------------------------

LINK = re.compile(r"(\]\()([^)\s]+)(\))")


def rewrite_links(markdown: str, base: Path, page_uri: str) -> str:
    """Relative links of a page whose file is in ``base``, to files that are in the site
    under another path than the repository's, rewritten relative to ``page_uri``."""

    def fix(m: re.Match) -> str:
        target = m.group(2)
        if "://" in target or target.startswith(("#", "/", "mailto:")):
            return m.group(0)
        path, _, anchor = target.partition("#")
        uri = _site_paths.get((base / path).resolve())
        if uri is None:
            return m.group(0)
        new = posixpath.relpath(uri, posixpath.dirname(page_uri) or ".")
        return m.group(1) + new + ("#" + anchor if anchor else "") + m.group(3)

    return LINK.sub(fix, markdown)


README_PART = re.compile(r"<!-- README: (\w+) -->")


def _readme_part(name: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start, end = f"<!-- site:{name} -->", f"<!-- /site:{name} -->"
    if start not in text or end not in text:
        log.warning("README.md has no part %r (%s ... %s)", name, start, end)
        return ""
    return text.split(start, 1)[1].split(end, 1)[0].strip("\n")


def _short_title(path: Path) -> str:
    """The page's title without its parenthesis: ``# CASP (`harness/...`)`` -> ``CASP``."""
    first = path.read_text(encoding="utf-8").splitlines()[0] if path.is_file() else ""
    return first.lstrip("# ").split(" (")[0].strip() or path.parent.name


# --- MkDocs events -------------------------------------------------------------------------


def on_config(config):
    """The Benchmarks section of the nav: the index, then every benchmark's pages."""
    nav = config.nav or []
    for item in nav:
        if isinstance(item, dict) and "Benchmarks" in item:
            entries = ["benchmarks/index.md"]
            for _, uri, path, extras in benchmark_pages():
                title = _short_title(path)
                entries.append({title: uri})
                entries += [{f"{title}: {p.stem[len('docs-'):].replace('-', ' ')}": u} for u, p in extras]
            item["Benchmarks"] = entries
    return config


def on_files(files, config):
    _site_paths.clear()
    for f in files:
        if f.abs_src_path:
            _site_paths[Path(f.abs_src_path).resolve()] = f.src_uri
    pages = benchmark_pages()
    for name, uri, path, extras in pages:
        if not path.is_file():
            log.warning("benchmark %r has no documentation page: %s is missing", name, path)
            continue
        for u, p in [(uri, path), *extras]:
            files.append(File.generated(config, u, abs_src_path=str(p)))
            _site_paths[p.resolve()] = u
    files.append(File.generated(config, "benchmarks/index.md", content=benchmarks_index(pages)))
    files.append(File.generated(config, "reference/cli.md", content=cli_reference()))
    for shot in sorted(SCREENSHOTS.glob("*.png")):
        uri = f"assets/screenshots/{shot.name}"
        files.append(File.generated(config, uri, abs_src_path=str(shot)))
        _site_paths[shot.resolve()] = uri
    return files


def on_page_markdown(markdown, page, config, files):
    def part(m: re.Match) -> str:
        return rewrite_links(_readme_part(m.group(1)), ROOT, page.file.src_uri)

    markdown = README_PART.sub(part, markdown)
    if page.file.abs_src_path:
        markdown = rewrite_links(markdown, Path(page.file.abs_src_path).parent, page.file.src_uri)
    return markdown


ROLE = re.compile(r":(?:py:)?(?:class|func|meth|data|mod|attr|exc|obj):(?=<code>)")


def on_page_content(html, page, config, files):
    """The docstrings' Sphinx roles (``:class:`Job```) shown as plain code, without the role."""
    return ROLE.sub("", html)


def on_serve(server, config, builder):
    """``mkdocs serve`` rebuilds when a benchmark's page or the parser changes."""
    for _, _, path, _ in benchmark_pages():
        server.watch(str(path.parent))
    for path in (ROOT / "harness" / "cli", ROOT / "harness" / "cli.py", ROOT / "README.md"):
        if path.exists():  # the command line: a module, or a package
            server.watch(str(path))
    return server
