"""Name -> implementation, for benchmarks, verifiers and sandboxes: the one registry.

Entries are ``"module:attribute"`` strings, imported on first use, so that listing the
names costs nothing and a benchmark whose dependencies are missing does not break the
others. A benchmark module exposes ``BENCHMARK`` (a :class:`harness.model.Benchmark`
instance); a verifier entry names its class; a sandbox entry names its class.
"""

from __future__ import annotations

import hashlib
import importlib
import sys
from pathlib import Path

from .model import Benchmark

BENCHMARKS: dict[str, str] = {
    "casp": "harness.benchmarks.casp:BENCHMARK",
    "ntp4vc": "harness.benchmarks.ntp4vc:BENCHMARK",
    "modelbench": "harness.benchmarks.modelbench:BENCHMARK",
    "dafny-intent": "harness.benchmarks.dafny_intent:BENCHMARK",
    "osvbench": "harness.benchmarks.osvbench:BENCHMARK",
}

VERIFIERS: dict[str, str] = {
    "framac": "harness.verifiers.framac:FramaC",
    "rocq": "harness.verifiers.rocq:Rocq",
    "lean": "harness.verifiers.lean:Lean",
    "isabelle": "harness.verifiers.isabelle:Isabelle",
    "why3": "harness.verifiers.why3:Why3",
    "tlc": "harness.verifiers.tlc:TLC",
    "dafny": "harness.verifiers.dafny:Dafny",
    "hyperkernel": "harness.verifiers.hyperkernel:Hyperkernel",
}

SANDBOXES: dict[str, str] = {
    "host": "harness.sandbox.local:HostSandbox",
    "container": "harness.sandbox.container:ContainerSandbox",
}


class UnknownName(ValueError):
    """A benchmark, verifier or sandbox name that is not registered (lists the known ones)."""


def _load(table: dict[str, str], kind: str, name: str):
    if name not in table:
        raise UnknownName(f"unknown {kind} {name!r}; available: {', '.join(table)}")
    module, attr = table[name].split(":")
    return getattr(importlib.import_module(module), attr)


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
    """The sandbox class registered as ``name`` (``host`` or ``container``).

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
    """A new sandbox (a :class:`harness.model.Sandbox`) of the class registered as ``name``.

    Args:
        name: ``host`` or ``container``.
        toolchain: for ``container``: the toolchain whose current Debian image to use.
        slots: for ``container``: number of warm workers (= parallel jobs).
        image: for ``container``: an explicit image reference instead.

    Raises:
        UnknownName: not registered.
        harness.sandbox.SandboxError: (container) no engine or no image; the message says
            what to do.
    """
    cls = sandbox_class(name)
    if name == "container":
        from .sandbox.images import resolve

        return cls(image or resolve(toolchain), slots=slots)
    return cls()


def _sources(obj) -> list[Path]:
    """The files of the module (a package: every file of the package, grammars and data
    included, bytecode aside) that defines ``obj``'s class, and for a verifier the
    ``drivers/`` shipped into sandboxes."""
    module = sys.modules[type(obj).__module__]
    path = Path(module.__file__)
    top = path.parent if path.name == "__init__.py" or type(obj).__module__.count(".") > 2 else path
    files = sorted(f for f in top.rglob("*") if "__pycache__" not in f.parts) if top.is_dir() else [top]
    if type(obj).__module__.startswith("harness.verifiers."):
        files += sorted((Path(__file__).parent / "verifiers" / "drivers").glob("*"))
    return [f for f in files if f.is_file()]


def verdict_code_sha256(bench, verifier) -> str:
    """sha256 (hex) of the code that decides a verdict: the benchmark's module or package
    (its judge and integrity checks), the verifier's module (command line and parser),
    the drivers run inside the sandbox, and :mod:`harness.model` (the verdict vocabulary).
    Part of every job's key, so a result cached by other code is never reused."""
    digest = hashlib.sha256()
    for f in [*_sources(bench), *_sources(verifier), Path(__file__).parent / "model.py"]:
        digest.update(f.relative_to(Path(__file__).parent).as_posix().encode() + b"\0" + f.read_bytes())
    return digest.hexdigest()
