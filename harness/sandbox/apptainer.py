"""Apptainer/Singularity sandbox (``--sandbox apptainer``): each job is ``apptainer exec``
of the toolchain's SIF image (``verikit images build NAME --format sif``), the container
runtime of most HPC clusters, run as the user (user-namespace mode, no daemon, no root).

The command line (:meth:`ApptainerSandbox.wrap`)::

    apptainer exec --containall --no-home --cleanenv --no-mount bind-paths \\
        --net --network none --bind SCRATCH:/scratch --pwd /scratch IMAGE.sif \\
        /usr/bin/env -i VAR=VALUE... ARGV

- ``--containall``: a private PID and IPC namespace, an empty ``/tmp`` and ``/var/tmp``,
  a minimal ``/dev``, the environment cleared (``--cleanenv`` says it again);
  ``--no-home``: the user's home is not mounted; ``--no-mount bind-paths``: nor are the
  site's configured bind paths (project filesystems);
- ``--net --network none``: a new network namespace with only a loopback interface (the
  one network type Apptainer lets unprivileged users request);
- the SIF's root filesystem is a read-only SquashFS; ``/scratch`` (the job's scratch
  directory) is the only writable bind;
- ``env -i`` gives the job exactly the kit's environment (``HOME`` and ``TMPDIR`` in
  ``/scratch``), which ``--cleanenv`` alone does not (Apptainer keeps ``HOME``).

Wall time, memory and output are the host sandbox's (:mod:`harness.sandbox.imagefile`):
``apptainer exec --memory`` and ``--cpus`` need cgroups v2 with systemd delegation, which
a cluster's scheduler owns. ``singularity`` (SingularityCE, Singularity 3.x) is used when
``apptainer`` is not installed; both take these options.

**Command line only: Apptainer is not installed here** (no Debian 12 package; its
releases are not reachable from the project's machines). ``tests/test_hpc_sandboxes.py``
checks these command lines against Apptainer's documented CLI; no job has run under
Apptainer on the project's machines.
"""

from __future__ import annotations

from pathlib import Path

from .imagefile import SCRATCH, ImageFileSandbox


class ApptainerSandbox(ImageFileSandbox):
    """Runs each job with ``apptainer exec`` of a SIF image (see the module doc).

    Args:
        image: path of the ``.sif`` file.

    Raises:
        SandboxError: no such file, or neither ``apptainer`` nor ``singularity`` is on PATH.
    """

    name = "apptainer"
    runtimes = ("apptainer", "singularity")
    image_format = "sif"

    def wrap(self, scratch: Path, command: list[str]) -> list[str]:
        """``apptainer exec`` of ``command`` in the image (the module doc's command line)."""
        return exec_argv(self.runtime, self.image, scratch, command)

    def runtime_failed(self, result) -> str | None:
        """Apptainer's own errors are ``FATAL:`` lines with exit status 255."""
        if result.returncode == 255 and "FATAL:" in result.stderr:
            return result.stderr.strip()
        return None


def exec_argv(runtime: str, image: str, scratch: Path | str, command: list[str]) -> list[str]:
    """The ``apptainer exec`` (or ``singularity exec``) command line that runs ``command``
    in the SIF ``image`` with ``scratch`` bound read-write at ``/scratch`` (its working
    directory), no network, no home, no host filesystems, a clean environment."""
    return [runtime, "exec", "--containall", "--no-home", "--cleanenv", "--no-mount", "bind-paths",
            "--net", "--network", "none", "--bind", f"{scratch}:{SCRATCH}:rw", "--pwd", SCRATCH,
            image, *command]


def build_argv(runtime: str, archive: str | Path, sif: str | Path) -> list[str]:
    """``apptainer build SIF docker-archive:ARCHIVE``: a SIF from a ``docker save`` (or
    ``podman save --format docker-archive``) archive, as a non-root user (an OCI source
    needs no ``--fakeroot``)."""
    return [runtime, "build", str(sif), f"docker-archive:{archive}"]
