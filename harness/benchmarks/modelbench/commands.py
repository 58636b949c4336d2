"""Model-Bench's own subcommand: ``verikit modelbench filters`` (Table 1: the Section 3.1
filters and the execution stage on problem files; HumanEval from its pinned PyPI package
is added). It was the top-level ``verikit modelbench-filters`` before benchmarks became
plugins."""

from __future__ import annotations

import json
from pathlib import Path

from ...plugin import Command, CommandContext
from .problems import ProblemFileError
from .stages import filter_counts, format_table1


def _arguments(p) -> None:
    p.add_argument("--mbpp", type=Path, help="MBPP problems (MBPP's own JSONL or the kit's generic JSONL)")
    p.add_argument("--livecodebench", type=Path, help="LiveCodeBench problems (the kit's generic JSONL)")
    p.add_argument("--no-humaneval", action="store_true", help="leave HumanEval out")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _filters(args, ctx: CommandContext) -> int:
    """Table 1 on the given problem files, printed (a table, or JSON with ``--json``);
    exit 2 with the file and line on a bad problem file."""
    paths = {name: path for name, path in (("MBPP", args.mbpp), ("LiveCodeBench", args.livecodebench)) if path}
    try:
        out = filter_counts(paths, ctx.sandbox(), humaneval=not args.no_humaneval)
    except (ProblemFileError, OSError) as exc:
        ctx.log(f"error: {exc}")
        return 2
    print(json.dumps(out, indent=2) if args.json else format_table1(out["table1"]), end="" if not args.json else "\n")
    return 0


COMMANDS = (Command("filters", "Model-Bench Table 1: the Section 3.1 filters and the execution stage on problem "
                    "files (HumanEval from its pinned PyPI package is added)", _arguments, _filters),)
