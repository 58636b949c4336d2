"""CASP through the plugin interface (:class:`harness.plugin.Benchmark`): the functions
of the package's modules do the work; the paper and the artifact claims are here."""

from __future__ import annotations

from pathlib import Path

from ...plugin import Benchmark, Claim, Data, Images, Jobs, Paper, Prompting, Reporting, Reproducing
from . import blocks, candidates, comparison, generation, jobs
from .tasks import DATASETS, DEFAULT_DATASET, MODES, NAME, VERSION, load_tasks


def paper() -> Paper:
    """Hertzberg et al., arXiv:2508.18798 (title and authors as on the paper's first page)."""
    return Paper("CASP: An evaluation dataset for formal verification of C code",
                 ("Niclas Hertzberg", "Merlijn Sevenhuijsen", "Liv Kåreborn", "Anna Lokrantz"),
                 comparison.load_published()["source"]["paper"], arxiv="2508.18798")


def artifact_claims(references: Path) -> list[Claim]:
    """The gold pairs' reproduction and the bundled LLM specifications' run."""
    return [
        Claim("casp-gold", NAME, "Every CASP pair is formally verified with Frama-C (the paper: 506 "
              "verified pairs, Frama-C 30.0 WP + RTE). Here: the 10-pair sample, gold verdicts and goal counts "
              "vs the dataset's.", ("reproduce", NAME, "--sandbox", "host", "-j", "@JOBS@"),
              f"{NAME}/reproduce", "framac", smoke=True),
        Claim("casp-models", NAME, "The CASP study's LLM-written specifications of the sample (spec-from-code) "
              "and the gold code (code-from-spec) scored with Frama-C WP under the kit's integrity rules, "
              "its 20 cheat canaries rejected.",
              ("run", NAME, "--dataset", "casp-sample10", "--sandbox", "host", "-j", "@JOBS@"),
              NAME, "framac", smoke=False),
    ]


class Casp(Benchmark):
    """CASP: C functions and their ACSL contracts, checked by Frama-C WP."""

    name = NAME
    version = VERSION
    modes = MODES
    default_modes = MODES
    datasets = DATASETS
    default_dataset = DEFAULT_DATASET
    data = Data(load_tasks=load_tasks, gold_candidates=candidates.gold_candidates,
                bundled_candidates=candidates.bundled_candidates, canaries=candidates.canaries,
                canary_tasks=candidates.canary_tasks)
    jobs = Jobs(verifier_for=jobs.verifier_for, build_job=jobs.build_job, judge=jobs.judge,
                smoke_tests=jobs.smoke_tests)
    images = Images(container_images=("framac",))
    reporting = Reporting(compare=comparison.compare, notes=comparison.notes, report_blocks=blocks.report_blocks)
    prompting = Prompting(prompts=generation.prompts, protocol=generation.protocol, messages=generation.messages,
                          extract=generation.extract, feedback=generation.feedback)
    reproducing = Reproducing(reproduce_modes=("gold",), reproduce=comparison.reproduce, paper=paper,
                              published=comparison.load_published,
                              published_model_figures=comparison.model_figures, artifact_claims=artifact_claims)


BENCHMARK = Casp()
