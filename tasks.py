"""invoke tasks for operators: ``invoke --list``.

Thin wrappers that mirror the ``verikit`` CLI one to one (``invoke run --benchmark B``
is ``verikit run B``; ``verikit list`` names the registered benchmarks), so operators, nox
and CI use the same code paths. No task names a benchmark. Image tasks
live in the ``images`` collection (``invoke images.build --name framac --flavor nix``),
dataset tasks in ``datasets``.
"""

import shlex

from invoke import Collection, task

NIX = "nix --extra-experimental-features 'nix-command flakes'"


def _opt(flag: str, value) -> str:
    return f" {flag} {shlex.quote(str(value))}" if value not in (None, "", False) else ""


@task(help={"benchmark": "a registered benchmark (verikit list)",
            "mode": "the benchmark's mode", "lang": "the benchmark's language, where it has that axis (--lang)",
            "dataset": "a pinned dataset's name or a path to your own dataset", "predictions": "predictions JSONL",
            "sandbox": "host or container", "jobs": "parallel jobs", "out": "run directory",
            "task": "only this task id"})
def run(c, benchmark, mode=None, lang=None, dataset=None, predictions=None, sandbox=None, jobs=2,
        out="out", task=None):
    """verikit run BENCHMARK: verify candidates and write the run directory."""
    c.run(f"verikit run {benchmark}" + _opt("--mode", mode) + _opt("--lang", lang) + _opt("--dataset", dataset)
          + _opt("--predictions", predictions) + _opt("--sandbox", sandbox) + _opt("-j", jobs) + _opt("--out", out)
          + _opt("--task", task))


@task(help={"benchmark": "a registered benchmark (verikit list)", "out": "run directory",
            "sandbox": "host or container", "jobs": "parallel jobs"})
def reproduce(c, benchmark, out=None, sandbox=None, jobs=2):
    """verikit reproduce BENCHMARK: the paper's figures vs the kit's, as a run directory."""
    c.run(f"verikit reproduce {benchmark}" + _opt("--out", out or f"out/reproduce/{benchmark}")
          + _opt("--sandbox", sandbox) + _opt("-j", jobs))


@task(help={"run_dir": "run directory to check", "against": "reference run directory to compare with"})
def validate(c, run_dir, against=None):
    """verikit validate RUN_DIR [--against REF]: schemas, and verdicts/goals/metrics vs a reference."""
    c.run(f"verikit validate {shlex.quote(run_dir)}" + _opt("--against", against))


@task(help={"runs": "run directories, space-separated", "html": "write the HTML report to this file",
            "compare": "two runs: the tasks whose verdict or goal counts differ"})
def report(c, runs, html=None, compare=False):
    """verikit report RUN... [--html FILE] [--compare]: summary tables, the HTML report."""
    c.run("verikit report " + " ".join(shlex.quote(r) for r in runs.split()) + _opt("--html", html)
          + (" --compare" if compare else ""))


@task(help={"sandbox": "host or container"})
def list_(c, sandbox="host"):
    """verikit list: benchmarks, datasets and toolchains with probed versions."""
    c.run(f"verikit list --sandbox {sandbox}")


@task(help={"benchmark": "a benchmark that defines prompts", "mode": "prompt setting",
            "shots": "few-shot examples", "output": "JSONL file"})
def prompts(c, benchmark, mode=None, shots=None, output=None):
    """verikit prompts BENCHMARK: the prompts a model is given, as JSONL."""
    c.run(f"verikit prompts {benchmark}" + _opt("--mode", mode) + _opt("--shots", shots) + _opt("-o", output))


@task(help={"benchmark": "a benchmark with an upstream output format", "source": "upstream file",
            "output": "predictions JSONL"})
def convert(c, benchmark, source=None, output="predictions.jsonl"):
    """verikit convert BENCHMARK [SOURCE] -o OUTPUT: upstream outputs -> predictions JSONL."""
    c.run(f"verikit convert {benchmark}" + (f" {shlex.quote(source)}" if source else "") + _opt("-o", output))


@task(help={"benchmark": "a registered benchmark", "args": "the command and its arguments, as one string"})
def benchmark_command(c, benchmark, args):
    """verikit BENCHMARK COMMAND ...: a benchmark's own subcommand (its plugin's ``commands``)."""
    c.run(f"verikit {benchmark} {args}")


@task
def bench(c):
    """nox -s bench: kit vs bare tools, container overhead, batched Dafny checks (ratios)."""
    c.run("nox -s bench")


@task
def bootstrap(c, toolchain="framac"):
    """Install the pinned Debian packages of a toolchain on this (Debian) host."""
    c.run(f"bash scripts/bootstrap-debian.sh {toolchain}")


@task(help={"path": "directory of your own dataset"})
def datasets_pin(c, path):
    """verikit datasets pin PATH: the dataset entry (file list with sha256) of a directory."""
    c.run(f"verikit datasets pin {shlex.quote(path)}")


@task
def datasets_list(c):
    """verikit datasets list: the dataset entries."""
    c.run("verikit datasets list")


@task(help={"name": "toolchain (framac, rocq, tlaplus, dafny; with --flavor nix also why3, lean, isabelle, "
                    "hyperkernel) or a benchmark's derived image (verikit images list)",
            "flavor": "debian (closest Debian packages, builds offline) or nix (exact published versions: "
                      "nix build + load; needs Nix and network)",
            "engine": "podman or docker (the CLI that builds or loads the image)",
            "force": "rebuild even if the image for the current pins exists"})
def images_build(c, name="framac", flavor="debian", engine="podman", force=False, runner=False):
    """verikit images build NAME [--runner]: build (or reuse) a toolchain, derived or runner image."""
    c.run(f"verikit images build {name} --flavor {flavor} --engine {engine}" + (" --force" if force else "")
          + (" --runner" if runner else ""))


@task(help={"name": "image reference (a runner image's tag)", "registry": "registry URI (e.g. ECR)"})
def images_push(c, name, registry):
    """verikit images push NAME --registry URI: tag, push, print the digest."""
    c.run(f"verikit images push {shlex.quote(name)} --registry {shlex.quote(registry)}")


@task(help={"benchmark": "benchmark", "s3": "s3://BUCKET/PREFIX", "shards": "array size",
            "mode": "mode", "predictions": "predictions JSONL", "timings": "previous run directory",
            "dry_run": "print the AWS calls only"})
def batch_submit(c, benchmark, s3=None, shards=10, mode=None, predictions=None, timings=None, dry_run=False):
    """verikit run BENCH --backend aws-batch: plan here, submit an array job and its reducer."""
    c.run(f"verikit run {benchmark} --backend aws-batch --s3 {shlex.quote(s3 or '')} --shards {shards}"
          + _opt("--mode", mode) + _opt("--predictions", predictions) + _opt("--timings", timings)
          + (" --dry-run" if dry_run else ""))


@task(help={"run": "the batch run's S3 URI or batch.json"})
def batch_status(c, run):
    """verikit batch status RUN."""
    c.run(f"verikit batch status {shlex.quote(run)}")


@task(help={"run": "the batch run's S3 URI or batch.json", "out": "run directory to write"})
def batch_collect(c, run, out="out/batch"):
    """verikit batch collect RUN --out DIR: the records as an ordinary run directory."""
    c.run(f"verikit batch collect {shlex.quote(run)} --out {shlex.quote(out)}")


@task(help={"run": "the batch run's S3 URI or batch.json"})
def batch_resubmit(c, run):
    """verikit batch resubmit RUN: only the shards with missing records."""
    c.run(f"verikit batch resubmit {shlex.quote(run)}")


@task(help={"runs": "run directories or s3:// run URIs, space-separated", "repo": "OWNER/NAME dataset repo",
            "private": "create the repo private", "revision": "branch", "dry_run": "write the commit's files to DIR",
            "allow_infra_errors": "publish despite infra errors (recorded)",
            "allow_dirty": "publish a run of a dirty checkout (recorded)"})
def hub_publish(c, runs, repo, private=False, revision="main", dry_run=None, allow_infra_errors=False,
                allow_dirty=False):
    """verikit publish RUN... --repo OWNER/NAME: validate, then one commit to the Hub."""
    c.run(f"verikit publish {' '.join(shlex.quote(r) for r in runs.split())} --repo {shlex.quote(repo)}"
          f" --revision {shlex.quote(revision)}" + (" --private" if private else "")
          + (f" --dry-run --out {shlex.quote(dry_run)}" if dry_run else "")
          + (" --allow-infra-errors" if allow_infra_errors else "") + (" --allow-dirty" if allow_dirty else ""))


@task(help={"repo": "OWNER/NAME dataset repo", "run": "one run id (default: all)", "out": "directory"})
def hub_pull(c, repo, out, run=None):
    """verikit pull OWNER/NAME --out DIR: download published runs and check them."""
    c.run(f"verikit pull {shlex.quote(repo)} --out {shlex.quote(out)}" + _opt("--run", run))


@task(help={"benchmarks": "space-separated benchmarks with artifact claims (verikit artifact list)",
            "out": "a new or empty directory"})
def ae_bundle(c, benchmarks, out="artifact"):
    """verikit artifact bundle: the offline artifact-evaluation bundle (docs/artifact.md)."""
    c.run("verikit artifact bundle" + "".join(f" --benchmark {shlex.quote(b)}" for b in benchmarks.split())
          + f" -o {shlex.quote(out)}")


@task(help={"path": "the bundle directory"})
def ae_check(c, path="artifact"):
    """verikit artifact check DIR: checksums, expected runs, claims in the README."""
    c.run(f"verikit artifact check {shlex.quote(path)}")


@task
def images_list(c):
    """verikit images list."""
    c.run("verikit images list")


@task
def images_verify(c):
    """verikit images verify: each built image's drift from the published pins."""
    c.run("verikit images verify")


@task(help={"name": "image", "output": "archive path"})
def images_save(c, name="framac", output="framac.oci.tar"):
    """verikit images save NAME -o OUTPUT: an image archive and its sha256."""
    c.run(f"verikit images save {name} -o {shlex.quote(output)}")


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
for _name, _fn in (("build", images_build), ("push", images_push),
                   ("list", images_list), ("verify", images_verify), ("save", images_save),
                   ("nix-check", images_nix_check), ("nix-show", images_nix_show)):
    images.add_task(_fn, _name)
datasets = Collection("datasets")
datasets.add_task(datasets_pin, "pin")
datasets.add_task(datasets_list, "list")

batch = Collection("batch")
for _name, _fn in (("submit", batch_submit), ("status", batch_status), ("collect", batch_collect),
                   ("resubmit", batch_resubmit)):
    batch.add_task(_fn, _name)

hub = Collection("hub")
hub.add_task(hub_publish, "publish")
hub.add_task(hub_pull, "pull")

ae = Collection("ae")
ae.add_task(ae_bundle, "bundle")
ae.add_task(ae_check, "check")

ns = Collection(run, reproduce, validate, report, prompts, convert, bench, bootstrap, images, datasets, batch, hub, ae)
ns.add_task(list_, "list")
