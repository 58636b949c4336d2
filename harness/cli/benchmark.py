"""Commands of one benchmark's own: ``verikit prompts`` and ``verikit convert`` (benchmarks
that define them), ``verikit modelbench-filters`` (Model-Bench's Table 1)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from rich.console import Console

from .. import registry
from ..runner import RunError, open_dataset
from .common import Parse, _int_at_least, _say


def _add_prompts(sub, parse: Parse) -> None:
    pr = sub.add_parser("prompts", help="the prompts a model is given, as JSONL (benchmarks that define prompts)")
    pr.add_argument("benchmark", choices=list(registry.BENCHMARKS))
    pr.add_argument("--mode", help="prompt setting (default: the benchmark's first default mode)")
    pr.add_argument("--shots", type=_int_at_least(0), help="few-shot examples, where the benchmark has that setting")
    pr.add_argument("--task", action="append", dest="task_ids", help="only this task id; repeatable")
    pr.add_argument("--dataset", help="registry name or path (default: the benchmark's default)")
    pr.add_argument("--data-dir", type=Path)
    pr.add_argument("-o", "--output", type=Path, help="write here instead of standard output")
    pr.set_defaults(handler=_prompts)


def _add_convert(sub, parse: Parse) -> None:
    cv = sub.add_parser("convert", help="turn a benchmark's upstream output file into predictions JSONL")
    cv.add_argument("benchmark", choices=list(registry.BENCHMARKS))
    cv.add_argument("source", type=Path, nargs="?", help="upstream output file (default: the published one, "
                    "where the dataset ships it)")
    cv.add_argument("--model", help="model name to record (default: from the file)")
    cv.add_argument("--dataset", help="registry name or path (default: the benchmark's default)")
    cv.add_argument("--data-dir", type=Path)
    cv.add_argument("-o", "--output", type=Path, required=True)
    cv.set_defaults(handler=_convert)


def _add_modelbench_filters(sub, parse: Parse) -> None:
    mb = sub.add_parser("modelbench-filters", help="Model-Bench Table 1: the Section 3.1 filters and the execution "
                        "stage on problem files (HumanEval from its pinned PyPI package is added)")
    mb.add_argument("--mbpp", type=Path, help="MBPP problems (MBPP's own JSONL or the kit's generic JSONL)")
    mb.add_argument("--livecodebench", type=Path, help="LiveCodeBench problems (the kit's generic JSONL)")
    mb.add_argument("--no-humaneval", action="store_true", help="leave HumanEval out")
    mb.add_argument("--json", action="store_true", help="machine-readable output")
    mb.set_defaults(handler=_modelbench_filters)


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


def _prompts(args, console: Console, argv) -> int:
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
    # imported here, as the registry imports a benchmark: on first use, so that a benchmark
    # whose dependencies are missing breaks no other command
    from ..benchmarks import modelbench

    paths = {name: path for name, path in (("MBPP", args.mbpp), ("LiveCodeBench", args.livecodebench)) if path}
    try:
        out = modelbench.filter_counts(paths, registry.sandbox("host"), humaneval=not args.no_humaneval)
    except (modelbench.ProblemFileError, OSError) as exc:
        raise RunError(str(exc)) from exc
    print(json.dumps(out, indent=2) if args.json else modelbench.format_table1(out["table1"]), end="" if not args.json else "\n")
    return 0


#: The commands of this group: name -> adds its parser (arguments, help, handler) to ``sub``.
COMMANDS = {"prompts": _add_prompts, "convert": _add_convert, "modelbench-filters": _add_modelbench_filters}
