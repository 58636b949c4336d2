"""What every sandbox implementation shares: the base class :class:`Sandbox` (every
optional hook with its default), the error type and the scratch-directory helpers for a
job's input and output files."""

from __future__ import annotations

from pathlib import Path

from ..model import Limits, ProcResult


def inside(root: Path, rel: str) -> Path:
    """``root / rel``, refusing absolute paths and ``..`` that would leave ``root``.

    Raises:
        ValueError: the path escapes the job's scratch directory.
    """
    target = (root / rel).resolve()
    if not target.is_relative_to(root.resolve()):
        raise ValueError(f"path {rel!r} leaves the job's scratch directory")
    return target


def write_files(root: Path, files: dict[str, str | bytes] | None) -> None:
    """Write a job's input files (relative path -> str as UTF-8, or bytes) under ``root``.

    Raises:
        ValueError: a path escapes ``root``.
    """
    for rel, content in (files or {}).items():
        target = inside(root, rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)


def collect_files(root: Path, names) -> dict[str, bytes]:
    """The output files ``names`` that exist under ``root`` (relative path -> bytes).

    Raises:
        ValueError: a name escapes ``root``.
    """
    found = {}
    for rel in names:
        path = inside(root, rel)
        if path.is_file():
            found[rel] = path.read_bytes()
    return found


class SandboxError(RuntimeError):
    """The sandbox itself failed (our side): counts as ``infra_error``, is retried."""


class Sandbox:
    """Where a job runs (``harness.sandbox``): the only place that starts processes.
    Implementations subclass it: ``harness.sandbox.*`` and a plugin's (entry point group
    ``verikit.sandboxes``, name -> ``module:Class``). A subclass implements :meth:`run`;
    every other hook has a default here, and the kit calls them on every sandbox (none is
    probed for).

    Attributes:
        name: the sandbox's name (registry key, ``--sandbox NAME``).
        host_tools: jobs run with the tools installed on this machine (the host flavour of
            a toolchain's pins; ``--sandbox host``), not from an image: a benchmark whose
            toolchain exists only in images cannot run here. Default False.
        image: what the jobs run in (an image reference or image file), or None.
        image_digest: the image's content digest, recorded with every result, or None.
        isolation: what is enforced on a job, recorded with the probed toolchain:
            ``{"network", "root", "memory", "cpus", "pids"}`` (docs/sandboxes.md).
        image_kind: what it runs: ``"engine"`` (images of a container engine, which the kit
            builds when missing: toolchain and derived images), ``"file"`` (image files,
            made by ``verikit images build --format``), or None (no image, the default).
    """

    name: str = ""
    host_tools: bool = False
    image_kind: str | None = None
    image: str | None = None
    image_digest: str | None = None
    isolation: dict = {}

    @classmethod
    def create(cls, *, toolchain: str | None = None, slots: int = 1, image: str | None = None) -> "Sandbox":
        """A sandbox of this class for the jobs of ``toolchain`` (its current image, unless
        ``image`` names one), with ``slots`` parallel jobs. Default: ``cls()``.

        Raises:
            harness.sandbox.SandboxError: no engine, image or runtime (says what to do).
        """
        return cls()

    @classmethod
    def derived_image(cls, spec: dict) -> str | None:
        """What this sandbox runs for a benchmark's derived image ``spec``
        (:meth:`harness.plugin.Benchmark.derived_image_spec`; an engine image is built
        first by the run when missing). Default: None (the sandbox runs no image).

        Raises:
            harness.sandbox.SandboxError: the image is not there (says how to make it).
        """
        return None

    def run(self, argv: list[str], *, files: dict | None = None, env: dict | None = None,
            collect: list[str] | tuple[str, ...] = (), limits: Limits = Limits()) -> ProcResult:
        """Run ``argv`` in a fresh scratch directory holding ``files`` (relative path ->
        str or bytes), with ``env`` added, under ``limits``; return the outcome with the
        output files named in ``collect``. Raises SandboxError when the sandbox itself
        fails (an ``infra_error``)."""
        raise NotImplementedError(f"{type(self).__name__}.run")

    def cancel(self) -> None:
        """Kill every job running now (Ctrl-C). Default: nothing runs in the background."""

    def close(self) -> None:
        """Release workers and scratch space. Default: nothing to release."""

    def read_file(self, path: str) -> bytes | None:
        """A file of the image the jobs run in (e.g. ``/etc/verikit/toolchain.json``), or
        None when it does not exist or the sandbox runs no image (the default)."""
        return None
