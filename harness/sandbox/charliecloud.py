"""Charliecloud sandbox (``--sandbox charliecloud``): each job is ``ch-run`` of the
toolchain's SquashFS image (``verikit images build NAME --format squashfs``), run as the
user: Charliecloud needs no daemon, no root and no setuid helper, only unprivileged user
namespaces.

The command line (:meth:`CharliecloudSandbox.wrap`)::

    unshare --user --map-current-user --net -- \\
        ch-run --private-tmp -b SCRATCH:/scratch -c /scratch IMAGE.sqfs -- \\
        /usr/bin/env -i VAR=VALUE... ARGV

- ``ch-run`` mounts the SquashFS image read-only (through its built-in SquashFUSE) as the
  root filesystem, in new user and mount namespaces; the job keeps the user's uid;
- ``--private-tmp``: a private, empty ``/tmp`` instead of the host's (where other jobs'
  scratch directories are); ``-b SCRATCH:/scratch``: the job's scratch directory, the
  only writable bind; the user's home is not bound (``ch-run`` binds it only with
  ``--home``);
- ch-run has no option to cut the network (it always shares the host's network
  namespace), so ``unshare --net`` (util-linux) first puts the job in a new network
  namespace with only a loopback interface, inside a user namespace that maps the user
  to itself; the sandbox checks that this works when it starts and refuses to run
  otherwise (a site that forbids unprivileged network namespaces);
- ``env -i`` gives the job exactly the kit's environment (``HOME`` and ``TMPDIR`` in
  ``/scratch``).

Wall time, memory and output are the host sandbox's (:mod:`harness.sandbox.imagefile`).
Tested for real here as a non-root user with Debian 12's charliecloud 0.31
(``tests/test_hpc_sandboxes.py``).
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import subprocess
from pathlib import Path

from .base import SandboxError
from .imagefile import SCRATCH, ImageFileSandbox


class CharliecloudSandbox(ImageFileSandbox):
    """Runs each job with ``ch-run`` of a SquashFS image (see the module doc).

    Args:
        image: path of the ``.sqfs`` file.

    Raises:
        SandboxError: no such file, ``ch-run`` or ``unshare`` is not installed, or an
            unprivileged network namespace cannot be made here (the network could not be
            cut).
    """

    name = "charliecloud"
    runtimes = ("ch-run",)
    image_format = "squashfs"

    def __init__(self, image: str | Path):
        super().__init__(image)
        self.unshare = shutil.which("unshare")
        if self.unshare is None:
            raise SandboxError("charliecloud sandbox: unshare (util-linux) is not installed; it cuts the network")
        self.user = pwd.getpwuid(os.getuid()).pw_name
        probe = subprocess.run([*self._no_network(), "true"], capture_output=True, text=True)
        if probe.returncode != 0:
            raise SandboxError("charliecloud sandbox: cannot make an unprivileged network namespace here "
                               f"({probe.stderr.strip()[-200:]}); ch-run cannot cut the network by itself, "
                               "so jobs are not run")

    def runtime_env(self, env: dict[str, str]) -> dict[str, str]:
        """ch-run needs ``USER`` (it names the user in the image's /etc/passwd)."""
        return {**env, "USER": self.user}

    def runtime_failed(self, result) -> str | None:
        """ch-run's own errors are ``ch-run[PID]: error: ...`` lines (then a non-zero
        exit). A job killed by a signal exits 1 under ch-run's SquashFUSE (ch-run(1))."""
        if result.returncode not in (0, None) and re.search(r"^ch-run\[\d+\]: error: ", result.stderr, re.M):
            return result.stderr.strip()
        return None

    def _no_network(self) -> list[str]:
        return [self.unshare, "--user", "--map-current-user", "--net", "--"]

    def wrap(self, scratch: Path, command: list[str]) -> list[str]:
        """``ch-run`` of ``command`` in the image, in a new network namespace (the module
        doc's command line)."""
        return [*self._no_network(), *run_argv(self.runtime, self.image, scratch, command)]


def run_argv(runtime: str, image: str, scratch: Path | str, command: list[str]) -> list[str]:
    """The ``ch-run`` command line that runs ``command`` in the SquashFS ``image`` with a
    private ``/tmp`` and ``scratch`` bound at ``/scratch`` (its working directory)."""
    return [runtime, "--private-tmp", "-b", f"{scratch}:{SCRATCH}", "-c", SCRATCH, image, "--", *command]
