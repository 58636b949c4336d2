"""Registry of pinned upstream dataset files, and a hash-verified fetcher.

Each upstream file a benchmark reads is listed with its source (GitHub repo at a commit,
or Hugging Face Hub repo at a revision), repo-relative path, sha256 and size. A file is
looked for in the cache (``cache_dir()``), then in each read-only mirror
(``VERIKIT_DATA_MIRRORS``), then downloaded into the cache unless offline. Whatever is
found is verified: a wrong sha256 raises ``HashMismatch``, it is never skipped over.
Cache and mirrors share one layout, relative to their root::

    github/<owner>/<repo>/<commit>/<path>
    hf/<datasets|models>/<owner>/<name>/<revision>/<path>

Source: the "Data" section of DESIGN.md.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import platformdirs

ENV_DATA, ENV_MIRRORS = "VERIKIT_DATA", "VERIKIT_DATA_MIRRORS"
ENV_OFFLINE, ENV_HF_OFFLINE = "VERIKIT_OFFLINE", "HF_HUB_OFFLINE"
DOWNLOAD_TIMEOUT_S = 15
_CHUNK = 1 << 20  # 1 MiB
_MAX_LISTED = 10
_HEX = frozenset("0123456789abcdef")


class DatasetError(Exception):
    """Base class of this module's errors; raised itself for an unknown dataset name."""


class DatasetUnavailable(DatasetError):
    """Files are in neither the cache nor a mirror, and could not be downloaded.

    ``dataset``: the dataset name; ``missing``: the repo-relative paths missing. The
    message names each missing file (at most 10, then a count) with its upstream URL and
    the exact path ``<cache>/<layout path>`` where a user may place it, says that
    ``VERIKIT_DATA_MIRRORS`` may point at directories of the same layout, and ends with
    the cause (offline, or the network error's text).
    """

    def __init__(self, message: str, dataset: str, missing: list[str]):
        super().__init__(message)
        self.dataset, self.missing = dataset, missing


class HashMismatch(DatasetError):
    """A file's sha256 differs from the pinned one. ``path`` (local path or URL),
    ``expected`` and ``actual`` (hex digests) are attributes and are in the message."""

    def __init__(self, path: str | Path, expected: str, actual: str, hint: str = ""):
        self.path, self.expected, self.actual = str(path), expected, actual
        super().__init__(f"sha256 mismatch for {path}: expected {expected}, got {actual}"
                         + (f" ({hint})" if hint else ""))


class UnpinnedFileWarning(UserWarning):
    """A registry file has no pinned sha256, so its content could not be verified."""


@dataclass(frozen=True)
class Source:
    """Where a dataset lives upstream. ``kind``: "github" | "hf"; ``repo``: "owner/name";
    ``revision``: full commit sha (GitHub) or Hub revision (a branch such as "main" is not
    a pin); ``repo_type``: "dataset" | "model" (hf only). Raises ValueError otherwise."""

    kind: str
    repo: str
    revision: str
    repo_type: str = "dataset"

    def __post_init__(self) -> None:
        parts = self.repo.split("/")
        if (self.kind not in ("github", "hf") or self.repo_type not in ("dataset", "model")
                or len(parts) != 2 or not all(parts) or ".." in parts
                or not self.revision or "/" in self.revision or self.revision == ".."):
            raise ValueError(f"bad Source: kind must be github|hf, repo owner/name, "
                             f"revision one name, repo_type dataset|model: {self!r}")

    def layout_prefix(self) -> str:
        """Relative POSIX directory of this source in a cache or mirror, e.g.
        ``github/<owner>/<repo>/<commit>`` or ``hf/datasets/<owner>/<name>/<revision>``."""
        if self.kind == "github":
            return f"github/{self.repo}/{self.revision}"
        return f"hf/{self.repo_type}s/{self.repo}/{self.revision}"

    def url(self, path: str) -> str:
        """Upstream URL of repo-relative ``path`` (percent-quoted, ``/`` kept): GitHub
        ``https://raw.githubusercontent.com/<repo>/<commit>/<path>``, Hub
        ``https://huggingface.co/datasets/<repo>/resolve/<revision>/<path>`` (models
        have no ``datasets/`` segment)."""
        quoted = urllib.parse.quote(path, safe="/")
        if self.kind == "github":
            return f"https://raw.githubusercontent.com/{self.repo}/{self.revision}/{quoted}"
        kind = "datasets/" if self.repo_type == "dataset" else ""
        return f"https://huggingface.co/{kind}{self.repo}/resolve/{self.revision}/{quoted}"


@dataclass(frozen=True)
class FileRef:
    """One upstream file. ``path``: POSIX path relative to the repo root (no ``.``/``..``
    parts); ``sha256``: 64 lowercase hex digits, or None while unpinned; ``size``: bytes or
    None. Raises ValueError otherwise."""

    path: str
    sha256: str | None = None
    size: int | None = None

    def __post_init__(self) -> None:
        parts = self.path.split("/")
        if (not self.path or PurePosixPath(self.path).is_absolute() or "\\" in self.path
                or any(part in ("", ".", "..") for part in parts)):
            raise ValueError(f"FileRef.path must be a plain relative path: {self.path!r}")
        if self.sha256 is not None and (len(self.sha256) != 64
                                        or not set(self.sha256) <= _HEX):
            raise ValueError(f"FileRef.sha256 must be 64 lowercase hex: {self.sha256!r}")
        if self.size is not None and self.size < 0:
            raise ValueError(f"FileRef.size must be >= 0 bytes: {self.size}")


@dataclass(frozen=True)
class Dataset:
    """A registry entry: ``name``, ``description``, ``source``, ``files`` (tuple of
    FileRef, unique paths), ``citation`` (paper / upstream location), ``license`` (SPDX
    id, or None when upstream states none). Raises ValueError on a duplicate path."""

    name: str
    description: str
    source: Source
    files: tuple[FileRef, ...]
    citation: str
    license: str | None = None

    def __post_init__(self) -> None:
        if len({f.path for f in self.files}) != len(self.files):
            raise ValueError(f"dataset {self.name!r} lists a file twice")

    def layout_path(self, path: str) -> str:
        """``<layout_prefix>/<path>``: where ``path`` lives under a cache or mirror root."""
        return f"{self.source.layout_prefix()}/{path}"


@dataclass
class FetchedDataset:
    """What ``fetch`` returns. ``root``: the directory holding every file at its
    repo-relative path (``<cache or mirror>/<layout_prefix>``), None when files are split
    between places; ``files``: repo-relative path -> local Path; ``sha256``: path ->
    verified (unpinned: computed) hex digest; ``locations``: path -> "cache" |
    "mirror:<dir>" | "download"."""

    dataset: Dataset
    root: Path | None
    files: dict[str, Path]
    sha256: dict[str, str] = field(default_factory=dict)
    locations: dict[str, str] = field(default_factory=dict)

    def provenance(self) -> dict:
        """JSON-able record for run manifests: ``name``; ``source`` {kind, repo, revision,
        repo_type}; ``files_sha256``: sha256 hex of the sorted ``"<path>\\t<sha256>\\n"``
        lines; ``n_files``; ``unpinned``: sorted paths with no pinned sha256;
        ``locations``: sorted distinct places the files came from."""
        src = self.dataset.source
        lines = "".join(sorted(f"{p}\t{h}\n" for p, h in self.sha256.items()))
        pinned = {f.path for f in self.dataset.files if f.sha256 is not None}
        return {
            "name": self.dataset.name,
            "source": {"kind": src.kind, "repo": src.repo, "revision": src.revision,
                       "repo_type": src.repo_type},
            "files_sha256": hashlib.sha256(lines.encode()).hexdigest(),
            "n_files": len(self.files),
            "unpinned": sorted(p for p in self.files if p not in pinned),
            "locations": sorted(set(self.locations.values())),
        }


def sha256_file(path: str | Path) -> str:
    """Hex sha256 of a file's bytes, read in 1 MiB chunks. Raises OSError if unreadable."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


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
    where = "GitHub repo" if src.kind == "github" else f"Hugging Face {src.repo_type} repo"
    lines = [f"dataset {ds.name!r}: {len(refs)} of {len(ds.files)} file(s) are in neither "
             f"the cache nor a mirror, and could not be downloaded.",
             f"Source: {where} {src.repo} at revision {src.revision}."]
    for ref in refs[:_MAX_LISTED]:
        lines += [f"  - {ref.path}", f"      upstream: {src.url(ref.path)}",
                  f"      place it at: {cache / ds.layout_path(ref.path)}"]
    if len(refs) > _MAX_LISTED:
        lines.append(f"  ... and {len(refs) - _MAX_LISTED} more file(s), to place under "
                     f"{cache / src.layout_prefix()}")
    searched = os.pathsep.join(map(str, mirrors)) or "(none set)"
    lines += [f"Fix: fetch the files where there is network access and put them at the "
              f"paths above (the cache root comes from --data-dir or {ENV_DATA}), or set "
              f"{ENV_MIRRORS} to a colon-separated list of directories holding the same "
              f"layout (<mirror>/{src.layout_prefix()}/...). Mirrors searched: {searched}.",
              "Cause: " + "; ".join(list(dict.fromkeys(reasons))[:3])]
    return DatasetUnavailable("\n".join(lines), ds.name, [r.path for r in refs])


def _verified(where: str | Path, actual: str, ref: FileRef, ds: Dataset,
              hint: str = "") -> str:
    """Raise HashMismatch if ``actual`` is not the pin; warn if there is no pin."""
    if ref.sha256 is None:
        warnings.warn(f"dataset {ds.name!r}: {ref.path} is not pinned (no sha256 in the "
                      f"registry); used {where}, computed sha256 {actual}",
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


def _download(ds: Dataset, ref: FileRef, dest: Path) -> str:
    src, url = ds.source, ds.source.url(ref.path)
    if src.kind == "github":
        try:
            with urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT_S) as resp:
                return _store(dest, resp.read, ref, ds, url)
        except (OSError, http.client.HTTPException) as exc:
            down = not isinstance(exc, urllib.error.HTTPError)  # HTTP status: host is up
            raise _Missing(f"download of {url} failed: {exc}", down) from exc
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
        return _store(dest, fh.read, ref, ds, url)


def _locate(ds: Dataset, ref: FileRef, cache: Path, mirrors: list[Path],
            no_download: str | None) -> tuple[Path, str, str, Path]:
    """(local path, location, sha256, root it is under), or raise _Missing/HashMismatch."""
    rel = ds.layout_path(ref.path)
    for base, label in [(cache, "cache")] + [(m, f"mirror:{m}") for m in mirrors]:
        cand = base / rel
        if cand.is_file():
            hint = ("delete this cached copy to fetch it again" if label == "cache"
                    else f"the mirror {base} holds a wrong copy")
            return cand, label, _verified(cand, sha256_file(cand), ref, ds, hint), base
    if no_download:
        raise _Missing(no_download)
    try:
        sha = _download(ds, ref, cache / rel)
    except OSError as exc:  # the cache is not writable, the disk is full...
        raise _Missing(f"writing {cache / rel} failed: {exc}") from exc
    return cache / rel, "download", sha, cache


def resolve_file(ds: Dataset, ref: FileRef, *, data_dir: str | Path | None = None,
                 offline: bool | None = None) -> Path:
    """Local path of one verified file of ``ds``: from the cache, else the first mirror
    holding it, else downloaded into the cache (GitHub: urllib, 15 s timeout; Hub:
    hf_hub_download, then copied) through a temp file and an atomic os.replace.

    ``offline``: None means from the environment (``VERIKIT_OFFLINE=1``, and for Hub
    sources ``HF_HUB_OFFLINE=1``). Raises HashMismatch when the copy found or downloaded
    has the wrong sha256, DatasetUnavailable when there is none to be had. Warns
    UnpinnedFileWarning when ``ref.sha256`` is None.
    """
    cache, mirrors = cache_dir(data_dir), mirror_dirs()
    try:
        return _locate(ds, ref, cache, mirrors, _offline_reason(ds.source, offline))[0]
    except _Missing as miss:
        raise _unavailable(ds, [ref], cache, mirrors, [miss.reason]) from None


def fetch(name: str, *, data_dir: str | Path | None = None,
          offline: bool | None = None) -> FetchedDataset:
    """Resolve every file of registry entry ``name`` as ``resolve_file`` does.

    Raises DatasetError for an unknown name (listing the known ones), HashMismatch at the
    first file with a wrong sha256, and one DatasetUnavailable listing every missing file.
    After a connection failure no further download is tried (each would time out too).
    """
    if name not in REGISTRY:
        raise DatasetError(f"unknown dataset {name!r}; known: {', '.join(sorted(REGISTRY))}")
    ds = REGISTRY[name]
    cache, mirrors = cache_dir(data_dir), mirror_dirs()
    no_download = _offline_reason(ds.source, offline)
    out = FetchedDataset(ds, None, {})
    roots: set[Path] = set()
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
    if missing:
        raise _unavailable(ds, missing, cache, mirrors, reasons)
    if len(roots) == 1:
        out.root = roots.pop() / ds.source.layout_prefix()
    return out


# --------------------------------------------------------------------------------------
# Registry data. Hashes and sizes below were computed once from the upstream files and
# are literal data: nothing is hashed at import time.
# --------------------------------------------------------------------------------------

_CASP_SAMPLE10_FILES: tuple[FileRef, ...] = (
    FileRef("README.md",
        "6c6363c9320420238b91d093e64b5e4980fdad71be874143850c0dfae3174075", 890),
    FileRef("casp_10/00_327/code.c",
        "1a4bf76ba21c736aa3ec00ca11704fdbe8a4806e5aad6bd9acba24447b7af8e0", 213),
    FileRef("casp_10/00_327/code_with_llm_spec_deepseek_deepseek-chat.c",
        "11e389256e9a079aa971b1226bc86e49be4f19d054e8639d045bbeb9c54ce866", 370),
    FileRef("casp_10/00_327/code_with_llm_spec_gemini_gemini-2.5-flash.c",
        "ae67332a5ed688d80997f49b30eaedb0ee81a754082c4392e5b84b167180cc50", 348),
    FileRef("casp_10/00_327/code_with_llm_spec_openai_gpt-4o-mini.c",
        "6bcd855cc3bdea8efbb8efb156ae2f80be4c13ac6fefbdc1d36bc6298dad938f", 487),
    FileRef("casp_10/00_327/code_with_llm_spec_openai_gpt-5.2.c",
        "3995f4c092787c5df924d7199829127bf273a8ca8c3ca69e486e343d248daac5", 382),
    FileRef("casp_10/00_327/framac_log_deepseek_deepseek-chat.log",
        "4ede6bf6ee90a456e54563fda551455c074399dd5ea90f4e6a01bea0fc5ebdbb", 802),
    FileRef("casp_10/00_327/framac_log_gemini_gemini-2.5-flash.log",
        "6a72b273888d51a05e50bbd949f0bac9e4e4b62262a75ada53c3ce9911374a3c", 801),
    FileRef("casp_10/00_327/framac_log_openai_gpt-4o-mini.log",
        "e426e8f873ee051c6e00c54ae835a2513da68e1e6bdfdad19e12b39b32ca74dd", 886),
    FileRef("casp_10/00_327/framac_log_openai_gpt-5.2.log",
        "3c03373c2a9c178a601d6dbfda6444f7c8ef51a0fac0eb0f00abe59ca58566ef", 765),
    FileRef("casp_10/00_327/meta.txt",
        "5a8015641ddb3d8a3b887b08b53c7e1fa8d1d87618923a733400edd988006f88", 98),
    FileRef("casp_10/00_327/spec.acsl",
        "a54b9a0caebbb76934baba05d07fe88b4e713b1260ce3d0763ed8b9e943192b5", 128),
    FileRef("casp_10/01_57/code.c",
        "d775870f6bcf91f1d8a4e1a08414095ab3ae481800846bf24e25afcefa6afee7", 60),
    FileRef("casp_10/01_57/code_with_llm_spec_deepseek_deepseek-chat.c",
        "54e2e6f43ee370af0577c55643c14531ced3a2b1ed4f23f3c8b038c44ccb74e3", 130),
    FileRef("casp_10/01_57/code_with_llm_spec_gemini_gemini-2.5-flash.c",
        "ab0c239ac51071fa8046b6d3117b9ece9f7189112ddf743a150b8465e309625e", 579),
    FileRef("casp_10/01_57/code_with_llm_spec_openai_gpt-4o-mini.c",
        "db540cbeb82fcc5388759efaa6798053ee0da4177fbbce5837e1ce14f0b235f8", 253),
    FileRef("casp_10/01_57/code_with_llm_spec_openai_gpt-5.2.c",
        "33f9855cdf88e48d9ddf672e5b194e9efabc0d7a8cb0d1f59c976fb436486c91", 131),
    FileRef("casp_10/01_57/framac_log_deepseek_deepseek-chat.log",
        "36e467f877773294839b19a5cea17bfa529f6c361ea128b8f32652fa8c6e9400", 898),
    FileRef("casp_10/01_57/framac_log_gemini_gemini-2.5-flash.log",
        "87579961e3af38645cd9ea61ecc1a501f0477330a9532802d4a9bd0a8832e717", 843),
    FileRef("casp_10/01_57/framac_log_openai_gpt-4o-mini.log",
        "ccf1fcac423e71339b12110cf8da0ba196c7841def1a0d303f1c5c786e419cb0", 775),
    FileRef("casp_10/01_57/framac_log_openai_gpt-5.2.log",
        "b4ddc6df1eaaca3bfe6baec7eed430e8b3e05fb5dda23c583c59d899aba24b35", 865),
    FileRef("casp_10/01_57/meta.txt",
        "757960f0bcc85db3af6d7a0a6098d40375d74ffb47463a558fc1575313a9bd89", 97),
    FileRef("casp_10/01_57/spec.acsl",
        "cc6c13ac0f259ca305267be7e6c0e5b211c5205b395313baae746d090c1b18ec", 94),
    FileRef("casp_10/02_12/code.c",
        "36628859311305332b98db9c01f2d904ada603cfc68cb17165d55bd01befe113", 276),
    FileRef("casp_10/02_12/code_with_llm_spec_deepseek_deepseek-chat.c",
        "73cd7152255d1f7be52d7bbc72a4e1d04b1ca53fde74763e155359e4c9ca1479", 473),
    FileRef("casp_10/02_12/code_with_llm_spec_gemini_gemini-2.5-flash.c",
        "0897ac5e130817220bc51bf67419873efc68fc63dd411df87883654b2ab2a454", 386),
    FileRef("casp_10/02_12/code_with_llm_spec_openai_gpt-4o-mini.c",
        "d7ef742a5cbfc1466eae53f469f0e26bd5fd9a077de46791c4f876c7753d492c", 584),
    FileRef("casp_10/02_12/code_with_llm_spec_openai_gpt-5.2.c",
        "80e9f2af2caec43383ec1683df5db94ed441c7d73779bfa7ea99acacbe50017e", 515),
    FileRef("casp_10/02_12/framac_log_deepseek_deepseek-chat.log",
        "68843a2332a613e54aaa12b3ab701c1114035eae2c73a22d60860372eaf95965", 837),
    FileRef("casp_10/02_12/framac_log_gemini_gemini-2.5-flash.log",
        "74ce7a18fbc30336daa7a44c73817873bad41de978a699e589f30b7d7ca4ccf2", 842),
    FileRef("casp_10/02_12/framac_log_openai_gpt-4o-mini.log",
        "d0caadba205a2be8be422f11f49cafb993672a710796ebb34d36e9697b4a3f5e", 825),
    FileRef("casp_10/02_12/framac_log_openai_gpt-5.2.log",
        "33be4b455cb26c96e6d1f920fdbef11eeba02d3395a4cdeddc1ae43db0d244e5", 797),
    FileRef("casp_10/02_12/meta.txt",
        "44ca67403a654e749a9851d80c7f4375a9fd7634d808051da5c9ee9e72b59427", 95),
    FileRef("casp_10/02_12/spec.acsl",
        "de2f4ca361827167b00ddedaf412b7f23ad2e8f9cd2aa3e02c97c2f416d6a86d", 105),
    FileRef("casp_10/03_379/code.c",
        "99f2786da318af38bcd5e187afcee5bdb6dcaa6767b7fa66dc46b0129e0c5706", 466),
    FileRef("casp_10/03_379/code_with_llm_spec_deepseek_deepseek-chat.c",
        "8e0c4f44f16ceda0ac0df6cef89b2445acc087da4543e3357ec53fa0213847fa", 684),
    FileRef("casp_10/03_379/code_with_llm_spec_gemini_gemini-2.5-flash.c",
        "ca8fdc6a25f761aa695bd4398b23637f7e67fd44c50fbfce61a1c4e5c908aba9", 668),
    FileRef("casp_10/03_379/code_with_llm_spec_openai_gpt-4o-mini.c",
        "e1b5a11de143304c00c086de261808eb6f4cccd2f4438d49c18282e46e653bca", 707),
    FileRef("casp_10/03_379/code_with_llm_spec_openai_gpt-5.2.c",
        "26fbdda304f41cf66564ebd5ef87d3b29e261f687d39a601d0bab7ed2881c054", 839),
    FileRef("casp_10/03_379/framac_log_deepseek_deepseek-chat.log",
        "221f963074947d08cec196dfb7b73be10f5819bebee926fc1147c7d19c9bd408", 1297),
    FileRef("casp_10/03_379/framac_log_gemini_gemini-2.5-flash.log",
        "a1ce78f2c13e0b1791600aca7c44759adff09586ec699d241bc485f42285de37", 852),
    FileRef("casp_10/03_379/framac_log_openai_gpt-4o-mini.log",
        "c8ef6bc7fb66bf66fd83334dcfbabfe27e3131d559f0a92d31cac5b829345586", 833),
    FileRef("casp_10/03_379/framac_log_openai_gpt-5.2.log",
        "a2889e528f2a436268aedbab6a291a0026c5377890c81de39cf53587cd9cd39a", 748),
    FileRef("casp_10/03_379/meta.txt",
        "32808f28476fb9e33b45e25f7e25fe6a9b9708f99779c4be6021e8a005e8b38e", 97),
    FileRef("casp_10/03_379/spec.acsl",
        "407da992fff6332168a0f698b90d3c0e62891c2735dc525e2da13f8a3a5f9afa", 141),
    FileRef("casp_10/04_140/code.c",
        "d2f5ecaf216a1f6b8a68178549a266a07f03c25e3c6320f119123317a2160466", 126),
    FileRef("casp_10/04_140/code_with_llm_spec_deepseek_deepseek-chat.c",
        "3173ef8f7b7da934ac7559c7702fdc6d14eb584e027d844c672b3e96655f15be", 240),
    FileRef("casp_10/04_140/code_with_llm_spec_gemini_gemini-2.5-flash.c",
        "645aeeb0dec567ddd5ac0a96292380ca4d5494e23485cd7d85cac4239a3cc3b9", 236),
    FileRef("casp_10/04_140/code_with_llm_spec_openai_gpt-4o-mini.c",
        "fb119bd191df4e574f0a7d3f01657fc86550e68d0fe547f97a592fd474ea3dc7", 453),
    FileRef("casp_10/04_140/code_with_llm_spec_openai_gpt-5.2.c",
        "fca3211738ea7f2b889751ab13c69261fe4ee4e00c6c7a744431df0e2735e575", 230),
    FileRef("casp_10/04_140/framac_log_deepseek_deepseek-chat.log",
        "b79b0d41a9f0dbbb5a0cee6ef8250e451e5769e59aab8a4f046567b3f98ede67", 731),
    FileRef("casp_10/04_140/framac_log_gemini_gemini-2.5-flash.log",
        "c41513dad2d5421a639f928984fdd28100b7be6ee17ec9fa7e72cdecd20f6cad", 735),
    FileRef("casp_10/04_140/framac_log_openai_gpt-4o-mini.log",
        "3e6462d07ed2987199fedca466dc221b507f3c887727bcb6cdce9afe56ecefa3", 860),
    FileRef("casp_10/04_140/framac_log_openai_gpt-5.2.log",
        "5267fb56cd4811615d32dbe58c4ff934d834a33ae0e428a92e4bafe468b841c3", 699),
    FileRef("casp_10/04_140/meta.txt",
        "a081b2ae763d79a3c217229c242d470c0c9e20f16bb08b474d747e3614cdb110", 95),
    FileRef("casp_10/04_140/spec.acsl",
        "860e06c11735743aee4f8904f5ec7e771bc6d2e0f21340657942223a55692e2d", 49),
    FileRef("casp_10/05_125/code.c",
        "3e275925d5c0a2550a44645df36baf0acd5ab05457031b9e523c70a4402963e9", 102),
    FileRef("casp_10/05_125/code_with_llm_spec_deepseek_deepseek-chat.c",
        "8a6bd2def8640423b80eed3358994b99e18e4b6ebba8b734c245e97348ecb1ee", 194),
    FileRef("casp_10/05_125/code_with_llm_spec_gemini_gemini-2.5-flash.c",
        "5a89c748eb6dbd834693e43b737b91a3bca4552890fb49b1f93fef6dd23559df", 218),
    FileRef("casp_10/05_125/code_with_llm_spec_openai_gpt-4o-mini.c",
        "91597c6fb526eed77ec1edb16c93276a6f79c95f79679b7e2cefdc3cce0d49ee", 357),
    FileRef("casp_10/05_125/code_with_llm_spec_openai_gpt-5.2.c",
        "b558d7700472772841b6f87f1f122162eb3a4a9215902778aabed536fdcc132a", 197),
    FileRef("casp_10/05_125/framac_log_deepseek_deepseek-chat.log",
        "3ba229f1890be7dadbef13960c5ed647b37b5e0dee453391e1ea934d1e8d7dcd", 916),
    FileRef("casp_10/05_125/framac_log_gemini_gemini-2.5-flash.log",
        "6eb0b8a0e6b19ee93a3221c3375d0fe1a488fa34b9f5ce53d5cc708a4901aaf5", 1001),
    FileRef("casp_10/05_125/framac_log_openai_gpt-4o-mini.log",
        "2fbabb4e2ddb6498ccc17cce34fd55862c63b52b3ab377ebfd9cdb727f636bdf", 1068),
    FileRef("casp_10/05_125/framac_log_openai_gpt-5.2.log",
        "470ef464ff2517fc3bd35f582a55529d6fa38f17f24e8f96dbc7cbc7e7aa7768", 879),
    FileRef("casp_10/05_125/meta.txt",
        "b100acd78ea8de1ec6ead630747fd57297424ab3f84540c07e3f4ac3cb437941", 98),
    FileRef("casp_10/05_125/spec.acsl",
        "c462948bc984dd6d3ce83901cad99f8348f305995525c9ea29008f1698f2d23a", 1611),
    FileRef("casp_10/06_114/code.c",
        "7c58ec017e857f54060e1c8f852a7c816db71ad857d510fd1beb9ae4a70f379f", 81),
    FileRef("casp_10/06_114/code_with_llm_spec_deepseek_deepseek-chat.c",
        "d1a9224ce15f0ad66cedc760bcb4a1351f07537ee7003f9181fa7c6227e70d98", 220),
    FileRef("casp_10/06_114/code_with_llm_spec_gemini_gemini-2.5-flash.c",
        "b5b59a469407994be4199ea8bc15cbee36eb1f5f11b788e6d47dcc36d7ab2597", 213),
    FileRef("casp_10/06_114/code_with_llm_spec_openai_gpt-4o-mini.c",
        "778c80aede81ec53060e753270b08e513e0ab5fba4d9a7d95bcf29fd82bd05e5", 358),
    FileRef("casp_10/06_114/code_with_llm_spec_openai_gpt-5.2.c",
        "b3467e516bc914aa35a59331693425d47615b1a807f97ef36bb988da9281af49", 321),
    FileRef("casp_10/06_114/framac_log_deepseek_deepseek-chat.log",
        "232736a8bb6b18466e622f8a9030a77434b7d37ae432360ebda50d30e03da7e0", 1539),
    FileRef("casp_10/06_114/framac_log_gemini_gemini-2.5-flash.log",
        "3e16364188dcf5d449474b0b09dd0be392d90ca5cf3566829fb0c2e874f54480", 848),
    FileRef("casp_10/06_114/framac_log_openai_gpt-4o-mini.log",
        "bad33c938e9e0e20d39229e21434ae89370ca7e349310573a7f9e95f68f307d4", 819),
    FileRef("casp_10/06_114/framac_log_openai_gpt-5.2.log",
        "4deab4f9729079557954815efda07a182059a8d730e13d0a208b385cb8752256", 802),
    FileRef("casp_10/06_114/meta.txt",
        "54f7047d5bab6ffb03e52b5ee1a19d4435344acdfdc3d8605cd36d0241e8f747", 98),
    FileRef("casp_10/06_114/spec.acsl",
        "b64525a0a1758760517cf42b60b10a7bd6b1d25bbb6d6dc68798be4160b16338", 452),
    FileRef("casp_10/07_71/code.c",
        "b76a9527b3dd68ab18cd77c560feb84427bac053703a71bab115b89fe508f7e1", 153),
    FileRef("casp_10/07_71/code_with_llm_spec_deepseek_deepseek-chat.c",
        "df9b465e18d3f50a018d27ed6cf39bddaa3fd36c824187d5c814f0cd4594a996", 249),
    FileRef("casp_10/07_71/code_with_llm_spec_gemini_gemini-2.5-flash.c",
        "2db73a7c8d0bd24b9fe47d5d04a1aa5e8b5c5327946d7b8cff99bbc35eb2b162", 300),
    FileRef("casp_10/07_71/code_with_llm_spec_openai_gpt-4o-mini.c",
        "d2eeb7d74224cc83341eecc8a8450469cf46b0a7750e05b88a4d409696601e2c", 409),
    FileRef("casp_10/07_71/code_with_llm_spec_openai_gpt-5.2.c",
        "6258e7b863bd4a86a4cfe62d8fef75e3af2bd4b508e88fd3b23251599c92929f", 228),
    FileRef("casp_10/07_71/framac_log_deepseek_deepseek-chat.log",
        "275a2e376ff76b57d9c829675f550ae926c6541bfd4e13a2b3285ee389d999bf", 733),
    FileRef("casp_10/07_71/framac_log_gemini_gemini-2.5-flash.log",
        "a349637accd67217e91078bb54bfaa54593ee2d63ba9f57472c1a5b17c1403a6", 844),
    FileRef("casp_10/07_71/framac_log_openai_gpt-4o-mini.log",
        "3f63c0b236eda9d322a11e8f4977ec6209d74a2c08e497707efd882590b35600", 760),
    FileRef("casp_10/07_71/framac_log_openai_gpt-5.2.log",
        "3e19da6468fde4c235238b8e4cedfad9813119a27b5aa5be660553895e96b0fa", 809),
    FileRef("casp_10/07_71/meta.txt",
        "64125ba92f928771c77fea5358779757760f07282099841dc8105e93c51bd1c7", 98),
    FileRef("casp_10/07_71/spec.acsl",
        "e1437d8f33039cb180ec9bbe878b7654d0ef9a549b7f8dbecf0e4d66ed4620c1", 587),
    FileRef("casp_10/08_377/code.c",
        "5fa0f8878181754afcf506afb87d1b167ee71c67f5ef593a267a9603d5173c72", 324),
    FileRef("casp_10/08_377/code_with_llm_spec_deepseek_deepseek-chat.c",
        "576205c1b95c6a4d08c84e13fe2e19415e6ceae5d5607f1d813d7bade56f9458", 605),
    FileRef("casp_10/08_377/code_with_llm_spec_gemini_gemini-2.5-flash.c",
        "f0ad319d9a8b1a4b832d0096a875441a322e542bc2bcc637d3ca4e0aba499c56", 514),
    FileRef("casp_10/08_377/code_with_llm_spec_openai_gpt-4o-mini.c",
        "6f01bc017b2c20963513fdd4a38ec538904633c1754b7caf121908daaacb5b32", 625),
    FileRef("casp_10/08_377/code_with_llm_spec_openai_gpt-5.2.c",
        "5c4431f303300523da1391b1699126b8c9b58406687753a3c11298dd62ababeb", 520),
    FileRef("casp_10/08_377/framac_log_deepseek_deepseek-chat.log",
        "e36c6d3b88a41f7d412f8331c7212e19b71765bf6b833588ae6b2a696bb2f0f9", 798),
    FileRef("casp_10/08_377/framac_log_gemini_gemini-2.5-flash.log",
        "48cd8fb0b8d987213440bc7425a5b1bf0a52fb88595eaaba22ec7869fb8b2290", 796),
    FileRef("casp_10/08_377/framac_log_openai_gpt-4o-mini.log",
        "2c4124910d6823874b6cfc5b9611a9623107aa37b70d2a2dd2f0584509cda8f1", 943),
    FileRef("casp_10/08_377/framac_log_openai_gpt-5.2.log",
        "90fb09b0432cf13cd14bf23ee6ebc3e735f3e5ebc3730dadb6d08649d94f9aec", 760),
    FileRef("casp_10/08_377/meta.txt",
        "3a0ce7fb268be809dc03d672a03e497b917ed480c504e9dcd7f2329948485f34", 98),
    FileRef("casp_10/08_377/spec.acsl",
        "1acc1bcd00b46ebd70b9a0d79e6ffa1ccdaf012cfd7f6a10652aacc8bd18eae6", 418),
    FileRef("casp_10/09_52/code.c",
        "1602c81c3124cd59f39130c97d753c29ba7b8cfda42c19fec76429c84d79ba2b", 101),
    FileRef("casp_10/09_52/code_with_llm_spec_deepseek_deepseek-chat.c",
        "2c7298f2a0c8b090bf00a5ea6262a66c212d9bb0c06e43b8a682084c9b35ffda", 312),
    FileRef("casp_10/09_52/code_with_llm_spec_gemini_gemini-2.5-flash.c",
        "1923939e28b4c951ab97bf66c78ce3ed9e678ce960e9679d6582615b568bc60a", 382),
    FileRef("casp_10/09_52/code_with_llm_spec_openai_gpt-4o-mini.c",
        "21e1870a69c1555b3559dde00bb01518367879fdc7c48b0d53c1b7e8a9586c68", 338),
    FileRef("casp_10/09_52/code_with_llm_spec_openai_gpt-5.2.c",
        "2c7298f2a0c8b090bf00a5ea6262a66c212d9bb0c06e43b8a682084c9b35ffda", 312),
    FileRef("casp_10/09_52/framac_log_deepseek_deepseek-chat.log",
        "43e7d2b93a5fc2a4b76f7b55a00057de367b037ea4cf6654ca6fc4e4a4f059f0", 1918),
    FileRef("casp_10/09_52/framac_log_gemini_gemini-2.5-flash.log",
        "e1528eb127c9a8cb25da9badc4d808b25735c568e4a1547dc082d671e51a2d82", 1799),
    FileRef("casp_10/09_52/framac_log_openai_gpt-4o-mini.log",
        "ae5eb0d61328cc4b2f81ccd6a1914190f1ef03a976cc925cb75fbe168f0f5ba9", 1902),
    FileRef("casp_10/09_52/framac_log_openai_gpt-5.2.log",
        "f2a5057c254a19a0f6621152c66d4f9b544aed206f6d723aaf10cf95d25642dd", 1885),
    FileRef("casp_10/09_52/meta.txt",
        "92c2e9560423f288413d48bbcbbae940c76b61f178c07531455d2ec239b98dc0", 98),
    FileRef("casp_10/09_52/spec.acsl",
        "14e717a1c7c949105fdf61f21ae835a5ca761858a6aefaeb16696f862165d788", 996),
    FileRef("framac_results.csv",
        "ed391de8497446c4df001e842e5b3182714143311103174852908a2a25f1725e", 12517),
)

_NTP4VC_FILES: tuple[FileRef, ...] = (
    FileRef("README.md",
        "2d13f8cca936d5f03d5725214e627278b43486402156ddee3bb68915432fda1e", 7200),
    FileRef("data/why3/NTP4VC-SH.db.csv",
        "7f3e3aad5642610bc3853391e5741f5b33d938e648e8a85f226559b8b6710517", 1392688),
    FileRef("data/why3/frama_c/airborne/why3_auto_level_3.db.csv",
        "9b0a3bf95bf5c7387e07b4d70c55973d4209eb652d004fdde499e9be5dc28132", 24287),
    FileRef("data/why3/frama_c/contiki_list/why3_auto_level_3.db.csv",
        "362cbf4ce9ded8b23ac0c7588e329b4f4d5ee6b895b73d784b255a5fddbd1164", 82978),
    FileRef("data/why3/frama_c/contiki_memb/why3_auto_level_3.db.csv",
        "cbd465adf81256d7b19dbfcdb7b8f574dd85392c7002498ac77a314942d5259e", 9513),
    FileRef("data/why3/frama_c/klibc_stdio/why3_auto_level_3.db.csv",
        "3c841950d43f6a5a3ecc9bc8aa45b6ef449ad402c2b1ef3f8521011c7e819dfd", 74741),
    FileRef("data/why3/frama_c/klibc_string/why3_auto_level_3.db.csv",
        "3e57ca3eeb3867c1c4d9223520bcd6748f730033b48d21fe8ce29a3af5e50700", 72584),
    FileRef("data/why3/frama_c/should_we_balance/why3_auto_level_3.db.csv",
        "235655e33a07c7d614d034fcebbe1a56bd16b76d5ae055ce55c6fd6b12c98979", 21556),
    FileRef("data/why3/frama_c/standard_algorithms/why3_auto_level_3.db.csv",
        "21095107249bb03eeb68f75e9e824faff5c05ccbf18a58570a766fc75e064c55", 111423),
    FileRef("data/why3/frama_c/verker/why3_auto_level_3.db.csv",
        "ae59237544c76a654b44d1456a1a56b58daf9d034631ce55673b8599d49fa322", 72477),
    FileRef("data/why3/frama_c/x509_parser/why3_auto_level_3.db.csv",
        "029da017ce2f5c76a50427c1d612ae6364dbfe1148926d45ccd4d8bedd0be269", 281796),
    FileRef("data/why3/pearl/why3_auto_level_3.db.csv",
        "4d220fea9e7f9caa674197c2f871481eb60d0e8883cf4ae1a8484b6d654ac486", 300173),
    FileRef("statistics/all-meta-data.csv",
        "b870b24ad2f46cb0b3db7755e0def10433eeded1ddc3a9d72bde6b6135d394fe", 3340959),
    FileRef("statistics/meta-data.csv",
        "3d5fa2ee39ffe0e7adb86bc59f9b29e9b2a1f920f45a8ae301243cc16b7d0f3e", 300886),
    FileRef("statistics/statistics_VC.csv",
        "40b4c198695632bc19eb28ec6a2d5b25b75cc7dfbabf9c96eddcb48665148ec4", 2272),
    FileRef("test_set.isabelle.lst",
        "b289bc03dbe402dcbd0ccedac5b32ceb74d1ec7e2e168e86f49d9b014354c7b6", 67084),
    FileRef("test_set.lean.txt.lst",
        "0db4c4719408cf21bfb40ba7f4dc6d792699c3e06d64f56e278d3c8cff456afc", 65278),
    FileRef("test_set.rocq.lst",
        "6607c6bf159462d45bea7292508e0d74779ba69b045a804c8ae09b961a91b4d0", 63484),
)

# OSVBench (lishangyu-hkust/OSVBench at 3247b75e): every file of the published artifacts
# (harness/benchmarks/osvbench.py). bench_prompts/benchmark.json is not valid JSON at this
# commit (one trailing comma): pinned as is, never edited; the loader accepts it with a warning.
_OSVBENCH_FILES: tuple[FileRef, ...] = (
    FileRef("FULL_PROMPT_EXAMPLE_5_SHOTS",
        "7ba606f09ad2d4ad937cf791808279133cf5cd6f75658fc205051ac3003483ed", 98404),
    FileRef("README.md",
        "29b272e8e6114b54d0ae055c3af97daf6f05c3491e4ec5a11f071968581e4af4", 9939),
    FileRef("bench_prompts/1_shot_example",
        "5f79de8aabf9aaa9568d7f62efaa410f577baaa13b3b589ff29fe6034e248aad", 5987),
    FileRef("bench_prompts/3_shots_examples",
        "25005c58682cdc16008d75b07ed30c17f6c9fe04cfa96422684a4f3cf7d0d01d", 33292),
    FileRef("bench_prompts/5_shots_examples",
        "8885e3cb875eeb899bb2314202787eeabe98a04491065bffe78725a7af1c2a61", 49286),
    FileRef("bench_prompts/7_shots_examples",
        "7e1d06429d4475bce5aa2bf3a839c3a8611379ff2782119475fae0711d49bbe5", 69401),
    FileRef("bench_prompts/9_shots_examples",
        "9c2525a3a60ff601a82c1b000b67a7d1b2134172b07b90cd2b82470ba89f5542", 82017),
    FileRef("bench_prompts/benchmark.json",
        "768db88560809dc9f9d5ca608d5c555c2e0b80c20685511fde604d5ec42ccb49", 1975730),
    FileRef("bench_prompts/system_assumption_model",
        "7ff696a9583ba49a1428a5f0465539ae7a01a8aeccaa612f1e37fe77ef0df2b9", 39271),
    FileRef("outputs/output_claude3sonnet_Spec",
        "99c8c43b779de4b51113c39df1c9606d3766ff1bab0f540fd59f509f1f005e74", 1086470),
    FileRef("results/Spec/claude3sonnet_Spec.json",
        "debe6ac9c5f69f990bc18e1a302e401db209d89c8edb038f9fa06980de7e53ce", 373979),
)

# Dafny intent formalization (Mondego/dafny-synthesis at a57ce249, the commit the paper
# names): the RQ3 GPT-4 generations with the human labels, MBPP-san-DFY-228, README and
# LICENSE; the 126 MBPP-DFY-153 test programs are in harness/pins/dafny-intent.json.
_DAFNY_INTENT_FILES: tuple[FileRef, ...] = (
    FileRef("LICENSE",
        "3972dc9744f6499f0f9b2dbf76696f2ae7ad8af9b23dde66d6af86c9dfb36986", 35149),
    FileRef("MBPP-san-DFY-228/mbpp-san-dfy-228-all-task-test.json",
        "9bcdbc7c50822a03b6264867bbb8cfc5c6c52a3594da56126767029d1234981c", 134145),
    FileRef("README.md",
        "0e0c5b653b123023b2751e665c713dde129751470f50fc77648d4c808cd60ef7", 5662),
    FileRef("RQs/RQ3-[Dynamic-Few-Shot-Prompting]/rq3-dynamic-few-shot-prompting-GPT-4-temp_0.5-verified-unverified-tagged.json",
        "0590f9540fb21cd1e34f91e7251365035e57820e9d4fee1f381a632c061ea0e1", 540872),
)

PINS_DIR = Path(__file__).resolve().parent / "pins"


def pinned_files(name: str) -> tuple[FileRef, ...]:
    """The file list of ``harness/pins/<name>.json`` (for datasets with too many files to
    list here; written by ``scripts/pin_files.py``, which computes every sha256 from the
    upstream files): ``{"files": [{"path", "sha256", "size"}, ...]}``.

    Raises:
        DatasetError: the file is missing or malformed (names the file).
    """
    path = PINS_DIR / f"{name}.json"
    try:
        import json

        data = json.loads(path.read_text(encoding="utf-8"))
        return tuple(FileRef(f["path"], f["sha256"], f["size"]) for f in data["files"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DatasetError(f"{path}: cannot read the pinned file list: {exc}") from exc


REGISTRY: dict[str, Dataset] = {
    d.name: d
    for d in (
        Dataset(
            name="casp-sample10",
            description=(
                "10 CASP pairs (casp_10/<nn>_<casp id>/: code.c, spec.acsl, meta.txt with "
                "the reference Frama-C goal counts), each with 4 LLM-written ACSL specs "
                "(code_with_llm_spec_<provider>_<model>.c, 40 in all) and their Frama-C "
                "WP logs, plus the aggregated framac_results.csv. Fully pinned: "
                "112 files at a fixed commit."
            ),
            source=Source("github", "AbdelbasetKABOU/CASP-LLM-Verification-Study",
                          "2dd260bfecc15e4a4614bdea2e3001021bf2d646"),
            files=_CASP_SAMPLE10_FILES,
            citation=(
                "CASP LLM Verification Study, "
                "https://github.com/AbdelbasetKABOU/CASP-LLM-Verification-Study "
                "(commit 2dd260bfecc15e4a4614bdea2e3001021bf2d646); pairs drawn from "
                "CASP (Hertzberg et al., arXiv:2508.18798)."
            ),
            license=None,  # no license file at that commit
        ),
        Dataset(
            name="casp",
            description=(
                "CASP: 506 C-function / ACSL-specification pairs (one parquet file, "
                "about 445 kB). NOT pinned yet: revision 'main' is a moving branch and no "
                "sha256 is recorded, so fetch warns and records the sha256 it computed. "
                "Stored Hub listings show main at short commit 336c919 (data last "
                "uploaded in ece9ca2); pin the full 40-hex commit sha and the parquet's "
                "sha256 once they can be read from the Hub."
            ),
            source=Source("hf", "nicher92/CASP_dataset", "main", repo_type="dataset"),
            files=(FileRef("data/train-00000-of-00001.parquet", None, None),),
            citation=(
                "N. Hertzberg, M. Sevenhuijsen, L. Kåreborn, A. Lokrantz, \"CASP: An "
                "evaluation dataset for formal verification of C code\", "
                "arXiv:2508.18798 (2025); https://huggingface.co/datasets/nicher92/"
                "CASP_dataset"
            ),
            license=None,  # not stated in any stored copy of the dataset card
        ),
        Dataset(
            name="ntp4vc",
            description=(
                "NTP4VC: 600 verification conditions (300 Why3 'pearls of programs', 300 "
                "from Frama-C projects), each as an Isabelle, Lean and Rocq file. Registered: "
                "the three test-set manifests, "
                "the per-goal Why3 Auto_level_3 results (data/why3/**/"
                "why3_auto_level_3.db.csv), the per-item Sledgehammer results "
                "(data/why3/NTP4VC-SH.db.csv), statistics/*.csv and README.md (18 files "
                "listed here), plus (harness/pins/ntp4vc.json) the 3 x 600 task files and "
                "the Rocq library closure with its dune theory stanzas, pinned at a fixed commit."
            ),
            source=Source("github", "xqyww123/NTP4VC",
                          "dcfadfaa85f3c5ccc3657bab4b6e59e2119cf348"),
            files=_NTP4VC_FILES + pinned_files("ntp4vc"),
            citation=(
                "Neural Theorem Proving for Verification Conditions (NTP4VC), ICLR 2026, "
                "https://github.com/xqyww123/NTP4VC "
                "(commit dcfadfaa85f3c5ccc3657bab4b6e59e2119cf348)."
            ),
            license=None,  # hybrid, per path (LICENSE): manifests, statistics, README MIT;
            # data/why3/pearl LGPL-2.1; the Frama-C projects their own licences
        ),
        Dataset(
            name="osvbench",
            description=(
                "OSVBench: 245 Hyperkernel system-call specification tasks (49 syscalls x 5 "
                "code variants, with bug types and counts), the prompt sections (system "
                "assumptions + programming model, 1/3/5/7/9-shot examples, a full 5-shot "
                "prompt example), the published Claude-3.5-sonnet specifications "
                "(results/Spec/claude3sonnet_Spec.json) and the Hyperkernel verifier's raw "
                "log for them (outputs/output_claude3sonnet_Spec): every file of the repository "
                "that holds data (11 files)."
            ),
            source=Source("github", "lishangyu-hkust/OSVBench",
                          "3247b75e34bec129328e4930d9b5f56448d072a1"),
            files=_OSVBENCH_FILES,
            citation=(
                "Li, Jiang, Zhao, Shen, \"OSVBench: Benchmarking LLMs on Specification Generation "
                "Tasks for Operating System Verification\", arXiv:2504.20964 (2025), "
                "https://github.com/lishangyu-hkust/OSVBench "
                "(commit 3247b75e34bec129328e4930d9b5f56448d072a1)."
            ),
            license=None,  # README: files the authors created are Apache-2.0, while its badge
            # says data CC-BY-NC-4.0 (linking another repository's licence file): unclear
        ),
        Dataset(
            name="dafny-intent",
            description=(
                "Dafny user-intent formalization (MBPP-DFY): the 126 test programs "
                "MBPP-DFY-153/test/task_id_<N>.dfy (specification + implementation + test "
                "method; harness/pins/dafny-intent.json), the RQ3 GPT-4 generations with the "
                "human labels as tags in 'note', MBPP-san-DFY-228, README and LICENSE, pinned "
                "at the commit the paper names (a57ce24)."
            ),
            source=Source("github", "Mondego/dafny-synthesis",
                          "a57ce249913c883085401e9072233852826f4e24"),
            files=_DAFNY_INTENT_FILES + pinned_files("dafny-intent"),
            citation=(
                "S. K. Lahiri, \"Evaluating LLM-driven User-Intent Formalization for "
                "Verification-Aware Languages\", FMCAD 2024; data: Misu et al., \"Towards "
                "AI-Assisted Synthesis of Verified Dafny Methods\", FSE 2024, "
                "https://github.com/Mondego/dafny-synthesis "
                "(commit a57ce249913c883085401e9072233852826f4e24)."
            ),
            license="GPL-3.0",  # LICENSE at that commit: GNU GPL v3
        ),
    )
}
