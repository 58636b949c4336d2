"""Atomic writes (temporary file in the same folder, then rename, with the umask's
permissions): text, bytes, and JSON validated against its schema first."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path

from .schema import validate


def write_json_atomic(path: Path, obj, *, kind: str | None = None) -> None:
    """Validate (if ``kind``) then write ``obj`` as indented JSON via temp file + rename.

    Raises:
        ValidationError: the document is invalid; nothing is written.
    """
    if kind:
        validate(kind, obj, str(path))
    write_text_atomic(path, json.dumps(obj, indent=2, sort_keys=True, allow_nan=False) + "\n")


def umask() -> int:
    """The process's umask, read without changing it (Linux: ``/proc/self/status``)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    old = os.umask(0o022)  # elsewhere: set and restore (not atomic, but only where /proc is missing)
    os.umask(old)
    return old


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temporary file in the same folder, then
    rename), with the umask's permissions."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o666 & ~umask())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (temp file in the same directory, fsync, rename),
    with the mode an ordinary ``open`` would give (0666 less the umask), not the temp
    file's 0600."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~umask())
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
