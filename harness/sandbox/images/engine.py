"""The container engine's side shared by every image kind: finding an image through the
engine's API (:func:`find_image`), and the engine's CLI: ``build`` (:func:`cli_build`), an
image's labels (:func:`image_labels`), its version (:func:`engine_version`). The files
the images are built from (Containerfiles, scripts, Nix expressions) are the kit's own:
:func:`harness.resources.kit_file`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from ..base import SandboxError


def find_image(client, ref: str):
    for candidate in (ref, f"localhost/{ref}"):
        try:
            return client.images.get(candidate)
        except Exception:
            continue
    return None


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
