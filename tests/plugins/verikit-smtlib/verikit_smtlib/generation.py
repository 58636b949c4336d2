"""The plugin's generation protocol (``verikit generate smtlib``): its own two templates
(there is no paper), the answer in the last ```` ```smt2 ```` fenced block, and Z3's reading
of the last attempt sent back as feedback. It shows that an outside benchmark plugs into
the kit's generation through the four fields of its :class:`harness.plugin.Prompting`
part (``protocol``, ``messages``, ``extract``, ``feedback``) alone."""

from __future__ import annotations

import re

from harness.plugin import PromptTemplate, Protocol

FIRST = PromptTemplate(
    id="smtlib-invariant", source="verikit (the example plugin's own; no paper)", role="user",
    note="written for the plugin's tests",
    text="Give a loop invariant that proves the postcondition of this integer loop by Hoare's loop rule.\n\n"
         "Variables (integers): {variables}\n"
         "Precondition: {pre}\n"
         "Initial values: {init}\n"
         "Loop: while {guard} do {body} (simultaneous assignment)\n"
         "Postcondition: {post}\n\n"
         "Answer with one SMT-LIB term over these variables in a ```smt2 fenced block.")
FEEDBACK = PromptTemplate(
    id="smtlib-feedback", source="verikit (the example plugin's own; no paper)", role="user",
    note="filled with Z3's reading of the last attempt (the record's reason and per-goal answers)",
    text="Z3 did not verify your invariant: {reason}.\n{goals}\n"
         "Give a corrected invariant: one SMT-LIB term in a ```smt2 fenced block.")

PROTOCOL = Protocol(templates=(FIRST, FEEDBACK), extraction="last-smt2-fence",
                    extraction_doc="the text of the last ```smt2 fenced block of the completion, stripped; "
                                   "no such block: no answer",
                    samples=1, feedback_turns=2, source="verikit's example plugin (no paper)")

_SMT2 = re.compile(r"```smt2[ \t]*\n(.*?)```", re.S)


def protocol(mode: str) -> Protocol:
    """:data:`PROTOCOL` (the plugin's one mode)."""
    return PROTOCOL


def messages(fetched, task, mode: str) -> list[dict]:
    """The first turn for a task (:class:`.benchmark.Task`)."""
    text = FIRST.text.format(
        variables=", ".join(task.variables), pre=task.pre,
        init=", ".join(f"{x} = {e}" for x, e in task.init.items()),
        guard=task.guard, body=", ".join(f"{x} := {e}" for x, e in task.body.items()), post=task.post)
    return [{"role": FIRST.role, "content": text}]


def extract(completion: str, mode: str) -> str | None:
    """The last ```smt2 block's text, stripped; None when there is none."""
    found = _SMT2.findall(completion)
    return found[-1].strip() if found else None


def feedback(record: dict, mode: str, *, previous: str | None = None) -> str | None:
    """The feedback message for a judged record (None when it verified): the verdict's
    reason and, when Z3 ran, its answer for each goal."""
    if record["verdict"] == "verified":
        return None
    goals = "\n".join(f"- {g['name']}: {'proved' if g['status'] == 'proved' else 'not proved (z3: ' + g['answer'] + ')'}"
                      for g in record.get("goal_results") or [])
    return FEEDBACK.text.format(reason=record["reason"], goals=goals or "(Z3 did not run on it)")
