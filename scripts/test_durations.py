"""Write ``tests/durations.json``: seconds per test file, from a pytest report log.

The tests session runs the files on two workers (pytest-xdist, ``--dist loadfile``) and
hands them out longest first (``tests/conftest.py``), so that a long file does not start
last and leave one core idle. This script refreshes the per-file times that order uses.

Usage: ``pytest --report-log=rl.jsonl ...`` (pytest-reportlog), then
``python scripts/test_durations.py rl.jsonl > tests/durations.json``.
The times are the sum of setup, call and teardown of each file's tests (seconds, rounded).
"""

from __future__ import annotations

import json
import sys
from collections import Counter


def durations(lines) -> dict[str, int]:
    """``{test file: seconds}`` from report-log lines (JSON per line, ``TestReport`` entries)."""
    total: Counter = Counter()
    for line in lines:
        entry = json.loads(line)
        if entry.get("$report_type") == "TestReport":
            total[entry["nodeid"].split("::")[0]] += entry["duration"]
    return {f: round(s) for f, s in sorted(total.items(), key=lambda kv: -kv[1])}


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with open(sys.argv[1], encoding="utf-8") as fh:
        print(json.dumps(durations(fh), indent=1))
