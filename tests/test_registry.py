"""``verikit images push`` / ``images pull`` and the Debian base by digest, against a real
registry on 127.0.0.1: Debian's ``docker-registry`` package (the CNCF distribution
registry 2.8), plain HTTP. The pull goes into a fresh Podman storage root, so the image
can only come from the registry. What this does not exercise: TLS, authentication
(``podman login``), GHCR's own behaviour.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness import toolchains
from harness.sandbox import images

ROOT = Path(__file__).resolve().parents[1]
VERIKIT = str(Path(sys.executable).with_name("verikit"))
TOOLCHAIN = "tlaplus"  # the smallest toolchain image (about 0.6 GB)

pytestmark = [pytest.mark.container, pytest.mark.slow]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def registry(tmp_path_factory):
    binary = shutil.which("docker-registry")
    if binary is None:
        if os.environ.get("VERIKIT_REQUIRE_ENGINE"):
            pytest.fail("docker-registry is not installed (the tests session installs Debian's docker-registry)")
        pytest.skip("docker-registry is not installed (apt-get install docker-registry)")
    if not shutil.which("podman"):
        pytest.skip("podman is not installed")
    try:
        tag = images.resolve(TOOLCHAIN)
    except images.SandboxError as exc:
        pytest.skip(str(exc))
    tmp = tmp_path_factory.mktemp("registry")
    port = _free_port()
    (tmp / "config.yml").write_text(
        "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: " + str(tmp / "data")
        + "\nhttp:\n  addr: 127.0.0.1:" + str(port) + "\n")
    proc = subprocess.Popen([binary, "serve", str(tmp / "config.yml")], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.1)
    else:
        proc.kill()
        pytest.fail(f"docker-registry did not listen: {proc.stderr.read().decode()[-1000:]}")
    yield {"uri": f"127.0.0.1:{port}", "tag": tag}
    proc.terminate()
    proc.wait(timeout=10)


def _fresh_storage(conf: Path) -> dict:
    """The environment with an empty image store (``conf``: :func:`fresh_podman_storage`)."""
    return {**os.environ, "CONTAINERS_STORAGE_CONF": str(conf)}


@pytest.fixture(scope="module")
def pushed(registry):
    got = subprocess.run([VERIKIT, "images", "push", registry["tag"], "--registry", registry["uri"],
                          "--no-tls-verify"], capture_output=True, text=True, timeout=900)
    assert got.returncode == 0, got.stderr
    out = json.loads(got.stdout)
    assert out["digest"].startswith("sha256:") and out["pushed"].startswith(registry["uri"])
    return out


def test_pull_by_digest_into_a_fresh_storage_checks_the_baked_manifest(registry, pushed, fresh_podman_storage):
    env = _fresh_storage(fresh_podman_storage)
    ref = f"{pushed['pushed'].rsplit(':', 1)[0]}@{pushed['digest']}"
    got = subprocess.run([VERIKIT, "images", "pull", TOOLCHAIN, "--ref", ref, "--no-tls-verify"], env=env,
                         capture_output=True, text=True, timeout=900)
    assert got.returncode == 0, got.stderr
    assert got.stdout.strip() == images.image_tag(TOOLCHAIN)
    assert f"{ref}: checked (toolchain {TOOLCHAIN}, fingerprint {images.fingerprint(TOOLCHAIN)[:12]}" in got.stderr
    assert "tlc 2.15" in got.stderr.lower() or "tla" in got.stderr.lower()
    have = subprocess.run(["podman", "image", "inspect", "--format", "{{.Id}}", images.image_tag(TOOLCHAIN)],
                          env=env, capture_output=True, text=True)
    local = subprocess.run(["podman", "image", "inspect", "--format", "{{.Id}}", registry["tag"]],
                           capture_output=True, text=True)
    assert have.returncode == 0 and have.stdout.strip() == local.stdout.strip()  # the same image, from the registry
    # not by digest: refused; the digest of another toolchain's image: refused, named
    tagged = subprocess.run([VERIKIT, "images", "pull", TOOLCHAIN, "--ref", pushed["pushed"], "--no-tls-verify"],
                            env=env, capture_output=True, text=True)
    assert tagged.returncode == 2 and "pulled by digest only" in tagged.stderr
    wrong = subprocess.run([VERIKIT, "images", "pull", "framac", "--ref", ref, "--no-tls-verify"], env=env,
                           capture_output=True, text=True, timeout=900)
    assert wrong.returncode == 2 and "is not the framac image of the current pins" in wrong.stderr
    assert "label verikit.toolchain=tlaplus, not framac" in wrong.stderr


def test_the_recorded_digest_is_what_pull_uses(registry, pushed, tmp_path, monkeypatch, fresh_podman_storage):
    """scripts/record_published.py (the workflow's last step) writes the digest into a
    copy of images/toolchains.json; ``images.pull(NAME)`` then needs no reference."""
    pins = tmp_path / "toolchains.json"
    shutil.copyfile(ROOT / "images" / "toolchains.json", pins)
    record = tmp_path / "pushed.json"
    record.write_text(json.dumps({**pushed, "toolchain": TOOLCHAIN, "flavor": "debian",
                                  "fingerprint": images.fingerprint(TOOLCHAIN)}))
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "record_published.py"), "--pins", str(pins),
                           str(record)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    entry = json.loads(pins.read_text())["toolchains"][TOOLCHAIN]["images"]["debian"]["published"]
    assert entry["ref"].endswith(pushed["digest"])
    monkeypatch.setattr(toolchains, "PINS_FILE", pins)
    toolchains.load_pins.cache_clear()  # cached: read the copy, and the real file again after the test
    assert images.fingerprint(TOOLCHAIN) == entry["fingerprint"]  # recording does not move the fingerprint
    for k, v in _fresh_storage(fresh_podman_storage).items():
        monkeypatch.setenv(k, v)
    try:
        got = images.pull(TOOLCHAIN, tls_verify=False)
    finally:
        monkeypatch.undo()
        toolchains.load_pins.cache_clear()
    assert got["ref"] == entry["ref"] and got["tag"] == images.image_tag(TOOLCHAIN)


def test_debian_base_by_digest(registry, tmp_path, fresh_podman_storage):
    """The Debian-flavor base from an image by digest (where a registry is reachable),
    checked to be the right suite; debootstrap stays the offline path."""
    suite = images.image_spec(TOOLCHAIN)["suite"]
    base = f"verikit-base:{suite}"
    if subprocess.run(["podman", "image", "exists", base]).returncode != 0:
        pytest.skip(f"{base} is not in the engine")
    got = subprocess.run([VERIKIT, "images", "push", base, "--registry", registry["uri"], "--no-tls-verify"],
                         capture_output=True, text=True, timeout=600)
    assert got.returncode == 0, got.stderr
    out = json.loads(got.stdout)
    ref = f"{out['pushed'].rsplit(':', 1)[0]}@{out['digest']}"
    env = _fresh_storage(fresh_podman_storage)
    conf = tmp_path / "registries.conf"
    conf.write_text(f'[[registry]]\nlocation = "{registry["uri"]}"\ninsecure = true\n')
    env["CONTAINERS_REGISTRIES_CONF"] = str(conf)
    script = str(ROOT / "scripts" / "make-base-image.sh")
    made = subprocess.run(["bash", script, suite, "podman"], env={**env, "BASE_IMAGE": ref}, capture_output=True,
                          text=True, timeout=600)
    assert made.returncode == 0, made.stderr
    assert f"base image {base} = {ref}" in made.stdout
    assert subprocess.run(["podman", "image", "exists", base], env=env).returncode == 0
    other = "trixie" if suite == "bookworm" else "bookworm"
    wrong = subprocess.run(["bash", script, other, "podman"], env={**env, "BASE_IMAGE": ref}, capture_output=True,
                           text=True, timeout=600)
    assert wrong.returncode == 2 and f"is Debian '{suite}', not {other}" in wrong.stderr
    untagged = subprocess.run(["bash", script, other, "podman"], env={**env, "BASE_IMAGE": out["pushed"]},
                              capture_output=True, text=True)
    assert untagged.returncode == 2 and "give it by digest" in untagged.stderr
