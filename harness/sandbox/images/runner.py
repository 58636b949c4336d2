"""Runner images: a toolchain (or derived) image plus the kit (its wheel and its
dependencies' wheels), with the toolchain probed inside by the kit itself and recorded as
a label (:func:`build_runner`), and finding them (:func:`resolve_runner`,
:func:`runner_toolchain`)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.parse
from pathlib import Path

from ... import plugin, resources
from ...datasets import sha256_file
from ..base import SandboxError
from ..engine import connect
from .derived import resolve_any
from .engine import cli_build, find_image


# --- runner images: a toolchain image plus the kit --------------------------------------------

RUNNER_CONTAINERFILE = resources.kit_file("images/runner.Containerfile")
RUNNER_LABEL = "verikit.runner.toolchain"  # the toolchain probed inside the runner, as JSON
#: The time stamp of every file in the kit's wheel (``SOURCE_DATE_EPOCH``: 1980-01-01, the
#: earliest a zip file can hold), so that the same sources give the same wheel, byte for byte.
WHEEL_EPOCH = "315532800"


def _checkout(what: str) -> Path:
    """The kit's checkout (:func:`harness.resources.checkout`); ``what`` needs it.

    Raises:
        SandboxError: the kit is installed from a wheel (the message says so)."""
    root = resources.checkout()
    if root is None:
        raise SandboxError(f"{what} needs a checkout of verikit (the kit's wheel is built there with python -m build); "
                           f"this kit is installed from a wheel ({resources.PACKAGE})")
    return root


def kit_distributions(dest: Path) -> dict:
    """Build the kit's sdist and wheel from its checkout into ``dest`` with the PyPA
    ``build`` frontend (``python -m build``: the sdist, then the wheel from the unpacked
    sdist, so nothing outside what the sdist carries, such as a stale ``build/``, gets
    in), every file dated :data:`WHEEL_EPOCH` so the same sources give the same wheel.
    One build at a time per checkout (a lock under ``.verikit/``: setuptools writes
    ``verikit.egg-info/`` in the checkout).

    Returns:
        ``{"wheel": Path, "sdist": Path, "sha256": the wheel's sha256 (hex), "git_commit":
        hex or None, "git_dirty": bool or None}`` (the checkout's state,
        :func:`harness.resources.git_state`).

    Raises:
        SandboxError: the kit is installed from a wheel (there are no sources to build
            from), the ``build`` package is missing, or the build failed (its output's tail).
    """
    root = _checkout("the kit's wheel")
    try:
        import build  # noqa: F401  (the frontend runs as python -m build)
    except ImportError:
        raise SandboxError("building the kit's wheel needs the PyPA 'build' package: pip install build "
                           "(it is in the kit's dev extra)") from None
    import fcntl

    dest.mkdir(parents=True, exist_ok=True)
    (root / ".verikit").mkdir(exist_ok=True)
    with open(root / ".verikit" / "build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        proc = subprocess.run([sys.executable, "-m", "build", "--outdir", str(dest), str(root)], capture_output=True,
                              text=True, env=dict(os.environ, SOURCE_DATE_EPOCH=WHEEL_EPOCH))
    wheels, sdists = sorted(dest.glob("verikit-*.whl")), sorted(dest.glob("verikit-*.tar.gz"))
    if proc.returncode != 0 or len(wheels) != 1 or len(sdists) != 1:
        raise SandboxError(f"building the kit's wheel from {root} failed (exit {proc.returncode}): "
                           f"{(proc.stdout + proc.stderr)[-2000:]}")
    commit, dirty = resources.git_state(root)
    return {"wheel": wheels[0], "sdist": sdists[0], "sha256": sha256_file(wheels[0]),
            "git_commit": commit, "git_dirty": dirty}


def requirements() -> list[str]:
    """The kit's runtime dependencies (``[project.dependencies]`` of the checkout's
    pyproject.toml).

    Raises:
        SandboxError: the kit is installed from a wheel.
    """
    import tomllib

    root = _checkout("the kit's dependency list (pyproject.toml)")
    return list(tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"])


#: The ``python3`` of each Debian suite the images use (what the runner Containerfile installs).
SUITE_PYTHON = {"bookworm": "3.11", "trixie": "3.13"}


def _suite_python(engine: str, image: str) -> str:
    """The Python version ``apt-get install python3`` gives in ``image`` (by its suite)."""
    proc = subprocess.run([engine, "run", "--rm", "--network", "none", image, "sh", "-c",
                           ". /etc/os-release; echo $VERSION_CODENAME"], capture_output=True, text=True)
    suite = proc.stdout.strip()
    if suite not in SUITE_PYTHON:
        raise SandboxError(f"{image}: Debian suite {suite!r} unknown (known: {', '.join(SUITE_PYTHON)})")
    return SUITE_PYTHON[suite]


def download_wheelhouse(dest: Path, python: str) -> None:
    """Binary wheels of the kit's dependencies (:func:`requirements`) for CPython
    ``python`` on glibc x86-64 Linux (``pip download --only-binary=:all:``) and their
    ``requirements.txt``, into ``dest``: the image build installs from it with
    ``--no-index``.

    Raises:
        SandboxError: a dependency has no such wheel, or PyPI cannot be reached.
    """
    import sys

    abi = "cp" + python.replace(".", "")
    argv = [sys.executable, "-m", "pip", "download", "-q", "--only-binary=:all:", "--python-version", python,
            "--implementation", "cp", "--abi", abi, "--abi", "abi3", "--abi", "none", "-d", str(dest)]
    for tag in ("manylinux_2_36_x86_64", "manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64",
                "linux_x86_64", "any"):
        argv += ["--platform", tag]
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "requirements.txt").write_text("".join(r.split("#")[0].strip() + "\n" for r in requirements()))
    proc = subprocess.run(argv + ["-r", str(dest / "requirements.txt")], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SandboxError(f"downloading the kit's dependencies for Python {python} failed: {proc.stderr[-2000:]}")


def _source_dir(dist) -> Path | None:
    """The directory a distribution was installed from (``pip install DIR`` or ``-e DIR``:
    its ``direct_url.json``), or None (installed from an index or a file)."""
    text = dist.read_text("direct_url.json")
    info = json.loads(text) if text else {}
    url = info.get("url", "")
    return Path(urllib.parse.unquote(url[len("file://"):])) if url.startswith("file://") and "dir_info" in info \
        else None


def _source_files(src: Path) -> list[Path]:
    skip = ("__pycache__", "build", "dist")
    return sorted(p for p in src.rglob("*") if p.is_file() and not any(
        part in skip or part.endswith(".egg-info") for part in p.relative_to(src).parts))


def plugin_sources() -> dict:
    """The plugins installed with the kit (:func:`harness.plugin.plugin_distributions`):
    ``{"names": ["name==version"], "sha256": hex}``; the hash covers each plugin's name,
    version and (installed from a directory) its source files, so the same plugins give
    the same runner image whatever their wheels' timestamps."""
    h, names = hashlib.sha256(), []
    for dist in plugin.plugin_distributions():
        names.append(f"{dist.name}=={dist.version}")
        h.update(f"{dist.name}\0{dist.version}\n".encode())
        src = _source_dir(dist)
        for f in _source_files(src) if src else []:
            h.update(f"{f.relative_to(src).as_posix()}\0{sha256_file(f)}\n".encode())
    return {"names": names, "sha256": h.hexdigest()}


def plugin_wheels(dest: Path) -> list[str]:
    """Wheels of the installed plugins in ``dest``: built from the directory a plugin was
    installed from (``pip wheel --no-deps``; its build backend comes from the index), or
    downloaded at the installed version (``pip download --no-deps``). Returns the wheel
    file names (none without plugins).

    Raises:
        SandboxError: a wheel cannot be built or downloaded (pip's output tail).
    """
    dest.mkdir(parents=True, exist_ok=True)
    for dist in plugin.plugin_distributions():
        src = _source_dir(dist)
        what = [str(src)] if src else [f"{dist.name}=={dist.version}"]
        verb = ["wheel", "-w"] if src else ["download", "--only-binary=:all:", "-d"]
        proc = subprocess.run([sys.executable, "-m", "pip", verb[0], "-q", "--no-deps", *verb[1:], str(dest), *what],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise SandboxError(f"the wheel of plugin {dist.name} {dist.version} could not be made "
                               f"({' '.join(what)}): {(proc.stdout + proc.stderr)[-1500:]}")
    return sorted(p.name for p in dest.glob("*.whl"))


def runner_tag(name: str, base_id: str, kit_sha256: str) -> str:
    """``verikit/<name>-runner:<12 hex>`` of a toolchain image ID and the kit's wheel
    (its sha256, plus the plugins' when there are any)."""
    digest = hashlib.sha256(f"{base_id}\n{kit_sha256}".encode()).hexdigest()
    return f"verikit/{name}-runner:{digest[:12]}"


def build_runner(name: str, *, base_url: str | None = None, engine: str = "podman", force: bool = False,
                 log=print, kit: dict | None = None) -> str:
    """Build (or reuse) the runner image of toolchain image ``name`` (a toolchain or a
    derived image already built): the image plus the kit (``images/runner.Containerfile``):
    the kit's wheel built from this checkout (:func:`kit_distributions`; it carries the
    schemas, pins and published figures), its dependencies' wheels, and the wheels of the
    plugins installed with it (:func:`plugin_wheels`; their sources are in the tag). The
    toolchain is then probed *inside* the image by the kit itself (``verikit batch probe``:
    the host sandbox in the container, as a worker probes) and the probe is recorded as
    the label ``verikit.runner.toolchain`` (JSON), beside the kit's provenance:
    ``verikit.kit.wheel`` (file name), ``verikit.kit.wheel_sha256``,
    ``verikit.kit.git_commit`` and ``verikit.kit.git_dirty`` (of the checkout it was built
    from). A batch submission plans its job keys from the toolchain label and every worker
    checks its own probe against it. ``kit``: the kit's distributions already built
    (:func:`kit_distributions`'s result: an artifact bundle ships the same wheel), else
    they are built here.

    Returns:
        The image tag.

    Raises:
        SandboxError: the toolchain image is missing, the kit is installed from a wheel
            (no checkout to build its wheel from), or the build or probe failed.
    """
    if kit is None:
        _checkout("a runner image")  # before any engine call: from a wheel, nothing starts
    client = connect(base_url)
    base_ref = resolve_any(name, base_url)
    base = find_image(client, base_ref)
    toolchain = (base.labels or {}).get("verikit.toolchain") or name
    with tempfile.TemporaryDirectory() as ctx:
        kit = kit or kit_distributions(Path(ctx) / "dist")
        (Path(ctx) / "kit").mkdir()
        shutil.copyfile(kit["wheel"], Path(ctx) / "kit" / kit["wheel"].name)  # the image gets the wheel alone
        plugins = plugin_sources()
        tag = runner_tag(name, base.id, kit["sha256"] + (f"\n{plugins['sha256']}" if plugins["names"] else ""))
        if not force and find_image(client, tag) is not None:
            log(f"{tag}: exists (same toolchain image and kit wheel), reused")
            return tag
        python = _suite_python(engine, base_ref)
        log(f"{tag}: building on {base_ref} with the kit's wheel {kit['wheel'].name} (sha256 {kit['sha256'][:12]}, "
            f"commit {str(kit['git_commit'])[:12]}{', uncommitted edits' if kit['git_dirty'] else ''}) "
            f"for Python {python}")
        download_wheelhouse(Path(ctx) / "wheels", python)
        wheels = plugin_wheels(Path(ctx) / "wheels" / "plugins")
        if wheels:
            log(f"{tag}: with the plugins {', '.join(plugins['names'])}")
        stage = f"{tag}-stage"
        cli_build(engine, stage, RUNNER_CONTAINERFILE, Path(ctx), {"BASE": base_ref})
    probe = subprocess.run([engine, "run", "--rm", "--network", "none", stage, "verikit", "batch", "probe", toolchain],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        raise SandboxError(f"probing {toolchain} inside {stage} failed: {probe.stderr[-2000:]}")
    probed = json.loads(probe.stdout)
    with tempfile.TemporaryDirectory() as ctx:
        (Path(ctx) / "Containerfile").write_text(f"FROM {stage}\n")
        argv = [engine, "build", "-t", tag, "-f", str(Path(ctx) / "Containerfile"),
                "--label", f"{RUNNER_LABEL}={json.dumps(probed, sort_keys=True, separators=(',', ':'))}",
                "--label", f"verikit.kit.wheel={kit['wheel'].name}",
                "--label", f"verikit.kit.wheel_sha256={kit['sha256']}",
                "--label", f"verikit.kit.git_commit={kit['git_commit']}",
                "--label", f"verikit.kit.git_dirty={str(kit['git_dirty']).lower()}",
                "--label", f"verikit.runner.base={base.id}", ctx]
        proc = subprocess.run(argv, capture_output=True, text=True)
        if proc.returncode != 0:
            raise SandboxError(f"{engine} build of {tag} failed: {(proc.stdout + proc.stderr)[-2000:]}")
    subprocess.run([engine, "rmi", stage], capture_output=True)
    versions = ", ".join(f"{t} {v['version']}" for t, v in sorted(probed["tools"].items()))
    log(f"{tag}: toolchain {toolchain} probed inside it: {probed['fingerprint'][:12]} ({versions})")
    return tag


def resolve_runner(toolchain: str, base_url: str | None = None) -> str:
    """The newest local runner image whose toolchain is ``toolchain``.

    Raises:
        SandboxError: none (the message says how to build one).
    """
    found = []
    for img in connect(base_url).images.list(filters={"label": RUNNER_LABEL}):
        try:
            if json.loads(img.labels[RUNNER_LABEL]).get("name") == toolchain and img.tags:
                found.append(img)
        except (ValueError, KeyError):
            continue
    if not found:
        raise SandboxError(f"no runner image of toolchain {toolchain} in the local engine: build one with "
                           f"'verikit images build {toolchain} --runner' (or give --image)")
    return sorted(found, key=lambda i: i.attrs.get("Created", ""))[-1].tags[0]


def runner_toolchain(image: str, base_url: str | None = None) -> dict:
    """The probed toolchain recorded in runner image ``image`` (its label), as JSON.

    Raises:
        SandboxError: no such image in the engine, or it is not a runner image.
    """
    img = find_image(connect(base_url), image)
    if img is None:
        raise SandboxError(f"runner image {image} is not in the local engine (build it with "
                           f"'verikit images build NAME --runner', or pull it)")
    raw = (img.labels or {}).get(RUNNER_LABEL)
    if not raw:
        raise SandboxError(f"{image} is not a runner image (no {RUNNER_LABEL} label)")
    return json.loads(raw)
