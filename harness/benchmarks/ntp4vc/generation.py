"""NTP4VC's generation protocol (``verikit generate ntp4vc --lang L``): the paper's
zero-shot general prompt per language (Appendix F) filled with the task's library context
and goal, its decoding settings (temperature 1.0, at most 32,000 tokens, 8 samples per
VC), the rule that takes the proof out of a completion, and the kit's repair message for
optional prover-feedback turns. The templates are data: ``prompts.yaml``."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path, PurePosixPath

from ...model import Record
from ...plugin import Protocol
from ..prompting import fenced_blocks, load_templates, nonempty, pick_block, render, strip_reasoning
from .data import LANGUAGES, Task, path_of
from .libraries import IsabelleLibrary, LeanLibrary
from .rocq_library import RocqLibrary

#: The templates of ``prompts.yaml`` (id -> :class:`~harness.plugin.PromptTemplate`).
TEMPLATES = load_templates(Path(__file__).resolve().parent / "prompts.yaml")
#: The language's name as the paper's prompts write it.
LANGUAGE_NAMES = {"rocq": "Rocq", "lean": "Lean 4", "isabelle": "Isabelle"}
#: Info strings of a fenced block in each language (preferred by the extraction rule).
FENCE_LANGS = {"rocq": ("coq", "rocq", "v", "gallina"), "lean": ("lean", "lean4"),
               "isabelle": ("isabelle", "isar", "thy")}
#: The most characters of library text a prompt's context holds (all 600 tasks fit: their
#: largest closure is 79,029 characters, in Isabelle).
MAX_CONTEXT_CHARS = 200_000
EXTRACTION = "ntp4vc-proof"
EXTRACTION_DOC = ("the proof the prompt asks for ('Response the ... proof only'): the last fenced code block "
                  "tagged with the language (coq/rocq/v/gallina, lean/lean4, isabelle/isar/thy), else the last "
                  "fenced block of any language, else the whole completion; what is taken is the candidate as "
                  "written (the proof replacing the placeholder, or the whole file when it restates the theorem); "
                  "white space only: no answer (the candidate is empty and judged invalid). A '<think>...</think>' "
                  "section is dropped first.")
PROTOCOL_SOURCE = ("NTP4VC paper, section 4 'Models' (temperature 1.0, at most 32,000 tokens), 'Metrics' (8 attempts "
                   "per problem, pass@n; GPT-o4-mini: 1) and 'Prompts' (zero-shot, the problem statement with "
                   "definitions and lemmas as context), Appendix F (the general prompts); no feedback turns")

_LIBRARIES: dict[tuple[int, str], tuple[object, object]] = {}


def protocol(mode: str) -> Protocol | None:
    """The paper's protocol for a proof language (None for ``why3``: nothing is
    generated there)."""
    if mode not in LANGUAGES:
        return None
    return Protocol(templates=(TEMPLATES[f"ntp4vc-{mode}-general"], TEMPLATES["ntp4vc-context-file"],
                               TEMPLATES["ntp4vc-repair"]),
                    extraction=EXTRACTION, extraction_doc=EXTRACTION_DOC, samples=8, temperature=1.0, top_p=None,
                    max_tokens=32000, feedback_turns=0, source=PROTOCOL_SOURCE)


def prompts(fetched, tasks: list[Task], mode: str, *, shots: int | None = None) -> list[dict]:
    """``{"task_id", "mode", "messages", "template_ids"}`` per task: the general prompt
    of Appendix F for the language (:func:`messages`).

    Raises:
        ValueError: ``why3`` (nothing is generated), or ``shots`` given (zero-shot).
    """
    if shots is not None:
        raise ValueError("ntp4vc's prompts are zero-shot (the paper's setting): --shots does not apply")
    if protocol(mode) is None:
        raise ValueError(f"ntp4vc's {mode} mode has no prompts (the proof languages: {', '.join(LANGUAGES)})")
    ids = template_ids(mode)
    return [{"task_id": t.task_id, "mode": mode, "messages": messages(fetched, t, mode), "template_ids": ids}
            for t in tasks]


def template_ids(mode: str) -> list[str]:
    """The ids of the templates of the first turn."""
    _check(mode)
    return [f"ntp4vc-{mode}-general", "ntp4vc-context-file"]


def _check(mode: str) -> None:
    if mode not in LANGUAGES:
        raise NotImplementedError(f"ntp4vc's {mode!r} mode has no generation protocol (the proof languages: "
                                  f"{', '.join(LANGUAGES)})")


def _library(fetched, mode: str):
    """The language's library reader of ``fetched``, made once per dataset object (the
    Rocq one reads every ``.v`` file)."""
    key = (id(fetched), mode)
    if key not in _LIBRARIES or _LIBRARIES[key][0] is not fetched:
        lib = {"rocq": RocqLibrary.load, "lean": LeanLibrary, "isabelle": IsabelleLibrary}[mode](fetched)
        if len(_LIBRARIES) > 8:
            _LIBRARIES.clear()
        _LIBRARIES[key] = (fetched, lib)
    return _LIBRARIES[key][1]


def context_files(fetched, task: Task, mode: str) -> list[tuple[str, str]]:
    """``[(repo path, text)]`` of the library files ``task``'s file loads in ``mode``,
    in dependency order (a file after those it imports): its import closure in the
    pinned data (:meth:`.RocqLibrary.closure`, :class:`.LeanLibrary`,
    :class:`.IsabelleLibrary`); imports from outside the repository (Mathlib, the
    Isabelle distribution and AFP, Coq's and stdpp's libraries) are not included."""
    lib = _library(fetched, mode)
    if mode == "rocq":
        files, _ = lib.closure(task.rocq)
        return [(f, lib.files[f]) for f in files]
    closure = lib.closure(task.file(mode))
    return [(f, lib.text(f)) for f in closure.files]


def context(files: list[tuple[str, str]], budget: int = MAX_CONTEXT_CHARS) -> str:
    """The ``{context}`` of a general prompt: one ``ntp4vc-context-file`` block per file,
    named by its file name (its repository path when two files share a name). Files are
    kept from the last (nearest the goal) back while their texts fit in ``budget``
    characters; the ones left out are named in one closing line."""
    counts = Counter(PurePosixPath(p).name for p, _ in files)
    kept: list[tuple[str, str]] = []
    used = 0
    for path, text in reversed(files):
        if used + len(text) > budget:
            break
        kept.insert(0, (path, text))
        used += len(text)
    dropped = files[:len(files) - len(kept)]
    blocks = [render(TEMPLATES["ntp4vc-context-file"], name=p if counts[PurePosixPath(p).name] > 1
                     else PurePosixPath(p).name, content=t.rstrip("\n")) for p, t in kept]
    if dropped:
        blocks.append(f"({len(dropped)} more library file(s) left out for the prompt's size: "
                      + ", ".join(PurePosixPath(p).name for p, _ in dropped) + ")")
    return "\n".join(blocks)


def messages(fetched, task: Task, mode: str, *, budget: int = MAX_CONTEXT_CHARS) -> list[dict]:
    """The first turn: one user message, the general prompt of ``mode`` with the task's
    library context (:func:`context`) and its file as the goal.

    Raises:
        NotImplementedError: ``why3`` (nothing is generated).
        OSError: a task or library file cannot be read.
    """
    _check(mode)
    goal = path_of(fetched, task.file(mode)).read_text(encoding="utf-8").rstrip("\n")
    body = render(TEMPLATES[f"ntp4vc-{mode}-general"], context=context(context_files(fetched, task, mode), budget),
                  goal=goal)
    return [{"role": "user", "content": body}]


def extract(completion: str, mode: str) -> str | None:
    """The proof in a completion by :data:`EXTRACTION_DOC`'s rule, or None."""
    text = strip_reasoning(completion)
    blocks = fenced_blocks(text)
    if blocks:
        return nonempty(pick_block(blocks, FENCE_LANGS.get(mode, ())).text)
    return nonempty(text.strip())


_COQ_ERROR = re.compile(r'^File "(?:\./)?([^"]+)", line (\d+), characters (\d+)-(\d+):\n(.*?)(?=^File "|^\[stderr\]|\Z)',
                        re.M | re.S)


def coq_errors(log: str, source: str = "candidate.v", limit: int = 3, theorem_line: int | None = None) -> list[str]:
    """Coq's error messages about ``source`` in a run's log (the record's ``log_tail``),
    each ``"line L, characters A-B:\\n<message>"`` with the whole message (coqc prints
    it over several lines: the environment, the term and its type); at most ``limit``.
    On ``theorem_line`` the characters are left out: the kit's candidate.v has the
    task file's lines, but on the theorem's line the admitted copy of the statement comes
    first (:meth:`harness.verifiers.rocq.Rocq.splice`)."""
    out = []
    for m in _COQ_ERROR.finditer(log):
        file, line, a, b, body = m.groups()
        body = body.strip()
        if file == source and "Error:" in body:
            where = f"line {line}" if theorem_line == int(line) else f"line {line}, characters {a}-{b}"
            out.append(f"{where}:\n{body}")
    return out[:limit]


def prover_error(record: Record, mode: str) -> str:
    """The ``{error}`` of a judged record: for Rocq, Coq's own error messages read from
    the run's log (:func:`coq_errors`; the kit's candidate.v has the task file's line
    numbers); else the verifier's recorded messages; the record's reason when the kit
    decided (an integrity check, a limit) or the prover left no message."""
    verifier = record.get("verifier") or {}
    if record["verdict"] == "invalid":
        if mode == "rocq":
            line = (verifier.get("options") or {}).get("theorem_line")
            found = coq_errors(verifier.get("log_tail") or "", theorem_line=int(line) if line else None)
            if found:
                return "\n".join(found)
        msgs = [m.strip() for m in verifier.get("messages") or [] if m and m.strip()]
        if msgs:
            return "\n".join(msgs)
    return record["reason"]


def feedback(record: Record, mode: str, *, previous: str | None = None) -> str | None:
    """The kit's repair message (``ntp4vc-repair``) with :func:`prover_error`, or None
    when the attempt verified or failed on the kit's side (``infra_error``). ``previous``
    is not used (the message does not quote the model).

    Raises:
        NotImplementedError: ``why3``.
    """
    _check(mode)
    if record["verdict"] in ("verified", "infra_error"):
        return None
    return render(TEMPLATES["ntp4vc-repair"], language=LANGUAGE_NAMES[mode], error=prover_error(record, mode))
