"""OSVBench behind the common interface (:class:`harness.plugin.Benchmark`): tasks,
candidates, canaries, jobs, judging, report sections, the job image and the rescoring of
the published run. ``verikit run osvbench --sandbox container --predictions FILE`` runs
the checks through the common runner (cache, resume, schema-valid run directory).
"""

from __future__ import annotations

from pathlib import Path

from ...model import Candidate, GOLD, Job, Limits, VerifierResult, candidate_ref, Record
from ...plugin import Benchmark, Claim, Data, Images, Jobs, Paper, Prompting, Reporting, Reproducing
from ...results import CANARY_PREFIX
from ...verifiers import hyperkernel
from ..prompting import EMPTY_CANDIDATE
from . import blocks, image, prompts, rescore, scoring
from .convert import convert_upstream_results
from .spec import extract_spec, integrity_scan
from .tasks import (MODES, REFERENCE_FILE, RESULTS_JSON, ManifestError, Task, check_mode, has_file, load_benchmark,
                    load_tasks, path_of)

NAME = "osvbench"
#: Version of the benchmark's judging (part of every job key).
VERSION = "2"
#: Memory limit of one check, MiB (Z3 on Hyperkernel's state model; the kit's earlier
#: OSVBench runner used the same).
JOB_MEM_MB = 8192
#: The run's upstream-format log (:func:`run_files`), as the kit's OSVBench runner named it.
UPSTREAM_LOG_FILE = "output_upstream_format"
#: The fixed task of the canaries: the first task of ``sys_protect_frame``, whose
#: reference spec (the prompt examples') the published run verified, comments aside,
#: on all five of its tasks.
CANARY_SYSCALL = "sys_protect_frame"
#: Cheats that the integrity scan must reject before anything runs: a forged passing
#: test line, and an escape through dunder attributes.
CHEATS = {
    "forged-ok": ("def sys_protect_frame(old, pt, index, frame, perm):\n"
                  "    print \"test_sys_protect_frame (__main__.HV6) ... ok\"\n"
                  "    raise SystemExit(0)\n"),
    "dunder-escape": ("def sys_protect_frame(old, pt, index, frame, perm):\n"
                      "    return ().__class__.__base__.__subclasses__(), old\n"),
}
#: How upstream's runner (spec_util.py + verify.sh in OSVBench's image) is adapted (run.json).
ADAPTATION = {
    "image": (f"{image.DERIVED_IMAGE}: FROM {image.UPSTREAM_IMAGE}, Hyperkernel tree and Z3 made readable "
              "by the job user, Z3's bindings on PYTHONPATH as in OSVBench's Dockerfile; toolchain unchanged"),
    "runner": ("harness/verifiers/hyperkernel/job.sh: the command 'make hv6-verify -- -v --failfast "
               "HV6.test_<syscall>' runs (python2 .../spec/main.py), on a per-job copy of hv6py with the "
               "candidate as specs.py (upstream's header + spec + newline), under timeout(1)"),
    "time_limit_s": hyperkernel.UPSTREAM_TIMEOUT_S,
    "samples": "every sample is checked (upstream stops at the first pass)",
}
#: What a reader of the report must know about the check and the metrics.
NOTES = [
    ("each spec is checked with HV6.test_<syscall> on the one Hyperkernel build of the image, as upstream's "
     "runner does: the task's (possibly buggy) code variant is shown to the model but not compiled"),
    ("pass@k uses every sample (unbiased estimator); the paper's categories: pass = verified, semantic = "
     "counterexample or timeout, syntax = any other failure of the check (rejected specs never ran)"),
]


# ---- tasks and candidates

def gold_candidates(tasks: list[Task], mode: str) -> list[Candidate]:
    """The dataset's reference spec of each task that has one (the 9-shot prompt examples
    show Hyperkernel's own spec of 9 of the 49 system calls: 45 tasks), as model ``gold``;
    [] for the others (OSVBench publishes no other reference)."""
    check_mode(mode)
    return [Candidate(t.task_id, GOLD, 0, t.reference, f"gold:{REFERENCE_FILE}") for t in tasks if t.reference]


def bundled_candidates(fetched, mode: str) -> list[Candidate]:
    """The published Claude-3.5-sonnet specs (``results/Spec/claude3sonnet_Spec.json``, one
    per task, model ``claude3sonnet``), when the dataset has them."""
    check_mode(mode)
    if not has_file(fetched, RESULTS_JSON):
        return []
    lines, _ = convert_upstream_results(path_of(fetched, RESULTS_JSON), load_benchmark(fetched).tasks,
                                        where=RESULTS_JSON)
    return [Candidate(ln["task_id"], ln["model"], ln["sample"], ln["output"], f"bundled:{RESULTS_JSON}",
                      ln["meta"]) for ln in lines]


def canaries(tasks: list[Task], mode: str) -> list[tuple[Candidate, tuple[str, ...]]]:
    """On the first ``sys_protect_frame`` task: its reference spec must be ``verified``; the
    cheats of :data:`CHEATS` must be ``rejected``. [] when the dataset has no such task."""
    check_mode(mode)
    task = next((t for t in tasks if t.syscall == CANARY_SYSCALL), None)
    if task is None:
        return []
    out = []
    if task.reference:
        out.append((Candidate(task.task_id, f"{CANARY_PREFIX}reference", 0, task.reference, "canary"), ("verified",)))
    out += [(Candidate(task.task_id, f"{CANARY_PREFIX}{name}", 0, text, "canary"), ("rejected",))
            for name, text in CHEATS.items()]
    return out


def convert(path, fetched, tasks: list[Task], *, model: str | None = None) -> list[dict]:
    """Predictions lines from an upstream results JSON (``verikit convert osvbench [FILE]``;
    default the pinned ``results/Spec/claude3sonnet_Spec.json``), for the tasks of
    ``tasks`` (:func:`harness.benchmarks.osvbench.convert.convert_upstream_results`; its
    notes on tasks without a spec are not returned).

    Raises:
        ManifestError (a ValueError): not upstream's shape, a missing file, a key that is
            not a task of the dataset, a syscall that is not the task's.
    """
    src = Path(path) if path else path_of(fetched, RESULTS_JSON)
    if not src.is_file():
        raise ManifestError(f"{src}: no such file (an upstream results JSON, results/<dir>/<llm>_<task>.json)")
    lines, _ = convert_upstream_results(src, load_benchmark(fetched).tasks, model=model,
                                        where=None if path else RESULTS_JSON)
    wanted = {t.task_id for t in tasks}
    return [ln for ln in lines if ln["task_id"] in wanted]


# ---- jobs

def verifier_for(mode: str) -> str:
    """``hyperkernel`` (the only verifier). Raises ValueError: an unknown mode."""
    check_mode(mode)
    return hyperkernel.NAME


def build_job(task: Task, cand: Candidate, mode: str, options: dict, dataset: dict, ctx=None) -> Job:
    """The check of ``cand`` on ``task``: the spec is the first ```` ```python ```` block of
    the output (upstream's rule, :func:`extract_spec`), checked with ``HV6.test_<syscall>``;
    a spec that uses a forbidden name (:func:`integrity_scan`) is ``rejected`` without
    running. The job's limits: the check's own time limit (``options["timeout_s"]``,
    upstream's 600 s) plus :data:`harness.verifiers.hyperkernel.SETUP_S`, and
    :data:`JOB_MEM_MB`. ``ctx`` is not used.

    Raises:
        ValueError: an unknown mode, or a syscall that is not an identifier.
    """
    check_mode(mode)
    spec = extract_spec(cand.output)
    found = integrity_scan(spec)
    checks = [{"name": "forbidden_names", "ok": not found, "detail": "; ".join(found) or "none"}]
    precheck = ("rejected", "spec uses forbidden names: " + "; ".join(found[:3])) if found else None
    if not spec.strip():  # no spec (verikit generate writes a completion without one as ""): never run
        precheck = ("invalid", EMPTY_CANDIDATE)
    opts = hyperkernel.Hyperkernel.task_options(options, task.syscall)
    timeout_s = float(opts.get("timeout_s", hyperkernel.UPSTREAM_TIMEOUT_S))
    return Job(benchmark=NAME, benchmark_version=VERSION, dataset=dataset, mode=mode, task_id=task.task_id,
               task_sha256=task.sha256, candidate=candidate_ref(cand), files=hyperkernel.Hyperkernel.files(spec),
               options=opts, checks=checks, precheck=precheck,
               limits=Limits(wall_s=timeout_s + hyperkernel.SETUP_S, mem_mb=JOB_MEM_MB))


def judge(job: Job, result: VerifierResult) -> tuple[str, str]:
    """The verifier's verdict (integrity findings are decided before the run, as the job's
    precheck)."""
    return result.verdict, result.reason


# ---- results

def compare(records: list[Record], tasks: dict, fetched) -> list[dict]:
    """Per record checking the very spec the published run checked for its task, the
    published log entry vs this run (:func:`harness.benchmarks.osvbench.scoring.compare`);
    [] when the dataset has no published run, or one that does not pair with its tasks
    (``verikit reproduce osvbench`` reports that as a failed check)."""
    try:
        published = rescore.published_log(fetched, sorted(tasks.values(), key=lambda t: t.index))
    except ManifestError:
        return []
    return scoring.compare(records, published) if published else []


def notes(records: list[Record], modes: list[str]) -> list[str]:
    """:data:`NOTES`."""
    return list(NOTES)


def run_files(records: list[Record], tasks: list[Task]) -> dict[str, str]:
    """Extra files of a run directory: ``output_upstream_format``, the run as upstream's
    verifier log (:func:`harness.benchmarks.osvbench.scoring.upstream_log`; readable by
    upstream's stats.py). ``tasks``: the run's tasks, in benchmark order."""
    return {UPSTREAM_LOG_FILE: scoring.upstream_log(records, tasks)}


# ---- what the kit shows and ships of it

def paper() -> Paper:
    """Li et al., arXiv:2504.20964 (title and authors as on the paper's first page)."""
    return Paper("OSVBench: Benchmarking LLMs on Specification Generation Tasks for Operating System Verification",
                 ("Shangyu Li", "Juyong Jiang", "Tiancheng Zhao", "Jiasi Shen"),
                 rescore.load_published()["source"]["paper"], arxiv="2504.20964")


def artifact_claims(references: Path) -> list[Claim]:
    """The rescoring of the published Claude-3.5-sonnet run."""
    return [Claim("osvbench-rescore", NAME, "Claude-3.5-sonnet's specifications pass 110/245 = 44.90 % "
                  "(Table 1, 5-shot), with 55 syntax and 80 semantic errors and the per-bug-type rates, "
                  "rescored from the published verifier log.", ("reproduce", NAME),
                  f"{NAME}/reproduce", None, smoke=True)]


class OSVBench(Benchmark):
    """OSVBench (Li et al., arXiv:2504.20964): 245 Hyperkernel system-call specification
    tasks, checked by Hyperkernel's verifier (:mod:`harness.verifiers.hyperkernel`) in
    OSVBench's upstream image; mode ``spec`` (the only one)."""

    name = NAME
    version = VERSION
    modes = MODES
    default_modes = MODES
    datasets = ("osvbench",)
    default_dataset = "osvbench"
    container_only = True  # model-written Python, and Python 2.7 + Z3 4.5.0: only in the job image
    data = Data(load_tasks=load_tasks, gold_candidates=gold_candidates, bundled_candidates=bundled_candidates,
                canaries=canaries, convert=convert)
    jobs = Jobs(verifier_for=verifier_for, build_job=build_job, judge=judge)
    # the job image, on OSVBench's upstream image (pulled or loaded by the user: its base_hint
    # says how); the rescoring runs no verifier, its artifact claim runs in any runner image
    images = Images(derived_images={image.DERIVED_IMAGE: "spec"}, derived_image_spec=image.derived_image_spec,
                    container_images=("framac",), adaptation={"spec": ADAPTATION})
    reporting = Reporting(compare=compare, notes=notes, report_sections=scoring.report_sections,
                          run_files=run_files, report_blocks=blocks.report_blocks)
    prompting = Prompting(prompts=prompts.task_prompts, protocol=prompts.protocol, messages=prompts.first_turn,
                          extract=prompts.extract)
    reproducing = Reproducing(reproduce=rescore.reproduce, paper=paper, published=rescore.load_published,
                              artifact_claims=artifact_claims)


BENCHMARK = OSVBench()
