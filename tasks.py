"""invoke tasks for operators: ``invoke --list``.

Thin wrappers over the ``verikit`` CLI and the nox sessions, so operators and CI use the
same code paths. Image, batch, hub and artifact-evaluation tasks arrive with their issues.
"""

from invoke import task


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


@task(help={"name": "toolchain (framac, rocq, tlaplus, dafny)"})
def images_build(c, name="framac"):
    """Build (or reuse) a Debian toolchain image; needs DOCKER_HOST or a default engine."""
    c.run(f"verikit images build {name}")


@task
def images_verify(c):
    """Report each built image's drift from the published pins."""
    c.run("verikit images verify")
