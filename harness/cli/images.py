"""Toolchain images (Debian flavor, or Nix): ``verikit images build|push|pull|list|verify|save``;
``images build NAME --format squashfs|sif`` also makes the image file of an HPC runtime."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.console import Console

from .. import datasets, registry, toolchains
from ..sandbox import SandboxError, images
from .common import say


def _add_images(sub) -> None:
    im = sub.add_parser("images", help="toolchain images (Debian flavor): build, list, verify, save")
    im.set_defaults(handler=_images)
    im_sub = im.add_subparsers(dest="images_cmd", required=True)
    b = im_sub.add_parser("build", help="build (or reuse) the image of a toolchain, or a derived image "
                          "(a toolchain image with a benchmark's library built in)")
    b.add_argument("name")
    b.add_argument("--force", action="store_true", help="rebuild even if the fingerprint tag exists")
    b.add_argument("--engine", default="podman", help="CLI used to import the debootstrap base (podman|docker)")
    b.add_argument("--flavor", choices=["debian", "nix"], default="debian",
                   help="debian: closest Debian packages, built here; nix: the exact published versions "
                        "(nix build .#image-NAME, then <engine> load; needs Nix and network, see docs/nix.md)")
    b.add_argument("--base-image", metavar="REPO@sha256:DIGEST", help="debian flavor: start from this official "
                   "Debian image (by digest; where a registry is reachable) instead of debootstrap")
    b.add_argument("--runner", action="store_true",
                   help="the runner image: the toolchain (or derived) image plus the kit, for batch workers and "
                        "the artifact bundle")
    b.add_argument("--format", choices=list(images.FORMATS), dest="file_format",
                   help="then convert the image into one file for an HPC runtime's sandbox: squashfs (--sandbox "
                        "charliecloud; needs mksquashfs) or sif (--sandbox apptainer; needs apptainer), in "
                        "$VERIKIT_IMAGES (default the user cache's images/); prints its path and sha256 as JSON")
    b.add_argument("-o", "--output", type=Path, dest="file_output", help="with --format: write the file here instead")
    pu = im_sub.add_parser("push", help="tag and push an image (a runner image) to a registry; prints its digest")
    pu.add_argument("name", help="image reference (e.g. the tag 'images build --runner' printed)")
    pu.add_argument("--registry", required=True, metavar="URI", help="e.g. 123456789012.dkr.ecr.REGION.amazonaws.com")
    pu.add_argument("--engine", default="podman", help="CLI that pushes (podman|docker)")
    pu.add_argument("--tls-verify", action=argparse.BooleanOptionalAction, default=True,
                    help="verify the registry's TLS certificate (podman; default on)")
    pl = im_sub.add_parser("pull", help="pull a toolchain's published image by the digest recorded in "
                           "images/toolchains.json and check its baked manifest against the pins")
    pl.add_argument("name")
    pl.add_argument("--ref", metavar="REGISTRY/REPO@sha256:DIGEST", help="pull this instead of the recorded one")
    pl.add_argument("--engine", default="podman", help="CLI that pulls (podman|docker)")
    pl.add_argument("--tls-verify", action=argparse.BooleanOptionalAction, default=True,
                    help="verify the registry's TLS certificate (podman; default on)")
    im_sub.add_parser("list", help="verikit images in the engine")
    vf = im_sub.add_parser("verify", help="probe an image and report its drift from the published pins")
    vf.add_argument("name", nargs="?", help="toolchain (default: all with a Debian image)")
    sv = im_sub.add_parser("save", help="write an image archive and print its sha256")
    sv.add_argument("name")
    sv.add_argument("-o", "--output", type=Path, required=True)
    sv.add_argument("--engine", default="podman", help="CLI that writes the archive (podman|docker)")


def _images(args, console: Console, argv) -> int:
    try:
        log = lambda m: say(console, m)  # noqa: E731
        derived = registry.derived_images()
        if args.images_cmd == "build" and args.file_output and not args.file_format:
            raise SandboxError("-o/--output goes with --format squashfs|sif")
        tag = None
        if args.images_cmd == "build" and args.runner:
            tag = images.build_runner(args.name, force=args.force, engine=args.engine, log=log)
            if not args.file_format:
                print(tag)
        elif args.images_cmd == "pull":
            got = images.pull(args.name, args.ref, engine=args.engine, tls_verify=args.tls_verify)
            log(f"{got['ref']}: checked (toolchain {args.name}, fingerprint {got['fingerprint'][:12]}: "
                + ", ".join(f"{t} {v}" for t, v in got["tools"].items()) + f"); tagged {got['tag']}")
            print(got["tag"])
        elif args.images_cmd == "push":
            print(json.dumps(images.push(args.name, args.registry, engine=args.engine, tls_verify=args.tls_verify)))
        elif args.images_cmd == "build" and args.flavor == "nix":
            if args.name in derived:
                raise SandboxError(f"{args.name} is a derived image (Debian flavor only); Nix images: one per toolchain")
            tag = images.build_nix(args.name, force=args.force, engine=args.engine, log=log)
        elif args.images_cmd == "build" and args.name in derived:
            bench_name, mode = derived[args.name]
            bench = registry.benchmark(bench_name)
            spec = bench.derived_image_spec(mode, datasets.fetch(bench.default_dataset), images.fingerprint)
            tag = images.build_derived(spec, force=args.force, engine=args.engine, log=log)
        elif args.images_cmd == "build":
            tag = images.build(args.name, force=args.force, engine=args.engine, log=log, base_image=args.base_image)
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
            print(json.dumps(images.save(args.name, args.output, engine=args.engine), indent=2))
        if tag and args.file_format:
            made = images.build_file(tag, args.file_format, output=args.file_output, engine=args.engine,
                                     force=args.force, log=log)
            print(json.dumps(made, indent=2))
    except SandboxError as exc:
        say(console, f"error: {exc}")
        return 2
    return 0


#: The commands of this group: name -> adds its parser (arguments, help, handler) to ``sub``.
COMMANDS = {"images": _add_images}
