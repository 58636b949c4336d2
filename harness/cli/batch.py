"""Batch runs on AWS Batch or SLURM: ``verikit batch
setup|plan|worker|reduce|status|resubmit|collect|cancel|probe``, and the submission of
``verikit run --backend aws-batch|slurm`` (docs: 'Cloud batch (AWS)', 'Running on a cluster')."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from rich.console import Console

from .. import registry, toolchains
from ..batch import aws, control, slurm, worker
from ..model import Limits
from ..runner import RunError
from ..sandbox import HOST, SandboxError
from ..sandbox.images import resolve_runner, runner_toolchain
from ..toolchains import ProbedToolchain
from .common import MIN_MEMORY_MIB, int_at_least, say
from .options import add_run_arguments, run_spec_from_args

# boto3 is imported where an AWS client is made, not here: it (with botocore) costs every
# verikit command about 50 ms of start-up, and only the AWS calls need it.


def _shard_list(text: str) -> list[int]:
    """``--shards 3,7`` of ``batch worker``: shard numbers, each at least 0."""
    parse = int_at_least(0)
    return [parse(x) for x in text.split(",")]


def _add_batch(sub) -> None:
    ba = sub.add_parser("batch", help="batch runs on AWS Batch or SLURM: setup, plan, status, collect, resubmit, "
                        "cancel (submit with 'run --backend aws-batch|slurm')")
    ba.set_defaults(handler=_batch)
    bs = ba.add_subparsers(dest="batch_cmd", required=True)
    st = bs.add_parser("setup", help="create or update the spot compute environment, the job queue and the job "
                       "definitions (idempotent, tagged verikit=1)")
    st.add_argument("--subnets", required=True, help="comma-separated subnet ids")
    st.add_argument("--security-group", action="append", required=True, dest="security_groups")
    st.add_argument("--image", action="append", required=True, metavar="TOOLCHAIN=URI",
                    help="a runner image per toolchain, as pushed (repeatable)")
    st.add_argument("--max-vcpus", type=int_at_least(1), default=256)
    st.add_argument("--instance-role", default="ecsInstanceRole", help="instance profile of the spot instances")
    st.add_argument("--service-role", help="AWS Batch service role ARN (default: the service-linked role)")
    st.add_argument("--job-role", help="IAM role ARN the workers run as (S3 read/write on the runs' prefix)")
    st.add_argument("--memory", type=int_at_least(MIN_MEMORY_MIB), default=4096, help="memory per job, MiB")
    st.add_argument("--dry-run", action="store_true", help="print the API calls, make none")
    pl = bs.add_parser("plan", help="jobs, shards and CPU-hours of a run, estimated from a previous run's timings")
    add_run_arguments(pl, list(registry.BENCHMARKS))
    pl.add_argument("--shards", type=int_at_least(1), default=10)
    pl.add_argument("--timings", type=Path, metavar="RUN_DIR")
    pl.add_argument("--image", help="runner image whose toolchain keys the jobs (default: the newest local one)")
    wk = bs.add_parser("worker", help="run one shard (the runner image's command on AWS Batch, an array task's "
                       "on SLURM)")
    wk.add_argument("--manifest", required=True, metavar="s3://.../manifest.json|DIR/manifest.json")
    wk.add_argument("--shards", type=_shard_list,
                    help="comma-separated shard numbers; the array index picks one (default: the index)")
    wk.add_argument("--shard", type=int_at_least(0), help="this array index instead of the environment's")
    rd = bs.add_parser("reduce", help="write records.jsonl, report.json, run.json next to the shards (the reducer job)")
    rd.add_argument("--manifest", required=True, metavar="s3://.../manifest.json")
    for name, text in (("status", "shards done/running/failed and jobs done"),
                       ("resubmit", "submit again only the shards with missing records"),
                       ("collect", "download the records into a run directory 'verikit validate' accepts"),
                       ("cancel", "cancel the run's array tasks that have not ended (records written stay)")):
        c = bs.add_parser(name, help=text)
        c.add_argument("run", metavar="RUN", help="the run's S3 URI or store directory (as 'run --backend "
                       "aws-batch|slurm' printed), or a batch.json")
        if name == "collect":
            c.add_argument("--out", type=Path, required=True)
        if name == "resubmit":
            c.add_argument("--queue", help="aws-batch: another job queue")
            c.add_argument("--dry-run", action="store_true")
    pb = bs.add_parser("probe", help="probe a toolchain here with the host sandbox, as JSON (runner image builds)")
    pb.add_argument("toolchain")


def _batch(args, console: Console, argv) -> int:
    cmd = args.batch_cmd
    if cmd == "probe":
        print(json.dumps(toolchains.probe(args.toolchain, registry.sandbox(HOST)).to_json(), sort_keys=True))
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
        spec, settings = run_spec_from_args(args, argv, sandbox=HOST)  # planning only: no job runs here
        _, probed = _runner_probe(args.image, spec)
        _, jobs, split, est = control.plan_batch(spec, settings, console, probed, args.shards, args.timings)
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
            spec, settings = worker.worker_spec(store, manifest, Path(tmp))
            try:
                summary = worker.work(spec, settings, store, manifest, shard, console)
            except worker.ShardFailed as exc:
                say(console, f"shard {shard} FAILED: {exc}")
                return 3
        print(json.dumps(summary, sort_keys=True))
        return 143 if summary["stopped"] else 4 if summary["infra_error"] else 0
    if cmd in ("collect", "reduce"):
        with tempfile.TemporaryDirectory(prefix="verikit-collect-") as tmp:
            spec, settings = worker.worker_spec(store, manifest, Path(tmp))
            out = args.out if cmd == "collect" else Path(tmp) / "out"
            try:
                code, missing = worker.collect(spec, settings, out, store, manifest, console)
            except worker.ShardFailed as exc:
                say(console, f"error: {store.uri}: {exc}")
                return 2
            for m in missing:
                console.print(f"[red]no record[/red] {m}", markup=True, highlight=False)
            if cmd == "reduce" and not missing:
                store.upload_run(out)
        return code
    engine = _engine(store, manifest, queue=getattr(args, "queue", None), dry_run=getattr(args, "dry_run", False))
    if cmd == "status":
        st = control.status(store, manifest, engine)
        for n, s in st["shards"].items():
            sched = s["scheduler"]
            state = sched["state"] if sched else "-"
            reason = f" ({sched['reason']})" if sched and sched.get("reason") else ""
            infra = f", {s['infra_errors']} infra error(s) to retry" if s["infra_errors"] else ""
            print(f"shard {n}: {s['done']}/{s['jobs']} jobs recorded{infra}, {s['state']}; {engine.label} "
                  f"{state}{reason}")
        print(f"{store.uri}: {st['done']}/{st['jobs']} jobs recorded; reduced: {'yes' if st['reduced'] else 'no'}")
        return 0
    if cmd == "cancel":
        stopped = control.cancel(store, engine)
        say(console, f"{store.uri}: asked {engine.label} to cancel {len(stopped)} job(s)"
                      f"{': ' + ', '.join(stopped) if stopped else ' (none was running or pending)'}; the records "
                      f"written stay ('verikit batch resubmit' runs the rest)")
        return 0
    sub = control.resubmit(store, manifest, engine, dry_run=args.dry_run, console=console)
    if sub is None:
        say(console, f"{store.uri}: every job has its record; nothing to resubmit")
    else:
        print(json.dumps(sub))
    return 0


def _runner_probe(image: str | None, spec):
    """``(image, probed toolchain)`` of the runner image (its label) of the toolchain
    ``spec``'s first mode runs with (default: the newest local one). Raises RunError."""
    bench = registry.benchmark(spec.benchmark)
    toolchain = registry.verifier(bench.verifier_for((spec.modes or bench.default_modes or bench.modes)[0])).toolchain
    try:
        image = image or resolve_runner(toolchain)
        return image, ProbedToolchain.from_json(runner_toolchain(image))
    except (SandboxError, ValueError) as exc:
        raise RunError(str(exc)) from None


def _engine(store, manifest: dict, *, queue: str | None = None, dry_run: bool = False) -> control.Engine:
    """The engine a batch run was submitted to (its submissions.json, else its manifest)."""
    info = control.submissions(store)
    if (info.get("backend") or manifest.get("backend", "aws-batch")) == "slurm":
        return slurm.Slurm.from_info(info, dry_run=dry_run)
    import boto3

    return aws.AwsBatch.from_info(boto3.client("batch"), info, manifest, queue=queue, dry_run=dry_run)


def submit(args, console: Console, argv) -> int:
    """``run --backend aws-batch|slurm``: plan here, put the manifest in the store, submit
    the array job; print the run's store and the job ids; write batch.json."""
    info = _submit_slurm(args, console, argv) if args.backend == "slurm" else _submit_aws(args, console, argv)
    est = info["estimate"]
    where = f"about {est['cpu_hours']} CPU-hours{' (dry run: nothing submitted)' if args.dry_run else ''}"
    say(console, f"{info['run_uri']}: {est['jobs']} jobs in {est['shards']} shard(s), {where}")
    if not args.dry_run:
        sub = info["submissions"][0]
        path = control.write_local(args.out, info)
        print(json.dumps({"run": info["run_uri"], "array_job_id": sub["array_job_id"],
                          "reducer_job_id": sub.get("reducer_job_id"), "batch_json": str(path)}))
    return 0


def _submit_aws(args, console: Console, argv) -> dict:
    import boto3

    if not args.s3:
        raise RunError("--backend aws-batch needs --s3 s3://BUCKET/PREFIX")
    # planning only: the jobs run in the runner image, where the container is the sandbox
    spec, settings = run_spec_from_args(args, argv, sandbox=HOST)
    image, probed = _runner_probe(args.image, spec)
    engine = aws.AwsBatch(boto3.client("batch"), queue=args.queue, job_definition=aws.job_definition_name(probed.name),
                          dry_run=args.dry_run)
    return control.submit_run(spec, settings, console, base=args.s3, engine=engine, image=image, probed=probed,
                              n_shards=args.shards, timings=args.timings, dry_run=args.dry_run)


def _submit_slurm(args, console: Console, argv) -> dict:
    """Check the cluster, the store and the time limit (bad input: exit 2, nothing
    submitted), probe the toolchain here in the run's sandbox (the workers check that
    theirs is the same), plan, submit."""
    if not args.store:
        raise RunError("--backend slurm needs --store DIR (a directory on the cluster's shared filesystem)")
    try:
        time_limit = slurm.parse_time(args.time_limit) if args.time_limit else None
    except ValueError as exc:
        raise RunError(f"--time-limit: {exc}") from None
    cluster = slurm.check_cluster(args.partition, args.account)
    base = slurm.check_store(args.store, cluster)
    spec, settings = run_spec_from_args(args, argv)  # the workers run the jobs in the run's own sandbox
    probed = control.probe_here(spec, settings, console)
    planned = control.plan_batch(spec, settings, console, probed, args.shards, args.timings)
    _, _, split, est = planned
    if len(split) > cluster.max_array_size - 1:
        raise RunError(f"--shards {args.shards}: the cluster's MaxArraySize is {cluster.max_array_size} (task ids "
                       f"0..{cluster.max_array_size - 1})")
    if time_limit is None:
        time_limit = control.attempt_seconds(split, est["job_wall_s"], spec.parallel)
        time_limit = min(time_limit, cluster.max_time_s) if cluster.max_time_s else time_limit
    slurm.check_time_limit(time_limit, est["job_wall_s"], cluster)
    engine = slurm.Slurm(partition=cluster.partition, account=args.account, time_limit_s=time_limit,
                         max_running=args.max_running, cpus=max(1, int(spec.limits.cpus)) * spec.parallel,
                         mem_mb=int(est["job_mem_mb"]) * spec.parallel + slurm.OVERHEAD_MIB,
                         signal_lead_s=int(est["job_wall_s"]) + slurm.SIGNAL_MARGIN_S, dry_run=args.dry_run)
    return control.submit_run(spec, settings, console, base=str(base), engine=engine, probed=probed,
                              n_shards=args.shards, timings=args.timings, dry_run=args.dry_run, planned=planned)


def _batch_run_uri(run: str) -> str:
    """A batch run's store from its S3 URI, its store directory or a local batch.json."""
    if run.startswith("s3://"):
        return run
    path = Path(run)
    if (path / worker.MANIFEST).is_file():
        return str(path.resolve())
    if path.is_dir():
        path = path / "batch.json"
    try:
        return json.loads(path.read_text())["run_uri"]
    except (OSError, ValueError, KeyError) as exc:
        raise RunError(f"{run}: neither an s3:// URI, a batch run's store directory nor a batch.json ({exc})") from None


#: The commands of this group: name -> adds its parser (arguments, help, handler) to ``sub``.
COMMANDS = {"batch": _add_batch}
