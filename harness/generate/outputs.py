"""The two files of a generation: ``predictions.jsonl`` (one candidate per task and sample,
``schemas/predictions.schema.json``, what ``verikit run --predictions`` scores) and
``generation.json`` (``schemas/generation.schema.json``: everything asked and answered but
the messages' text, which is in the transcript ``transcript.jsonl``). Both are validated
before they are written, and written atomically; the API key is in neither."""

from __future__ import annotations

import json

import openai

from ..model import sha256_text, utc_now
from ..resources import kit_info
from ..results import validate
from ..results.files import write_json_atomic, write_text_atomic
from ..datasets import sha256_file
from .client import CONNECT_TIMEOUT_S
from .spec import GenerationResult
from ..results.transcripts import TRANSCRIPT

#: The longest candidate a predictions line may hold (the schema's ``output`` maxLength).
MAX_OUTPUT = 1_000_000


def first_turn_template(protocol) -> str:
    """The id of the template of a chat's first user message: the protocol's first
    template sent as ``user`` (its first template when none is)."""
    return next((t.id for t in protocol.templates if t.role == "user"), protocol.templates[0].id)


def prediction_line(gen, chat, turn: int) -> dict:
    """The predictions line of ``chat``'s candidate of ``turn`` (1-based): ``output`` the
    extracted candidate ("" when none: ``meta.extracted`` false), ``meta`` ``{"extracted",
    "turns", "fixes"`` (feedback turns used until this candidate)``, "finish_reason"}``."""
    i = turn - 1
    cand = chat.candidates[i]
    meta = {"extracted": cand is not None, "turns": turn, "fixes": turn - 1,
            "finish_reason": chat.turns[i]["finish_reason"]}
    if cand is not None and len(cand) > MAX_OUTPUT:  # beyond what a predictions line holds: no answer
        meta.update(extracted=False, too_long=len(cand))
        cand = None
    line = {"task_id": chat.task_id, "model": gen.served, "sample": chat.sample, "output": cand or "",
            "mode": gen.mode, "prompt_id": first_turn_template(gen.protocol), "seed": chat.seed, "meta": meta}
    if gen.params["temperature"] is not None:
        line["temperature"] = gen.params["temperature"]
    return line


def write_outputs(gen) -> GenerationResult:
    """Write ``predictions.jsonl`` then ``generation.json`` for the finished generation
    ``gen`` (:class:`harness.generate.engine.Generation`).

    Raises:
        harness.results.ValidationError: a document does not match its schema (nothing of
            it is written).
    """
    out = gen.out
    chats = [gen.chats[k] for k in sorted(gen.chats)]
    lines = [prediction_line(gen, c, len(c.turns)) for c in chats]
    for n, line in enumerate(lines, 1):
        validate("predictions", line, f"{out / 'predictions.jsonl'}:{n}")
    write_text_atomic(out / "predictions.jsonl",
                      "".join(json.dumps(x, sort_keys=True, ensure_ascii=False) + "\n" for x in lines))
    samples = [_sample(c, line) for c, line in zip(chats, lines)]
    doc = generation_doc(gen, samples, {"path": "predictions.jsonl", "sha256": sha256_file(out / "predictions.jsonl"),
                                        "lines": len(lines)})
    write_json_atomic(out / "generation.json", doc, kind="generation")
    counts, this_call = doc["counts"], doc["this_call"]
    code = 0 if not counts["refused"] else 2 if not counts["answered"] else 4
    lines = summary_lines(counts, this_call)
    if code == 2:
        lines.append(f"error: the server refused every request ({counts['refused']}); the first refusal: "
                     f"{gen.errors[0] if gen.errors else '?'}")
    elif code == 4:
        lines.append(f"error: the server refused {counts['refused']} of {counts['turns']} request(s) (their candidates "
                     f"are empty); the first refusal: {gen.errors[0] if gen.errors else '?'}")
    return GenerationResult(predictions=out / "predictions.jsonl", generation=out / "generation.json",
                            counts=counts, this_call=this_call, samples=samples, code=code, summary=lines)


def summary_lines(counts: dict, this_call: dict) -> list[str]:
    """What the console says of a finished generation (``generation.json``'s ``counts`` and
    ``this_call``): the answers and where they came from, the requests sent with their
    retries as made, and a warning for each kind of answer that is not plain text
    (``content: null``, empty, cut at ``max_tokens``)."""
    lines = [f"{counts['samples']} sample(s), {counts['turns']} turn(s): {counts['answered']} answered "
             f"({counts['from_server']} by the server, {counts['from_request_cache']} from the request cache, "
             f"{counts['resumed']} from the transcript), {counts['refused']} refused; this call sent "
             f"{this_call['requests']} request(s) in {this_call['http_requests']} HTTP request(s) "
             f"({this_call['retries']} retries)"]
    if counts["length_cut"]:
        lines.append(f"warning: {counts['length_cut']} answer(s) were cut at max_tokens (finish_reason 'length'); "
                     f"their candidates were extracted from the cut text (raise --max-tokens?)")
    if counts["content_null"]:
        lines.append(f"warning: {counts['content_null']} answer(s) had no content (content: null); no candidate")
    if counts["empty"]:
        lines.append(f"warning: {counts['empty']} answer(s) were empty; no candidate")
    return lines


def _sample(chat, line: dict) -> dict:
    last = chat.turns[-1]
    return {"task_id": chat.task_id, "sample": chat.sample, "seed": chat.seed, "turns": chat.turns,
            "fixes": line["meta"]["fixes"], "stopped": chat.stopped or "single-turn",
            "extracted": line["meta"]["extracted"], "candidate_sha256": sha256_text(line["output"]),
            "verdict": last["verdict"]}


def this_call(gen) -> dict:
    """generation.json's ``this_call``: chat-completion requests this call sent (refused
    and failed ones too; a request for ``n`` choices is one), the HTTP requests they took
    (the client's retries included, counted as they went out) and the retries."""
    http = gen.endpoint.http_requests if gen.endpoint is not None else 0
    return {"requests": gen.sent, "http_requests": http, "retries": max(0, http - gen.sent)}


def generation_doc(gen, samples: list[dict], predictions: dict) -> dict:
    """generation.json (``schemas/generation.schema.json``) of ``gen``."""
    spec, protocol, params = gen.spec, gen.protocol, gen.params
    turns = [t for s in samples for t in s["turns"]]
    return {
        "schema_version": "1.1",
        "kit": kit_info(),
        "command": list(gen.run_settings.command),
        "created_at": gen.created_at,
        "finished_at": utc_now(),
        "spec": spec.to_json(),
        "endpoint": {"base_url": spec.base_url, "base_url_key": gen.base_url, "api_key_env": spec.api_key_env,
                     "api_key": gen.key_state, "contacted": gen.endpoint is not None,
                     "n": "not used" if gen.params["samples"] < 2 else
                     f"refused: {gen.n_refused}" if gen.n_refused else "used",
                     "client": {"library": "openai", "version": openai.__version__, "max_retries": spec.max_retries,
                                "timeout_s": spec.request_timeout_s, "connect_timeout_s": CONNECT_TIMEOUT_S,
                                "concurrency": spec.concurrency, "stream": spec.stream}},
        "model": {"requested": spec.model, "served": gen.served,
                  "response_models": sorted({t["response_model"] for t in turns if t["response_model"]}),
                  "system_fingerprints": sorted({t["system_fingerprint"] for t in turns if t["system_fingerprint"]})},
        "benchmark": {"name": gen.bench.name, "version": gen.bench.version},
        "mode": gen.mode,
        "dataset": gen.plan.fetched.provenance(),
        "task_ids": sorted(t.task_id for t in gen.plan.tasks),
        "task_selection": {"sample": spec.sample, "seed": spec.seed} if spec.sample is not None else None,
        "protocol": {"source": protocol.source, "templates": [t.to_json() for t in protocol.templates],
                     "first_turn_template": first_turn_template(protocol),
                     "extraction": {"id": protocol.extraction, "doc": protocol.extraction_doc},
                     "paper": {"samples": protocol.samples, "temperature": protocol.temperature,
                               "top_p": protocol.top_p, "max_tokens": protocol.max_tokens,
                               "feedback_turns": protocol.feedback_turns}},
        "decoding": {"samples": params["samples"], "temperature": params["temperature"], "top_p": params["top_p"],
                     "max_tokens": params["max_tokens"], "feedback_turns": params["feedback_turns"],
                     "seed": spec.seed, "sample_seed": "seed + sample", "source": params["source"]},
        "counts": {"samples": len(samples), "turns": len(turns),
                   "answered": sum(t["error"] is None for t in turns),
                   "from_server": sum(t["error"] is None and not t["cached"] and not t["resumed"] for t in turns),
                   "from_request_cache": sum(t["cached"] and not t["resumed"] for t in turns),
                   "resumed": sum(t["resumed"] for t in turns),
                   "refused": sum(t["error"] is not None for t in turns),
                   "batched": sum(t["batch"] is not None for t in turns),
                   "content_null": sum(t["content"] == "null" for t in turns),
                   "empty": sum(t["content"] == "empty" for t in turns),
                   "length_cut": sum(t["finish_reason"] == "length" for t in turns),
                   "no_answer": sum(not s["extracted"] for s in samples),
                   "verified": (sum(s["verdict"] == "verified" for s in samples)
                                if params["feedback_turns"] else None)},
        "this_call": this_call(gen),
        "transcript": {"path": TRANSCRIPT, "sha256": sha256_file(gen.out / TRANSCRIPT)},
        "verifier_runs": list(gen.runs),
        "predictions": predictions,
        "samples": samples,
    }
