"""``verikit generate``: a benchmark's prompts -> an OpenAI-compatible chat-completions
server -> ``predictions.jsonl`` + ``generation.json``, with verifier feedback turns.

One generation (:func:`generate`) reads a :class:`GenerationSpec`: the benchmark's
protocol for the mode (:meth:`harness.plugin.Benchmark.protocol`: templates, extraction
rule, the paper's decoding settings) gives the first turn of each chat
(:meth:`~harness.plugin.Benchmark.messages`); each completion's candidate is taken out by
the benchmark's rule (:meth:`~harness.plugin.Benchmark.extract`; none: an empty
candidate, never dropped). With feedback turns, every attempt is verified by the kit's
ordinary run (:func:`harness.runner.run`: integrity rules and canaries included) and the
benchmark's feedback message (:meth:`~harness.plugin.Benchmark.feedback`) continues the
chat. The package: :mod:`.spec` (the spec and settings), :mod:`.client` (the endpoint,
through the official ``openai`` client), :mod:`.store` (the request cache and the
resumable journal), :mod:`.engine` (the turns), :mod:`.outputs` (the two files).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .spec import GenerationSettings, GenerationSpec, SpecError

__all__ = ["GenerateError", "GenerationResult", "GenerationSettings", "GenerationSpec", "SpecError", "generate"]


class GenerateError(RuntimeError):
    """A generation that cannot start or finish. ``code`` is the CLI's exit code: 2 bad
    input (unknown benchmark/mode/task, no protocol, bad endpoint, model or key), 3 the
    canaries of a feedback turn's verifier run failed, 4 samples left unfinished after the
    client's retries (re-run the same command to resume)."""

    def __init__(self, message: str, code: int = 2):
        super().__init__(message)
        self.code = code


@dataclass
class GenerationResult:
    """What :func:`generate` wrote.

    Attributes:
        predictions: ``out/predictions.jsonl``; generation: ``out/generation.json``.
        requests_sent: chat-completion requests sent to the server by this call (retries
            by the client not counted: they are each turn's ``attempts``).
        cached: turns answered from the request cache (none sent).
        resumed: turns taken from the directory's journal (an interrupted earlier call).
        samples: the per-sample entries of generation.json (``task_id``, ``sample``,
            ``turns``, ``fixes``, ``candidate_sha256``...).
    """

    predictions: Path
    generation: Path
    requests_sent: int
    cached: int
    resumed: int = 0
    samples: list[dict] = field(default_factory=list)


def generate(spec: GenerationSpec, out: Path, *, settings: GenerationSettings | dict | None = None,
             console=None) -> GenerationResult:
    """Generate candidates for ``spec`` into the directory ``out`` (resumed when it holds an
    interrupted generation of the same spec).

    Args:
        spec: what to generate; out: the directory of ``predictions.jsonl``,
            ``generation.json``, the journal ``turns.jsonl`` and, with feedback turns,
            ``turns/<t>/`` (each turn's candidates and verifier run).
        settings: caches, data dir, progress, the recorded command
            (:class:`GenerationSettings`, or a dict of its fields); None: the defaults.
        console: a ``rich`` console for messages and progress (None: stderr).

    Returns:
        :class:`GenerationResult`.

    Raises:
        GenerateError: with the exit code and a one-line message (see the class).
    """
    from .engine import run_generation

    if isinstance(settings, dict):
        settings = GenerationSettings(**settings)
    return run_generation(spec, Path(out), settings or GenerationSettings(), console)
