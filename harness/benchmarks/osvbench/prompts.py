"""OSVBench prompts, exactly as upstream builds them (``tasks/Spec.py`` ``insert_example``,
verified byte for byte against ``FULL_PROMPT_EXAMPLE_5_SHOTS``; system message of
``LLM_API_Invocations_passk.py``), for 0/1/3/5/7/9 shots, from the templates of
``prompts.yaml``; the generation protocol (``verikit generate``) and upstream's spec
extraction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ...plugin import Protocol
from ..prompting import load_templates, render, strip_reasoning
from .tasks import SHOT_FILES, SYSTEM_ASSUMPTION_MODEL, ManifestError, Task, check_mode, load_benchmark, path_of

#: Shot counts with a prompt: 0 (no examples section) and the five upstream files.
SHOTS = (0, 1, 3, 5, 7, 9)

#: The templates of ``prompts.yaml`` (id -> :class:`~harness.plugin.PromptTemplate`):
#: ``osvbench-system`` (upstream's system message), ``osvbench-task`` (the user message).
TEMPLATES = load_templates(Path(__file__).resolve().parent / "prompts.yaml")
#: Upstream's system message (LLM_API_Invocations_passk.py, ``system_prompt``).
SYSTEM_PROMPT = render(TEMPLATES["osvbench-system"])
#: Upstream's model short names -> API model (LLM_API_Invocations_passk.py ``llm_to_api``).
UPSTREAM_MODELS = {"claude3sonnet": "claude-3-5-sonnet-20241022", "gpt4o": "gpt-4o", "gpto1": "o1-2024-12-17",
                   "gpto3m": "o3-mini", "deepseekR1": "DeepSeek-R1", "deepseek": "deepseek-chat",
                   "qwenqwq": "Qwen/QwQ-32B-Preview", "qwen2_72": "qwen2.5-72b-instruct",
                   "qwen2coder": "Qwen/Qwen2.5-Coder-7B-Instruct", "gpt4om": "gpt-4o-mini"}


@dataclass
class Prompts:
    """The prompt sections: ``system_description`` (system_assumption_model: the task
    framing, verification assumption and programming model) and ``examples`` (shots ->
    text of the examples file; 0 -> "")."""

    system_description: str
    examples: dict[int, str]

    @classmethod
    def load(cls, fetched) -> "Prompts":
        """Read the prompt files of ``fetched``."""
        system = path_of(fetched, SYSTEM_ASSUMPTION_MODEL).read_text(encoding="utf-8")
        examples = {0: ""}
        for n, rel in SHOT_FILES.items():
            examples[n] = path_of(fetched, rel).read_text(encoding="utf-8")
        return cls(system, examples)

    def prompt(self, task: Task, shots: int = 5) -> str:
        """The user message for ``task`` with ``shots`` examples, exactly as upstream's
        ``Spec_Task.insert_example``: system_assumption_model + ``"\\n\\n"`` + examples
        file + ``"\\n### Task Question:\\nNow, given the system call `<syscall>`. \\n"`` +
        description + ``"\\n"`` + code + ``"\\n"`` + ``"[Specification]:\\n..."``.

        0 shots: upstream ships no examples file for it (the paper's Figure 5 has a
        zero-shot setting); the examples section is left empty, all else unchanged.

        Raises:
            ValueError: ``shots`` not in :data:`SHOTS`.
        """
        if shots not in self.examples:
            raise ValueError(f"shots must be one of {SHOTS}, got {shots!r}")
        return render(TEMPLATES["osvbench-task"], system_assumption_model=self.system_description,
                      examples=self.examples[shots], syscall=task.syscall, description=task.description,
                      code=task.code)

    def messages(self, task: Task, shots: int = 5) -> list[dict]:
        """Chat messages as upstream sends them: ``[{"role": "system", "content":
        SYSTEM_PROMPT}, {"role": "user", "content": prompt}]``."""
        return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": self.prompt(task, shots)}]

    def example_syscalls(self, shots: int) -> list[str]:
        """The syscalls whose solved examples the ``shots`` prompt contains, in order."""
        return re.findall(r"^Given a system call `(\w+)`", self.examples[shots], re.M)



def prompt(fetched, task: Task | str, shots: int = 5) -> str:
    """The user message of ``task`` (a :class:`Task` or a task id) with ``shots``
    examples (:meth:`Prompts.prompt`), for ``verikit prompts``.

    Raises:
        ManifestError: an unknown task id (names the valid range).
        ValueError: ``shots`` not in :data:`SHOTS`.
    """
    return Prompts.load(fetched).prompt(_task(fetched, task), shots)


def messages(fetched, task: Task | str, shots: int = 5) -> list[dict]:
    """The chat messages of ``task`` as upstream sends them (:meth:`Prompts.messages`).

    Raises:
        ManifestError: an unknown task id; ValueError: ``shots`` not in :data:`SHOTS`.
    """
    return Prompts.load(fetched).messages(_task(fetched, task), shots)


def task_prompts(fetched, tasks: list[Task], mode: str, *, shots: int | None = None) -> list[dict]:
    """Upstream's prompt of each task (``verikit prompts osvbench``): ``{"task_id", "mode",
    "shots", "system", "prompt", "messages", "template_ids"}`` (``system``: upstream's system
    message; ``prompt``: the user message, byte for byte as upstream's; ``messages``: both as
    chat messages, as ``verikit generate`` sends them, with the ids of their templates;
    ``shots`` default 5, the paper's setting).

    Raises:
        ValueError: ``shots`` not one of 0, 1, 3, 5, 7, 9; an unknown mode.
    """
    check_mode(mode)
    shots = 5 if shots is None else shots
    if shots not in SHOTS:
        raise ValueError(f"osvbench: shots must be one of {', '.join(map(str, SHOTS))}, got {shots}")
    p = Prompts.load(fetched)
    ids = [t.id for t in protocol(mode).templates]
    return [{"task_id": t.task_id, "mode": mode, "shots": shots, "system": SYSTEM_PROMPT,
             "prompt": p.prompt(t, shots), "messages": p.messages(t, shots), "template_ids": ids}
            for t in tasks]


def first_turn(fetched, task: Task, mode: str) -> list[dict]:
    """The first turn ``verikit generate`` sends: upstream's system and user message with 5
    shots (the paper's setting).

    Raises:
        ValueError: an unknown mode.
    """
    check_mode(mode)
    return Prompts.load(fetched).messages(task, 5)


def _task(fetched, task: Task | str) -> Task:
    if isinstance(task, Task):
        return task
    tasks = load_benchmark(fetched).tasks
    by_id = {t.task_id: t for t in tasks}
    if task not in by_id:
        raise ManifestError(f"unknown task id {task!r}: expected 0..{len(tasks) - 1}")
    return by_id[task]


# ---- the generation protocol (verikit generate)

#: The extraction rule's id and its sentence (recorded in generation.json).
EXTRACTION = "upstream-find-spec"
EXTRACTION_DOC = ("upstream's find_spec (LLM_API_Invocations_passk.py): the first '```python ... ```' match of "
                  "the completion (regex, DOTALL) without its 9-character opening and 3-character closing fence; "
                  "no match: no answer (upstream drops the sample; the kit keeps it as an empty candidate, judged "
                  "invalid). The kit first drops a '<think>...</think>' section (a server that does not split "
                  "reasoning off), which upstream's API calls never received.")
PROTOCOL_SOURCE = ("OSVBench paper, section 4.1 (greedy decoding, pass@1, 5-shot prompt: Table 1); upstream "
                   "LLM_API_Invocations_passk.py (max_tokens=4096, seed=42, no temperature sent); the paper's "
                   "two-round self-repair (Table 3) publishes no prompt, so the protocol has no feedback turns")


def protocol(mode: str) -> Protocol:
    """The paper's protocol: one sample, greedy (temperature 0), at most 4096 tokens
    (upstream's script), 5 shots, no feedback turns.

    Raises:
        ValueError: an unknown mode.
    """
    check_mode(mode)
    return Protocol(templates=(TEMPLATES["osvbench-system"], TEMPLATES["osvbench-task"]), extraction=EXTRACTION,
                    extraction_doc=EXTRACTION_DOC, samples=1, temperature=0.0, top_p=None, max_tokens=4096,
                    feedback_turns=0, source=PROTOCOL_SOURCE)


_FIND_SPEC = re.compile(r"```python.*?```", re.S)


def extract(completion: str, mode: str) -> str | None:
    """The spec in a completion by :data:`EXTRACTION_DOC`'s rule (one mode), or None."""
    m = _FIND_SPEC.search(strip_reasoning(completion))
    return m.group()[9:-3] if m else None
