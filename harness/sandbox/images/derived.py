"""Derived images: a toolchain image (or an image the user loads) with benchmark data
baked in (e.g. ``ntp4vc-rocq``), and :func:`resolve_any`, which finds a toolchain or a
derived image by name."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from ... import toolchains
from ...model import utc_now
from ..base import SandboxError
from .names import derived_tag
from ..engine import connect
from .debian import build
from .engine import cli_build, find_image, resolve


def build_derived(spec: dict, *, base_url: str | None = None, engine: str = "podman", force: bool = False,
                  log=print) -> str:
    """Build (or reuse) an image derived from a toolchain image with benchmark data baked
    in (e.g. ``ntp4vc-rocq``: the NTP4VC Rocq library compiled once).

    Args:
        spec: ``{"name", "base_toolchain" (or "base_image": a reference that must already be
            in the engine, with "base_hint": the message when it is not), "fingerprint" (hex; covers the base image's
            fingerprint, every file and the build script), "files": {context path: bytes},
            "containerfile": text (gets ``--build-arg BASE=<toolchain image>``),
            "manifest": dict baked as /etc/verikit/<name>.json}``.

    Returns:
        The image tag ``verikit/<name>:<fp12>``. The toolchain manifest
        (/etc/verikit/toolchain.json) and labels of the base image are inherited; the
        image gets the labels ``verikit.derived=<name>`` and
        ``verikit.derived.fingerprint=<fingerprint>``.

    Raises:
        SandboxError: the base image cannot be built or the build failed (output tail).
    """
    client = connect(base_url)
    tag = derived_tag(spec)
    if not force and find_image(client, tag) is not None:
        log(f"{tag}: exists (fingerprint matches), reused")
        return tag
    if spec.get("base_image"):  # an image the user loads (e.g. an upstream image that cannot be built here)
        if find_image(client, spec["base_image"]) is None:
            raise SandboxError(spec.get("base_hint") or f"base image {spec['base_image']} is not in the engine")
        base = spec["base_image"]
    else:
        base = build(spec["base_toolchain"], base_url=base_url, engine=engine, log=log)
    log(f"{tag}: building on {base} ({len(spec['files'])} files)")
    cf = (spec["containerfile"] + f"\nCOPY manifest.json /etc/verikit/{spec['name']}.json\n"
          f"LABEL verikit.derived={spec['name']} verikit.derived.fingerprint={spec['fingerprint']}\n")
    with tempfile.TemporaryDirectory() as ctx:
        root = Path(ctx)
        for rel, data in spec["files"].items():
            target = root / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        (root / "Containerfile").write_text(cf)
        manifest = dict(spec["manifest"], fingerprint=spec["fingerprint"], base_image=base,
                        built_at=utc_now())
        (root / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
        cli_build(engine, tag, root / "Containerfile", root, {"BASE": base})
    log(f"{tag}: built")
    return tag


def resolve_any(name: str, base_url: str | None = None) -> str:
    """The tag of toolchain image ``name``, or of a derived image of that name
    (``verikit/<name>:*``, newest first), or ``name`` itself when it is an image
    reference the engine has.

    Raises:
        SandboxError: no such image (the message says how to build it).
    """
    client = connect(base_url)
    if find_image(client, name) is not None:
        return name
    try:
        return resolve(name, base_url)
    except (SandboxError, toolchains.ToolchainError):  # not built, or not a toolchain (a derived image's name)
        pass
    imgs = [i for i in client.images.list() if any(t.split(":")[0].endswith(f"verikit/{name}") for t in i.tags)]
    if imgs:
        return sorted(imgs, key=lambda i: i.attrs.get("Created", ""))[-1].tags[0]
    raise SandboxError(f"no image {name!r}: build it first with 'verikit images build {name}'")
