"""The shared-filesystem store of a batch run (:class:`DirStore`, SLURM), and
:func:`open_store`, the store of a run from its URI or path.

Written for NFS and the cluster filesystems (Lustre, GPFS, BeeGFS, CephFS), whose
clients cache attributes and directory listings for seconds to a minute. Correctness
rests only on what those keep:

- a file is written under a temporary name starting with ``.`` in its final directory,
  flushed, ``fsync``'d, closed and then renamed over its final name (a rename is atomic on
  the server); a reader opens it by name, and close-to-open consistency gives it the
  whole content; readers ignore names starting with ``.``;
- one file per job key (``records/<key>.json``): a job that runs twice (a stale listing,
  a requeued task) writes the same name again, so there is never a duplicate;
- nothing reads modification times, and a listing is never taken as complete: a stale
  listing only makes a worker run a job again, or ``batch status``/``collect`` miss a
  record written on another node moments ago (they say so; running them again sees it).
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path, PurePosixPath

from .files import umask
from .s3 import S3Store
from .batchstore import Store


class DirStore(Store):
    """A batch run's files in a directory on a filesystem every node mounts at the same
    path (a :class:`~.store.Store`; see the module docstring for what it relies on).

    Args:
        root: the run's directory, absolute.

    Raises:
        ValueError: ``root`` is not absolute (workers on other nodes resolve it, not this
            shell's directory).
    """

    def __init__(self, root: str | Path):
        root = Path(root)
        if not root.is_absolute():
            raise ValueError(f"{root}: a shared-filesystem store must be an absolute path (the workers on the "
                             f"compute nodes resolve it, not this directory)")
        self.root = root
        self.uri = str(root)
        self.requests = 0

    def _path(self, name: str) -> Path:
        rel = PurePosixPath(name)
        if rel.is_absolute() or ".." in rel.parts or not rel.parts:
            raise ValueError(f"{name!r}: not a file name inside the store")
        return self.root.joinpath(*rel.parts)

    def put_bytes(self, name: str, data: bytes) -> None:
        self.requests += 1
        path = self._path(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666 & ~umask())
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        with contextlib.suppress(OSError):  # the rename itself on disk (a local filesystem; NFS commits on close)
            dfd = os.open(path.parent, os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)

    def get_bytes(self, name: str) -> bytes | None:
        self.requests += 1
        try:
            return self._path(name).read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            return None

    def exists(self, name: str) -> bool:
        self.requests += 1
        return self._path(name).is_file()

    def names(self, under: str = "") -> list[str]:
        """Names (relative to the run, ``/``-separated) of the complete files under
        ``under``: temporary files and anything else whose name starts with ``.`` are
        left out."""
        self.requests += 1
        top = self._path(under) if under.strip("/") else self.root
        out = []
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            rel = Path(dirpath).relative_to(self.root).as_posix()
            out += [f"{rel}/{f}" if rel != "." else f for f in sorted(filenames) if not f.startswith(".")]
        return out

    def delete(self, name: str) -> None:
        self.requests += 1
        self._path(name).unlink(missing_ok=True)


def open_store(uri: str, client=None) -> Store:
    """The store at ``uri``: :class:`~.s3.S3Store` for ``s3://bucket/prefix`` (``client``:
    a boto3 S3 client, default made from the environment), else :class:`DirStore` for an
    absolute directory.

    Raises:
        ValueError: an S3 URI without a bucket, or a relative path.
    """
    if uri.startswith("s3://"):
        return S3Store(uri, client)
    return DirStore(uri)
