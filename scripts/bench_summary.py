"""Summary of a ``nox -s bench`` run: one line per target, its measured value, PASS or MISS.

Reads the ratio lines the bench scripts appended to the summary file (JSONL, see
scripts/benchlib.py) and prints them as one table, every target of
``benchlib.TARGETS`` in order; a target no script measured (a script failed before it
printed its ratio) is shown as ``not measured``. Exit status: 0, or with ``--strict`` 2
when a target was missed or not measured (skipped ones count as not measured).

Usage: ``python scripts/bench_summary.py FILE [--strict]``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from benchlib import TARGETS


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", type=Path)
    ap.add_argument("--strict", action="store_true")
    args = ap.parse_args()
    lines = [json.loads(x) for x in args.file.read_text().splitlines() if x.strip()] if args.file.exists() else []
    by_key = {x["key"]: x for x in lines}  # the last line of a target wins
    quick = any(x.get("quick") for x in lines)
    width = max(len(t.label) for t in TARGETS.values())
    print(f"\nbench summary{' (quick mode: timings not judged)' if quick else ''}")
    print(f"  {'target':<{width}}  {'measured':>10}  {'target':>10}  status   script")
    bad = 0
    for key, t in TARGETS.items():
        x = by_key.get(key)
        if x is None or x["value"] is None:
            status = "not measured" if x is None else "skipped"
            shown = "-"
        else:
            status, shown = x["status"], t.show(x["value"])
        bad += status != "PASS"
        print(f"  {t.label:<{width}}  {shown:>10}  {t.op + ' ' + t.show(t.bound):>10}  {status:<7}  "
              f"{x['script'] if x else '-'}{': ' + x['detail'] if x and x['value'] is None else ''}")
    return 2 if args.strict and bad and not quick else 0


if __name__ == "__main__":
    sys.exit(main())
