"""The plugin interface: what a benchmark supplies, and how the kit finds it.

A benchmark is one package that defines a :class:`Benchmark` (tasks, candidates, jobs,
judging, metrics, reproduction) and, optionally, everything else the kit shows or ships
of it: its paper (:class:`Paper`), its published figures, typed report blocks
(:class:`Table`, :class:`Bars`, :class:`VerdictBars`, :class:`Scatter`, :class:`Text`,
rendered by a report that knows no benchmark), its artifact-evaluation claims
(:class:`Claim`), its extra subcommands (:class:`Command`, as ``verikit <benchmark> NAME``)
and its documentation page. Every hook has a default here, so the kit calls every hook
of every benchmark and never asks a module for an optional attribute.

The kit finds plugins by entry point (:func:`entry_points`, ``importlib.metadata``), so a
benchmark can live in its own distribution. The groups:

- ``verikit.benchmarks``: name -> ``module:OBJECT``, a :class:`Benchmark` instance;
- ``verikit.verifiers``: name -> ``module:Class``, a :class:`harness.model.Verifier` subclass;
- ``verikit.sandboxes``: name -> ``module:Class``, a :class:`harness.sandbox.Sandbox` subclass
  (``--sandbox NAME``);
- ``verikit.toolchains``: any name -> ``module:OBJECT``, a dict of toolchain pins in the
  format of ``images/toolchains.json``'s ``toolchains`` (added to it; a name may not be
  pinned twice);
- ``verikit.datasets``: any name -> ``module:OBJECT``, a directory (``pathlib.Path``) of
  dataset registry entries (YAML, the format of ``harness/datasets/registry/``).

The kit's own five benchmarks, eight verifiers and four sandboxes are registered the same way, in its
``pyproject.toml``; when the kit runs from a checkout that is not installed (on
``PYTHONPATH``), the same declarations are read from that file. This module imports only
:mod:`harness.model`, :mod:`harness.resources` and :mod:`harness.blocks` (the report
blocks, re-exported here) (layer 0).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import sys
import tomllib
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from . import resources
from .blocks import Bars, Block, Scatter, Table, Text, VerdictBars  # noqa: F401 (the interface's blocks)
from .model import Candidate, Job, VerifierResult, Record

#: The entry-point groups of the kit (see the module doc).
GROUPS = ("verikit.benchmarks", "verikit.verifiers", "verikit.sandboxes", "verikit.toolchains", "verikit.datasets")

#: The sections schema of a benchmark that writes none: report.json's ``sections`` (and the
#: reproduction's) must be an empty object (:meth:`Benchmark.sections_schema`'s default).
NO_SECTIONS = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
               "additionalProperties": False, "description": "no sections: an empty object only"}
#: The file name of a benchmark's sections schema, beside the module that defines its class.
SECTIONS_SCHEMA = "sections.schema.json"


class PluginError(ValueError):
    """Two plugins register the same name differently, or an entry point cannot be
    loaded (the message names the entry point and its distribution)."""


def _declared_here(group: str) -> dict[str, str]:
    """``[project.entry-points."<group>"]`` of the kit's own pyproject.toml, when the
    package runs from a checkout (:func:`harness.resources.checkout`); {} otherwise."""
    root = resources.checkout()
    if root is None:
        return {}
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return dict((project.get("entry-points") or {}).get(group) or {})


def entry_points(group: str) -> dict[str, str]:
    """The entry points of ``group``: name -> ``"module:attribute"``, from every installed
    distribution (``importlib.metadata``) and from the kit's own pyproject.toml when it
    runs from a source tree; sorted by name.

    Raises:
        PluginError: a name registered twice with different targets (names both).
    """
    found = _declared_here(group)
    origin = {name: f"{resources.checkout()}/pyproject.toml" for name in found}
    for ep in importlib.metadata.entry_points(group=group):
        where = ep.dist.name if ep.dist is not None else "?"
        if ep.name in found and found[ep.name] != ep.value:
            raise PluginError(f"entry point {group}:{ep.name} is registered twice: {found[ep.name]} "
                              f"({origin[ep.name]}) and {ep.value} ({where})")
        found[ep.name], origin[ep.name] = ep.value, where
    return dict(sorted(found.items()))


def plugin_distributions() -> list[importlib.metadata.Distribution]:
    """The installed distributions, other than the kit, that register entry points in a
    group of :data:`GROUPS` (what a runner image and an artifact bundle must carry beside
    the kit), sorted by name."""
    found = {}
    for group in GROUPS:
        for ep in importlib.metadata.entry_points(group=group):
            if ep.dist is not None and ep.dist.name.lower() != "verikit":
                found[ep.dist.name] = ep.dist
    return [found[k] for k in sorted(found)]


def load(value: str) -> Any:
    """The object an entry point names (``"package.module:attr"``).

    Raises:
        PluginError: the module cannot be imported or has no such attribute.
    """
    module, _, attr = value.partition(":")
    try:
        obj = importlib.import_module(module)
        for part in attr.split(".") if attr else ():
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise PluginError(f"cannot load plugin {value!r}: {exc}") from exc
    return obj


# ---- what a benchmark supplies besides its tasks and judge


@dataclass(frozen=True)
class Paper:
    """The paper a benchmark comes from (CITATION.cff, the Hub card, the report).

    Attributes:
        title, authors: as printed on its first page; reference: one line as cited
            (venue or arXiv id); arxiv: the arXiv id, or None; url: or None.
    """

    title: str
    authors: tuple[str, ...]
    reference: str
    arxiv: str | None = None
    url: str | None = None


@dataclass(frozen=True)
class Claim:
    """One paper claim the artifact-evaluation bundle checks.

    Attributes:
        id: short name (``casp-gold``); benchmark: registry name.
        statement: the claim, with its source in the paper.
        args: ``verikit`` arguments without ``--out`` (``@JOBS@``: the script's job count).
        expected: the reference run directory, relative to ``results/reproduced/``.
        toolchain: the toolchain (or derived) image of the runner image that runs it;
            None: any runner image of the bundle (a rescoring needs no verifier).
        smoke: part of the Getting Started run; subset: runs part of ``expected``'s jobs
            (compared with ``verikit compare --subset``); tasks: the task ids of a subset.
    """

    id: str
    benchmark: str
    statement: str
    args: tuple[str, ...]
    expected: str
    toolchain: str | None
    smoke: bool
    subset: bool = False
    tasks: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class CommandContext:
    """What the CLI hands a benchmark's command: ``log`` (one line to the user),
    ``sandbox(name)`` (a new sandbox of the registry, e.g. ``"host"``: a benchmark never
    makes one itself) and ``data_dir`` (the data cache, or None for the default)."""

    log: Callable[[str], None]
    sandbox: Callable[[str], Any]
    data_dir: Path | None = None


@dataclass(frozen=True)
class Command:
    """An extra subcommand of a benchmark: ``verikit <benchmark> <name> ...``.

    Attributes:
        name: the subcommand; help: one line for ``--help``.
        arguments: adds the command's arguments to its ``argparse`` parser.
        run: ``run(args, ctx) -> exit code`` (:class:`CommandContext`); 2 for bad input
            with a message that names the file and line, printed by ``run`` itself.
    """

    name: str
    help: str
    arguments: Callable[[Any], None]
    run: Callable[[Any, CommandContext], int]


# ---- generation: the paper's prompts and protocol, as data (``verikit generate``)


@dataclass(frozen=True)
class PromptTemplate:
    """One prompt template of a paper, as data (``verikit prompts``, ``verikit generate``).

    Attributes:
        id: stable name, unique within the benchmark (``casp-repair``); a template whose
            text changes gets a new id.
        source: where the text comes from: paper, section/appendix/figure/listing (e.g.
            ``"CASP paper, appendix 'Gemini Prompt', Listing 1"``), or ``"verikit"`` for a
            template the kit wrote where the paper gives none (say so in ``note``).
        text: the template; placeholders in ``str.format`` form (``{code}``).
        role: the chat role it is sent as (``system``, ``user``).
        note: how the kit's text differs from the paper's (adaptation), or "".
    """

    id: str
    source: str
    text: str
    role: str = "user"
    note: str = ""

    @property
    def sha256(self) -> str:
        """sha256 (hex) of ``text`` encoded as UTF-8 (recorded in generation.json)."""
        import hashlib

        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    def to_json(self) -> dict:
        """``{"id", "source", "role", "sha256", "note"}`` (generation.json's ``templates``)."""
        return {"id": self.id, "source": self.source, "role": self.role, "sha256": self.sha256, "note": self.note}


@dataclass(frozen=True)
class Protocol:
    """How a paper generated candidates for one mode: its templates, its answer-extraction
    rule and its decoding settings (the defaults of ``verikit generate``; every value the
    user overrides is recorded as given).

    Attributes:
        templates: every template the protocol sends (first turn, system, feedback).
        extraction: id of the rule that takes the candidate out of a completion (e.g.
            ``last-fenced-block``); extraction_doc: the rule in one sentence.
        samples: samples per task in the paper (NTP4VC: 8); temperature, top_p,
            max_tokens: the paper's decoding settings (None: the paper gives none, the
            server's default is used and recorded as None).
        feedback_turns: the paper's number of verifier-feedback turns (0: none).
        source: where the decoding settings and turn count come from (paper section).
    """

    templates: tuple[PromptTemplate, ...]
    extraction: str
    extraction_doc: str
    samples: int = 1
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    feedback_turns: int = 0
    source: str = ""


# ---- report blocks (harness/blocks.py), part of this interface: re-exported here



@dataclass
class Reproduction:
    """A benchmark's published-vs-reproduced comparison (``verikit reproduce``).

    Attributes:
        figures: ``[{"table", "row", "column", "published", "reproduced", "status",
            "notes"?, "criterion"?}]``; ``status`` is ``reproduced``, ``differs`` or
            ``not_reproducible``.
        notes: free-text notes (data quirks, deviations), each one line.
        sections: extra JSON-able report sections (e.g. OSVBench's finer error causes),
            merged into report.json's ``sections``; each must be a property of the
            benchmark's :meth:`Benchmark.sections_schema`.
        files: extra files to write into the run directory (name -> text), e.g.
            OSVBench's upstream-format log.
    """

    figures: list[dict]
    notes: list[str] = field(default_factory=list)
    sections: dict = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)

    def summary(self) -> dict:
        """Counts of figures by status: ``{"reproduced", "differs", "not_reproducible"}``."""
        out = {"reproduced": 0, "differs": 0, "not_reproducible": 0}
        for f in self.figures:
            out[f["status"]] += 1
        return out

    def to_json(self) -> dict:
        """``{"figures", "notes", "summary", "sections"}`` for report.json."""
        return {"figures": self.figures, "notes": self.notes, "summary": self.summary(),
                "sections": self.sections}


class Benchmark(ABC):
    """One benchmark: a dataset, its tasks, how a candidate becomes a job, how the tool's
    reading becomes a verdict, and its metrics. A benchmark never starts a process and
    never calls the runner: the runner calls it.

    Class attributes (set by every subclass):
        name: registry name (``casp``); version: bumped when judging changes (part of
        every job key); modes: the modes ``--mode`` accepts (CASP task direction,
        Model-Bench prompt setting; NTP4VC's proof language, given as ``--lang``);
        default_modes: what ``verikit run`` runs without ``--mode``; datasets: registry
        names the benchmark reads; default_dataset; container_only: no toolchain on hosts;
        seeded: the run's ``--seed`` also seeds the benchmark's own randomness (recorded);
        mode_option: the CLI option name of the mode (``mode``, or ``lang`` for NTP4VC);
        k_metric: what the benchmark calls pass@k in its report (e.g. ``Runnable@k``).
    """

    name: str = ""
    version: str = "1"
    modes: tuple[str, ...] = ()
    default_modes: tuple[str, ...] = ()
    datasets: tuple[str, ...] = ()
    default_dataset: str = ""
    container_only: bool = False
    seeded: bool = False
    mode_option: str = "mode"
    k_metric: str = "pass@k"

    # ---- tasks and candidates

    @abstractmethod
    def load_tasks(self, fetched) -> list:
        """All tasks of a fetched dataset (a registry entry or the user's own directory).

        Raises:
            ValueError: a task file cannot be read (the message names file:line).
        """

    @abstractmethod
    def verifier_for(self, mode: str) -> str:
        """Registry name of the verifier that checks candidates of ``mode``."""

    @abstractmethod
    def gold_candidates(self, tasks: list, mode: str) -> list[Candidate]:
        """The dataset's own solution of each task as a candidate of model ``gold``."""

    def bundled_candidates(self, fetched, mode: str) -> list[Candidate]:
        """Model outputs shipped with the dataset (scored without ``--predictions``)."""
        return []

    def canaries(self, tasks: list, mode: str) -> list[tuple[Candidate, tuple[str, ...]]]:
        """Known-good and known-cheat candidates with their expected verdicts; they run
        on their own fixed tasks whatever ``--task`` selects (``tasks`` is the whole
        dataset). A run whose canaries get another verdict is invalid."""
        return []

    def sample(self, tasks: list, mode: str, n: int, seed: int) -> list[str]:
        """Ids of ``n`` tasks drawn with ``seed`` (``verikit run --sample N --seed S``), in
        dataset order: ``random.Random(seed).sample`` of the id-sorted tasks, unless the
        benchmark draws its own way (e.g. NTP4VC's why3 mode stratifies by the published
        result).

        Raises:
            ValueError: ``n`` is larger than the number of tasks.
        """
        import random

        ids = sorted(t.task_id for t in tasks)
        if not 0 < n <= len(ids):
            raise ValueError(f"cannot draw {n} of {len(ids)} tasks")
        chosen = set(random.Random(seed).sample(ids, n))
        return [t.task_id for t in tasks if t.task_id in chosen]

    def canary_tasks(self, tasks: list) -> list:
        """Tasks the canaries run on that are not in the dataset (the kit's own canary
        tasks, for a dataset that lacks the usual one); ``tasks`` is the whole dataset."""
        return []

    # ---- jobs

    def smoke_tests(self, mode: str) -> bool:
        """Whether the verifier runs its vacuity smoke tests for ``mode``."""
        return False

    def context(self, fetched, tasks: list, mode: str, verifier, seed: int) -> Any:
        """Per-run state ``build_job`` needs (e.g. a library index, the mutation seed);
        None by default."""
        return None

    @abstractmethod
    def build_job(self, task, cand: Candidate, mode: str, options: dict, dataset: dict, ctx: Any) -> Job:
        """Turn (task, candidate) into a :class:`Job` with its integrity checks.

        Raises:
            ValueError: the task's own files cannot be read (names file:line).
        """

    @abstractmethod
    def judge(self, job: Job, result: VerifierResult) -> tuple[str, str]:
        """Final ``(verdict, reason)`` from the verifier's reading and the job's checks.

        A judge that checks the tool's output (e.g. Frama-C's view of the file in
        ``result.artifacts``) appends those checks to ``result.checks`` and its findings
        to ``result.extra``; both are recorded with the verdict (the job itself, whose
        key is its identity, is never changed)."""

    # ---- images

    def derived_images(self) -> dict[str, str]:
        """Derived images of the benchmark: image name -> the mode whose jobs run in it
        (in the container sandbox, instead of the verifier's toolchain image). The kit
        builds them (``verikit images build NAME``, and on a run's first use); a benchmark
        never makes an image or opens the engine itself."""
        return {}

    def derived_image_spec(self, mode: str, fetched, fingerprint: Callable[[str], str]) -> dict:
        """The build spec of the derived image of ``mode`` (the format of
        :func:`harness.sandbox.images.build_derived`); ``fingerprint(toolchain)`` gives a
        toolchain image's fingerprint, for a spec whose fingerprint covers its base.

        Raises:
            ValueError: the benchmark has no derived image for ``mode``.
        """
        raise ValueError(f"{self.name} has no derived image for {mode!r}")

    def adaptation(self, mode: str) -> dict | None:
        """How the benchmark's files were adapted to the toolchain (recorded in run.json)."""
        return None

    # ---- results

    def compare(self, records: list[Record], tasks: dict, fetched) -> list[dict]:
        """Per-record comparison with published per-item results, if the dataset has them."""
        return []

    def notes(self, records: list[Record], modes: list[str]) -> list[str]:
        """Notes for report.json (one line each)."""
        return []

    def report_sections(self, records: list[Record], tasks: list, modes: list[str], *, seed: int = 0) -> dict:
        """Benchmark-specific sections of report.json (pass@k tables, similarity...), as
        :meth:`sections_schema` describes them (checked before report.json is written)."""
        return {}

    def sections_schema(self) -> dict:
        """The JSON Schema (draft 2020-12) of the benchmark's ``sections`` of report.json:
        what :meth:`report_sections` writes and what :meth:`reproduce`'s
        :attr:`Reproduction.sections` adds to them. The kit checks a report's ``sections``
        against it wherever it checks report.json (before writing it, ``verikit validate``,
        a download), and the reproduction's ``sections`` against its ``properties`` one by
        one (a reproduction writes some of the sections). Its top level should say
        ``"additionalProperties": false``, so that a section it does not describe is an error.

        By default: ``sections.schema.json`` (:data:`SECTIONS_SCHEMA`) beside the module
        that defines the benchmark's class, when it exists, else :data:`NO_SECTIONS` (an
        empty object only).

        Raises:
            OSError, ValueError: the file cannot be read or is not JSON.
        """
        path = Path(sys.modules[type(self).__module__].__file__).parent / SECTIONS_SCHEMA
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else dict(NO_SECTIONS)

    def run_files(self, records: list[Record], tasks: list) -> dict[str, str]:
        """Extra files written into the run directory (name -> text), e.g. OSVBench's log
        in the upstream format that upstream's own ``stats.py`` reads."""
        return {}

    # ---- prompts and formats

    def prompts(self, fetched, tasks: list, mode: str, *, shots: int | None = None) -> list[dict]:
        """The prompts a model is given, one ``{"task_id", "mode", "prompt"}`` per task
        (``verikit prompts``). ``shots``: number of few-shot examples where the
        benchmark has that setting.

        Raises:
            NotImplementedError: the benchmark defines no prompts.
            ValueError: a setting the benchmark does not have (e.g. an unknown shot count).
        """
        raise NotImplementedError(f"{self.name} defines no prompts")

    def protocol(self, mode: str) -> Protocol | None:
        """The paper's generation protocol for ``mode`` (templates, extraction rule,
        decoding settings), or None: the benchmark cannot be generated for
        (``verikit generate`` says so, exit 2)."""
        return None

    def messages(self, fetched, task, mode: str) -> list[dict]:
        """The first turn of the chat for ``task``: ``[{"role", "content"}]`` made from the
        protocol's templates (what ``verikit prompts`` prints and ``generate`` sends).

        Raises:
            NotImplementedError: the benchmark has no protocol.
        """
        raise NotImplementedError(f"{self.name} defines no generation protocol")

    def extract(self, completion: str, mode: str) -> str | None:
        """The candidate in a model's completion by the protocol's extraction rule, or None
        when it holds none (the candidate is then written with an empty ``output`` and
        ``meta.extracted`` false, and the verifier judges it ``invalid``; it is never
        dropped)."""
        return completion

    def feedback(self, record: Record, mode: str, *, previous: str | None = None) -> str | None:
        """The next user message of a verifier-in-the-loop chat, from the judged ``record`` of
        the last attempt and ``previous``, the model's raw completion of it (or None), with the
        protocol's feedback template (CASP: failing goals; Model-Bench: TLC's error; NTP4VC:
        the prover's error); None: nothing to send (verified, infra_error, or no feedback)."""
        return None

    def convert(self, path, fetched, tasks: list, *, model: str | None = None) -> list[dict]:
        """Predictions lines (``schemas/predictions.schema.json``) from an upstream output
        file of this benchmark (``verikit convert``).

        Raises:
            NotImplementedError: the benchmark has no upstream output format.
            ValueError: the file is malformed (names the file and line).
        """
        raise NotImplementedError(f"{self.name} has no upstream output format to convert")

    # ---- reproduction

    def reproduce_modes(self) -> tuple[str, ...]:
        """Modes ``verikit reproduce`` runs through the runner before comparing (empty:
        the reproduction only rescores published files)."""
        return ()

    def reproduce(self, fetched, run: dict | None) -> Reproduction:
        """Published vs reproduced figures. ``run``: None for a rescoring-only
        reproduction, else ``{"report", "records", "tasks"}`` of the run of
        :meth:`reproduce_modes`."""
        raise NotImplementedError(f"{self.name} has no published figures to reproduce")

    # ---- what the kit shows and ships of the benchmark

    def paper(self) -> Paper | None:
        """The paper the benchmark comes from, or None."""
        return None

    def published(self) -> dict | None:
        """The paper's figures as data (``{"source": {"paper", ...}, "figures": [...]}``,
        the format of ``results/published/``), or None."""
        return None

    def published_model_figures(self, mode: str, model: str | None = None) -> list[dict]:
        """The paper's figures of one model's generated candidates in ``mode`` (``model``: the
        paper's name for it; None: every model's), which ``reproduce --generate`` compares
        a re-run with by a bootstrap CI (:mod:`harness.runner.generated`). Each: ``name``,
        ``table``, ``row``, ``column``, ``model``; ``metric``: ``{"kind": "pass_at_k", "k"}``,
        ``{"kind": "fixes"}`` or a kind of :meth:`model_metric_values`; ``value`` as printed
        in ``unit`` (``percent``: 0-100) with ``decimals`` (default 2); optional ``samples``
        (per task, the paper's), ``dataset``, ``notes``. Empty: the paper gives none."""
        return []

    def model_metric_values(self, metric: dict, records: list[Record], mode: str,
                            model: str) -> dict[str, tuple[float, float]]:
        """``{task_id: (numerator, denominator)}`` of a metric of the benchmark's own (e.g.
        Model-Bench's similarity) over ``model``'s records in ``mode`` (``records`` holds the
        gold too); the statistic is sum(num) / sum(den), 0..1 for a percent figure.

        Raises:
            ValueError: a metric kind the benchmark does not have (default: every kind).
        """
        raise ValueError(f"{self.name} has no metric {metric.get('kind')!r}")

    def report_blocks(self, report: dict, records: list[Record]) -> list[Block]:
        """The benchmark's own blocks of the HTML report, from its report.json (``report``)
        and records (canaries included: a block leaves them out itself)."""
        return []

    def artifact_claims(self, references: Path) -> list[Claim]:
        """The claims the artifact-evaluation bundle checks; ``references`` is the
        directory of the committed reference runs (``results/reproduced/``), where each
        claim's ``expected`` run lives. Empty: the benchmark cannot be bundled."""
        return []

    def commands(self) -> list[Command]:
        """Extra subcommands, ``verikit <benchmark> <name>`` (e.g. a table's filters)."""
        return []

    def container_images(self) -> tuple[str, ...]:
        """The images (toolchain or derived image names) a container run of the
        benchmark's default modes and its reproduction need (``verikit images build``)."""
        return tuple(self.derived_images())

    def docs_page(self) -> Path | None:
        """The benchmark's documentation page (Markdown): by default ``docs.md`` beside
        the module that defines the benchmark's class, when it exists."""
        page = Path(sys.modules[type(self).__module__].__file__).parent / "docs.md"
        return page if page.is_file() else None
