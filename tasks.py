"""invoke tasks for operators: ``invoke --list``.

Thin wrappers over the ``verikit`` CLI and the nox sessions, so operators and CI use the
same code paths. Image tasks live in the ``images`` collection (``invoke images.build
--name framac --flavor nix``); batch, hub and artifact-evaluation tasks arrive with their
issues.
"""

from invoke import Collection, task

NIX = "nix --extra-experimental-features 'nix-command flakes'"


@task(help={"out": "run directory", "jobs": "parallel jobs"})
def casp(c, out="results/reproduced/casp", jobs=2):
    """Main job: the three CASP modes on casp-sample10 (host toolchain), then validate."""
    c.run(f"verikit run casp --dataset casp-sample10 --sandbox host -j {jobs} --out {out}", pty=False)
    c.run(f"verikit validate {out}")


@task(help={"run_dir": "run directory to check"})
def validate(c, run_dir):
    """Check a run directory (run.json, records.jsonl, report.json) against schemas/."""
    c.run(f"verikit validate {run_dir}")


@task
def bench(c):
    """Kit vs bare frama-c wall-time ratios at -j 1 and -j 2."""
    c.run("python scripts/bench_casp.py")


@task
def bootstrap(c, toolchain="framac"):
    """Install the pinned Debian packages of a toolchain on this (Debian) host."""
    c.run(f"bash scripts/bootstrap-debian.sh {toolchain}")


@task(help={"name": "toolchain (framac, rocq, tlaplus, dafny; with --flavor nix also why3, lean, isabelle, "
                    "hyperkernel) or a derived image (ntp4vc-rocq)",
            "flavor": "debian (closest Debian packages, builds offline) or nix (exact published versions: "
                      "nix build + load; needs Nix and network)",
            "engine": "podman or docker (the CLI that builds or loads the image)",
            "force": "rebuild even if the image for the current pins exists"})
def images_build(c, name="framac", flavor="debian", engine="podman", force=False):
    """Build (or reuse) a toolchain image; needs DOCKER_HOST or a default engine."""
    c.run(f"verikit images build {name} --flavor {flavor} --engine {engine}" + (" --force" if force else ""))


@task
def images_verify(c):
    """Report each built image's drift from the published pins."""
    c.run("verikit images verify")


@task
def images_nix_check(c):
    """Offline check of flake.nix: parse it and evaluate every image against stub nixpkgs
    trees (the CI check; the real nixpkgs revisions need network, see docs/nix.md)."""
    c.run("nix-instantiate --parse flake.nix >/dev/null")
    c.run("python3 -m pytest -q tests/test_flake.py")


@task(help={"name": "toolchain"})
def images_nix_show(c, name="framac"):
    """Print the manifest Nix evaluates for a toolchain's image (real inputs: needs network)."""
    c.run(f"{NIX} eval --json .#lib.images.{name}.manifest")


images = Collection("images")
images.add_task(images_build, "build")
images.add_task(images_verify, "verify")
images.add_task(images_nix_check, "nix-check")
images.add_task(images_nix_show, "nix-show")

ns = Collection(casp, validate, bench, bootstrap, images)
