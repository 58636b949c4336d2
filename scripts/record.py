"""Record the real tools' outputs of the rule matrix (``tests/recorded/runs/<family>/``).

Usage (with the toolchains and images of ``nox -s tests`` in place; ``nox -s record --
FAMILY...`` sets them up and runs this)::

    python scripts/record.py                    # every family recorded so far
    python scripts/record.py casp-integrity     # one family (the cases of tests/test_casp_integrity.py)

A family is the rule matrix of one test module, ``tests/test_<family>.py`` (``-`` read as
``_``): its tests marked ``recorded`` run here with ``VERIKIT_RECORD=1``, so that every
command the kit starts for them runs in the real sandbox (the host's Frama-C, or the
toolchain's image under Podman) and its output is kept, with the probed toolchain, the
image digest and the kit's commit (``tests/recording.py``). The family's recording is
replaced as a whole. In every other session those tests replay it: the kit's executor,
parser and judge read the recorded outputs, and ``tests/test_freshness.py`` re-runs a
sample of them live each day.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNS = ROOT / "tests" / "recorded" / "runs"


def module(family: str) -> Path:
    """The test module of ``family``. Raises SystemExit (exit 2) when there is none."""
    path = ROOT / "tests" / f"test_{family.replace('-', '_')}.py"
    if not path.is_file():
        sys.exit(f"record.py: no test module {path.relative_to(ROOT)} for family {family!r}")
    return path


def main(argv: list[str]) -> int:
    families = argv or sorted(p.name for p in RUNS.iterdir() if p.is_dir())
    paths = [module(f) for f in families]
    env = {**os.environ, "VERIKIT_RECORD": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    status = 0
    for family, path in zip(families, paths):
        print(f"record.py: recording {family} ({path.relative_to(ROOT)})", flush=True)
        # one process, no xdist: the family's module fixture sees every test of the module
        rc = subprocess.call([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-m", "recorded",
                              str(path)], cwd=ROOT, env=env)
        if rc != 0:
            print(f"record.py: {family}: the tests failed (exit {rc}); its recording is what they ran", flush=True)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
