"""The options of a run: :class:`RunOptions`, the run's :class:`~harness.runspec.RunSpec`
(what it verifies and how) plus where it writes; and :class:`RunError`."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from ..model import Limits
from ..runspec import RunSpec

#: Set in runner images (``verikit images build NAME --runner``): the kit runs inside the
#: toolchain's image, so the host sandbox there is the container (``harness.batch``).
RUNNER_ENV = "VERIKIT_RUNNER"

#: The fields of :class:`RunOptions` that are not part of the spec: where a run writes
#: and how it shows progress (:meth:`RunOptions.of`'s settings).
SETTINGS = ("out", "cache_dir", "use_cache", "data_dir", "progress", "command")


class RunError(RuntimeError):
    """The run cannot start (bad arguments, missing data, bad predictions, no image)."""


@dataclass(frozen=True)
class RunOptions:
    """Arguments of :func:`harness.runner.run` (the CLI's ``verikit run``): the run's spec
    (:attr:`spec`) and its settings. Frozen: make a changed copy with :meth:`replace`.

    Attributes:
        benchmark: benchmark name; dataset: a registry name or a path to the user's own
            dataset (directory or YAML description); None: the benchmark's default.
        modes: modes to run (NTP4VC: proof languages; empty: the benchmark's default);
            predictions: JSONL file (one mode only) or None; predictions_sha256: its
            sha256 when known (a spec read back from run.json).
        sandbox: sandbox name; parallel: jobs at once; limits: per-job limits.
        out: output directory; cache_dir: result cache (None: default); use_cache.
        data_dir: data cache; keep_going: record good prediction lines despite bad ones.
        seed: seed for bootstrap CIs and for a benchmark's own randomness (Dafny intent's
            mutants; recorded); command: argv recorded in run.json (provenance only:
            nothing parses it again).
        task_ids: run only these tasks (None: all); unknown ids are an error. Canaries run
            on their own fixed tasks whatever this selects.
        sample: run ``sample`` tasks drawn with ``seed`` by the benchmark
            (:meth:`harness.plugin.Benchmark.sample`) instead; recorded in run.json.

    Lists given for ``modes``, ``task_ids`` and ``command`` are stored as tuples.
    """

    benchmark: str = ""
    dataset: str | None = None
    modes: tuple[str, ...] = ()
    predictions: str | None = None
    sandbox: str = "host"
    parallel: int = 1
    limits: Limits = field(default_factory=Limits)
    out: Path = Path("out")
    cache_dir: Path | None = None
    use_cache: bool = True
    data_dir: Path | None = None
    keep_going: bool = False
    seed: int = 0
    command: tuple[str, ...] = ()
    progress: bool = True
    task_ids: tuple[str, ...] | None = None
    sample: int | None = None
    predictions_sha256: str | None = None

    def __post_init__(self):
        object.__setattr__(self, "modes", tuple(self.modes or ()))
        object.__setattr__(self, "command", tuple(self.command or ()))
        if self.task_ids is not None:
            object.__setattr__(self, "task_ids", tuple(self.task_ids))
        if self.out is not None:
            object.__setattr__(self, "out", Path(self.out))

    @property
    def spec(self) -> RunSpec:
        """What the run verifies and how, as given (the plan resolves the defaults:
        :meth:`harness.runner.Plan.spec`)."""
        return RunSpec(**{f.name: getattr(self, f.name) for f in fields(RunSpec)})

    @classmethod
    def of(cls, spec: RunSpec, **settings) -> "RunOptions":
        """The options of ``spec`` with ``settings`` (out, cache_dir, use_cache, data_dir,
        progress, command).

        Raises:
            TypeError: a setting that is not one of those.
        """
        unknown = sorted(set(settings) - set(SETTINGS))
        if unknown:
            raise TypeError(f"RunOptions.of: unknown setting(s) {unknown} (settings: {', '.join(SETTINGS)})")
        return cls(**{f.name: getattr(spec, f.name) for f in fields(RunSpec)}, **settings)

    def replace(self, **changes) -> "RunOptions":
        """A copy with ``changes`` (the options themselves never change)."""
        return replace(self, **changes)
