"""Benchmark: the kit's full job against the paper's own check, for TLC (Model-Bench), Rocq
(NTP4VC) and Dafny (Dafny intent formalization).

For each of the three tools, in one run on this machine, on the same candidates, in the same
image and the same warm container worker (so container start costs are equal on both
sides), the two sides are interleaved per candidate (kit first, then the paper's command, the
order swapped from one candidate to the next):

- **kit**: the kit's full job, every integrity step included, through the kit's own
  executor (``harness.executor.Executor``: result cache off, ``-j 1``), the jobs being the
  kit's own (scripts/benchlib.py ``kit_plan`` + ``kit_jobs``, as ``verikit run`` makes
  them). TLC: SANY's XML export and TLC with its state graph in one JVM (the job launcher),
  with the behaviour harness's check of the tests' inputs made ahead in that JVM on a
  mapping guessed from names, then the follow-up run (the invariant probe, or that check
  where the guess was wrong) when the first run verified. Rocq: ``coqc -time`` of the candidate, ``coqc`` of the kit's
  ``check.v`` (assumptions, statement, proof term, grammar) and ``coqchk``, one container
  run; ``coqc`` alone where the kit expects Coq's view to reject the proof (the rest as a
  follow-up run when that view does not). Dafny: the batch file of every check (correctness, smoke, mutants, refutations,
  probes) in one process, and one process per check file when the batch does not resolve
  (the fallback).
- **paper**: the paper's own command for that candidate, started through the same
  sandbox. TLC: one TLC run of the post-processed model with its cfg (the kit's main TLC
  command line without the kit's extras: no SANY export, no ``-dump``; the switches the
  kit records, ``-tool -workers 1 -fp 0 -seed 0 -metadir`` and ``-deadlock`` for TLC
  2.15's missing ``CHECK_DEADLOCK``, are kept: they do not change TLC's work). Rocq: one
  ``coqc`` of the candidate file (the task with the proof in place of ``Admitted.``,
  without the kit's admitted copy of the statement), with the same ``-Q``/``-R`` load path
  and warning flags as the kit's, no ``-time``. Dafny: one Dafny process per check file,
  sequential, as the reference script (microsoft/nl-2-postcond ``eval_dafny_spec.py``)
  does, for the checks the paper makes: each test's correctness check and its mutants (not
  the kit's smoke, refutation or probe checks), with the kit's ``/timeLimit`` and
  ``/rlimit`` and without its ``/xml`` and ``/dprint``.

Candidates: Model-Bench: the bundled samples and the gold models ``verikit reproduce
modelbench`` runs (no canary; ``--quick``: the gold of HumanEval/48). Rocq: the 15 NTP4VC
canaries and the gold (the task file, ``Admitted.`` kept) of a few tasks (``--rocq-tasks``;
``--quick``: the canary ``canary:proof``). Dafny: the gold or GPT-4 specification of a few
tasks of ``verikit reproduce dafny-intent`` (``--dafny-tasks``) and a task-17 canary whose
batch does not resolve, so the fallback runs (``--dafny-canaries``; ``--quick``: task 455).
The full mode took 17-20 minutes here, on 2 cores that other test runs shared (load
averages 4.5-8); about a quarter of it is the traced re-runs (``--no-steps``).
The kit's verdicts must be those of the committed reference runs
(results/reproduced/modelbench/reproduce, results/reproduced/dafny-intent/reproduce,
results/reproduced/ntp4vc/rocq: ``verikit reproduce ntp4vc`` rescores published files
and runs no tool); the canary ``canary:loop`` may end at either limit (timeout or memout,
as its docs say). A paper command that cannot start, a kit record in ``infra_error`` or
a verdict that differs fails the bench (exit 1).

Prints per tool the ratio ``kit_over_paper_<tool>`` = sum of the kit's wall seconds / sum
of the paper command's wall seconds, the per-candidate seconds, and where the kit's extra
time goes: the wall of each container run the kit's job made (main run, follow-up run),
the executor's own time (the rest: parsing, judging, the record), and, from one more
traced run of each of those container runs (``bash -x`` with a timestamp per command, not
counted in the ratio; ``--no-steps`` leaves it out), the seconds of each step inside them
(TLC: SANY export and TLC, probe, the behaviour harness's tests; Rocq: coqc of the candidate, coqc of
check.v, coqchk; Dafny: batch, fallback) and the exec's own cost. A Dafny job without the
fallback is one Dafny process in one container run: it is not traced, its run counts as
batch. ``--json`` has all of it
per candidate. Needs the Docker-API engine (``DOCKER_HOST``) and the tlaplus, dafny and
ntp4vc-rocq images; ``--quick`` prints ``skipped: no container engine ...`` and exits 0
without an engine.

Usage: ``python scripts/bench_paper_tools.py [--quick] [--tools tlc,rocq,dafny] [--repeat N]
[--no-steps] [--json FILE] [--strict]``.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from benchlib import BenchFailure, engine_or_skip, kit_jobs, kit_plan, main

from harness.executor import Executor
from harness.model import Limits
from harness.results import RecordLog
from harness.runner import open_sandbox, probe_toolchain

ROOT = Path(__file__).resolve().parents[1]
LIMITS = Limits(wall_s=600)
KEYS = ("kit_over_paper_tlc", "kit_over_paper_rocq", "kit_over_paper_dafny")
ROCQ_TASK = "pearl/word_common_factor::word_common_factor_Top_powerqtvc"  # the canaries' task
#: Gold of a few NTP4VC tasks (pearl and real C, median-sized files; the last one does not
#: load under Coq 8.20).
ROCQ_GOLD = (ROCQ_TASK,
             "frama_c/standard_algorithms/pop_heap/pop_heap_Why3_ide::pop_heap_Why3_ide_VCpop_heap_post_result_goal1",
             "pearl/binomial_heap::binomial_heap_BinomialHeap_extract_min_treeqtvc")
#: ``--quick``: the gold (oracle) model of one Model-Bench task, one Dafny task with one test.
QUICK_TLC, QUICK_DAFNY = "HumanEval/48", "455"
#: Dafny tasks: GPT-4 verified (2, the paper's example, 455) and rejected (470: every test
#: vacuous), the gold of 803 (failed).
DAFNY_TASKS = "2,470,803,455"
#: A task-17 canary whose batch file does not resolve, so the kit's fallback runs
#: (``canary:smoke-collision`` is the other one: 36 Dafny processes, about 55-75 s here).
DAFNY_CANARIES = "canary:changed-signature"
#: Canaries that may end at either resource limit (their docs say so: under load either comes first).
EITHER_LIMIT = {"canary:loop"}
TRACE = "vk-steps.trace"
#: Prefix of a traced copy of a container run: bash, one timestamp per command, in TRACE.
TRACE_HEAD = f"exec 9>{TRACE}; BASH_XTRACEFD=9; PS4='+${{EPOCHREALTIME}} '; trap ': vk-end' EXIT; set -x\n"


# ---------------------------------------------------------------------------- the tools

@dataclass
class Tool:
    """One tool of the bench: its benchmark, candidates, paper command and step labels."""

    name: str
    benchmark: str
    modes: list[str]
    reference: str  # results/reproduced/<...>/records.jsonl
    tasks: Callable  # (args) -> task ids or None
    keep: Callable  # (args) -> job filter
    paper: Callable  # (job, verifier) -> [(argv, files)]
    outcome: Callable  # (job, verifier, [proc]) -> str (what the paper's check said)
    step: Callable  # (job, command text) -> step label
    #: (row) -> None when the kit's container runs of that candidate are to be traced, else the
    #: step label their whole wall counts as (a run of one known step: no trace needed)
    untraced: Callable = lambda row: None
    what: str = ""
    numbers: dict = field(default_factory=dict)


def _tlc_paper(job, verifier):
    """One TLC run of the model and its cfg: the kit's main TLC command without its extras
    (SANY's XML export, the state dump)."""
    argv, _, _ = verifier.command({**job.options, "dump": False, "sany_view": False})
    return [(argv, dict(job.files))]


def _tlc_outcome(job, verifier, procs):
    (proc,) = procs
    if proc.timed_out or proc.memout:
        return "timeout" if proc.timed_out else "memout"
    plain = {**job.options, "dump": False, "sany_view": False, "probe": None, "behaviour": None}
    return verifier.parse(proc, plain).verdict


def _tlc_step(job, cmd: str) -> str:
    from harness.verifiers.tlc import PROBE_MODULE
    from harness.verifiers.tlc.behaviour import TESTS_MODULE

    if "VerikitTlc --each" in cmd:  # the launcher: a follow-up's checks in one JVM
        return "followup_checks_in_one_jvm"
    if "VerikitTlc" in cmd:  # the launcher: SANY's export, then TLC, in one JVM
        return "sany_export_and_tlc"
    if "tlc2.TLC" in cmd:
        return {PROBE_MODULE: "probe", TESTS_MODULE: "behaviour_tests"}.get(cmd.split()[-1], "tlc")
    return "shell"


def _rocq_paper(job, verifier):
    """One coqc of the candidate file (the kit's admitted copy of the statement taken out),
    with the kit's load path and warning flags."""
    from harness.verifiers.rocq import JOB_ROOT, QUIET_WARNINGS, REFERENCE, SOURCE

    text = job.files[SOURCE]
    m = re.search(rf"Lemma {REFERENCE}\b[^\n]*? Admitted\. ", text)
    paper = text[:m.start()] + text[m.end():] if m else None
    if paper is None or not re.match(r"(Theorem|Lemma|Fact|Remark|Corollary|Proposition|Example)\s", paper[m.start():]):
        raise BenchFailure(f"rocq {job.task_id} {job.candidate['model']}: the kit's copy of the statement is not "
                           f"where the kit puts it")
    paths = [a for d, name in job.options["load_path"] for a in ("-Q", d, name)] + ["-R", ".", JOB_ROOT]
    argv = ["coqc", "-q", "-w", job.options.get("warnings", QUIET_WARNINGS), *paths, SOURCE]
    return [(argv, {SOURCE: paper})]


def _rocq_outcome(job, verifier, procs):
    (proc,) = procs
    if proc.timed_out or proc.memout:
        return "timeout" if proc.timed_out else "memout"
    return "compiled" if proc.returncode == 0 else f"error (exit {proc.returncode})"


def _rocq_step(job, cmd: str) -> str:
    from harness.verifiers.rocq import CHECK

    w = cmd.split()
    if w[:1] == ["coqchk"]:
        return "coqchk"
    if w[:1] == ["coqc"]:
        return "coqc_check" if w[-1] == CHECK else "coqc_candidate"
    return "shell"


def _dafny_paper_files(job) -> list[str]:
    """The check files of the paper's checks (each test's correctness and mutants)."""
    kind = {c["method"]: c["kind"] for c in job.options.get("checks", [])}
    units = job.options["units"]
    return [f for f in job.options.get("separate", []) if all(kind.get(n) in ("correct", "mutant") for n, *_ in units[f])]


def _dafny_argv(verifier, options, path):
    return [a for a in verifier.file_argv({**options, "print_program": False}, path) if not a.startswith("/xml:")]


def _dafny_paper(job, verifier):
    """One Dafny process per check file of the paper's checks, sequential."""
    return [(_dafny_argv(verifier, job.options, f), {f: job.files[f]}) for f in _dafny_paper_files(job)]


def _dafny_outcome(job, verifier, procs):
    from harness.verifiers.dafny import parse_file_output

    statuses: dict[str, int] = {}
    for f, proc in zip(_dafny_paper_files(job), procs):
        if proc.timed_out or proc.memout:
            statuses["limit"] = statuses.get("limit", 0) + 1
            continue
        per, _ = parse_file_output(proc.stdout + proc.stderr, job.options["units"][f], job.options["dialect"], None, f)
        for r in per.values():
            statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    return ", ".join(f"{v} {k}" for k, v in sorted(statuses.items())) or "no check"


def _dafny_step(job, cmd: str) -> str:
    w = cmd.split()
    if w[:1] == ["dafny"]:
        return "batch" if w[-1] == job.options.get("batch") else "fallback"
    return "shell"


def _non_canary(job) -> bool:
    return job.candidate["origin"] != "canary"


TOOLS = {
    "tlc": Tool("tlc", "modelbench", ["original-fewshot"], "results/reproduced/modelbench/reproduce/records.jsonl",
                tasks=lambda a: [QUICK_TLC] if a.quick else None,
                keep=lambda a: ((lambda j: j.task_id == QUICK_TLC and j.candidate["origin"] == "gold") if a.quick
                                else _non_canary),
                paper=_tlc_paper, outcome=_tlc_outcome, step=_tlc_step,
                what="one TLC run of the model with its cfg"),
    "rocq": Tool("rocq", "ntp4vc", ["rocq"], "results/reproduced/ntp4vc/rocq/records.jsonl",
                 tasks=lambda a: [ROCQ_TASK] if a.quick else a.rocq_tasks.split(","),
                 keep=lambda a: ((lambda j: j.candidate["model"] == "canary:proof") if a.quick else (lambda j: True)),
                 paper=_rocq_paper, outcome=_rocq_outcome, step=_rocq_step, what="one coqc of the candidate file"),
    "dafny": Tool("dafny", "dafny-intent", ["spec"], "results/reproduced/dafny-intent/reproduce/records.jsonl",
                  tasks=lambda a: [QUICK_DAFNY] if a.quick else a.dafny_tasks.split(","),
                  keep=lambda a: (_non_canary if a.quick else
                                  (lambda j: _non_canary(j) or j.candidate["model"] in a.dafny_canaries.split(","))),
                  paper=_dafny_paper, outcome=_dafny_outcome, step=_dafny_step,
                  untraced=lambda row: None if row.get("fallback_files") else "batch",
                  what="one dafny run per check, as the paper's script"),
}


# ---------------------------------------------------------------------------- measuring

class Timed:
    """The sandbox, with the wall seconds of every ``run`` the kit's job makes (and what it
    ran, for the traced re-run); everything else is the sandbox's own."""

    def __init__(self, sandbox):
        self._sandbox = sandbox
        self.calls: list[dict] = []

    def run(self, argv, **kw):
        t0 = time.perf_counter()
        proc = self._sandbox.run(argv, **kw)
        self.calls.append({"argv": list(argv), "kw": kw, "wall": time.perf_counter() - t0,
                           "limit": bool(proc.timed_out or proc.memout)})
        return proc

    def __getattr__(self, name):
        return getattr(self._sandbox, name)


def _cand(job) -> str:
    c = job.candidate
    return f"{job.task_id} {c['model']}" + (f"#{c['sample']}" if c.get("sample") else "")


def _ident(r: dict) -> tuple:
    c = r["candidate"]
    return r["mode"], r["task_id"], c["model"], c["origin"], c.get("sample", 0)


def reference_verdicts(tool: Tool) -> dict:
    path = ROOT / tool.reference
    return {_ident(r): r["verdict"] for r in map(json.loads, path.read_text().splitlines())}


def _same(model: str, got: str, want: str | None) -> bool:
    return got == want or (model in EITHER_LIMIT and {got, want} <= {"timeout", "memout"})


def traced(argv: list[str]) -> list[str]:
    """``argv`` run by bash with one timestamp per command in :data:`TRACE` (a ``sh -c``
    script's last ``exec`` made a plain call, so the end is traced too)."""
    if argv[:2] == ["sh", "-c"] and len(argv) >= 3:
        return ["bash", "-c", TRACE_HEAD + argv[2].replace('exec "$@"', '"$@"'), *(argv[3:] or ["sh"])]
    return ["bash", "-c", TRACE_HEAD + '"$@"', "vk-steps", *argv]


def read_trace(text: str, label: Callable[[str], str]) -> tuple[dict[str, float], float]:
    """Seconds per step label of a trace (each command up to the next one's start) and the
    traced span (first command to the end)."""
    marks = [(float(m.group(1)), m.group(2)) for m in
             (re.match(r"^\++(\d+\.\d+) (.*)$", line) for line in text.splitlines()) if m]
    out: dict[str, float] = {}
    for (t, cmd), (t2, _) in zip(marks, marks[1:]):
        k = label(cmd)
        out[k] = out.get(k, 0.0) + (t2 - t)
    return out, (marks[-1][0] - marks[0][0]) if marks else 0.0


def measure(bench, tool: Tool) -> dict:
    """The interleaved kit/paper runs of ``tool``'s candidates, then the traced re-runs."""
    args = bench.args
    plan = kit_plan(tool.benchmark, tool.modes, "container", LIMITS, tool.tasks(args))
    ref = reference_verdicts(tool)
    load0 = os.getloadavg()
    with open_sandbox(plan, print) as (sandbox, image), tempfile.TemporaryDirectory() as d:
        probed, shared = probe_toolchain(plan, sandbox)
        jobs, verifier = kit_jobs(plan, probed, keep=tool.keep(args))
        if not jobs:
            raise BenchFailure(f"{tool.name}: no candidate selected")
        timed = Timed(sandbox)
        ex = Executor(verifier, timed, probed, shared_files=shared, limits=LIMITS, parallel=1, cache=None)
        sandbox.run(["true"], limits=LIMITS)  # the worker is up before the first measurement
        bench.step(f"{tool.name}: {len(jobs)} candidates, kit and paper interleaved, {args.repeat} repetition(s) "
                   f"(load {' '.join(f'{x:.2f}' for x in os.getloadavg())})")
        rows = [{"candidate": _cand(j), "kit_s": None, "paper_s": None} for j in jobs]
        for rep in range(args.repeat):
            log = RecordLog(Path(d) / f"rep{rep}" / "records.jsonl")
            try:
                for i, (job, row) in enumerate(zip(jobs, rows)):
                    for side in (("kit", "paper") if (i + rep) % 2 == 0 else ("paper", "kit")):
                        if side == "kit":
                            _kit_once(ex, timed, job, log, plan.bench.judge, row, ref, tool)
                        else:
                            _paper_once(sandbox, shared, job, verifier, row, tool)
                    print(f"  {row['candidate'][:78]:78s} kit {row['kit_s']:7.2f} s  paper {row['paper_s']:7.2f} s  "
                          f"{row['verdict']}", flush=True)
            finally:
                log.close()
        if not args.no_steps:
            bench.step(f"{tool.name}: one traced re-run of each of the kit's container runs (not in the ratio)")
            for job, row in zip(jobs, rows):
                _steps(sandbox, job, row, tool)
    kit, paper = sum(r["kit_s"] for r in rows), sum(r["paper_s"] for r in rows)
    res = {"tool": tool.name, "benchmark": tool.benchmark, "image": image or getattr(sandbox, "image", None),
           "versions": probed.versions, "candidates": rows, "kit_s": round(kit, 2), "paper_s": round(paper, 2),
           "ratio": round(kit / paper, 3), "paper_command": tool.what, "load_average_start": load0,
           "load_average_end": os.getloadavg(), "breakdown": _breakdown(rows)}
    return res


def _kit_once(ex, timed, job, log, judge, row, ref, tool) -> None:
    timed.calls.clear()
    t0 = time.perf_counter()
    recs = ex.run([job], log, judge)
    wall = time.perf_counter() - t0
    if len(recs) != 1 or ex.stats.resumed:
        raise BenchFailure(f"{tool.name} {_cand(job)}: {len(recs)} records, {ex.stats.resumed} resumed (one run expected)")
    rec = recs[0]
    want = ref.get(_ident(rec))
    if rec["verdict"] == "infra_error" or not _same(job.candidate["model"], rec["verdict"], want):
        raise BenchFailure(f"{tool.name} {_cand(job)}: the kit says {rec['verdict']} ({rec['reason'][:300]}), the "
                           f"reference run {want}")
    calls = [{"what": "main" if i == 0 else "followup", "s": round(c["wall"], 3)} for i, c in enumerate(timed.calls)]
    if row["kit_s"] is None or wall < row["kit_s"]:
        extra = rec["verifier"]["extra"]
        row.update(kit_s=round(wall, 3), verdict=rec["verdict"], reference=want, kit_calls=calls,
                   executor_s=round(wall - sum(c["wall"] for c in timed.calls), 3), _calls=list(timed.calls))
        if tool.name == "dafny":
            row["fallback_files"] = sum(1 for r in extra.get("runs", []) if r["file"] != job.options.get("batch"))


def _paper_once(sandbox, shared, job, verifier, row, tool) -> None:
    procs = []
    t0 = time.perf_counter()
    for argv, files in tool.paper(job, verifier):
        proc = sandbox.run(argv, files={**shared, **files}, limits=job.limits or LIMITS)
        if proc.start_error:
            raise BenchFailure(f"{tool.name} {_cand(job)}: the paper's command did not start: {proc.start_error}")
        procs.append(proc)
    wall = time.perf_counter() - t0
    if row["paper_s"] is None or wall < row["paper_s"]:
        row.update(paper_s=round(wall, 3), paper_execs=len(procs), paper_outcome=tool.outcome(job, verifier, procs))


def _steps(sandbox, job, row, tool) -> None:
    """Re-run each container run of the kit's job traced: seconds per step inside it and the
    exec's own cost (the run's wall outside the traced span), as traced (``steps_traced``)
    and scaled to that run's measured wall (``steps``: they add up to the measured runs,
    whatever the load did between the two)."""
    traced_steps: dict[str, float] = {}
    steps: dict[str, float] = {}

    def add(k: str, raw: float, scaled: float) -> None:
        traced_steps[k] = traced_steps.get(k, 0.0) + raw
        steps[k] = steps.get(k, 0.0) + scaled

    whole = tool.untraced(row)
    for call in row.pop("_calls", []):
        if call["limit"] or whole:  # ended at a limit (its time is the limit's), or one known step
            add("limit" if call["limit"] else whole, call["wall"], call["wall"])
            continue
        kw = dict(call["kw"], collect=[TRACE])
        t0 = time.perf_counter()
        proc = sandbox.run(traced(call["argv"]), **kw)
        wall = time.perf_counter() - t0
        text = proc.files.get(TRACE, b"").decode("utf-8", "replace")
        if proc.start_error or not text:
            raise BenchFailure(f"{tool.name} {_cand(job)}: the traced re-run gave no trace "
                               f"({proc.start_error or proc.stderr[-300:]})")
        per, span = read_trace(text, lambda cmd: tool.step(job, cmd))
        per["exec"] = max(0.0, wall - span)
        scale = call["wall"] / max(wall, 1e-6)
        for k, v in per.items():
            add(k, v, v * scale)
    row["steps"] = {k: round(v, 3) for k, v in sorted(steps.items())}
    row["steps_traced"] = {k: round(v, 3) for k, v in sorted(traced_steps.items())}


def _breakdown(rows: list[dict]) -> dict:
    out = {"main_run_s": 0.0, "followup_run_s": 0.0, "executor_s": 0.0, "jobs_with_followup": 0, "steps": {}}
    for r in rows:
        out["main_run_s"] += sum(c["s"] for c in r["kit_calls"] if c["what"] == "main")
        out["followup_run_s"] += sum(c["s"] for c in r["kit_calls"] if c["what"] == "followup")
        out["jobs_with_followup"] += any(c["what"] == "followup" for c in r["kit_calls"])
        out["executor_s"] += r["executor_s"]
        for k, v in (r.get("steps") or {}).items():
            out["steps"][k] = out["steps"].get(k, 0.0) + v
        r.pop("_calls", None)
    if any("fallback_files" in r for r in rows):
        out["jobs_with_fallback"] = sum(1 for r in rows if r.get("fallback_files"))
        out["fallback_files"] = sum(r.get("fallback_files", 0) for r in rows)
    out = {k: (round(v, 2) if isinstance(v, float) else v) for k, v in out.items()}
    out["steps"] = {k: round(v, 2) for k, v in sorted(out["steps"].items())}
    return out


def _report(bench, res: dict) -> None:
    b, kit, paper = res["breakdown"], res["kit_s"], res["paper_s"]
    n = len(res["candidates"])
    print(f"{res['tool']}: {n} candidates, kit {kit:.2f} s, paper {paper:.2f} s (x{res['ratio']:.2f}); "
          f"the kit's extra {kit - paper:+.2f} s", flush=True)
    print(f"  kit: main container run {b['main_run_s']:.2f} s, follow-up run {b['followup_run_s']:.2f} s "
          f"({b['jobs_with_followup']} jobs), executor (Python: job keys, parse, judge, record) {b['executor_s']:.2f} s")
    if "fallback_files" in b:
        print(f"  dafny fallback: {b['jobs_with_fallback']} jobs, {b['fallback_files']} check files in their own process")
    if b["steps"]:
        print("  steps of those container runs (a traced re-run, scaled to the measured runs): "
              + ", ".join(f"{k} {v:.2f} s" for k, v in b["steps"].items()))
    bench.ratio(f"kit_over_paper_{res['tool']}", kit / paper, f"{kit:.2f} s vs {paper:.2f} s, {n} candidates")


def body(bench) -> dict:
    if not engine_or_skip(bench, KEYS):
        return {"skipped": True}
    names = [t.strip() for t in bench.args.tools.split(",") if t.strip()]
    bad = [t for t in names if t not in TOOLS]
    if bad:
        raise BenchFailure(f"unknown tool(s) {bad}; tools: {', '.join(TOOLS)}")
    out: dict = {"quick": bench.args.quick, "cpus": os.cpu_count(), "repeat": bench.args.repeat, "tools": {}}
    for name in names:
        res = measure(bench, TOOLS[name])
        out["tools"][name] = res
        _report(bench, res)
    return out


def _args(ap) -> None:
    ap.add_argument("--tools", default="tlc,rocq,dafny", help="comma-separated: tlc, rocq, dafny (default all three)")
    ap.add_argument("--rocq-tasks", default=",".join(ROCQ_GOLD), help="NTP4VC tasks whose gold runs (beside the canaries)")
    ap.add_argument("--dafny-tasks", default=DAFNY_TASKS, help=f"dafny-intent task ids (default {DAFNY_TASKS})")
    ap.add_argument("--dafny-canaries", default=DAFNY_CANARIES,
                    help=f"task-17 canaries run beside the Dafny tasks (default {DAFNY_CANARIES})")
    ap.add_argument("--no-steps", action="store_true", help="leave out the traced re-runs (the steps' breakdown)")


if __name__ == "__main__":
    main("bench_paper_tools", __doc__, body, _args)
