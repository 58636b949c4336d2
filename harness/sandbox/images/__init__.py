"""Toolchain images (Debian flavor): build, list, verify, save.

An image ``verikit/<toolchain>:debian-<fp>`` is built from
``images/debian/<toolchain>.Containerfile`` on a base image ``verikit-base:<suite>``
(``scripts/make-base-image.sh``: debootstrap minbase + import), with the Debian packages
pinned exactly in ``images/toolchains.json`` (the only place versions are written).
``<fp>`` is the first 12 hex digits of the image fingerprint: sha256 of the Containerfile,
the suite and the pinned package list. An image whose fingerprint tag exists is reused.

Built with the engine's CLI (``podman build`` or ``docker build``) in two steps: the
packages, then the manifest. The toolchain is probed *inside*
the freshly built image with the same probe code as every run
(:func:`harness.toolchains.probe`) plus ``dpkg-query`` for the package versions, and the
result is baked in as ``/etc/verikit/toolchain.json`` with the label
``verikit.fingerprint``. The harness reads that manifest, probes again at run time,
and records both with the image ID in every result.

Submodules (every public name is also importable from ``harness.sandbox.images``):

- :mod:`.engine`: the engine's API and CLI helpers shared by every image kind;
- :mod:`.debian`: the Debian flavor (spec, fingerprint, build, resolve, list, verify);
- :mod:`.derived`: images derived from a toolchain image with benchmark data baked in;
- :mod:`.nix`: the Nix flavor (fingerprint, ``nix build`` and load);
- :mod:`.runner`: runner images (a toolchain image plus the kit);
- :mod:`.transfer`: saving images and their licenses, pulling by digest, pushing;
- :mod:`.files`: image files (SquashFS, SIF) for the HPC runtimes' sandboxes.
"""

from __future__ import annotations

# The package's public names: what the rest of the kit and plugins import from the package.
from ..base import SandboxError  # noqa: F401
from .debian import (MANIFEST_PATH, build, ensure_base, fingerprint, image_spec, image_tag,  # noqa: F401
                     list_images, probe_manifest, resolve, verify)
from .derived import build_derived, derived_tag, resolve_any  # noqa: F401
from .engine import resolve_derived  # noqa: F401
from .engine import engine_version  # noqa: F401
from .files import FORMATS, build_file, file_path, image_file, images_dir  # noqa: F401
from .nix import NIX_FEATURES, build_nix, nix_expression_files, nix_fingerprint, nix_image_tag  # noqa: F401
from .runner import (RUNNER_CONTAINERFILE, RUNNER_LABEL, SUITE_PYTHON, build_runner,  # noqa: F401
                     download_wheelhouse, kit_distributions, plugin_sources, plugin_wheels, requirements,
                     resolve_runner, runner_tag, runner_toolchain)
from .transfer import image_licenses, published_ref, pull, push, save, save_image  # noqa: F401
