"""Benchmark: CASP's full job against the CASP paper's own check, on the same candidates.

For each candidate of the main job's two candidate modes (``verikit run casp --dataset
casp-sample10``: spec-from-code and code-from-spec, the bundled LLM candidates and the gold
solutions; the canaries left out), in one run on the host sandbox, one job at a time:

- **kit**: the kit's full job through its own executor with a fresh result cache (every
  integrity step: the gate, the task runs when the task's first job needs them, the
  verification with its side runs and the execution cross-check), wall seconds of
  ``Executor.run([job])``;
- **paper**: the CASP paper's own command on the same verified file, started through the
  same sandbox: ``frama-c -wp -wp-rte -wp-prover <the kit's provers> -wp-steps 500000
  -wp-timeout 60 -wp-cache none candidate.c`` (harness/verifiers/framac/ ``PAPER_OPTIONS``;
  no smoke tests, no view, no side run), wall seconds. The paper sets no ``-wp-par``, so WP
  runs its default number of prover processes at a time (4 in Frama-C 25 and 30) on the
  machine's CPUs, as a researcher running the paper's command would.

The two sides alternate per candidate, so load on the machine touches both alike. Prints,
per mode, the sums and ``kit_over_paper`` (target <= 1.3 in each mode, the ``RATIO`` line
``kit_over_paper_casp`` is the larger of the two), and where the kit's time goes: each step
of the job driver timed on a sample of the same jobs (``--breakdown N`` per mode; the
driver run under ``bash -x`` with a timestamp on every command, outside the executor).
A job that ends in ``infra_error``, or a paper command that cannot run, fails the bench.

``--quick``: one task (00_327), its gold solution in each mode, no breakdown.
Usage: ``python scripts/bench_framac_paper.py [--quick] [--tasks 00_327,...] [--breakdown N]
[--json FILE]``.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from benchlib import BenchFailure, kit_jobs, kit_plan, main

from harness.executor import Executor, verification_command
from harness.model import Limits
from harness.results import RecordLog, ResultCache
from harness.runner import probe_toolchain
from harness.sandbox import collect_files, write_files
from harness.sandbox.local import HostSandbox
from harness.verifiers import framac

MODES = ["spec-from-code", "code-from-spec"]
#: The CLI's default limits (``--timeout 600 --memory 4096``), as the main job has them.
LIMITS = Limits(wall_s=600.0, mem_mb=4096)
QUICK = {"tasks": ["00_327"], "per_mode": 1}


def paper_argv(options: dict) -> list[str]:
    """The CASP paper's Frama-C command for a job with these options: the kit's provers,
    steps and timeout (:data:`harness.verifiers.framac.PAPER_OPTIONS`), and no ``-wp-par``
    (the paper gives none: WP's default parallelism)."""
    args = framac._prover_args(options, options["wp_timeout_s"])
    at = args.index("-wp-par")
    return ["frama-c", "-wp", "-wp-rte", *args[:at], *args[at + 2:], framac.SOURCE]


def step_times(job, verifier, shared: dict) -> dict[str, float]:
    """Seconds per step of the job driver for ``job`` (the task runs, the gate, then the
    verification's command after the gate, as the executor runs them), timed by ``bash -x`` with a
    timestamp on every command; outside the executor, so only for the breakdown."""
    out: dict[str, float] = defaultdict(float)
    task_argv, task_env, task_collect = verifier.task_command(job.options)
    runs = [(f"task:{name}", (task_argv, task_env, task_collect)) for name in sorted(job.task_run or {})]
    gate = verifier.gate(job.options)
    runs += [("gate", gate)] if gate else []
    runs.append(("job", None))  # as the executor: the command after the gate, from what it and the task runs wrote
    collected: dict[str, bytes] = {}
    for label, spec in runs:
        argv, env, collect, carried = ((*spec, {}) if spec else
                                       verification_command(verifier, job.options, collected if gate else None))
        with tempfile.TemporaryDirectory(prefix="verikit-bench-") as d:
            files = {**shared, **job.files, **carried}
            if label.startswith("task:"):
                files = {**shared, label[5:]: job.task_run[label[5:]]}
            write_files(Path(d), files)
            script = 'PS4="+ \\$EPOCHREALTIME "; set -x; . ./' + argv[1] + ' "$@"'
            t0 = time.time()
            p = subprocess.run(["bash", "-c", script, "sh", *argv[2:]], cwd=d, capture_output=True, text=True,
                               env={**os.environ, **env, "PWD": d, "TMPDIR": d})
            marks = [(float(m.group(1)), m.group(2)) for m in re.finditer(r"^\++ (\d+\.\d+) (.*)$", p.stderr, re.M)]
            marks.append((time.time(), "end"))
            steps = [(t, _step(label, cmd)) for t, cmd in marks if _step(label, cmd)]
            steps = [(t0, f"{label}: start")] + steps
            for (t, what), (t2, _) in zip(steps, steps[1:]):
                out[what] += t2 - t
            collected.update(collect_files(Path(d), collect))
    return dict(out)


def _step(label: str, cmd: str) -> str | None:
    """The step a traced driver command starts (None: not the start of a step)."""
    if cmd.startswith("gcc -E") or cmd.startswith("LC_ALL=C"):
        return f"{label}: preprocessor and gcc checks"
    if "task-view.json" in cmd or ("verikit_framac_view" in cmd and " task.c" in cmd):
        return f"{label}: task view"
    # the driver's own WP runs go through its fc (whose inner frama-c is traced into the step's log)
    if cmd.startswith(("frama-c", "fc havoc ")) and "@ensures" in cmd and "-wp-fct" in cmd:
        return f"{label}: do-nothing-body WP (havoc.c)"
    if cmd.startswith(("frama-c", "fc requires ")) and "vk_requires_probe" in cmd:
        return f"{label}: requires WP (requires.c)"
    if cmd.startswith(("frama-c", "fc sound ")) and "sound" in cmd:
        return f"{label}: soundness smoke tests (sound.c)"
    if cmd.startswith("sh verikit_exec_check.sh"):
        return f"{label}: execution cross-check"
    if cmd.startswith("exec frama-c") or (cmd.startswith("frama-c") and "-load-module" in cmd):
        return f"{label}: {'view of the candidate' if label == 'gate' else 'verification (WP, smoke tests, view)'}"
    if cmd == "end":
        return f"{label}: end"
    return None


def body(bench) -> dict:
    args = bench.args
    tasks = QUICK["tasks"] if args.quick else (args.tasks.split(",") if args.tasks else None)
    sandbox = HostSandbox()
    plan = kit_plan("casp", MODES, "host", LIMITS, tasks)
    probed, shared = probe_toolchain(plan, sandbox)
    jobs, verifier = kit_jobs(plan, probed)
    jobs = [j for j in jobs if j.precheck is None]
    if args.quick:
        per: dict = defaultdict(list)
        for j in jobs:
            if len(per[j.mode]) < QUICK["per_mode"] and (j.candidate["model"] == "gold" or
                                                        all(x.candidate["model"] == "gold" for x in per[j.mode])):
                per[j.mode].append(j)
        jobs = [j for m in MODES for j in per[m]]
    res: dict = {"benchmark": "casp, kit's full job vs the paper's frama-c", "quick": args.quick, "cpus": os.cpu_count(),
                 "framac": probed.versions.get("frama-c"),
                 "provers": {p: probed.versions.get(p) for p in ("z3", "cvc4", "alt-ergo")},
                 "jobs": []}
    bench.step(f"{len(jobs)} candidate jobs ({', '.join(f'{m}: {sum(j.mode == m for j in jobs)}' for m in MODES)}), "
               "kit and paper alternating, -j 1, fresh cache")
    with tempfile.TemporaryDirectory(prefix="verikit-bench-") as d:
        ex = Executor(verifier, sandbox, probed, shared_files=shared, limits=LIMITS, parallel=1,
                      cache=ResultCache(Path(d) / "cache"))
        log = RecordLog(Path(d) / "records.jsonl")
        try:
            for n, job in enumerate(jobs):
                env = {"WHY3CONFIG": framac.WHY3CONF} if framac.WHY3CONF in shared else {}
                files = {"candidate.c": job.files["candidate.c"], **{k: v for k, v in shared.items() if k == framac.WHY3CONF}}
                argv = paper_argv(job.options)
                t0 = time.perf_counter()
                proc = sandbox.run(argv, files=files, env=env, limits=LIMITS)
                paper_s = time.perf_counter() - t0
                paper = verifier.parse(proc, {**job.options, "smoke_tests": False})  # the paper's protocol: none
                t0 = time.perf_counter()
                (rec,) = ex.run([job], log, plan.bench.judge)
                kit_s = time.perf_counter() - t0
                if rec["verdict"] == "infra_error" or paper.verdict == "infra_error":
                    raise BenchFailure(f"{job.mode} {job.task_id} {job.candidate['model']}: kit {rec['verdict']} "
                                       f"({rec['reason'][:200]}), paper {paper.verdict} ({paper.reason[:200]})")
                row = {"mode": job.mode, "task": job.task_id, "model": job.candidate["model"], "kit_s": round(kit_s, 3),
                       "paper_s": round(paper_s, 3), "kit_verdict": rec["verdict"], "paper_verdict": paper.verdict}
                res["jobs"].append(row)
                print(f"  [{n + 1}/{len(jobs)}] {job.mode} {job.task_id} {job.candidate['model']}: kit {kit_s:.1f} s "
                      f"({rec['verdict']}), paper {paper_s:.1f} s ({paper.verdict})", flush=True)
        finally:
            log.close()
        res["task_runs"] = ex.stats.task_runs
        res["gated"] = ex.stats.gated
    worst = None
    res["modes"] = {}
    for mode in MODES:
        rows = [r for r in res["jobs"] if r["mode"] == mode]
        if not rows:
            continue
        kit, paper = sum(r["kit_s"] for r in rows), sum(r["paper_s"] for r in rows)
        res["modes"][mode] = {"jobs": len(rows), "kit_s": round(kit, 2), "paper_s": round(paper, 2),
                              "kit_over_paper": round(kit / paper, 3)}
        print(f"{mode}: {len(rows)} jobs, kit {kit:.1f} s, paper {paper:.1f} s, kit/paper {kit / paper:.3f}")
        if worst is None or kit / paper > worst[1]:
            worst = (mode, kit / paper)
    detail = "; ".join(f"{m} {v['kit_s']:.1f}/{v['paper_s']:.1f} s = {v['kit_over_paper']:.3f}"
                       for m, v in res["modes"].items())
    bench.ratio("kit_over_paper_casp", worst[1], f"the larger of the modes ({detail})")
    n = 0 if args.quick else args.breakdown
    if n:
        bench.step(f"where the kit's time goes: the job driver's steps, {n} job(s) per mode")
        res["breakdown"] = {}
        for mode in MODES:
            sample = [j for j in jobs if j.mode == mode][:: max(1, sum(j.mode == mode for j in jobs) // n)][:n]
            total: dict = defaultdict(float)
            for j in sample:
                for k, v in step_times(j, verifier, shared).items():
                    total[k] += v
            paper = sum(r["paper_s"] for r in res["jobs"] if r["mode"] == mode and
                        (r["task"], r["model"]) in {(j.task_id, j.candidate["model"]) for j in sample})
            res["breakdown"][mode] = {"jobs": len(sample), "paper_s": round(paper, 2),
                                      "steps_s": {k: round(v, 2) for k, v in sorted(total.items(), key=lambda x: -x[1])}}
            print(f"{mode}: {len(sample)} jobs, the paper's command {paper:.1f} s; the kit's steps:")
            for k, v in sorted(total.items(), key=lambda x: -x[1]):
                print(f"  {v:7.2f} s  {k}")
    return res


if __name__ == "__main__":
    main("bench_framac_paper", __doc__, body,
         lambda ap: (ap.add_argument("--tasks", help="casp-sample10 task ids (comma-separated; default: all)"),
                     ap.add_argument("--breakdown", type=int, default=4,
                                     help="jobs per mode whose driver steps are timed (0: none)")))
