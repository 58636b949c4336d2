"""A user's own dataset (``--dataset PATH``) and dataset entries made from a directory.

``open_dataset(PATH)`` accepts:

- a directory: every regular file below it (hidden files and directories such as
  ``.git`` are skipped), each hashed;
- a single data file (e.g. a ``.parquet`` or ``.jsonl``): that file, hashed;
- a YAML file (``.yaml``/``.yml``) describing the dataset::

      format: c-files            # optional: the benchmark's name for the layout
      location: ./my-programs    # a directory (or file) relative to this YAML file
      # or a Hugging Face Hub repository, fetched like a dataset entry:
      # location:
      #   hf: owner/name
      #   revision: <commit sha>
      #   repo_type: dataset     # optional (dataset | model)
      #   files: [data/train.parquet]   # or {path, sha256, size} mappings
      license: MIT               # optional
      citation: ...              # optional
      description: ...           # optional

The result is a :class:`LocalDataset`, a :class:`~harness.datasets.core.FetchedDataset`
with the same attributes (``dataset.name`` is the absolute path given, ``dataset.source``
is ``local`` with the absolute path and no revision, or the Hub repository and revision
the YAML names). Its provenance records that path and the sha256 of every file, never a
dataset entry's name or revision it did not come from.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from .core import Dataset, DatasetError, FetchedDataset, FileRef, Source, sha256_file
from .entries import Bad, bad_file, file_refs, load_yaml, unknown_keys
from .fetcher import fetch_dataset

YAML_SUFFIXES = (".yaml", ".yml")
_KEYS = ("format", "location", "license", "citation", "description")
_HF_KEYS = ("hf", "revision", "repo_type", "files")
_FORMAT = re.compile(r"^[a-z0-9][a-z0-9._-]*$")


@dataclass
class LocalDataset(FetchedDataset):
    """A user's dataset as opened by :func:`open_dataset`; ``descriptor`` is the YAML file
    that described it (None for a bare directory or file) and ``descriptor_sha256`` its
    hash."""

    descriptor: Path | None = None
    descriptor_sha256: str | None = None

    def provenance(self) -> dict:
        """:meth:`FetchedDataset.provenance` plus ``files`` (path -> sha256 of every file)
        and, when a YAML file described the dataset, ``descriptor`` ``{path, sha256}``."""
        out = super().provenance()
        out["files"] = dict(sorted(self.sha256.items()))
        if self.descriptor is not None:
            out["descriptor"] = {"path": str(self.descriptor), "sha256": self.descriptor_sha256}
        return out


def _scan(target: Path) -> list[tuple[str, Path]]:
    """(relative POSIX path, path) of every regular file of ``target``, sorted; a file is
    itself. Hidden files and directories (name starting with ``.``) are skipped, and
    symbolic links to directories are not followed."""
    if target.is_file():
        return [(target.name, target)]
    out = []
    for top, dirs, names in os.walk(target):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in names:
            path = Path(top) / name
            if not name.startswith(".") and path.is_file():
                out.append((path.relative_to(target).as_posix(), path))
    return sorted(out)


def _hashed(target: Path) -> list[tuple[FileRef, Path]]:
    files = _scan(target)
    if not files:
        raise DatasetError(f"{target}: no files (hidden files and directories such as .git are skipped)")
    try:
        return [(FileRef(rel, sha256_file(path), path.stat().st_size), path) for rel, path in files]
    except OSError as exc:
        raise DatasetError(f"{target}: cannot read {exc.filename}: {exc.strerror}") from exc


def _open_path(target: Path, name: str, meta: dict, descriptor: Path | None = None,
               descriptor_sha256: str | None = None) -> LocalDataset:
    hashed = _hashed(target)
    kind = "directory" if target.is_dir() else "file"
    ds = Dataset(name=name, description=meta.get("description") or f"local {kind} {target} ({len(hashed)} files)",
                 source=Source("local", str(target)), files=tuple(ref for ref, _ in hashed),
                 citation=meta.get("citation") or "", license=meta.get("license"), format=meta.get("format"))
    return LocalDataset(ds, target if target.is_dir() else target.parent,
                        {ref.path: path for ref, path in hashed}, {ref.path: ref.sha256 for ref, _ in hashed},
                        {ref.path: "local" for ref, _ in hashed}, descriptor, descriptor_sha256)


def _optional_str(data: dict, key: str, pattern: re.Pattern | None = None) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or (pattern and not pattern.match(value)):
        want = f"matching {pattern.pattern}" if pattern else "non-empty"
        raise Bad(f"{key}: a {want} string is required, got {value!r}", key)
    return value


def _hf_dataset(loc: dict, name: str, meta: dict) -> Dataset:
    unknown_keys(loc, _HF_KEYS, ("location",))
    for key in ("hf", "revision"):
        if not isinstance(loc.get(key), str) or not loc[key].strip():
            raise Bad(f"location.{key} is required (a non-empty string)", "location", key)
    if not loc.get("files"):
        raise Bad("location.files is required: the repo-relative paths to fetch", "location", "files")
    files = file_refs(loc["files"], ("location", "files"))
    try:
        src = Source("hf", loc["hf"], loc["revision"], loc.get("repo_type"))
        return Dataset(name, meta.get("description") or f"{loc['hf']}@{loc['revision']} described by {name}",
                       src, tuple(files), meta.get("citation") or "", meta.get("license"), meta.get("format"))
    except ValueError as exc:
        raise Bad(f"location: {exc}", "location") from None


def _open_yaml(path: Path, data_dir, offline) -> LocalDataset:
    try:
        raw = path.read_bytes()
        text = raw.decode("utf-8")
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    data = load_yaml(path, text)
    try:
        if not isinstance(data, dict):
            raise Bad("a dataset description is a YAML mapping (format, location, license, citation, "
                      "description)")
        unknown_keys(data, _KEYS, ())
        meta = {"format": _optional_str(data, "format", _FORMAT), "license": _optional_str(data, "license"),
                "citation": _optional_str(data, "citation"), "description": _optional_str(data, "description")}
        loc = data.get("location")
        if isinstance(loc, str) and loc.strip():
            target = Path(os.path.normpath(path.parent / Path(loc).expanduser()))
            if not target.exists():
                raise Bad(f"location: no such directory or file: {target}", "location")
            hf = None
        elif isinstance(loc, dict):
            hf = _hf_dataset(loc, str(path), meta)
        else:
            raise Bad("location is required: a directory relative to this file, or a mapping "
                      "{hf: owner/name, revision, files}", "location")
    except Bad as bad:
        raise bad_file(path, text, bad) from None
    digest = hashlib.sha256(raw).hexdigest()
    if hf is None:
        return _open_path(target, str(path), meta, path, digest)
    got = fetch_dataset(hf, data_dir=data_dir, offline=offline)
    return LocalDataset(got.dataset, got.root, got.files, got.sha256, got.locations, path, digest)


def open_dataset(path: str | Path, *, data_dir: str | Path | None = None,
                 offline: bool | None = None) -> LocalDataset:
    """Open a user's own dataset: a directory, a single data file, or a YAML description
    (see the module docstring). ``data_dir``/``offline`` apply to a Hub location only.

    Returns:
        A :class:`LocalDataset`: ``root`` (the directory; a single file's parent),
        ``files`` (relative POSIX path -> Path), ``sha256`` (path -> hex), ``dataset``
        (``name`` = the absolute path given, ``source``, ``format`` or None) and
        ``provenance()``.

    Raises:
        DatasetError: no such path, no file in it, an unreadable file, or a bad YAML
            description (names the file and line); for a Hub location whatever
            :func:`harness.datasets.fetch_dataset` raises (DatasetUnavailable, HashMismatch).
    """
    target = Path(os.path.normpath(Path(path).expanduser().absolute()))
    if target.is_dir():
        return _open_path(target, str(target), {})
    if not target.is_file():
        raise DatasetError(f"{target}: no such directory or file")
    if target.suffix.lower() in YAML_SUFFIXES:
        return _open_yaml(target, data_dir, offline)
    return _open_path(target, str(target), {})


def _guess_source(directory: Path) -> dict:
    """The entry's ``source`` of a directory laid out as a cache or mirror is
    (``.../github/<owner>/<repo>/<commit>``, ``.../hf/<datasets|models>/<owner>/<name>/<rev>``);
    otherwise a github source with the repo and revision left empty to fill in."""
    parts = directory.parts
    if len(parts) >= 5 and parts[-4] == "github":
        return {"kind": "github", "repo": f"{parts[-3]}/{parts[-2]}", "revision": parts[-1]}
    if len(parts) >= 6 and parts[-5] == "hf" and parts[-4] in ("datasets", "models"):
        out = {"kind": "hf", "repo": f"{parts[-3]}/{parts[-2]}", "revision": parts[-1]}
        if parts[-4] == "models":
            out["repo_type"] = "model"
        return out
    return {"kind": "github", "repo": None, "revision": None}


def pin_entry(path: str | Path, *, name: str | None = None) -> dict:
    """The dataset entry for directory ``path``: every regular file below it (hidden ones
    skipped) with its sha256 and size, in path order; print it with
    :func:`harness.datasets.dump_entry` (``verikit datasets pin PATH``).

    The source is read from the path when it is laid out as a cache or mirror is
    (``<root>/github/<owner>/<repo>/<commit>``...); otherwise its ``repo`` and
    ``revision`` are None, and ``description`` and ``citation`` are empty: an entry file
    does not load until they are filled in. ``name`` defaults to the repository's name
    (lower case) or the directory's name.

    Raises:
        DatasetError: ``path`` is not a directory, holds no file, or a file is unreadable.
    """
    directory = Path(os.path.normpath(Path(path).expanduser().absolute()))
    if not directory.is_dir():
        raise DatasetError(f"{directory}: not a directory")
    source = _guess_source(directory)
    default = source["repo"].split("/")[1].lower() if source["repo"] else directory.name
    return {"name": name or default, "description": "", "source": source, "citation": "", "license": None,
            "files": [{"path": ref.path, "sha256": ref.sha256, "size": ref.size} for ref, _ in _hashed(directory)]}
