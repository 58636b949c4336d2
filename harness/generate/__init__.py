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
transcript, which is what a generation resumes from), :mod:`.engine` (the turns),
:mod:`.outputs` (the two files).
"""

from __future__ import annotations

from pathlib import Path

from .spec import GenerateError, GenerationResult, GenerationSettings, GenerationSpec, SpecError

__all__ = ["GenerateError", "GenerationResult", "GenerationSettings", "GenerationSpec", "SpecError", "generate"]


def generate(spec: GenerationSpec, out: Path, *, settings: GenerationSettings | dict | None = None,
             console=None) -> GenerationResult:
    """Generate candidates for ``spec`` into the directory ``out`` (resumed when it holds an
    interrupted generation of the same spec).

    Args:
        spec: what to generate; out: the directory of ``predictions.jsonl``,
            ``generation.json``, the transcript ``transcript.jsonl`` and, with feedback turns,
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
