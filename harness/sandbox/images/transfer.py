"""Moving images out of and into the engine: an image saved as an archive
(:func:`save`, :func:`save_image`) with the license texts it holds
(:func:`image_licenses`), the published Debian image pulled by digest and checked against
the pins (:func:`pull`), and an image pushed to a registry (:func:`push`)."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

from ... import toolchains
from ...datasets import sha256_file
from ..base import SandboxError
from ..engine import connect
from .debian import MANIFEST_PATH, fingerprint, image_tag, resolve
from .engine import find_image, image_labels


def save(name: str, path: Path, *, engine: str = "podman", base_url: str | None = None) -> dict:
    """Write the image of toolchain ``name`` as an OCI archive and return
    ``{"image", "image_id", "path", "format", "sha256", "bytes"}``.

    Podman: ``podman save --format oci-archive``; Docker: ``docker save`` (an OCI image
    layout since Docker 25).

    Raises:
        SandboxError: the image is not built or saving failed.
    """
    return save_image(resolve(name, base_url), path, engine=engine, base_url=base_url)


def save_image(tag: str, path: Path, *, engine: str = "podman", base_url: str | None = None) -> dict:
    """Write image ``tag`` (any image the engine has) as an archive, as :func:`save` does;
    also returns ``manifest_digest`` (``sha256:...`` of the image manifest, read from the
    OCI archive's ``index.json``; None for a Docker archive).

    Raises:
        SandboxError: no such image, or saving failed.
    """
    img = find_image(connect(base_url), tag)
    if img is None:
        raise SandboxError(f"no image {tag} in the engine")
    image_id = img.id
    path = Path(path)
    argv = [engine, "save", "-o", str(path), tag]
    if engine == "podman":
        argv[2:2] = ["--format", "oci-archive"]
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SandboxError(f"{' '.join(argv)} failed: {proc.stderr[-1000:]}")
    digest = None
    try:
        import tarfile

        with tarfile.open(path) as tar:
            index = json.load(tar.extractfile("index.json"))
        digest = index["manifests"][0]["digest"]
    except (KeyError, IndexError, TypeError, ValueError, OSError, tarfile.TarError):
        pass  # not an OCI archive (docker save of an older Docker)
    return {"image": tag, "image_id": image_id, "path": str(path), "format": "oci-archive",
            "sha256": sha256_file(path), "bytes": path.stat().st_size, "manifest_digest": digest}


def image_licenses(tag: str, dest: Path, *, engine: str = "podman") -> int:
    """Copy the license texts inside image ``tag`` into ``dest``: every Debian package's
    ``/usr/share/doc/<pkg>/copyright`` (as ``debian/<pkg>.copyright``) and the license
    files of the Python packages in the kit's venv (``python/<dist-info>/<file>``), read
    with a ``tar`` inside a container without network. Returns the number of files.

    Raises:
        SandboxError: the container failed.
    """
    import io
    import tarfile

    script = ("cd / && find usr/share/doc -maxdepth 2 -name copyright; "
              "find opt/verikit/lib -path '*dist-info*' \\( -iname 'LICEN[CS]E*' -o -iname 'COPYING*' "
              "-o -iname 'NOTICE*' \\) -type f 2>/dev/null")
    script = f"({script}) | tar -cf - -T -"
    proc = subprocess.run([engine, "run", "--rm", "--network", "none", "--entrypoint", "sh", tag, "-c", script],
                          capture_output=True)
    if proc.returncode != 0:
        raise SandboxError(f"reading the licenses in {tag} failed: {proc.stderr.decode(errors='replace')[-1000:]}")
    n = 0
    with tarfile.open(fileobj=io.BytesIO(proc.stdout)) as tar:
        for m in tar.getmembers():
            if not m.isfile():
                continue
            parts = m.name.split("/")
            if m.name.startswith("usr/share/doc/"):
                target = Path(dest) / "debian" / f"{parts[3]}.copyright"
            else:
                dist = next((p for p in parts if p.endswith(".dist-info")), "unknown")
                target = Path(dest) / "python" / dist / "/".join(parts[parts.index(dist) + 1:])
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(tar.extractfile(m).read())
            n += 1
    return n


def published_ref(name: str, flavor: str = "debian") -> dict | None:
    """``images.<flavor>.published`` of toolchain ``name`` in images/toolchains.json:
    ``{"ref": "REGISTRY/REPO@sha256:...", "fingerprint": hex}`` (written by the images
    workflow, .github/workflows/images.yml, after it pushed the image), or None."""
    spec = toolchains.toolchain_spec(name)
    return ((spec.get("images") or {}).get(flavor) or {}).get("published")


def pull(name: str, ref: str | None = None, *, engine: str = "podman", tls_verify: bool = True) -> dict:
    """Pull the published Debian image of toolchain ``name`` **by digest** (``ref``, default
    :func:`published_ref`), check its baked manifest (``/etc/verikit/toolchain.json``)
    and labels against the current pins (toolchain name, fingerprint), and tag it as
    :func:`image_tag` so that runs find it.

    Returns:
        ``{"ref", "image_id", "tag", "fingerprint", "tools": {tool: version}}``.

    Raises:
        SandboxError: no digest recorded or given, a reference not by digest, the pull
            failed, or the image is not the one the pins describe (named in the message).
    """
    if ref is None:
        published = published_ref(name)
        if not published:
            raise SandboxError(f"no published image of {name} is recorded in images/toolchains.json "
                               f"(images.debian.published; the images workflow records it): give --ref REF@sha256:... "
                               f"or build it here with 'verikit images build {name}'")
        if published.get("fingerprint") != fingerprint(name):
            raise SandboxError(f"the published image of {name} was built from other pins (fingerprint "
                               f"{str(published.get('fingerprint'))[:12]}, current {fingerprint(name)[:12]}): "
                               f"build it here with 'verikit images build {name}'")
        ref = published["ref"]
    if "@sha256:" not in ref:
        raise SandboxError(f"{ref}: images are pulled by digest only (REGISTRY/REPO@sha256:...)")
    argv = [engine, "pull", "-q", ref]
    if not tls_verify:
        argv.insert(2, "--tls-verify=false")
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SandboxError(f"{' '.join(argv)} failed: {proc.stderr.strip()[-1000:]}")
    labels = image_labels(engine, ref) or {}
    got = subprocess.run([engine, "run", "--rm", "--network", "none", "--entrypoint", "cat", ref, MANIFEST_PATH],
                         capture_output=True, text=True)
    try:
        manifest = json.loads(got.stdout)
    except json.JSONDecodeError:
        raise SandboxError(f"{ref}: no readable {MANIFEST_PATH} (not a verikit toolchain image)") from None
    want = fingerprint(name)
    problems = []
    if labels.get("verikit.toolchain") != name:
        problems.append(f"label verikit.toolchain={labels.get('verikit.toolchain')}, not {name}")
    if labels.get("verikit.fingerprint") != want:
        problems.append(f"label verikit.fingerprint={str(labels.get('verikit.fingerprint'))[:12]}, current pins "
                        f"{want[:12]}")
    if manifest.get("fingerprint") != want:
        problems.append(f"baked manifest fingerprint {str(manifest.get('fingerprint'))[:12]}, current pins {want[:12]}")
    if problems:
        raise SandboxError(f"{ref} is not the {name} image of the current pins: {'; '.join(problems)}")
    tag = image_tag(name)
    subprocess.run([engine, "tag", ref, tag], capture_output=True, check=False)
    image_id = subprocess.run([engine, "image", "inspect", "--format", "{{.Id}}", ref], capture_output=True,
                              text=True).stdout.strip()
    return {"ref": ref, "image_id": image_id, "tag": tag, "fingerprint": want,
            "tools": {t: (v or {}).get("version") for t, v in sorted((manifest.get("tools") or {}).items())}}


def push(image: str, registry_uri: str, *, engine: str = "podman", tls_verify: bool = True) -> dict:
    """Tag ``image`` as ``<registry_uri>/<name>:<tag>`` and push it (ECR or any
    registry; log in first, e.g. ``aws ecr get-login-password | podman login ...``);
    ``tls_verify=False``: a plain-HTTP registry (Podman's ``--tls-verify=false``).

    Returns:
        ``{"image", "pushed", "digest"}`` (digest: ``sha256:...`` of the pushed manifest).

    Raises:
        SandboxError: tagging or pushing failed.
    """
    target = f"{registry_uri.rstrip('/')}/{image.rsplit('/', 1)[-1]}"  # verikit/framac-runner:T -> URI/framac-runner:T
    with tempfile.TemporaryDirectory() as tmp:
        digest_file = Path(tmp) / "digest"
        for argv in ([engine, "tag", image, target],
                     [engine, "push", *(["--digestfile", str(digest_file)] if Path(engine).name == "podman" else []),
                      *(["--tls-verify=false"] if not tls_verify and Path(engine).name == "podman" else []),
                      target]):
            proc = subprocess.run(argv, capture_output=True, text=True)
            if proc.returncode != 0:
                raise SandboxError(f"{' '.join(argv)} failed: {proc.stderr[-1000:]}")
        digest = digest_file.read_text().strip() if digest_file.exists() else None
    if digest is None:  # docker prints it
        import re

        m = re.search(r"digest: (sha256:[0-9a-f]{64})", proc.stdout)
        digest = m.group(1) if m else None
    return {"image": image, "pushed": target, "digest": digest}
