"""NTP4VC: 600 verification conditions (VCs) to prove in Isabelle, Lean and Rocq.

Paper: Xu, Luan, Wang, Leang, Wang, Li, Li, Watt, "Neural Theorem Proving for Verification
Conditions: A Real-World Benchmark" (NTP4VC, ICLR 2026). 300 VCs come from Why3 "pearls
of programs", 300 from Frama-C-verified C projects ("real C verification", Table 3). The
paper reports Why3's Auto_level_3 (AL3) pass rate per category (Table 2: 132/600 =
22.00 %), the Sledgehammer pass@1 on Isabelle (Table 5: 18.00 %) and, per category, the
union of the hammers (Table 6: 114/600). Dataset ``ntp4vc``: xqyww123/NTP4VC at dcfadfaa.

The package:

- :mod:`.data` -- the manifests and the 600 :class:`Task` objects (with each goal's
  published AL3 result), the per-goal AL3 CSV reader.
- :mod:`.published` -- the exact rescoring of the published baselines (AL3,
  Sledgehammer, Table 3 counts) and published vs reproduced (``verikit reproduce
  ntp4vc``: 13 figures reproduced, 22 not reproducible, each with its reason).
- :mod:`.rocq_library` -- the Rocq library closure, the adaptation to Coq 8.20.1 and the
  spec of the derived ``ntp4vc-rocq`` image.
- :mod:`.proofs` -- proof checking (``--lang rocq|lean|isabelle``): jobs, judging,
  canaries, pass@k tables, which task files load.
- :mod:`.why3_al3` -- the ``why3`` mode: the AL3 baseline re-run goal by goal, compared
  with the published per-goal results.

Not reproducible from the published data (never approximated): the categories of
Tables 2 and 6 (no item is labelled with one in the release: statistics/*.csv, the
manifests and the result CSVs have no such column, and the Frama-C goal names give
106/141/17/36 Loop/Function/Memory/Invalid-Arg. items, not the paper's 81/81/74/64;
``Task.category`` is always None, the per-source subtotals derived from Table 2 are
reproduced), Table 6's hammer column and Table 5's CoqHammer P@1 (CoqHammer's per-item
results are not published).

Task ids: ``<source dir>/<mlw name>::<goal>``, e.g.
``frama_c/verker/__tolower_Why3_ide::__tolower_Why3_ide_VC__tolower_post_goal0`` (the
``.mlw`` path under data/why3 without the suffix, and the Why3 goal name shared by the
three languages). Six Frama-C items carry an extra ``X`` prefix in their file name in the
Isabelle AND Rocq manifests (not in Lean): it is dropped for the id, and kept in the
per-language file names, which are the real file names.

Modes (given as ``--lang``): ``rocq`` (default: the only prover that runs on this kind
of machine, with real Coq 8.20.1 in the ``ntp4vc-rocq`` image), ``lean``, ``isabelle``
(their images cannot be built here), and ``why3``. The gold candidate is called ``gold``
in every mode: for the proof languages it is the task file with its placeholder ("does
the statement load"), for ``why3`` the goal itself.
"""

from __future__ import annotations

import json
from pathlib import Path

from ...model import Candidate, Job, VerifierResult, Record
from ...plugin import (Benchmark, Claim, Data, Images, Jobs, Paper, Prompting, Reporting, Reproducing,
                       sample_tasks)
from .data import (CATEGORIES, LANGUAGES, MANIFESTS, N_TASKS, SOURCES, SUFFIXES, TABLE3_PROJECT,  # noqa: F401
                   ManifestError, Task, load_tasks, read_auto_level_3)
from .proofs import (CANARY_TASK, CANARY_WALL_S, PASS_AT_K, PLACEHOLDERS, ROCQ_CANARIES,  # noqa: F401
                     ProofContext, pass_at_k_table, task_loads)
from .published import (CATEGORY_NOT_DERIVABLE, NOT_REPRODUCIBLE, SLEDGEHAMMER_CSV,  # noqa: F401
                        load_published, model_figures, reproduce, reproduce_figures, rescore_auto_level_3,
                        rescore_sledgehammer)
from .rocq_library import ROCQ_ADAPTATION, RocqLibrary, rocq_library_files, rocq_library_image  # noqa: F401
from . import blocks, generation, proofs, why3_al3

NAME = "ntp4vc"
VERSION = "1"
WHY3 = why3_al3.MODE
MODES = (*LANGUAGES, WHY3)
ROCQ_NOTE = ("Rocq files target Rocq 9.0 + stdpp 1.12 and are checked with Coq 8.20.1 + stdpp 1.11 "
             "through a load-path shim (run.json 'adaptation'); statements are not rewritten")


def verifier_for(mode: str) -> str:
    """The language's proof checker, or ``why3`` for the AL3 re-run.

    Raises:
        ValueError: unknown mode.
    """
    if mode not in MODES:
        raise ValueError(f"unknown NTP4VC language {mode!r}; choose from {', '.join(MODES)}")
    return mode


def gold_candidates(tasks: list[Task], mode: str) -> list[Candidate]:
    """``gold`` per task: the task file with its placeholder (a proof language), or the
    goal itself (``why3``; only the goals whose sources are in the dataset)."""
    if mode == WHY3:
        return why3_al3.gold_candidates(tasks)
    return proofs.gold_candidates(tasks, mode)


def sample(tasks: list[Task], mode: str, n: int, seed: int) -> list[str]:
    """Ids of ``n`` tasks drawn with ``seed``, in manifest order. ``why3``: stratified by
    the published AL3 result (``n // 3`` unproved, the rest proved; ``n=30, seed=0`` is the
    recorded re-run's sample, see :func:`.why3_al3.sample`); the other modes:
    :func:`harness.plugin.sample_tasks`.

    Raises:
        ValueError: ``n`` larger than the pool(s).
    """
    if mode == WHY3:
        return why3_al3.sample(tasks, n, seed)
    return sample_tasks(tasks, mode, n, seed)


def context(fetched, tasks: list[Task], mode: str, verifier, seed: int):
    """:class:`ProofContext` (task texts, Rocq library) or the ``why3`` sources."""
    if mode == WHY3:
        return why3_al3.Why3Context(fetched)
    return proofs.proof_context(fetched, mode, verifier)


def build_job(task: Task, cand: Candidate, mode: str, options: dict, dataset: dict, ctx) -> Job:
    """See :func:`.proofs.build_proof_job` and :func:`.why3_al3.build_why3_job`.

    Raises:
        ValueError: a task file without a single theorem and placeholder, a ``why3`` goal
            that cannot be run or a non-gold ``why3`` candidate (names the file or the task).
    """
    if mode == WHY3:
        return why3_al3.build_why3_job(task, cand, options, dataset, ctx, version=VERSION)
    return proofs.build_proof_job(task, cand, mode, options, dataset, ctx, version=VERSION)


def judge(job: Job, result: VerifierResult) -> tuple[str, str]:
    """Integrity findings win; ``gold`` of a proof language is ``rejected`` when the file
    loads; ``why3``: the strategy's verdict."""
    if job.mode == WHY3:
        return result.verdict, result.reason
    return proofs.judge_proof(job, result)


def notes(records: list[Record], modes: list[str]) -> list[str]:
    """The Rocq adaptation, what cannot be checked here, byte-identical task files, and
    the ``why3`` mode's deviations from the paper's AL3 run."""
    out = [ROCQ_NOTE] if "rocq" in modes else []
    if any(m in LANGUAGES for m in modes):
        out.append("per-category pass@k (Tables 5/6 rows): " + CATEGORY_NOT_DERIVABLE)
    out += proofs.twin_notes(records)
    if WHY3 in modes:
        out += [f"why3 (Auto_level_3 re-run): {x}" for x in why3_al3.LIMITATIONS]
    return out


def report_sections(records: list[Record], tasks: list[Task], modes: list[str], *, seed: int = 0) -> dict:
    """``pass_at_k`` and ``task_loads`` (proof languages), ``adaptation`` (rocq),
    ``why3_auto_level_3`` (the agreement table of the ``why3`` mode)."""
    by_id = {t.task_id: t for t in tasks}
    out: dict = {}
    if any(m in LANGUAGES for m in modes):
        out["pass_at_k"] = pass_at_k_table(records, by_id, seed=seed)
        if any(r["mode"] in LANGUAGES and r["candidate"]["model"] == proofs.GOLD for r in records):
            out["task_loads"] = task_loads(records, by_id)
    if "rocq" in modes:
        out["adaptation"] = ROCQ_ADAPTATION
    if WHY3 in modes:
        out["why3_auto_level_3"] = why3_al3.agreement_section(records, tasks)
    return out


def paper() -> Paper:
    """Xu et al., ICLR 2026 (title and authors as on the paper's first page)."""
    return Paper("Neural Theorem Proving for Verification Conditions: A Real-World Benchmark",
                 ("Qiyuan Xu", "Xiaokun Luan", "Renxi Wang", "Joshua Ong Jun Leang", "Peixin Wang", "Haonan Li",
                  "Wenda Li", "Conrad Watt"), load_published()["source"]["paper"])


def artifact_claims(references: Path) -> list[Claim]:
    """The rescoring of the published baselines, a fast sample of the Rocq check (the
    fastest gold task of each verdict of the committed run) and the full Rocq check."""
    tasks = _rocq_sample(references / NAME / "rocq" / "records.jsonl")
    sample_args: tuple[str, ...] = ("run", NAME, "--lang", "rocq", "--sandbox", "host", "-j", "@JOBS@")
    for t in tasks:
        sample_args += ("--task", t)
    return [
        Claim("ntp4vc-rescore", NAME, "Why3 Auto_level_3 proves 132/600 = 22.00 % of the test VCs (Table 2) "
              "and Sledgehammer 108/600 = 18.00 % (Table 5), rescored from the published per-item results.",
              ("reproduce", NAME), f"{NAME}/reproduce", "ntp4vc-rocq", smoke=True),
        Claim("ntp4vc-rocq-sample", NAME, f"A sample of the Rocq check below: {len(tasks)} task files, the "
              f"fastest of each outcome ({', '.join(sorted(tasks.values()))}), and the 10 integrity canaries, "
              "with the same verdicts as in the full run.",
              sample_args, f"{NAME}/rocq", "ntp4vc-rocq", smoke=True, subset=True, tasks=tuple(tasks)),
        Claim("ntp4vc-rocq", NAME, "Which of the 600 Rocq task files load with Coq 8.20.1 in the "
              "ntp4vc-rocq image (gold candidate: the file as released, `Admitted.` kept, so a file that loads "
              "is `rejected`), and the 10 integrity canaries rejected.",
              ("run", NAME, "--lang", "rocq", "--sandbox", "host", "-j", "@JOBS@"),
              f"{NAME}/rocq", "ntp4vc-rocq", smoke=False),
    ]


def _rocq_sample(records_file: Path) -> dict[str, str]:
    """Tasks of the committed Rocq reference run for the smoke sample: ``{task_id:
    verdict}``, the fastest gold item of each verdict the full run gives (under 60 s)."""
    recs = [json.loads(line) for line in records_file.read_text(encoding="utf-8").splitlines() if line.strip()]
    picked = {}
    for verdict in sorted({r["verdict"] for r in recs}):
        gold = sorted((r for r in recs if r["candidate"]["model"] == "gold" and r["verdict"] == verdict),
                      key=lambda r: (r["timings"]["wall_s"], r["task_id"]))
        if gold and gold[0]["timings"]["wall_s"] < 60:
            picked[gold[0]["task_id"]] = verdict
    return picked


class NTP4VC(Benchmark):
    """NTP4VC: proof checking per language, the AL3 re-run (``why3``), and the rescoring of
    the published baselines (no job runs)."""

    name = NAME
    version = VERSION
    modes = MODES
    default_modes = ("rocq",)
    datasets = ("ntp4vc",)
    default_dataset = "ntp4vc"
    container_only = True  # no NTP4VC prover is installed on hosts
    mode_option = "lang"
    data = Data(load_tasks=load_tasks, gold_candidates=gold_candidates, canaries=proofs.canaries, sample=sample)
    jobs = Jobs(verifier_for=verifier_for, build_job=build_job, judge=judge, context=context)
    # the rocq toolchain image with the pinned library compiled in (the other modes run in their
    # verifier's toolchain image; why3 in the rocq image)
    images = Images(derived_images={"ntp4vc-rocq": "rocq"}, derived_image_spec=rocq_library_image,
                    container_images=("rocq", "ntp4vc-rocq"), adaptation={"rocq": ROCQ_ADAPTATION})
    reporting = Reporting(compare=why3_al3.compare, notes=notes, report_sections=report_sections,
                          report_blocks=blocks.report_blocks)
    prompting = Prompting(prompts=generation.prompts, protocol=generation.protocol, messages=generation.messages,
                          extract=generation.extract, feedback=generation.feedback)
    reproducing = Reproducing(reproduce=reproduce, paper=paper, published=load_published,
                              published_model_figures=model_figures, artifact_claims=artifact_claims)


BENCHMARK = NTP4VC()
