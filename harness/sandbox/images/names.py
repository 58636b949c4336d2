"""The names of the images: a toolchain's Debian image spec, fingerprint and tag, a derived
image's tag, and where an image file lives. Imports no sandbox, so that a sandbox class
can name the image it runs (:meth:`harness.sandbox.Sandbox.create`) and the image builder
can start sandboxes, without an import circle."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from ... import resources, toolchains
from ..base import SandboxError

#: ``--format`` -> file suffix.
FORMATS = {"squashfs": ".sqfs", "sif": ".sif"}

def image_spec(name: str) -> dict:
    """The ``images.debian`` entry of toolchain ``name`` plus its pinned packages.

    Returns:
        ``{"suite", "containerfile", "packages": ["pkg=version", ...], "files": {...}}``
        (``files``: build-context files fetched from PyPI by hash, if any).

    Raises:
        SandboxError: the toolchain has no Debian image.
    """
    spec = toolchains.toolchain_spec(name)
    img = (spec.get("images") or {}).get("debian")
    if not img:
        raise SandboxError(f"toolchain {name!r} has no Debian image in images/toolchains.json")
    pkgs = sorted({f"{pkg}={t['debian']['version']}" for t in spec["tools"].values() if t.get("debian")
                   for pkg in (t["debian"]["package"], *t["debian"].get("also", ()))})  # also: same source package
    return {**img, "packages": pkgs}


def fingerprint(name: str) -> str:
    """sha256 (hex) of the Containerfile text, the suite and the pinned packages."""
    spec = image_spec(name)
    text = resources.kit_file(spec["containerfile"]).read_text()
    payload = toolchains.canonical_json({"containerfile": text, "suite": spec["suite"],
                                         "packages": spec["packages"], "files": spec.get("files")})
    return hashlib.sha256(payload.encode()).hexdigest()


def image_tag(name: str) -> str:
    """``verikit/<name>:debian-<fp12>`` for the current pins."""
    return f"verikit/{name}:debian-{fingerprint(name)[:12]}"


def derived_tag(spec: dict) -> str:
    """``verikit/<name>:<fp12>`` of a derived image spec (see :func:`build_derived`)."""
    return f"verikit/{spec['name']}:{spec['fingerprint'][:12]}"


def images_dir() -> Path:
    """Where image files are made and looked up: ``$VERIKIT_IMAGES``, else the user
    cache dir's ``images`` (e.g. ``~/.cache/verikit/images``). On a cluster, point it at
    a shared filesystem."""
    import platformdirs

    env = os.environ.get("VERIKIT_IMAGES")
    return Path(env) if env else Path(platformdirs.user_cache_dir("verikit")) / "images"


def file_path(tag: str, fmt: str, directory: Path | None = None) -> Path:
    """The image file of image ``tag`` in format ``fmt`` (``squashfs`` or ``sif``)."""
    name = tag.split("/", 1)[1] if tag.startswith("localhost/") else tag
    return Path(directory or images_dir()) / (name.replace("/", "-").replace(":", "-") + FORMATS[fmt])


def image_file(name: str, fmt: str) -> Path:
    """The image file that runs toolchain ``name`` (or image tag ``name``, with a ``:``)
    in format ``fmt``.

    Raises:
        SandboxError: it has not been made (the message says how).
    """
    tag = name if ":" in name else image_tag(name)
    path = file_path(tag, fmt)
    if not path.is_file():
        raise SandboxError(f"no {fmt} image file {path} for {tag}; make it with 'verikit images build "
                           f"{name.split('/')[-1].split(':')[0]} --format {fmt}' (VERIKIT_IMAGES: the directory)")
    return path
