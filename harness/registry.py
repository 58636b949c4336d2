"""Name -> implementation, for benchmarks, verifiers and sandboxes: the one registry.

Benchmarks, verifiers and sandboxes are plugins found by entry point (:mod:`harness.plugin`:
groups ``verikit.benchmarks``, ``verikit.verifiers`` and ``verikit.sandboxes``); the kit's
own are declared in its pyproject.toml like any other. Entries are ``"module:attribute"`` strings; the names
are read on first use (:class:`EntryPoints`) and an entry is imported only when it is
used, so that listing the names imports no plugin and a benchmark whose dependencies
are missing does not break the others. A benchmark entry names a
:class:`harness.plugin.Benchmark` instance; a verifier entry names its class; a sandbox
entry names its class.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

from . import plugin
from .plugin import Benchmark


class EntryPoints(Mapping[str, str]):
    """The entry points of one group, name -> ``"module:attribute"``
    (:func:`harness.plugin.entry_points`), read on first use (importing no plugin), then
    kept: ``verikit --version`` and the commands that name no benchmark read none.
    Reading it raises :class:`harness.plugin.PluginError` for a name registered twice
    with different targets.
    """

    def __init__(self, group: str):
        self.group = group
        self._found: dict[str, str] | None = None

    def _read(self) -> dict[str, str]:
        if self._found is None:
            self._found = plugin.entry_points(self.group)
        return self._found

    def __getitem__(self, name: str) -> str:
        return self._read()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._read())

    def __len__(self) -> int:
        return len(self._read())

    def __repr__(self) -> str:
        return f"EntryPoints({self.group!r}: {self._read()!r})"


#: Registered benchmarks: name -> ``"module:OBJECT"`` (entry points ``verikit.benchmarks``).
BENCHMARKS: Mapping[str, str] = EntryPoints("verikit.benchmarks")

#: Registered verifiers: name -> ``"module:Class"`` (entry points ``verikit.verifiers``).
VERIFIERS: Mapping[str, str] = EntryPoints("verikit.verifiers")

#: Registered sandboxes: name -> ``"module:Class"`` (entry points ``verikit.sandboxes``), a
#: :class:`harness.sandbox.Sandbox` subclass.
SANDBOXES: Mapping[str, str] = EntryPoints("verikit.sandboxes")


class UnknownName(ValueError):
    """A benchmark, verifier or sandbox name that is not registered (lists the known ones)."""


def _load(table: Mapping[str, str], kind: str, name: str):
    if name not in table:
        raise UnknownName(f"unknown {kind} {name!r}; available: {', '.join(table)}")
    return plugin.load(table[name])


def benchmark(name: str) -> Benchmark:
    """The benchmark registered as ``name``.

    Raises:
        UnknownName: not registered.
    """
    return _load(BENCHMARKS, "benchmark", name)


def verifier(name: str):
    """A new instance of the verifier registered as ``name`` (a :class:`harness.model.Verifier`).

    Raises:
        UnknownName: not registered.
    """
    return _load(VERIFIERS, "verifier", name)()


def sandbox_class(name: str):
    """The sandbox class registered as ``name`` (the kit's: ``host``, ``container``,
    ``charliecloud``, ``apptainer``).

    Raises:
        UnknownName: not registered.
    """
    return _load(SANDBOXES, "sandbox", name)


def derived_images() -> dict[str, tuple[str, str]]:
    """Every derived image of every benchmark: image name -> (benchmark, mode)."""
    out = {}
    for name in BENCHMARKS:
        for image, mode in benchmark(name).derived_images().items():
            out[image] = (name, mode)
    return out


def sandbox(name: str, *, toolchain: str | None = None, slots: int = 1, image: str | None = None):
    """A new sandbox (a :class:`harness.sandbox.Sandbox`) of the class registered as ``name``.

    Args:
        name: a registered sandbox.
        toolchain: the toolchain whose current image (or image file) to use.
        slots: parallel jobs (a container sandbox's warm workers).
        image: an explicit image reference or image file instead.

    Raises:
        UnknownName: not registered.
        harness.sandbox.SandboxError: no engine, no image or image file, no runtime; the
            message says what to do.
    """
    return sandbox_class(name).create(toolchain=toolchain, slots=slots, image=image)


def _sources(obj) -> list[Path]:
    """The files of the module (a package: every file of the package, grammars and data
    included; bytecode, ``docs*.md`` pages, a plugin's ``expected/`` runs and its
    ``sections.schema.json`` aside) that
    defines ``obj``'s class, and for
    a verifier the ``drivers/`` shipped into sandboxes. A plugin outside the kit: every
    file of its top-level package."""
    name = type(obj).__module__
    path = Path(sys.modules[name].__file__)
    if not name.startswith("harness."):
        top = Path(sys.modules[name.split(".")[0]].__file__)
        top = top.parent if top.name == "__init__.py" else top
    else:
        top = path.parent if path.name == "__init__.py" or name.count(".") > 2 else path
    # not code that decides a verdict: bytecode, documentation pages, a plugin's committed
    # expected runs (its claims' results), the schema of its report sections
    files = sorted(f for f in top.rglob("*") if "__pycache__" not in f.parts and "expected" not in
                   f.relative_to(top).parts[:-1] and not (f.name.startswith("docs") and f.suffix == ".md")
                   and f.name != plugin.SECTIONS_SCHEMA) \
        if top.is_dir() else [top]
    if name.startswith("harness.verifiers."):
        files += sorted((Path(__file__).parent / "verifiers" / "drivers").glob("*"))
    return [f for f in files if f.is_file()]


def verdict_code_sha256(bench, verifier) -> str:
    """sha256 (hex) of the code that decides a verdict: the benchmark's module or package
    (its judge and integrity checks), the verifier's module (command line and parser),
    the drivers run inside the sandbox, :mod:`harness.model` (the verdict vocabulary),
    :mod:`harness.plugin` and :mod:`harness.parts` (the benchmark interface and its
    defaults). Part of every job's key, so a result cached by other code is never reused.
    Paths are hashed relative to the top-level package (``harness/...``, or a plugin's own)."""
    digest = hashlib.sha256()
    here = Path(__file__).parent
    for f in [*_sources(bench), *_sources(verifier), here / "model.py", here / "plugin.py", here / "parts.py"]:
        rel = f.relative_to(here).as_posix() if f.is_relative_to(here) else _plugin_relative(f)
        digest.update(rel.encode() + b"\0" + f.read_bytes())
    return digest.hexdigest()


def _plugin_relative(f: Path) -> str:
    """A plugin file's path from its top-level package's parent (``pkg/mod.py``)."""
    for parent in f.parents:
        if not (parent / "__init__.py").is_file():
            return f.relative_to(parent).as_posix()
    return f.name
