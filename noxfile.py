"""User-facing sessions: ``nox -s tests``, ``nox -s casp`` (the main job), ``nox -s bench``.

Each session installs what it needs: the Debian toolchain through
``scripts/bootstrap-debian.sh`` (pinned versions from images/toolchains.json; needs root
or sudo on a Debian machine) and the kit into the session's virtualenv. The data mirror
is taken from ``VERIKIT_DATA_MIRRORS`` (set it to ``../shared/data`` on the project's
machines, where GitHub and the Hub cannot be reached).
"""

import os

import nox

nox.options.default_venv_backend = "venv"
nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = ["tests"]

PY = "3.11"


def _setup(session: nox.Session, extras: str = "dev") -> None:
    session.run("bash", "scripts/bootstrap-debian.sh", "framac", external=True)
    session.install("-e", f".[{extras}]")


@nox.session(python=PY)
def tests(session: nox.Session) -> None:
    """Install everything and run the test suite (real Frama-C, real data mirror, Nix
    evaluator from Debian's nix-bin for the flake checks)."""
    _setup(session)
    session.run("bash", "-c", "command -v nix-instantiate >/dev/null || apt-get install -y -q nix-bin "
                "|| (apt-get update -q && apt-get install -y -q nix-bin)", external=True)
    args = session.posargs or ["-q", "-ra", "--durations=10", "tests"]
    session.run("pytest", *args, env={"PYTHONDONTWRITEBYTECODE": "1"})


@nox.session(python=PY)
def casp(session: nox.Session) -> None:
    """Main job: all three CASP modes on casp-sample10 with the host toolchain,
    written to results/reproduced/casp/ and validated."""
    _setup(session)
    out = "results/reproduced/casp"
    session.run("verikit", "run", "casp", "--dataset", "casp-sample10", "--sandbox", "host",
                "-j", str(os.cpu_count() or 1), "--out", out, *session.posargs)
    session.run("verikit", "validate", out)


@nox.session(python=PY)
def bench(session: nox.Session) -> None:
    """Kit wall time vs the same bare frama-c commands, at -j 1 and -j 2 (ratios)."""
    _setup(session)
    session.run("python", "scripts/bench_casp.py", *session.posargs)


@nox.session(python=PY)
def lint(session: nox.Session) -> None:
    """Static checks: ruff on the package, tests and scripts."""
    session.install("ruff")
    session.run("ruff", "check", "--select", "E,F,W", "--line-length", "120", "harness", "tests", "scripts",
                "noxfile.py", "tasks.py")
