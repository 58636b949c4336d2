"""The kit without root (``tests/nonroot.py``: a user ``scripts/rootless.sh`` creates,
with subordinate uid/gid ranges):

- the container sandbox through that user's own rootless Podman service
  (``scripts/rootless.sh start``), with the framac image copied into the user's storage
  (``scripts/rootless.sh load``: root's ``podman save`` streamed into the user's
  ``podman load``, paid once per module; reused while the image ID is the same): two
  casp-sample10 gold jobs (``TASKS``, run side by side with ``-j 2``: that the rootless
  engine runs the jobs and gives the reference's outcome does not depend on how many) give
  the committed reference run's verdicts and goal counts; jobs run as ``nobody`` (a subordinate uid), cannot write
  outside their directory, and leave nothing behind; on cgroup v1 (this machine) the
  engine enforces no memory/CPU/pids limit and the records say so;
- the host sandbox: two of the tasks, the same verdicts.
"""

from __future__ import annotations

import json
import pwd
import shutil
import subprocess
import time
from pathlib import Path

import pytest

import nonroot

pytestmark = [pytest.mark.container, pytest.mark.realtool]
SCRIPT = nonroot.ROOT / "scripts" / "rootless.sh"
#: The casp-sample10 tasks of the rootless container run (two of ``nonroot.FOUR_TASKS``).
TASKS = nonroot.FOUR_TASKS[2:]


def _cgroup_v2() -> bool:
    return Path("/sys/fs/cgroup/cgroup.controllers").exists()


@pytest.fixture(scope="module")
def rootless(engine_image):
    """``(image, DOCKER_HOST)`` of the test user's rootless Podman service, holding the
    framac image; stopped after the module."""
    from harness.sandbox import images

    image = engine_image(lambda: images.resolve("framac"))
    nonroot.ensure_user()
    t0 = time.monotonic()
    done = subprocess.run(["bash", str(SCRIPT), "load", nonroot.USER, image], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    print(f"{done.stdout.strip()} in {time.monotonic() - t0:.1f} s")
    home = nonroot.user_dir("verikit-rootless-")
    sock = home / "podman.sock"
    done = subprocess.run(["bash", str(SCRIPT), "start", nonroot.USER, str(sock)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    try:
        yield image, f"unix://{sock}", home
    finally:
        subprocess.run(["bash", str(SCRIPT), "stop", str(sock)], capture_output=True)
        shutil.rmtree(home, ignore_errors=True)


def _user_leftovers() -> list[str]:
    """Worker and job directories in /tmp that belong to the test user."""
    uid = pwd.getpwnam(nonroot.USER).pw_uid
    return [str(p) for pat in ("verikit-worker-*", "verikit-job-*") for p in Path("/tmp").glob(pat)
            if p.stat().st_uid == uid]


@pytest.fixture(scope="module")
def rootless_run(rootless):
    """``verikit run casp --mode gold --sandbox container`` on TASKS, as the test user
    through its rootless service: its run directory."""
    image, host, home = rootless
    out = home / "run"
    done = nonroot.verikit(["run", "casp", "--dataset", "casp-sample10", "--mode", "gold", "--sandbox", "container",
                            "-j", "2", "--out", str(out), *(a for t in TASKS for a in ("--task", t))],
                           {**nonroot.data_env(home), "DOCKER_HOST": host})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    (home / "run.stderr").write_text(done.stderr)
    return out


def test_rootless_podman_casp_gold_equals_reference(rootless, rootless_run):
    from harness.sandbox.container import connect

    image, host, _ = rootless
    records = nonroot.check_parity(rootless_run, "container", TASKS)
    root_id = connect().images.get(image).id  # the root engine's image: the same ID in the user's storage
    limits = "cgroup" if _cgroup_v2() else "none"  # rootless on cgroup v1: no limit can be enforced
    for rec in records:
        assert rec["toolchain"]["image"] == image and rec["toolchain"]["image_digest"] == root_id
        assert rec["toolchain"]["isolation"] == {"network": "none", "root": "read-only", "memory": limits,
                                                 "cpus": limits, "pids": limits}
    assert _user_leftovers() == []
    if limits == "none":
        assert "cannot limit memory, CPUs or processes here" in (rootless_run.parent / "run.stderr").read_text()
    print(f"rootless podman: {len(records)} records as user {nonroot.USER}, same verdicts and goals as the reference; "
          f"isolation {records[0]['toolchain']['isolation']}")


JOBS = r'''
import json, os, sys
from pathlib import Path
from harness.model import Limits
from harness.sandbox.container import ContainerSandbox
out = {}
with ContainerSandbox(sys.argv[1]) as sb:
    out["isolation"] = sb.isolation
    r = sb.run(["sh", "-c", "id -u; for f in /etc/x /x /scratch/x /tmp/x /var/tmp/x; do "
                "echo 1 > $f 2>/dev/null && echo WROTE $f; done; "
                "mkdir -p d/e && echo x > d/e/f && chmod 500 d/e d && echo OK"], limits=Limits(wall_s=60))
    out["job"] = r.stdout
    w = next(iter(sb._all))
    out["after_job"] = sorted(p.name for p in w.scratch.iterdir() if p.name != ".alive")
    r = sb.run(["sh", "-c", "mkdir -p k/l && touch k/l/m && chmod 500 k/l k && sleep 60"], limits=Limits(wall_s=3))
    out["timed_out"] = r.timed_out
    killed = str(w.dir)  # the one worker: killed at the limit, discarded
out["killed_worker_dir_left"] = Path(killed).exists()
print(json.dumps(out))
'''


def test_rootless_jobs_run_as_nobody_and_leave_nothing(rootless):
    """As the test user: a job runs as ``nobody`` (a subordinate uid), writes only its own
    directory; what it made in directories of its own (which the user cannot delete) is
    removed after it, and after a job killed at its wall-time limit too."""
    image, host, _ = rootless
    done = nonroot.as_user([*nonroot.python_argv(JOBS), image], {"DOCKER_HOST": host})
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout)
    assert got["job"].split() == ["65534", "OK"], got["job"]
    assert got["after_job"] == [] and got["timed_out"] is True
    assert got["killed_worker_dir_left"] is False
    assert _user_leftovers() == []


def test_host_sandbox_as_non_root_equals_reference():
    """``verikit run casp --sandbox host`` needs no root at all: the same verdicts (two
    tasks: the host sandbox's code is the same for any user)."""
    nonroot.ensure_user()
    home = nonroot.user_dir("verikit-host-")
    two = nonroot.FOUR_TASKS[:2]
    try:
        done = nonroot.verikit(["run", "casp", "--dataset", "casp-sample10", "--mode", "gold", "--sandbox", "host",
                                "-j", "2", "--out", str(home / "run"), *(a for t in two for a in ("--task", t))],
                               nonroot.data_env(home))
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
        records = nonroot.check_parity(home / "run", "host", two)
        assert all(r["toolchain"]["isolation"]["network"] == "host" for r in records)
    finally:
        shutil.rmtree(home, ignore_errors=True)
