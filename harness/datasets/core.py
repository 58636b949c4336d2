"""The dataset vocabulary: sources, pinned files, dataset entries, fetched datasets, errors.

Imports nothing else of the package. ``Source.kind`` is one of :data:`KINDS`:

- ``github``: a GitHub repository (``repo`` "owner/name") at a commit (``revision``);
- ``hf``: a Hugging Face Hub repository (``repo_type`` "dataset" | "model") at a revision;
- ``pypi``: files inside one pinned distribution (wheel or sdist) of a PyPI package:
  ``repo`` is the package name, ``revision`` the version, ``distribution`` the file name
  and ``distribution_sha256`` its hash; each ``FileRef.path`` is an archive member;
- ``local``: a user's own dataset on this machine (``repo`` the absolute path, no revision).

Vocabulary: docs/architecture.md ("dataset", "task defect"); dataset entries: docs/plugins.md
("Data").
"""

from __future__ import annotations

import hashlib
import re
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

KINDS = ("github", "hf", "pypi", "local")
_CHUNK = 1 << 20  # 1 MiB
_HEX = frozenset("0123456789abcdef")
#: A PyPI project name (PEP 508 "name").
_PYPI_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")
_DIST_SUFFIXES = (".whl", ".tar.gz", ".zip")


class DatasetError(Exception):
    """Base class of the dataset errors; raised itself for an unknown dataset name or a
    malformed dataset entry file or dataset description (the message names the file, and the
    line where it can)."""


class DatasetUnavailable(DatasetError):
    """Files are in neither the cache nor a mirror, and could not be downloaded.

    ``dataset``: the dataset name; ``missing``: the repo-relative paths missing. The
    message names each missing file (at most 10, then a count) with its upstream location
    and the exact path ``<cache>/<layout path>`` where a user may place it, says that
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
    """A dataset entry lists a file with no pinned sha256, so its content could not be verified."""


def is_sha256(value: object) -> bool:
    """True when ``value`` is 64 lowercase hex digits."""
    return isinstance(value, str) and len(value) == 64 and set(value) <= _HEX


def _plain_name(value: object) -> bool:
    return isinstance(value, str) and bool(value) and "/" not in value and value != ".."


@dataclass(frozen=True)
class Source:
    """Where a dataset lives (see the module docstring for each ``kind``).

    ``repo``: "owner/name" (github, hf), the package name (pypi) or an absolute path
    (local); ``revision``: full commit sha (github), Hub revision (a branch such as "main"
    is not a pin), package version (pypi), None (local); ``repo_type``: "dataset" |
    "model" (github, hf; default "dataset"), "package" (pypi), None (local);
    ``distribution``/``distribution_sha256``: pypi only. Raises ValueError otherwise.
    """

    kind: str
    repo: str
    revision: str | None = None
    repo_type: str | None = None
    distribution: str | None = None
    distribution_sha256: str | None = None

    def __post_init__(self) -> None:
        default_type = {"github": "dataset", "hf": "dataset", "pypi": "package"}.get(self.kind)
        if self.repo_type is None and default_type:
            object.__setattr__(self, "repo_type", default_type)
        if not self._valid():
            raise ValueError(
                f"bad Source: kind must be one of {'|'.join(KINDS)}; github/hf: repo owner/name, "
                f"revision one name, repo_type dataset|model; pypi: repo a package name, revision "
                f"its version, distribution a .whl/.tar.gz/.zip file name with its sha256; local: "
                f"repo an absolute path and no revision: {self!r}")

    def _valid(self) -> bool:
        if self.kind in ("github", "hf"):
            parts = self.repo.split("/") if isinstance(self.repo, str) else []
            return (self.repo_type in ("dataset", "model") and len(parts) == 2 and all(parts)
                    and ".." not in parts and _plain_name(self.revision)
                    and self.distribution is None and self.distribution_sha256 is None)
        if self.kind == "pypi":
            return (isinstance(self.repo, str) and bool(_PYPI_NAME.match(self.repo))
                    and _plain_name(self.revision) and self.repo_type == "package"
                    and _plain_name(self.distribution)
                    and self.distribution.endswith(_DIST_SUFFIXES)
                    and is_sha256(self.distribution_sha256))
        if self.kind == "local":
            return (isinstance(self.repo, str) and PurePosixPath(self.repo).is_absolute()
                    and self.revision is None and self.repo_type is None
                    and self.distribution is None and self.distribution_sha256 is None)
        return False

    def layout_prefix(self) -> str:
        """Relative POSIX directory of this source in a cache or mirror:
        ``github/<owner>/<repo>/<commit>``, ``hf/<datasets|models>/<owner>/<name>/<revision>``
        or ``pypi/<package>/<version>``. Raises ValueError for ``local`` (no cache)."""
        if self.kind == "github":
            return f"github/{self.repo}/{self.revision}"
        if self.kind == "hf":
            return f"hf/{self.repo_type}s/{self.repo}/{self.revision}"
        if self.kind == "pypi":
            return f"pypi/{self.repo}/{self.revision}"
        raise ValueError(f"a {self.kind} source has no cache layout")

    def url(self, path: str) -> str:
        """Upstream URL of ``path`` (percent-quoted, ``/`` kept): GitHub
        ``https://raw.githubusercontent.com/<repo>/<commit>/<path>``, Hub
        ``https://huggingface.co/datasets/<repo>/resolve/<revision>/<path>`` (models have
        no ``datasets/`` segment), PyPI the release's file list
        ``https://pypi.org/project/<package>/<version>/#files`` (``path`` is a member of
        the distribution listed there), local a ``file://`` URI."""
        quoted = urllib.parse.quote(path, safe="/")
        if self.kind == "github":
            return f"https://raw.githubusercontent.com/{self.repo}/{self.revision}/{quoted}"
        if self.kind == "hf":
            kind = "datasets/" if self.repo_type == "dataset" else ""
            return f"https://huggingface.co/{kind}{self.repo}/resolve/{self.revision}/{quoted}"
        if self.kind == "pypi":
            return f"https://pypi.org/project/{self.repo}/{self.revision}/#files"
        return (Path(self.repo) / path).as_uri()

    def describe(self) -> str:
        """One sentence naming the source, e.g. "GitHub repo o/r at revision abc"."""
        if self.kind == "github":
            return f"GitHub repo {self.repo} at revision {self.revision}"
        if self.kind == "hf":
            return f"Hugging Face {self.repo_type} repo {self.repo} at revision {self.revision}"
        if self.kind == "pypi":
            return (f"PyPI package {self.repo} version {self.revision}, distribution "
                    f"{self.distribution} (sha256 {self.distribution_sha256})")
        return f"local path {self.repo}"

    def to_json(self) -> dict:
        """The run manifest's ``source``: ``{kind, repo, revision, repo_type}`` (github,
        hf); pypi adds ``distribution`` and ``distribution_sha256``; local is
        ``{kind, path, revision: None}``."""
        if self.kind == "local":
            return {"kind": "local", "path": self.repo, "revision": None}
        out = {"kind": self.kind, "repo": self.repo, "revision": self.revision,
               "repo_type": self.repo_type}
        if self.kind == "pypi":
            out.update(distribution=self.distribution, distribution_sha256=self.distribution_sha256)
        return out


@dataclass(frozen=True)
class FileRef:
    """One upstream file. ``path``: POSIX path relative to the repo root (for pypi: the
    archive member name; no ``.``/``..`` parts); ``sha256``: 64 lowercase hex digits, or
    None while unpinned; ``size``: bytes or None. Raises ValueError otherwise."""

    path: str
    sha256: str | None = None
    size: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.path, str):
            raise ValueError(f"FileRef.path must be a string: {self.path!r}")
        parts = self.path.split("/")
        if (not self.path or PurePosixPath(self.path).is_absolute() or "\\" in self.path
                or any(part in ("", ".", "..") for part in parts)):
            raise ValueError(f"FileRef.path must be a plain relative path: {self.path!r}")
        if self.sha256 is not None and not is_sha256(self.sha256):
            raise ValueError(f"FileRef.sha256 must be 64 lowercase hex: {self.sha256!r}")
        if self.size is not None and (not isinstance(self.size, int) or isinstance(self.size, bool)
                                      or self.size < 0):
            raise ValueError(f"FileRef.size must be an integer >= 0 (bytes): {self.size!r}")


@dataclass(frozen=True)
class TaskDefect:
    """A known bug of one task of the pinned data, found by the kit's checks: the task, not
    a candidate, is at fault, so its records are marked and kept out of the metrics
    (:func:`harness.metrics.group_metrics`).

    ``task``: the task id; ``modes``: the benchmark modes it affects (empty: every mode);
    ``kind``: a short name (``inconsistent-task``, ``gold-refused``...); ``detail``: what
    is wrong, in one sentence; ``evidence``: how it was found (the check, the run)."""

    task: str
    modes: tuple[str, ...]
    kind: str
    detail: str
    evidence: str

    def applies(self, task_id: str, mode: str) -> bool:
        """Whether the defect concerns ``task_id`` in ``mode``."""
        return task_id == self.task and (not self.modes or mode in self.modes)

    def describe(self) -> str:
        """``kind: detail`` (the text marked on a record)."""
        return f"{self.kind}: {self.detail}"


@dataclass(frozen=True)
class Dataset:
    """A dataset entry (or a user's own dataset): ``name``, ``description``, ``source``,
    ``files`` (tuple of FileRef, unique paths), ``citation`` (paper / upstream location),
    ``license`` (SPDX id, or None when upstream states none), ``format`` (a benchmark's
    name for the layout of the files, None when the benchmark detects it),
    ``task_defects`` (:class:`TaskDefect`: known bugs of tasks of the pinned revision).
    Raises ValueError on a duplicate path."""

    name: str
    description: str
    source: Source
    files: tuple[FileRef, ...]
    citation: str
    license: str | None = None
    format: str | None = None
    task_defects: tuple[TaskDefect, ...] = ()

    def __post_init__(self) -> None:
        if len({f.path for f in self.files}) != len(self.files):
            raise ValueError(f"dataset {self.name!r} lists a file twice")

    def task_defect(self, task_id: str, mode: str, revision: str | None = None) -> TaskDefect | None:
        """The known defect of ``task_id`` in ``mode`` (None when there is none, or when
        ``revision`` is given and is not the pinned one: the defects are the pinned data's)."""
        if revision is not None and revision != self.source.revision:
            return None
        return next((d for d in self.task_defects if d.applies(task_id, mode)), None)

    def layout_path(self, path: str) -> str:
        """``<layout_prefix>/<path>``: where ``path`` lives under a cache or mirror root."""
        return f"{self.source.layout_prefix()}/{path}"


@dataclass
class FetchedDataset:
    """What ``fetch`` returns. ``root``: the directory holding every file at its
    repo-relative path (``<cache or mirror>/<layout_prefix>``), None when files are split
    between places; ``files``: repo-relative path -> local Path; ``sha256``: path ->
    verified (unpinned: computed) hex digest; ``locations``: path -> "cache" |
    "mirror:<dir>" | "installed:<dir>" | "download" | "local"."""

    dataset: Dataset
    root: Path | None
    files: dict[str, Path]
    sha256: dict[str, str] = field(default_factory=dict)
    locations: dict[str, str] = field(default_factory=dict)

    def provenance(self) -> dict:
        """JSON-able record for run manifests: ``name``; ``source`` (:meth:`Source.to_json`);
        ``files_sha256``: sha256 hex of the sorted ``"<path>\\t<sha256>\\n"`` lines;
        ``n_files``; ``unpinned``: sorted paths with no pinned sha256; ``locations``:
        sorted distinct places the files came from."""
        lines = "".join(sorted(f"{p}\t{h}\n" for p, h in self.sha256.items()))
        pinned = {f.path for f in self.dataset.files if f.sha256 is not None}
        return {
            "name": self.dataset.name,
            "source": self.dataset.source.to_json(),
            "files_sha256": hashlib.sha256(lines.encode()).hexdigest(),
            "n_files": len(self.files),
            "unpinned": sorted(p for p in self.files if p not in pinned),
            "locations": sorted(set(self.locations.values())),
        }


def sha256_file(path: str | Path) -> str:
    """sha256 of a file's bytes: 64 lowercase hex digits. The kit's one file hash (a
    dataset file, a predictions file, a generation.json, an image archive, SHA256SUMS's
    entries); the file is read in 1 MiB chunks, so a file of gigabytes is never held whole.

    Raises:
        OSError: the file does not exist or cannot be read (FileNotFoundError,
            IsADirectoryError, PermissionError...).
    """
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()
