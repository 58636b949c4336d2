"""CASP's generation protocol (``verikit generate casp``): the paper's repair loop
(appendix "Gemini Prompt": the main prompt, Listings 1-3; up to seven iterations,
section "Verifying and Curating CASP source files") around a first turn the kit writes
for each candidate mode, the rule that takes the candidate out of a completion (the
JSON answer's ``fixed_code``) and the repair prompt filled with the Frama-C run of the
last attempt. The templates are data: ``prompts.yaml``."""

from __future__ import annotations

import json
import re
from pathlib import Path

from ...model import Record
from ...plugin import Protocol
from ..prompting import fenced_blocks, json_object_with, load_templates, nonempty, pick_block, render, strip_reasoning
from .tasks import Task, task_declarator

#: The templates of ``prompts.yaml`` (id -> :class:`~harness.plugin.PromptTemplate`).
TEMPLATES = load_templates(Path(__file__).resolve().parent / "prompts.yaml")
#: The candidate modes and their templates: (first turn, output format, repair).
_TURNS = {"spec-from-code": ("casp-spec-from-code", "casp-output-format", "casp-repair"),
          "code-from-spec": ("casp-code-from-spec", "casp-code-output-format", "casp-code-repair")}
#: The paper's iteration limit: "a maximum of seven iterations".
REPAIR_TURNS = 7
PROTOCOL_SOURCE = ("CASP paper, section 'Verifying and Curating CASP source files' (Method: Gemini 2.0 Flash is "
                   "given each failing file with Frama-C's non-verifying goals and the repair prompt, for a maximum "
                   "of seven iterations) and appendix 'Gemini Prompt' (main prompt, Listings 1-3); the paper gives "
                   "no decoding settings and one repair chain per file (samples 1); the first turns are the kit's")
EXTRACTION = "casp-json-fixed-code"
EXTRACTION_DOC = ("the string 'fixed_code' of the first JSON object holding it (Listing 3's answer format), looked "
                  "for in the completion's fenced blocks, then anywhere in it (raw newlines inside strings "
                  "accepted; ACSL's backslash words written unescaped inside a string, such as \\result, \\valid "
                  "or \\nothing, read as ACSL, not as JSON escapes); a value that is itself one fenced block is "
                  "unwrapped; with no such object (no JSON, "
                  "or broken JSON), the last fenced block tagged c (or acsl, h, cpp), else the last fenced block "
                  "not tagged json; otherwise no answer (the candidate is empty and judged invalid). A "
                  "'<think>...</think>' section is dropped first.")
_C_LANGS = ("c", "acsl", "h", "cpp", "c++")
#: Characters of Frama-C's error text sent back at most (the head is kept).
MAX_ERROR_CHARS = 6000


def _mode(mode: str) -> tuple[str, str, str]:
    if mode not in _TURNS:
        raise NotImplementedError(f"casp's {mode!r} mode has no generation protocol (gold re-verifies the dataset's "
                                  f"own pairs); the candidate modes: {', '.join(_TURNS)}")
    return _TURNS[mode]


def protocol(mode: str) -> Protocol | None:
    """The protocol of a candidate mode (None for ``gold``): the kit's first turn and
    the paper's repair turns, up to :data:`REPAIR_TURNS` of them; no decoding setting
    (the paper gives none)."""
    if mode not in _TURNS:
        return None
    first, fmt, repair = _TURNS[mode]
    templates = tuple(TEMPLATES[i] for i in (first, fmt, repair, "casp-context-subsequent", "casp-context-first"))
    return Protocol(templates=templates, extraction=EXTRACTION, extraction_doc=EXTRACTION_DOC, samples=1,
                    temperature=None, top_p=None, max_tokens=None, feedback_turns=REPAIR_TURNS,
                    source=PROTOCOL_SOURCE)


def template_ids(mode: str) -> list[str]:
    """The ids of the templates of the first turn of ``mode``.

    Raises:
        NotImplementedError: ``gold`` (no generation).
    """
    return list(_mode(mode)[:2])


def prompts(fetched, tasks: list[Task], mode: str, *, shots: int | None = None) -> list[dict]:
    """``{"task_id", "mode", "messages", "template_ids"}`` per task: the first turn
    ``verikit generate`` sends (:func:`messages`).

    Raises:
        ValueError: ``gold`` (nothing to generate), or ``shots`` given (CASP has no
            few-shot setting).
    """
    if shots is not None:
        raise ValueError("casp's prompts are zero-shot: --shots does not apply")
    if protocol(mode) is None:
        raise ValueError(f"casp's {mode} mode has no prompts: it re-verifies the dataset's own pairs "
                         "(the candidate modes: spec-from-code, code-from-spec)")
    ids = template_ids(mode)
    return [{"task_id": t.task_id, "mode": mode, "messages": messages(fetched, t, mode), "template_ids": ids}
            for t in tasks]


def messages(fetched, task: Task, mode: str) -> list[dict]:
    """The first turn: one user message, the kit's first-turn template for ``mode`` (the
    task's function and the code before it, or its contract and declarator) followed by
    the output format. ``fetched`` is not read (the task holds all of it).

    Raises:
        NotImplementedError: ``gold`` (no generation).
    """
    first, fmt, _ = _mode(mode)
    prelude = task.prelude.strip("\n") or "(none)"
    if mode == "spec-from-code":
        body = render(TEMPLATES[first], function=task.function, prelude=prelude, code=task.code.strip("\n"))
    else:
        body = render(TEMPLATES[first], function=task.function, prelude=prelude, contract=task.contract.strip("\n"),
                      declarator=task_declarator(task).strip())
    return [{"role": "user", "content": body + "\n\n" + render(TEMPLATES[fmt])}]


#: ACSL's built-in words that start with a backslash (the ACSL manual's terms, predicates,
#: memory and set built-ins, logic functions): a model that writes ``\result`` inside a
#: JSON string without doubling the backslash would have it read as the JSON escape ``\r``.
ACSL_WORDS = ("result", "old", "at", "pre", "here", "post", "valid", "valid_read", "valid_index", "valid_range",
              "valid_function", "separated", "nothing", "everything", "forall", "exists", "true", "false", "null",
              "base_addr", "block_length", "offset", "initialized", "dangling", "fresh", "freeable", "allocable",
              "object_pointer", "pointer_comparable", "specified", "sum", "product", "numof", "max", "min", "abs",
              "let", "lambda", "with", "from", "union", "inter", "subset", "empty", "sqrt", "pow", "floor", "ceil",
              "exit_status", "is_finite", "is_NaN", "integer", "real", "boolean", "length", "round_float",
              "round_double", "plus_infinity", "minus_infinity", "NaN", "eq_float", "le_float", "lt_float",
              "ge_float", "gt_float", "ne_float", "ghost", "block")
_LONE_BACKSLASH = r"(?<!\\)((?:\\\\)*)\\"
_ACSL_ESCAPE = re.compile(_LONE_BACKSLASH + r"(?=(?:" + "|".join(sorted(ACSL_WORDS, key=len, reverse=True)) + r")\b)")
_BAD_ESCAPE = re.compile(_LONE_BACKSLASH + r"(?=[^\"\\/bfnrtu])")


def acsl_in_json(text: str) -> str:
    """``text`` with every lone backslash that starts an ACSL word (:data:`ACSL_WORDS`) or
    no JSON escape doubled, so that JSON reads ``\\valid``, ``\\result`` and ``\\nothing``
    written unescaped inside a string as ACSL."""
    return _BAD_ESCAPE.sub(r"\1\\\\", _ACSL_ESCAPE.sub(r"\1\\\\", text))


def _answer(completion: str) -> dict | None:
    """The first JSON object with ``fixed_code``. When the text writes an ACSL word after a
    lone backslash (the model did not escape ACSL for JSON), :func:`acsl_in_json`'s
    reading is tried first, else last."""
    text = strip_reasoning(completion)
    fixed = acsl_in_json(text)
    order = (fixed, text) if _ACSL_ESCAPE.search(text) else (text, fixed)
    for candidate in dict.fromkeys(order):
        obj = json_object_with(candidate, "fixed_code")
        if obj is not None:
            return obj
    return None


def extract(completion: str, mode: str) -> str | None:
    """The candidate in a completion by :data:`EXTRACTION_DOC`'s rule (the same in both
    candidate modes), or None."""
    text = strip_reasoning(completion)
    obj = _answer(text)
    if obj is not None and isinstance(obj["fixed_code"], str):
        code = obj["fixed_code"]
        if code.strip().startswith(("```", "~~~")):
            blocks = fenced_blocks(code.strip())
            code = blocks[0].text if blocks else code
        return nonempty(code)
    block = pick_block([b for b in fenced_blocks(text) if b.lang != "json"], _C_LANGS)
    return nonempty(block.text) if block else None


_WP_UNPROVED = re.compile(r"^\[wp\] \[(Failed|Timeout|Unknown|Stepout|Unsuccess|Doomed)\] (Goal )?typed_")


def framac_error(record: Record) -> str:
    """The ``{error_message}`` of a judged record: Frama-C's own messages when it rejected
    the input (``invalid``); when goals were not proved (``failed``), the goal count and
    the non-verifying goals as WP printed them in the run's log (each ``[wp] [Failed]
    Goal ...`` line with its prover lines; the record's goal list when the log does not
    hold them); the record's reason otherwise (an integrity rule, a vacuous contract, the
    execution cross-check, a limit). At most :data:`MAX_ERROR_CHARS` characters."""
    verifier = record.get("verifier") or {}
    verdict = record["verdict"]
    msgs = [m.strip() for m in verifier.get("messages") or [] if m and m.strip()]
    if verdict == "invalid" and msgs:
        text = "\n".join(msgs)
    elif verdict == "failed" and record.get("goals"):
        g = record["goals"]
        head = f"Frama-C WP proved {g['proved']} of {g['total']} goals. Non-verifying goals:"
        lines, keep = [], False
        for line in (verifier.get("log_tail") or "").splitlines():
            if _WP_UNPROVED.match(line) and "Smoke-test" not in line:
                keep = True
                lines.append(line)
            elif keep and line.startswith((" ", "\t")):
                lines.append(line)
            else:
                keep = False
        if not lines:
            lines = [f"Goal {r.get('name')}: {r.get('status')}" + (f" ({r['prover']})" if r.get("prover") else "")
                     for r in record.get("goal_results") or [] if "_wp_smoke_" not in str(r.get("name"))]
        text = "\n".join([head, *lines]) if lines else record["reason"]
    else:
        text = record["reason"]
    return text if len(text) <= MAX_ERROR_CHARS else text[:MAX_ERROR_CHARS] + "\n(... cut)"


def _field(obj: dict | None, key: str) -> str | None:
    value = (obj or {}).get(key)
    if value is None or value == "":
        return None
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def feedback(record: Record, mode: str, *, previous: str | None = None) -> str | None:
    """The repair turn after the attempt ``record`` judged: the repair prompt (the paper's
    main prompt, or its code-from-spec adaptation) with the previous answer's
    ``fixed_code`` and :func:`framac_error`, then Listing 1 with the previous answer's
    explanation, assumptions and strategies (Listing 2 when it has none), then the output
    format. None when the attempt verified or failed on the kit's side (``infra_error``).

    ``previous``: the model's raw completion of that attempt; without it the code is
    referred to as the previous answer above, and Listing 2 is sent.

    Raises:
        NotImplementedError: ``gold`` (no generation).
    """
    _, fmt, repair = _mode(mode)
    if record["verdict"] in ("verified", "infra_error"):
        return None
    obj = _answer(previous) if previous is not None else None
    code = extract(previous, mode) if previous is not None else None
    if code is None:
        code = "(none: the previous answer held no code)" if previous is not None else "(the previous answer, above)"
    parts = [render(TEMPLATES[repair], file_content=code.strip("\n"), error_message=framac_error(record))]
    explanation, assumptions, strategies = (_field(obj, k) for k in ("explanation", "assumptions", "strategies"))
    if any(x is not None for x in (explanation, assumptions, strategies)):
        parts.append(render(TEMPLATES["casp-context-subsequent"], prev_explanation=explanation or "(none)",
                            prev_assumptions=assumptions or "(none)", prev_strategies=strategies or "(none)"))
    else:
        parts.append(render(TEMPLATES["casp-context-first"]))
    parts.append(render(TEMPLATES[fmt]))
    return "\n\n".join(parts)
