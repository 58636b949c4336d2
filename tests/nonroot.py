"""The kit run as a non-root user, for the rootless and HPC-runtime tests.

``scripts/rootless.sh user USER`` (as root) creates the user with subordinate uid/gid
ranges and installs what is missing (rootless Podman's uidmap, slirp4netns,
fuse-overlayfs; charliecloud; squashfs-tools). The kit then runs as that user through
``runuser``, with Debian's own ``/usr/bin/python3`` (the tests' interpreter may live
where the user cannot read it, e.g. under /root) and this checkout plus the tests'
site-packages on its path, in a clean environment.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest

USER = "verikit-rootless"
ROOT = Path(__file__).resolve().parents[1]
SYSTEM_PYTHON = "/usr/bin/python3"
REFERENCE = ROOT / "results" / "reproduced" / "casp"
#: Four casp-sample10 tasks: their gold jobs take 2-4 s each with Frama-C.
FOUR_TASKS = ["00_327", "01_57", "02_12", "03_379"]


def ensure_user() -> pwd.struct_passwd:
    """The test user, made (idempotently) by ``scripts/rootless.sh user``. Skips when the
    tests do not run as root or Debian's python3 is not this interpreter's minor version
    (the site-packages' compiled modules must load in it); fails when the user cannot read
    this checkout."""
    if os.geteuid() != 0:
        pytest.skip("making a non-root user needs root (CI runs the tests as root)")
    if shutil.which("runuser") is None:
        pytest.skip("runuser (util-linux) is not installed")
    probe = subprocess.run([SYSTEM_PYTHON, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True,
                           text=True)
    if probe.returncode != 0 or probe.stdout.strip() != str(tuple(sys.version_info[:2])):
        pytest.skip(f"{SYSTEM_PYTHON} is not Python {sys.version_info[0]}.{sys.version_info[1]}")
    done = subprocess.run(["bash", str(ROOT / "scripts" / "rootless.sh"), "user", USER], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    entry = pwd.getpwnam(USER)
    paths = [ROOT / "harness" / "__init__.py", Path(site_packages()), *_mirrors()]
    done = subprocess.run(["bash", str(ROOT / "scripts" / "rootless.sh"), "grant", USER, *map(str, paths)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    for path in paths:
        seen = as_user(["test", "-r", str(path)], {})
        assert seen.returncode == 0, f"user {USER} cannot read {path}: it must be readable by other users"
    return entry


def _mirrors() -> list[Path]:
    return [Path(m) for m in os.environ.get("VERIKIT_DATA_MIRRORS", "").split(os.pathsep) if m]


def site_packages() -> str:
    """The tests' site-packages (the kit's dependencies, installed by nox)."""
    return sysconfig.get_paths()["purelib"]


def user_dir(prefix: str) -> Path:
    """A new directory in the temporary directory, owned by the test user (the caller
    removes it)."""
    d = Path(tempfile.mkdtemp(prefix=prefix))
    entry = pwd.getpwnam(USER)
    os.chown(d, entry.pw_uid, entry.pw_gid)
    return d


def as_user(argv: list[str], env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess:
    """``argv`` run as the test user in a clean environment (PATH, HOME, LANG plus ``env``)."""
    entry = pwd.getpwnam(USER)
    base = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": entry.pw_dir, "LANG": "C.UTF-8", "USER": USER}
    cmd = ["runuser", "-u", USER, "--", "env", "-i", *(f"{k}={v}" for k, v in {**base, **env}.items()), *argv]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd="/")


def python_argv(code: str) -> list[str]:
    """Debian's python3 running ``code`` with this checkout and the tests' site-packages
    importable (``-I -S``: nothing else of the system's Python)."""
    return [SYSTEM_PYTHON, "-I", "-S", "-c",
            f"import site, sys; sys.path.insert(0, {str(ROOT)!r}); site.addsitedir({site_packages()!r})\n" + code]


def verikit(args: list[str], env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess:
    """``verikit ARGS`` as the test user (``env``: VERIKIT_* and DOCKER_HOST as needed)."""
    return as_user([*python_argv("from harness.cli import main; sys.exit(main())"), *args], env, timeout)


def data_env(home: Path) -> dict[str, str]:
    """The user's data and result caches in ``home`` and the tests' data mirror."""
    return {"VERIKIT_DATA_MIRRORS": os.environ.get("VERIKIT_DATA_MIRRORS", ""),
            "VERIKIT_DATA": str(home / "data"), "VERIKIT_CACHE": str(home / "cache")}


def reference() -> dict:
    """The committed reference run's records (``verikit run casp --sandbox host``), by
    :func:`harness.results.record_identity`."""
    from harness.results import load_records, record_identity

    return {record_identity(r): r for r in load_records(REFERENCE / "records.jsonl")}


def check_parity(out: Path, sandbox: str, tasks: list[str] = FOUR_TASKS) -> list[dict]:
    """The records of the run in ``out`` (gold jobs of ``tasks``) each have the
    reference's verdict and goal counts, its toolchain was probed in ``sandbox`` with the
    reference's Frama-C; returns the records."""
    from harness.results import load_records, record_identity, record_outcome, validate

    ref = reference()
    records = load_records(out / "records.jsonl")
    gold = [r for r in records if r["candidate"]["origin"] != "canary"]
    assert sorted(r["task_id"] for r in gold) == sorted(tasks)
    for rec in records:
        validate("record", rec)
        want = ref[record_identity(rec)]
        assert record_outcome(rec) == record_outcome(want), record_identity(rec)
        assert rec["toolchain"]["sandbox"] == sandbox
        assert rec["toolchain"]["tools"]["frama-c"]["version"] == want["toolchain"]["tools"]["frama-c"]["version"]
    run = json.loads((out / "run.json").read_text())
    validate("run", run)
    assert run["status"] == "complete" and run["sandbox"] == sandbox
    assert os.stat(out / "records.jsonl").st_uid == pwd.getpwnam(USER).pw_uid  # written by the user
    return records
