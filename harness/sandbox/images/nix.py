"""The Nix flavor of the toolchain images: ``flake.nix`` builds
``verikit/<toolchain>:nix-<fp12>`` with the exact published versions (docs/nix.md); its
fingerprint (the same value as nix/default.nix computes) and :func:`build_nix`."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

from ... import resources, toolchains
from ...datasets import sha256_file
from ..base import SandboxError
from .engine import image_labels


# ---------------------------------------------------------------------------------------
# Nix flavor: flake.nix builds verikit/<toolchain>:nix-<fp12> with the exact published
# versions (docs/nix.md). Built where nixpkgs can be downloaded; here only evaluated.
# ---------------------------------------------------------------------------------------

NIX_FEATURES = ["--extra-experimental-features", "nix-command flakes"]


def nix_expression_files(root: Path | None = None) -> dict[str, Path]:
    """The files a Nix image's fingerprint covers (as nix/default.nix lists them):
    ``flake.nix``, ``flake.lock`` once it exists, and every regular file of ``nix/``, under
    ``root`` (default: the kit's, :func:`harness.resources.kit_root`)."""
    root = root or resources.kit_root()
    files = {"flake.nix": root / "flake.nix"}
    if (root / "flake.lock").exists():
        files["flake.lock"] = root / "flake.lock"
    for f in sorted((root / "nix").iterdir()):
        if f.is_file() and not f.is_symlink():
            files[f"nix/{f.name}"] = f
    return files


def nix_fingerprint(name: str, root: Path | None = None) -> str:
    """sha256 (hex) of the canonical JSON of toolchain ``name``'s pins (probe, pattern,
    published, nix of every tool) and of the Nix expressions; the same value as
    ``fingerprintOf`` in nix/default.nix, which labels the image (tests/test_flake.py)."""
    spec = toolchains.toolchain_spec(name)
    tools = {t: {k: s.get(k) for k in ("probe", "pattern", "published", "nix")} for t, s in spec["tools"].items()}
    expressions = {rel: sha256_file(p) for rel, p in nix_expression_files(root).items()}
    payload = {"toolchain": name, "flavor": "nix", "tools": tools, "expressions": expressions}
    return hashlib.sha256(toolchains.canonical_json(payload).encode()).hexdigest()


def _user_cache() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("verikit"))


def nix_image_tag(name: str) -> str:
    """``verikit/<name>:nix-<fp12>`` for the current pins and Nix expressions."""
    return f"verikit/{name}:nix-{nix_fingerprint(name)[:12]}"


def build_nix(name: str, *, engine: str = "podman", flake: str | None = None, nix: str = "nix", force: bool = False,
              out_link: Path | None = None, log=print) -> str:
    """Build toolchain ``name``'s Nix image (``nix build <flake>#image-<name>``) and load it
    into the engine (``<engine> load``).

    The flake asserts the pinned versions at evaluation and the image build probes the
    tools and fails unless every published pin is met (nix/probe.py), so a loaded image
    has ``pin_match`` true. Nix must be able to download nixpkgs (not possible on the
    project's machines).

    Returns:
        The image tag ``verikit/<name>:nix-<fp12>``.

    Raises:
        SandboxError: unknown toolchain, no ``nix``, the build failed (a source hash still
            to be recorded shows as a hash mismatch: the message says what to do), the load
            failed, or the loaded image's fingerprint label is not the current one.
    """
    import os
    import shutil

    try:
        toolchains.toolchain_spec(name)
    except toolchains.ToolchainError as exc:
        raise SandboxError(str(exc)) from exc
    fp = nix_fingerprint(name)
    tag = f"verikit/{name}:nix-{fp[:12]}"
    labels = image_labels(engine, tag)
    if not force and labels is not None and labels.get("verikit.fingerprint") == fp:
        log(f"{tag}: exists (fingerprint matches the pins), reused")
        return tag
    if shutil.which(nix) is None:
        raise SandboxError(f"'{nix}' not found: building the Nix images needs Nix >= 2.8 with flakes "
                           f"(https://nixos.org/download) and network access to GitHub and cache.nixos.org")
    # GC roots of the builds: in the checkout (.verikit/, ignored by git), else the user's cache
    out_dir = Path(os.environ.get("VERIKIT_NIX_OUT_DIR") or (resources.checkout() / ".verikit" / "nix" if
                                                              resources.checkout() else _user_cache() / "nix"))
    link = Path(out_link) if out_link else out_dir / f"image-{name}"
    link.parent.mkdir(parents=True, exist_ok=True)
    attr = f"{flake or resources.kit_root()}#image-{name}"
    log(f"{tag}: nix build {attr}")
    proc = subprocess.run([nix, *NIX_FEATURES, "build", attr, "--out-link", str(link)], capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr)[-3000:]
        hint = ""
        if "hash mismatch" in tail:
            hint = ("\nA fixed-output hash is not recorded yet (null in images/toolchains.json) or wrong: review the "
                    "'got:' hash above and record it in images/toolchains.json, then build again.")
        raise SandboxError(f"nix build {attr} failed (exit {proc.returncode}):\n{tail}{hint}")
    result = link.resolve()
    if result.is_file() and os.access(result, os.X_OK):  # streamLayeredImage: a script that writes the tarball
        stream = subprocess.Popen([str(result)], stdout=subprocess.PIPE)
        load = subprocess.run([engine, "load"], stdin=stream.stdout, capture_output=True, text=True)
        stream.stdout.close()
        if stream.wait() != 0 and load.returncode == 0:
            load = subprocess.CompletedProcess(load.args, 1, load.stdout, f"{result} exited {stream.returncode}")
    else:  # buildLayeredImage: a docker-archive .tar.gz
        load = subprocess.run([engine, "load", "-i", str(result)], capture_output=True, text=True)
    if load.returncode != 0:
        raise SandboxError(f"{engine} load of {result} failed: {(load.stdout + load.stderr)[-2000:]}")
    labels = image_labels(engine, tag)
    if labels is None:
        raise SandboxError(f"{engine} load of {result} did not produce {tag}: {(load.stdout + load.stderr)[-1000:]}")
    if labels.get("verikit.fingerprint") != fp or labels.get("verikit.flavor") != "nix":
        raise SandboxError(f"{tag}: label verikit.fingerprint={labels.get('verikit.fingerprint')} but the current pins "
                           f"and Nix expressions give {fp} (did Nix evaluate another tree, e.g. without uncommitted "
                           f"files? flakes in a git checkout see tracked files only)")
    log(f"{tag}: built and loaded ({result.name})")
    return tag
