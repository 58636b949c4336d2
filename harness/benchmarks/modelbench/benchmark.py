"""Model-Bench as a benchmark: candidates, canaries, jobs, judging, report sections and the
paper-vs-kit reproduction (see the package docstring for the whole pipeline); its
constants, tasks and prompts are in :mod:`.tasks`. The functions of this module do the
work; :data:`BENCHMARK` exposes them through the declared interface
(:class:`harness.plugin.Benchmark`).
"""

from __future__ import annotations

import json

from ...model import Candidate, Job, VerifierResult, candidate_ref, sha256_text, Record
from .. import published_figures
from ...plugin import Benchmark, Data, Images, Jobs, Paper, Prompting, Reporting, Reproducing, Reproduction
from ..prompting import EMPTY_CANDIDATE
from . import blocks, commands, generation, published_models
from .dataset import DATASETS, DEFAULT_DATASET
from .metrics import (BEHAVIOUR_NOTE, ORACLE_MODEL, SIMILARITY_NOTE, THETA, WEAKNESSES_NOTE, average_fixes,
                      behaviour_table, outcomes, runnable_at_k, similarity_table, weaknesses)
from .canaries import canaries
from .integrity import sany_findings
from .postprocess import config_text, postprocess
from .programs import behaviour_option, parameters_of
from .stages import STAGES, table1_counts
from .tasks import (BUNDLED_MODEL, CONTAINER_ONLY, DATA_DIR, DEFAULT_MODES, MODES, NAME, NOT_REPRODUCIBLE,
                    TABLE1_NOT_REPRODUCIBLE, VERIFIER, VERSION, Task, check_mode, repo_rel, load_tasks, task_table)



# ---------------------------------------------------------------------------------------
# Candidates, canaries, jobs
# ---------------------------------------------------------------------------------------

def verifier_for(mode: str) -> str:
    """Every setting is checked by TLC.

    Raises:
        ValueError: unknown mode.
    """
    check_mode(mode)
    return VERIFIER


def smoke_tests(mode: str) -> bool:
    """Not a Frama-C benchmark: no smoke tests."""
    return False


def study_results(fetched) -> dict:
    """No published per-candidate verdicts."""
    return {}


def gold_candidates(tasks: list[Task], mode: str) -> list[Candidate]:
    """None here: the gold candidates (the kit's oracle models, model ``gold``) run with
    every command as canaries that must verify, so that runs on predictions have them too
    (see :func:`canaries`)."""
    return []


def bundled_candidates(fetched, mode: str) -> list[Candidate]:
    """The kit's deliberately imperfect candidate models (``data/bundled``,
    ``<module>.s<k>.tla``: k = sample): model ``bundled-imperfect``, three samples per
    oracle task; some do not parse, some fail at run time, some violate the assertion,
    some run with other states than the oracle's. Their first line says which."""
    out = []
    for f in sorted((DATA_DIR / "bundled").glob("*.s[0-9]*.tla")):
        module, sample = f.name[:-4].rsplit(".s", 1)
        tid = module.replace("HumanEval_", "HumanEval/")
        out.append(Candidate(tid, BUNDLED_MODEL, int(sample), f.read_text(encoding="utf-8"),
                             f"bundled:{repo_rel(f)}"))
    return out


def build_job(task: Task, cand: Candidate, mode: str, options: dict, dataset: dict, ctx=None) -> Job:
    """The TLC job of a candidate model: post-processed (Appendix A.1,
    :func:`~harness.benchmarks.modelbench.postprocess.postprocess`), with the Figure 13
    config (constants from the task's table). The post-processing steps are recorded as
    the job's ``checks`` (``postprocess:<step>``), the processed module's sha256, the
    constants, model values, variables and module name the post-processing read (judged
    against SANY's parse by :func:`judge`) in its options. Fix counts given by the
    predictions (``meta.fixes``) are kept in the candidate's identity. ``ctx`` is unused.
    Never raises on a candidate: an exception of the kit's own reading makes a job whose
    options carry ``build_error`` (judged ``invalid``), and the run goes on.
    """
    default = task_table().get("default_constant", "3")
    try:
        proc = postprocess(cand.output)
        module = proc.module or "Model"
        consts = {c: task.constants.get(c, default) for c in proc.constants}
        config = config_text(consts, proc.model_values, deadlock_in_cfg=options.get("deadlock_in_cfg", True))
        build_error = None
    except Exception as exc:  # noqa: BLE001 - the candidate's verdict, not the run's end
        proc, module, consts, build_error = None, "Model", {}, f"{type(exc).__name__}: {exc}"
        config = config_text({}, (), deadlock_in_cfg=options.get("deadlock_in_cfg", True))
    checks = []
    for step in (proc.steps if proc else []):
        detail = {k: v for k, v in step.items() if k != "step"}
        checks.append({"name": f"postprocess:{step['step']}", "ok": True, "detail": json.dumps(detail, sort_keys=True)})
    if build_error:
        checks.append({"name": "postprocess:error", "ok": False, "detail": build_error})
    checks.append({"name": "integrity:sany-allow-list", "ok": True,
                   "detail": "judged after the run on SANY's own parse of the module (integrity.sany_findings)"})
    text = proc.text if proc else (cand.output if isinstance(cand.output, str) else "")
    opts = dict(options, module=module, constants=consts, model_values=proc.model_values if proc else [],
                variables=proc.variables if proc else [], task_constants=sorted(task.constants),
                postprocessed_sha256=sha256_text(text), module_header=bool(proc and proc.module is not None))
    # the behaviour harness where the task declares its program's domain, else the invariant probe
    if task.domain:
        opts["behaviour"] = task_behaviour(task)
    else:
        opts["probe"] = {"invariant": "Assertion"}
    if build_error:
        opts["build_error"] = build_error
    candidate = candidate_ref(cand)
    # a completion without an extractable model (verikit generate writes it as ""): invalid, never run
    precheck = ("invalid", EMPTY_CANDIDATE) if not (cand.output or "").strip() else None
    meta = getattr(cand, "meta", None) or {}
    if isinstance(meta, dict) and isinstance(meta.get("fixes"), int):
        candidate["fixes"] = meta["fixes"]
    return Job(benchmark=NAME, benchmark_version=VERSION, dataset=dataset, mode=mode, task_id=task.task_id,
               task_sha256=task.sha256, candidate=candidate,
               files={f"{module}.tla": text, f"{module}.cfg": config}, options=opts, checks=checks, reject=None,
               precheck=precheck)


def task_behaviour(task: Task) -> dict:
    """The TLC job option ``behaviour`` of a task with a declared input domain
    (:func:`~harness.benchmarks.modelbench.programs.behaviour_option`; made once per task
    and process).

    Raises:
        ValueError: the kit's own task data is wrong (a bad domain entry, return values
            not recorded for this program and inputs): the run stops, no candidate is
            blamed.
    """
    key = (task.task_id, task.sha256)
    if key not in _BEHAVIOUR:
        p = task.problem
        _BEHAVIOUR[key] = behaviour_option(task.task_id, list(task.domain), parameters_of(p.code, p.entry_point),
                                           task.constants, p.code, p.entry_point, p.tests)
    return _BEHAVIOUR[key]


_BEHAVIOUR: dict = {}


def judge(job: Job, result: VerifierResult) -> tuple[str, str]:
    """TLC's verdict, failing closed (never raises: an exception here makes the record
    ``invalid`` with the reason):

    - a job whose post-processing raised (``build_error``) is ``invalid``;
    - SANY's view of the module (``result.extra["sany"]``) judged on the allow-lists of
      :func:`~harness.benchmarks.modelbench.integrity.sany_findings`: any finding makes it
      ``rejected`` whatever TLC said (TLC's reading kept in the reason); with no view, a
      run TLC did not verify keeps TLC's verdict (SANY failed: TLC says why), a verified
      one is ``rejected``;
    - a verified run that printed text of its own (``model_output``) or checked no state
      (empty initial-state set) is ``rejected``;
    - on a task with a declared input domain (the kit's oracle set), a verified run keeps
      ``verified`` only when the behaviour harness shows the model computes the program's
      return value on every input (:func:`_judge_behaviour`); the Assertion's strength
      then decides nothing (the invariant probe does not run there);
    - on a task without one, a verified run whose ``Assertion`` holds by construction is
      ``rejected``: TLC's invariant probe (:meth:`harness.verifiers.tlc.TLC.followup`,
      asked by the job's ``probe`` option) found it true on every state made from a
      reachable one by changing one variable to a value it takes elsewhere; a probe that
      ended in an evaluation error, did not run or could not be read fails closed
      (``rejected``); ``no_variants`` (no variable takes two values) does not reject.

    The paper's Runnable@k does not read this verdict: a sample is runnable when TLC
    checked it without failure (:func:`~harness.benchmarks.modelbench.metrics.runnable`).

    A run whose success TLC's own evidence contradicts is already ``rejected`` by the
    verifier. ``job.reject`` (set by older jobs) still rejects."""
    try:
        return _judge(job, result)
    except Exception as exc:  # noqa: BLE001 - one candidate's verdict, never the run's end
        return "invalid", f"the kit could not judge this candidate ({type(exc).__name__}: {exc})"


def _judge(job: Job, result: VerifierResult) -> tuple[str, str]:
    opts = job.options or {}
    if opts.get("build_error"):
        return "invalid", f"the kit's post-processing failed on this candidate: {opts['build_error']}"
    if getattr(job, "reject", None):
        return "rejected", f"{job.reject} (tlc: {result.verdict}: {result.reason})"
    view = (result.extra or {}).get("sany")
    if (view and not view.get("error")) or result.verdict == "verified":
        findings = sany_findings(view, constants=list(opts.get("constants") or {}),
                                 model_values=list(opts.get("model_values") or []),
                                 variables=list(opts.get("variables") or []),
                                 module=opts.get("module") if opts.get("module_header") else None,
                                 task_constants=dict.fromkeys(opts.get("task_constants") or []))
        if findings:
            return "rejected", "; ".join(findings) + f" (tlc: {result.verdict}: {result.reason})"
    if result.verdict == "verified":
        if result.extra.get("model_output"):
            return "rejected", f"the model printed into TLC's output: {result.extra['model_output'][:200]!r}"
        if not result.extra.get("distinct_states"):
            return "rejected", "vacuous model: TLC's dump holds no state (the initial-state predicate is empty)"
        if opts.get("behaviour"):
            return _judge_behaviour(result, opts["behaviour"])
        if opts.get("probe"):
            probe = result.extra.get("probe") or {"outcome": "not_run", "error": "no probe in the reading"}
            if probe["outcome"] == "held":
                return "rejected", (f"Assertion holds by construction: TLC found it true on all {probe['variants']} "
                                    "unreachable states made from reachable ones by changing one variable to a value "
                                    "it takes elsewhere (it checks nothing the model's behaviour could break)")
            if probe["outcome"] == "error":
                return "rejected", ("the invariant probe ended in an evaluation error, not a falsification (fail "
                                    f"closed: no evidence that the Assertion checks the model's states): {probe.get('error')}")
            if probe["outcome"] in ("not_run", "unreadable"):
                return "rejected", (f"the kit could not probe the Assertion (fail closed): {probe.get('error')}")
    return result.verdict, result.reason


def _judge_behaviour(result: VerifierResult, option: dict) -> tuple[str, str]:
    """The verdict of a run TLC verified, on a task with a behaviour harness
    (:mod:`harness.verifiers.tlc.behaviour`): ``verified`` only when the model's final
    results are the program's return values on every input of the bounded domain (and
    none of the tests' inputs shows otherwise); ``failed`` when they differ or a
    behaviour never ends (the model computes something else); ``rejected`` when an input
    of the bounded domain is missing from ``Init``, no variable holds a parameter, or the
    harness did not come to a result (fail closed)."""
    b = result.extra.get("behaviour") or {"outcome": "not_run", "detail": "no harness in the reading"}
    n, tests = option["bounded"], len(option["inputs"]) - option["bounded"]
    where = f"TLC on the kit's behaviour harness: {n} inputs of the bounded domain, {tests} from the program's tests"
    if b["outcome"] == "models_program":
        if b.get("tests_part") == "models_program":
            on_tests = f" and on the {tests} inputs of its tests (constants widened)"
        elif b.get("tests_part") in (None, "none"):
            on_tests = ""
        else:
            on_tests = f"; its tests' {tests} inputs not checked ({b['tests_part']}: {b.get('tests_detail')})"
        return "verified", (f"{result.reason}; behaves like the program: on all {n} inputs of its bounded domain"
                            f"{on_tests}, every behaviour ends with the program's return value in "
                            f"{b['result_variable']}")
    if b["outcome"] in ("differs", "no_end"):
        return "failed", f"the model does not behave like the program: {b['detail']} ({where})"
    return "rejected", (f"the kit could not establish that the model behaves like the program (fail closed): "
                        f"{b['outcome']}: {b.get('detail')} ({where})")


def compare(records: list[Record], tasks: dict, fetched=None) -> list[dict]:
    """No per-candidate published results exist: nothing to compare."""
    return []


# ---------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------

def report_sections(records: list[Record], tasks: list[Task], modes: list[str], *, seed: int = 0,
                    theta: float = THETA) -> dict:
    """``report.json`` ``sections``: ``runnable_at_k``, ``similarity``, ``fixes``,
    ``outcomes`` (see :mod:`~harness.benchmarks.modelbench.metrics`), ``oracles``
    (verdict and state count of each gold record), ``weaknesses`` (runnable samples that
    only stutter, :func:`~harness.benchmarks.modelbench.metrics.weaknesses`), ``behaviour``
    (the behaviour harness's outcome per runnable sample:
    :func:`~harness.benchmarks.modelbench.metrics.behaviour_table`) and
    ``not_reproducible`` (Table 2)."""
    oracles = {r["task_id"]: {"verdict": r["verdict"], "states": r["verifier"]["extra"].get("distinct_states"),
                              "mode": r["mode"]}
               for r in records if r["candidate"]["model"] == ORACLE_MODEL}
    return {"runnable_at_k": runnable_at_k(records), "similarity": similarity_table(records, theta=theta),
            "fixes": average_fixes(records), "outcomes": outcomes(records), "oracles": oracles,
            "weaknesses": weaknesses(records),
            "behaviour": behaviour_table(records),
            "not_reproducible": {"table2": NOT_REPRODUCIBLE}}


def run_notes(records: list[Record], modes: list[str]) -> list[str]:
    """Notes for report.json: what cannot be reproduced and the kit's adaptations."""
    notes = [f"Table 2 of the paper: not reproducible ({NOT_REPRODUCIBLE}); the numbers here are the kit's own "
             "on its own oracle set",
             "oracles: HumanEval programs modelled in TLA+ by hand for verikit (the paper's GPT-4o-derived, "
             "human-corrected oracles are unpublished); they run as the gold candidate",
             SIMILARITY_NOTE, WEAKNESSES_NOTE, BEHAVIOUR_NOTE]
    opts = next((r["verifier"]["options"] for r in records), {})
    if opts and not opts.get("deadlock_in_cfg", True):
        notes.append(f"TLC {opts.get('tlc_version')} predates the CHECK_DEADLOCK config keyword (TLC 2.16): the "
                     "config omits it and TLC gets -deadlock (do not check for deadlock), the same setting")
    return notes


# ---------------------------------------------------------------------------------------
# Reproduce: the paper's figures (not reproducible) and the kit's run on its oracle set
# ---------------------------------------------------------------------------------------

def load_published() -> dict:
    """``results/published/modelbench.json``."""
    return published_figures(NAME)


def reproduction(fetched, report: dict, records: list[Record], *, tasks: list[Task] | None = None,
                 published: dict | None = None, theta: float = THETA) -> Reproduction:
    """The paper's figures next to the kit's, from a finished run of the oracle tasks
    (mode ``original-fewshot``: the gold oracles and cheat canaries, the bundled imperfect
    candidates). Starts nothing.

    Figures: Table 1's HumanEval row (Origin is reproduced; the filter stages are
    ``not_reproducible``, with the kit's counts) and Table 2's Average rows (all
    ``not_reproducible``). Notes: the kit's Runnable@k and similarity per model, the
    canaries, the kit's Table 1. Sections: ``table1`` (the kit's counts, static stages).

    Args:
        fetched: the HumanEval data (:func:`~harness.benchmarks.modelbench.dataset.fetch`).
        report: the run's report.json (``sections``, ``canaries``).
        records: the run's records (the TLC version is read from their options).
        tasks: the dataset's tasks (default: loaded from ``fetched``).
        published: ``results/published/modelbench.json`` (default: loaded).
    """
    published = published or load_published()
    sections = report.get("sections", {})
    t1 = table1_counts(fetched)
    figures = []
    for fig in published["figures"]:
        entry = {k: fig[k] for k in ("name", "table", "row", "column")}
        entry["published"] = fig["value"]
        if fig["table"] == "Table 1" and fig["row"] == "HumanEval":
            kit = t1["HumanEval"][fig["stage"]]
            if fig["stage"] == "origin":
                equal = kit == fig["value"]
                entry.update(reproduced=kit, equal=equal, status="reproduced" if equal else "differs", notes=[])
            else:
                entry.update(reproduced=kit, equal=None, status="not_reproducible",
                             notes=[f"{TABLE1_NOT_REPRODUCIBLE}; kit count shown"])
        elif fig["table"] == "Table 2" and fig["row"].startswith("Average"):
            entry.update(reproduced=None, equal=None, status="not_reproducible", notes=[NOT_REPRODUCIBLE])
        else:
            continue
        figures.append(entry)
    n_oracles = sum(t.oracle is not None for t in (load_tasks(fetched) if tasks is None else tasks))
    rk = sections.get("runnable_at_k", {}).get(DEFAULT_MODES[0], {})
    sim = sections.get("similarity", {}).get("average", {}).get(DEFAULT_MODES[0], {})
    notes = [f"Table 2 ({len([f for f in published['figures'] if f['table'] == 'Table 2'])} figures): "
             f"not reproducible: {NOT_REPRODUCIBLE}"]
    for model, e in sorted(rk.items()):
        vals = ", ".join(f"Runnable@{k} = {v * 100:.2f} %" if isinstance(v, float) else f"Runnable@{k}: {v['error']}"
                         for k, v in e["runnable_at_k"].items())
        s = sim.get(model)
        simtxt = (f"; similarity (Def. 4, theta {theta}) = {s['similarity'] * 100:.2f} %, oracle-side reading "
                  f"{s['similarity_oracle_side'] * 100:.2f} % over {s['n']} runnable sample(s)") if s else \
            "; similarity: no runnable sample with an oracle"
        notes.append(f"kit, {model} on the {n_oracles} oracle tasks: {e['runnable']}/{e['samples']} samples "
                     f"runnable; {vals}{simtxt}")
    beh = sections.get("behaviour", {}).get("summary", {}).get(DEFAULT_MODES[0], {})
    for model, e in sorted(beh.items()):
        notes.append(f"kit, {model}: {e['models_program']}/{e['compared']} runnable sample(s) behave like the "
                     "program (behaviour harness: the program's return value in every final state, on every input "
                     "of its bounded domain and of its tests)")
    canary = report.get("canaries", {}).get("results", [])
    tlc_version = next((r["verifier"]["options"].get("tlc_version") for r in records), None)
    notes.append(f"oracles (gold) and canaries: {sum(x['ok'] for x in canary)}/{len(canary)} as expected "
                 f"(TLC {tlc_version})")
    notes.append("Table 1, kit (HumanEval): " + ", ".join(f"{s} {t1['HumanEval'][s]}" for s in STAGES)
                 + " (Execution without running: filters 1-3 and the transformer; the equivalence tests run them)")
    return Reproduction(figures=figures, notes=notes, sections={"table1": t1})


def reproduce(fetched, run: dict | None) -> Reproduction:
    """:func:`reproduction` of the run of the first prompt setting (``run``: ``{"report",
    "records", "tasks"}``).

    Raises:
        ValueError: no run given (Model-Bench has nothing to rescore without one).
    """
    if run is None:
        raise ValueError("Model-Bench's reproduction needs the run of its reproduce_modes()")
    return reproduction(fetched, run["report"], run["records"], tasks=run.get("tasks"))


def paper() -> Paper:
    """Chen et al., arXiv:2604.01851 (title and authors as on the paper's first page)."""
    return Paper("Can Large Language Models Model Programs Formally?",
                 ("Zhiyong Chen", "Jialun Cao", "Jiarong Wu", "Chang Xu", "Shing-Chi Cheung"),
                 load_published()["source"]["paper"], arxiv="2604.01851")


# ---------------------------------------------------------------------------------------
# The declared interface
# ---------------------------------------------------------------------------------------

class ModelBench(Benchmark):
    """Model-Bench: programs modelled in TLA+ by a model, checked by TLC."""

    name = NAME
    version = VERSION
    modes = MODES
    default_modes = DEFAULT_MODES
    datasets = DATASETS
    default_dataset = DEFAULT_DATASET
    container_only = CONTAINER_ONLY
    # pass@k over the kit's verdicts (``verified``: runnable, within the allow-lists, and, on the
    # oracle tasks, behaving like the program); the paper's Runnable@k is the report section
    # ``runnable_at_k`` (metrics.runnable: TLC checks the model without failure)
    k_metric = "pass@k"
    data = Data(load_tasks=load_tasks, gold_candidates=gold_candidates, bundled_candidates=bundled_candidates,
                canaries=canaries)
    jobs = Jobs(verifier_for=verifier_for, build_job=build_job, judge=judge, smoke_tests=smoke_tests)
    images = Images(container_images=("tlaplus",))
    reporting = Reporting(compare=compare, notes=run_notes, report_sections=report_sections,
                          report_blocks=blocks.report_blocks, commands=commands.COMMANDS)
    prompting = Prompting(prompts=generation.prompts, protocol=generation.protocol, messages=generation.messages,
                          extract=generation.extract, feedback=generation.feedback)
    # the kit's own run: the first prompt setting (only the oracle tasks have candidates: gold,
    # canaries and the bundled imperfect models)
    reproducing = Reproducing(reproduce_modes=DEFAULT_MODES[:1], reproduce=reproduce, paper=paper,
                              published=load_published, published_model_figures=published_models.model_figures,
                              model_metric_values=published_models.model_metric_values)


BENCHMARK = ModelBench()
