#!/usr/bin/env python3
"""Write harness/pins/<dataset>.json: the upstream files a dataset needs beyond the ones
listed in harness/datasets.py, each with the sha256 and size computed from the files.

Usage: scripts/pin_files.py ntp4vc|dafny-intent [--root DIR]

``DIR`` is the repository checkout at the pinned commit (default: the first
``VERIKIT_DATA_MIRRORS`` directory that has it). For ntp4vc the list is: the 600 task
files of each language (the three manifests), every Rocq library file in the closure of
a task, the target of git symlinks among them, every dune file under the Rocq
directories (the theory names), and the ``.mlw`` sources of the pearl items. For dafny-intent: the MBPP-DFY-153 test programs
(``MBPP-DFY-153/test/task_id_<N>.dfy``); the JSON files are listed in datasets.py.
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
from harness.benchmarks import ntp4vc  # noqa: E402


def ntp4vc_paths(root: Path) -> list[str]:
    tasks = ntp4vc.load_tasks(root)
    lib = ntp4vc.RocqLibrary.load(root)
    paths = {getattr(t, lang) for t in tasks for lang in ntp4vc.LANGUAGES}
    for rel in ntp4vc.rocq_library_files(lib, tasks):
        paths.add(rel)
        target = (root / rel).read_text(encoding="utf-8").strip()
        if "\n" not in target and target.startswith("../"):  # git symlink stored as text
            paths.add(os.path.normpath(f"{Path(rel).parent}/{target}"))
    # the Why3 sources of the pearl items (the Auto_level_3 re-run proves goals from them)
    paths.update(str(p.relative_to(root)) for p in (root / "data" / "why3" / "pearl").rglob("*.mlw"))
    paths.update(str(p.relative_to(root)) for p in root.rglob("dune")
                 if "/rocq" in str(p.relative_to(root)) or str(p.relative_to(root)).startswith("generation/rocq"))
    return sorted(paths)


def dafny_intent_paths(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in (root / "MBPP-DFY-153" / "test").glob("task_id_*.dfy"))


#: Sources of datasets whose registry entry reads this script's output (the entry cannot be
#: imported before the pin file exists).
SOURCES = {"dafny-intent": datasets.Source("github", "Mondego/dafny-synthesis",
                                           "a57ce249913c883085401e9072233852826f4e24")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dataset", choices=["ntp4vc", "dafny-intent"])
    ap.add_argument("--root", type=Path)
    args = ap.parse_args()
    ds = datasets.REGISTRY.get(args.dataset)
    source = ds.source if ds is not None else SOURCES[args.dataset]
    root = args.root
    if root is None:
        for m in datasets.mirror_dirs():
            if (m / source.layout_prefix()).is_dir():
                root = m / source.layout_prefix()
                break
    if root is None:
        print("no --root and no mirror has the dataset", file=sys.stderr)
        return 2
    if args.dataset == "ntp4vc":
        listed = {"README.md", *(f.path for f in ds.files if f.path.endswith((".csv", ".lst")))}
        paths = ntp4vc_paths(root)
    else:
        listed = set()
        paths = dafny_intent_paths(root)
    files = []
    for rel in paths:
        if rel in listed:
            continue
        data = (root / rel).read_bytes()
        files.append({"path": rel, "sha256": hashlib.sha256(data).hexdigest(), "size": len(data)})
    out = datasets.PINS_DIR / f"{args.dataset}.json"
    out.write_text(json.dumps({"dataset": args.dataset, "source": {"repo": source.repo, "revision": source.revision},
                               "generated_by": "scripts/pin_files.py", "files": files}, indent=0) + "\n")
    print(f"{out}: {len(files)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
