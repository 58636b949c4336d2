"""``verikit run`` (here, or on AWS Batch or SLURM with ``--backend aws-batch|slurm``) and ``verikit reproduce``."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table

from .. import registry
from ..runner import reproduce, run
from .batch import _submit
from .common import _int_at_least, _say
from .options import _options, _run_arguments, _run_options, _run_opts


def _add_run(sub) -> None:
    names = list(registry.BENCHMARKS)
    r = sub.add_parser("run", help="verify candidates of a benchmark and write run.json, records.jsonl, report.json")
    _run_arguments(r, names)
    bo = r.add_argument_group("batch (AWS Batch or SLURM; docs: 'Cloud batch (AWS)', 'Running on a cluster')")
    bo.add_argument("--backend", choices=["local", "aws-batch", "slurm"], default="local",
                    help="local: run here (default); aws-batch: plan here, submit an array job, results in S3; "
                    "slurm: plan here, submit an sbatch array job, results in --store")
    bo.add_argument("--s3", metavar="s3://BUCKET/PREFIX", help="aws-batch: where the run's manifest and records go")
    bo.add_argument("--queue", default="verikit", help="aws-batch: job queue (default verikit, made by 'batch setup')")
    bo.add_argument("--shards", type=_int_at_least(1), default=10,
                    help="batch: array size (default 10; fewer when there are fewer jobs; AWS Batch: at most 10,000, "
                    "SLURM: below the cluster's MaxArraySize)")
    bo.add_argument("--image", help="aws-batch: the runner image as the job definition names it (default: the "
                    "newest local runner image of the benchmark's toolchain)")
    bo.add_argument("--timings", type=Path, metavar="RUN_DIR",
                    help="batch: a previous run whose per-job times balance the shards")
    bo.add_argument("--dry-run", action="store_true", help="batch: show what would be submitted, submit nothing")
    bo.add_argument("--store", metavar="DIR", help="slurm: absolute directory on the cluster's shared filesystem "
                    "where the run's manifest and records go")
    bo.add_argument("--partition", help="slurm: partition (default: the cluster's default partition)")
    bo.add_argument("--account", help="slurm: account to charge (checked with sacctmgr)")
    bo.add_argument("--time-limit", metavar="TIME", help="slurm: each array task's time limit, in sbatch --time "
                    "form (minutes, HH:MM:SS, D-HH:MM; default: the longest shard's worst case, at least 1 h, at "
                    "most the partition's MaxTime); a task that reaches it is requeued and resumes")
    bo.add_argument("--max-running", type=_int_at_least(1), default=100, metavar="N",
                    help="slurm: array tasks running at once (sbatch --array=...%%N; default 100)")
    r.set_defaults(handler=_run)


def _add_reproduce(sub) -> None:
    rp = sub.add_parser("reproduce", help="the paper's figures vs the kit's (rescored from the published files, "
                        "or re-run with the kit's verifiers), written as a run directory")
    rp.add_argument("benchmark", choices=list(registry.BENCHMARKS))
    _run_options(rp)
    rp.set_defaults(handler=_reproduce)


def _run(args, console: Console, argv) -> int:
    if args.backend != "local":
        return _submit(args, console, argv)
    opts = _run_opts(args, console, argv)
    _, _, code = run(opts, console)
    return code


def _fmt(v) -> str:
    if isinstance(v, dict) and "passed" in v:
        pct = f" = {v['percent']:.2f} %" if v.get("percent") is not None else ""
        return f"{v['passed']}/{v['total']}{pct}"
    return "-" if v is None else str(v)


def _reproduce(args, console: Console, argv) -> int:
    """Write the reproduction run directory, print published vs reproduced figures; exit 1
    when a reproducible figure differs."""
    # a rescoring-only reproduction runs no tool: no engine needed
    rescoring = not registry.benchmark(args.benchmark).reproduce_modes()
    rep, code = reproduce(_options(args, console, argv, sandbox="host" if rescoring and args.sandbox is None else None),
                          console)
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


#: The commands of this group: name -> adds its parser (arguments, help, handler) to ``sub``.
COMMANDS = {"run": _add_run, "reproduce": _add_reproduce}
