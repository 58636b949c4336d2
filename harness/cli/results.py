"""Run directories read back: ``verikit validate``, ``verikit compare``, ``verikit report``."""

from __future__ import annotations

import contextlib
import tempfile
from collections import Counter
from pathlib import Path

from rich.console import Console
from rich.table import Table

from ..report import print_summary, read_checked_run_dir
from ..results import TOLERANCE, S3Store, compare_runs, gc_paused, load_records, write_text_atomic
from ..runner import RunError, recheck, rejudge
from ..sandbox import HOST
from .common import int_at_least, say
from .options import spec_of_run_dir, spec_of_run, no_spec, read_run_json, run_predictions

# harness.htmlreport is imported in ``_report``, not here: with jinja2 it costs every verikit
# command about 15 ms of start-up, and only ``report`` needs it.


def _add_validate(sub) -> None:
    v = sub.add_parser("validate", help="check a run directory against the schemas (and against a reference run)")
    v.add_argument("run_dir", help="a run directory, or a batch run's S3 URI (s3://..., its reduced run files)")
    v.add_argument("--recheck", type=int_at_least(1), metavar="N",
                   help="also re-run N records drawn at random (--seed) with the real verifier, as the run's "
                        "spec in run.json made them, and compare verdicts and goal counts")
    v.add_argument("--seed", type=int, default=0, help="seed of the --recheck draw (default 0)")
    v.add_argument("--against", type=Path, metavar="REF_DIR",
                   help="also compare with a reference run directory: verdicts and goal counts per job, report "
                        "metrics and reproduction summary (timings aside); a difference is a problem")
    v.set_defaults(handler=_validate)


def _add_compare(sub) -> None:
    cp = sub.add_parser("compare", help="compare a run with the expected one: verdicts and goal counts exactly, "
                        "metrics and reproduced figures within a tolerance, timings ignored (exit 1 on a difference)")
    cp.add_argument("expected", type=Path, metavar="EXPECTED")
    cp.add_argument("actual", type=Path, metavar="ACTUAL")
    cp.add_argument("--tolerance", type=float, default=None, metavar="ABS",
                    help="absolute tolerance on report numbers (default 1e-9)")
    cp.add_argument("--claim", help="name printed with the verdict (PASS/FAIL claim NAME)")
    cp.add_argument("--subset", action="store_true", help="ACTUAL ran part of EXPECTED's jobs (a smoke test): "
                    "compare its records only, not the report's numbers")
    cp.set_defaults(handler=_compare)


def _add_report(sub) -> None:
    rp_ = sub.add_parser("report", help="show run directories: the summary tables, and with --html one "
                         "self-contained HTML page (plots, provenance, per-task table); --compare: two runs task by task")
    rp_.add_argument("runs", type=Path, nargs="+", metavar="RUN", help="run directories")
    rp_.add_argument("--html", type=Path, metavar="FILE", help="also write the HTML report to FILE")
    rp_.add_argument("--compare", action="store_true",
                     help="two runs: list the tasks whose verdict or goal counts differ (e.g. two toolchains, two models)")
    rp_.set_defaults(handler=_report)


def _recheck(run_dir: Path, args, console: Console) -> list[str]:
    """``validate --recheck N``: the run's own spec (run.json) re-planned, N of its records
    re-run without the cache, and compared."""
    stack = contextlib.ExitStack()
    try:  # the predictions file it scored: where it was read, or beside run.json
        preds = stack.enter_context(run_predictions(run_dir, read_run_json(run_dir)))
        spec, settings = spec_of_run_dir(run_dir, "--recheck", predictions=str(preds) if preds else None)
    except RunError as exc:
        stack.close()
        return [str(exc)]
    with stack:
        records = load_records(run_dir / "records.jsonl")
        again, differences = recheck(spec, records, args.recheck, settings=settings, seed=args.seed, console=console)
    say(console, f"rechecked {len(again)} record(s) with the real verifier: {len(differences)} difference(s)")
    return [f"recheck: {d}" for d in differences]


def _rejudge(run_dir: Path, console: Console, records: list[dict] | None = None) -> list[str]:
    """``validate``: every record's verdict re-derived from its stored tool output with the
    current parser and judge (no tool runs; the run's data are fetched or read from the
    cache/mirror; the predictions it scored are read where the run read them, or from the
    copy beside run.json, :func:`~harness.cli.options.run_predictions`). A run made before
    outputs were kept (schema 1.0) is said so.
    ``records``: the run's records already read (default: read records.jsonl here)."""
    if records is None:
        try:
            records = load_records(run_dir / "records.jsonl")
        except (OSError, ValueError):
            return []  # reported by check_run_dir
    if not records:
        return []
    if all(r.get("schema_version") == "1.0" for r in records):
        say(console, f"note: {len(records)} record(s) were made before verikit kept the tools' outputs (schema 1.0): "
                      "their verdicts are checked against their goal counts only (--recheck N re-runs some)")
        return []
    try:  # a run or a reproduction: its spec, re-planned on the host (nothing runs)
        run = read_run_json(run_dir)
        # the predictions it scored: where it read them, or the copy beside run.json (a pulled
        # run, a committed reference)
        with run_predictions(run_dir, run) as preds:
            spec, settings = spec_of_run(run_dir, run, sandbox=HOST, predictions=str(preds) if preds else None)
            checked, unkept, differences = rejudge(spec, records, run_dir, settings=settings,
                                                   verifier_state=run.get("verifier_state"), console=console)
    except (RunError, OSError, ValueError) as exc:
        return [f"re-judge: the run's jobs cannot be re-planned, so its verdicts cannot be re-derived: {exc}"]
    say(console, f"re-judged {checked} record(s) from their stored tool output (no tool run): "
                  f"{len(differences)} difference(s)" + (f"; {unkept} record(s) of schema 1.0 not re-judged" if unkept else ""))
    return [f"re-judge: {d}" for d in differences]


def _validate(args, console: Console, argv) -> int:
    if str(args.run_dir).startswith("s3://"):
        with tempfile.TemporaryDirectory(prefix="verikit-validate-") as tmp:
            got = S3Store(args.run_dir).download_run(Path(tmp))
            if "run.json" not in got:
                say(console, f"error: {args.run_dir}: no run.json (not reduced yet? 'verikit batch status')")
                return 2
            say(console, f"{args.run_dir}: downloaded {', '.join(got)}")
            return _validate_dir(Path(tmp), args, console)
    return _validate_dir(Path(args.run_dir), args, console)


@gc_paused()
def _validate_dir(run_dir: Path, args, console: Console) -> int:
    """``verikit validate`` of the run directory ``run_dir`` (``args``: its options).
    Exit 0 valid, 1 a problem, 2 not a run directory or a run.json without ``spec`` (the
    run cannot be re-planned: raises RunError naming the file). The cyclic garbage
    collector is paused while it holds the run's records (:func:`~harness.results.gc_paused`)."""
    for d in (run_dir, args.against):
        if d is not None and not Path(d).is_dir():
            say(console, f"error: {d}: not a run directory")
            return 2
    try:
        run = read_run_json(run_dir)
    except RunError:
        run = None  # check_run_dir says why
    if isinstance(run, dict) and "spec" not in run:
        raise RunError(no_spec(run_dir))
    problems, records = read_checked_run_dir(run_dir)  # one reading of records.jsonl for the checks and re-judging
    if args.against is not None:
        problems += [f"differs from {args.against}: {what}: {a} -> {b}"
                     for what, a, b in compare_runs(args.against, run_dir)[0]]
    problems += _rejudge(run_dir, console, records if records is not None else [])  # None: a line is not a record
    if args.recheck:
        problems += _recheck(run_dir, args, console)
    for prob in problems:
        console.print(f"[red]invalid[/red] {prob}", markup=True, highlight=False)
    if not problems:
        say(console, f"{run_dir}: valid (run.json, records.jsonl, report.json)"
             + (f"; same verdicts, goal counts and metrics as {args.against}" if args.against else ""))
    return 1 if problems else 0


def _compare(args, console: Console, argv) -> int:
    """``verikit compare EXPECTED ACTUAL``: exit 0 equal, 1 a difference, 2 not run directories."""
    for d in (args.expected, args.actual):
        if not (Path(d) / "records.jsonl").is_file():
            say(console, f"error: {d}: not a run directory (no records.jsonl)")
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
            say(console, f"... and {len(diffs) - 200} more difference(s)")
    name = f"claim {args.claim}" if args.claim else str(args.actual)
    say(console, f"{'PASS' if not diffs else 'FAIL'} {name}: records {counts['records']}, verdicts equal "
                  f"{counts['verdicts_equal']}, goal counts equal {counts['goals_equal']}"
                  + (" (a subset: report numbers not compared)" if args.subset else
                     f", report numbers equal {counts['numbers_equal']}/{counts['numbers']} (tolerance {tol:g})")
                  + "; timings not compared")
    return 1 if diffs else 0


@gc_paused()
def _report(args, console: Console, argv) -> int:
    """``verikit report RUN... [--html FILE] [--compare]``: the summary tables of each run
    (as at the end of a run), its ``verikit validate`` problems, with ``--compare`` the
    task-by-task differences of two runs, and with ``--html`` the HTML page. Exit 0, or 2
    when a run directory cannot be read or ``--compare`` is not given two runs. The cyclic
    garbage collector is paused while it holds the runs' records (as in validate)."""
    from ..htmlreport import ReportError, load_view, render_html, task_differences

    try:
        views = [load_view(d) for d in args.runs]
        if args.compare and len(views) != 2:
            raise ReportError(f"--compare takes exactly two runs, got {len(views)}")
    except ReportError as exc:
        say(console, f"error: {exc}")
        return 2
    for v in views:
        say(console, f"== {v.path}: {v.report.get('benchmark')} / {v.report.get('dataset')}"
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
        say(console, f"{len(diffs)} task(s) differ" + (": " + ", ".join(f"{k} {n}" for k, n in sorted(by.items()))
                                                         if diffs else ""))
    if args.html:
        write_text_atomic(args.html, render_html(views, compare=args.compare))
        say(console, f"wrote {args.html}")
    return 0


#: The commands of this group: name -> adds its parser (arguments, help, handler) to ``sub``.
COMMANDS = {"validate": _add_validate, "compare": _add_compare, "report": _add_report}
