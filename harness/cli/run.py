"""``verikit run`` (here, or on AWS Batch or SLURM with ``--backend aws-batch|slurm``) and ``verikit reproduce``."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from rich.console import Console
from rich.table import Table

from .. import registry
from ..sandbox import HOST
from ..metrics import BASIS_EXACT, BASIS_STATISTICAL
from ..runner import (RunError, check_published_model, default_samples, generate_mode, hold_run_dir_lock, reproduce,
                      reproduce_generated, run)
from ..runner.generated import NO_FIGURE
from .batch import submit
from .common import int_at_least, say
from .generate import generation_arguments, generation_inputs
from .options import modes_of, spec_from_args, add_run_arguments, add_run_options, run_spec_from_args


def _add_run(sub) -> None:
    names = list(registry.BENCHMARKS)
    r = sub.add_parser("run", help="verify candidates of a benchmark and write run.json, records.jsonl, report.json")
    add_run_arguments(r, names)
    bo = r.add_argument_group("batch (AWS Batch or SLURM; docs: 'Cloud batch (AWS)', 'Running on a cluster')")
    bo.add_argument("--backend", choices=["local", "aws-batch", "slurm"], default="local",
                    help="local: run here (default); aws-batch: plan here, submit an array job, results in S3; "
                    "slurm: plan here, submit an sbatch array job, results in --store")
    bo.add_argument("--s3", metavar="s3://BUCKET/PREFIX", help="aws-batch: where the run's manifest and records go")
    bo.add_argument("--queue", default="verikit", help="aws-batch: job queue (default verikit, made by 'batch setup')")
    bo.add_argument("--shards", type=int_at_least(1), default=10,
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
    bo.add_argument("--max-running", type=int_at_least(1), default=100, metavar="N",
                    help="slurm: array tasks running at once (sbatch --array=...%%N; default 100)")
    r.set_defaults(handler=_run)


def _add_reproduce(sub) -> None:
    rp = sub.add_parser("reproduce", help="the paper's figures vs the kit's (rescored from the published files, "
                        "or re-run with the kit's verifiers; with --generate: a model's published figures vs a re-run "
                        "on samples it generates now, statistically), written as a run directory")
    rp.add_argument("benchmark", choices=list(registry.BENCHMARKS))
    add_run_options(rp)
    g = rp.add_argument_group("re-run a model's published figures (--generate; docs: 'Statistical reproduction')")
    g.add_argument("--generate", action="store_true",
                   help="generate candidates with --model at --base-url by the paper's protocol into OUT/generation/, "
                        "run the benchmark on them into OUT, and compare with the paper's figures of that model "
                        "(bootstrap confidence intervals, never exact)")
    g.add_argument("--model", help="--generate: the model id as the server names it")
    g.add_argument("--base-url", help="--generate: the OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1")
    g.add_argument("--published-model", metavar="NAME",
                   help="--generate: the paper's name for the model (default: --model); an unknown name lists the "
                        "paper's models (exit 2)")
    g.add_argument("--mode", action="append", dest="modes", help="--generate: the one mode generated for (default: "
                   "the first of the benchmark's modes with a protocol and published per-model figures)")
    g.add_argument("--lang", action="append", dest="langs", help="--generate: the mode of a benchmark whose modes "
                   "are languages (NTP4VC)")
    g.add_argument("--task", action="append", dest="task_ids", help="--generate: only this task id; repeatable")
    g.add_argument("--sample", type=int_at_least(1), metavar="N", help="--generate: N tasks drawn with --seed")
    generation_arguments(g, note="--generate: ", samples="default: what the paper drew for the model, else the "
                         "protocol's", feedback="default: the protocol's, i.e. the paper's")
    rp.set_defaults(handler=_reproduce)


#: The options of ``reproduce`` that only ``--generate`` reads (dest -> option), with their defaults.
_GENERATE_ONLY = {"model": ("--model", None), "base_url": ("--base-url", None),
                  "published_model": ("--published-model", None), "modes": ("--mode", None),
                  "langs": ("--lang", None), "task_ids": ("--task", None), "sample": ("--sample", None),
                  "samples": ("--samples", None), "temperature": ("--temperature", None), "top_p": ("--top-p", None),
                  "max_tokens": ("--max-tokens", None), "concurrency": ("--concurrency", 4),
                  "api_key_env": ("--api-key-env", "OPENAI_API_KEY"), "feedback_turns": ("--feedback-turns", None),
                  "stream": ("--stream", False), "request_timeout": ("--request-timeout", 600.0),
                  "max_retries": ("--max-retries", 5), "system_prompt": ("--system-prompt", None),
                  "extra_body": ("--extra-body", None), "offline": ("--offline", False)}


def _run(args, console: Console, argv) -> int:
    if args.backend != "local":
        return submit(args, console, argv)
    spec, settings = run_spec_from_args(args, argv)
    _, _, code = run(spec, args.out, settings=settings, console=console)
    return code


def _fmt(v) -> str:
    if isinstance(v, dict) and "passed" in v:
        pct = f" = {v['percent']:.2f} %" if v.get("percent") is not None else ""
        return f"{v['passed']}/{v['total']}{pct}"
    return "-" if v is None else str(v)


def _reproduce(args, console: Console, argv) -> int:
    """Write the reproduction run directory, print published vs reproduced figures; exit 1
    when a reproducible figure differs. With ``--generate``: :func:`_reproduce_generated`."""
    if args.generate:
        return _reproduce_generated(args, console, argv)
    given = [opt for dest, (opt, default) in _GENERATE_ONLY.items() if getattr(args, dest) != default]
    if given:
        raise RunError(f"{', '.join(given)}: only with --generate (reproduce without it re-checks the paper's "
                       f"figures from published files and the kit's own runs)")
    # a rescoring-only reproduction runs no tool: no engine needed
    rescoring = not registry.benchmark(args.benchmark).reproduce_modes()
    spec, settings = spec_from_args(args, argv, sandbox=HOST if rescoring and args.sandbox is None else None)
    rep, code = reproduce(spec, args.out, settings=settings, console=console)
    _print_figures(rep, args, console)
    return code


def _reproduce_generated(args, console: Console, argv) -> int:
    """``reproduce BENCH --generate``: the paper's protocol (the benchmark's
    :meth:`~harness.plugin.Benchmark.protocol`, its defaults unless overridden) into
    OUT/generation/ (:func:`harness.generate.generate`), the ordinary run on the
    predictions into OUT, and the model's published figures compared statistically
    (:func:`harness.runner.reproduce_generated`). Exit 2 before any request for a missing
    --model/--base-url, a mode without a protocol, or a model name the paper does not have."""
    from ..generate import GenerateError, GenerationSettings, GenerationSpec, SpecError, generate

    bench = registry.benchmark(args.benchmark)
    missing = [opt for opt, v in (("--model", args.model), ("--base-url", args.base_url)) if not v]
    if missing:
        raise RunError(f"reproduce --generate needs {' and '.join(missing)}")
    mode = generate_mode(bench, modes_of(args))
    published = args.published_model or args.model
    figures = check_published_model(bench, mode, published)
    protocol = bench.protocol(mode)
    run_spec, run_settings = spec_from_args(args, argv, modes=(mode,), task_ids=args.task_ids, sample=args.sample)
    try:
        spec = GenerationSpec(
            benchmark=bench.name, model=args.model, base_url=args.base_url, dataset=args.dataset, mode=mode,
            task_ids=tuple(args.task_ids) if args.task_ids else None, sample=args.sample,
            samples=args.samples or default_samples(figures, protocol.samples), temperature=args.temperature,
            top_p=args.top_p, max_tokens=args.max_tokens, seed=args.seed, concurrency=args.concurrency,
            feedback_turns=protocol.feedback_turns if args.feedback_turns is None else args.feedback_turns,
            api_key_env=args.api_key_env, stream=args.stream, sandbox=run_spec.sandbox, parallel=run_spec.parallel,
            limits=run_spec.limits, request_timeout_s=args.request_timeout, max_retries=args.max_retries,
            **generation_inputs(args))
    except SpecError as exc:
        raise RunError(str(exc)) from None
    settings = GenerationSettings(**dataclasses.asdict(run_settings), offline=args.offline)
    with hold_run_dir_lock(args.out):
        try:
            result = generate(spec, args.out / "generation", settings=settings, console=console)
        except GenerateError as exc:
            say(console, f"error: {exc}")
            return exc.code
        say(console, f"generated {len(result.samples)} sample(s) into {result.predictions}")
        for line in result.summary:
            say(console, line)
        if result.code == 2:  # every request refused: nothing to score
            return 2
        rep, code = reproduce_generated(run_spec.replace(predictions=str(result.predictions)), args.out, published,
                                        settings=run_settings, console=console)
    _print_figures(rep, args, console)
    return code or result.code


def _kit_value(f: dict) -> str:
    """The kit's side of a figure: the value, and for a statistical figure its CI."""
    if f.get("basis") != BASIS_STATISTICAL:
        return _fmt(f["reproduced"])
    unit = " %" if f.get("unit") == "percent" else ""
    if f["reproduced"] is None:
        return "-"
    ci = f.get("ci")
    return f"{f['reproduced']:.2f}{unit}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")


def _print_figures(rep, args, console: Console) -> None:
    """The paper-vs-kit table (a statistical figure shows its CI and the word
    'statistical'), the notes and the summary line."""
    table = Table(title=f"{args.benchmark}: paper vs kit")
    for col in ("figure", "paper", "kit", "basis", "status"):
        table.add_column(col, overflow="fold")
    for f in rep.figures:
        statistical = f.get("basis") == BASIS_STATISTICAL
        if statistical:  # judged by the bootstrap confidence interval, never by equality
            words = {"reproduced": "inside the CI", "differs": "OUTSIDE THE CI"}
        elif f.get("criterion"):  # a finding judged by a stated criterion
            words = {"reproduced": "holds", "differs": "DOES NOT HOLD"}
        else:
            words = {"reproduced": "equal", "differs": "DIFFERS"}
        status = {**words, "not_reproducible": "not reproducible"}[f["status"]]
        basis = (f"re-run, statistical ({f.get('ci_level', 0.95):.0%} CI)" if statistical
                 else f.get("basis", BASIS_EXACT))
        paper = _fmt(f["published"]) + (" %" if statistical and f.get("unit") == "percent"
                                        and f["published"] is not None else "")
        table.add_row(f"{f['table']} {f['row']} ({f['column']})", paper, _kit_value(f), basis, status)
    Console().print(table)
    for note in rep.notes:
        say(console, f"note: {note}")
    s = rep.summary()
    stat = sum(f.get("basis") == BASIS_STATISTICAL for f in rep.figures)
    head = (f"{s['reproduced']} reproduced (published value inside the kit's confidence interval: statistical, "
            f"never exact)" if stat else f"{s['reproduced']} reproduced exactly")
    say(console, f"{head}, {s['differs']} differ, {s['not_reproducible']} not reproducible; wrote {args.out}/run.json, "
                  f"records.jsonl, report.json")
    for f in rep.figures:
        if f["status"] == "not_reproducible" and NO_FIGURE in (f.get("notes") or []):
            say(console, f"note: {f['row']}: {NO_FIGURE} in {args.benchmark}'s paper for this mode; the kit's values "
                          f"are listed with their confidence intervals")
            break
    if s["differs"]:
        say(console, "error: the kit does not reproduce the paper on the figures marked "
                      + ("OUTSIDE THE CI" if stat else "DIFFERS"))


#: The commands of this group: name -> adds its parser (arguments, help, handler) to ``sub``.
COMMANDS = {"run": _add_run, "reproduce": _add_reproduce}
