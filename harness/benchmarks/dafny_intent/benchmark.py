"""The ``dafny-intent`` benchmark behind the declared interface: tasks and candidates,
canaries, job construction, judging, report sections, and the published-vs-reproduced
figures of ``verikit reproduce dafny-intent``."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ...model import GOLD, Candidate, Job, sha256_text, Record
from .. import published_figures
from ...plugin import Benchmark, Data, Images, Jobs, Paper, Prompting, Reporting, Reproducing, Reproduction
from ...results import CANARY_PREFIX
from . import blocks, generation
from .candidates import bundled_spec, read_candidate
from .checks import build_files
from .dataset import TEST_DIR, convert_generations, has_upstream_layout, last_survey, load_tasks
from .identity import MODES, NAME, VERSION, check_mode
from .mutants import DEFAULT_SEED, MUTANTS_PER_TEST
from .scoring import (
    agreement_by_model,
    LABEL_THRESHOLD,
    findings,
    label_agreement,
    score,
    score_checks,
    scored_records,
    summarize,
)
from .tests import Task
from .view import view_problems

DATASETS = ("dafny-intent",)
DEFAULT_DATASET = "dafny-intent"
DEFAULT_MODES = ("spec",)
VERIFIER = "dafny"
CONTAINER_ONLY = True  # Dafny is installed only in the dafny toolchain image
SEEDED = True  # the run's --seed also seeds the mutants (recorded in run.json seeds)


# ---------------------------------------------------------------------------------------
# Candidates and canaries
# ---------------------------------------------------------------------------------------

def gold_candidates(tasks: list[Task], mode: str) -> list[Candidate]:
    """The specifications the dataset's authors wrote (tasks not in the RQ3 GPT-4 file;
    every program of a directory of one's own), model and origin ``gold``
    (:data:`harness.model.GOLD`)."""
    return [Candidate(t.task_id, GOLD, 0, bundled_spec(t).text, GOLD) for t in tasks if t.source == GOLD]


def bundled_candidates(fetched, mode: str) -> list[Candidate]:
    """The GPT-4 specifications (the RQ3 generations, as in the test programs), model
    ``gpt-4``; none for a directory of one's own programs."""
    if not has_upstream_layout(fetched):
        return []
    return [Candidate(t.task_id, "gpt-4", 0, bundled_spec(t).text, f"bundled:{t.path}")
            for t in load_tasks(fetched) if t.source == "gpt-4"]


CANARY_TASK = "17"
CANARY_PATH = f"{TEST_DIR}/task_id_{CANARY_TASK}.dfy"
#: Known answers and known cheats on task 17 (SquarePerimeter(side: int) returns
#: (perimeter: int), ensures perimeter == 4 * side), run with every run that includes it.
CANARIES = {
    "spec": ("ensures perimeter == 4 * side", ("verified",)),
    "ensures-true": ("ensures true", ("verified",)),
    "wrong": ("ensures perimeter == 3 * side", ("failed",)),
    "syntax": ("ensures perimeter ==", ("invalid",)),
    "assume": ("method SquarePerimeter(side: int) returns (perimeter: int)\n  ensures perimeter == 0\n"
               "{\n  assume false;\n}", ("rejected",)),
    "axiom": ("ensures {:axiom} perimeter == 4 * side", ("rejected",)),
    "verify-false": ("method {:verify false} SquarePerimeter(side: int) returns (perimeter: int)\n"
                     "  ensures perimeter == 4 * side", ("rejected",)),
    "requires-false": ("requires false\nensures perimeter == 0", ("rejected",)),
    "changed-signature": ("method SquarePerimeter(side: int, k: int) returns (perimeter: int)\n"
                          "  ensures perimeter == k * side", ("rejected",)),
    # helpers are verified, body-less declarations and attributes in any spelling
    # are rejected, and no candidate name can collide with a check method
    "lying-helper": ("function Lie(x: int): int\n  ensures Lie(x) == x + 1\n{ x }\n"
                     "ensures perimeter == Lie(3 * side) - 1 + side - side", ("rejected",)),
    "bodiless-helper": ("function Oops(x: int): int\n  ensures false\nensures perimeter == 3 * side + Oops(0) * 0",
                        ("rejected",)),
    "verify-parenthesised": ("method {:verify (false)} SquarePerimeter(side: int) returns (perimeter: int)\n"
                             "  ensures perimeter == 3 * side", ("rejected",)),
    "smoke-collision": ("predicate VkT1Smoke() { true }\npredicate VkT2Smoke() { true }\n"
                        "predicate VkT3Smoke() { true }\nensures perimeter == 4 * side", ("rejected",)),
    # what the candidate contains is judged on Dafny's own printed program; code a
    # comment hides from one reader and not the other is rejected, an honest nested comment verifies
    "hidden-body": ("function Oops(x: int): int\n  ensures false\n/* /* */ { 0 } // */\n"
                    "ensures perimeter == 3 * side + Oops(0) * 0", ("rejected",)),
    "hidden-assume": ("ensures perimeter == 3 * side && /* /* */ 0 == 0 &&\n  true // */ assume false;\n  true",
                      ("rejected",)),
    "hidden-declaration": ("function Id(x: int): int\n{\n  x /* /* */ + 0 // */ } function Oops(): int ensures false"
                           " predicate D() {\n  true }\nensures perimeter == 3 * side + Oops() * 0 + Id(0)",
                           ("rejected",)),
    "unlisted-attribute": ("function {:opaque} Four(): int { 4 }\nensures perimeter == 4 * side", ("rejected",)),
    "nested-comment": ("ensures perimeter == 4 * side /* four sides /* of a square */ of equal length */",
                       ("verified",)),
}


def canaries(tasks: list[Task], mode: str) -> list[tuple[Candidate, tuple[str, ...]]]:
    """Canary candidates with their expected verdicts, when the dataset's task 17 is among
    ``tasks`` (a program of one's own directory is never taken for it, whatever its id)."""
    if not any(t.task_id == CANARY_TASK and t.path == CANARY_PATH for t in tasks):
        return []
    return [(Candidate(CANARY_TASK, f"{CANARY_PREFIX}{n}", 0, text, "canary"), exp) for n, (text, exp) in CANARIES.items()]


def smoke_tests(mode: str) -> bool:
    """Not a Frama-C benchmark: the smoke checks are the benchmark's own methods."""
    return False


def study_results(fetched) -> dict:
    """No per-candidate published verdicts."""
    return {}


def verifier_for(mode: str) -> str:
    """The verifier of every mode: ``dafny``.

    Raises:
        ValueError: an unknown mode.
    """
    check_mode(mode)
    return VERIFIER


# ---------------------------------------------------------------------------------------
# Jobs and verdicts
# ---------------------------------------------------------------------------------------

@dataclass
class Context:
    """Per-run data for job construction: the mutation ``seed`` (recorded in every job's
    options and in the report)."""

    seed: int


def context(fetched, tasks: list[Task], mode: str, verifier, seed: int | None = None) -> Context:
    """The :class:`Context` of a run (mutation seed: the run's ``--seed``, else
    :data:`DEFAULT_SEED`)."""
    return Context(seed=int(DEFAULT_SEED if seed is None else seed))


ADAPTATION = {"spec": {
    "target": "Dafny >= 4.6, `dafny verify --allow-warnings` (paper; reference script)",
    "runs_on": "Dafny 2.3.0 (Debian bookworm package) with Z3 4.8.12, CLI dialect 2 "
               "(`dafny /compile:0 /timeLimit /rlimit /xml`)",
    "helpers": "`ghost function`/`ghost predicate` written as `function`/`predicate` for Dafny 2/3 "
               "(ghost by default there); nothing else is rewritten",
    "method_bodies": "not used: each check method has the task's signature and the candidate's "
                     "requires/ensures, and a body generated from one test",
}}


def build_job(task: Task, cand: Candidate, mode: str, options: dict, dataset: dict, ctx: Context | None = None) -> Job:
    """The job checking candidate ``cand`` on ``task``: every check method in ``batch.dfy``
    (and each alone in ``checks/<method>.dfy`` for the fallback), the integrity checks, and
    the mutation record (seed, per-test seeds, discarded draws) in the options."""
    seed = ctx.seed if ctx is not None else DEFAULT_SEED
    opts = dict(options, mutation_seed=seed)
    precheck = None
    files: dict = {}
    try:
        # where a parse error is reported: the task file for the gold specification (taken from it)
        spec, checks, invalid = read_candidate(cand.output, task, task.path if cand.origin == GOLD else cand.origin)
        if spec is not None:
            b = build_files(task, spec, seed, options.get("dialect", "2"))
    except Exception as exc:  # noqa: BLE001 - one candidate that breaks the kit's parsing must not stop the run
        spec, invalid = None, f"the kit's reading of the candidate failed: {type(exc).__name__}: {str(exc)[:300]}"
        checks = []
    if spec is None:
        precheck = ("invalid", f"the candidate does not parse: {invalid}")
        files = {"candidate.txt": cand.output}
    else:
        files = b["files"]
        opts.update(units=b["units"], batch=b["batch"], separate=b["separate"], checks=b["checks"],
                    mutation=b["mutation"], helpers=b["helpers"], method=task.method.name, expect=b["expect"])
    opts.update(label=task.label, source=task.source)
    if cand.meta and "label" in cand.meta:  # a converted RQ1-RQ3 generation: its own human label
        opts.update(label=cand.meta["label"], label_source="candidate")
    failed = [c for c in checks if not c["ok"]]
    reject = "; ".join(f"{c['name']}: {c['detail']}" for c in failed) or None
    if reject and precheck is not None:
        precheck = ("rejected", f"{reject} (and the candidate does not parse: {invalid})")
    return Job(benchmark=NAME, benchmark_version=VERSION, dataset=dataset, mode=mode, task_id=task.task_id,
               task_sha256=task.sha256,
               candidate={"model": cand.model, "sample": cand.sample, "sha256": sha256_text(cand.output),
                          "origin": cand.origin},
               files=files, options=opts, checks=checks, precheck=precheck, reject=reject)


def judge(job, result) -> tuple[str, str]:
    """Verdict of a job (:func:`judge_`); an exception while judging makes the candidate
    ``invalid`` with the reason instead of stopping the run."""
    try:
        return judge_(job, result)
    except Exception as exc:  # noqa: BLE001 - a candidate's odd output must not take down the run
        return "invalid", f"the kit could not judge this candidate: {type(exc).__name__}: {str(exc)[:300]}"


def judge_(job, result) -> tuple[str, str]:
    """Verdict of a job: integrity findings win (``rejected``, Dafny's reading noted);
    Dafny's verdicts ``infra_error``/``timeout``/``memout``/``invalid`` are kept; a Dafny
    crash on the candidate's files is ``failed``; then what the candidate contains is
    judged on Dafny's own printed program (:func:`.view.view_problems`: allow-lists,
    agreement with the kit's reading, known soundness bugs), ``rejected`` naming the
    construct; ``invalid`` when no check method could be verified (the specification does not
    parse or resolve); ``rejected`` when every test is vacuous (the precondition excludes
    all test inputs); ``verified`` when every test's correctness check verified;
    ``failed`` when one failed; ``timeout`` when none failed but one did not finish (or
    its smoke check did not fail as it must: ``unguarded``).

    ``rejected`` also when Dafny reports an error outside the check methods
    (``result.extra["outside"]``: a helper of the candidate or of the task file that does
    not verify). Rejected, not failed: such a helper is an unproved assumption, which can
    make any check verify, so the check results are not a measurement of the candidate
    and must not enter the metrics (as ``{:axiom}``)."""
    if job.reject:
        return "rejected", f"{job.reject} (dafny: {result.verdict}: {result.reason})"
    if result.verdict == "invalid":  # Dafny's parse or resolution error: name where the candidate came from
        origin = (job.candidate or {}).get("origin")
        return "invalid", result.reason + (f" (the candidate: {origin})" if origin else "")
    if result.verdict in ("infra_error", "timeout", "memout"):
        return result.verdict, result.reason
    extra = getattr(result, "extra", None) or {}
    if extra.get("crashed"):
        return "failed", result.reason
    if job.options.get("print_program"):
        problems = view_problems(extra.get("view"), job.options.get("expect"),
                                 dafny_version=job.options.get("dafny_version"))
        if problems:
            return "rejected", (f"Dafny's own reading of the check files: {'; '.join(problems[:4])}"
                                + (f" (and {len(problems) - 4} more)" if len(problems) > 4 else ""))
    outside = (getattr(result, "extra", None) or {}).get("outside") or []
    if outside:
        return "rejected", ("a declaration outside the check methods does not verify (a helper whose body "
                            "contradicts its ensures proves anything): " + "; ".join(outside[:3]))
    s = score_checks(job.options.get("checks", []), result.goal_results)
    summary = (f"correctness {s['correct']}/{s['tests']}, completeness "
               + (f"{s['rejected']}/{s['mutants']} (paper's count {s['rejected_paper']}/{s['mutants']})"
                  if s["mutants"] else "n/a (no mutant)")
               + (f" ({s['unknown']} unknown)" if s["unknown"] else "")
               + (f" ({s['undecided']} undecided)" if s["undecided"] else ""))
    statuses = [p["correct"] for p in s["per_test"]]
    if all(st in ("invalid", "not_run") for st in statuses):
        msgs = [m for g in result.goal_results for m in g.get("messages", [])][:3]
        return "invalid", "the specification does not resolve: " + ("; ".join(msgs) or result.reason)
    if s["tests"] and len(s["vacuous"]) == s["tests"]:
        return "rejected", f"vacuous: the precondition excludes every test input (smoke checks verify); {summary}"
    if s["correct"] == s["tests"]:
        return "verified", summary
    bad = [p for p in s["per_test"] if p["correct"] != "verified" or p["test"] in s["vacuous"]
           or p["test"] in s["unguarded"]]
    if any(p["correct"] == "failed" or p["test"] in s["vacuous"] for p in bad):
        which = ", ".join(f"test {p['test']}: " + ("vacuous" if p["test"] in s["vacuous"] else p["correct"])
                          for p in bad)
        return "failed", f"{summary}; {which}"
    return "timeout", f"{summary}; correctness undecided for " + ", ".join(
        f"test {p['test']} (" + (f"smoke check {p['smoke']}" if p["test"] in s["unguarded"] else p["correct"]) + ")"
        for p in bad)


# ---------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------

def report_sections(records: list[Record], tasks: list[Task], modes: list[str], *, seed: int = 0) -> dict:
    """``report.json`` ``sections``: ``metrics`` (per model), ``labels`` (agreement with the
    human labels per threshold), ``findings`` (the paper's task-level statements; empty for
    a directory of one's own programs), ``coverage`` (programs handled and skipped with
    reasons), ``mutation`` (seed and discarded draws), ``adaptation``, ``weaknesses``
    (:func:`weaknesses`)."""
    mseeds = sorted({r["verifier"]["options"].get("mutation_seed") for r in records
                     if r["verifier"]["options"].get("mutation_seed") is not None})
    disc = Counter()
    for r in scored_records(records):
        for m in r["verifier"]["options"].get("mutation", []):
            disc.update(m["discarded"])
    fallback = sum(1 for r in records if r["verifier"].get("extra", {}).get("fallback"))
    cov = last_survey()
    if cov:
        cov["handled"] = len(cov.get("tasks", []))
        cov["skipped_by_category"] = dict(Counter(s["category"] for s in cov.get("skipped", [])))
    paper = any(t.path.startswith(TEST_DIR + "/") for t in tasks)
    return {"metrics": summarize(records), "labels": label_agreement(records),
            "labels_by_model": agreement_by_model(records),
            "findings": findings(records) if paper else {},
            "coverage": cov,
            "mutation": {"seed": mseeds[0] if len(mseeds) == 1 else mseeds, "per_test": MUTANTS_PER_TEST,
                         "discarded": dict(disc), "operators": "paper Section II-A; extensions for other types"},
            "batching": {"jobs_with_fallback": fallback},
            "adaptation": ADAPTATION["spec"],
            "weaknesses": weaknesses(records)}


#: Metric-level weaknesses of the paper's design, measured with Dafny 2.3 on
#: the named tasks (tests/test_dafny_integrity.py): reported, not fixed, since the
#: metrics are the paper's. See harness/benchmarks/dafny_intent/docs.md,
#: "Weaknesses of the metrics".
WEAKNESSES = [
    {"name": "over-fitted",
     "what": "a specification that states the test outputs for the test inputs only scores 1.0/1.0",
     "example": "task 17: ensures side == 10 ==> perimeter == 40 (and the other two tests)",
     "measured": "verified, correctness 1.0, completeness 1.0 (15/15)"},
    {"name": "tuned-to-mutants",
     "what": "a specification that only rejects what the mutation operators produce scores 1.0/1.0",
     "example": "task 17: ensures perimeter % 11 == (4 * side) % 11 (shifts of +-1..10); task 261: "
                "ensures |result| == |a| (sequence mutants insert or drop one element)",
     "measured": "both verified, correctness 1.0, completeness 1.0"},
    {"name": "avg_completeness-includes-incorrect",
     "what": "avg_completeness (the reference script's average) includes incorrect specifications; "
             "ensures false rejects every mutant",
     "example": "task 17: ensures false",
     "measured": "failed, correctness 0.0, completeness 1.0; avg_completeness_if_correct (the paper's rule) "
                 "excludes it"},
]


def weaknesses(records: list[Record]) -> dict:
    """Report section ``weaknesses``: the :data:`WEAKNESSES` of the paper's metrics, and per
    model ``avg_completeness_paper`` next to ``avg_completeness_if_correct_paper`` with the
    number of incorrect specifications the former averages in (``incorrect_counted``)."""
    per = {}
    for model, v in summarize(records).items():
        rs = [r for r in scored_records(records) if r["candidate"]["model"] == model]
        ss = [s for s in (score(r) for r in rs) if s is not None]
        per[model] = {"avg_completeness_paper": v["avg_completeness_paper"],
                      "avg_completeness_if_correct_paper": v["avg_completeness_if_correct_paper"],
                      "incorrect_counted": sum(1 for s in ss if s["completeness_paper"] is not None
                                               and s["completeness_if_correct_paper"] is None)}
    return {"known": WEAKNESSES, "avg_completeness_paper": per}


def run_notes(records: list[Record], modes: list[str]) -> list[str]:
    """Notes for report.json: the Dafny version drift, and per model the tasks scored and
    the average correctness and completeness."""
    notes = ["Dafny 4.6 (the paper's version) cannot be installed here: checks run with Dafny 2.3.0 "
             "(run.json 'adaptation'); per-method results, not only the final count"]
    m = summarize(records)
    for model, v in m.items():
        notes.append(f"{model}: {v['scored']} task(s) scored, average correctness {v['avg_correctness']}, "
                     f"average completeness {v['avg_completeness']} on positive evidence (if correct: "
                     f"{v['avg_completeness_if_correct']}), {v['avg_completeness_paper']} by the paper's count "
                     f"(if correct: {v['avg_completeness_if_correct_paper']}); {v['unknown']} mutant(s) unknown")
    for model, a in agreement_by_model(records).items():
        row = next(r for r in a["rows"] if r["threshold"] == LABEL_THRESHOLD)
        notes.append(f"{model}: the kit's labels agree with the human labels on {row['agree']}/{row['total']} "
                     f"labelled specification(s) at threshold {LABEL_THRESHOLD} (rate {row['rate']})")
    return notes


def compare(records: list[Record], tasks: dict, fetched=None) -> list[dict]:
    """No per-candidate published verdicts: the comparison with the human labels is the
    ``labels`` report section."""
    return []


def convert(path, fetched, tasks: list[Task], *, model: str | None = None) -> list[dict]:
    """Predictions lines from an RQ1-RQ3 generation file (``verikit convert dafny-intent
    [FILE|NAME]``): ``NAME`` is a key of :data:`.dataset.RQ_FILES` (``rq1-gpt-4``,
    ``rq2-palm-2``, ...; default ``rq3-gpt-4``), read from the pinned dataset; ``FILE``
    a file of the same shape (:func:`.dataset.convert_generations`).

    Raises:
        TaskFileError (a ValueError): unknown name, malformed file (file and entry).
    """
    if path is None or not Path(path).is_file():  # a name of RQ_FILES (else the error names them)
        return convert_generations(fetched, tasks, rq=str(path) if path else None, model=model)
    return convert_generations(fetched, tasks, path=Path(path), model=model)


# ---------------------------------------------------------------------------------------
# Published vs reproduced (`verikit reproduce dafny-intent`)
# ---------------------------------------------------------------------------------------

def load_published() -> dict:
    """``results/published/dafny-intent.json``."""
    return published_figures(NAME)


def _figure(fig: dict, reproduced, holds: bool | None, notes: list[str]) -> dict:
    published = {k: fig[k] for k in ("passed", "total", "value", "printed") if k in fig}
    status = "not_reproducible" if holds is None else ("reproduced" if holds else "differs")
    return {"name": fig["name"], "table": fig["table"], "row": fig["row"], "column": fig["column"],
            "criterion": fig.get("criterion"), "published": published, "reproduced": reproduced,
            "equal": holds, "status": status, "notes": notes}


def figures_from_run(report: dict, records: list[Record], published: dict) -> list[dict]:
    """Published vs reproduced for every figure of ``results/published/dafny-intent.json``,
    from a run's report and records. ``status`` is ``reproduced`` when the figure's
    ``criterion`` holds on this run, ``differs`` when it does not (the paper's figures are a
    count and qualitative findings, see the published file's notes)."""
    sec = report["sections"]
    fnd = sec["findings"]
    out = []
    for fig in published["figures"]:
        name = fig["name"]
        if name == "handled":
            cov = sec.get("coverage", {})
            n, tot = cov.get("handled"), cov.get("programs")
            scored = sum(1 for r in scored_records(records) if r["candidate"]["model"] in ("gpt-4", GOLD)
                         and score(r) is not None)
            rep = {"passed": scored, "total": tot, "percent": round(100 * scored / tot, 2) if tot else None}
            notes = [f"{n} of {tot} test programs extracted (method under test, specification, tests); "
                     f"{scored} checked with per-method results; skipped: "
                     + ", ".join(f"{k} {v}" for k, v in sorted(cov.get("skipped_by_category", {}).items()))]
            out.append(_figure(fig, rep, scored >= fig["passed"], notes))
        elif name == "labels.agreement":
            row = next(r for r in sec["labels"]["rows"] if r["threshold"] == LABEL_THRESHOLD)
            rep = {"passed": row["agree"], "total": row["total"],
                   "percent": round(100 * row["rate"], 2) if row["rate"] is not None else None}
            out.append(_figure(fig, rep, row["rate"] is not None and row["rate"] > 0.5,
                               [f"confusion (human->kit): {row['confusion']}"]))
        else:
            tid = name.split(".")[0][len("task"):]
            f = fnd.get(tid, {})
            if f.get("kit") is None and "verdict" not in f:
                out.append(_figure(fig, None, None, [f.get("note", "task not in the run")]))
                continue
            # the paper's figures are on its own count of rejected mutants
            comp, corr = f.get("completeness_paper"), f.get("correctness")
            kit = f.get("completeness")
            rep = {"verdict": f["verdict"], "correctness": corr,
                   "completeness_paper": None if comp is None else round(comp, 4),
                   "completeness": None if kit is None else round(kit, 4)}
            if tid == "2":
                acc = {p["value"]: p["accepted"] for p in f.get("probes", [])}
                rep["probes"] = acc
                holds = (corr == 1 and comp is not None and comp < 1 and acc.get("[4]") is True
                         and acc.get("[5]") is True and acc.get("[6]") is False)
            elif name.endswith("wrong_expected") or name.endswith(".wrong"):
                rep["failing_tests"] = f.get("failing_tests")
                holds = corr is not None and corr < 1
            elif name.endswith(".weak"):
                holds = comp is not None and comp < LABEL_THRESHOLD
            else:
                holds = comp is not None and comp < 1
            out.append(_figure(fig, rep, holds, [f["reason"]]))
    return out


def reproduction_notes(report: dict, records: list[Record]) -> list[str]:
    """Notes of a reproduction, from the run's ``report.json`` and records: per model the
    averages, the agreement with the human labels at every threshold, every skipped
    program with its reason, and the mutation seed and Dafny version of the run."""
    sec = report["sections"]
    notes = [f"{m}: {v['scored']} specification(s) checked, average correctness {v['avg_correctness']}, "
             f"average completeness by the paper's count {v['avg_completeness_paper']} (tasks with correctness 1: "
             f"{v['avg_completeness_if_correct_paper']}), on positive evidence {v['avg_completeness']} "
             f"({v['avg_completeness_if_correct']}); {v['mutants']} mutants, {v['rejected_paper']} rejected by the "
             f"paper's count, {v['rejected']} on positive evidence, {v['unknown']} unknown, {v['undecided']} undecided"
             for m, v in sec["metrics"].items()]
    row = next(r for r in sec["labels"]["rows"] if r["threshold"] == LABEL_THRESHOLD)
    notes.append(f"human labels (RQ3 GPT-4): {row['agree']}/{row['total']} agree at threshold {LABEL_THRESHOLD}; "
                 "other thresholds: " + ", ".join(f"{r['threshold']}: {r['agree']}/{r['total']}"
                                                  for r in sec["labels"]["rows"]))
    for s in sec.get("coverage", {}).get("skipped", []):
        notes.append(f"skipped task {s['task_id']} ({s['category']}): {s['reason'][:300]}")
    versions = sorted({r["verifier"]["options"].get("dafny_version") for r in records} - {None})
    notes.append(f"mutation seed {sec['mutation']['seed']}; Dafny {', '.join(versions) or 'not run'} "
                 "(the paper: Dafny >= 4.6)")
    return notes


def reproduce(fetched, run: dict | None) -> Reproduction:
    """The paper's figures (results/published/dafny-intent.json) judged on the run of the
    bundled specifications: see :func:`figures_from_run`; notes: see
    :func:`reproduction_notes`; report section ``published``: the published file's
    ``source`` (paper, data snapshot, reference implementation).

    Raises:
        ValueError: ``run`` is None (the figures need the run's records).
    """
    if run is None:
        raise ValueError(f"{NAME}: the reproduction needs the run of the bundled specifications")
    published = load_published()
    return Reproduction(figures=figures_from_run(run["report"], run["records"], published),
                        notes=reproduction_notes(run["report"], run["records"]),
                        sections={"published": {"source": published.get("source")}})


def paper() -> Paper:
    """Lahiri, FMCAD 2024, arXiv:2406.09757 (title and author as on the paper's first page)."""
    return Paper("Evaluating LLM-driven User-Intent Formalization for Verification-Aware Languages",
                 ("Shuvendu K. Lahiri",), load_published()["source"]["paper"], arxiv="2406.09757")


# ---------------------------------------------------------------------------------------
# The declared interface (harness.plugin.Benchmark, registered in harness.registry)
# ---------------------------------------------------------------------------------------

class DafnyIntent(Benchmark):
    """Dafny intent formalization: specifications scored by tests and mutants, checked by Dafny."""

    name = NAME
    version = VERSION
    modes = MODES
    default_modes = DEFAULT_MODES
    datasets = DATASETS
    default_dataset = DEFAULT_DATASET
    container_only = CONTAINER_ONLY
    seeded = SEEDED
    data = Data(load_tasks=load_tasks, gold_candidates=gold_candidates, bundled_candidates=bundled_candidates,
                canaries=canaries, convert=convert)
    jobs = Jobs(verifier_for=verifier_for, build_job=build_job, judge=judge, smoke_tests=smoke_tests,
                context=context)
    images = Images(container_images=("dafny",), adaptation=ADAPTATION)
    reporting = Reporting(compare=compare, notes=run_notes, report_sections=report_sections,
                          report_blocks=blocks.report_blocks)
    prompting = Prompting(prompts=generation.prompts, protocol=generation.protocol, messages=generation.messages,
                          extract=generation.extract)
    reproducing = Reproducing(reproduce_modes=MODES, reproduce=reproduce, paper=paper, published=load_published)


BENCHMARK = DafnyIntent()
