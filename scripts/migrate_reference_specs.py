"""One-off (NOT run on the branch): add ``spec`` to the reference runs' run.json that lack
it, derived from each run's recorded command with the current parser, and rewrite
SHA256SUMS. Prints each run's id before and after. Usage:
    python migrate_reference_specs.py [--write] RUN_DIR...
Without --write nothing is written."""

import hashlib
import io
import json
import sys
from pathlib import Path

from rich.console import Console

from harness.cli import _parser
from harness.cli.options import _options, _run_opts
from harness.results import SUMS, load_records, run_id_of, write_json_atomic, write_sums
from harness.runner import Plan, open_dataset, plan_run
from harness import registry


def derived_spec(run_dir: Path) -> dict:
    run = json.loads((run_dir / "run.json").read_text())
    command = run["command"]
    args = _parser().parse_args(command[1:])
    quiet = Console(file=io.StringIO())
    if args.cmd == "run":
        opts = _run_opts(args, quiet, command[1:], sandbox=run["sandbox"])
        return plan_run(opts, quiet).spec(opts).to_json()
    # reproduce: the modes it ran (none: a rescoring-only reproduction, recorded as "reproduce")
    bench = registry.benchmark(args.benchmark)
    modes = bench.reproduce_modes()
    sandbox = run["sandbox"] if run["sandbox"] in ("host", "container") else "host"
    opts = _options(args, quiet, command[1:], sandbox=sandbox, modes=tuple(modes))
    if modes:
        return plan_run(opts, quiet).spec(opts).to_json()
    plan = Plan(bench, open_dataset(bench, opts.dataset, opts.data_dir), [], [], None, None, modes=("reproduce",))
    return plan.spec(opts).to_json()


def main(argv):
    write = "--write" in argv
    for d in [Path(a) for a in argv if a != "--write"]:
        run = json.loads((d / "run.json").read_text())
        if "spec" in run:
            print(f"{d}: has a spec already")
            continue
        before = run_id_of(d, run)
        spec = derived_spec(d)
        new = {**run, "spec": spec}
        text = json.dumps(new, indent=2, sort_keys=True, allow_nan=False) + "\n"  # as write_json_atomic writes it
        sums = "".join(f"{hashlib.sha256((d / n).read_bytes() if n != 'run.json' else text.encode()).hexdigest()}  {n}\n"
                       for n in ("records.jsonl", "report.json", "run.json"))
        after = f"{before.split('-')[0]}-{hashlib.sha256(sums.encode()).hexdigest()[:10]}"
        print(f"{d}: spec {json.dumps(spec)}\n  run id {before} -> {after}")
        if write:
            write_json_atomic(d / "run.json", new, kind="run")
            write_sums(d)
            assert run_id_of(d, new) == after and (d / SUMS).exists() and load_records(d / "records.jsonl") is not None


if __name__ == "__main__":
    main(sys.argv[1:])
