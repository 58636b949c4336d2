"""The Lean and Isabelle import closures of NTP4VC's tasks, resolved from pinned files.

The Rocq side (with its load path and image) is :mod:`.rocq_library`. This module answers,
for Lean and Isabelle, "which repository files does a task load, and which of its imports
come from outside the repository" without running either tool; nothing here is judged by a
prover (Lean and Isabelle cannot be installed on the project's machines, see
``harness/benchmarks/ntp4vc/docs-rocq-adaptation.md``). A test checks that all 600 tasks
resolve in both languages from the pinned files.

Resolution rules, from the NTP4VC repository at the pinned commit (dcfadfaa):

- **Lean** (``import A.B.C``): ``Why3`` and ``Why3.*`` are the Lake library ``Why3`` of
  ``generation/lean/lakefile.toml`` (``srcDir = "."``), so ``Why3.X.Y`` is
  ``generation/lean/Why3/X/Y.lean``; every other repository module is named after its
  place under ``data/why3`` (the NTP4VC README builds tasks with ``cd data/why3 && lake
  build``), so ``frama_c.verker.strlen.lib.lean.Compound.Compound`` is
  ``data/why3/frama_c/verker/strlen/lib/lean/Compound/Compound.lean``. ``Mathlib`` (v4.21.0,
  required by the lakefile) and Lean's own ``Init``/``Std``/``Lean`` are external.
- **Isabelle** (``theory T imports "..."``): a quoted path (``"../../lib/isabelle/X_X"``) is
  a theory file relative to the importing file (``.thy`` appended, Isabelle's rule for
  file-qualified imports); ``S.T`` where ``S`` is a session declared by a ``ROOT`` file of
  the repository is ``<dir of that ROOT>/T.thy``; ``Main``/``Complex_Main`` and sessions no
  repository ``ROOT`` declares (the Isabelle 2024 distribution's ``HOL-*`` and the AFP
  entries ``NTP4Verif``'s ``ROOT`` lists) are external.

Git symlinks stored as text files (``lib/Lean4Why3/Why3/Base.lean`` holds
``../../../generation/lean/Why3/Base.lean``) are followed to their target.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from .data import Task, all_paths, path_of

#: Lean module roots that are not in the repository (Mathlib v4.21.0 and Lean's own).
LEAN_EXTERNAL_ROOTS = ("Mathlib", "Init", "Std", "Lean", "Aesop", "Batteries", "Qq")
#: Isabelle theories named without a session that come with Isabelle/HOL.
ISABELLE_BUILTIN = ("Main", "Complex_Main", "Pure")

_LEAN_IMPORT = re.compile(r"^[ \t]*import[ \t]+([\w.«»']+(?:[ \t]+[\w.«»']+)*)[ \t]*$", re.M)
_ISA_HEADER = re.compile(r"\btheory\s+\S+\s+imports\s+(.*?)\s*\bbegin\b", re.S)
_ISA_NAME = re.compile(r'"([^"]+)"|([^\s"]+)')
_ISA_ROOT_SESSION = re.compile(r"^\s*session\s+\"?([\w\-]+)\"?", re.M)


@dataclass
class Closure:
    """One task's closure in one language.

    Attributes:
        files: repository-relative paths the task loads, in a dependency order (a file after
            the files it imports), the task file excluded.
        external: imports from outside the repository (Lean module names, Isabelle
            ``Session.Theory`` or ``Main``), sorted.
        missing: imports that should be repository files but no pinned file provides
            (``"<importing file>: <import>"``), in order of discovery; empty when the task
            resolves.
    """

    files: list[str] = field(default_factory=list)
    external: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


def _read(fetched, rel: str, cache: dict[str, str]) -> str:
    if rel not in cache:
        text = path_of(fetched, rel).read_text(encoding="utf-8")
        target = text.strip()
        if "\n" not in target and target.startswith("../"):  # git symlink stored as text
            real = os.path.normpath(str(PurePosixPath(rel).parent / target))
            text = path_of(fetched, real).read_text(encoding="utf-8")
        cache[rel] = text
    return cache[rel]


class _Resolver:
    """Depth-first closure over a file graph; subclasses say what a file imports."""

    def __init__(self, fetched) -> None:
        self.fetched = fetched
        self.paths = set(all_paths(fetched))
        self._text: dict[str, str] = {}

    def text(self, rel: str) -> str:
        """The text of repository file ``rel`` (a git symlink stored as text followed), read
        once per resolver."""
        return _read(self.fetched, rel, self._text)

    def imports(self, rel: str, text: str) -> list[tuple[str, str | None]]:  # pragma: no cover
        """``[(import as written, repo path or None for external)]``."""
        raise NotImplementedError

    def closure(self, rel: str) -> Closure:
        """The closure of the repository file ``rel`` (a task file)."""
        out = Closure()
        seen: set[str] = set()
        external: set[str] = set()

        def visit(path: str) -> None:
            for name, dep in self.imports(path, self.text(path)):
                if dep is None:
                    external.add(name)
                elif dep not in self.paths:
                    out.missing.append(f"{path}: {name}")
                elif dep not in seen:
                    seen.add(dep)
                    visit(dep)
                    out.files.append(dep)

        visit(rel)
        out.external = sorted(external)
        return out


class LeanLibrary(_Resolver):
    """Lean 4 import resolution over the pinned files (rules in the module docstring)."""

    def imports(self, rel: str, text: str) -> list[tuple[str, str | None]]:
        """``[(module, repo path or None)]`` of the ``import`` lines of ``text``."""
        out = []
        for group in _LEAN_IMPORT.findall(text):
            for module in group.split():
                root = module.split(".")[0]
                if root in LEAN_EXTERNAL_ROOTS:
                    out.append((module, None))
                elif root == "Why3":
                    out.append((module, f"generation/lean/{module.replace('.', '/')}.lean"))
                else:
                    out.append((module, f"data/why3/{module.replace('.', '/')}.lean"))
        return out


class IsabelleLibrary(_Resolver):
    """Isabelle theory-import resolution over the pinned files (rules in the module
    docstring). ``sessions``: session name -> repository directory of its ``ROOT``."""

    def __init__(self, fetched) -> None:
        super().__init__(fetched)
        self.sessions: dict[str, str] = {}
        for rel in sorted(self.paths):
            if PurePosixPath(rel).name == "ROOT":
                for name in _ISA_ROOT_SESSION.findall(path_of(fetched, rel).read_text(encoding="utf-8")):
                    self.sessions.setdefault(name, str(PurePosixPath(rel).parent))

    def imports(self, rel: str, text: str) -> list[tuple[str, str | None]]:
        """``[(import, repo path or None)]`` of the theory header of ``text``."""
        code = re.sub(r"\(\*.*?\*\)", " ", text, flags=re.S)
        m = _ISA_HEADER.search(code)
        if m is None:
            return []
        out = []
        for quoted, bare in _ISA_NAME.findall(m.group(1)):
            name = quoted or bare
            if "/" in name:
                out.append((name, os.path.normpath(str(PurePosixPath(rel).parent / name)) + ".thy"))
            elif name in ISABELLE_BUILTIN:
                out.append((name, None))
            elif "." in name and name.split(".", 1)[0] in self.sessions:
                session, theory = name.split(".", 1)
                out.append((name, f"{self.sessions[session]}/{theory}.thy"))
            elif "." in name:
                out.append((name, None))  # a session of the Isabelle distribution or the AFP
            else:  # a theory of the importing file's own directory
                out.append((name, os.path.normpath(str(PurePosixPath(rel).parent / name)) + ".thy"))
        return out


def closures(fetched, tasks: list[Task], language: str) -> dict[str, Closure]:
    """task_id -> :class:`Closure` of the task's file in ``language`` (``lean`` or
    ``isabelle``).

    Raises:
        ValueError: another language (Rocq's closure is :meth:`.RocqLibrary.closure`).
        OSError: a task file or imported file that exists in the listing cannot be read.
    """
    if language not in ("lean", "isabelle"):
        raise ValueError(f"closures: language {language!r} (lean or isabelle)")
    lib = LeanLibrary(fetched) if language == "lean" else IsabelleLibrary(fetched)
    return {t.task_id: lib.closure(t.file(language)) for t in tasks}
