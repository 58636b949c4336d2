"""Image files for the daemonless runtimes of HPC clusters: ``verikit images build NAME
--format squashfs|sif`` converts a built toolchain (or derived) image into one file that
the image-file sandboxes run (:mod:`harness.sandbox.imagefile`):

- ``squashfs`` (Charliecloud's ``ch-run``): the image's flattened root filesystem
  (``<engine> create`` + ``<engine> export``, unpacked with ``tar``), with the mount
  point ``/scratch`` added, packed by ``mksquashfs`` (squashfs-tools);
- ``sif`` (Apptainer/Singularity): ``<engine> save`` as a Docker archive, then
  ``apptainer build X.sif docker-archive:ARCHIVE``.

The file is named after the image tag (``verikit/framac:debian-<fp12>`` ->
``verikit-framac-debian-<fp12>.sqfs``) in :func:`images_dir`, so that the sandboxes find
the current one by toolchain; ``<file>.json`` beside it records the image ID it was made
from, its sha256 and size, and a file made from the engine's current image is reused.
The sandboxes hash the file again when they start: its sha256 is the probed toolchain's
``image_digest`` (the toolchain's fingerprint for them).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from ...datasets import sha256_file
from ...model import utc_now
from ..base import SandboxError
from .names import FORMATS, file_path, image_file, images_dir  # noqa: F401  (the names the builder uses)

#: mksquashfs compression: fast to pack and to read (the framac image, 2.6 GB unpacked,
#: packs in about a minute on two cores).
SQUASHFS_OPTIONS = ("-noappend", "-comp", "zstd", "-Xcompression-level", "3", "-quiet")


def _run(argv: list[str], what: str, **kwargs) -> subprocess.CompletedProcess:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, **kwargs)
    except OSError as exc:
        raise SandboxError(f"{what}: cannot run {argv[0]}: {exc}") from exc
    if proc.returncode != 0:
        raise SandboxError(f"{what}: {' '.join(argv[:4])} ... failed (exit {proc.returncode}): "
                           f"{(proc.stdout + proc.stderr)[-1500:]}")
    return proc


def build_file(tag: str, fmt: str, *, output: Path | None = None, engine: str = "podman", force: bool = False,
               log=print) -> dict:
    """Make (or reuse) the image file of the engine's image ``tag`` in format ``fmt``.

    Args:
        tag: an image the engine (``engine``'s CLI) has.
        fmt: ``squashfs`` or ``sif``.
        output: the file (default :func:`file_path` in :func:`images_dir`).
        force: make it again even if ``<file>.json`` says it was made from this image.

    Returns:
        ``{"image", "image_id", "path", "format", "sha256", "bytes", "built_at"}`` (also
        written to ``<file>.json``).

    Raises:
        SandboxError: unknown format, no such image, a tool missing (``mksquashfs``,
            ``tar``; ``apptainer`` for ``sif``: the message gives the commands to run where
            it is installed), or a step failed.
    """
    if fmt not in FORMATS:
        raise SandboxError(f"unknown image file format {fmt!r}; one of: {', '.join(FORMATS)}")
    image_id = _run([engine, "image", "inspect", "--format", "{{.Id}}", tag], f"no image {tag}").stdout.strip()
    out = Path(output) if output else file_path(tag, fmt)
    side = out.with_name(out.name + ".json")
    if not force and out.is_file() and side.is_file():
        made = json.loads(side.read_text())
        if made.get("image_id") == image_id and made.get("bytes") == out.stat().st_size:
            log(f"{out}: made from {tag} ({image_id[:12]}), reused")
            return made
    tools = _sif_tools(tag, engine, out) if fmt == "sif" else _squashfs_tools()
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(f".{out.name}.partial")
    log(f"{out}: making from {tag} ({fmt})")
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=".verikit-convert-") as tmp:
        if fmt == "squashfs":
            _squashfs(tag, engine, Path(tmp), partial)
        else:
            _sif(tag, engine, Path(tmp), partial, tools)
    os.replace(partial, out)
    made = {"image": tag, "image_id": image_id, "path": str(out), "format": fmt, "sha256": sha256_file(out),
            "bytes": out.stat().st_size, "built_at": utc_now()}
    side.write_text(json.dumps(made, indent=2) + "\n")
    log(f"{out}: {made['bytes'] / 2**20:.0f} MiB, sha256 {made['sha256'][:12]}")
    return made


def _squashfs_tools() -> None:
    """Raises SandboxError when mksquashfs or tar is missing."""
    for tool, package in (("mksquashfs", "squashfs-tools"), ("tar", "tar")):
        if shutil.which(tool) is None:
            raise SandboxError(f"{tool} is not installed (Debian: apt-get install {package})")


def _squashfs(tag: str, engine: str, tmp: Path, out: Path) -> None:
    """The flattened root filesystem of ``tag`` packed by mksquashfs into ``out``."""
    root = tmp / "root"
    root.mkdir()
    cid = _run([engine, "create", tag, "true"], f"cannot create a container of {tag}").stdout.strip().splitlines()[-1]
    try:
        export = subprocess.Popen([engine, "export", cid], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        unpack = subprocess.run(["tar", "-x", "-f", "-", "-C", str(root)], stdin=export.stdout, capture_output=True)
        export.stdout.close()
        err = export.stderr.read().decode(errors="replace")
        if export.wait() != 0 or unpack.returncode != 0:
            raise SandboxError(f"{engine} export {tag} | tar -x failed: {err[-800:]}"
                               f"{unpack.stderr.decode(errors='replace')[-800:]}")
    finally:
        subprocess.run([engine, "rm", "-f", cid], capture_output=True)
    (root / "scratch").mkdir(mode=0o755, exist_ok=True)  # the job's bind mount point (the image is read-only)
    _run(["mksquashfs", str(root), str(out), *SQUASHFS_OPTIONS], f"mksquashfs of {tag}")
    if os.geteuid() != 0:  # unpacked read-only directories: let the temporary tree be removed
        subprocess.run(["chmod", "-R", "u+rwX", str(root)], capture_output=True)


def _save_argv(engine: str, tag: str, archive: str | Path) -> list[str]:
    """``<engine> save`` of ``tag`` as a Docker archive (Podman needs the format said)."""
    save = [engine, "save", "-o", str(archive), tag]
    if Path(engine).name == "podman":
        save[2:2] = ["--format", "docker-archive"]
    return save


def _sif_tools(tag: str, engine: str, out: Path) -> str:
    """The apptainer (or singularity) executable.

    Raises:
        SandboxError: neither is installed; the message gives the commands to run where
            one is.
    """
    from ..apptainer import ApptainerSandbox, build_argv

    try:
        return ApptainerSandbox.find_runtime()
    except SandboxError:
        raise SandboxError(f"apptainer is not installed here (nor singularity). Where it is: "
                           f"'{' '.join(_save_argv(engine, tag, 'IMAGE.tar'))}', copy IMAGE.tar there, then "
                           f"'{' '.join(build_argv('apptainer', 'IMAGE.tar', out.name))}' and put the .sif in "
                           f"{out.parent} (or $VERIKIT_IMAGES)") from None


def _sif(tag: str, engine: str, tmp: Path, out: Path, runtime: str) -> None:
    """``tag`` saved as a Docker archive, then ``apptainer build`` of a SIF into ``out``."""
    from ..apptainer import build_argv

    archive = tmp / "image.tar"
    _run(_save_argv(engine, tag, archive), f"{engine} save of {tag}")
    _run(build_argv(runtime, archive, out), f"apptainer build of {tag}")
