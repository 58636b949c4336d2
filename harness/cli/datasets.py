"""What the kit knows and keeps: ``verikit list`` (benchmarks, datasets, toolchains),
``verikit datasets list|pin`` (the dataset entries), ``verikit cache verify|prune|clear``."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from rich.console import Console
from rich.table import Table

from .. import datasets, registry, toolchains
from ..datasets import local
from ..results import ResultCache
from ..sandbox import HOST, SandboxError
from .common import say


def _add_list(sub) -> None:
    ls = sub.add_parser("list", help="benchmarks, datasets and toolchains with probed versions")
    ls.add_argument("--sandbox", default=HOST, choices=list(registry.SANDBOXES))
    ls.add_argument("--json", action="store_true", help="machine-readable output")
    ls.set_defaults(handler=_list)


def _add_datasets(sub) -> None:
    ds = sub.add_parser("datasets", help="the dataset entries: list them, pin your own dataset")
    ds.set_defaults(handler=_datasets)
    ds_sub = ds.add_subparsers(dest="datasets_cmd", required=True)
    ds_sub.add_parser("list", help="the dataset entries: source, revision, files, known task defects")
    pin = ds_sub.add_parser("pin", help="print the dataset entry (file list with sha256) of a directory")
    pin.add_argument("path", type=Path)


def _add_cache(sub) -> None:
    ca = sub.add_parser("cache", help="the result cache: verify its entries, prune the bad ones, or clear it")
    ca.add_argument("action", choices=["verify", "prune", "clear"])
    ca.add_argument("--cache-dir", type=Path, help="result cache (default $VERIKIT_CACHE or the user cache dir)")
    ca.set_defaults(handler=_cache)


def _cache(args, console: Console, argv) -> int:
    """``verikit cache verify|prune|clear``: exit 0, or 1 when ``verify`` finds entries a
    run would ignore."""
    cache = ResultCache(args.cache_dir)
    if args.action == "verify":
        good, problems = cache.verify()
        for prob in problems:
            console.print(f"[red]bad[/red] {prob}", markup=True, highlight=False)
        say(console, f"{cache.root}: {good} good entr{'y' if good == 1 else 'ies'}, {len(problems)} a run would ignore")
        return 1 if problems else 0
    n = cache.prune() if args.action == "prune" else cache.clear()
    say(console, f"{cache.root}: removed {n} entr{'y' if n == 1 else 'ies'}")
    return 0


def _datasets(args, console: Console, argv) -> int:
    if args.datasets_cmd == "pin":
        print(yaml.safe_dump(local.pin_entry(args.path), sort_keys=False, allow_unicode=True), end="")
        return 0
    for name, ds in datasets.DATASETS.items():
        print(f"{name}\t{ds.source.kind}:{ds.source.repo}@{ds.source.revision}\t{len(ds.files)} files")
        for d in ds.task_defects:  # the pinned data's own bugs: their records are kept out of the metrics
            print(f"  task defect {d.task} ({', '.join(d.modes) or 'every mode'}): {d.describe()}")
    return 0


def _list(args, console: Console, argv) -> int:
    info = {"benchmarks": {}, "datasets": {}, "toolchains": {}}
    for name in registry.BENCHMARKS:
        b = registry.benchmark(name)
        info["benchmarks"][name] = {"modes": list(b.modes), "mode_option": b.mode_option, "datasets": list(b.datasets),
                                    "verifier": ", ".join(sorted({b.verifier_for(m) for m in b.modes}))}
    for name, ds in datasets.DATASETS.items():
        info["datasets"][name] = {"source": f"{ds.source.kind}:{ds.source.repo}@{ds.source.revision}",
                                  "files": len(ds.files), "description": ds.description.splitlines()[0]}
    for name in toolchains.load_pins()["toolchains"]:
        try:
            sandbox = registry.sandbox(args.sandbox, toolchain=name)
        except SandboxError as exc:  # container: image not built, or no engine
            info["toolchains"][name] = {"error": str(exc).splitlines()[0], "tools": {}}
            continue
        try:
            info["toolchains"][name] = toolchains.probe(name, sandbox).to_json()
        finally:
            sandbox.close()
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    out = Console()
    t = Table(title="benchmarks")
    for col in ("benchmark", "modes", "datasets", "verifier"):
        t.add_column(col)
    for name, b in info["benchmarks"].items():
        t.add_row(name, f"--{b['mode_option']} " + ", ".join(b["modes"]), ", ".join(b["datasets"]), b["verifier"])
    out.print(t)
    t = Table(title="datasets")
    for col in ("dataset", "source", "files", "description"):
        t.add_column(col, overflow="fold")
    for name, d in info["datasets"].items():
        t.add_row(name, d["source"], str(d["files"]), d["description"])
    out.print(t)
    t = Table(title=f"toolchains (probed in sandbox '{args.sandbox}')")
    for col in ("toolchain", "tool", "probed", "published", "match"):
        t.add_column(col)
    for name, tc in info["toolchains"].items():
        if "error" in tc:
            t.add_row(name, "-", tc["error"], "-", "-")
        for tool, v in tc["tools"].items():
            match = {True: "yes", False: "NO", None: "-"}[v["match"]]
            t.add_row(name, tool, v["version"] or "missing", v["published"] or "-", match)
    out.print(t)
    return 0


#: The commands of this group: name -> adds its parser (arguments, help, handler) to ``sub``.
COMMANDS = {"list": _add_list, "datasets": _add_datasets, "cache": _add_cache}
