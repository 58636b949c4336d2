"""Runs shared on the Hugging Face Hub: ``verikit publish``, ``verikit pull``, and ``verikit
rerun`` (a pulled run re-verified here)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

from .. import __version__, registry
from ..report import check_run_dir
from ..results import load_records, record_identity, record_outcome, write_json_atomic
from ..runner import recheck
from .common import int_at_least, say
from .options import spec_of_run_dir, run_predictions

# harness.hub is imported in the handlers that use it, not here: it loads pyarrow (and
# numpy), about 90 ms of start-up that every other verikit command would pay.


def _add_publish(sub) -> None:
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
    pb.set_defaults(handler=_publish)


def _add_pull(sub) -> None:
    pl = sub.add_parser("pull", help="download published runs from a Hub dataset repo and check them (schemas, "
                        "SHA256SUMS, run ids, predictions hashes)")
    pl.add_argument("repo", metavar="OWNER/NAME")
    pl.add_argument("--run", metavar="RUN_ID", help="one run: its files go straight into --out (default: all "
                    "runs, into OUT/runs/<benchmark>/<run_id>/)")
    pl.add_argument("--revision", help="branch, tag or commit (default main)")
    pl.add_argument("--out", type=Path, required=True, metavar="DIR")
    pl.set_defaults(handler=_pull)


def _add_rerun(sub) -> None:
    rr = sub.add_parser("rerun", help="re-verify every candidate of a run directory (e.g. a pulled one) here, "
                        "with the run's own benchmark, dataset and options, and report agreement per record")
    rr.add_argument("run_dir", type=Path)
    rr.add_argument("--sandbox", choices=list(registry.SANDBOXES), help="where jobs run (default: the run's own)")
    rr.add_argument("-j", "--jobs", type=int_at_least(1), help="jobs in parallel (default: the run's own)")
    rr.add_argument("--data-dir", type=Path, help="data cache (default $VERIKIT_DATA or the user cache dir)")
    rr.set_defaults(handler=_rerun)


def _rerun(args, console: Console, argv) -> int:
    """``verikit rerun DIR``: every record of the run re-verified here (no cache) with the
    run's own spec (run.json); prints agreement per record, writes ``DIR/rerun.json``; exit
    0 when every record agrees, 1 otherwise, 2 for a directory that is not a valid run or
    whose run.json has no ``spec`` (RunError naming the file)."""
    d = Path(args.run_dir)
    problems = check_run_dir(d) if d.is_dir() else [f"{d}: not a run directory"]
    if problems:
        for prob in problems:
            say(console, f"error: {prob}")
        return 2
    run = json.loads((d / "run.json").read_text(encoding="utf-8"))
    with run_predictions(d, run) as preds:  # RunError (exit 2): the file it scored is not here
        spec, settings = spec_of_run_dir(d, "rerun", sandbox=args.sandbox, parallel=args.jobs, data_dir=args.data_dir,
                                         predictions=str(preds) if preds else None)
        records = load_records(d / "records.jsonl")
        again, differences = recheck(spec, records, len(records), settings=settings, console=console)
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
        "run_dir": str(d), "kit": {"version": __version__}, "sandbox": spec.sandbox,
        "toolchain": toolchain, "recorded_toolchains": run.get("toolchains"),
        "agreement": {"agree": agree, "total": len(rows)}, "differences": differences, "records": rows})
    t = Table(title=f"{d}: re-verified here ({spec.sandbox} sandbox)")
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
        say(console, f"note: the toolchain here differs from the run's (fingerprint "
                      f"{toolchain.get('fingerprint', '')[:12]} vs {', '.join(f[:12] for f in recorded_fp if f)}; "
                      f"here: {drift})")
    for diff in differences:
        say(console, f"difference: {diff}")
    say(console, f"agreement {agree}/{len(rows)} records (verdict and goal counts); details in {d / 'rerun.json'}")
    return 0 if agree == len(rows) and not differences else 1


def _publish(args, console: Console, argv) -> int:
    """``verikit publish``: exit 0 published (or already there), 2 refused or the Hub failed."""
    from .. import hub

    if args.dry_run and args.out is None:
        say(console, "error: --dry-run needs --out DIR (where the files the commit would add are written)")
        return 2
    tell = lambda m: say(console, m)  # noqa: E731
    with tempfile.TemporaryDirectory(prefix="verikit-publish-") as tmp:
        try:
            runs = hub.prepare(args.runs, Path(tmp), allow_infra_errors=args.allow_infra_errors,
                               allow_dirty=args.allow_dirty)
        except hub.Refused as exc:
            for line in str(exc).splitlines():
                say(console, f"refused: {line}")
            say(console, "nothing was published")
            return 2
        if args.dry_run:
            files = hub.dry_run(args.repo, runs, args.out)
            for path, data in sorted(files.items()):
                print(f"add {path} ({len(data)} bytes)")
            say(console, f"dry run: {len(files)} file(s) of one commit to {args.repo} written to {args.out} "
                          f"(card and leaderboard as in an empty repository); nothing was sent")
            return 0
        try:
            result = hub.publish(args.repo, runs, revision=args.revision, private=args.private, say=tell)
        except hub.HubError as exc:
            say(console, f"error: Hub: {exc}")
            return 2
    if result.commit is None:
        say(console, f"{args.repo}: every run is already published; no new commit")
        return 0
    for rid in result.added:
        say(console, f"published {rid}")
    say(console, f"{args.repo}@{args.revision}: commit {result.commit} ({len(result.files)} file(s), "
                  f"{result.attempts} attempt(s))")
    return 0


def _pull(args, console: Console, argv) -> int:
    """``verikit pull``: exit 0 every run checks, 1 a run has problems, 2 the Hub failed."""
    from .. import hub

    try:
        got = hub.pull(args.repo, args.out, run_id=args.run, revision=args.revision, say=lambda m: say(console, m))
    except hub.HubError as exc:
        say(console, f"error: Hub: {exc}")
        return 2
    bad = 0
    for where, problems in got.items():
        for prob in problems:
            console.print(f"[red]invalid[/red] {prob}", markup=True, highlight=False)
        bad += bool(problems)
    say(console, f"{len(got)} run(s) pulled into {args.out}: {len(got) - bad} check, {bad} do not"
         + (f"; re-verify one with 'verikit rerun {next(iter(got))}'" if got and not bad else ""))
    return 1 if bad else 0


#: The commands of this group: name -> adds its parser (arguments, help, handler) to ``sub``.
COMMANDS = {"publish": _add_publish, "pull": _add_pull, "rerun": _add_rerun}
