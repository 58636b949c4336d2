"""The plugin interface: what a benchmark supplies, and how the kit finds it.

A benchmark is one package that defines a :class:`Benchmark` composed of parts
(:mod:`harness.parts`: :class:`Data`, its tasks and candidates; :class:`Jobs`, jobs and
judging; :class:`Images`; :class:`Reporting`; :class:`Prompting`; :class:`Reproducing`)
and, optionally, everything else the kit shows or ships of it: its paper
(:class:`Paper`), its published figures, typed report blocks (:class:`Table`,
:class:`Bars`, :class:`VerdictBars`, :class:`Scatter`, :class:`Text`, rendered by a
report that knows no benchmark), its artifact-evaluation claims (:class:`Claim`), its
extra subcommands (:class:`Command`, as ``verikit <benchmark> NAME``) and its
documentation page. Every field of a part has a default, so the kit calls every hook of
every benchmark and never asks a module for an optional attribute.

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
  dataset entries (YAML, the format of ``harness/datasets/pins/``).

The kit's own five benchmarks, eight verifiers and four sandboxes are registered the same way, in its
``pyproject.toml``; when the kit runs from a checkout that is not installed (on
``PYTHONPATH``), the same declarations are read from that file. This module imports only
:mod:`harness.model`, :mod:`harness.resources`, :mod:`harness.blocks` and
:mod:`harness.parts` (the report blocks and the parts, re-exported here) (layer 0).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from . import resources
from .blocks import Bars, Block, Scatter, Table, Text, VerdictBars  # noqa: F401 (the interface's blocks)
from .model import Candidate, Job, VerifierResult, Record
from .parts import Data, Images, Jobs, Prompting, Reporting, Reproducing, sample_tasks  # noqa: F401 (the parts)

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
    ``sandbox(name=None)`` (a new sandbox by its registry name; None: the kit's default
    for commands, the host sandbox: a benchmark never makes or names one itself) and
    ``data_dir`` (the data cache, or None for the default)."""

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


class Benchmark:
    """One benchmark: a dataset, its tasks, how a candidate becomes a job, how the tool's
    reading becomes a verdict, and its metrics. A benchmark never starts a process and
    never calls the runner: the runner calls it.

    A benchmark is a subclass that states what it is and the parts it is composed of
    (:mod:`harness.parts`), as class attributes; each method here answers from the field of
    its name of a part, so a subclass defines no method::

        class Loops(Benchmark):
            name, modes, datasets, default_dataset = "loops", ("invariant",), ("loops",), "loops"
            data = Data(load_tasks=tasks.load_tasks, gold_candidates=tasks.gold_candidates)
            jobs = Jobs(verifier_for=jobs.verifier_for, build_job=jobs.build_job, judge=jobs.judge)
            reporting = Reporting(notes=report.notes, report_blocks=report.blocks)

    Class attributes:
        name: registry name (``casp``); version: bumped when judging changes (part of
        every job key); modes: the modes ``--mode`` accepts (CASP task direction,
        Model-Bench prompt setting; NTP4VC's proof language, given as ``--lang``);
        default_modes: what ``verikit run`` runs without ``--mode``; datasets: the names
        of the pinned datasets the benchmark reads; default_dataset; container_only: no
        toolchain on hosts; seeded: the run's ``--seed`` also seeds the benchmark's own
        randomness (recorded);
        mode_option: the CLI option name of the mode (``mode``, or ``lang`` for NTP4VC);
        k_metric: what the benchmark calls pass@k in its report (e.g. ``Runnable@k``).

    Parts (class attributes):
        data (:class:`Data`) and jobs (:class:`Jobs`): required; images (:class:`Images`),
        reporting (:class:`Reporting`), prompting (:class:`Prompting`) and reproducing
        (:class:`Reproducing`): by default the part with all its defaults.

    Raises:
        TypeError: (when one is made) its class states no ``data`` or no ``jobs``.
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

    data: Data
    jobs: Jobs
    images: Images = Images()
    reporting: Reporting = Reporting()
    prompting: Prompting = Prompting()
    reproducing: Reproducing = Reproducing()

    def __init__(self) -> None:
        missing = [part for part in ("data", "jobs") if part not in dir(self)]
        if missing:
            raise TypeError(f"{type(self).__name__} states no part {' and no part '.join(missing)}")

    # ---- tasks and candidates (:class:`Data`)

    def load_tasks(self, fetched) -> list:
        """All tasks of a fetched dataset (:attr:`Data.load_tasks`)."""
        return self.data.load_tasks(fetched)

    def gold_candidates(self, tasks: list, mode: str) -> list[Candidate]:
        """The dataset's own solutions, model ``gold`` (:attr:`Data.gold_candidates`)."""
        return self.data.gold_candidates(tasks, mode)

    def bundled_candidates(self, fetched, mode: str) -> list[Candidate]:
        """Model outputs shipped with the dataset (:attr:`Data.bundled_candidates`)."""
        return self.data.bundled_candidates(fetched, mode)

    def canaries(self, tasks: list, mode: str) -> list[tuple[Candidate, tuple[str, ...]]]:
        """Candidates with their expected verdicts (:attr:`Data.canaries`)."""
        return self.data.canaries(tasks, mode)

    def canary_tasks(self, tasks: list) -> list:
        """The canaries' tasks that are not in the dataset (:attr:`Data.canary_tasks`)."""
        return self.data.canary_tasks(tasks)

    def sample(self, tasks: list, mode: str, n: int, seed: int) -> list[str]:
        """Ids of ``n`` tasks drawn with ``seed`` (:attr:`Data.sample`). Raises ValueError."""
        return self.data.sample(tasks, mode, n, seed)

    def convert(self, path, fetched, tasks: list, *, model: str | None = None) -> list[dict]:
        """Predictions lines from an upstream output file (:attr:`Data.convert`).

        Raises:
            NotImplementedError: the benchmark has no upstream output format.
            ValueError: the file is malformed (names the file and line).
        """
        if self.data.convert is None:
            raise NotImplementedError(f"{self.name} has no upstream output format to convert")
        return self.data.convert(path, fetched, tasks, model=model)

    # ---- jobs (:class:`Jobs`)

    def verifier_for(self, mode: str) -> str:
        """Registry name of the verifier of ``mode`` (:attr:`Jobs.verifier_for`)."""
        return self.jobs.verifier_for(mode)

    def smoke_tests(self, mode: str) -> bool:
        """Whether the verifier runs its vacuity smoke tests (:attr:`Jobs.smoke_tests`)."""
        return self.jobs.smoke_tests(mode)

    def context(self, fetched, tasks: list, mode: str, verifier, seed: int) -> Any:
        """Per-run state ``build_job`` needs (:attr:`Jobs.context`)."""
        return self.jobs.context(fetched, tasks, mode, verifier, seed)

    def build_job(self, task, cand: Candidate, mode: str, options: dict, dataset: dict, ctx: Any) -> Job:
        """The job of ``cand`` on ``task`` (:attr:`Jobs.build_job`). Raises ValueError."""
        return self.jobs.build_job(task, cand, mode, options, dataset, ctx)

    def judge(self, job: Job, result: VerifierResult) -> tuple[str, str]:
        """Final ``(verdict, reason)`` of a job (:attr:`Jobs.judge`)."""
        return self.jobs.judge(job, result)

    # ---- images (:class:`Images`)

    def derived_images(self) -> dict[str, str]:
        """Derived image name -> the mode whose jobs run in it (:attr:`Images.derived_images`)."""
        return dict(self.images.derived_images)

    def derived_image_spec(self, mode: str, fetched, fingerprint: Callable[[str], str]) -> dict:
        """The build spec of the derived image of ``mode`` (:attr:`Images.derived_image_spec`).

        Raises:
            ValueError: the benchmark has no derived image for ``mode``.
        """
        if self.images.derived_image_spec is None or mode not in self.images.derived_images.values():
            raise ValueError(f"{self.name} has no derived image for {mode!r}")
        return self.images.derived_image_spec(mode, fetched, fingerprint)

    def container_images(self) -> tuple[str, ...]:
        """The images a container run needs (:attr:`Images.container_images`; by default
        the derived images)."""
        images = self.images.container_images
        return tuple(self.images.derived_images if images is None else images)

    def adaptation(self, mode: str) -> dict | None:
        """How the files of ``mode`` were adapted to the toolchain, or None
        (:attr:`Images.adaptation`)."""
        return self.images.adaptation.get(mode)

    # ---- results (:class:`Reporting`)

    def compare(self, records: list[Record], tasks: dict, fetched) -> list[dict]:
        """Each record against the published per-item results (:attr:`Reporting.compare`)."""
        return self.reporting.compare(records, tasks, fetched)

    def notes(self, records: list[Record], modes: list[str]) -> list[str]:
        """Notes for report.json (:attr:`Reporting.notes`)."""
        return self.reporting.notes(records, modes)

    def report_sections(self, records: list[Record], tasks: list, modes: list[str], *, seed: int = 0) -> dict:
        """The benchmark's sections of report.json (:attr:`Reporting.report_sections`), as
        :meth:`sections_schema` describes them."""
        return self.reporting.report_sections(records, tasks, modes, seed=seed)

    def run_files(self, records: list[Record], tasks: list) -> dict[str, str]:
        """Extra files of the run directory (:attr:`Reporting.run_files`)."""
        return self.reporting.run_files(records, tasks)

    def report_blocks(self, report: dict, records: list[Record]) -> list[Block]:
        """The benchmark's blocks of the HTML report (:attr:`Reporting.report_blocks`)."""
        return self.reporting.report_blocks(report, records)

    def commands(self) -> list[Command]:
        """Extra subcommands, ``verikit <benchmark> <name>`` (:attr:`Reporting.commands`)."""
        return list(self.reporting.commands)

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

    def docs_page(self) -> Path | None:
        """The benchmark's documentation page (Markdown): by default ``docs.md`` beside
        the module that defines the benchmark's class, when it exists."""
        page = Path(sys.modules[type(self).__module__].__file__).parent / "docs.md"
        return page if page.is_file() else None

    # ---- prompts and generation (:class:`Prompting`)

    def prompts(self, fetched, tasks: list, mode: str, *, shots: int | None = None) -> list[dict]:
        """The prompts a model is given, one per task (:attr:`Prompting.prompts`).

        Raises:
            NotImplementedError: the benchmark defines no prompts.
            ValueError: a setting the benchmark does not have (e.g. an unknown shot count).
        """
        if self.prompting.prompts is None:
            raise NotImplementedError(f"{self.name} defines no prompts")
        return self.prompting.prompts(fetched, tasks, mode, shots=shots)

    def protocol(self, mode: str) -> Protocol | None:
        """The paper's generation protocol for ``mode``, or None: it cannot be generated for
        (``verikit generate`` says so, exit 2) (:attr:`Prompting.protocol`)."""
        return self.prompting.protocol(mode)

    def messages(self, fetched, task, mode: str) -> list[dict]:
        """The first turn of the chat for ``task`` (:attr:`Prompting.messages`).

        Raises:
            NotImplementedError: the benchmark has no protocol.
        """
        if self.prompting.messages is None:
            raise NotImplementedError(f"{self.name} defines no generation protocol")
        return self.prompting.messages(fetched, task, mode)

    def extract(self, completion: str, mode: str) -> str | None:
        """The candidate in a completion, or None (:attr:`Prompting.extract`)."""
        return self.prompting.extract(completion, mode)

    def feedback(self, record: Record, mode: str, *, previous: str | None = None) -> str | None:
        """The next user message of a verifier-in-the-loop chat, or None
        (:attr:`Prompting.feedback`)."""
        return self.prompting.feedback(record, mode, previous=previous)

    # ---- the paper and its reproduction (:class:`Reproducing`)

    def reproduce_modes(self) -> tuple[str, ...]:
        """Modes ``verikit reproduce`` runs before comparing (:attr:`Reproducing.reproduce_modes`)."""
        return tuple(self.reproducing.reproduce_modes)

    def reproduce(self, fetched, run: dict | None) -> Reproduction:
        """Published vs reproduced figures (:attr:`Reproducing.reproduce`).

        Raises:
            NotImplementedError: the benchmark has no published figures to reproduce.
        """
        if self.reproducing.reproduce is None:
            raise NotImplementedError(f"{self.name} has no published figures to reproduce")
        return self.reproducing.reproduce(fetched, run)

    def paper(self) -> Paper | None:
        """The paper the benchmark comes from, or None (:attr:`Reproducing.paper`)."""
        return self.reproducing.paper()

    def published(self) -> dict | None:
        """The paper's figures as data, or None (:attr:`Reproducing.published`)."""
        return self.reproducing.published()

    def published_model_figures(self, mode: str, model: str | None = None) -> list[dict]:
        """The paper's figures of one model's generated candidates in ``mode``
        (:attr:`Reproducing.published_model_figures`)."""
        return self.reproducing.published_model_figures(mode, model)

    def model_metric_values(self, metric: dict, records: list[Record], mode: str,
                            model: str) -> dict[str, tuple[float, float]]:
        """``{task_id: (numerator, denominator)}`` of a metric of the benchmark's own
        (:attr:`Reproducing.model_metric_values`).

        Raises:
            ValueError: a metric kind the benchmark does not have.
        """
        if self.reproducing.model_metric_values is None:
            raise ValueError(f"{self.name} has no metric {metric.get('kind')!r}")
        return self.reproducing.model_metric_values(metric, records, mode, model)

    def artifact_claims(self, references: Path) -> list[Claim]:
        """The claims the artifact-evaluation bundle checks (:attr:`Reproducing.artifact_claims`)."""
        return self.reproducing.artifact_claims(references)
