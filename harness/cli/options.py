"""The options of a run: the arguments ``run``, ``reproduce`` and ``batch plan`` share, and
the run's :class:`~harness.runspec.RunSpec` and :class:`~harness.runspec.RunSettings` made
from them (from a command line, or from the ``spec`` of a run's run.json)."""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from .. import registry
from ..model import Limits
from ..predictions import scored_file, scored_files
from ..runner import RunError
from ..runspec import RunSettings, RunSpec, SpecError
from ..sandbox import SandboxError, default_sandbox
from .common import MIN_MEMORY_MIB, int_at_least, positive_seconds


def add_run_options(p: argparse.ArgumentParser, *, jobs: bool = True) -> None:
    """Options shared by ``run`` and ``reproduce``."""
    p.add_argument("--dataset", help="a pinned dataset's name, or a path to your own dataset (a directory in one "
                   "of the benchmark's formats, or a YAML file describing it); default: the benchmark's default")
    p.add_argument("--sandbox", choices=list(registry.SANDBOXES),
                   help="where jobs run (default: container when a Docker-API engine answers at DOCKER_HOST "
                        "or the default socket; otherwise the run stops and says how to start one)")
    p.add_argument("-j", "--jobs", type=int_at_least(1), default=1, help="jobs run in parallel (at least 1; default 1)")
    p.add_argument("--out", type=Path, default=Path("out"), help="run directory (default ./out)")
    p.add_argument("--timeout", type=positive_seconds, default=600.0,
                   help="wall-time limit per job, seconds (finite, above 0; default 600)")
    p.add_argument("--memory", type=int_at_least(MIN_MEMORY_MIB), default=4096,
                   help=f"memory limit per job, MiB (at least {MIN_MEMORY_MIB}; default 4096)")
    p.add_argument("--cache-dir", type=Path, help="result cache (default $VERIKIT_CACHE or the user cache dir)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the result cache")
    p.add_argument("--data-dir", type=Path, help="data cache (default $VERIKIT_DATA or the user cache dir)")
    p.add_argument("--seed", type=int, default=0, help="seed of bootstrap CIs and of a benchmark's own randomness "
                   "(e.g. mutants); recorded")


def add_run_arguments(r: argparse.ArgumentParser, names: list[str]) -> None:
    """The arguments of ``run`` (also those of ``batch plan``)."""
    r.add_argument("benchmark", choices=names)
    r.add_argument("--mode", action="append", dest="modes",
                   help="mode to run (a benchmark's modes: verikit list); repeat for several (default: the "
                        "benchmark's default modes)")
    r.add_argument("--lang", action="append", dest="langs",
                   help="the mode of a benchmark whose modes are languages (its plugin says so; verikit list); "
                        "repeatable")
    r.add_argument("--task", action="append", dest="task_ids", help="run only this task id; repeatable")
    r.add_argument("--sample", type=int_at_least(1), metavar="N", help="run N tasks drawn with --seed by the benchmark "
                   "(its own draw where it has one, e.g. stratified by a published result; recorded in run.json)")
    r.add_argument("--predictions", help="predictions JSONL (schemas/predictions.schema.json); needs one mode")
    r.add_argument("--keep-going", action="store_true", help="run the good prediction lines, record the bad ones")
    add_run_options(r)


def spec_from_args(args, argv, *, sandbox: str | None = None, **fields) -> tuple[RunSpec, RunSettings]:
    """``(spec, settings)`` of the parsed ``run``/``reproduce`` arguments (``args`` is not
    changed), made once: what every such command has, plus ``fields`` (other
    :class:`~harness.runspec.RunSpec` fields, e.g. the modes, the predictions); the run
    directory is ``args.out``. The sandbox: ``sandbox`` when given (a caller's own:
    planning only, no engine needed), else ``--sandbox``, else the default (container
    when an engine answers). Raises RunError."""
    sandbox = sandbox or args.sandbox
    if sandbox is None:
        try:
            sandbox = default_sandbox()
        except SandboxError as exc:
            raise RunError(f"the default sandbox needs a container engine, but {exc}") from exc
    spec = RunSpec(benchmark=args.benchmark, dataset=args.dataset, sandbox=sandbox, parallel=args.jobs,
                   limits=Limits(wall_s=args.timeout, mem_mb=args.memory), seed=args.seed, **fields)
    settings = RunSettings(cache_dir=args.cache_dir, use_cache=not args.no_cache, data_dir=args.data_dir,
                           command=("verikit", *(argv if argv is not None else sys.argv[1:])))
    return spec, settings


def modes_of(args) -> list[str]:
    """The modes of ``verikit run``: ``--lang`` for a benchmark whose mode is a proof
    language (NTP4VC), ``--mode`` otherwise. Raises RunError for the wrong option."""
    bench = registry.benchmark(args.benchmark)
    given, other = (args.langs, args.modes) if bench.mode_option == "lang" else (args.modes, args.langs)
    if other:
        wrong = "--mode" if bench.mode_option == "lang" else "--lang"
        raise RunError(f"{bench.name} takes --{bench.mode_option}, not {wrong} "
                       f"({bench.mode_option}s: {', '.join(bench.modes)})")
    return given or []


def run_spec_from_args(args, argv, *, sandbox: str | None = None) -> tuple[RunSpec, RunSettings]:
    """``(spec, settings)`` of a parsed ``run`` (or ``batch plan``) command line
    (``sandbox``: as :func:`spec_from_args`)."""
    return spec_from_args(args, argv, sandbox=sandbox, modes=modes_of(args), predictions=args.predictions,
                          keep_going=args.keep_going, task_ids=args.task_ids, sample=args.sample)


def read_run_json(run_dir: Path) -> dict:
    """A run directory's run.json. Raises RunError when it cannot be read."""
    where = Path(run_dir) / "run.json"
    try:
        return json.loads(where.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RunError(f"{where}: cannot be read ({exc})") from None


def spec_of_run_dir(run_dir: Path, verb: str, **override) -> tuple[RunSpec, RunSettings]:
    """``(spec, settings)`` of the run that made ``run_dir``: its run.json ``spec``
    (:meth:`harness.runspec.RunSpec.from_json`) with ``override`` (sandbox, parallel,
    predictions; data_dir, a setting) applied where not None; the cache and the progress
    bar are off.

    Raises:
        RunError: run.json cannot be read or has no ``spec`` (names the file), the spec
            cannot be read (names the key), or the run was made by ``verikit reproduce``
            (``verb`` needs a ``verikit run``).
    """
    where = Path(run_dir) / "run.json"
    run = read_run_json(run_dir)
    command = list(run.get("command") or [])
    if command[1:2] == ["reproduce"]:  # what made it (provenance), not read back
        raise RunError(f"{where}: {verb} needs a run made by 'verikit run' (this one: reproduce; re-run "
                       f"'verikit reproduce' and compare with 'verikit validate DIR --against {run_dir}')")
    return spec_of_run(run_dir, run, **override)


@contextlib.contextmanager
def run_predictions(run_dir: Path, run: dict) -> Iterator[Path | None]:
    """The predictions file that the run of ``run_dir`` (its run.json ``run``) scored, to
    re-plan the run: None for a run that scored none; the recorded path when that file is
    there with the recorded sha256; otherwise ``predictions.jsonl`` beside run.json (a pulled
    run, or a committed reference, carries it so) with that sha256, copied to a temporary
    directory under the recorded file's name (a candidate's origin names the file), removed
    on exit.

    Raises:
        RunError: neither file is there with the recorded sha256 (names both).
    """
    recorded = run.get("predictions")
    if not recorded:
        yield None
        return
    original, beside = scored_files(run_dir, run)[:2]
    found = scored_file(run_dir, run)
    if found == original:
        yield original
        return
    if found is None:
        state = "missing" if not beside.is_file() else "not the file the run scored (its sha256 differs)"
        raise RunError(f"{beside}: {state}; the run scored {original} (sha256 {recorded['sha256'][:12]}...), which is "
                       f"not here either (a pulled run carries it as predictions.jsonl)")
    with tempfile.TemporaryDirectory(prefix="verikit-predictions-") as tmp:
        copy = Path(tmp) / original.name
        shutil.copyfile(found, copy)
        yield copy


def no_spec(run_dir: Path) -> str:
    """The error of a run.json without ``spec`` (made by a verikit that did not record it):
    names the file; its recorded command is never read back."""
    return (f"{Path(run_dir) / 'run.json'}: no 'spec' (made by a verikit that did not record the run's spec), so the "
            f"run cannot be re-planned; run its command again with this verikit")


def spec_of_run(run_dir: Path, run: dict, **override) -> tuple[RunSpec, RunSettings]:
    """``(spec, settings)`` of run.json ``run``'s ``spec``, with ``override`` (spec fields,
    and the ``data_dir`` setting) applied where not None; no cache, no progress bar; the
    recorded command kept for provenance. Raises RunError naming run.json when it has no
    ``spec`` (:func:`no_spec`) or naming the bad key."""
    where = Path(run_dir) / "run.json"
    if "spec" not in run:
        raise RunError(no_spec(run_dir))
    try:
        spec = RunSpec.from_json(run["spec"])
    except SpecError as exc:
        raise RunError(f"{where}: {exc}") from None
    changes = {k: v for k, v in override.items() if v is not None and k != "data_dir"}
    return spec.replace(**changes), RunSettings(data_dir=override.get("data_dir"), use_cache=False, progress=False,
                                                command=tuple(run.get("command") or ()))
