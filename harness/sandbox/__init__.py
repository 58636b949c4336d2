"""Where a job runs: the only place in verikit that starts processes or containers.

A sandbox takes an argv, a set of input files and :class:`Limits`, runs the command in a
fresh scratch directory and returns a :class:`ProcResult`. Verifier modules build the
argv and parse the result; the executor picks the sandbox. Implementations:

- :mod:`harness.sandbox.local` -- the host (``--sandbox host``): a subprocess in its own
  session/process group, wall-time and memory watchdog, output caps.
- :mod:`harness.sandbox.container` -- containers through the Docker Engine API (Docker
  or Podman), warm worker per slot, no network, read-only root (``--sandbox container``).
- :mod:`harness.sandbox.images` -- building, listing, verifying and saving the toolchain
  images.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Limits:
    """Resource limits for one job.

    Attributes:
        wall_s: wall-clock limit in seconds; the whole process tree is killed at it.
        mem_mb: resident-memory limit in MiB, summed over the process tree.
        cpus: number of CPUs the job may use (passed to tools that parallelise).
        output_bytes: cap on each of stdout and stderr, in bytes; the tree is killed
            when a stream exceeds it and the result is flagged ``output_truncated``.
    """

    wall_s: float = 600.0
    mem_mb: int = 4096
    cpus: int = 1
    output_bytes: int = 8 * 1024 * 1024

    def to_json(self) -> dict:
        """Return the limits as a JSON-able dict (keys as the attribute names)."""
        return asdict(self)


@dataclass
class ProcResult:
    """Outcome of one sandboxed command.

    Attributes:
        argv: the command that ran.
        returncode: exit status (negative: killed by that signal); None if it never started.
        stdout, stderr: decoded output (UTF-8, errors replaced), each at most
            ``Limits.output_bytes`` long.
        wall_s: elapsed wall time in seconds.
        cpu_s: user+system CPU seconds of the process tree (children included).
        max_rss_mb: peak resident set size of the tree seen by the watchdog, in MiB.
        timed_out: killed at the wall-time limit.
        memout: killed at the memory limit.
        output_truncated: killed because stdout or stderr exceeded the cap.
        files: output files collected from the scratch directory (name -> bytes).
        start_error: why the process could not start (infrastructure problem), or None.
    """

    argv: list[str]
    returncode: int | None
    stdout: str = ""
    stderr: str = ""
    wall_s: float = 0.0
    cpu_s: float = 0.0
    max_rss_mb: float = 0.0
    timed_out: bool = False
    memout: bool = False
    output_truncated: bool = False
    files: dict[str, bytes] = field(default_factory=dict)
    start_error: str | None = None


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


SANDBOXES = ("host", "container")


def get_sandbox(name: str, *, toolchain: str | None = None, slots: int = 1, image: str | None = None):
    """Return a sandbox instance.

    Args:
        name: ``host`` or ``container``.
        toolchain: for ``container``: the toolchain whose current Debian image to use.
        slots: for ``container``: number of warm workers (= parallel jobs).
        image: for ``container``: an explicit image reference instead.

    Raises:
        ValueError: unknown sandbox name.
        SandboxError: (container) no engine or no image; the message says what to do.
    """
    if name == "host":
        from .local import HostSandbox

        return HostSandbox()
    if name == "container":
        from .container import ContainerSandbox
        from .images import resolve

        return ContainerSandbox(image or resolve(toolchain), slots=slots)
    raise ValueError(f"unknown sandbox {name!r}; available: {', '.join(SANDBOXES)}")
