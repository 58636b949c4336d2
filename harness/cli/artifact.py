"""Artifact evaluation: ``verikit artifact bundle|check`` (README 'Artifact evaluation')."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console

from ..sandbox import SandboxError
from .common import say

# harness.artifact is imported in ``_artifact``, not here: it loads jinja2 and the HTML
# report, about 25 ms of start-up that every other verikit command would pay.


def _add_artifact(sub) -> None:
    ar = sub.add_parser("artifact", help="artifact evaluation: a self-contained, offline bundle for a committee "
                        "(README 'Artifact evaluation')")
    ar.set_defaults(handler=_artifact)
    ar_sub = ar.add_subparsers(dest="artifact_cmd", required=True)
    bu = ar_sub.add_parser("bundle", help="write the bundle: runner images, data, expected runs, kit + wheels, "
                           "smoke.sh/full.sh, README, licenses, citation, checksums")
    bu.add_argument("--benchmark", action="append", dest="benchmarks", required=True,
                    help="a benchmark with artifact claims (verikit artifact list); repeatable")
    bu.add_argument("-o", "--out", type=Path, required=True, metavar="DIR", help="a new or empty directory")
    bu.add_argument("--engine", default="podman", help="CLI that builds and saves the images (podman|docker)")
    ls = ar_sub.add_parser("list", help="the benchmarks with artifact claims, and the toolchain image each "
                           "bundle's runner image starts from")
    ls.add_argument("--json", action="store_true", help="a JSON list of {bundle, pull} (the images workflow's matrix)")
    ck = ar_sub.add_parser("check", help="check a bundle: checksums, expected runs against the schemas, every "
                           "claim with a command and an expected value in the README")
    ck.add_argument("dir", type=Path)


def _artifact(args, console: Console, argv) -> int:
    """``verikit artifact bundle|check``: exit 0, 1 (check found problems), 2 (cannot bundle)."""
    from .. import artifact

    if args.artifact_cmd == "list":
        rows = artifact.bundles()
        if args.json:
            print(json.dumps(rows, separators=(",", ":")))
        else:
            for row in rows:
                print(f"{row['bundle']}: claims {', '.join(row['claims'])}; runner image on {row['pull']}")
        return 0
    if args.artifact_cmd == "check":
        if not args.dir.is_dir():
            say(console, f"error: {args.dir}: not a directory")
            return 2
        problems = artifact.check(args.dir)
        for prob in problems:
            console.print(f"[red]invalid[/red] {prob}", markup=True, highlight=False)
        if not problems:
            say(console, f"{args.dir}: checks (SHA256SUMS, expected runs, claims in the README)")
        return 1 if problems else 0
    try:
        artifact.bundle(args.benchmarks, args.out, engine=args.engine, log=lambda m: say(console, m))
    except (artifact.ArtifactError, SandboxError) as exc:
        say(console, f"error: {exc}")
        return 2
    return 0


#: The commands of this group: name -> adds its parser (arguments, help, handler) to ``sub``.
COMMANDS = {"artifact": _add_artifact}
