"""Short control commands the kit itself runs (not jobs): a batch scheduler's client
programs (SLURM's ``sbatch``, ``squeue``, ``scontrol``, ``scancel``, ``sinfo``), run to
completion with a timeout, output captured. A job never runs through here: jobs run in a
sandbox (:mod:`harness.sandbox.local`, :mod:`harness.sandbox.container`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time

from ..model import ProcResult


def run_command(argv: list[str], *, timeout: float, input: str | None = None) -> ProcResult:
    """Run ``argv`` (found on PATH) to completion, with this process's environment.

    Args:
        argv: the program and its arguments.
        timeout: seconds; the process is killed when it takes longer.
        input: text fed to its standard input (None: no input).

    Returns:
        A :class:`~harness.model.ProcResult` with ``returncode``, ``stdout``, ``stderr``
        (text) and ``wall_s``; ``returncode`` None with ``start_error`` set when the
        program is not on PATH or cannot be started, and with ``timed_out`` set when it
        was killed at ``timeout``. Never raises for those.
    """
    if shutil.which(argv[0]) is None:
        return ProcResult(argv=list(argv), returncode=None, start_error=f"{argv[0]}: not found on PATH "
                          f"({os.environ.get('PATH', '')})")
    t0 = time.monotonic()
    try:
        proc = subprocess.run(argv, input=input, capture_output=True, text=True, timeout=timeout,
                              stdin=None if input is not None else subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return ProcResult(argv=list(argv), returncode=None, timed_out=True, wall_s=time.monotonic() - t0,
                          start_error=f"{argv[0]} did not answer within {timeout:g} s")
    except OSError as exc:
        return ProcResult(argv=list(argv), returncode=None, start_error=f"{argv[0]}: cannot start ({exc})")
    return ProcResult(argv=list(argv), returncode=proc.returncode, stdout=proc.stdout, stderr=proc.stderr,
                      wall_s=time.monotonic() - t0)
