"""Image-file sandboxes: daemonless container runtimes that run a job in an image file,
as HPC clusters run containers (no daemon, no root, the user's own uid): Charliecloud
(:mod:`harness.sandbox.charliecloud`, ``ch-run`` on a SquashFS image) and
Apptainer/Singularity (:mod:`harness.sandbox.apptainer`, a SIF image).

Each is the host sandbox (:class:`~harness.sandbox.local.HostSandbox`) with the job's
argv wrapped in the runtime's command line (:meth:`ImageFileSandbox.wrap`): the runtime's
process is the job's process tree, so the host sandbox's reaper, watchdog (wall time,
memory as RSS summed over the tree, output cap) and scratch directory apply unchanged.
The job's scratch directory is bound at ``/scratch`` (read-write: the only writable
place besides a private, empty ``/tmp``), which is its working directory, ``HOME`` and
(``/scratch/tmp``) ``TMPDIR``; the image is read-only; the network is cut (each runtime
says how, and a sandbox that cannot cut it does not start). CPU and pids limits are not
enforced: they need cgroups, which a cluster's scheduler owns.

The image is a file made by ``verikit images build NAME --format squashfs|sif``
(:mod:`harness.sandbox.images.files`). Its sha256 is the sandbox's ``image_digest``, so it
is part of the probed toolchain's fingerprint and of every job's key, as an engine's
image ID is for the container sandbox.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from ..datasets import sha256_file
from ..model import Limits, ProcResult
from .base import SandboxError
from .local import HostSandbox

#: Where the job's scratch directory is bound inside the image.
SCRATCH = "/scratch"
#: The job's PATH inside the image (the host's means nothing there).
PATH_IN = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


class ImageFileSandbox(HostSandbox):
    """A host sandbox whose jobs run inside an image file through a daemonless runtime.

    Subclasses set ``name``, ``runtimes`` (the executables that provide it, tried in
    order), ``image_format`` (``squashfs`` or ``sif``: what ``images build --format``
    makes for it) and implement :meth:`wrap`.

    Args:
        image: path of the image file.

    Attributes:
        image: the image file's absolute path.
        image_digest: ``sha256:<hex>`` of the image file (the toolchain's fingerprint
            for these sandboxes).
        runtime: absolute path of the runtime's executable.
        isolation: what is enforced on a job (recorded with the probed toolchain).

    Raises:
        SandboxError: the image file does not exist, or the runtime is not installed
            (the message says what to do).
    """

    name = "imagefile"
    host_tools = False
    image_kind = "file"
    runtimes: tuple[str, ...] = ()
    image_format = ""
    isolation = {"network": "none", "root": "read-only", "memory": "watchdog", "cpus": "none", "pids": "none"}

    @classmethod
    def create(cls, *, toolchain: str | None = None, slots: int = 1, image: str | None = None) -> "ImageFileSandbox":
        """The sandbox of the image file ``image``, else of ``toolchain``'s current image
        file in this class's ``image_format``. Raises as the class."""
        from .images.names import image_file

        return cls(image or image_file(toolchain, cls.image_format))

    @classmethod
    def derived_image(cls, spec: dict) -> str | None:
        """The image file (this class's ``image_format``) of the derived image ``spec``.

        Raises:
            SandboxError: it has not been made (says how).
        """
        from .images.names import derived_tag, image_file

        return str(image_file(derived_tag(spec), cls.image_format))

    def __init__(self, image: str | Path):
        path = Path(image)
        if not path.is_file():
            raise SandboxError(f"{self.name} sandbox: no image file {path}; make it with "
                               f"'verikit images build TOOLCHAIN --format {self.image_format}'")
        self.runtime = self.find_runtime()
        super().__init__()
        self.image = str(path.resolve())
        self.image_digest = "sha256:" + sha256_file(path)

    @classmethod
    def find_runtime(cls) -> str:
        """The absolute path of the first of ``runtimes`` on PATH.

        Raises:
            SandboxError: none is installed.
        """
        for name in cls.runtimes:
            found = shutil.which(name)
            if found:
                return os.path.abspath(found)
        raise SandboxError(f"{cls.name} sandbox: {' or '.join(cls.runtimes)} is not installed (not on PATH)")

    def wrap(self, scratch: Path, command: list[str]) -> list[str]:
        """The runtime's command line that runs ``command`` (an ``env -i ...`` argv) in
        the image, with the network cut and ``scratch`` bound read-write at
        :data:`SCRATCH` as the working directory."""
        raise NotImplementedError

    def _enter(self, root: Path, argv: list[str], env: dict[str, str]) -> tuple[list[str], dict[str, str]]:
        """The job runs as ``env -i VAR=VALUE... argv`` inside the image: exactly the host
        sandbox's environment, its scratch paths read as :data:`SCRATCH`, PATH the image's
        (whatever the runtime passes or sets); the runtime itself gets the host sandbox's."""
        host = str(root)
        if "," in host or ":" in host:  # a bind specification cannot carry them
            raise SandboxError(f"{self.name} sandbox: the scratch directory {host} has ',' or ':'; set TMPDIR")
        inner = {k: SCRATCH + v[len(host):] if v == host or v.startswith(host + "/") else v for k, v in env.items()}
        inner["PATH"] = PATH_IN
        command = ["/usr/bin/env", "-i", *(f"{k}={v}" for k, v in sorted(inner.items())), *argv]
        return self.wrap(root, command), self.runtime_env(env)

    def runtime_env(self, env: dict[str, str]) -> dict[str, str]:
        """The environment of the runtime's own process (default: the host sandbox's
        minimal one, ``env``)."""
        return env

    def run(self, argv: list[str], *, files: dict[str, str | bytes] | None = None, limits: Limits = Limits(),
            collect: list[str] | tuple[str, ...] = (), env: dict[str, str] | None = None) -> ProcResult:
        """Run ``argv`` inside the image, in a fresh scratch directory (``/scratch``)
        holding ``files``: the contract of :meth:`harness.sandbox.local.HostSandbox.run`.
        A command the image does not have is a ``start_error`` (``returncode`` None).

        Raises:
            SandboxError: the runtime itself failed (:meth:`runtime_failed`).
        """
        result = super().run(argv, files=files, limits=limits, collect=collect, env=env)
        if not (result.timed_out or result.memout or result.output_truncated):
            failed = self.runtime_failed(result)
            if failed:
                raise SandboxError(f"{self.name} sandbox: {Path(self.runtime).name} failed (exit {result.returncode}): "
                                   f"{failed[-500:]}")
        if result.returncode == 127 and re.search(r"^/usr/bin/env: .*: No such file or directory$", result.stderr, re.M):
            result.start_error = result.stderr.strip()[-300:]  # env(1): the image has no such command
            result.returncode = None
        return result

    def runtime_failed(self, result: ProcResult) -> str | None:
        """The runtime's own error when ``result`` is the runtime failing (no job ran:
        an ``infra_error``, retried), else None."""
        return None

    def read_file(self, path: str) -> bytes | None:
        """A file of the image (e.g. ``/etc/verikit/toolchain.json``), or None when it
        does not exist."""
        res = self.run(["cat", path], limits=Limits(wall_s=60, output_bytes=1 << 20))
        return res.stdout.encode() if res.returncode == 0 else None

