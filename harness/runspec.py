"""A run, described completely and serialisably (:class:`RunSpec`), and where it writes
(:class:`RunSettings`).

A RunSpec says what a run verifies and how: the benchmark, the dataset, the modes, the
task selection, the predictions (with their sha256), the sandbox, the per-job limits, the
parallelism and the seed. It is frozen: nothing changes it after it is made (the runner
resolves defaults into its plan, never into the spec). It is what ``run.json`` stores
(``spec``) and what the batch manifest stores, and what ``validate --recheck``, ``rerun``,
the batch worker and ``reproduce`` read back: no command line is parsed twice.

Where a run writes (the result cache, the data cache), how it shows progress and the
command line recorded are not part of the spec: those are the run's settings
(:class:`RunSettings`), given beside it with the run directory:
``harness.runner.run(spec, out, settings=...)``, as ``harness.generate.generate(spec, out,
settings=...)`` takes a :class:`~harness.generate.GenerationSpec` and its
:class:`~harness.generate.GenerationSettings` (a RunSettings with one field more).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path

from .model import Limits

#: Version of the spec's JSON form (``run.json`` ``spec.version``).
RUN_SPEC_VERSION = "1"


class SpecError(ValueError):
    """A spec that cannot be read or has a value out of range: a run's (:class:`RunSpec`)
    or a generation's (:class:`harness.generate.GenerationSpec`), the kit's one spec
    error. The message names the key and what is wrong with it."""


def spec_fields(cls, data, what: str, version: str) -> dict:
    """The fields of the spec class ``cls`` (a dataclass) in ``data``, the JSON form of a
    spec (``what``: ``"run spec"``, ``"generation spec"``), which must be an object of
    version ``version`` with no key that is not a field (``version`` aside); the values
    are not checked here.

    Raises:
        SpecError: not a mapping, another version, or an unknown key (names it).
    """
    if not isinstance(data, dict):
        raise SpecError(f"a {what} is a JSON object")
    if str(data.get("version")) != version:
        raise SpecError(f"{what} version {data.get('version')!r}: this kit reads version {version}")
    names = {f.name for f in fields(cls)}
    unknown = sorted(set(data) - names - {"version"})
    if unknown:
        raise SpecError(f"{what}: unknown key(s) {unknown}")
    return {k: v for k, v in data.items() if k in names}


@dataclass(frozen=True)
class RunSpec:
    """What a run verifies and how (see the module doc).

    Attributes:
        benchmark: registry name; dataset: a pinned dataset's name or a path to the user's own
            dataset (None: the benchmark's default).
        modes: the modes to run (empty: the benchmark's default modes).
        task_ids: only these tasks (None: all); sample: instead, this many tasks drawn with
            ``seed`` by the benchmark.
        predictions: a predictions JSONL file, or None (gold and bundled candidates);
            predictions_sha256: its sha256 when the spec was made (a rerun checks it);
            keep_going: record the good prediction lines despite bad ones.
        sandbox: a sandbox's name (entry point group ``verikit.sandboxes``: the kit's
            ``host``, ``container``, ``apptainer`` and ``charliecloud``, or a plugin's;
            default ``host``, :data:`harness.sandbox.HOST`); parallel: jobs at once;
            limits: per job.
        seed: bootstrap CIs, a benchmark's own randomness, the ``sample`` draw.
    """

    benchmark: str
    dataset: str | None = None
    modes: tuple[str, ...] = ()
    task_ids: tuple[str, ...] | None = None
    sample: int | None = None
    predictions: str | None = None
    predictions_sha256: str | None = None
    keep_going: bool = False
    sandbox: str = "host"
    parallel: int = 1
    limits: Limits = field(default_factory=Limits)
    seed: int = 0

    def __post_init__(self):
        object.__setattr__(self, "modes", tuple(dict.fromkeys(self.modes)))  # a mode given twice runs once
        if self.task_ids is not None:
            object.__setattr__(self, "task_ids", tuple(self.task_ids))

    def replace(self, **changes) -> "RunSpec":
        """A copy with ``changes`` (the spec itself never changes)."""
        return replace(self, **changes)

    def to_json(self) -> dict:
        """The spec as JSON (``run.json`` ``spec``), with ``version``."""
        out = asdict(self)
        out["modes"] = list(self.modes)
        out["task_ids"] = list(self.task_ids) if self.task_ids is not None else None
        out["limits"] = self.limits.to_json()
        return {"version": RUN_SPEC_VERSION, **out}

    @classmethod
    def from_json(cls, data: dict) -> "RunSpec":
        """The spec of :meth:`to_json`'s output.

        Raises:
            SpecError: not a mapping, another version, an unknown or missing key, or a
                value of the wrong type (names the key).
        """
        kw = spec_fields(cls, data, "run spec", RUN_SPEC_VERSION)
        if not isinstance(data.get("benchmark"), str) or not data["benchmark"]:
            raise SpecError("run spec: 'benchmark' must be a non-empty string")
        try:
            kw["modes"] = tuple(kw.get("modes") or ())
            if kw.get("task_ids") is not None:
                kw["task_ids"] = tuple(kw["task_ids"])
            if "limits" in kw:
                kw["limits"] = Limits(**kw["limits"])
            return cls(**kw)
        except (TypeError, ValueError) as exc:
            raise SpecError(f"run spec: {exc}") from None



@dataclass(frozen=True)
class RunSettings:
    """Where a run writes and how it shows progress: what is not part of its spec (a run
    with other settings verifies the same jobs and gets the same verdicts).

    Attributes:
        cache_dir: the kit's result cache (None: ``VERIKIT_CACHE`` or the user cache dir).
        use_cache: read and write the result cache (False: every job runs its tool).
        data_dir: the data cache (None: ``VERIKIT_DATA`` or the user cache dir).
        progress: show a progress bar (terminal) or plain progress lines (a log).
        command: the argv recorded in ``run.json`` (provenance only: nothing parses it
            again); a list is stored as a tuple.
    """

    cache_dir: Path | None = None
    use_cache: bool = True
    data_dir: Path | None = None
    progress: bool = True
    command: tuple[str, ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "command", tuple(self.command or ()))

    def replace(self, **changes) -> "RunSettings":
        """A copy with ``changes`` (the settings themselves never change)."""
        return replace(self, **changes)
