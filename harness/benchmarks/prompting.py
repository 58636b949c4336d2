"""What the benchmarks' generation protocols share: prompt templates read from a
benchmark's ``prompts.yaml`` (:func:`load_templates`), their rendering into chat messages
(:func:`render`, :func:`message`) and the pieces of the answer-extraction rules (a
completion's reasoning section dropped, :func:`strip_reasoning`; its fenced code blocks,
:func:`fenced_blocks`; a JSON object with a given key, :func:`json_object_with`).

A ``prompts.yaml`` is a YAML list, one mapping per template, with the fields of
:class:`harness.plugin.PromptTemplate`::

    - id: casp-repair                      # unique in the file
      source: "CASP paper, appendix 'Gemini Prompt', main prompt"   # or "verikit"
      role: user                           # system | user (default user)
      note: ""                             # how the kit's text differs from the source
      text: |-
        ... {placeholder} ...

Placeholders are ``str.format`` fields, so a literal brace of the paper's text is written
doubled (``{{`` renders ``{``); the recorded sha256 is that of the stored text. A template
whose source is ``verikit`` must say in its note why the kit wrote it.
"""

from __future__ import annotations

import json
import re
import string
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..plugin import PromptTemplate

_FIELDS = ("id", "source", "role", "note", "text")
#: The reason of every benchmark's ``invalid`` verdict for an empty candidate (a completion
#: from which the protocol's extraction rule took nothing: ``verikit generate`` writes it
#: with ``output`` "" rather than dropping it).
EMPTY_CANDIDATE = "the candidate is empty (no answer could be extracted from the model's completion)"
_ROLES = ("system", "user")


class TemplateFileError(ValueError):
    """A ``prompts.yaml`` is malformed; the message names the file and line."""


def load_templates(path: Path) -> dict[str, PromptTemplate]:
    """The templates of a ``prompts.yaml`` (format in the module doc), by id, in file order.

    Raises:
        TemplateFileError: not a YAML list of mappings, a missing or unknown field, an
            empty ``id``/``source``/``text``, an unknown role, a duplicate id, a ``verikit``
            template without a note, or a text that is not a valid ``str.format`` template
            (``path:line: ...``).
    """
    try:
        text = path.read_text(encoding="utf-8")
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        raise TemplateFileError(f"{path}:{line}: not valid YAML: {getattr(exc, 'problem', exc)}") from None
    if not isinstance(node, yaml.SequenceNode):
        raise TemplateFileError(f"{path}:1: expected a list of templates")
    out: dict[str, PromptTemplate] = {}
    for item in node.value:
        line = item.start_mark.line + 1
        if not isinstance(item, yaml.MappingNode):
            raise TemplateFileError(f"{path}:{line}: a template must be a mapping of {', '.join(_FIELDS)}")
        entry = yaml.safe_load(yaml.serialize(item))
        unknown = sorted(set(entry) - set(_FIELDS))
        if unknown:
            raise TemplateFileError(f"{path}:{line}: unknown field(s) {unknown}; the fields: {', '.join(_FIELDS)}")
        for key in ("id", "source", "text"):
            if not isinstance(entry.get(key), str) or not entry[key].strip():
                raise TemplateFileError(f"{path}:{line}: field {key!r} must be a non-empty string")
        role, note = entry.get("role", "user"), entry.get("note", "") or ""
        if role not in _ROLES:
            raise TemplateFileError(f"{path}:{line}: role {role!r}; one of {', '.join(_ROLES)}")
        if not isinstance(note, str):
            raise TemplateFileError(f"{path}:{line}: field 'note' must be a string")
        if entry["source"].strip() == "verikit" and not note.strip():
            raise TemplateFileError(f"{path}:{line}: template {entry['id']!r} is the kit's own (source verikit): "
                                    "its note must say why and how")
        if entry["id"] in out:
            raise TemplateFileError(f"{path}:{line}: duplicate template id {entry['id']!r}")
        try:
            parsed = list(string.Formatter().parse(entry["text"]))
        except ValueError as exc:
            raise TemplateFileError(f"{path}:{line}: template {entry['id']!r} is not a str.format template: {exc} "
                                    "(write a literal brace doubled)") from None
        odd = [f"{{{name}{'!' + conv if conv else ''}{':' + spec if spec else ''}}}"
               for _, name, spec, conv in parsed if name is not None and (not name.isidentifier() or spec or conv)]
        if odd:
            raise TemplateFileError(f"{path}:{line}: template {entry['id']!r} is not a str.format template of named "
                                    f"placeholders: {', '.join(odd)} (write a literal brace doubled)")
        out[entry["id"]] = PromptTemplate(id=entry["id"], source=entry["source"], text=entry["text"], role=role,
                                          note=note)
    return out


def fields(template: PromptTemplate) -> set[str]:
    """The placeholder names of a template (``{code}`` -> ``code``)."""
    return {name for _, name, _, _ in string.Formatter().parse(template.text) if name}


def render(template: PromptTemplate, **values: str) -> str:
    """The template's text with its placeholders filled.

    Raises:
        KeyError: a placeholder without a value, or a value for no placeholder (names it):
            the kit's code and the data file must agree.
    """
    want = fields(template)
    if set(values) != want:
        raise KeyError(f"template {template.id!r} has placeholders {sorted(want)}, given {sorted(values)}")
    return template.text.format(**values)


def message(template: PromptTemplate, **values: str) -> dict:
    """One chat message ``{"role", "content"}`` from a template (:func:`render`)."""
    return {"role": template.role, "content": render(template, **values)}


# ---- answer extraction


_THINK = re.compile(r"<think>.*?</think>", re.S)


def strip_reasoning(completion: str) -> str:
    """The completion without the reasoning section some models write into their answer
    (``<think> ... </think>``, as DeepSeek-R1 and Qwen3 do when the server does not split
    it off); an unclosed ``<think>`` drops everything after it (the answer never came)."""
    text = _THINK.sub("", completion)
    at = text.find("<think>")
    return text if at < 0 else text[:at]


@dataclass(frozen=True)
class CodeBlock:
    """One fenced code block of a completion: ``lang`` (the first word of its info
    string, lower case, "" when none) and ``text`` (its content, as CommonMark reads
    it: an unclosed fence runs to the end of the completion)."""

    lang: str
    text: str


def fenced_blocks(completion: str) -> list[CodeBlock]:
    """The fenced code blocks (```` ``` ```` or ``~~~``) of a completion in order, read by
    a CommonMark parser (``markdown-it-py``), so that fences inside list items, longer
    fences and unclosed fences are read as Markdown renders them."""
    from markdown_it import MarkdownIt

    out = []
    for tok in MarkdownIt("commonmark").parse(completion):
        if tok.type == "fence":
            lang = (tok.info or "").strip().split(maxsplit=1)
            out.append(CodeBlock(lang[0].lower() if lang else "", tok.content))
    return out


def pick_block(blocks: list[CodeBlock], langs: tuple[str, ...], *, last: bool = True) -> CodeBlock | None:
    """The last (or first) block whose language is one of ``langs``; with none, the last
    (first) block of any language; None when there is no block."""
    tagged = [b for b in blocks if b.lang in langs]
    pool = tagged or blocks
    if not pool:
        return None
    return pool[-1] if last else pool[0]


def json_object_with(completion: str, key: str) -> dict | None:
    """The first JSON object in ``completion`` that has ``key``: the content of a fenced
    block, else any ``{...}`` found by decoding from each ``{`` in turn. Strings may hold
    raw newlines and tabs (``json`` with ``strict=False``), as models often write them.
    None when no such object decodes (broken JSON)."""
    decoder = json.JSONDecoder(strict=False)
    candidates = [b.text for b in fenced_blocks(completion)] + [completion]
    for text in candidates:
        for m in re.finditer(r"\{", text):
            try:
                obj, _ = decoder.raw_decode(text, m.start())
            except ValueError:
                continue
            if isinstance(obj, dict) and key in obj:
                return obj
    return None


def nonempty(text: str | None) -> str | None:
    """``text`` when it holds more than white space, else None."""
    return text if text is not None and text.strip() else None
