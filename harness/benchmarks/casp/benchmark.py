"""CASP through the plugin interface (:class:`harness.plugin.Benchmark`): the functions
of the package's modules do the work; the paper, the report blocks and the artifact
claims are here."""

from __future__ import annotations

from pathlib import Path

from ...model import GOLD, Candidate, Job, VerifierResult, Record
from ...plugin import Benchmark, Block, Claim, Paper, Protocol, Reproduction
from .. import published_figures, published_model_figures
from . import blocks, execution, generation
from .candidates import KIT_DEAD_CANARY, bundled_candidates, canaries, canary_task, gold_candidates
from .comparison import compare_gold, compare_study, integrity_notes, reproduce_figures, study_results
from .jobs import build_job, judge, smoke_tests
from .tasks import DATASETS, DEFAULT_DATASET, MODES, NAME, VERIFIER, VERSION, Task, load_tasks


class Casp(Benchmark):
    """CASP through the declared interface (:class:`harness.plugin.Benchmark`); the
    functions of this module do the work."""

    name = NAME
    version = VERSION
    modes = MODES
    default_modes = MODES
    datasets = DATASETS
    default_dataset = DEFAULT_DATASET

    def load_tasks(self, fetched) -> list[Task]:
        return load_tasks(fetched)

    def verifier_for(self, mode: str) -> str:
        return VERIFIER

    def gold_candidates(self, tasks: list[Task], mode: str) -> list[Candidate]:
        return gold_candidates(tasks, mode)

    def bundled_candidates(self, fetched, mode: str) -> list[Candidate]:
        return bundled_candidates(fetched, mode)

    def canaries(self, tasks: list[Task], mode: str) -> list[tuple[Candidate, tuple[str, ...]]]:
        return canaries(tasks, mode)

    def canary_tasks(self, tasks: list[Task]) -> list[Task]:
        t = canary_task(tasks)
        return [x for x in (t, KIT_DEAD_CANARY) if x not in tasks]

    def smoke_tests(self, mode: str) -> bool:
        return smoke_tests(mode)

    def build_job(self, task: Task, cand: Candidate, mode: str, options: dict, dataset: dict, ctx=None) -> Job:
        return build_job(task, cand, mode, options, dataset)

    def judge(self, job: Job, result: VerifierResult) -> tuple[str, str]:
        return judge(job, result)

    def compare(self, records: list[Record], tasks: dict, fetched) -> list[dict]:
        """Gold verdicts and goal counts vs the dataset's published ones; bundled specs
        vs the CASP-LLM-Verification-Study's verdicts."""
        return compare_gold(records, tasks) + compare_study(records, study_results(fetched))

    def notes(self, records: list[Record], modes: list[str]) -> list[str]:
        """Unreachable code the WP smoke tests find under gold contracts (not a rejection),
        the integrity summary (:func:`integrity_notes`), the execution cross-check's
        statuses and the mean spec strength per model (:func:`.execution.report_notes`)."""
        dead = {r["task_id"]: r["verifier"]["extra"]["dead_code"] for r in records
                if r["candidate"]["model"] == GOLD and r["verifier"].get("extra", {}).get("dead_code")}
        out = [f"WP smoke tests find unreachable code or calls under the gold contract of {task_id}: "
                f"{', '.join(names)} (not a rejection: the precondition is consistent)"
                for task_id, names in sorted(dead.items())]
        return out + integrity_notes(records) + execution.report_notes(records)

    def reproduce_modes(self) -> tuple[str, ...]:
        return ("gold",)

    # ---- prompts and generation (verikit prompts, verikit generate): see :mod:`.generation`

    def prompts(self, fetched, tasks: list[Task], mode: str, *, shots: int | None = None) -> list[dict]:
        """``{"task_id", "mode", "messages", "template_ids"}`` per task: the first turn
        ``verikit generate`` sends (:func:`.generation.messages`).

        Raises:
            ValueError: ``gold`` (nothing to generate), or ``shots`` given (CASP has no
                few-shot setting).
        """
        if shots is not None:
            raise ValueError("casp's prompts are zero-shot: --shots does not apply")
        if self.protocol(mode) is None:
            raise ValueError(f"casp's {mode} mode has no prompts: it re-verifies the dataset's own pairs "
                             "(the candidate modes: spec-from-code, code-from-spec)")
        ids = generation.template_ids(mode)
        return [{"task_id": t.task_id, "mode": mode, "messages": generation.messages(t, mode), "template_ids": ids}
                for t in tasks]

    def protocol(self, mode: str) -> Protocol | None:
        """The kit's first turn and the paper's repair loop, up to 7 Frama-C feedback turns
        (:func:`.generation.protocol`); None for ``gold``."""
        return generation.protocol(mode)

    def messages(self, fetched, task: Task, mode: str) -> list[dict]:
        """:func:`.generation.messages`. Raises NotImplementedError for ``gold``."""
        return generation.messages(task, mode)

    def extract(self, completion: str, mode: str) -> str | None:
        """The answer's ``fixed_code`` (:func:`.generation.extract`), or None."""
        return generation.extract(completion)

    def feedback(self, record: Record, mode: str, *, previous: str | None = None) -> str | None:
        """The paper's repair prompt with Frama-C's failing goals (:func:`.generation.feedback`)."""
        return generation.feedback(record, mode, previous)

    def reproduce(self, fetched, run: dict | None) -> Reproduction:
        """The gold pairs' verdicts and goal counts vs the dataset's published ones
        (Frama-C 30.0): see :func:`reproduce_figures`."""
        return reproduce_figures(run["records"], {t.task_id: t for t in run["tasks"]})

    def paper(self) -> Paper:
        """Hertzberg et al., arXiv:2508.18798 (title and authors as on the paper's first page)."""
        return Paper("CASP: An evaluation dataset for formal verification of C code",
                     ("Niclas Hertzberg", "Merlijn Sevenhuijsen", "Liv Kåreborn", "Anna Lokrantz"),
                     published_figures(NAME)["source"]["paper"], arxiv="2508.18798")

    def published(self) -> dict:
        return published_figures(NAME)

    def published_model_figures(self, mode: str, model: str | None = None) -> list[dict]:
        """The CASP paper gives no per-model figure; the CASP-LLM-Verification-Study's
        verdicts give one per model for ``spec-from-code`` on casp-sample10 (pass@1, one
        specification per pair; ``results/published/casp.json`` ``model_figures``)."""
        return published_model_figures(NAME, mode, model)

    def report_blocks(self, report: dict, records: list[Record]) -> list[Block]:
        return blocks.report_blocks(report, records)

    def container_images(self) -> tuple[str, ...]:
        return ("framac",)

    def artifact_claims(self, references: Path) -> list[Claim]:
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


BENCHMARK = Casp()
