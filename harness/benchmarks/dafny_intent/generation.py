"""The Dafny intent benchmark's generation protocol (``verikit generate dafny-intent``):
the kit's prompt (the paper gives none) with the task's description and signature, and
the rule that takes the specification out of a completion. No feedback turns: the
verifier's findings name the tests, which the model must not see. The template is data:
``prompts.yaml``."""

from __future__ import annotations

import json
from pathlib import Path

from ...plugin import Protocol
from ..prompting import fenced_blocks, load_templates, nonempty, pick_block, render, strip_reasoning
from .dataset import dataset_file
from .grammar import Decl, TaskFileError
from .identity import check_mode
from .tests import Task

#: The templates of ``prompts.yaml`` (id -> :class:`~harness.plugin.PromptTemplate`).
TEMPLATES = load_templates(Path(__file__).resolve().parent / "prompts.yaml")
#: The file of the task descriptions (MBPP-san-DFY-228, in the pinned dataset).
DESCRIPTIONS = "MBPP-san-DFY-228/mbpp-san-dfy-228-all-task-test.json"
EXTRACTION = "dafny-block"
EXTRACTION_DOC = ("the last fenced code block tagged dafny (or dfy), else the last fenced block of any language, "
                  "else the whole completion; read as the kit reads every candidate (a method header with its "
                  "requires/ensures clauses and the predicates/functions they use, or the clauses alone); white "
                  "space only: no answer (the candidate is empty and judged invalid). A '<think>...</think>' "
                  "section is dropped first.")
PROTOCOL_SOURCE = ("Lahiri, FMCAD 2024, gives no generation prompt or decoding settings: it scores the MBPP-DFY "
                   "specifications GPT-4 generated (Misu et al., RQ3, temperature 0.5), one per task; the kit's "
                   "protocol asks for one specification per task with the server's default decoding; no feedback "
                   "turns (the verifier's findings would show the hidden tests)")

_DESCRIPTIONS: dict[int, tuple[object, dict]] = {}


def protocol(mode: str) -> Protocol:
    """The kit's protocol (the paper gives none): one sample per task, no decoding
    setting, no feedback turns.

    Raises:
        ValueError: an unknown mode.
    """
    check_mode(mode)
    return Protocol(templates=(TEMPLATES["dafny-intent-postconditions"],), extraction=EXTRACTION,
                    extraction_doc=EXTRACTION_DOC, samples=1, temperature=None, top_p=None, max_tokens=None,
                    feedback_turns=0, source=PROTOCOL_SOURCE)


def descriptions(fetched) -> dict[str, str]:
    """task_id -> natural-language description, from :data:`DESCRIPTIONS` ({} when the
    dataset has no such file: a directory of one's own programs), read once per dataset.

    Raises:
        TaskFileError: the file is not JSON or not an object of tasks (names the file).
    """
    key = id(fetched)
    if key not in _DESCRIPTIONS or _DESCRIPTIONS[key][0] is not fetched:
        try:
            path = dataset_file(fetched, DESCRIPTIONS)
        except TaskFileError:
            path = None
        out: dict[str, str] = {}
        if path is not None and Path(path).is_file():
            try:
                raw = json.loads(Path(path).read_text(encoding="utf-8"))
            except ValueError as exc:
                raise TaskFileError(f"{DESCRIPTIONS}: not JSON: {exc}") from None
            if not isinstance(raw, dict):
                raise TaskFileError(f"{DESCRIPTIONS}: expected an object of tasks")
            out = {str(k): v["task_description"] for k, v in raw.items()
                   if isinstance(v, dict) and isinstance(v.get("task_description"), str)}
        if len(_DESCRIPTIONS) > 8:
            _DESCRIPTIONS.clear()
        _DESCRIPTIONS[key] = (fetched, out)
    return _DESCRIPTIONS[key][1]


def signature(method: Decl) -> str:
    """The method's signature as the task file declares it, on one line:
    ``method Name(a: T, ...) returns (r: U, ...)``."""
    params = ", ".join(f"{p.name}: {p.type_text}" for p in method.params)
    ret = ", ".join(f"{r.name}: {r.type_text}" for r in method.returns)
    return f"{method.kind} {method.name}({params})" + (f" returns ({ret})" if method.returns else "")


def prompts(fetched, tasks: list[Task], mode: str, *, shots: int | None = None) -> list[dict]:
    """``{"task_id", "mode", "messages", "template_ids"}`` per task: the kit's prompt
    (:func:`messages`; the paper gives none).

    Raises:
        ValueError: ``shots`` given (zero-shot), an unknown mode, or a task without a
            description (a directory of one's own programs).
    """
    check_mode(mode)
    if shots is not None:
        raise ValueError("dafny-intent's prompt is zero-shot: --shots does not apply")
    return [{"task_id": t.task_id, "mode": mode, "messages": messages(fetched, t, mode),
             "template_ids": ["dafny-intent-postconditions"]} for t in tasks]


def messages(fetched, task: Task, mode: str) -> list[dict]:
    """The first (only) turn: one user message with the task's description and its
    method's signature.

    Raises:
        ValueError: the dataset has no description of the task (a directory of one's own
            programs: the prompt needs the intent in words).
    """
    text = descriptions(fetched).get(task.task_id)
    if text is None:
        raise ValueError(f"{task.path}: no natural-language description of task {task.task_id!r} "
                         f"(the prompt takes it from {DESCRIPTIONS})")
    return [{"role": "user", "content": render(TEMPLATES["dafny-intent-postconditions"], description=text.strip(),
                                                signature=signature(task.method))}]


def extract(completion: str, mode: str) -> str | None:
    """The specification in a completion by :data:`EXTRACTION_DOC`'s rule (one mode), or None."""
    text = strip_reasoning(completion)
    blocks = fenced_blocks(text)
    if blocks:
        return nonempty(pick_block(blocks, ("dafny", "dfy")).text)
    return nonempty(text.strip())
