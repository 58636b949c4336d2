"""Plain progress lines for runs without a terminal (harness/progress.py)."""

from __future__ import annotations

import io
import threading
import time

import pytest
from rich.console import Console

from harness.progress import PlainProgress, format_duration, progress_line
from harness.runspec import RunSettings, RunSpec


def _console() -> tuple[Console, io.StringIO]:
    buf = io.StringIO()
    return Console(file=buf, force_terminal=False, width=60), buf


def _lines(buf: io.StringIO) -> list[str]:
    return [ln for ln in buf.getvalue().splitlines() if ln]


def _wait_for(pred, timeout: float = 2.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.01)
    return pred()


# -- progress_line ------------------------------------------------------------------------

def test_line_counts_percent_eta():
    line = progress_line("casp gold", 37, 120, {"verified": 30, "failed": 5, "timeout": 2}, 250.0)
    # 250 s / 37 jobs * 83 left = 560.8 s -> 9m21s
    assert line == "casp gold: 37/120 done (30%) | verified 30, failed 5, timeout 2 | elapsed 4m10s | ETA 9m21s"


def test_line_verdict_order_and_zeros():
    counts = {"timeout": 1, "infra_error": 2, "verified": 3, "failed": 0, "weird": 4}
    line = progress_line("x", 10, 20, counts, 10.0)
    # VERDICTS order, zero counts left out, unknown verdicts after the known ones
    assert "| verified 3, timeout 1, infra_error 2, weird 4 |" in line


def test_line_nothing_done_yet():
    line = progress_line("ntp4vc why3", 0, 50, {}, 31.0)
    assert line == "ntp4vc why3: 0/50 done (0%) | no verdicts yet | elapsed 31s | ETA ?"


def test_line_all_done_and_empty_run():
    assert progress_line("x", 5, 5, {"verified": 5}, 61.0).endswith("5/5 done (100%) | verified 5 | elapsed 1m01s | ETA 0s")
    assert "0/0 done (100%)" in progress_line("x", 0, 0, {}, 1.0)


def test_line_percent_rounds_down():
    assert "(99%)" in progress_line("x", 999, 1000, {"verified": 999}, 1.0)


def test_line_hours():
    # 2 jobs in 2 h -> 1 h per job, 3 left -> 3 h
    line = progress_line("x", 2, 5, {"failed": 2}, 7200.0)
    assert line.endswith("| elapsed 2h00m00s | ETA 3h00m00s")
    assert format_duration(3725) == "1h02m05s"
    assert format_duration(59.4) == "59s"
    assert format_duration(60) == "1m00s"
    assert format_duration(0) == "0s"


def test_line_instant_records_left_out_of_eta():
    # 90 resumed instantly, 10 ran in 100 s -> 10 s per job, 20 left -> 200 s
    assert progress_line("x", 100, 120, {"verified": 100}, 100.0, instant=90).endswith("ETA 3m20s")
    # only resumed records so far: no time per job yet
    assert progress_line("x", 90, 120, {"verified": 90}, 1.0, instant=90).endswith("ETA ?")


# -- PlainProgress ------------------------------------------------------------------------

def test_prints_while_no_records_arrive():
    console, buf = _console()
    with PlainProgress(4, console, "casp gold", interval=0.05) as prog:
        assert _wait_for(lambda: len(_lines(buf)) >= 2), buf.getvalue()
        lines = _lines(buf)
        assert all(ln.startswith("casp gold: 0/4 done (0%) | no verdicts yet | elapsed ") for ln in lines)
        assert all(ln.endswith("| ETA ?") for ln in lines)
        assert all("\x1b" not in ln for ln in lines)  # plain text, no escape codes
        long_label = "a-very-long-benchmark-name " * 4  # longer than the console's width: never wrapped
        prog.label = long_label
        n = len(_lines(buf))
        assert _wait_for(lambda: len(_lines(buf)) > n)
        assert _lines(buf)[-1].startswith(long_label + ": 0/4 done")


def test_lines_show_updates():
    console, buf = _console()
    with PlainProgress(4, console, "x", interval=0.05) as prog:
        prog.update({"verdict": "verified"})
        prog.update({"verdict": "timeout"})
        assert _wait_for(lambda: any(ln.startswith("x: 2/4 done (50%) | verified 1, timeout 1 |") for ln in _lines(buf)))
    assert "ETA ?" not in _lines(buf)[-1]


def test_counts_from_many_threads():
    console, _ = _console()
    prog = PlainProgress(800, console, "x", interval=60)
    verdicts = ["verified", "failed", "timeout", "infra_error"]
    start = threading.Barrier(8)

    def feed(i: int) -> None:
        start.wait()
        for _ in range(100):
            prog.update({"verdict": verdicts[i % 4]}, instant=(i == 0))

    with prog:
        threads = [threading.Thread(target=feed, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert prog.snapshot() == (800, {"verified": 200, "failed": 200, "timeout": 200, "infra_error": 200}, 100)


def test_thread_stops_on_exit():
    console, buf = _console()
    prog = PlainProgress(3, console, "x", interval=0.05)
    with prog:
        thread = prog._thread
        assert thread is not None and thread.is_alive() and thread.daemon
        assert _wait_for(lambda: len(_lines(buf)) >= 1)
    assert not thread.is_alive()
    n = len(_lines(buf))
    time.sleep(0.3)  # six intervals: nothing more after the exit
    assert len(_lines(buf)) == n


def test_stops_on_exception_too():
    console, _ = _console()
    prog = PlainProgress(3, console, "x", interval=0.05)
    with pytest.raises(KeyboardInterrupt):
        with prog:
            thread = prog._thread
            raise KeyboardInterrupt
    assert not thread.is_alive()


def test_nothing_printed_before_first_interval():
    console, buf = _console()
    with PlainProgress(2, console, "x", interval=30.0) as prog:
        prog.update({"verdict": "verified"})
        prog.update({"verdict": "failed"})
    # exit does not wait out the interval, and prints nothing
    assert buf.getvalue() == ""


def test_fake_clock_elapsed_and_eta():
    now = [100.0]
    console, _ = _console()
    with PlainProgress(10, console, "x", interval=60, clock=lambda: now[0]) as prog:
        for _ in range(4):
            prog.update({"verdict": "verified"})
        now[0] = 140.0  # 40 s for 4 jobs -> 10 s each, 6 left
        assert prog.line() == "x: 4/10 done (40%) | verified 4 | elapsed 40s | ETA 1m00s"


def test_bad_interval():
    with pytest.raises(ValueError):
        PlainProgress(1, _console()[0], "x", interval=0)


# -- the runner's wiring ------------------------------------------------------------------

class _Job:
    def __init__(self, key: str):
        self._key = key

    def key(self, probed, limits) -> str:
        return self._key


class _Stats:
    def __init__(self):
        self.resumed = self.cached = 0

    def to_json(self) -> dict:
        return {"resumed": self.resumed, "cached": self.cached}


def _run_in(monkeypatch, tmp_path, console: Console, buf: io.StringIO, *, progress: bool, plain_expected: bool):
    """The run pipeline's run-directory sink (``runner.pipeline._run_in``) with a fake
    sandbox, toolchain and executor: one resumed record, then two
    that ran; with ``plain_expected`` the executor waits for the plain lines of each step."""
    import functools
    from types import SimpleNamespace


    def step(pred) -> None:
        if plain_expected:
            assert _wait_for(lambda: any(pred(ln) for ln in _lines(buf))), buf.getvalue()
        else:
            time.sleep(0.3)  # six intervals of the patched PlainProgress

    class FakeExecutor:
        def __init__(self, *a, **kw):
            self.stats = _Stats()

        def run(self, jobs, log, judge, progress):
            self.stats.resumed += 1  # as the executor: counted before the record is passed on
            progress({"verdict": "verified"})
            step(lambda ln: ln.startswith("casp gold: 1/3 done (33%) | verified 1 |") and ln.endswith("ETA ?"))
            time.sleep(0.1)
            progress({"verdict": "failed"})  # ran: now there is a time per job
            step(lambda ln: ln.startswith("casp gold: 2/3 done (66%) | verified 1, failed 1 |") and "ETA ?" not in ln)
            progress({"verdict": "timeout"})
            return []

    import contextlib

    from harness.runner import pipeline

    @contextlib.contextmanager
    def no_sandbox(plan, log):
        yield None, None

    monkeypatch.setattr(pipeline, "open_sandbox", no_sandbox)
    monkeypatch.setattr(pipeline, "probe_toolchain", lambda plan, sandbox: (SimpleNamespace(fingerprint="t"), {}))
    # three jobs, two of them the same job (run once by the executor): total 3
    monkeypatch.setattr(pipeline, "build_jobs", lambda plan, probed, verifier: (
        [_Job("a"), _Job("b"), _Job("b"), _Job("c")], {}))
    monkeypatch.setattr(pipeline, "Executor", FakeExecutor)
    monkeypatch.setattr(pipeline, "write_run", lambda *a, **kw: ({}, {}, 0))
    monkeypatch.setattr(pipeline, "PlainProgress", functools.partial(PlainProgress, interval=0.05))
    spec = RunSpec(benchmark="casp", modes=["gold"])
    plan = SimpleNamespace(given=spec, bench=SimpleNamespace(name="casp", judge=None), verifier=None, modes=("gold",))
    before = {t for t in threading.enumerate() if t.name == "verikit-progress"}
    settings = RunSettings(use_cache=False, progress=progress)
    assert pipeline._execute(tmp_path / "out", settings, console, None, plan) == ({}, {}, 0, [])
    assert not [t for t in threading.enumerate() if t.name == "verikit-progress" and t not in before]


def test_runner_without_terminal_prints_plain_lines(monkeypatch, tmp_path):
    console, buf = _console()
    _run_in(monkeypatch, tmp_path, console, buf, progress=True, plain_expected=True)
    assert all(" done (" in ln for ln in _lines(buf))  # nothing but progress lines


def test_runner_with_terminal_keeps_the_live_bar(monkeypatch, tmp_path):
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=100)
    _run_in(monkeypatch, tmp_path, console, buf, progress=True, plain_expected=False)
    assert " done (" not in buf.getvalue() and "ETA" not in buf.getvalue()
    assert "casp gold" in buf.getvalue()  # rich's bar drew


def test_runner_no_progress_prints_nothing(monkeypatch, tmp_path):
    console, buf = _console()
    _run_in(monkeypatch, tmp_path, console, buf, progress=False, plain_expected=False)
    assert buf.getvalue() == ""
