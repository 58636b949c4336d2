"""``verikit generate``: candidates from any OpenAI-compatible model by the paper's protocol
(:mod:`harness.generate`), written as ``predictions.jsonl`` + ``generation.json``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from rich.console import Console

from .. import registry
from ..generate import GenerateError, GenerationSettings, GenerationSpec, SpecError, generate
from ..model import Limits
from ..runner import RunError
from ..results.transcripts import TRANSCRIPT
from ..sandbox import HOST, SandboxError, default_sandbox
from .common import MIN_MEMORY_MIB, int_at_least, positive_seconds, say, number_up_to
from .options import modes_of


def generation_arguments(group, *, note: str = "", samples: str, feedback: str) -> None:
    """Add the decoding and endpoint options that ``generate`` and ``reproduce --generate``
    share (one definition, so that they mean the same in both) to ``group``; ``note``
    prefixes each help text (``"--generate: "``), ``samples`` and ``feedback`` say the
    command's defaults of ``--samples`` and ``--feedback-turns``."""
    group.add_argument("--samples", type=int_at_least(1), metavar="N", help=f"{note}samples per task ({samples})")
    group.add_argument("--temperature", type=number_up_to(2.0), help=f"{note}sampling temperature, 0 to 2 (default: the "
                       "protocol's, i.e. the paper's)")
    group.add_argument("--top-p", type=number_up_to(1.0), help=f"{note}nucleus sampling top_p, 0 to 1 (default: the "
                       "protocol's)")
    group.add_argument("--max-tokens", type=int_at_least(1), metavar="N", help=f"{note}completion token limit "
                       "(max_tokens; default: the protocol's)")
    group.add_argument("--feedback-turns", type=int_at_least(0), metavar="K", help=f"{note}verifier-feedback turns "
                       "after the first attempt: each attempt is verified (an ordinary run) and the verifier's message "
                       f"sent back, up to K times ({feedback})")
    group.add_argument("--api-key-env", default="OPENAI_API_KEY", metavar="NAME", help=f"{note}the environment "
                       "variable that holds the API key (default OPENAI_API_KEY; never written anywhere; unset: the key "
                       "'EMPTY' is sent, as for a local vLLM without --api-key)")
    group.add_argument("--concurrency", type=int_at_least(1), default=4, help=f"{note}requests in flight at once "
                       "(default 4)")
    group.add_argument("--stream", action="store_true", help=f"{note}request streamed completions (server-sent events)")
    group.add_argument("--request-timeout", type=positive_seconds, default=600.0, metavar="SECONDS",
                       help=f"{note}timeout of one HTTP request, seconds (default 600)")
    group.add_argument("--max-retries", type=int_at_least(0), default=5, metavar="N", help=f"{note}the client's "
                       "retries of a request on 429/5xx answers, timeouts and dropped connections, with backoff "
                       "(default 5)")
    group.add_argument("--system-prompt", metavar="TEXT|@FILE", help=f"{note}a system message for every chat (it "
                       "replaces the protocol's own, if any); @FILE reads it from FILE; recorded, part of each "
                       "request's key")
    group.add_argument("--extra-body", metavar="JSON", help=f"{note}vendor fields added to every request's body, a JSON "
                       "object, e.g. '{\"top_k\": 20, \"chat_template_kwargs\": {\"enable_thinking\": false}}' "
                       "(vLLM), '{\"reasoning_effort\": \"low\"}'; recorded, part of each request's key")
    group.add_argument("--offline", action="store_true", help=f"{note}send nothing: re-assemble the generation from "
                       "its transcript and the request cache (exit 2 naming the first answer that is not kept)")


def generation_inputs(args) -> dict:
    """``system_prompt`` and ``extra_body`` of a :class:`~harness.generate.GenerationSpec`
    from ``--system-prompt TEXT|@FILE`` and ``--extra-body JSON``.

    Raises:
        RunError: the file cannot be read, or the JSON is not an object (names the file,
            or the position in the JSON).
    """
    system = args.system_prompt
    if system is not None and system.startswith("@"):
        path = Path(system[1:]).expanduser()
        try:
            system = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise RunError(f"--system-prompt {args.system_prompt}: {path}: cannot be read "
                           f"({getattr(exc, 'strerror', None) or exc})") from None
    extra = None
    if args.extra_body is not None:
        try:
            extra = json.loads(args.extra_body)
        except ValueError as exc:
            raise RunError(f"--extra-body: not JSON ({exc})") from None
        if not isinstance(extra, dict):
            raise RunError(f"--extra-body: a JSON object is needed, not {type(extra).__name__}")
    return {"system_prompt": system, "extra_body": extra}


def _add_generate(sub) -> None:
    g = sub.add_parser("generate", help="generate candidates with an OpenAI-compatible model by the paper's protocol "
                       "(prompts, extraction, verifier feedback turns): predictions.jsonl + generation.json")
    g.add_argument("benchmark", choices=list(registry.BENCHMARKS))
    g.add_argument("--model", required=True, help="the model id as the server names it (checked against its /v1/models)")
    g.add_argument("--base-url", required=True, help="the OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1 "
                   "(vLLM, SGLang, llama.cpp server, TGI, OpenAI, hosted APIs)")
    g.add_argument("--out", type=Path, required=True, help="the generation's directory (re-run the same command into it "
                   "to resume an interrupted generation)")
    g.add_argument("--dataset", help="a pinned dataset's name, or a path to your own dataset; default: the benchmark's")
    g.add_argument("--mode", action="append", dest="modes", help="the one mode to generate for (default: the "
                   "benchmark's only default mode with a protocol)")
    g.add_argument("--lang", action="append", dest="langs", help="the mode of a benchmark whose modes are languages")
    g.add_argument("--task", action="append", dest="task_ids", help="generate only for this task id; repeatable")
    g.add_argument("--sample", type=int_at_least(1), metavar="N", help="N tasks drawn with --seed by the benchmark "
                   "(as run --sample)")
    d = g.add_argument_group("decoding and the endpoint (default: the protocol's, i.e. the paper's; recorded as used)")
    generation_arguments(d, samples="default: the protocol's", feedback="default 0; generation.json records the "
                         "paper's number")
    d.add_argument("--seed", type=int, default=0, help="seed: sample i is requested with seed + i (and the --sample "
                   "draw); default 0")
    v = g.add_argument_group("the verifier runs of --feedback-turns (as run's options)")
    v.add_argument("--sandbox", choices=list(registry.SANDBOXES), help="where the verifier runs (default: as run's)")
    v.add_argument("-j", "--jobs", type=int_at_least(1), default=1, help="jobs run in parallel (default 1)")
    v.add_argument("--timeout", type=positive_seconds, default=600.0, help="wall-time limit per job, seconds "
                   "(default 600)")
    v.add_argument("--memory", type=int_at_least(MIN_MEMORY_MIB), default=4096, help="memory limit per job, MiB "
                   "(default 4096)")
    v.add_argument("--cache-dir", type=Path, help="result cache (default $VERIKIT_CACHE or the user cache dir); the "
                   "request cache is its generations/ subdirectory")
    v.add_argument("--no-cache", action="store_true", help="do not read or write the request cache or the result cache")
    v.add_argument("--data-dir", type=Path, help="data cache (default $VERIKIT_DATA or the user cache dir)")
    g.set_defaults(handler=_generate)


def _sandbox(args) -> str:
    """--sandbox, else for feedback turns the default of ``run`` (container when an engine
    answers), else ``host`` (no verifier runs). Raises RunError."""
    if args.sandbox:
        return args.sandbox
    if not args.feedback_turns:
        return HOST
    try:
        return default_sandbox()
    except SandboxError as exc:
        raise RunError(f"--feedback-turns runs the verifier, whose default sandbox needs a container engine, but "
                       f"{exc} (or give --sandbox host)") from exc


def _generate(args, console: Console, argv) -> int:
    """Generate; print where the files are and what was sent. Exit 0, or GenerateError's code."""
    bench = registry.benchmark(args.benchmark)
    modes = modes_of(args)
    if len(modes) > 1:
        raise RunError(f"generate takes one --{bench.mode_option} (given: {', '.join(modes)})")
    try:
        spec = GenerationSpec(
            benchmark=args.benchmark, model=args.model, base_url=args.base_url, dataset=args.dataset,
            mode=modes[0] if modes else None, task_ids=tuple(args.task_ids) if args.task_ids else None,
            sample=args.sample, samples=args.samples, temperature=args.temperature, top_p=args.top_p,
            max_tokens=args.max_tokens, seed=args.seed, concurrency=args.concurrency,
            feedback_turns=args.feedback_turns, api_key_env=args.api_key_env, stream=args.stream,
            sandbox=_sandbox(args), parallel=args.jobs, limits=Limits(wall_s=args.timeout, mem_mb=args.memory),
            request_timeout_s=args.request_timeout, max_retries=args.max_retries, **generation_inputs(args))
    except SpecError as exc:
        raise RunError(str(exc)) from None
    settings = GenerationSettings(cache_dir=args.cache_dir, use_cache=not args.no_cache, offline=args.offline,
                                  data_dir=args.data_dir, command=("verikit", *(argv if argv is not None else sys.argv[1:])))
    try:
        result = generate(spec, args.out, settings=settings, console=console)
    except GenerateError as exc:
        say(console, f"error: {exc}")
        return exc.code
    tasks = len({s["task_id"] for s in result.samples})
    empty = sum(not s["extracted"] for s in result.samples)
    say(console, f"generated {len(result.samples)} sample(s) of {tasks} task(s); {empty} with no answer extracted")
    for line in result.summary:
        say(console, line)
    mode = json.loads(Path(result.generation).read_text(encoding="utf-8"))["mode"]
    say(console, f"wrote {result.predictions}, {result.generation} and the transcript "
                 f"{Path(result.generation).parent / TRANSCRIPT}; score them with: verikit run {args.benchmark} "
                 f"--{bench.mode_option} {mode} --predictions {result.predictions}")
    return result.code


#: The commands of this group: name -> adds its parser (arguments, help, handler) to ``sub``.
COMMANDS = {"generate": _add_generate}
