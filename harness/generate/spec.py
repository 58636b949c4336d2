"""A generation, described completely and serialisably (:class:`GenerationSpec`), where
it writes (:class:`GenerationSettings`), what it gives back (:class:`GenerationResult`)
and how it fails (:class:`GenerateError`).

A GenerationSpec says what ``verikit generate`` asks of which model and how: the
benchmark, its dataset, mode and tasks, the endpoint and model, the decoding parameters,
the seed, the feedback turns, and the sandbox and limits of the verifier runs in the loop.
It is frozen; ``None`` for a decoding parameter means "the protocol's value" (the paper's,
:class:`harness.plugin.Protocol`), resolved by the generation and recorded as used in
``generation.json``. It is what ``generation.json`` stores (``spec``), as
:class:`harness.runspec.RunSpec` is for ``run.json``.

Where a generation writes (its directory, the request and result caches, the data cache)
is not part of the spec: those are its settings (:class:`GenerationSettings`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from ..model import Limits
from ..runspec import RunSettings, SpecError, spec_fields

#: Version of the spec's JSON form (``generation.json`` ``spec.version``).
GENERATION_SPEC_VERSION = "1"
#: Request fields the kit sets itself, which ``extra_body`` may not set.
KIT_FIELDS = ("model", "messages", "temperature", "top_p", "max_tokens", "max_completion_tokens", "seed", "n",
              "stream", "stream_options")


@dataclass(frozen=True)
class GenerationSpec:
    """What a generation asks of which model and how (see the module doc).

    Attributes:
        benchmark: registry name; model: the model id as the user names it (checked
            against the server's ``/v1/models``); base_url: the OpenAI-compatible endpoint,
            e.g. ``http://127.0.0.1:8000/v1``.
        dataset: a pinned dataset's name or a path to the user's own dataset (None: the
            benchmark's default); mode: the one mode generated for (None: the benchmark's
            only default mode); task_ids: only these tasks (None: all); sample: instead,
            this many tasks drawn with ``seed`` by the benchmark (as ``run --sample``).
        samples: samples per task (None: the protocol's); temperature, top_p, max_tokens:
            the decoding parameters (None: the protocol's; the protocol's None: not sent,
            the server's default applies); seed: the generation's seed (sample ``i`` is
            requested with seed ``seed + i``; also the ``sample`` draw).
        concurrency: requests in flight at once (>= 1).
        feedback_turns: verifier-feedback turns after the first attempt (None: 0; the
            protocol's paper value is recorded beside it).
        api_key_env: the environment variable that holds the API key (its name only is
            recorded, never its value); stream: request server-sent events.
        request_timeout_s: seconds per HTTP request (the client's ``timeout``);
            max_retries: retries of a request on 408/409/429/5xx, a timeout or a dropped
            connection (the client's ``max_retries``, with its exponential backoff and the
            server's ``Retry-After``).
        system_prompt: a system message for every chat (None: the protocol's messages as
            they are); it replaces the protocol's own system message when it has one.
        extra_body: vendor fields added to every request's JSON body as given (vLLM's
            ``top_k``, ``chat_template_kwargs``; ``stop``; ``reasoning_effort``...): a JSON
            object whose keys are none of :data:`KIT_FIELDS`; part of the request's key.
        sandbox, parallel, limits: the verifier runs of the feedback turns (as ``run``'s
            ``--sandbox``, ``-j``, ``--timeout``/``--memory``).

    Raises:
        SpecError: (on construction) a value out of range (names the field).
    """

    benchmark: str
    model: str
    base_url: str
    dataset: str | None = None
    mode: str | None = None
    task_ids: tuple[str, ...] | None = None
    sample: int | None = None
    samples: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    seed: int = 0
    concurrency: int = 4
    feedback_turns: int | None = None
    api_key_env: str = "OPENAI_API_KEY"
    stream: bool = False
    sandbox: str = "host"
    parallel: int = 1
    limits: Limits = field(default_factory=Limits)
    request_timeout_s: float = 600.0
    max_retries: int = 5
    system_prompt: str | None = None
    extra_body: dict | None = None

    def __post_init__(self):
        if self.task_ids is not None:
            object.__setattr__(self, "task_ids", tuple(self.task_ids))
        for name in ("benchmark", "model", "base_url", "api_key_env"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name):
                raise SpecError(f"generation spec: {name!r} must be a non-empty string")
        checks = {"sample": (self.sample, 1), "samples": (self.samples, 1), "max_tokens": (self.max_tokens, 1),
                  "concurrency": (self.concurrency, 1), "feedback_turns": (self.feedback_turns, 0),
                  "parallel": (self.parallel, 1), "max_retries": (self.max_retries, 0)}
        for name, (value, low) in checks.items():
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < low):
                raise SpecError(f"generation spec: {name!r} must be an integer >= {low}, not {value!r}")
        for name, value, high in (("temperature", self.temperature, 2.0), ("top_p", self.top_p, 1.0)):
            if value is not None and not (isinstance(value, (int, float)) and 0 <= value <= high):
                raise SpecError(f"generation spec: {name!r} must be a number from 0 to {high}, not {value!r}")
        if not (isinstance(self.request_timeout_s, (int, float)) and math.isfinite(self.request_timeout_s)
                and self.request_timeout_s > 0):
            raise SpecError(f"generation spec: 'request_timeout_s' must be a finite number of seconds above 0, "
                            f"not {self.request_timeout_s!r}")
        if self.system_prompt is not None and (not isinstance(self.system_prompt, str) or not self.system_prompt.strip()):
            raise SpecError("generation spec: 'system_prompt' must be a non-empty string")
        if self.extra_body is not None:
            if not isinstance(self.extra_body, dict):
                raise SpecError(f"generation spec: 'extra_body' must be a JSON object, not {self.extra_body!r}")
            taken = sorted(set(self.extra_body) & set(KIT_FIELDS))
            if taken:
                raise SpecError(f"generation spec: 'extra_body' sets {', '.join(taken)}, which the kit sends itself "
                                f"(use its own option: --temperature, --top-p, --max-tokens, --seed, --samples, "
                                f"--stream)")
        if self.sample is not None and self.task_ids:
            raise SpecError("generation spec: 'sample' and 'task_ids' cannot be combined")

    def replace(self, **changes) -> "GenerationSpec":
        """A copy with ``changes`` (the spec itself never changes)."""
        return replace(self, **changes)

    def to_json(self) -> dict:
        """The spec as JSON (``generation.json`` ``spec``), with ``version``."""
        out = asdict(self)
        out["task_ids"] = list(self.task_ids) if self.task_ids is not None else None
        out["limits"] = self.limits.to_json()
        return {"version": GENERATION_SPEC_VERSION, **out}

    @classmethod
    def from_json(cls, data: dict) -> "GenerationSpec":
        """The spec of :meth:`to_json`'s output.

        Raises:
            SpecError: not a mapping, another version, an unknown or missing key, or a
                value of the wrong type or out of range (names the key).
        """
        kw = spec_fields(cls, data, "generation spec", GENERATION_SPEC_VERSION)
        missing = [k for k in ("benchmark", "model", "base_url") if k not in data]
        if missing:
            raise SpecError(f"generation spec: missing key(s) {missing}")
        try:
            if kw.get("task_ids") is not None:
                kw["task_ids"] = tuple(kw["task_ids"])
            if "limits" in kw:
                kw["limits"] = Limits(**kw["limits"])
            return cls(**kw)
        except SpecError:
            raise
        except (TypeError, ValueError) as exc:
            raise SpecError(f"generation spec: {exc}") from None


@dataclass(frozen=True)
class GenerationSettings(RunSettings):
    """Where a generation writes and how it shows progress (not part of the spec): a
    run's settings (:class:`harness.runspec.RunSettings`: ``cache_dir``, ``use_cache``,
    ``data_dir``, ``progress``, ``command``) and ``offline``. The request cache is
    ``cache_dir``'s ``generations/`` subdirectory; ``use_cache`` covers it and the verifier
    runs' result cache; ``command`` is recorded in generation.json.

    Attributes:
        offline: send nothing to the server: every answer must be in the directory's
            transcript or the request cache (else exit 2, naming the first one missing).
    """

    offline: bool = False


class GenerateError(RuntimeError):
    """A generation that cannot start or finish. ``code`` is the CLI's exit code: 2 bad
    input (unknown benchmark/mode/task, no protocol, bad endpoint, model or key; with
    ``--offline`` an answer that is not kept), 3 the canaries of a feedback turn's verifier
    run failed, 4 requests without an answer (the server failed them: re-run the same
    command to resume)."""

    def __init__(self, message: str, code: int = 2):
        super().__init__(message)
        self.code = code


@dataclass
class GenerationResult:
    """What :func:`generate` wrote.

    Attributes:
        predictions: ``out/predictions.jsonl``; generation: ``out/generation.json``.
        counts: generation.json's ``counts`` (every turn of the generation: answered,
            refused, from the server, the request cache or the transcript, null, empty and
            length-cut answers...) and ``this_call`` (the requests this call sent, the HTTP
            requests they took, retries included).
        samples: the per-sample entries of generation.json (``task_id``, ``sample``,
            ``turns``, ``fixes``, ``candidate_sha256``...).
        code: the exit code the outcome asks for: 0 every request answered, 4 some
            refused by the server (their candidates are empty), 2 every one refused.
        summary: what the console says of it: one line per fact (:func:`summary_lines`).
    """

    predictions: Path
    generation: Path
    counts: dict
    this_call: dict
    samples: list[dict] = field(default_factory=list)
    code: int = 0
    summary: list[str] = field(default_factory=list)


def resolve_mode(bench, mode: str | None) -> str:
    """The one mode generated for: ``mode`` (must be one of the benchmark's), else the
    only one of its default modes (or modes) that has a protocol.

    Raises:
        GenerateError: unknown mode, no protocol for it, or several to choose from.
    """
    opt = f"--{bench.mode_option}"
    if mode is not None:
        if mode not in bench.modes:
            raise GenerateError(f"unknown {bench.mode_option} {mode!r}; {bench.name} {bench.mode_option}s: "
                                f"{', '.join(bench.modes)}")
        return mode
    have = [m for m in (bench.default_modes or bench.modes) if bench.protocol(m) is not None]
    if len(have) == 1:
        return have[0]
    have = have or [m for m in bench.modes if bench.protocol(m) is not None]
    if not have:
        raise GenerateError(f"{bench.name} defines no generation protocol: it cannot be generated for")
    raise GenerateError(f"{bench.name}: say which {opt} to generate for ({', '.join(have)})")


def decoding(spec: GenerationSpec, protocol) -> dict:
    """The decoding actually used: ``{"samples", "temperature", "top_p", "max_tokens",
    "feedback_turns", "source": {name: "user" | "protocol" | "default"}}`` (the spec's
    value, else the protocol's; feedback turns: the spec's, else 0)."""
    out, source = {}, {}
    for name in ("samples", "temperature", "top_p", "max_tokens"):
        given = getattr(spec, name)
        out[name] = given if given is not None else getattr(protocol, name)
        source[name] = "user" if given is not None else "protocol"
    out["feedback_turns"] = spec.feedback_turns if spec.feedback_turns is not None else 0
    source["feedback_turns"] = "user" if spec.feedback_turns is not None else "default"
    out["source"] = source
    return out
