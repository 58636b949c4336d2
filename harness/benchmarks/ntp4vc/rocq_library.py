"""The Rocq side of NTP4VC: the library closure of each task, the adaptation of the Rocq
9.0 + stdpp 1.12 files to Coq 8.20.1 + stdpp 1.11 (a load-path shim, no rewriting), and
the spec of the ``ntp4vc-rocq`` image (the rocq toolchain image with the library compiled
once). Evidence: ``harness/benchmarks/ntp4vc/docs-rocq-adaptation.md``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Callable

from ... import resources
from ...model import canonical_json, sha256_text
from ...verifiers import rocq as rocq_mod
from .data import ManifestError, Task, all_paths, load_tasks, path_of

#: The shim sources (``images/ntp4vc-rocq/shim``, the checkout's or the wheel's).
ROCQ_SHIM_DIR = resources.kit_file("images/ntp4vc-rocq/shim")
#: The adaptation, recorded in every run manifest of the ``rocq`` language.
ROCQ_ADAPTATION = {
    "target": "Rocq 9.0.0 + stdpp 1.12.0 (generation/rocq/dune-project)",
    "runs_on": "Coq 8.20.1 + stdpp 1.11.0 (Debian trixie, rocq image)",
    "shim": ("images/ntp4vc-rocq/shim: 15 files Stdlib/<M>.v = 'Require Export Coq.<M>.' for the 15 "
             "'From Stdlib' modules the files use, Stdlib/Reals/Zfloor.v (Zfloor/Zceil, definitions "
             "of Rocq 9.0's Stdlib.Reals.Zfloor, re-exported by Stdlib/Reals/Reals.v), "
             "stdpp_compat/list_relations.v = 'From stdpp Require Export list.' (split out of "
             "list.v in stdpp 1.12), bound with -Q shim/Stdlib Stdlib -Q shim/stdpp_compat stdpp"),
    "load_path": "one -Q <dir> <name> per dune (coq.theory (name <name>)) stanza of the task's closure",
    "symlinks": ("generation/rocq/Why3/Base.v is a git symlink stored as text in the pinned files; "
                 "its target lib/Rocq4Why3/Why3/Base.v is used"),
    "statements_rewritten": False,
}
IMAGE_NAME = "ntp4vc-rocq"
#: Where the ``ntp4vc-rocq`` image keeps the shim and the compiled NTP4VC library (the
#: rocq verifier gets the ``-Q`` directories under it as the job's ``load_path``).
LIBRARY_ROOT = "/opt/verikit/ntp4vc"
#: Library files (repo-relative) that did not compile at image build, one a line, in the image.
FAILED_LIST = "/opt/verikit/ntp4vc/failed.lst"
_ROCQ_EXTERNAL_ROOTS = ("Stdlib", "stdpp", "Coq", "Ltac2", "Hammer")
_REQUIRE = re.compile(r"^\s*Require\s+(?:Import\s+|Export\s+)?([\w.']+)\s*\.\s*$", re.M)
_DUNE_THEORY = re.compile(r"\(coq\.theory\b.*?\(name\s+([^\s()]+)\)", re.S)


@dataclass
class RocqLibrary:
    """The Rocq side of the dataset: theories, the library closure of each task.

    Attributes:
        theories: logical name -> repo-relative directory (from the dune ``coq.theory``
            stanzas of the pinned files).
        files: repo-relative path -> text of every pinned ``.v`` file (git symlinks
            stored as text are followed, see :data:`ROCQ_ADAPTATION`).
    """

    theories: dict[str, str]
    files: dict[str, str]
    #: theory name -> its place in :attr:`theories`, made from the dict ``_order_of``
    _order: dict = field(default_factory=dict, init=False, repr=False, compare=False)
    _order_of: dict | None = field(default=None, init=False, repr=False, compare=False)

    @classmethod
    def load(cls, fetched) -> "RocqLibrary":
        """Read the dune stanzas and ``.v`` files of ``fetched`` (a fetched dataset or a
        directory laid out like the repository)."""
        paths = all_paths(fetched)
        theories: dict[str, str] = {}
        for rel in paths:
            if rel.endswith("/dune") and ("/rocq/" in rel or rel.startswith("generation/rocq/")):
                text = path_of(fetched, rel).read_text(encoding="utf-8")
                for name in _DUNE_THEORY.findall(text):
                    theories[name] = str(PurePosixPath(rel).parent)
        files = {}
        for rel in paths:
            if rel.endswith(".v"):
                files[rel] = path_of(fetched, rel).read_text(encoding="utf-8")
        for rel, text in list(files.items()):  # a git symlink checked out as a text file
            target = text.strip()
            if "\n" not in target and target.endswith(".v") and target.startswith("../"):
                real = str(PurePosixPath(os.path.normpath(str(PurePosixPath(rel).parent / target))))
                if real in files:
                    files[rel] = files[real]
        return cls(theories, files)

    def resolve(self, logical: str) -> str | None:
        """The repo-relative ``.v`` file of module ``logical`` (``Why3.Base``), or None.
        Follows coqc's ``-Q dir name`` rule: ``name.sub.M`` is ``dir/sub/M.v``; when
        several theories' names are prefixes of ``logical`` and have the file, the one
        declared first (in :attr:`theories`' order) wins. Each dotted prefix is looked up
        by name (the pinned data has about 700 theories and a run resolves every task's
        closure to fingerprint its image)."""
        parts = logical.split(".")
        found = []
        for cut in range(1, len(parts)):
            name = ".".join(parts[:cut])
            if name in self.theories:
                rel = f"{self.theories[name]}/{'/'.join(parts[cut:])}.v"
                if rel in self.files:
                    found.append((name, rel))
        if len(found) > 1:  # several theories provide it (frequent in the pinned data): the first declared
            if self._order_of is not self.theories or len(self._order) != len(self.theories) \
                    or any(n not in self._order for n, _ in found):
                self._order, self._order_of = {n: i for i, n in enumerate(self.theories)}, self.theories
            found.sort(key=lambda f: self._order[f[0]])
        return found[0][1] if found else None

    def requires(self, text: str) -> list[str]:
        """Modules of this dataset a file loads (``Require Import A.B.`` lines; the
        ``From Stdlib``/``From stdpp`` forms and Coq's own libraries are external)."""
        return [m for m in _REQUIRE.findall(text) if m.split(".")[0] not in _ROCQ_EXTERNAL_ROOTS]

    def closure(self, rel: str, text: str | None = None) -> tuple[list[str], list[str]]:
        """``(library files in dependency order, missing modules)`` for the file ``rel``
        (its own text may be given, e.g. a candidate's). Missing modules are the ones no
        pinned file provides (e.g. a library file missing from a user's own copy of the dataset)."""
        order: list[str] = []
        missing: list[str] = []
        seen: set[str] = set()

        def visit(path: str, body: str) -> None:
            for mod in self.requires(body):
                dep = self.resolve(mod)
                if dep is None:
                    if mod not in missing:
                        missing.append(mod)
                    continue
                if dep not in seen:
                    seen.add(dep)
                    visit(dep, self.files[dep])
                    order.append(dep)

        visit(rel, self.files[rel] if text is None else text)
        return order, missing

    def theory_of(self, rel: str) -> tuple[str, str] | None:
        """``(logical name, directory)`` of the theory containing file ``rel``."""
        best = None
        for name, directory in self.theories.items():
            if rel.startswith(directory + "/") and (best is None or len(directory) > len(best[1])):
                best = (name, directory)
        return best

    def load_path(self, files: list[str], root: str) -> list[list[str]]:
        """``[[root/dir, name], ...]``: the shim then one entry per theory of ``files``."""
        out = [[f"{root}/shim/Stdlib", "Stdlib"], [f"{root}/shim/stdpp_compat", "stdpp"]]
        for name, directory in sorted({self.theory_of(f) for f in files if self.theory_of(f)}):
            out.append([f"{root}/{directory}", name])
        return out


def rocq_library_files(lib: RocqLibrary, tasks: list[Task]) -> list[str]:
    """Every library file some task needs, in a dependency order (each file after the
    files it requires)."""
    order: list[str] = []
    for t in tasks:
        for f in lib.closure(t.rocq)[0]:
            if f not in order:
                order.append(f)
    return order


ROCQ_IMAGE_CONTAINERFILE = """\
# verikit derived image: the rocq toolchain image + the NTP4VC Rocq library (shim and
# every library file a test task needs, from the pinned files) compiled once with coqc.
ARG BASE
FROM ${BASE}
COPY ntp4vc /opt/verikit/ntp4vc
RUN bash /opt/verikit/ntp4vc/build.sh > /opt/verikit/ntp4vc/build.log 2>&1 \\
 || (tail -n 40 /opt/verikit/ntp4vc/build.log; exit 1); chmod -R a+rX /opt/verikit
"""


def rocq_library_image(mode: str, fetched, fingerprint: Callable[[str], str]) -> dict:
    """Spec of the ``ntp4vc-rocq`` image (the derived image of ``mode`` ``rocq``, the only
    one) for :func:`harness.sandbox.images.build_derived`.

    ``fingerprint("rocq")``: the rocq toolchain image's fingerprint
    (``sandbox.images.fingerprint``), part of this image's. Context:
    ``ntp4vc/shim/**`` (images/ntp4vc-rocq/shim), every library file of a test task's
    closure at its repo path under ``ntp4vc/``, and ``ntp4vc/build.sh``, which compiles
    the shim, then the library level by level (a file after the files it requires; one
    level's files in parallel with ``xargs -P $(nproc)``).

    Raises:
        ManifestError: a library path with characters unsafe in the shell script.
    """
    base_fingerprint = fingerprint("rocq")
    lib = RocqLibrary.load(fetched)
    files = rocq_library_files(lib, load_tasks(fetched))
    level: dict[str, int] = {}
    for f in files:  # dependency order: requirements come first
        deps = [d for d in (lib.resolve(m) for m in lib.requires(lib.files[f])) if d]
        level[f] = 1 + max((level[d] for d in deps), default=-1)
    for f in files:
        if not re.fullmatch(r"[\w./-]+", f):
            raise ManifestError(f"library path {f!r} has characters unsafe in build.sh")
    shim = {str(p.relative_to(ROCQ_SHIM_DIR)): p.read_bytes() for p in sorted(ROCQ_SHIM_DIR.rglob("*.v"))}
    quiet = f"-q -w {rocq_mod.QUIET_WARNINGS}"
    load_path = " ".join(f"-Q {d.split(LIBRARY_ROOT + '/', 1)[1]} {n}"
                         for d, n in lib.load_path(files, LIBRARY_ROOT))
    stdlib_shim = sorted(p for p in shim if p.startswith("Stdlib/") and p != "Stdlib/Reals/Zfloor.v")
    lines = ["set -eu", f"cd {LIBRARY_ROOT}", 'echo "coqc $(coqc --version | head -n 1)"',
             f"coqc {quiet} -Q shim/Stdlib Stdlib shim/Stdlib/Reals/Zfloor.v"]
    lines += [f"coqc {quiet} -Q shim/Stdlib Stdlib shim/{p}" for p in stdlib_shim]
    lines.append(f"coqc {quiet} -Q shim/stdpp_compat stdpp shim/stdpp_compat/list_relations.v")
    # A library file that does not compile with this Coq is recorded in FAILED_LIST (its
    # messages in the log) and the build goes on: the tasks that need it fail to load with
    # Coq's own error at run time, and the report lists them.
    lines.append(f": > {FAILED_LIST}")
    lines.append(f"one() {{ coqc {quiet} {load_path} \"$1\" > \"$1.log\" 2>&1 "
                 f"|| {{ echo \"$1\" >> {FAILED_LIST}; echo \"FAILED $1\"; cat \"$1.log\"; }}; }}")
    lines.append("export -f one")
    for lv in range(max(level.values(), default=-1) + 1):
        batch = [f for f in files if level[f] == lv]
        lines.append(f"echo 'level {lv}: {len(batch)} file(s)'")
        lines.append("printf '%s\\n' " + " ".join(batch)
                     + ' | xargs -P "$(nproc)" -n 1 bash -c \'one "$0"\'')
    lines.append(f"echo \"library compiled: $(({len(files)} - $(wc -l < {FAILED_LIST}))) of {len(files)} files\"")
    script = "\n".join(lines) + "\n"
    ctx = {f"ntp4vc/shim/{p}": b for p, b in shim.items()}
    ctx.update({f"ntp4vc/{f}": lib.files[f].encode("utf-8") for f in files})
    ctx["ntp4vc/build.sh"] = script.encode()
    digests = {p: sha256_text(b) for p, b in sorted(ctx.items())}
    fp = sha256_text(canonical_json({"base": base_fingerprint, "files": digests,
                                     "containerfile": ROCQ_IMAGE_CONTAINERFILE}))
    dataset = getattr(fetched, "dataset", None)
    source = getattr(dataset, "source", None)
    manifest = {"name": IMAGE_NAME, "dataset": {"name": getattr(dataset, "name", "ntp4vc"),
                                                "revision": getattr(source, "revision", None)},
                "library_files": len(files), "files_sha256": digests, "adaptation": ROCQ_ADAPTATION,
                "root": LIBRARY_ROOT}
    return {"name": IMAGE_NAME, "base_toolchain": "rocq", "fingerprint": fp, "files": ctx,
            "containerfile": ROCQ_IMAGE_CONTAINERFILE, "manifest": manifest}
