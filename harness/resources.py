"""Where the kit's own files are, whether it runs from a checkout or from an installed
wheel, and which kit it is (version, git state).

The kit reads, at run time, files that live at the top of its repository, beside the
package: the JSON Schemas (``schemas/``), the toolchain pins and image recipes
(``images/``: ``toolchains.json``, the Containerfiles, the ntp4vc-rocq shim), the Nix
expressions (``flake.nix``, ``nix/``), the papers' figures (``results/published/``) and
the base-image script (``scripts/make-base-image.sh``). The wheel carries the same files
at the same relative paths under ``harness/_kit/`` (pyproject.toml maps the package
``harness._kit`` to the repository's root and lists them as its package data), so
:func:`kit_file` gives one path for both: the file in the checkout, or its packaged copy.

Some things exist only in a checkout: the committed reference runs
(``results/reproduced/``: the artifact bundle's expected runs, ``nox -s main``'s), the
license file, the sources a wheel is built from, the git state. :func:`checkout_file`
names such a file and raises :class:`NotInCheckout` (the CLI's exit 2) when the kit is an
installed wheel; :func:`git_state` is ``(None, None)`` then.

Imports nothing of the package (layer 0)."""

from __future__ import annotations

import tomllib
from functools import lru_cache
from pathlib import Path

from . import __version__

#: The package directory (``.../harness``).
PACKAGE = Path(__file__).resolve().parent
#: Where a wheel puts the kit's top-level files (``harness/_kit/<path in the checkout>``).
PACKAGED = PACKAGE / "_kit"


class NotInCheckout(FileNotFoundError):
    """A file or directory that only a checkout of verikit has was asked of a kit
    installed from a wheel; the message names it and says where to get it."""


@lru_cache(maxsize=1)
def checkout() -> Path | None:
    """The root of the verikit source tree the running package belongs to (a git
    checkout, an unpacked sdist, a source archive): the package's parent directory when
    it holds a ``pyproject.toml`` whose project is ``verikit``; None for an installed
    wheel (the package's parent is then ``site-packages``)."""
    root = PACKAGE.parent
    try:
        project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8")).get("project") or {}
    except (OSError, tomllib.TOMLDecodeError):
        return None
    return root if project.get("name") == "verikit" else None


def installed() -> str:
    """How the running kit is installed: ``"checkout"`` (a source tree, on ``PYTHONPATH``
    or ``pip install -e``) or ``"wheel"`` (a built distribution in ``site-packages``)."""
    return "checkout" if checkout() else "wheel"


def kit_root() -> Path:
    """The directory the kit's top-level files are under: the checkout's root, or the
    installed package's ``_kit/``."""
    return checkout() or PACKAGED


def kit_file(rel: str) -> Path:
    """The kit file at ``rel`` (a path relative to the repository's root, e.g.
    ``"schemas/run.schema.json"``, ``"images/toolchains.json"``): in the checkout, or its
    copy in the installed wheel. The path is not checked: a reader's own error names it."""
    return kit_root() / rel


def checkout_file(rel: str, what: str) -> Path:
    """A file or directory only a checkout has (``rel`` relative to its root; ``what``
    says what it is, for the message), e.g. ``checkout_file("results/reproduced", "the
    committed reference runs")``.

    Raises:
        NotInCheckout: the kit is installed from a wheel (the message names ``rel`` and
            ``what``, and says to use a checkout).
    """
    root = checkout()
    if root is None:
        raise NotInCheckout(f"{rel}: {what} are in a checkout of verikit (its git repository), not in the installed "
                            f"wheel ({PACKAGE}): run this from a checkout")
    return root / rel


def git_state(root: Path | None = None) -> tuple[str | None, bool | None]:
    """``(HEAD commit, dirty)`` of the kit's own checkout (``root``, default
    :func:`checkout`), read with dulwich (no process started): dirty when a tracked file
    differs from HEAD or the index, or an untracked file that .gitignore does not ignore
    exists. ``(None, None)`` for an installed wheel, a source tree that is not a git
    checkout (no ``.git`` at its root: a repository around it is never asked), or a
    repository dulwich cannot read."""
    root = root if root is not None else checkout()
    if root is None or not (root / ".git").exists():
        return None, None
    try:
        from dulwich import porcelain
        from dulwich.repo import Repo

        with Repo(str(root)) as repo:
            commit = repo.head().decode()
            return commit, _dirty(porcelain, repo)
    except Exception:  # noqa: BLE001  (no dulwich, a repo dulwich cannot read: unknown)
        return None, None


def _changed(status) -> bool:
    return bool(any(status.staged[k] for k in ("add", "delete", "modify")) or status.unstaged or status.untracked)


def _dirty(porcelain, repo) -> bool:
    """dulwich's ``status(untracked_files="normal")`` has a file staged, unstaged or
    untracked. Read in steps, each only when the one before finds nothing: the tracked
    files (``untracked_files="no"``); then a walk for untracked files that lists them one
    by one (``"all"``, stopped at the first), which finds none when "normal" finds none and
    skips "normal"'s scan of the whole index for every directory (most of the time of a
    status in a checkout of thousands of files); only when it finds one does the "normal"
    status decide."""
    if _changed(porcelain.status(repo, untracked_files="no")):
        return True
    try:
        first = next(iter(porcelain.get_untracked_paths(repo.path, repo.path, repo.open_index(), exclude_ignored=True,
                                                        untracked_files="all")), None)
    except Exception:  # noqa: BLE001  (a dulwich without this walk: the "normal" status decides)
        first = ""
    return first is not None and _changed(porcelain.status(repo, untracked_files="normal"))


def kit_info(git: tuple[str | None, bool | None] | None = None) -> dict:
    """What run.json (and a batch manifest, an artifact's claims.json) records of the kit:
    ``{"version", "git_commit": hex or None, "git_dirty": bool or None, "installed":
    "checkout" | "wheel"}``; ``git``: ``(commit, dirty)`` already read (default
    :func:`git_state` now)."""
    commit, dirty = git if git is not None else git_state()
    return {"version": __version__, "git_commit": commit, "git_dirty": dirty, "installed": installed()}
