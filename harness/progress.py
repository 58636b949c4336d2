"""Progress of a run when its output is not a terminal (a log file, CI).

With a terminal the runner shows rich's live bar. Without one a live bar prints nothing
until the end, so a long run (``nox -s main``: ~11 minutes) would be silent between its
start and its summary. :class:`PlainProgress` prints instead one plain line every
``interval`` seconds::

    casp gold: 37/120 done (30%) | verified 30, failed 5, timeout 2 | elapsed 4m10s | ETA 9m15s

A run that ends before the first interval prints no progress line at all (its summary
follows anyway).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from typing import Callable, Mapping

from rich.console import Console

from .model import VERDICTS


def format_duration(seconds: float) -> str:
    """``seconds`` (>= 0; rounded to whole seconds) as ``45s``, ``4m10s`` or ``1h02m05s``."""
    s = max(0, int(round(seconds)))
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    if h:
        return f"{h}h{m:02d}m{s:02d}s"
    if m:
        return f"{m}m{s:02d}s"
    return f"{s}s"


def progress_line(label: str, done: int, total: int, counts: Mapping[str, int], elapsed_s: float,
                  *, instant: int = 0) -> str:
    """One plain progress line (no markup), e.g.
    ``casp gold: 37/120 done (30%) | verified 30, failed 5, timeout 2 | elapsed 4m10s | ETA 9m15s``.

    Args:
        label: what runs (benchmark and modes); done: jobs finished so far (records
            received); total: jobs in the run; counts: ``{verdict: n}`` of the records so
            far (shown in :data:`harness.model.VERDICTS` order, zeros left out, any other
            verdict after them by name; "no verdicts yet" when there are none).
        elapsed_s: seconds since the run started.
        instant: how many of ``done`` took no time (resumed from ``records.jsonl`` or
            copied from the result cache); they are left out of the time per job.

    Returns:
        The line. The percentage is rounded down (100% only when all are done); the ETA
        is the mean time per job run so far (``elapsed_s / (done - instant)``) times the
        jobs left, ``ETA ?`` while no job has run yet, ``ETA 0s`` when all are done.
    """
    percent = 100 if total <= 0 else min(100, done * 100 // total)
    shown = [v for v in VERDICTS if counts.get(v)] + sorted(v for v in counts if v not in VERDICTS and counts[v])
    verdicts = ", ".join(f"{v} {counts[v]}" for v in shown) or "no verdicts yet"
    left = max(0, total - done)
    ran = done - instant
    if left == 0:
        eta = format_duration(0)
    elif ran <= 0:
        eta = "?"
    else:
        eta = format_duration(elapsed_s / ran * left)
    return (f"{label}: {done}/{total} done ({percent}%) | {verdicts} | elapsed {format_duration(elapsed_s)} "
            f"| ETA {eta}")


class PlainProgress:
    """Periodic plain progress lines on ``console`` while a run goes on.

    Use as a context manager around the run; feed it every record with :meth:`update`
    (safe from any thread). A daemon thread prints :meth:`line` every ``interval``
    seconds whether or not records arrived meanwhile (a long job still shows the run
    is alive); leaving the context stops and joins the thread, and prints nothing more.

    Args:
        total: jobs in the run; console: where lines go (printed without markup or
            highlighting, never wrapped); label: what runs, e.g. ``casp gold``.
        interval: seconds between lines (> 0).
        clock: monotonic clock in seconds (tests pass a fake one).
    """

    def __init__(self, total: int, console: Console, label: str, interval: float = 30.0,
                 clock: Callable[[], float] = time.monotonic):
        if interval <= 0:
            raise ValueError(f"interval must be > 0 seconds, not {interval}")
        self.total, self.console, self.label = total, console, label
        self.interval, self.clock = interval, clock
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()
        self._done = 0
        self._instant = 0
        self._start = clock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def update(self, record: dict, *, instant: bool = False) -> None:
        """Count one finished job. ``record``: its record (``record["verdict"]`` is
        counted); ``instant``: it took no time (resumed or cached; see :func:`progress_line`)."""
        with self._lock:
            self._done += 1
            self._instant += bool(instant)
            self._counts[record.get("verdict", "unknown")] += 1

    def snapshot(self) -> tuple[int, dict[str, int], int]:
        """``(done, {verdict: n}, instant)`` so far (a consistent copy)."""
        with self._lock:
            return self._done, dict(self._counts), self._instant

    def line(self) -> str:
        """The progress line as of now (see :func:`progress_line`)."""
        done, counts, instant = self.snapshot()
        return progress_line(self.label, done, self.total, counts, self.clock() - self._start, instant=instant)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.console.print(self.line(), markup=False, highlight=False, soft_wrap=True)

    def __enter__(self) -> PlainProgress:
        self._start = self.clock()
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="verikit-progress", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
