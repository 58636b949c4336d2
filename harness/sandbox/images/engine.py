"""The container engine's side shared by every image kind: finding an image through the
engine's API (:func:`find_image`; a toolchain's current image, :func:`resolve`, and a
derived image, :func:`resolve_derived`), and the engine's CLI: ``build`` (:func:`cli_build`), an
image's labels (:func:`image_labels`), its version (:func:`engine_version`). The files
the images are built from (Containerfiles, scripts, Nix expressions) are the kit's own:
:func:`harness.resources.kit_file`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from ..base import SandboxError
from ..engine import connect
from .names import derived_tag, image_tag


def find_image(client, ref: str):
    for candidate in (ref, f"localhost/{ref}"):
        try:
            return client.images.get(candidate)
        except Exception:
            continue
    return None


def resolve(name: str, base_url: str | None = None) -> str:
    """The image reference to run toolchain ``name`` in (the current fingerprint's tag,
    :func:`harness.sandbox.images.image_tag`).

    Raises:
        SandboxError: not built yet (says how to build it); EngineUnavailable.
    """
    client = connect(base_url)
    tag = image_tag(name)
    img = find_image(client, tag)
    if img is None:
        raise SandboxError(f"image {tag} (toolchain {name}, current pins) is not built; run "
                           f"'verikit images build {name}' (or 'nox -s images')")
    return img.tags[0] if img.tags else tag


def resolve_derived(spec: dict, base_url: str | None = None) -> str:
    """The tag of a derived image that exists in the engine.

    Raises:
        SandboxError: not built (says how to build it).
    """
    tag = derived_tag(spec)
    if find_image(connect(base_url), tag) is None:
        raise SandboxError(f"image {tag} is not built; run 'verikit images build {spec['name']}'")
    return tag


def cli_build(engine: str, tag: str, containerfile: Path, context: Path, args: dict[str, str]) -> None:
    """``<engine> build`` (podman or docker CLI; the engine's API build endpoint proved
    unreliable on Podman 4.3: the compat build stalled before running a step).

    Raises:
        SandboxError: the build failed (the tail of its output is in the message).
    """
    argv = [engine, "build", "-t", tag, "-f", str(containerfile)]
    for k, v in args.items():
        argv += ["--build-arg", f"{k}={v}"]
    proc = subprocess.run(argv + [str(context)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SandboxError(f"{engine} build of {tag} failed (exit {proc.returncode}):\n"
                           f"{(proc.stdout + proc.stderr)[-3000:]}")


def image_labels(engine: str, ref: str) -> dict | None:
    """Labels of image ``ref`` as the engine's CLI reports them; None when it has no such image."""
    proc = subprocess.run([engine, "image", "inspect", "--format", "{{json .Config.Labels}}", ref],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        return None
    try:
        return json.loads(proc.stdout.strip() or "null") or {}
    except json.JSONDecodeError:
        return {}


def engine_version(engine: str = "podman") -> str | None:
    """``<engine> --version``'s line (``podman version 4.3.1``), or None when it does not run."""
    try:
        proc = subprocess.run([engine, "--version"], capture_output=True, text=True)
    except OSError:
        return None
    return proc.stdout.strip() or None
