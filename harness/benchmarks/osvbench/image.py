"""The job image of OSVBench's Hyperkernel verifier.

Hyperkernel's verifier needs Python 2.7, LLVM 5.0 and Z3 4.5.0 with Hyperkernel built by
them: no Debian package has them, so the toolchain comes from OSVBench's upstream image
:data:`UPSTREAM_IMAGE` (Docker Hub). The kit runs jobs in an image derived from it
(:data:`CONTAINERFILE`: the Hyperkernel tree made readable by the unprivileged job user,
Z3's bindings on the path, the entrypoint cleared), declared as the derived image
:data:`DERIVED_IMAGE` and built by ``verikit images build hyperkernel-osvbench``.

Nothing here starts a process or opens the container engine: the kit builds the image
from :func:`derived_image_spec` (:func:`harness.runner.job_image`), and says how to get
the upstream image when it is missing (the spec's ``base_hint``, :func:`image_help`).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from ...model import canonical_json
from ...verifiers import hyperkernel

#: The image OSVBench's Dockerfile builds on (Docker Hub): Hyperkernel built with LLVM 5,
#: Z3 4.5.0's Python bindings, Python 2.
UPSTREAM_IMAGE = "lsysimpure/osvbench:001"
#: Name of the derived job image (``verikit images build hyperkernel-osvbench``); its tag
#: is ``verikit/hyperkernel-osvbench:<fp12>``.
DERIVED_IMAGE = "hyperkernel-osvbench"
#: Containerfile of the job image (``job-image.Containerfile`` beside this module; it gets
#: ``--build-arg BASE=<UPSTREAM_IMAGE>``).
CONTAINERFILE = (Path(__file__).resolve().parent / "job-image.Containerfile").read_text(encoding="utf-8")


def image_help() -> str:
    """How to get the job image (for error messages and the README): what is missing and
    the commands that get it, offline included."""
    return (f"OSVBench's Hyperkernel verifier runs in the job image {DERIVED_IMAGE} (verikit/{DERIVED_IMAGE}:<fp>), "
            f"derived from OSVBench's upstream image {UPSTREAM_IMAGE} (Python 2.7, LLVM 5.0, Z3 4.5.0; Docker Hub), "
            f"which a machine without access to Docker Hub cannot pull.\n"
            f"  1. get the upstream image: docker pull {UPSTREAM_IMAGE}  (or podman pull docker.io/{UPSTREAM_IMAGE})\n"
            f"     offline: on a machine with access, 'docker save {UPSTREAM_IMAGE} -o osvbench-001.tar', copy the "
            f"file, then 'docker load -i osvbench-001.tar' (or 'podman load -i osvbench-001.tar')\n"
            f"  2. build the job image: verikit images build {DERIVED_IMAGE}\n"
            f"  3. run: verikit run osvbench --sandbox container --predictions FILE")


def derived_image_spec(mode: str, fetched, fingerprint) -> dict:
    """The build spec of the job image (of the one mode, ``spec``; neither the dataset nor a
    toolchain's ``fingerprint`` goes into it) for :func:`harness.sandbox.images.build_derived`:
    ``{"name", "base_toolchain", "base_image", "base_hint", "fingerprint", "files",
    "containerfile", "manifest"}``. ``base_image`` is the upstream image, which must be
    in the engine already (it is pulled or loaded, never built: ``base_hint`` says how);
    the fingerprint covers it, the Containerfile and the job script."""
    fp = hashlib.sha256(canonical_json({
        "base_image": UPSTREAM_IMAGE, "containerfile": CONTAINERFILE,
        "job_script": hashlib.sha256(hyperkernel.JOB_SCRIPT.encode()).hexdigest(),
    }).encode()).hexdigest()
    manifest = {"name": DERIVED_IMAGE, "base_image": UPSTREAM_IMAGE, "toolchain": hyperkernel.TOOLCHAIN,
                "hyperkernel_root": hyperkernel.HK_ROOT, "z3_python": hyperkernel.Z3_PYTHON,
                "source": "lishangyu-hkust/OSVBench Dockerfile (FROM lsysimpure/osvbench:001)"}
    return {"name": DERIVED_IMAGE, "base_toolchain": hyperkernel.TOOLCHAIN, "base_image": UPSTREAM_IMAGE,
            "base_hint": image_help(), "fingerprint": fp, "files": {}, "containerfile": CONTAINERFILE,
            "manifest": manifest}
