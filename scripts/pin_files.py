#!/usr/bin/env python3
"""Write harness/datasets/pins/<dataset>.files.json: the upstream files a dataset needs
beyond the ones listed inline in its entry file <dataset>.yaml, each with the sha256 and
size computed from the files.

Usage: scripts/pin_files.py ntp4vc|dafny-intent [--root DIR]

``DIR`` is the repository checkout at the pinned commit (default: the first
``VERIKIT_DATA_MIRRORS`` directory that has it). For ntp4vc the list is: the 600 task
files of each language (the three manifests), every library file in the closure of a task
in Rocq, Lean and Isabelle (``harness/benchmarks/ntp4vc/libraries.py``), the whole
per-project library trees ``data/why3/**/lib/{rocq,lean,isabelle}/``, every Isabelle
``ROOT``/``ROOTS`` file (the sessions), the Lake configuration of ``generation/lean``, the
targets of git symlinks among them, every dune file under the Rocq directories (the theory
names), and the ``.mlw`` sources of the pearl items. For dafny-intent: the 166 MBPP-DFY-153
test programs (``MBPP-DFY-153/test/task_id_<N>.dfy``), their 166 implementations
(``MBPP-DFY-153/src``) and the RQ1-RQ3 generation files (``RQs/``); the files listed
inline in dafny-intent.yaml are left out.

The source (repository and commit) is read from ``<dataset>.yaml``, which names the JSON
file in ``files_from``; the entries themselves are not loaded (they need the file being written).
For a whole new entry, ``verikit datasets pin DIR`` prints the YAML.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness import datasets  # noqa: E402
from harness.datasets import entries  # noqa: E402
from harness.benchmarks import ntp4vc  # noqa: E402
from harness.benchmarks.ntp4vc import libraries  # noqa: E402

LIB_LANGS = ("rocq", "lean", "isabelle")


def ntp4vc_paths(root: Path) -> list[str]:
    tasks = ntp4vc.load_tasks(root)
    lib = ntp4vc.RocqLibrary.load(root)
    paths = {getattr(t, lang) for t in tasks for lang in ntp4vc.LANGUAGES}
    paths.update(ntp4vc.rocq_library_files(lib, tasks))
    # the Lean and Isabelle closures of every task (libraries.py), the whole per-project
    # library trees data/why3/**/lib/{rocq,lean,isabelle}/, every Isabelle ROOT/ROOTS (the
    # sessions) and the Lake configuration of generation/lean
    for language in ("lean", "isabelle"):
        for closure in libraries.closures(root, tasks, language).values():
            paths.update(closure.files)
    paths.update(str(p.relative_to(root)) for p in (root / "data" / "why3").rglob("*")
                 if p.is_file() and any(f"/lib/{lang}/" in str(p.relative_to(root)) for lang in LIB_LANGS))
    paths.update(str(p.relative_to(root)) for p in root.rglob("*") if p.name in ("ROOT", "ROOTS"))
    paths.update(f"generation/lean/{n}" for n in ("lakefile.toml", "lean-toolchain", "lake-manifest.json"))
    for rel in list(paths):  # git symlinks stored as text: pin their targets too
        target = (root / rel).read_bytes().strip()
        if b"\n" not in target and target.startswith(b"../") and len(target) < 300:
            paths.add(os.path.normpath(f"{Path(rel).parent}/{target.decode()}"))
    # the Why3 sources of the pearl items (the Auto_level_3 re-run proves goals from them)
    paths.update(str(p.relative_to(root)) for p in (root / "data" / "why3" / "pearl").rglob("*.mlw"))
    paths.update(str(p.relative_to(root)) for p in root.rglob("dune")
                 if "/rocq" in str(p.relative_to(root)) or str(p.relative_to(root)).startswith("generation/rocq"))
    return sorted(paths)


def dafny_intent_paths(root: Path) -> list[str]:
    paths = [p for d in ("test", "src") for p in (root / "MBPP-DFY-153" / d).glob("task_id_*.dfy")]
    paths += (root / "RQs").rglob("*.json")
    return sorted(str(p.relative_to(root)) for p in paths)


def _entry(name: str) -> tuple[datasets.Source, set[str], str]:
    """(source, paths listed inline, files_from name) of entry file ``<name>.yaml``."""
    path = datasets.PINS_DIR / f"{name}.yaml"
    data = entries.load_yaml(path)
    try:
        source = entries.source_from(data.get("source"))
        inline = {f.path for f in entries.file_refs(data.get("files") or [], ("files",))}
    except entries.Bad as bad:
        raise entries.bad_file(path, path.read_text(encoding="utf-8"), bad) from None
    return source, inline, data.get("files_from") or f"{name}.files.json"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dataset", choices=["ntp4vc", "dafny-intent"])
    ap.add_argument("--root", type=Path)
    args = ap.parse_args()
    source, listed, files_from = _entry(args.dataset)
    root = args.root
    if root is None:
        for m in datasets.mirror_dirs():
            if (m / source.layout_prefix()).is_dir():
                root = m / source.layout_prefix()
                break
    if root is None:
        print("no --root and no mirror has the dataset", file=sys.stderr)
        return 2
    paths = ntp4vc_paths(root) if args.dataset == "ntp4vc" else dafny_intent_paths(root)
    files = []
    for rel in paths:
        if rel in listed:
            continue
        data = (root / rel).read_bytes()
        files.append({"path": rel, "sha256": hashlib.sha256(data).hexdigest(), "size": len(data)})
    out = datasets.PINS_DIR / files_from
    out.write_text(json.dumps({"dataset": args.dataset, "source": {"repo": source.repo, "revision": source.revision},
                               "generated_by": "scripts/pin_files.py", "files": files}, indent=0) + "\n")
    print(f"{out}: {len(files)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
