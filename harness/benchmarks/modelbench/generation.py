"""Model-Bench's generation protocol (``verikit generate modelbench``): the paper's
decoding settings and sample count, the Figure 14 prompt as chat messages, the rule that
takes the model out of a completion, and the Figure 12 fix prompt filled with TLC's error
(the verifier-in-the-loop turns). The templates are data: ``prompts.yaml``."""

from __future__ import annotations

import re

from ...model import Record
from ...plugin import Protocol
from ..prompting import message, nonempty, strip_reasoning
from .postprocess import HEADER_RAW, extract_module
from .tasks import MODES, TEMPLATES, Task, check_mode, prompt

#: The extraction rule's id and its sentence (recorded in generation.json).
EXTRACTION = "first-module-block"
EXTRACTION_DOC = ("the first fenced code block (any info string) that holds 'MODULE', as the kit's Appendix A.1 "
                  "post-processing takes it; with none, the whole completion when it holds a '---- MODULE Name ----' "
                  "header; otherwise no answer (the candidate is empty and judged invalid). A '<think>...</think>' "
                  "section is dropped first.")
#: The number of TLC-feedback (fix) turns: the paper states no maximum; Table 2's "Avg Fixes"
#: is exactly 5.00 for the four models whose zero-shot samples almost never run, i.e. they
#: hit a cap of 5 fix rounds.
FIX_TURNS = 5
PROTOCOL_SOURCE = ("Model-Bench paper: section 4 (three sampling trials per prompt setting; the LLMs self-correct "
                   "via error feedback in iterative multi-turn chats), section 4.1.1 (n = 3 samples, k = 1..3), "
                   "section 5 (nucleus sampling, no top_p given; temperature 0.7); no maximum number of fixes is "
                   "stated: 5 is read off Table 2, where Avg Fixes is exactly 5.00 for the models whose zero-shot "
                   "samples (almost) never run; no max_tokens is given")
#: Error-trace states shown in a fix prompt (the last ones: the violation is at the end).
MAX_TRACE_STATES = 25


def protocol(mode: str) -> Protocol:
    """The paper's protocol for a prompt setting (the same for the three).

    Raises:
        ValueError: unknown mode.
    """
    check_mode(mode)
    return Protocol(templates=(TEMPLATES["modelbench-generate"], TEMPLATES["modelbench-fix"]),
                    extraction=EXTRACTION, extraction_doc=EXTRACTION_DOC, samples=3, temperature=0.7, top_p=None,
                    max_tokens=None, feedback_turns=FIX_TURNS, source=PROTOCOL_SOURCE)


def prompts(fetched, tasks: list[Task], mode: str, *, shots: int | None = None) -> list[dict]:
    """``{"task_id", "mode", "module", "prompt", "messages", "template_ids"}`` per task
    (:func:`~harness.benchmarks.modelbench.tasks.prompt`; ``messages``: the chat messages
    ``verikit generate`` sends, with the ids of their templates). The number of examples is
    part of the mode (2 for the few-shot settings, 0 for ``original-zeroshot``); ``shots``,
    when given, must agree with it.

    Raises:
        ValueError: unknown mode, or ``shots`` other than the mode's.
    """
    check_mode(mode)
    n = 0 if mode == "original-zeroshot" else 2
    if shots is not None and shots != n:
        raise ValueError(f"Model-Bench's {mode} has {n} example(s), not {shots}; the settings are the modes "
                         f"{', '.join(MODES)}")
    ids = template_ids(mode)
    return [{"task_id": t.task_id, "mode": mode, "module": t.module, "prompt": prompt(t, mode),
             "messages": messages(fetched, t, mode), "template_ids": ids} for t in tasks]


def messages(fetched, task: Task, mode: str) -> list[dict]:
    """The first turn: one user message, the Figure 14 prompt of ``task`` in ``mode``
    (:func:`~harness.benchmarks.modelbench.tasks.prompt`; the paper sends no system
    message). ``fetched`` is not read (the task holds all of it)."""
    return [{"role": "user", "content": prompt(task, mode)}]


def template_ids(mode: str) -> list[str]:
    """The ids of the templates of the first turn."""
    return ["modelbench-generate"]


def extract(completion: str, mode: str) -> str | None:
    """The TLA+ model in a completion by :data:`EXTRACTION_DOC`'s rule (the same in every
    mode), or None."""
    text = strip_reasoning(completion)
    block, notes = extract_module(text)
    if notes:
        return nonempty(block)
    return text if HEADER_RAW.search(text) else None


def tlc_error(record: Record) -> str:
    """The error of a judged record, as the fix prompt's ``{error}``: TLC's own messages
    as the TLC reader recorded them (SANY's parse or semantic error; the violated
    invariant followed by TLC's error trace, its last :data:`MAX_TRACE_STATES` states, in
    TLC's own layout; a configuration or run-time error with its location); the record's
    reason when the kit decided (an integrity rule, a vacuous model, a limit) or TLC
    recorded no message."""
    verifier = record.get("verifier") or {}
    extra = verifier.get("extra") or {}
    msgs = [m.strip() for m in verifier.get("messages") or [] if m and m.strip()]
    if record["verdict"] == "rejected" or not msgs:
        return record["reason"]
    text = "\n".join(msgs)
    if extra.get("location") and not re.search(r"\bline \d+", text):  # SANY's message may name it already
        text += f" ({extra['location']})"
    trace = extra.get("trace") or []
    if extra.get("outcome") == "invariant_violated" and trace:
        lines = ["The behavior up to this point is:"]
        if len(trace) > MAX_TRACE_STATES:
            lines.append(f"({len(trace) - MAX_TRACE_STATES} earlier state(s) not shown)")
        for step in trace[-MAX_TRACE_STATES:]:
            lines.append(f"{step.get('step')}: {step.get('action')}")
            lines += [f"/\\ {var} = {value}" for var, value in (step.get("state") or {}).items()]
            lines.append("")
        text += "\n" + "\n".join(lines).rstrip()
    return text


def feedback(record: Record, mode: str, *, previous: str | None = None) -> str | None:
    """The Figure 12 fix prompt with :func:`tlc_error` of the last attempt, or None when
    there is nothing to fix (``verified``) or the failure is the kit's (``infra_error``).
    ``mode`` and ``previous`` are not used (the paper's prompt is the same in every mode
    and does not quote the model)."""
    if record["verdict"] in ("verified", "infra_error"):
        return None
    return message(TEMPLATES["modelbench-fix"], error=tlc_error(record))["content"]
