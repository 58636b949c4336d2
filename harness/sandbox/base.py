"""What every sandbox implementation shares: the error type and the scratch-directory
helpers for a job's input and output files."""

from __future__ import annotations

from pathlib import Path


def inside(root: Path, rel: str) -> Path:
    """``root / rel``, refusing absolute paths and ``..`` that would leave ``root``.

    Raises:
        ValueError: the path escapes the job's scratch directory.
    """
    target = (root / rel).resolve()
    if not target.is_relative_to(root.resolve()):
        raise ValueError(f"path {rel!r} leaves the job's scratch directory")
    return target


def write_files(root: Path, files: dict[str, str | bytes] | None) -> None:
    """Write a job's input files (relative path -> str as UTF-8, or bytes) under ``root``.

    Raises:
        ValueError: a path escapes ``root``.
    """
    for rel, content in (files or {}).items():
        target = inside(root, rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)


def collect_files(root: Path, names) -> dict[str, bytes]:
    """The output files ``names`` that exist under ``root`` (relative path -> bytes).

    Raises:
        ValueError: a name escapes ``root``.
    """
    found = {}
    for rel in names:
        path = inside(root, rel)
        if path.is_file():
            found[rel] = path.read_bytes()
    return found


class SandboxError(RuntimeError):
    """The sandbox itself failed (our side): counts as ``infra_error``, is retried."""
