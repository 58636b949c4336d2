"""The parts a benchmark is composed of: what it states, grouped by concern, each field a
function with a default, so that a benchmark states only what differs.

- :class:`Data`: its tasks and candidates (load, gold, bundled, canaries, sample, convert);
- :class:`Jobs`: how a candidate is checked (verifier, job, judge, smoke tests, context);
- :class:`Images`: where the jobs run (derived images, container images, adaptation);
- :class:`Reporting`: what the kit writes and shows of a run (comparison, notes,
  sections, files, HTML blocks) and the benchmark's own subcommands;
- :class:`Prompting`: the paper's prompts and generation protocol;
- :class:`Reproducing`: the paper, its figures, the reproduction and the artifact claims.

A :class:`harness.plugin.Benchmark` names its parts as class attributes and answers each
hook from its part; a field's shape is the hook's (``(arguments) -> answer`` below), so a
module's function of that shape is given as it is. Part of the plugin interface:
:mod:`harness.plugin` re-exports them, and a plugin imports them from there. This module
imports only :mod:`harness.model` and :mod:`harness.blocks` (layer 0).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .blocks import Block
from .model import Candidate, Job, Record, VerifierResult


def _none(*args, **kwargs) -> None:
    """Answers None whatever it is asked (no context, protocol, feedback, paper...)."""
    return None


def _empty(*args, **kwargs) -> list:
    """Answers an empty list whatever it is asked (no candidates, notes, blocks...)."""
    return []


def _no_entries(*args, **kwargs) -> dict:
    """Answers an empty dict whatever it is asked (no sections, no run files)."""
    return {}


def _never(mode: str) -> bool:
    return False


def _as_is(completion: str, mode: str) -> str:
    return completion


def sample_tasks(tasks: list, mode: str, n: int, seed: int) -> list[str]:
    """Ids of ``n`` tasks drawn with ``seed``, in dataset order: ``random.Random(seed).sample``
    of the id-sorted tasks (the default of :attr:`Data.sample`).

    Raises:
        ValueError: ``n`` is not between 1 and the number of tasks.
    """
    ids = sorted(t.task_id for t in tasks)
    if not 0 < n <= len(ids):
        raise ValueError(f"cannot draw {n} of {len(ids)} tasks")
    chosen = set(random.Random(seed).sample(ids, n))
    return [t.task_id for t in tasks if t.task_id in chosen]


@dataclass(frozen=True)
class Data:
    """What a benchmark checks: its tasks and their candidates.

    Attributes:
        load_tasks: ``(fetched) -> [task]``: every task of a fetched dataset (a pinned
            dataset or the user's own directory). ValueError: a task file cannot be read
            (the message names file:line). Required.
        gold_candidates: ``(tasks, mode) -> [Candidate]``: the dataset's own solution of each
            task, model ``gold``. Required.
        bundled_candidates: ``(fetched, mode) -> [Candidate]``: model outputs shipped with the
            dataset, scored without ``--predictions``. Default: none.
        canaries: ``(tasks, mode) -> [(Candidate, expected verdicts)]``: known-good and
            known-cheat candidates; they run on their own fixed tasks whatever ``--task``
            selects (``tasks`` is the whole dataset), and a run whose canaries get another
            verdict is invalid. Default: none.
        canary_tasks: ``(tasks) -> [task]``: the tasks the canaries run on that are not in
            the dataset (the kit's own, for a dataset that lacks the usual one). Default: none.
        sample: ``(tasks, mode, n, seed) -> [task id]``: the ``n`` tasks ``verikit run
            --sample N --seed S`` draws, in dataset order (e.g. NTP4VC's why3 mode
            stratifies by the published result). ValueError: ``n`` does not fit. Default:
            :func:`sample_tasks`.
        convert: ``(path, fetched, tasks, *, model=None) -> [predictions line]``
            (``schemas/predictions.schema.json``) from an upstream output file of the
            benchmark (``verikit convert``). ValueError: the file is malformed (names the
            file and line). Default None: no upstream format.
    """

    load_tasks: Callable[[Any], list]
    gold_candidates: Callable[[list, str], list[Candidate]]
    bundled_candidates: Callable[[Any, str], list[Candidate]] = _empty
    canaries: Callable[[list, str], list[tuple[Candidate, tuple[str, ...]]]] = _empty
    canary_tasks: Callable[[list], list] = _empty
    sample: Callable[[list, str, int, int], list[str]] = sample_tasks
    convert: Callable[..., list[dict]] | None = None


@dataclass(frozen=True)
class Jobs:
    """How a candidate is checked: the verifier, the job and the verdict.

    Attributes:
        verifier_for: ``(mode) -> str``: registry name of the verifier that checks
            candidates of ``mode``. Required.
        build_job: ``(task, cand, mode, options, dataset, ctx) -> Job``: the job of a
            candidate with its integrity checks (``ctx``: what ``context`` made for the
            run). ValueError: the task's own files cannot be read (names file:line). Required.
        judge: ``(job, result) -> (verdict, reason)`` from the verifier's reading and the
            job's checks. A judge that checks the tool's output (e.g. Frama-C's view of the
            file in ``result.artifacts``) appends those checks to ``result.checks`` and its
            findings to ``result.extra``; both are recorded with the verdict (the job itself,
            whose key is its identity, is never changed). Required.
        smoke_tests: ``(mode) -> bool``: whether the verifier runs its vacuity smoke tests.
            Default: never.
        context: ``(fetched, tasks, mode, verifier, seed) -> object``: per-run state that
            ``build_job`` needs (e.g. a library index, the mutation seed). Default: None.
    """

    verifier_for: Callable[[str], str]
    build_job: Callable[[Any, Candidate, str, dict, dict, Any], Job]
    judge: Callable[[Job, VerifierResult], tuple[str, str]]
    smoke_tests: Callable[[str], bool] = _never
    context: Callable[[Any, list, str, Any, int], Any] = _none


@dataclass(frozen=True)
class Images:
    """Where a benchmark's jobs run, declared: the kit builds the images (``verikit images
    build NAME``, and on a run's first use); a benchmark never makes an image or opens the
    engine itself.

    Attributes:
        derived_images: image name -> the mode whose jobs run in it (in the container
            sandbox, instead of the verifier's toolchain image). Default: none.
        derived_image_spec: ``(mode, fetched, fingerprint) -> dict``: the build spec of the
            derived image of ``mode`` (the format of
            :func:`harness.sandbox.images.build_derived`); ``fingerprint(toolchain)`` gives a
            toolchain image's fingerprint, for a spec whose fingerprint covers its base.
            Default None: no derived image.
        container_images: the images (toolchain or derived image names) a container run of
            the default modes and of the reproduction needs (``verikit images build``).
            Default None: the derived images.
        adaptation: mode -> how the benchmark's files were adapted to the toolchain
            (recorded in run.json). Default: none.
    """

    derived_images: dict[str, str] = field(default_factory=dict)
    derived_image_spec: Callable[[str, Any, Callable[[str], str]], dict] | None = None
    container_images: tuple[str, ...] | None = None
    adaptation: dict[str, dict] = field(default_factory=dict)


@dataclass(frozen=True)
class Reporting:
    """What the kit writes and shows of a run besides its metrics, and the benchmark's own
    subcommands.

    Attributes:
        compare: ``(records, tasks by id, fetched) -> [dict]``: each record against the
            published per-item result, if the dataset has them. Default: none.
        notes: ``(records, modes) -> [str]``: notes for report.json, one line each.
            Default: none.
        report_sections: ``(records, tasks, modes, *, seed=0) -> dict``: the benchmark's
            sections of report.json (pass@k tables, similarity...), as
            :meth:`harness.plugin.Benchmark.sections_schema` describes them (checked before
            report.json is written). Default: none.
        run_files: ``(records, tasks) -> {name: text}``: extra files of the run directory,
            e.g. OSVBench's log in the upstream format that upstream's ``stats.py`` reads.
            Default: none.
        report_blocks: ``(report, records) -> [Block]``: the benchmark's blocks of the HTML
            report, from its report.json and records (canaries included: a block leaves them
            out itself). Default: none.
        commands: extra subcommands (:class:`harness.plugin.Command`), ``verikit <benchmark>
            <name>`` (e.g. a table's filters). Default: none.
    """

    compare: Callable[[list[Record], dict, Any], list[dict]] = _empty
    notes: Callable[[list[Record], list[str]], list[str]] = _empty
    report_sections: Callable[..., dict] = _no_entries
    run_files: Callable[[list[Record], list], dict[str, str]] = _no_entries
    report_blocks: Callable[[dict, list[Record]], list[Block]] = _empty
    commands: tuple = ()


@dataclass(frozen=True)
class Prompting:
    """The paper's prompts and generation protocol (``verikit prompts``, ``verikit generate``).

    Attributes:
        prompts: ``(fetched, tasks, mode, *, shots=None) -> [{"task_id", "mode", ...}]``,
            one per task (``shots``: the number of few-shot examples, where the benchmark
            has that setting). ValueError: a setting the benchmark does not have (e.g. an
            unknown shot count). Default None: no prompts.
        protocol: ``(mode) -> Protocol | None``: the paper's generation protocol for
            ``mode`` (:class:`harness.plugin.Protocol`: templates, extraction rule, decoding
            settings); None: ``mode`` cannot be generated for. Default: None.
        messages: ``(fetched, task, mode) -> [{"role", "content"}]``: the first turn of the
            chat, made from the protocol's templates (what ``verikit prompts`` prints and
            ``generate`` sends). Default None: no protocol.
        extract: ``(completion, mode) -> str | None``: the candidate in a model's completion
            by the protocol's extraction rule; None when it holds none (the candidate is then
            written with an empty ``output`` and ``meta.extracted`` false, and judged
            ``invalid``; never dropped). Default: the completion as it is.
        feedback: ``(record, mode, *, previous=None) -> str | None``: the next user message
            of a verifier-in-the-loop chat, from the judged ``record`` of the last attempt
            and ``previous``, the model's raw completion of it (or None), with the protocol's
            feedback template; None: nothing to send (verified, infra_error, no feedback).
            Default: None.
    """

    prompts: Callable[..., list[dict]] | None = None
    protocol: Callable[[str], Any] = _none
    messages: Callable[[Any, Any, str], list[dict]] | None = None
    extract: Callable[[str, str], str | None] = _as_is
    feedback: Callable[..., str | None] = _none


@dataclass(frozen=True)
class Reproducing:
    """The paper and its reproduction (``verikit reproduce``), its figures and citation
    (the report, the Hub card, CITATION.cff) and the artifact bundle's claims.

    Attributes:
        reproduce_modes: the modes ``verikit reproduce`` runs through the runner before
            comparing. Default: none (the reproduction only rescores published files).
        reproduce: ``(fetched, run) -> Reproduction`` (:class:`harness.plugin.Reproduction`):
            published vs reproduced figures; ``run`` is None for a rescoring-only
            reproduction, else ``{"report", "records", "tasks"}`` of the run of
            ``reproduce_modes``. Default None: no published figures to reproduce.
        paper: ``() -> Paper | None`` (:class:`harness.plugin.Paper`). Default: None.
        published: ``() -> dict | None``: the paper's figures as data (``{"source":
            {"paper", ...}, "figures": [...]}``, the format of ``results/published/``).
            Default: None.
        published_model_figures: ``(mode, model=None) -> [dict]``: the paper's figures of one
            model's generated candidates in ``mode`` (``model``: the paper's name for it;
            None: every model's), which ``reproduce --generate`` compares a re-run with by a
            bootstrap CI (:mod:`harness.runner.generated`). Each: ``name``, ``table``,
            ``row``, ``column``, ``model``; ``metric``: ``{"kind": "pass_at_k", "k"}``,
            ``{"kind": "fixes"}`` or a kind of ``model_metric_values``; ``value`` as printed
            in ``unit`` (``percent``: 0-100) with ``decimals`` (default 2); optional
            ``samples`` (per task, the paper's), ``dataset``, ``notes``. Default: none.
        model_metric_values: ``(metric, records, mode, model) -> {task_id: (num, den)}`` of
            a metric of the benchmark's own (e.g. Model-Bench's similarity) over ``model``'s
            records in ``mode`` (``records`` holds the gold too); the statistic is
            sum(num) / sum(den), 0..1 for a percent figure. ValueError: a metric kind the
            benchmark does not have. Default None: no metric of its own.
        artifact_claims: ``(references) -> [Claim]`` (:class:`harness.plugin.Claim`): the
            claims the artifact bundle checks; ``references`` is the directory of the
            committed reference runs (``results/reproduced/``), where each claim's
            ``expected`` run lives. Default: none (the benchmark cannot be bundled).
    """

    reproduce_modes: tuple[str, ...] = ()
    reproduce: Callable[[Any, dict | None], Any] | None = None
    paper: Callable[[], Any] = _none
    published: Callable[[], dict | None] = _none
    published_model_figures: Callable[..., list[dict]] = _empty
    model_metric_values: Callable[[dict, list[Record], str, str], dict[str, tuple[float, float]]] | None = None
    artifact_claims: Callable[[Path], list] = _empty
