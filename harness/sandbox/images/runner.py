"""Runner images: a toolchain (or derived) image plus the kit (its tracked files and its
dependencies' wheels), with the toolchain probed inside by the kit itself and recorded as
a label (:func:`build_runner`), and finding them (:func:`resolve_runner`,
:func:`runner_toolchain`)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
import urllib.parse
from pathlib import Path

from ... import plugin, toolchains
from ..base import SandboxError
from ..container import connect
from .derived import resolve_any
from .engine import ROOT, _cli_build, _find


# --- runner images: a toolchain image plus the kit --------------------------------------------

RUNNER_CONTAINERFILE = ROOT / "images" / "runner.Containerfile"
RUNNER_LABEL = "verikit.runner.toolchain"  # the toolchain probed inside the runner, as JSON


def source_tree(dest: Path) -> dict:
    """Copy the kit's tracked files (``git ls-files``: what a clone has, with any
    uncommitted edits) into ``dest`` and return ``{"sha256", "git_commit", "git_dirty",
    "files"}``; sha256 is over the sorted (path, content sha256) list, so the same source
    gives the same hash wherever it is checked out.

    Raises:
        SandboxError: not a git checkout.
    """
    import shutil

    proc = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True)
    if proc.returncode != 0:
        raise SandboxError(f"{ROOT}: the runner image is built from a git checkout of the kit "
                           f"({proc.stderr.decode(errors='replace').strip()})")
    h = hashlib.sha256()
    files = sorted(f for f in proc.stdout.decode().split("\0") if f and (ROOT / f).is_file())
    for rel in files:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / rel, target)
        h.update(f"{rel}\0{toolchains.sha256_file(target)}\n".encode())
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
    status = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                            capture_output=True, text=True)
    return {"sha256": h.hexdigest(), "git_commit": head.stdout.strip() or None,
            "git_dirty": bool(status.stdout.strip()) if status.returncode == 0 else None, "files": len(files)}


def requirements() -> list[str]:
    """The kit's runtime dependencies (``[project.dependencies]`` of pyproject.toml)."""
    import tomllib

    return list(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"])


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
            h.update(f"{f.relative_to(src).as_posix()}\0{toolchains.sha256_file(f)}\n".encode())
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


def runner_tag(name: str, base_id: str, source_sha256: str) -> str:
    """``verikit/<name>-runner:<12 hex>`` of a toolchain image ID and a kit source tree."""
    digest = hashlib.sha256(f"{base_id}\n{source_sha256}".encode()).hexdigest()
    return f"verikit/{name}-runner:{digest[:12]}"


def build_runner(name: str, *, base_url: str | None = None, engine: str = "podman", force: bool = False,
                 log=print) -> str:
    """Build (or reuse) the runner image of toolchain image ``name`` (a toolchain or a
    derived image already built): the image plus the kit (``images/runner.Containerfile``):
    this checkout's tracked files and its dependencies' wheels, and the wheels of the
    plugins installed with it (:func:`plugin_wheels`; their sources are in the tag). Not a wheel of the kit:
    the schemas, pins and published figures the kit reads live beside the package, not
    in it. The toolchain is then probed *inside* the image by the kit itself (``verikit
    batch probe``: the host sandbox in the container, as a worker probes) and the probe
    is recorded as the label ``verikit.runner.toolchain`` (JSON), beside
    ``verikit.kit.source_sha256``, ``verikit.kit.git_commit`` and ``verikit.kit.git_dirty``:
    a batch submission plans its job keys from that label and every worker checks its own
    probe against it.

    Returns:
        The image tag.

    Raises:
        SandboxError: the toolchain image is missing, or the build or probe failed.
    """
    client = connect(base_url)
    base_ref = resolve_any(name, base_url)
    base = _find(client, base_ref)
    toolchain = (base.labels or {}).get("verikit.toolchain") or name
    with tempfile.TemporaryDirectory() as ctx:
        source = source_tree(Path(ctx) / "src")
        plugins = plugin_sources()
        tag = runner_tag(name, base.id, source["sha256"] + (f"\n{plugins['sha256']}" if plugins["names"] else ""))
        if not force and _find(client, tag) is not None:
            log(f"{tag}: exists (same toolchain image and kit source), reused")
            return tag
        python = _suite_python(engine, base_ref)
        log(f"{tag}: building on {base_ref} with the kit's source {source['sha256'][:12]} "
            f"({source['files']} files, commit {str(source['git_commit'])[:12]}"
            f"{', uncommitted edits' if source['git_dirty'] else ''}) for Python {python}")
        download_wheelhouse(Path(ctx) / "wheels", python)
        wheels = plugin_wheels(Path(ctx) / "wheels" / "plugins")
        if wheels:
            log(f"{tag}: with the plugins {', '.join(plugins['names'])}")
        stage = f"{tag}-stage"
        _cli_build(engine, stage, RUNNER_CONTAINERFILE, Path(ctx), {"BASE": base_ref})
    probe = subprocess.run([engine, "run", "--rm", "--network", "none", stage, "verikit", "batch", "probe", toolchain],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        raise SandboxError(f"probing {toolchain} inside {stage} failed: {probe.stderr[-2000:]}")
    probed = json.loads(probe.stdout)
    with tempfile.TemporaryDirectory() as ctx:
        (Path(ctx) / "Containerfile").write_text(f"FROM {stage}\n")
        argv = [engine, "build", "-t", tag, "-f", str(Path(ctx) / "Containerfile"),
                "--label", f"{RUNNER_LABEL}={json.dumps(probed, sort_keys=True, separators=(',', ':'))}",
                "--label", f"verikit.kit.source_sha256={source['sha256']}",
                "--label", f"verikit.kit.git_commit={source['git_commit']}",
                "--label", f"verikit.kit.git_dirty={str(source['git_dirty']).lower()}",
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
    img = _find(connect(base_url), image)
    if img is None:
        raise SandboxError(f"runner image {image} is not in the local engine (build it with "
                           f"'verikit images build NAME --runner', or pull it)")
    raw = (img.labels or {}).get(RUNNER_LABEL)
    if not raw:
        raise SandboxError(f"{image} is not a runner image (no {RUNNER_LABEL} label)")
    return json.loads(raw)
