"""The HPC runtimes' sandboxes (harness/sandbox/imagefile.py and its two runtimes).

- Charliecloud, for real, as a non-root user (``tests/nonroot.py``): the framac image
  converted by ``verikit images build framac --format squashfs`` (as root, where the
  engine's images are; made once, then reused while the image ID is the same), then
  ``verikit run casp --sandbox charliecloud`` on two casp-sample10 tasks (``TASKS``, side
  by side with ``-j 2``; the parity does not depend on how many) gives the committed
  reference run's verdicts and goal counts, and
  the sandbox's isolation holds (no network, read-only image, private /tmp, limits).
- Apptainer: **command line only: Apptainer is not installed here** (no Debian 12
  package; its releases cannot be downloaded on the project's machines). Its command
  lines are checked against its documented CLI (tests/recorded/apptainer/cli.json), and
  its absence gives clear errors; no job runs under Apptainer here.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import nonroot
from harness.sandbox import SandboxError
from harness.sandbox.apptainer import ApptainerSandbox, build_argv, exec_argv
from harness.sandbox.charliecloud import run_argv

#: The squashfs files the tests make, kept between sessions on one machine (a file made
#: from the engine's current framac image is reused, see harness/sandbox/images/files.py).
IMAGES = Path("/var/tmp/verikit-test-images")
CLI = json.loads((Path(__file__).parent / "recorded" / "apptainer" / "cli.json").read_text())
#: The casp-sample10 tasks of the Charliecloud run (two of ``nonroot.FOUR_TASKS``).
TASKS = nonroot.FOUR_TASKS[:2]


@pytest.fixture(scope="module")
def sqfs(engine_image) -> dict:
    """``verikit images build framac --format squashfs`` (as root): its printed JSON."""
    from harness.sandbox import images

    engine_image(lambda: images.resolve("framac"))
    nonroot.ensure_user()
    IMAGES.mkdir(mode=0o755, parents=True, exist_ok=True)
    env = dict(os.environ, VERIKIT_IMAGES=str(IMAGES), PYTHONPATH=str(nonroot.ROOT))
    done = subprocess.run([sys.executable, "-m", "harness", "images", "build", "framac", "--format", "squashfs"],
                          capture_output=True, text=True, env=env, cwd=nonroot.ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout[done.stdout.index("{"):])


@pytest.fixture(scope="module")
def ch_run(sqfs):
    """``verikit run casp --mode gold --sandbox charliecloud`` on TASKS, as the non-root
    user: its run directory."""
    home = nonroot.user_dir("verikit-ch-")
    out = home / "out"
    try:
        done = nonroot.verikit(["run", "casp", "--dataset", "casp-sample10", "--mode", "gold", "--sandbox",
                                "charliecloud", "-j", "2", "--out", str(out),
                                *(a for t in TASKS for a in ("--task", t))],
                               {**nonroot.data_env(home), "VERIKIT_IMAGES": str(IMAGES)})
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
        yield out
    finally:
        shutil.rmtree(home, ignore_errors=True)


@pytest.mark.container
@pytest.mark.realtool
def test_squashfs_image_file(sqfs):
    path = Path(sqfs["path"])
    assert path.parent == IMAGES and path.name.startswith("verikit-framac-debian-") and path.suffix == ".sqfs"
    from harness.datasets import sha256_file

    assert sqfs["sha256"] == sha256_file(path) and sqfs["bytes"] == path.stat().st_size
    assert json.loads(path.with_name(path.name + ".json").read_text())["image_id"] == sqfs["image_id"]


@pytest.mark.container
@pytest.mark.realtool
def test_charliecloud_casp_gold_as_non_root_equals_reference(ch_run, sqfs):
    records = nonroot.check_parity(ch_run, "charliecloud", TASKS)
    for rec in records:
        tc = rec["toolchain"]
        assert tc["image"] == sqfs["path"] and tc["image_digest"] == "sha256:" + sqfs["sha256"]
        assert tc["image_manifest"]["matches_probe"] is True
        assert tc["isolation"] == {"network": "none", "root": "read-only", "memory": "watchdog", "cpus": "none",
                                   "pids": "none"}
    print(f"charliecloud: {len(records)} records as user {nonroot.USER}, same verdicts and goals as the reference")


ISOLATION = r'''
import json, os, sys, time
import psutil
from harness.model import Limits
from harness.sandbox.charliecloud import CharliecloudSandbox
sb = CharliecloudSandbox(sys.argv[1])
port, marker = sys.argv[2], sys.argv[3]
out = {}
r = sb.run(["bash", "-c", "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '; echo $HOME $TMPDIR $PWD; id -u; "
            f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo CONNECTED; "
            "for f in /etc/x /x /usr/x /var/tmp/x; do echo 1 > $f 2>/dev/null && echo WROTE $f; done; "
            f"test -e /tmp/{marker} && echo HOSTTMP; echo made > out.txt; mkdir -p tmp/d; cat in.txt"],
           files={"in.txt": "hello\n"}, collect=["out.txt"], limits=Limits(wall_s=60))
out["job"] = {"stdout": r.stdout, "stderr": r.stderr[-500:], "files": {k: v.decode() for k, v in r.files.items()}}
r = sb.run(["no-such-tool", "--version"], limits=Limits(wall_s=30))
out["missing"] = {"start_error": r.start_error, "returncode": r.returncode}
t0 = time.monotonic()
r = sb.run(["sh", "-c", "sleep 67 & sleep 67"], limits=Limits(wall_s=1.5))
time.sleep(0.5)
out["timeout"] = {"timed_out": r.timed_out, "s": time.monotonic() - t0,
                  "left": [p.pid for p in psutil.process_iter(["cmdline", "uids"])
                           if p.info["cmdline"] == ["sleep", "67"] and p.info["uids"].real == os.getuid()]}
out["digest"] = sb.image_digest
import tempfile
from harness.sandbox import SandboxError
with tempfile.NamedTemporaryFile(suffix=".sqfs") as junk:
    junk.write(b"not a squashfs" * 1000)
    junk.flush()
    try:
        CharliecloudSandbox(junk.name).run(["true"], limits=Limits(wall_s=30))
    except SandboxError as exc:
        out["corrupt"] = str(exc)
print(json.dumps(out))
'''


@pytest.mark.container
@pytest.mark.realtool
def test_charliecloud_isolation_as_non_root(sqfs):
    """No network (only ``lo``; the host's loopback unreachable), a read-only image, a
    private ``/tmp``, the scratch directory as ``HOME``/``TMPDIR``/cwd, a missing command
    is a start error, the wall-time limit kills the whole tree, and ch-run's own failure
    is a SandboxError."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    marker = tempfile.NamedTemporaryFile(prefix="verikit-marker-", dir="/tmp")
    try:
        done = nonroot.as_user([*nonroot.python_argv(ISOLATION), sqfs["path"], str(srv.getsockname()[1]),
                                Path(marker.name).name], {})
    finally:
        srv.close()
        marker.close()
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout)
    lines = got["job"]["stdout"].splitlines()
    assert lines[0] == "lo" and lines[1] == "/scratch /scratch/tmp /scratch", got["job"]
    assert lines[2] == str(nonroot.ensure_user().pw_uid)  # the user's own uid, not root
    assert not any(w in got["job"]["stdout"] for w in ("CONNECTED", "WROTE", "HOSTTMP")), got["job"]
    assert lines[-1] == "hello" and got["job"]["files"] == {"out.txt": "made\n"}
    assert got["missing"]["returncode"] is None and "no-such-tool" in got["missing"]["start_error"]
    assert got["timeout"]["timed_out"] and got["timeout"]["s"] < 15 and got["timeout"]["left"] == []
    assert got["digest"] == "sha256:" + sqfs["sha256"]
    # ch-run failing (here: an image that is not one) is our side, an infra error, never a job's exit status
    assert "charliecloud sandbox: ch-run failed" in got.get("corrupt", ""), got.get("corrupt")


def test_charliecloud_command_line():
    argv = run_argv("/usr/bin/ch-run", "/i/x.sqfs", "/tmp/verikit-job-1-a", ["/usr/bin/env", "-i", "A=1", "true"])
    assert argv == ["/usr/bin/ch-run", "--private-tmp", "-b", "/tmp/verikit-job-1-a:/scratch", "-c", "/scratch",
                    "/i/x.sqfs", "--", "/usr/bin/env", "-i", "A=1", "true"]


# ---------------------------------------------------------------- Apptainer: command line only


def _documented(argv: list[str], command: str) -> list[str]:
    """Check ``argv`` (``apptainer COMMAND [options] IMAGE ...``) option by option
    against the documented flags of ``COMMAND``; returns what follows the options."""
    flags = CLI["commands"][command]["flags"]
    assert argv[1] == command
    rest = argv[2:]
    while rest and rest[0].startswith("-"):
        name = rest.pop(0)
        assert name in flags, f"{name} is not a documented option of apptainer {command}"
        if flags[name]["value"]:
            value = rest.pop(0)
            allowed = flags[name].get("values")
            if allowed is not None:
                assert value in allowed, f"{name} {value}: documented values {allowed}"
            if name == "--bind":
                src, dst, *opts = value.split(":")
                assert src.startswith("/") and dst.startswith("/") and set(opts) <= {"ro", "rw"}, value
    return rest


@pytest.mark.recorded
def test_apptainer_exec_command_line_is_documented():
    """Command line only: Apptainer is not installed here. Every option of the exec
    command line is one Apptainer documents for ``exec``, with a documented value."""
    cmd = ["/usr/bin/env", "-i", "HOME=/scratch", "frama-c", "-wp", "x.c"]
    argv = exec_argv("apptainer", "/images/framac.sif", "/tmp/verikit-job-1-a", cmd)
    rest = _documented(argv, "exec")
    assert rest == ["/images/framac.sif", *cmd]
    for needed in ("--containall", "--no-home", "--cleanenv", "--net"):
        assert needed in argv
    assert argv[argv.index("--network") + 1] == "none" and "none" in CLI["unprivileged_networks"]
    assert argv[argv.index("--bind") + 1] == "/tmp/verikit-job-1-a:/scratch:rw"
    assert argv[argv.index("--pwd") + 1] == "/scratch"


@pytest.mark.recorded
def test_apptainer_build_command_line_is_documented():
    """Command line only: Apptainer is not installed here. A SIF from a Docker archive:
    the ``docker-archive`` bootstrap agent names a file with one colon (not ``://``)."""
    argv = build_argv("apptainer", "/w/image.tar", "/images/x.sif")
    assert _documented(argv, "build") == ["/images/x.sif", "docker-archive:/w/image.tar"]
    assert CLI["commands"]["build"]["sources"]["docker-archive"] == "docker-archive:<file>"


@pytest.mark.skipif(shutil.which("apptainer") or shutil.which("singularity"), reason="Apptainer is installed")
def test_apptainer_missing_is_a_clear_error(tmp_path):
    sif = tmp_path / "x.sif"
    sif.write_bytes(b"not a sif")
    with pytest.raises(SandboxError, match="apptainer or singularity is not installed"):
        ApptainerSandbox(sif)


@pytest.mark.container
def test_run_with_a_missing_image_file_is_exit_2(tmp_path, monkeypatch, capsys, engine_image):
    from harness.cli import main
    from harness.sandbox import images

    engine_image(lambda: images.resolve("framac"))
    monkeypatch.setenv("VERIKIT_IMAGES", str(tmp_path / "images"))
    out = tmp_path / "out"
    code = main(["run", "casp", "--dataset", "casp-sample10", "--mode", "gold", "--sandbox", "charliecloud",
                 "--task", "00_327", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and "no squashfs image file" in err and "--format squashfs" in err, err
    assert "Traceback" not in err and not (out / "records.jsonl").exists()
    if shutil.which("apptainer") is None and shutil.which("singularity") is None:
        code = main(["images", "build", "framac", "--format", "sif"])
        err = capsys.readouterr().err
        assert code == 2 and "apptainer is not installed here" in err and "docker-archive:" in err, err
        assert not (tmp_path / "images").exists()  # nothing made, nothing saved
