"""What the bench scripts share (``scripts/bench_*.py``, run by ``nox -s bench``).

- The performance targets (docs/performance.md), each printed next to its measured value by
  :func:`ratio_line` as one line that starts with ``RATIO`` and ends with PASS or MISS,
  and appended to the summary file (``--summary FILE`` or ``$VERIKIT_BENCH_SUMMARY``)
  that ``scripts/bench_summary.py`` prints as one table at the end of ``nox -s bench``.
- The common options: ``--quick`` (few jobs, one repetition: checks that the bench
  machinery works end to end; the timing targets are printed but not judged, timings on
  CI are noise), ``--strict`` (exit 2 when a target is missed; without it a MISS is
  reported and the script still exits 0), ``--repeat N``, ``--json FILE``.
- :class:`BenchFailure`: a step of the bench failed (a command exited non-zero, the kit's
  verdicts differ from the bare run's); :func:`main` turns it into exit status 1.
- :func:`engine_or_skip`: container scripts print ``skipped: no container engine ...``
  and exit 0 in quick mode when no Docker-API engine answers.
- :func:`kit_plan` and :func:`kit_jobs`: the jobs a bench measures are the kit's own,
  prepared as ``verikit run`` prepares them (``harness.runner``: the benchmark plugin's
  ``build_job``, the verifier's ``options``; ``probe_toolchain`` gives the verifier's
  ``prepare`` files), never a copy of that preparation.

Exit status of every bench script: 0 the bench ran to its end (targets missed or not,
unless ``--strict``), 1 a step failed, 2 ``--strict`` and a target was missed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

#: Where the summary lines go when ``--summary`` is not given.
SUMMARY_ENV = "VERIKIT_BENCH_SUMMARY"


@dataclass(frozen=True)
class Target:
    """One target: ``value OP bound`` passes. ``label`` is what is measured."""

    key: str
    label: str
    op: str
    bound: float
    unit: str = ""

    def show(self, value: float) -> str:
        """``value`` with the target's unit (``1.032``, ``84.2 ms``, ``6.8x``)."""
        return _fmt(value) + ("" if not self.unit else self.unit if self.unit == "x" else " " + self.unit)

    def met(self, value: float) -> bool:
        return {"<=": value <= self.bound, "<": value < self.bound, ">=": value >= self.bound}[self.op]


#: The performance targets (docs/performance.md) and the batch worker's own (README "Cloud batch").
TARGETS = {t.key: t for t in (
    Target("kit_j1_over_bare", "kit -j 1 / bare frama-c (same commands, same files)", "<=", 1.05),
    Target("kit_j2_over_j1", "kit -j 2 / kit -j 1", "<=", 0.55),
    Target("warm_exec_ms", "warm container exec, no-op job, ms per job", "<", 30, "ms"),
    Target("dafny_batched_speedup", "Dafny: one process per check / batched", ">=", 5, "x"),
    Target("cached_s_per_1000", "cached re-run, s per 1,000 jobs", "<", 1.0, "s"),
    Target("batch_worker_over_local", "batch worker / local run, same jobs", "<=", 1.05),
    Target("makespan_over_ideal", "batch plan, 10,000 CASP jobs on 100 shards: longest shard / ideal", "<=", 1.10),
    Target("cached_10k_s", "cached re-run of 10,000 jobs, whole verikit run, s", "<", 10, "s"),
    Target("rundir_100k_s", "run directory of 100,000 records: verikit validate + report --html, s", "<", 60, "s"),
    Target("kit_over_paper_casp", "CASP: kit's full job / the paper's frama-c, the worse candidate mode", "<=", 1.3),
    Target("kit_over_paper_tlc", "TLC: kit's full job / one TLC run of the model", "<=", 1.2),
    Target("kit_over_paper_rocq", "Rocq: kit's full job / one coqc of the file", "<=", 1.2),
    Target("kit_over_paper_dafny", "Dafny: kit's full job / one dafny run per check, as the paper's script", "<=", 1.2),
)}


class BenchFailure(RuntimeError):
    """A step of the bench failed: the numbers would mean nothing (exit status 1)."""


def parser(doc: str) -> argparse.ArgumentParser:
    """An argument parser with the common options (see the module docstring)."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="few jobs, one repetition: check the machinery end to end, do not judge the timings")
    ap.add_argument("--strict", action="store_true", help="exit 2 when a timing target is missed (full mode)")
    ap.add_argument("--repeat", type=int, default=None, help="repetitions (the quick mode runs one)")
    ap.add_argument("--json", type=Path, help="also write the numbers to this file")
    ap.add_argument("--summary", type=Path, default=Path(os.environ[SUMMARY_ENV]) if os.environ.get(SUMMARY_ENV) else None,
                    help=f"append the ratio lines to this JSONL file (default ${SUMMARY_ENV})")
    return ap


class Bench:
    """The state of one bench script's run: its ratio lines and whether one missed."""

    def __init__(self, script: str, args: argparse.Namespace):
        self.script, self.args = script, args
        self.lines: list[dict] = []

    def step(self, what: str) -> None:
        """Say what is being measured now (standard output, flushed)."""
        print(f"[{self.script}] {what}", flush=True)

    def ratio(self, key: str, value: float, detail: str = "") -> dict:
        """Print the ratio line of target ``key``: ``RATIO <key> = <value> (target OP
        bound) PASS|MISS``, with ``[quick: not judged]`` in quick mode; keep it for the
        summary file."""
        t = TARGETS[key]
        ok = t.met(value)
        status = "PASS" if ok else "MISS"
        line = {"key": key, "label": t.label, "value": round(value, 4), "op": t.op, "bound": t.bound, "unit": t.unit,
                "status": status, "quick": self.args.quick, "script": self.script, "detail": detail}
        self.lines.append(line)
        judged = " [quick: not judged]" if self.args.quick else ""
        print(f"RATIO {key} = {t.show(value)} (target {t.op} {t.show(t.bound)}) {status}{judged}"
              f"  -- {t.label}{'; ' + detail if detail else ''}", flush=True)
        return line

    def skipped(self, reason: str, keys: tuple[str, ...]) -> None:
        """Print why the bench did not run (``skipped: ...``) and mark its targets so."""
        print(f"skipped: {reason}", flush=True)
        for key in keys:
            t = TARGETS[key]
            self.lines.append({"key": key, "label": t.label, "value": None, "op": t.op, "bound": t.bound,
                               "unit": t.unit, "status": "skipped", "quick": self.args.quick, "script": self.script,
                               "detail": reason})

    def finish(self, numbers: dict) -> int:
        """Write ``--json`` and the summary lines; the exit status (module docstring)."""
        if self.args.json:
            self.args.json.write_text(json.dumps({**numbers, "ratios": self.lines}, indent=2) + "\n")
        if self.args.summary:
            with open(self.args.summary, "a") as fh:
                for line in self.lines:
                    fh.write(json.dumps(line) + "\n")
        missed = [x["key"] for x in self.lines if x["status"] == "MISS"]
        if missed and self.args.strict and not self.args.quick:
            print(f"[{self.script}] --strict: target(s) missed: {', '.join(missed)}", flush=True)
            return 2
        return 0


def _load() -> str:
    """The 1, 5 and 15 minute load averages (other work on the machine skews the timings)."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _fmt(v: float) -> str:
    return f"{v:.3f}" if abs(v) < 10 else f"{v:.1f}"


def main(script: str, doc: str, body, add_args=None, *, default_repeat: int = 1) -> None:
    """Parse the options, run ``body(bench)`` (returns the numbers for ``--json``), exit
    with :meth:`Bench.finish`'s status, or 1 when a step failed (:class:`BenchFailure`
    or any exception: a bench that cannot run to its end is broken)."""
    ap = parser(doc)
    if add_args:
        add_args(ap)
    args = ap.parse_args()
    args.repeat = 1 if args.quick else args.repeat or default_repeat
    bench = Bench(script, args)
    print(f"[{script}] {'quick mode' if args.quick else 'full run'}, {os.cpu_count()} CPUs, load average "
          f"{_load()}", flush=True)
    try:
        numbers = body(bench)
    except BenchFailure as exc:
        print(f"[{script}] FAILED: {exc}", file=sys.stderr, flush=True)
        sys.exit(1)
    except Exception:  # noqa: BLE001  # any other error is a broken bench too
        traceback.print_exc()
        print(f"[{script}] FAILED: the bench did not run to its end", file=sys.stderr, flush=True)
        sys.exit(1)
    print(f"[{script}] done, load average {_load()}", flush=True)
    sys.exit(bench.finish({**(numbers or {}), "load_average_end": os.getloadavg()}))


def engine_or_skip(bench: Bench, keys: tuple[str, ...]) -> bool:
    """True when a Docker-API engine answers (``DOCKER_HOST`` or the default socket).
    Otherwise, in quick mode, print ``skipped: no container engine ...`` and return False
    (the script then exits 0); in full mode it is a failure (``nox -s bench`` starts one)."""
    from harness.sandbox.container import engine_reachable

    if engine_reachable():
        return True
    reason = f"no container engine (no Docker-API engine answers at DOCKER_HOST={os.environ.get('DOCKER_HOST', '')!r})"
    if not bench.args.quick:
        raise BenchFailure(reason)
    bench.skipped(reason, keys)
    return False


def kit_plan(benchmark: str, modes: list[str], sandbox: str, limits, task_ids: list[str] | None = None, **options):
    """The :class:`~harness.runner.Plan` of ``verikit run BENCHMARK --mode MODES --sandbox
    SANDBOX`` (``harness.runner.plan_run``, its output discarded; its spec is
    ``plan.given``); ``options``: other :class:`~harness.runspec.RunSpec` fields
    (``seed``, ``parallel``, ...).

    Raises:
        harness.runner.RunError: as ``verikit run`` (unknown task, missing data).
    """
    import io

    from rich.console import Console

    from harness.runner import plan_run
    from harness.runspec import RunSpec

    spec = RunSpec(benchmark=benchmark, modes=modes, sandbox=sandbox, limits=limits, task_ids=task_ids, **options)
    return plan_run(spec, Console(file=io.StringIO()))


def kit_jobs(plan, probed, *, overrides: dict | None = None, keep=lambda job: job.candidate["origin"] != "canary"):
    """The kit's jobs of ``plan`` for the toolchain ``probed`` (``harness.runner.build_jobs``:
    the benchmark's ``build_job`` with the verifier's ``options``), those ``keep`` keeps
    (default: all but the canaries), and the verifier they are for.

    With ``overrides`` (e.g. ``{"strategy": "separate"}``, ``{"execution_check": False}``)
    the verifier is a new instance of the plan's verifier class (``registry.verifier``)
    whose ``options`` take them over the runner's arguments; its class, so the kit's
    verdict-code hash in every job's options, is the same.

    Returns:
        ``(jobs, verifier)``.
    """
    from harness import registry
    from harness.runner import build_jobs

    verifier = plan.verifier
    if overrides:
        verifier = registry.verifier(plan.verifier.name)
        options = verifier.options
        verifier.options = lambda probed, **kw: options(probed, **{**kw, **overrides})
    return [j for j in build_jobs(plan, probed, verifier)[0] if keep(j)], verifier
