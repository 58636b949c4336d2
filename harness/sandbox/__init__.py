"""Where a job runs: the only place in verikit that starts processes or containers.

A sandbox takes an argv, a set of input files and :class:`Limits`, runs the command in a
fresh scratch directory and returns a :class:`ProcResult`. Verifier modules build the
argv and parse the result; ``harness.registry.sandbox`` makes one by name. Every sandbox
subclasses :class:`Sandbox` (its optional hooks have defaults there) and is registered by
entry point (group ``verikit.sandboxes``; the kit's own in its pyproject.toml), so a
sandbox can come from a plugin. Implementations:

- :mod:`harness.sandbox.local` -- the host (``--sandbox host``): a subprocess in its own
  session/process group, wall-time and memory watchdog, output caps.
- :mod:`harness.sandbox.container` -- containers through the Docker Engine API (Docker
  or Podman, rootful or rootless), warm worker per slot, no network, read-only root
  (``--sandbox container``).
- :mod:`harness.sandbox.imagefile` -- daemonless HPC runtimes running an image file, as
  the host sandbox with the argv wrapped: :mod:`harness.sandbox.charliecloud`
  (``--sandbox charliecloud``, ``ch-run`` on SquashFS) and :mod:`harness.sandbox.apptainer`
  (``--sandbox apptainer``, SIF).
- :mod:`harness.sandbox.images` -- building, listing, verifying and saving the toolchain
  images.
"""

from __future__ import annotations

from ..model import Limits, ProcResult  # noqa: F401  (re-exported: the sandbox vocabulary)
from .base import Sandbox, SandboxError, collect_files, inside, write_files  # noqa: F401  (re-exported)

#: The sandbox that runs the tools installed on this machine: what commands that run no job
#: (planning, rescoring, reading a run) name, and what needs no engine.
HOST = "host"
#: The sandbox that runs the toolchains' images through a Docker-API engine: the default
#: where a benchmark's jobs need an image.
IMAGES = "container"


def default_sandbox() -> str:
    """The sandbox a run uses when none is named: :data:`IMAGES`, when a container engine
    answers (its module is imported only here, when asked).

    Raises:
        SandboxError: no engine answers (an ``EngineUnavailable``: the message says what to do).
    """
    from .engine import connect

    connect().close()
    return IMAGES
