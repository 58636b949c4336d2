"""One module per benchmark: tasks, candidates, job construction, metrics inputs and the
published numbers. A benchmark never starts a process (it hands jobs to the executor)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Candidate:
    """What is checked for a task: a gold solution or one sample of a model's output.

    Attributes:
        task_id: upstream task id.
        model: model name (``gold`` for the gold solution, ``canary:<name>`` for canaries).
        sample: sample index (0-based) among the model's samples for the task.
        output: the raw text to check.
        meta: the predictions line's free-form ``meta`` object (e.g. Model-Bench's
            ``fixes``), or None.
        origin: where it came from (``gold``, ``bundled:<path>``, ``canary``,
            ``predictions:<file>:<line>``).
    """

    task_id: str
    model: str
    sample: int
    output: str
    origin: str
    meta: dict | None = field(default=None, hash=False)


BENCHMARKS = ("casp", "ntp4vc", "modelbench", "dafny-intent")  # benchmarks with jobs (`verikit run`)
# benchmarks whose published numbers are rescored (`verikit reproduce`)
REPRODUCIBLE = ("ntp4vc", "osvbench", "modelbench", "dafny-intent")

#: Derived images (a toolchain image with a benchmark's library built in): name ->
#: (benchmark, mode); built by ``verikit images build NAME`` or on first use.
DERIVED_IMAGES = {"ntp4vc-rocq": ("ntp4vc", "rocq")}


def get_benchmark(name: str):
    """Return the benchmark module ``name``.

    Raises:
        ValueError: unknown benchmark (lists the known ones).
    """
    if name == "casp":
        from . import casp

        return casp
    if name == "ntp4vc":
        from . import ntp4vc

        return ntp4vc
    if name == "osvbench":
        from . import osvbench

        return osvbench
    if name == "modelbench":
        from . import modelbench

        return modelbench
    if name == "dafny-intent":
        from . import dafny_intent

        return dafny_intent
    raise ValueError(f"unknown benchmark {name!r}; available: {', '.join(BENCHMARKS + REPRODUCIBLE)}")
