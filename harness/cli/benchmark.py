"""Commands of one benchmark: ``verikit prompts`` and ``verikit convert`` (benchmarks that
define them), and ``verikit BENCH COMMAND``: a benchmark's own commands, as its plugin
supplies them (e.g. ``verikit modelbench filters``, Table 1 of Model-Bench)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rich.console import Console

from .. import registry
from ..plugin import CommandContext
from ..runner import RunError, open_dataset
from ..sandbox import HOST, SandboxError
from .common import int_at_least, say


def _add_prompts(sub) -> None:
    pr = sub.add_parser("prompts", help="the prompts a model is given (the chat messages verikit generate sends), "
                        "as JSONL (benchmarks that define prompts)")
    pr.add_argument("benchmark", choices=list(registry.BENCHMARKS))
    pr.add_argument("--mode", "--lang", dest="mode", help="mode or prompt setting; NTP4VC's language (default: the "
                    "benchmark's first default mode that has a generation protocol)")
    pr.add_argument("--shots", type=int_at_least(0), help="few-shot examples, where the benchmark has that setting")
    pr.add_argument("--task", action="append", dest="task_ids", help="only this task id; repeatable")
    pr.add_argument("--dataset", help="a pinned dataset's name or a path (default: the benchmark's default)")
    pr.add_argument("--data-dir", type=Path)
    pr.add_argument("-o", "--output", type=Path, help="write here instead of standard output")
    pr.set_defaults(handler=_prompts)


def _add_convert(sub) -> None:
    cv = sub.add_parser("convert", help="turn a benchmark's upstream output file into predictions JSONL")
    cv.add_argument("benchmark", choices=list(registry.BENCHMARKS))
    cv.add_argument("source", type=Path, nargs="?", help="upstream output file (default: the published one, "
                    "where the dataset ships it)")
    cv.add_argument("--model", help="model name to record (default: from the file)")
    cv.add_argument("--dataset", help="a pinned dataset's name or a path (default: the benchmark's default)")
    cv.add_argument("--data-dir", type=Path)
    cv.add_argument("-o", "--output", type=Path, required=True)
    cv.set_defaults(handler=_convert)


def _add_check_verifier(sub) -> None:
    cv = sub.add_parser("check-verifier", help="check a verifier plugin: its class and every hook's answer "
                        "(with --sandbox: its toolchain probed and prepare run there)")
    cv.add_argument("verifier", choices=list(registry.VERIFIERS))
    cv.add_argument("--sandbox", choices=list(registry.SANDBOXES), help="also probe the toolchain and run prepare "
                    "in this sandbox")
    cv.add_argument("--benchmark", choices=list(registry.BENCHMARKS), help="call the hooks with the options of the "
                    "first job this benchmark builds for the verifier (for a command that needs per-task options)")
    cv.add_argument("--mode", help="the benchmark's mode (default: its first default mode)")
    cv.add_argument("--dataset", help="a pinned dataset's name or a path (default: the benchmark's default)")
    cv.add_argument("--data-dir", type=Path)
    cv.set_defaults(handler=_check_verifier)


def _check_verifier(args, console: Console, argv) -> int:
    """Print one line per check (:func:`harness.verifiers.check.check_verifier`); exit 0
    when all pass, 1 otherwise."""
    from rich.table import Table

    from ..runner import build_jobs, plan_run
    from ..runspec import RunSpec
    from ..verifiers.check import Unprobed, check_verifier

    verifier = registry.verifier(args.verifier)
    options = None
    if args.benchmark:
        bench = registry.benchmark(args.benchmark)
        mode = args.mode or (bench.default_modes or bench.modes)[0]
        plan = plan_run(RunSpec(benchmark=bench.name, modes=(mode,), dataset=args.dataset, sandbox=HOST), console,
                        data_dir=args.data_dir)
        if plan.verifier.name != verifier.name:
            raise RunError(f"{bench.name} --mode {mode} runs the verifier {plan.verifier.name}, not {verifier.name}")
        jobs = build_jobs(plan, Unprobed(), verifier)[0]
        if not jobs:
            raise RunError(f"{bench.name} --mode {mode} builds no job")
        options = jobs[0].options
    sandbox = None
    if args.sandbox:
        try:
            sandbox = registry.sandbox(args.sandbox, toolchain=verifier.toolchain)
        except SandboxError as exc:
            raise RunError(str(exc)) from None
    try:
        checks = check_verifier(verifier, sandbox, options)
    finally:
        if sandbox is not None:
            sandbox.close()
    table = Table(title=f"verifier {verifier.name} ({type(verifier).__module__}.{type(verifier).__name__})")
    for col in ("check", "ok", "found"):
        table.add_column(col, overflow="fold")
    for c in checks:
        table.add_row(c.name, "ok" if c.ok else "PROBLEM", c.detail)
    Console().print(table)
    bad = [c for c in checks if not c.ok]
    say(console, f"{len(checks) - len(bad)} of {len(checks)} checks passed" + (f"; first problem: {bad[0].name}: "
                                                                            f"{bad[0].detail}" if bad else ""))
    return 1 if bad else 0


def add_benchmark_commands(sub, names: list[str]) -> None:
    """``verikit BENCH COMMAND ...`` for every registered benchmark: the commands its plugin
    supplies (:meth:`harness.plugin.Benchmark.commands`), read when one is called (listing
    the names imports no benchmark)."""
    for name in names:
        # listed for --help; ``main`` hands everything after the name to _benchmark_command
        sub.add_parser(name, help=f"{name}'s own commands (verikit {name} --help)", add_help=False)


def _benchmark_command(args, console: Console, argv) -> int:
    """Parse ``args.rest`` with the benchmark's own commands and run the one named; exit 2
    with a message for an unknown command, the command's own code otherwise."""
    bench = registry.benchmark(args.benchmark)
    p = argparse.ArgumentParser(prog=f"verikit {bench.name}", description=f"{bench.name}'s own commands")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    commands = {c.name: c for c in bench.commands()}
    for c in commands.values():
        c.arguments(sub.add_parser(c.name, help=c.help))
    if not commands:
        raise RunError(f"{bench.name} has no commands of its own (the shared ones: verikit --help)")
    parsed = p.parse_args(args.rest)
    ctx = CommandContext(log=lambda m: say(console, m), sandbox=lambda name=None: registry.sandbox(name or HOST))
    return commands[parsed.command].run(parsed, ctx)


def _bench_data(args):
    """(benchmark, fetched, tasks) for ``prompts``/``convert``. Raises RunError."""
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


def _default_prompt_mode(bench) -> str:
    """The first of the benchmark's default modes (else its modes) that has a generation
    protocol, else the first default mode."""
    modes = list(bench.default_modes or bench.modes)
    for mode in modes:
        try:
            if bench.protocol(mode) is not None:
                return mode
        except ValueError:
            continue
    return modes[0]


def _prompts(args, console: Console, argv) -> int:
    """One JSON line per task: the benchmark's own prompt lines (:meth:`Benchmark.prompts`,
    which carry ``messages`` and ``template_ids`` for a benchmark with a protocol), or for
    a benchmark that defines only a protocol, ``{"task_id", "mode", "messages"}``."""
    bench, fetched, tasks = _bench_data(args)
    if args.mode is not None and args.mode not in bench.modes:
        raise RunError(f"unknown {bench.name} mode {args.mode!r}; choose from {', '.join(bench.modes)}")
    mode = args.mode or _default_prompt_mode(bench)
    try:
        try:
            lines = bench.prompts(fetched, tasks, mode, shots=args.shots)
        except NotImplementedError:
            if bench.protocol(mode) is None or args.shots is not None:
                raise
            lines = [{"task_id": t.task_id, "mode": mode, "messages": bench.messages(fetched, t, mode)} for t in tasks]
    except (NotImplementedError, ValueError) as exc:
        raise RunError(str(exc)) from exc
    _write_jsonl(lines, args.output)
    if args.output:
        say(console, f"wrote {len(lines)} prompt(s) to {args.output}")
    return 0


def _convert(args, console: Console, argv) -> int:
    bench, fetched, tasks = _bench_data(args)
    try:
        lines = bench.convert(args.source, fetched, tasks, model=args.model)
    except (NotImplementedError, ValueError) as exc:
        raise RunError(str(exc)) from exc
    _write_jsonl(lines, args.output)
    say(console, f"wrote {len(lines)} prediction line(s) to {args.output}")
    return 0


#: The commands of this group: name -> adds its parser (arguments, help, handler) to ``sub``.
COMMANDS = {"prompts": _add_prompts, "convert": _add_convert, "check-verifier": _add_check_verifier}
