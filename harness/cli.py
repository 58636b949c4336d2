"""Command line: ``verikit run|reproduce|validate|list|images|datasets|prompts|convert``
(also ``python -m harness``). Every benchmark goes through the same commands.

Exit codes: 0 success; 1 ``validate`` found problems or ``reproduce`` found a figure that
differs; 2 usage or input error (message names the file and line); 3 canaries failed;
4 infra errors remain; 5 bad prediction lines skipped with ``--keep-going``; 130
interrupted (Ctrl-C), 143 terminated (SIGTERM): finished jobs are kept, the jobs that
were running are killed and not retried.
"""

from __future__ import annotations

import argparse
import errno
import json
import math
import signal
import sys
import threading
from collections import Counter
from pathlib import Path

from rich.console import Console
from rich.table import Table

from . import __version__, datasets, registry, toolchains
from .model import Limits
from .report import check_run_dir
from .results import ResultCache, compare_runs, load_records, write_text_atomic


#: The smallest memory limit a job may get, MiB: below it no verifier of the kit starts
#: (the JVM of TLC alone reserves more), so a smaller value is a mistake, not a limit.
MIN_MEMORY_MIB = 256


def _int_at_least(low: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{text!r}: must be at least {low}")
        return value
    parse.__name__ = "int"  # argparse names the type in its messages
    return parse


def _shard_list(text: str) -> list[int]:
    """``--shards 3,7`` of ``batch worker``: shard numbers, each at least 0."""
    parse = _int_at_least(0)
    return [parse(x) for x in text.split(",")]


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: must be a finite number of seconds above 0")
    return value


def _run_options(p: argparse.ArgumentParser, *, jobs: bool = True) -> None:
    """Options shared by ``run`` and ``reproduce``."""
    p.add_argument("--dataset", help="a registry dataset name, or a path to your own dataset (a directory in one "
                   "of the benchmark's formats, or a YAML file describing it); default: the benchmark's default")
    p.add_argument("--sandbox", choices=list(registry.SANDBOXES),
                   help="where jobs run (default: container when a Docker-API engine answers at DOCKER_HOST "
                        "or the default socket; otherwise the run stops and says how to start one)")
    p.add_argument("-j", "--jobs", type=_int_at_least(1), default=1, help="jobs run in parallel (at least 1; default 1)")
    p.add_argument("--out", type=Path, default=Path("out"), help="run directory (default ./out)")
    p.add_argument("--timeout", type=_positive_seconds, default=600.0,
                   help="wall-time limit per job, seconds (finite, above 0; default 600)")
    p.add_argument("--memory", type=_int_at_least(MIN_MEMORY_MIB), default=4096,
                   help=f"memory limit per job, MiB (at least {MIN_MEMORY_MIB}; default 4096)")
    p.add_argument("--cache-dir", type=Path, help="result cache (default $VERIKIT_CACHE or the user cache dir)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the result cache")
    p.add_argument("--data-dir", type=Path, help="data cache (default $VERIKIT_DATA or the user cache dir)")
    p.add_argument("--seed", type=int, default=0, help="seed of bootstrap CIs and of a benchmark's own randomness "
                   "(dafny-intent: mutants); recorded")


def _run_arguments(r: argparse.ArgumentParser, names: list[str]) -> None:
    """The arguments of ``run`` (also those of ``batch plan``)."""
    r.add_argument("benchmark", choices=names)
    r.add_argument("--mode", action="append", dest="modes",
                   help="mode to run (CASP: task direction; Model-Bench: prompt setting; dafny-intent, osvbench: "
                        "spec); repeat for several (default: the benchmark's default modes)")
    r.add_argument("--lang", action="append", dest="langs",
                   help="ntp4vc: the proof language, rocq|lean|isabelle|why3 (default rocq); repeatable")
    r.add_argument("--task", action="append", dest="task_ids", help="run only this task id; repeatable")
    r.add_argument("--sample", type=_int_at_least(1), metavar="N", help="run N tasks drawn with --seed by the benchmark "
                   "(ntp4vc --lang why3: stratified by the published result; recorded in run.json)")
    r.add_argument("--predictions", help="predictions JSONL (schemas/predictions.schema.json); needs one mode")
    r.add_argument("--keep-going", action="store_true", help="run the good prediction lines, record the bad ones")
    _run_options(r)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="verikit", description=__doc__.splitlines()[0])
    p.add_argument("--version", action="version", version=f"verikit {__version__}")
    sub = p.add_subparsers(dest="cmd", required=True)
    names = list(registry.BENCHMARKS)

    r = sub.add_parser("run", help="verify candidates of a benchmark and write run.json, records.jsonl, report.json")
    _run_arguments(r, names)
    bo = r.add_argument_group("cloud batch (AWS Batch; README 'Cloud batch (AWS)')")
    bo.add_argument("--backend", choices=["local", "aws-batch"], default="local",
                    help="local: run here (default); aws-batch: plan here, submit an array job, results in S3")
    bo.add_argument("--s3", metavar="s3://BUCKET/PREFIX", help="aws-batch: where the run's manifest and records go")
    bo.add_argument("--queue", default="verikit", help="aws-batch: job queue (default verikit, made by 'batch setup')")
    bo.add_argument("--shards", type=_int_at_least(1), default=10,
                    help="aws-batch: array size, at most 10,000 (default 10; fewer when there are fewer jobs)")
    bo.add_argument("--image", help="aws-batch: the runner image as the job definition names it (default: the "
                    "newest local runner image of the benchmark's toolchain)")
    bo.add_argument("--timings", type=Path, metavar="RUN_DIR",
                    help="aws-batch: a previous run whose per-job times balance the shards")
    bo.add_argument("--dry-run", action="store_true", help="aws-batch: print the AWS calls, submit nothing")

    rp = sub.add_parser("reproduce", help="the paper's figures vs the kit's (rescored from the published files, "
                        "or re-run with the kit's verifiers), written as a run directory")
    rp.add_argument("benchmark", choices=names)
    _run_options(rp)

    v = sub.add_parser("validate", help="check a run directory against the schemas (and against a reference run)")
    v.add_argument("run_dir", help="a run directory, or a batch run's S3 URI (s3://..., its reduced run files)")
    v.add_argument("--recheck", type=_int_at_least(1), metavar="N",
                   help="also re-run N records drawn at random (--seed) with the real verifier, as the run's "
                        "command in run.json made them, and compare verdicts and goal counts")
    v.add_argument("--seed", type=int, default=0, help="seed of the --recheck draw (default 0)")
    v.add_argument("--against", type=Path, metavar="REF_DIR",
                   help="also compare with a reference run directory: verdicts and goal counts per job, report "
                        "metrics and reproduction summary (timings aside); a difference is a problem")

    _hub_parser(sub)
    cp = sub.add_parser("compare", help="compare a run with the expected one: verdicts and goal counts exactly, "
                        "metrics and reproduced figures within a tolerance, timings ignored (exit 1 on a difference)")
    cp.add_argument("expected", type=Path, metavar="EXPECTED")
    cp.add_argument("actual", type=Path, metavar="ACTUAL")
    cp.add_argument("--tolerance", type=float, default=None, metavar="ABS",
                    help="absolute tolerance on report numbers (default 1e-9)")
    cp.add_argument("--claim", help="name printed with the verdict (PASS/FAIL claim NAME)")
    cp.add_argument("--subset", action="store_true", help="ACTUAL ran part of EXPECTED's jobs (a smoke test): "
                    "compare its records only, not the report's numbers")
    rp_ = sub.add_parser("report", help="show run directories: the summary tables, and with --html one "
                         "self-contained HTML page (plots, provenance, per-task table); --compare: two runs task by task")
    rp_.add_argument("runs", type=Path, nargs="+", metavar="RUN", help="run directories")
    rp_.add_argument("--html", type=Path, metavar="FILE", help="also write the HTML report to FILE")
    rp_.add_argument("--compare", action="store_true",
                     help="two runs: list the tasks whose verdict or goal counts differ (e.g. two toolchains, two models)")
    _artifact_parser(sub)
    ls = sub.add_parser("list", help="benchmarks, datasets and toolchains with probed versions")
    ls.add_argument("--sandbox", default="host", choices=list(registry.SANDBOXES))
    ls.add_argument("--json", action="store_true", help="machine-readable output")

    ds = sub.add_parser("datasets", help="the dataset registry: list entries, pin your own dataset")
    ds_sub = ds.add_subparsers(dest="datasets_cmd", required=True)
    ds_sub.add_parser("list", help="registry entries: source, revision, files")
    pin = ds_sub.add_parser("pin", help="print the registry entry (file list with sha256) of a directory")
    pin.add_argument("path", type=Path)

    ca = sub.add_parser("cache", help="the result cache: verify its entries, prune the bad ones, or clear it")
    ca.add_argument("action", choices=["verify", "prune", "clear"])
    ca.add_argument("--cache-dir", type=Path, help="result cache (default $VERIKIT_CACHE or the user cache dir)")
    pr = sub.add_parser("prompts", help="the prompts a model is given, as JSONL (benchmarks that define prompts)")
    pr.add_argument("benchmark", choices=names)
    pr.add_argument("--mode", help="prompt setting (default: the benchmark's first default mode)")
    pr.add_argument("--shots", type=_int_at_least(0), help="few-shot examples, where the benchmark has that setting")
    pr.add_argument("--task", action="append", dest="task_ids", help="only this task id; repeatable")
    pr.add_argument("--dataset", help="registry name or path (default: the benchmark's default)")
    pr.add_argument("--data-dir", type=Path)
    pr.add_argument("-o", "--output", type=Path, help="write here instead of standard output")

    cv = sub.add_parser("convert", help="turn a benchmark's upstream output file into predictions JSONL")
    cv.add_argument("benchmark", choices=names)
    cv.add_argument("source", type=Path, nargs="?", help="upstream output file (default: the published one, "
                    "where the dataset ships it)")
    cv.add_argument("--model", help="model name to record (default: from the file)")
    cv.add_argument("--dataset", help="registry name or path (default: the benchmark's default)")
    cv.add_argument("--data-dir", type=Path)
    cv.add_argument("-o", "--output", type=Path, required=True)

    mb = sub.add_parser("modelbench-filters", help="Model-Bench Table 1: the Section 3.1 filters and the execution "
                        "stage on problem files (HumanEval from its pinned PyPI package is added)")
    mb.add_argument("--mbpp", type=Path, help="MBPP problems (MBPP's own JSONL or the kit's generic JSONL)")
    mb.add_argument("--livecodebench", type=Path, help="LiveCodeBench problems (the kit's generic JSONL)")
    mb.add_argument("--no-humaneval", action="store_true", help="leave HumanEval out")
    mb.add_argument("--json", action="store_true", help="machine-readable output")

    im = sub.add_parser("images", help="toolchain images (Debian flavor): build, list, verify, save")
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
    _batch_parser(sub, names)
    return p


def _hub_parser(sub) -> None:
    pb = sub.add_parser("publish", help="publish run directories to a Hugging Face Hub dataset repo (README "
                        "'Publishing'): validated first, one commit, the card and leaderboard regenerated")
    pb.add_argument("runs", nargs="+", metavar="RUN", help="a run directory, or a reduced batch run (s3://...)")
    pb.add_argument("--repo", required=True, metavar="OWNER/NAME", help="the dataset repository (created if missing)")
    vis = pb.add_mutually_exclusive_group()
    vis.add_argument("--private", dest="private", action="store_true", default=None,
                     help="create the repository private")
    vis.add_argument("--public", dest="private", action="store_false", help="create the repository public")
    pb.add_argument("--revision", default="main", metavar="BRANCH", help="branch to commit to (default main; "
                    "created from main when missing)")
    pb.add_argument("--allow-infra-errors", action="store_true",
                    help="publish a run with infra errors (recorded in the card)")
    pb.add_argument("--allow-dirty", action="store_true",
                    help="publish a run made from a checkout with uncommitted changes (recorded in the card)")
    pb.add_argument("--dry-run", action="store_true", help="write the files the commit would add (card "
                    "included, as in an empty repository) to --out and print the operations; no token, no network")
    pb.add_argument("--out", type=Path, metavar="DIR", help="--dry-run: where the files go")
    pl = sub.add_parser("pull", help="download published runs from a Hub dataset repo and check them (schemas, "
                        "SHA256SUMS, run ids, predictions hashes)")
    pl.add_argument("repo", metavar="OWNER/NAME")
    pl.add_argument("--run", metavar="RUN_ID", help="one run: its files go straight into --out (default: all "
                    "runs, into OUT/runs/<benchmark>/<run_id>/)")
    pl.add_argument("--revision", help="branch, tag or commit (default main)")
    pl.add_argument("--out", type=Path, required=True, metavar="DIR")
    rr = sub.add_parser("rerun", help="re-verify every candidate of a run directory (e.g. a pulled one) here, "
                        "with the run's own benchmark, dataset and options, and report agreement per record")
    rr.add_argument("run_dir", type=Path)
    rr.add_argument("--sandbox", choices=list(registry.SANDBOXES), help="where jobs run (default: the run's own)")
    rr.add_argument("-j", "--jobs", type=_int_at_least(1), help="jobs in parallel (default: the run's own)")
    rr.add_argument("--data-dir", type=Path, help="data cache (default $VERIKIT_DATA or the user cache dir)")


def _artifact_parser(sub) -> None:
    ar = sub.add_parser("artifact", help="artifact evaluation: a self-contained, offline bundle for a committee "
                        "(README 'Artifact evaluation')")
    ar_sub = ar.add_subparsers(dest="artifact_cmd", required=True)
    bu = ar_sub.add_parser("bundle", help="write the bundle: runner images, data, expected runs, kit + wheels, "
                           "smoke.sh/full.sh, README, licenses, citation, checksums")
    bu.add_argument("--benchmark", action="append", dest="benchmarks", required=True,
                    choices=["casp", "ntp4vc", "osvbench"], help="repeatable")
    bu.add_argument("-o", "--out", type=Path, required=True, metavar="DIR", help="a new or empty directory")
    bu.add_argument("--engine", default="podman", help="CLI that builds and saves the images (podman|docker)")
    ck = ar_sub.add_parser("check", help="check a bundle: checksums, expected runs against the schemas, every "
                           "claim with a command and an expected value in the README")
    ck.add_argument("dir", type=Path)


def _artifact(args, console: Console, argv) -> int:
    """``verikit artifact bundle|check``: exit 0, 1 (check found problems), 2 (cannot bundle)."""
    from . import artifact
    from .sandbox import SandboxError

    if args.artifact_cmd == "check":
        if not args.dir.is_dir():
            _say(console, f"error: {args.dir}: not a directory")
            return 2
        problems = artifact.check(args.dir)
        for prob in problems:
            console.print(f"[red]invalid[/red] {prob}", markup=True, highlight=False)
        if not problems:
            _say(console, f"{args.dir}: checks (SHA256SUMS, expected runs, claims in the README)")
        return 1 if problems else 0
    try:
        artifact.bundle(args.benchmarks, args.out, engine=args.engine, log=lambda m: _say(console, m))
    except (artifact.ArtifactError, SandboxError) as exc:
        _say(console, f"error: {exc}")
        return 2
    return 0


def _batch_parser(sub, names: list[str]) -> None:
    ba = sub.add_parser("batch", help="cloud batch on AWS Batch: setup, plan, status, collect, resubmit "
                        "(submit with 'run --backend aws-batch')")
    bs = ba.add_subparsers(dest="batch_cmd", required=True)
    st = bs.add_parser("setup", help="create or update the spot compute environment, the job queue and the job "
                       "definitions (idempotent, tagged verikit=1)")
    st.add_argument("--subnets", required=True, help="comma-separated subnet ids")
    st.add_argument("--security-group", action="append", required=True, dest="security_groups")
    st.add_argument("--image", action="append", required=True, metavar="TOOLCHAIN=URI",
                    help="a runner image per toolchain, as pushed (repeatable)")
    st.add_argument("--max-vcpus", type=_int_at_least(1), default=256)
    st.add_argument("--instance-role", default="ecsInstanceRole", help="instance profile of the spot instances")
    st.add_argument("--service-role", help="AWS Batch service role ARN (default: the service-linked role)")
    st.add_argument("--job-role", help="IAM role ARN the workers run as (S3 read/write on the runs' prefix)")
    st.add_argument("--memory", type=_int_at_least(MIN_MEMORY_MIB), default=4096, help="memory per job, MiB")
    st.add_argument("--dry-run", action="store_true", help="print the API calls, make none")
    pl = bs.add_parser("plan", help="jobs, shards and CPU-hours of a run, estimated from a previous run's timings")
    _run_arguments(pl, names)
    pl.add_argument("--shards", type=_int_at_least(1), default=10)
    pl.add_argument("--timings", type=Path, metavar="RUN_DIR")
    pl.add_argument("--image", help="runner image whose toolchain keys the jobs (default: the newest local one)")
    wk = bs.add_parser("worker", help="run one shard (the runner image's command on AWS Batch)")
    wk.add_argument("--manifest", required=True, metavar="s3://.../manifest.json")
    wk.add_argument("--shards", type=_shard_list,
                    help="comma-separated shard numbers; the array index picks one (default: the index)")
    wk.add_argument("--shard", type=_int_at_least(0), help="this array index instead of the environment's")
    rd = bs.add_parser("reduce", help="write records.jsonl, report.json, run.json next to the shards (the reducer job)")
    rd.add_argument("--manifest", required=True, metavar="s3://.../manifest.json")
    for name, text in (("status", "shards done/running/failed and jobs done"),
                       ("resubmit", "submit again only the shards with missing records"),
                       ("collect", "download the records into a run directory 'verikit validate' accepts")):
        c = bs.add_parser(name, help=text)
        c.add_argument("run", metavar="RUN", help="the run's S3 URI (as 'run --backend aws-batch' printed) or a batch.json")
        if name == "collect":
            c.add_argument("--out", type=Path, required=True)
        if name == "resubmit":
            c.add_argument("--queue")
            c.add_argument("--dry-run", action="store_true")
    pb = bs.add_parser("probe", help="probe a toolchain here with the host sandbox, as JSON (runner image builds)")
    pb.add_argument("toolchain")


def _say(console: Console, text: str) -> None:
    console.print(text, markup=False, highlight=False)


#: Storage failures reported as one message (exit 2) instead of a traceback: full disk,
#: quota, read-only filesystem, permission.
_STORAGE_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM)


class Terminated(KeyboardInterrupt):
    """SIGTERM (``timeout``, CI, systemd): stops a run as Ctrl-C does, exit 143."""


def _on_sigterm(signum, frame):
    raise Terminated()


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``verikit`` console script. Returns the exit code."""
    args = _parser().parse_args(argv)
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _on_sigterm) if in_main else None
    try:
        return _main(args, argv)
    finally:
        if in_main:
            signal.signal(signal.SIGTERM, previous)


def _main(args, argv) -> int:
    console = Console(stderr=True, soft_wrap=True)  # never split a file:line message across lines
    if not console.is_terminal:
        console.width = 160  # logs and pipes: wide enough that the summary tables stay readable
    from .runner import RunError

    handlers = {"run": _run, "reproduce": _reproduce, "validate": _validate, "cache": _cache, "list": _list,
                "images": _images, "batch": _batch, "publish": _publish, "pull": _pull, "rerun": _rerun,
                "compare": _compare, "report": _report, "artifact": _artifact,
                "datasets": _datasets, "prompts": _prompts, "convert": _convert,
                "modelbench-filters": _modelbench_filters}
    try:
        return handlers[args.cmd](args, console, argv)
    except (RunError, datasets.DatasetError) as exc:
        _say(console, f"error: {exc}")
        return 2
    except OSError as exc:
        if exc.errno not in _STORAGE_ERRORS:
            raise
        _say(console, f"error: cannot write {exc.filename or 'the output'}: {exc.strerror}; the records written "
                      f"so far are kept: free space (or make it writable) and re-run the same command to resume")
        return 2
    except Terminated:
        _say(console, "terminated (SIGTERM): finished jobs are kept; re-run the same command to resume")
        return 143
    except KeyboardInterrupt:
        _say(console, "interrupted: finished jobs are kept; re-run the same command to resume")
        return 130
    except Exception as exc:  # an AWS call that failed (no credentials, unknown queue, access denied): one message
        if type(exc).__module__.split(".")[0] != "botocore":
            raise
        _say(console, f"error: AWS: {exc}")
        return 2


def _cache(args, console: Console, argv) -> int:
    """``verikit cache verify|prune|clear``: exit 0, or 1 when ``verify`` finds entries a
    run would ignore."""
    cache = ResultCache(args.cache_dir)
    if args.action == "verify":
        good, problems = cache.verify()
        for prob in problems:
            console.print(f"[red]bad[/red] {prob}", markup=True, highlight=False)
        _say(console, f"{cache.root}: {good} good entr{'y' if good == 1 else 'ies'}, {len(problems)} a run would ignore")
        return 1 if problems else 0
    n = cache.prune() if args.action == "prune" else cache.clear()
    _say(console, f"{cache.root}: removed {n} entr{'y' if n == 1 else 'ies'}")
    return 0


def _command_opts(run_dir: Path, console: Console, verb: str, **override):
    """The RunOptions of the ``verikit run`` command that made ``run_dir`` (its run.json),
    with ``override`` (sandbox, parallel, data_dir, predictions) applied where not None;
    the cache is off. Raises RunError when the command cannot be read back or is not a
    ``run``."""
    from .runner import RunError

    where = Path(run_dir) / "run.json"
    command = list(json.loads(where.read_text(encoding="utf-8")).get("command") or [])
    try:
        original = _parser().parse_args(command[1:])
    except SystemExit:
        raise RunError(f"{where}: its command {command} cannot be read back") from None
    if original.cmd != "run":
        raise RunError(f"{where}: {verb} needs a run made by 'verikit run' (this one: {original.cmd}; re-run "
                       f"'verikit reproduce' and compare with 'verikit validate DIR --against {run_dir}')")
    if override.get("sandbox"):
        original.sandbox = override["sandbox"]
    opts = _run_opts(original, console, command[1:])
    for name, value in override.items():
        if value is not None:
            setattr(opts, name, value)
    opts.use_cache, opts.progress = False, False
    return opts


def _recheck(args, console: Console) -> list[str]:
    """``validate --recheck N``: the run's own command (run.json) re-planned, N of its
    records re-run without the cache, and compared."""
    from .runner import RunError, recheck

    try:
        opts = _command_opts(args.run_dir, console, "--recheck")
    except RunError as exc:
        return [str(exc)]
    records = load_records(Path(args.run_dir) / "records.jsonl")
    again, differences = recheck(opts, records, args.recheck, seed=args.seed, console=console)
    _say(console, f"rechecked {len(again)} record(s) with the real verifier: {len(differences)} difference(s)")
    return [f"recheck: {d}" for d in differences]


def _rejudge(args, console: Console) -> list[str]:
    """``validate``: every record's verdict re-derived from its stored tool output with the
    current parser and judge (no tool runs; the run's data are fetched or read from the
    cache/mirror). A run made before outputs were kept (schema 1.0) is said so."""
    from .runner import RunError, rejudge

    try:
        records = load_records(Path(args.run_dir) / "records.jsonl")
    except (OSError, ValueError):
        return []  # reported by check_run_dir
    if not records:
        return []
    if all(r.get("schema_version") == "1.0" for r in records):
        _say(console, f"note: {len(records)} record(s) were made before verikit kept the tools' outputs (schema 1.0): "
                      "their verdicts are checked against their goal counts only (--recheck N re-runs some)")
        return []
    try:
        command = json.loads((Path(args.run_dir) / "run.json").read_text(encoding="utf-8")).get("command") or []
        if command[1:2] == ["reproduce"]:
            original = _parser().parse_args(command[1:])
            original.sandbox = "host"  # nothing runs: no engine needed to re-plan
            modes = sorted({r["mode"] for r in records})
            opts = _options(original, console, command[1:], modes=modes)
            opts.use_cache, opts.progress = False, False
        else:
            opts = _command_opts(args.run_dir, console, "validate", sandbox="host")
        checked, legacy, differences = rejudge(opts, records, args.run_dir, console=console)
    except (RunError, OSError, ValueError) as exc:
        return [f"re-judge: the run's jobs cannot be re-planned, so its verdicts cannot be re-derived: {exc}"]
    _say(console, f"re-judged {checked} record(s) from their stored tool output (no tool run): "
                  f"{len(differences)} difference(s)" + (f"; {legacy} record(s) of schema 1.0 not re-judged" if legacy else ""))
    return [f"re-judge: {d}" for d in differences]


def _compare(args, console: Console, argv) -> int:
    """``verikit compare EXPECTED ACTUAL``: exit 0 equal, 1 a difference, 2 not run directories."""
    from .results import TOLERANCE

    for d in (args.expected, args.actual):
        if not (Path(d) / "records.jsonl").is_file():
            _say(console, f"error: {d}: not a run directory (no records.jsonl)")
            return 2
    tol = TOLERANCE if args.tolerance is None else args.tolerance
    diffs, counts = compare_runs(args.expected, args.actual, tolerance=tol, subset=args.subset)
    if diffs:
        t = Table(title=f"{args.actual} vs expected {args.expected}")
        for c in ("what", "expected", "actual"):
            t.add_column(c, overflow="fold")
        for what, a, b in diffs[:200]:
            t.add_row(what, a, b)
        console.print(t)
        if len(diffs) > 200:
            _say(console, f"... and {len(diffs) - 200} more difference(s)")
    name = f"claim {args.claim}" if args.claim else str(args.actual)
    _say(console, f"{'PASS' if not diffs else 'FAIL'} {name}: records {counts['records']}, verdicts equal "
                  f"{counts['verdicts_equal']}, goal counts equal {counts['goals_equal']}"
                  + (" (a subset: report numbers not compared)" if args.subset else
                     f", report numbers equal {counts['numbers_equal']}/{counts['numbers']} (tolerance {tol:g})")
                  + "; timings not compared")
    return 1 if diffs else 0


def _report(args, console: Console, argv) -> int:
    """``verikit report RUN... [--html FILE] [--compare]``: the summary tables of each run
    (as at the end of a run), its ``verikit validate`` problems, with ``--compare`` the
    task-by-task differences of two runs, and with ``--html`` the HTML page. Exit 0, or 2
    when a run directory cannot be read or ``--compare`` is not given two runs."""
    from .htmlreport import ReportError, load_view, render_html, task_differences
    from .report import print_summary

    try:
        views = [load_view(d) for d in args.runs]
        if args.compare and len(views) != 2:
            raise ReportError(f"--compare takes exactly two runs, got {len(views)}")
    except ReportError as exc:
        _say(console, f"error: {exc}")
        return 2
    for v in views:
        _say(console, f"== {v.path}: {v.report.get('benchmark')} / {v.report.get('dataset')}"
                      + (f", run id {v.run_id}" if v.run_id else ""))
        print_summary(v.report, console)
        for prob in v.problems:
            console.print(f"[red]invalid[/red] {prob}", markup=True, highlight=False)
    if args.compare:
        diffs = task_differences(views[0].records, views[1].records)
        if diffs:
            t = Table(title=f"A {views[0].path} vs B {views[1].path}: task-by-task differences")
            for c in ("change", "mode", "task", "model", "sample", "verdict A", "verdict B", "goals A", "goals B"):
                t.add_column(c, overflow="fold")
            for d in diffs:
                a, b = d["a"] or {}, d["b"] or {}
                t.add_row(d["change"], d["mode"], d["task_id"], d["model"], str(d["sample"]), a.get("verdict", "-"),
                          b.get("verdict", "-"), a.get("goals", "-"), b.get("goals", "-"))
            console.print(t)
        by = Counter(d["change"] for d in diffs)
        _say(console, f"{len(diffs)} task(s) differ" + (": " + ", ".join(f"{k} {n}" for k, n in sorted(by.items()))
                                                         if diffs else ""))
    if args.html:
        write_text_atomic(args.html, render_html(views, compare=args.compare))
        _say(console, f"wrote {args.html}")
    return 0


def _rerun(args, console: Console, argv) -> int:
    """``verikit rerun DIR``: every record of the run re-verified here (no cache) with the
    run's own command; prints agreement per record, writes ``DIR/rerun.json``; exit 0 when
    every record agrees, 1 otherwise, 2 for a directory that is not a valid run."""
    import shutil
    import tempfile

    from .results import record_identity, record_outcome, write_json_atomic
    from .runner import recheck

    d = Path(args.run_dir)
    problems = check_run_dir(d) if d.is_dir() else [f"{d}: not a run directory"]
    if problems:
        for prob in problems:
            _say(console, f"error: {prob}")
        return 2
    run = json.loads((d / "run.json").read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="verikit-rerun-") as tmp:
        preds = None
        if run.get("predictions"):
            have = d / "predictions.jsonl"
            if not have.is_file():
                _say(console, f"error: {have}: missing; the run scored {run['predictions']['path']} "
                              f"(a pulled run carries it as predictions.jsonl)")
                return 2
            # under the name the run read it by: a candidate's origin names the file
            preds = Path(tmp) / Path(run["predictions"]["path"]).name
            shutil.copyfile(have, preds)
        opts = _command_opts(d, console, "rerun", sandbox=args.sandbox, parallel=args.jobs, data_dir=args.data_dir,
                             predictions=str(preds) if preds else None)
        records = load_records(d / "records.jsonl")
        again, differences = recheck(opts, records, len(records), console=console)
    now = {record_identity(r): r for r in again}
    rows = []
    for r in records:
        a = now.get(record_identity(r))
        before, after = record_outcome(r), (record_outcome(a) if a else None)
        rows.append({"mode": r["mode"], "task_id": r["task_id"], "model": r["candidate"]["model"],
                     "sample": r["candidate"]["sample"], "recorded": before, "rerun": after,
                     "agree": after == before, "reason": a["reason"] if a else "not re-run (see differences)"})
    agree = sum(x["agree"] for x in rows)
    toolchain = (again[0]["toolchain"] if again else {})
    write_json_atomic(d / "rerun.json", {
        "run_dir": str(d), "kit": {"version": __version__}, "sandbox": opts.sandbox,
        "toolchain": toolchain, "recorded_toolchains": run.get("toolchains"),
        "agreement": {"agree": agree, "total": len(rows)}, "differences": differences, "records": rows})
    t = Table(title=f"{d}: re-verified here ({opts.sandbox} sandbox)")
    for c in ("mode", "task", "model", "sample", "recorded", "rerun", "agree"):
        t.add_column(c)

    def show(o):
        return "-" if o is None else f"{o['verdict']} {o['goals.proved']}/{o['goals.total']}"

    shown = rows if len(rows) <= 60 else [x for x in rows if not x["agree"]]
    for x in shown:
        t.add_row(x["mode"], x["task_id"], x["model"], str(x["sample"]), show(x["recorded"]), show(x["rerun"]),
                  "yes" if x["agree"] else "[red]NO[/red]")
    console.print(t)
    recorded_fp = {tc.get("fingerprint") for tc in run.get("toolchains") or []}
    if toolchain and toolchain.get("fingerprint") not in recorded_fp:
        drift = ", ".join(f"{tool}: {v.get('version')}" for tool, v in sorted((toolchain.get("tools") or {}).items()))
        _say(console, f"note: the toolchain here differs from the run's (fingerprint "
                      f"{toolchain.get('fingerprint', '')[:12]} vs {', '.join(f[:12] for f in recorded_fp if f)}; "
                      f"here: {drift})")
    for diff in differences:
        _say(console, f"difference: {diff}")
    _say(console, f"agreement {agree}/{len(rows)} records (verdict and goal counts); details in {d / 'rerun.json'}")
    return 0 if agree == len(rows) and not differences else 1


def _publish(args, console: Console, argv) -> int:
    """``verikit publish``: exit 0 published (or already there), 2 refused or the Hub failed."""
    import tempfile

    from . import hub

    if args.dry_run and args.out is None:
        _say(console, "error: --dry-run needs --out DIR (where the files the commit would add are written)")
        return 2
    say = lambda m: _say(console, m)  # noqa: E731
    with tempfile.TemporaryDirectory(prefix="verikit-publish-") as tmp:
        try:
            runs = hub.prepare(args.runs, Path(tmp), allow_infra_errors=args.allow_infra_errors,
                               allow_dirty=args.allow_dirty)
        except hub.Refused as exc:
            for line in str(exc).splitlines():
                _say(console, f"refused: {line}")
            _say(console, "nothing was published")
            return 2
        if args.dry_run:
            files = hub.dry_run(args.repo, runs, args.out)
            for path, data in sorted(files.items()):
                print(f"add {path} ({len(data)} bytes)")
            _say(console, f"dry run: {len(files)} file(s) of one commit to {args.repo} written to {args.out} "
                          f"(card and leaderboard as in an empty repository); nothing was sent")
            return 0
        try:
            result = hub.publish(args.repo, runs, revision=args.revision, private=args.private, say=say)
        except hub.HubError as exc:
            _say(console, f"error: Hub: {exc}")
            return 2
    if result.commit is None:
        _say(console, f"{args.repo}: every run is already published; no new commit")
        return 0
    for rid in result.added:
        _say(console, f"published {rid}")
    _say(console, f"{args.repo}@{args.revision}: commit {result.commit} ({len(result.files)} file(s), "
                  f"{result.attempts} attempt(s))")
    return 0


def _pull(args, console: Console, argv) -> int:
    """``verikit pull``: exit 0 every run checks, 1 a run has problems, 2 the Hub failed."""
    from . import hub

    try:
        got = hub.pull(args.repo, args.out, run_id=args.run, revision=args.revision, say=lambda m: _say(console, m))
    except hub.HubError as exc:
        _say(console, f"error: Hub: {exc}")
        return 2
    bad = 0
    for where, problems in got.items():
        for prob in problems:
            console.print(f"[red]invalid[/red] {prob}", markup=True, highlight=False)
        bad += bool(problems)
    _say(console, f"{len(got)} run(s) pulled into {args.out}: {len(got) - bad} check, {bad} do not"
         + (f"; re-verify one with 'verikit rerun {next(iter(got))}'" if got and not bad else ""))
    return 1 if bad else 0


def _validate(args, console: Console, argv) -> int:
    if str(args.run_dir).startswith("s3://"):
        import tempfile

        from .results import S3Store

        with tempfile.TemporaryDirectory(prefix="verikit-validate-") as tmp:
            got = S3Store(args.run_dir).download_run(Path(tmp))
            if "run.json" not in got:
                _say(console, f"error: {args.run_dir}: no run.json (not reduced yet? 'verikit batch status')")
                return 2
            _say(console, f"{args.run_dir}: downloaded {', '.join(got)}")
            args.run_dir = Path(tmp)
            return _validate(args, console, argv)
    args.run_dir = Path(args.run_dir)
    for d in (args.run_dir, args.against):
        if d is not None and not Path(d).is_dir():
            _say(console, f"error: {d}: not a run directory")
            return 2
    problems = check_run_dir(args.run_dir)
    if args.against is not None:
        problems += [f"differs from {args.against}: {what}: {a} -> {b}"
                     for what, a, b in compare_runs(args.against, args.run_dir)[0]]
    problems += _rejudge(args, console)
    if args.recheck:
        problems += _recheck(args, console)
    for prob in problems:
        console.print(f"[red]invalid[/red] {prob}", markup=True, highlight=False)
    if not problems:
        _say(console, f"{args.run_dir}: valid (run.json, records.jsonl, report.json)"
             + (f"; same verdicts, goal counts and metrics as {args.against}" if args.against else ""))
    return 1 if problems else 0


def _options(args, console: Console, argv, *, modes: list[str] | None = None):
    """RunOptions from the parsed ``run``/``reproduce`` arguments; picks the default
    sandbox (container when an engine answers). Raises RunError."""
    from .runner import RunError, RunOptions
    from .sandbox.container import EngineUnavailable, connect

    if args.sandbox is None:
        try:
            connect().close()
        except EngineUnavailable as exc:
            raise RunError(f"the default sandbox is 'container', but {exc}") from exc
        args.sandbox = "container"
    return RunOptions(
        benchmark=args.benchmark, dataset=args.dataset, modes=modes or [], sandbox=args.sandbox,
        parallel=args.jobs, limits=Limits(wall_s=args.timeout, mem_mb=args.memory), out=args.out,
        cache_dir=args.cache_dir, use_cache=not args.no_cache, data_dir=args.data_dir, seed=args.seed,
        command=["verikit", *(argv if argv is not None else sys.argv[1:])])


def _modes(args) -> list[str]:
    """The modes of ``verikit run``: ``--lang`` for a benchmark whose mode is a proof
    language (NTP4VC), ``--mode`` otherwise. Raises RunError for the wrong option."""
    from .runner import RunError

    bench = registry.benchmark(args.benchmark)
    given, other = (args.langs, args.modes) if bench.mode_option == "lang" else (args.modes, args.langs)
    if other:
        wrong = "--mode" if bench.mode_option == "lang" else "--lang"
        raise RunError(f"{bench.name} takes --{bench.mode_option}, not {wrong} "
                       f"({bench.mode_option}s: {', '.join(bench.modes)})")
    return given or []


def _run(args, console: Console, argv) -> int:
    from .runner import run

    if args.backend == "aws-batch":
        return _submit(args, console, argv)
    opts = _run_opts(args, console, argv)
    _, _, code = run(opts, console)
    return code


def _run_opts(args, console: Console, argv):
    """RunOptions of a parsed ``run`` (or ``batch plan``) command line."""
    opts = _options(args, console, argv, modes=_modes(args))
    opts.predictions, opts.keep_going, opts.task_ids = args.predictions, args.keep_going, args.task_ids
    opts.sample = args.sample
    return opts


#: ``run`` options that concern the batch submission, not the jobs: left out of the
#: command a batch manifest records (workers re-plan from it).
_BATCH_ONLY = {"--backend": 1, "--s3": 1, "--queue": 1, "--shards": 1, "--image": 1, "--timings": 1,
               "--dry-run": 0, "--out": 1, "--sandbox": 1, "--cache-dir": 1, "--no-cache": 0, "--data-dir": 1}


def _job_command(argv: list[str]) -> list[str]:
    """``argv`` (``run ...``) without the batch-only options (``--opt value`` and
    ``--opt=value`` forms)."""
    out, skip = [], 0
    for a in argv:
        if skip:
            skip -= 1
            continue
        name = a.split("=", 1)[0]
        if name in _BATCH_ONLY:
            skip = _BATCH_ONLY[name] if "=" not in a else 0
            continue
        out.append(a)
    return out


def _runner_probe(image: str | None, opts):
    """``(image, probed toolchain)`` of the runner image (its label) of the toolchain
    ``opts``'s first mode runs with (default: the newest local one). Raises RunError."""
    from .runner import RunError
    from .sandbox import SandboxError, images
    from .toolchains import ProbedToolchain

    bench = registry.benchmark(opts.benchmark)
    toolchain = registry.verifier(bench.verifier_for((opts.modes or bench.default_modes or bench.modes)[0])).toolchain
    try:
        image = image or images.resolve_runner(toolchain)
        return image, ProbedToolchain.from_json(images.runner_toolchain(image))
    except (SandboxError, ValueError) as exc:
        raise RunError(str(exc)) from None


def _submit(args, console: Console, argv) -> int:
    """``run --backend aws-batch``: plan here, put the manifest in S3, submit the array
    job and its reducer; print the run's S3 URI and the job ids; write batch.json."""
    import boto3

    from .batch import runs
    from .runner import RunError

    if not args.s3:
        raise RunError("--backend aws-batch needs --s3 s3://BUCKET/PREFIX")
    argv = list(argv if argv is not None else sys.argv[1:])
    args.sandbox = "host"  # planning only: the jobs run in the runner image, where the container is the sandbox
    opts = _run_opts(args, console, argv)
    image, probed = _runner_probe(args.image, opts)
    info = runs.submit_run(opts, console, command=_job_command(argv), s3=args.s3, image=image, probed=probed,
                           queue=args.queue, n_shards=args.shards, timings=args.timings,
                           batch=boto3.client("batch"), dry_run=args.dry_run)
    est = info["estimate"]
    _say(console, f"{info['run_uri']}: {est['jobs']} jobs in {est['shards']} shard(s), about {est['cpu_hours']} "
                  f"CPU-hours{' (dry run: nothing submitted)' if args.dry_run else ''}")
    if not args.dry_run:
        sub = info["submissions"][0]
        path = runs.write_local(args.out, info)
        print(json.dumps({"run": info["run_uri"], "array_job_id": sub["array_job_id"],
                          "reducer_job_id": sub["reducer_job_id"], "batch_json": str(path)}))
    return 0


def _batch_run_uri(run: str) -> str:
    """A batch run's S3 URI from its URI or a local batch.json."""
    if run.startswith("s3://"):
        return run
    path = Path(run)
    if path.is_dir():
        path = path / "batch.json"
    try:
        return json.loads(path.read_text())["run_uri"]
    except (OSError, ValueError, KeyError) as exc:
        from .runner import RunError

        raise RunError(f"{run}: neither an s3:// URI nor a batch.json ({exc})") from None


def _manifest_options(manifest: dict, console: Console):
    """RunOptions from a batch manifest's command (parsed as the user's ``run`` was)."""
    from .runner import RunError

    try:
        parsed = _parser().parse_args(manifest["command"])
    except SystemExit:
        raise RunError(f"the manifest's command {manifest['command']} cannot be read") from None
    parsed.sandbox = "host"  # in the runner image the container is the sandbox
    return _run_opts(parsed, console, manifest["command"])


def _batch(args, console: Console, argv) -> int:
    import tempfile

    from .batch import aws, runs, worker
    from .runner import RunError

    cmd = args.batch_cmd
    if cmd == "probe":
        from .sandbox.local import HostSandbox

        print(json.dumps(toolchains.probe(args.toolchain, HostSandbox(), flavor="host").to_json(), sort_keys=True))
        return 0
    if cmd == "setup":
        import boto3

        images = dict(i.split("=", 1) for i in args.image if "=" in i)
        if len(images) != len(args.image):
            raise RunError("--image takes TOOLCHAIN=URI")
        calls = aws.setup(boto3.client("batch"), subnets=args.subnets.split(","), security_groups=args.security_groups,
                          images=images, limits=Limits(mem_mb=args.memory), max_vcpus=args.max_vcpus,
                          instance_role=args.instance_role, service_role=args.service_role, job_role=args.job_role,
                          calls=aws.Calls(dry_run=args.dry_run))
        print(calls.to_text() or "nothing to change: the compute environment, queue and job definitions are as asked")
        return 0
    if cmd == "plan":
        args.sandbox = "host"
        opts = _run_opts(args, console, argv)
        _, probed = _runner_probe(args.image, opts)
        _, jobs, split, est = runs.plan_batch(opts, console, probed, args.shards, args.timings)
        print(json.dumps({**est, "from_timings": str(args.timings) if args.timings else None,
                          "shard_s": [round(sum(jobs[k]["cost_s"] for k in s), 1) for s in split]}, indent=2))
        return 0
    if cmd in ("worker", "reduce"):
        store, manifest = worker.load_manifest(args.manifest)
    else:
        store, manifest = worker.load_manifest(_batch_run_uri(args.run))
    if cmd == "worker":
        try:
            index = args.shard if args.shard is not None else worker.shard_index()
        except ValueError as exc:
            raise RunError(str(exc)) from None
        shard = args.shards[index] if args.shards and index < len(args.shards) else index
        if args.shards and index >= len(args.shards) or shard >= len(manifest["shards"]):
            raise RunError(f"array index {index} has no shard: --shards {args.shards}, the manifest has "
                           f"{len(manifest['shards'])} shard(s)")
        with tempfile.TemporaryDirectory(prefix="verikit-worker-") as tmp:
            opts = worker.worker_options(_manifest_options(manifest, console), store, manifest, Path(tmp))
            try:
                summary = worker.work(opts, store, manifest, shard, console)
            except worker.ShardFailed as exc:
                _say(console, f"shard {shard} FAILED: {exc}")
                return 3
        print(json.dumps(summary, sort_keys=True))
        return 143 if summary["stopped"] else 4 if summary["infra_error"] else 0
    if cmd in ("collect", "reduce"):
        with tempfile.TemporaryDirectory(prefix="verikit-collect-") as tmp:
            opts = worker.worker_options(_manifest_options(manifest, console), store, manifest, Path(tmp))
            opts.out = args.out if cmd == "collect" else Path(tmp) / "run"
            try:
                code, missing = worker.collect(opts, store, manifest, console)
            except worker.ShardFailed as exc:
                _say(console, f"error: {store.uri}: {exc}")
                return 2
            for m in missing:
                console.print(f"[red]no record[/red] {m}", markup=True, highlight=False)
            if cmd == "reduce" and not missing:
                store.upload_run(opts.out)
        return code
    import boto3

    if cmd == "status":
        st = runs.status(store, manifest, boto3.client("batch"))
        for n, s in st["shards"].items():
            aws_state = s["aws"]["status"] if s["aws"] else "-"
            reason = f" ({s['aws']['statusReason']})" if s["aws"] and s["aws"].get("statusReason") else ""
            infra = f", {s['infra_errors']} infra error(s) to retry" if s["infra_errors"] else ""
            print(f"shard {n}: {s['done']}/{s['jobs']} jobs recorded{infra}, {s['state']}; AWS {aws_state}{reason}")
        print(f"{store.uri}: {st['done']}/{st['jobs']} jobs recorded; reduced: {'yes' if st['reduced'] else 'no'}")
        return 0
    sub = runs.resubmit(store, manifest, boto3.client("batch"), queue=args.queue, dry_run=args.dry_run, console=console)
    if sub is None:
        _say(console, f"{store.uri}: every job has its record; nothing to resubmit")
    else:
        print(json.dumps(sub))
    return 0


def _fmt(v) -> str:
    if isinstance(v, dict) and "passed" in v:
        pct = f" = {v['percent']:.2f} %" if v.get("percent") is not None else ""
        return f"{v['passed']}/{v['total']}{pct}"
    return "-" if v is None else str(v)


def _reproduce(args, console: Console, argv) -> int:
    """Write the reproduction run directory, print published vs reproduced figures; exit 1
    when a reproducible figure differs."""
    from .runner import reproduce

    if not registry.benchmark(args.benchmark).reproduce_modes() and args.sandbox is None:
        args.sandbox = "host"  # a rescoring-only reproduction runs no tool: no engine needed
    rep, code = reproduce(_options(args, console, argv), console)
    table = Table(title=f"{args.benchmark}: paper vs kit")
    for col in ("figure", "paper", "kit", "status"):
        table.add_column(col, overflow="fold")
    for f in rep.figures:
        words = ({"reproduced": "holds", "differs": "DOES NOT HOLD"} if f.get("criterion")
                 else {"reproduced": "equal", "differs": "DIFFERS"})  # a finding judged by a stated criterion
        status = {**words, "not_reproducible": "not reproducible"}[f["status"]]
        table.add_row(f"{f['table']} {f['row']} ({f['column']})", _fmt(f["published"]), _fmt(f["reproduced"]), status)
    Console().print(table)
    for note in rep.notes:
        _say(console, f"note: {note}")
    s = rep.summary()
    _say(console, f"{s['reproduced']} reproduced exactly, {s['differs']} differ, "
         f"{s['not_reproducible']} not reproducible; wrote {args.out}/run.json, records.jsonl, report.json")
    if s["differs"]:
        _say(console, "error: the kit does not reproduce the paper on the figures marked DIFFERS")
    return code


def _images(args, console: Console, argv) -> int:
    from .sandbox import SandboxError, images

    try:
        log = lambda m: _say(console, m)  # noqa: E731
        derived = registry.derived_images()
        if args.images_cmd == "build" and args.runner:
            print(images.build_runner(args.name, force=args.force, engine=args.engine, log=log))
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
            images.build_nix(args.name, force=args.force, engine=args.engine, log=log)
        elif args.images_cmd == "build" and args.name in derived:
            bench_name, mode = derived[args.name]
            bench = registry.benchmark(bench_name)
            spec = bench.derived_image_spec(mode, datasets.fetch(bench.default_dataset))
            images.build_derived(spec, force=args.force, engine=args.engine, log=log)
        elif args.images_cmd == "build":
            images.build(args.name, force=args.force, engine=args.engine, log=log, base_image=args.base_image)
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
    except SandboxError as exc:
        _say(console, f"error: {exc}")
        return 2
    return 0


def _datasets(args, console: Console, argv) -> int:
    if args.datasets_cmd == "pin":
        from .datasets import local

        import yaml

        print(yaml.safe_dump(local.pin_entry(args.path), sort_keys=False, allow_unicode=True), end="")
        return 0
    for name, ds in datasets.REGISTRY.items():
        print(f"{name}\t{ds.source.kind}:{ds.source.repo}@{ds.source.revision}\t{len(ds.files)} files")
    return 0


def _bench_data(args):
    """(benchmark, fetched, tasks) for ``prompts``/``convert``. Raises RunError."""
    from .runner import RunError, open_dataset

    bench = registry.benchmark(args.benchmark)
    fetched = open_dataset(bench, args.dataset, args.data_dir)
    tasks = bench.load_tasks(fetched)
    ids = getattr(args, "task_ids", None)
    if ids:
        unknown = sorted(set(ids) - {t.task_id for t in tasks})
        if unknown:
            raise RunError(f"unknown task id(s) {unknown} in {fetched.dataset.name}")
        tasks = [t for t in tasks if t.task_id in set(ids)]
    return bench, fetched, tasks


def _write_jsonl(lines: list[dict], output: Path | None) -> None:
    text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    if output is None:
        sys.stdout.write(text)
    else:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf-8")


def _prompts(args, console: Console, argv) -> int:
    from .runner import RunError

    bench, fetched, tasks = _bench_data(args)
    mode = args.mode or (bench.default_modes or bench.modes)[0]
    try:
        lines = bench.prompts(fetched, tasks, mode, shots=args.shots)
    except (NotImplementedError, ValueError) as exc:
        raise RunError(str(exc)) from exc
    _write_jsonl(lines, args.output)
    if args.output:
        _say(console, f"wrote {len(lines)} prompt(s) to {args.output}")
    return 0


def _convert(args, console: Console, argv) -> int:
    from .runner import RunError

    bench, fetched, tasks = _bench_data(args)
    try:
        lines = bench.convert(args.source, fetched, tasks, model=args.model)
    except (NotImplementedError, ValueError) as exc:
        raise RunError(str(exc)) from exc
    _write_jsonl(lines, args.output)
    _say(console, f"wrote {len(lines)} prediction line(s) to {args.output}")
    return 0


def _modelbench_filters(args, console: Console, argv) -> int:
    """Model-Bench's Table 1 on the given problem files; exit 2 on a bad file."""
    from .benchmarks import modelbench
    from .runner import RunError

    paths = {name: path for name, path in (("MBPP", args.mbpp), ("LiveCodeBench", args.livecodebench)) if path}
    try:
        out = modelbench.filter_counts(paths, registry.sandbox("host"), humaneval=not args.no_humaneval)
    except (modelbench.ProblemFileError, OSError) as exc:
        raise RunError(str(exc)) from exc
    print(json.dumps(out, indent=2) if args.json else modelbench.format_table1(out["table1"]), end="" if not args.json else "\n")
    return 0


def _list(args, console: Console, argv) -> int:
    from .sandbox import SandboxError

    info = {"benchmarks": {}, "datasets": {}, "toolchains": {}}
    for name in registry.BENCHMARKS:
        b = registry.benchmark(name)
        info["benchmarks"][name] = {"modes": list(b.modes), "mode_option": b.mode_option, "datasets": list(b.datasets),
                                    "verifier": ", ".join(sorted({b.verifier_for(m) for m in b.modes}))}
    for name, ds in datasets.REGISTRY.items():
        info["datasets"][name] = {"source": f"{ds.source.kind}:{ds.source.repo}@{ds.source.revision}",
                                  "files": len(ds.files), "description": ds.description.splitlines()[0]}
    for name in toolchains.load_pins()["toolchains"]:
        try:
            sandbox = registry.sandbox(args.sandbox, toolchain=name)
        except SandboxError as exc:  # container: image not built, or no engine
            info["toolchains"][name] = {"error": str(exc).splitlines()[0], "tools": {}}
            continue
        try:
            info["toolchains"][name] = toolchains.probe(
                name, sandbox, flavor="host" if args.sandbox == "host" else "debian").to_json()
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


if __name__ == "__main__":
    sys.exit(main())
