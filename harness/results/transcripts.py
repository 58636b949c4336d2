"""A run's generation files: where the generation.json that run.json links is
(:func:`find_generation`: the linked path, else the copy a published or bundled run
carries, :func:`carried_generation_path`), its transcript (:func:`transcript_path`), the
files a carried copy takes along (:func:`carried_files`), and the conversations behind the
run's generated candidates (:func:`load_conversations`), as the HTML report shows them.

The transcript is ``verikit generate``'s ``transcript.jsonl`` (schemas/transcript.schema.json):
one JSON line per task, sample and turn with the messages the turn added to the chat
(``sent``), the completion (answer, reasoning, finish reason, usage, latency, attempts),
where it came from and when; a later line of the same turn replaces an earlier one.
Nothing here raises on a missing, unreadable or malformed file: it is said in ``notes``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ..datasets import sha256_file
from ..model import sha256_text

#: The transcript ``verikit generate`` writes beside generation.json (one JSON line per
#: task, sample and turn: the messages the turn added, the completion, where it came from).
TRANSCRIPT = "transcript.jsonl"
#: The folder of a carried copy of a run (its Hub folder, an artifact's expected run) that
#: holds the generation's files when run.json links them by an absolute path.
CARRIED_GENERATION = "generation"
#: Bad transcript lines named in a note (the count says how many in all).
MAX_NAMED_PROBLEMS = 5


def _plain_relative(path) -> str | None:
    """``path`` as a POSIX path when it is relative and stays below its base (no ``..``),
    else None."""
    p = Path(str(path or ""))
    return p.as_posix() if p.parts and not p.is_absolute() and ".." not in p.parts else None


def carried_generation_path(link: dict) -> str:
    """Where a carried copy of a run (its Hub folder, an artifact's expected run) keeps the
    generation.json that run.json ``generation`` links, relative to the run's folder: the
    link's own path when it is relative (a generation inside the run directory, e.g.
    ``reproduce --generate``'s ``generation/generation.json``: found there as it was), else
    ``generation/generation.json``. The transcript goes beside it (:func:`transcript_path`)."""
    return _plain_relative(link.get("path")) or f"{CARRIED_GENERATION}/generation.json"


def transcript_path(generation_json: Path, gen: dict | None) -> tuple[Path, str | None]:
    """A generation's transcript and its recorded sha256: generation.json's ``transcript``
    (``path`` relative to generation.json, ``sha256``), else :data:`TRANSCRIPT` beside it
    with no recorded hash (a generation.json made before it recorded one)."""
    rec = gen.get("transcript") if isinstance(gen, dict) else None
    rec = rec if isinstance(rec, dict) else {}
    return Path(generation_json).parent / (_plain_relative(rec.get("path")) or TRANSCRIPT), rec.get("sha256")


def transcript_state(generation_json: Path, gen: dict | None) -> tuple[Path, str | None]:
    """A generation's transcript (:func:`transcript_path`) and what is wrong with it:
    ``"missing"`` or ``"changed"`` (its sha256 is not the one generation.json records), or
    None: it checks, or generation.json records none to check against (made before it
    recorded one).

    Raises:
        OSError: the transcript exists but cannot be read.
    """
    transcript, sha256 = transcript_path(generation_json, gen)
    if not sha256:
        return transcript, None
    if not transcript.is_file():
        return transcript, "missing"
    return transcript, None if sha256_file(transcript) == sha256 else "changed"


def carried_files(run_dir: Path, run: dict) -> dict[str, Path]:
    """The generation files a carried copy of a run (Hub folder, artifact bundle) takes
    along: ``{path relative to the copy's run folder: file here}``, in this order:
    generation.json as :func:`find_generation` finds it (put at
    :func:`carried_generation_path`), then its transcript when there (beside it, under the
    name generation.json records). Empty for a run that links no generation.json or whose
    generation.json is not found."""
    link = run.get("generation")
    found, _ = find_generation(run_dir, run)
    if found is None:
        return {}
    target = carried_generation_path(link)
    out = {target: found}
    try:
        gen = json.loads(found.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        gen = None
    transcript, _ = transcript_path(found, gen)
    if transcript.is_file():
        out[(Path(target).parent / transcript.relative_to(found.parent)).as_posix()] = transcript
    return out


def find_generation(run_dir: Path, run: dict) -> tuple[Path | None, str | None]:
    """The generation.json a run links (run.json ``generation``: ``path``, ``sha256``) as
    found from ``run_dir``: the linked path (relative to ``run_dir``, or absolute), else
    the carried copy (:func:`carried_generation_path`); the first with the recorded sha256.

    Returns:
        ``(path, None)``; ``(None, why)`` when no file with the recorded sha256 is there
        (``why`` names the files looked at); ``(None, None)`` for a run that links none.
    """
    link = run.get("generation")
    if not isinstance(link, dict) or not link.get("path"):
        return None, None
    linked = Path(str(link["path"]))
    places = list(dict.fromkeys([linked if linked.is_absolute() else Path(run_dir) / linked,
                                 Path(run_dir) / carried_generation_path(link)]))
    other = []
    for place in places:
        try:
            data = place.read_bytes()
        except OSError:
            continue
        if sha256_text(data) == link.get("sha256"):
            return place, None
        other.append(place)
    if other:
        return None, f"{other[0]}: its sha256 is not the one run.json records for the generation's generation.json"
    return None, "generation.json not found (looked at " + ", ".join(map(str, places)) + ")"


@dataclass
class Conversations:
    """The conversations behind a run's generated candidates (:func:`load_conversations`).

    Attributes:
        model: the generation's served model (the generated candidates' ``model``), or None.
        generation: the generation.json read, or None; transcript: the transcript.jsonl
            beside it (None without a generation.json).
        chats: ``{(task_id, sample): [turn, ...]}``, turns in order; each turn a dict
            ``{"turn", "sent": [{"role", "content"}], "answer", "content", "reasoning",
            "batch", "finish_reason", "usage", "latency_s", "attempts", "response_model",
            "source", "error", "received_at", "verdict", "reason", "check"}``: the transcript
            line's fields (None when the transcript has no line for the turn; ``answer``
            ``text``, ``null`` for the server's ``content: null``, ``none`` for no
            completion), the verdict and reason from generation.json, ``check`` None or
            what does not match generation.json (no line for the turn, another request
            key, another completion text).
        notes: what to tell the reader: a missing or unreadable file (named), bad lines, a
            transcript whose sha256 is not the one generation.json records.
        readable: the transcript was read (the conversations can be shown).
    """

    model: str | None = None
    generation: Path | None = None
    transcript: Path | None = None
    chats: dict[tuple[str, int], list[dict]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    readable: bool = False


def _text(x) -> str | None:
    """A message's content as text: strings as they are, None as None, anything else
    (content parts) as JSON."""
    if x is None or isinstance(x, str):
        return x
    return json.dumps(x, ensure_ascii=False, sort_keys=True)


def parse_transcript(text: str) -> tuple[dict[tuple[str, int, int], dict], list[tuple[int, Exception]]]:
    """transcript.jsonl's lines by ``(task_id, sample, turn)``, the last line of a key
    winning, and the lines that are not transcript lines, ``[(line number, why)]`` (blank
    lines are neither). The one reading of the format: the generation that writes and
    resumes the file and the report that shows it both use it."""
    lines: dict[tuple[str, int, int], dict] = {}
    bad: list[tuple[int, Exception]] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            e = json.loads(line)
            key = (str(e["task_id"]), int(e["sample"]), int(e["turn"]))
        except (ValueError, KeyError, TypeError) as exc:
            bad.append((n, exc))
            continue
        lines[key] = e
    return lines, bad


def _transcript_lines(path: Path, sha256: str | None, notes: list[str]) -> dict[tuple[str, int, int], dict] | None:
    """transcript.jsonl's lines by (task_id, sample, turn), the last line of a key winning;
    None (and a note naming the file) when it cannot be read. Bad lines are skipped and
    named in ``notes``, as a file whose sha256 is not ``sha256`` (generation.json's)."""
    try:
        data = path.read_bytes()
        text = data.decode("utf-8", errors="replace")
    except FileNotFoundError:
        notes.append(f"{path}: missing; conversations are not shown (verikit generate writes {TRANSCRIPT} "
                     f"beside generation.json)")
        return None
    except OSError as exc:
        notes.append(f"{path}: cannot be read ({exc.strerror or exc}); conversations are not shown")
        return None
    if sha256 and sha256_text(data) != sha256:
        notes.append(f"{path}: its sha256 is not the one generation.json records (changed since the generation); "
                     f"each turn is still checked against generation.json's")
    lines, problems = parse_transcript(text)
    bad = [f"{n} ({type(exc).__name__})" for n, exc in problems]
    if bad:
        notes.append(f"{path}: {len(bad)} line(s) not a transcript line, skipped: line "
                     + ", ".join(bad[:MAX_NAMED_PROBLEMS]) + (", ..." if len(bad) > MAX_NAMED_PROBLEMS else ""))
    return lines


def _turn(t: int, line: dict | None, gen_turn: dict | None) -> dict:
    """One turn as the page's script shows it (see :class:`Conversations`)."""
    g = gen_turn or {}
    out = {"turn": t, "sent": [], "answer": "none", "content": None, "reasoning": None, "batch": g.get("batch"),
           "finish_reason": g.get("finish_reason"),
           "usage": g.get("usage"), "latency_s": g.get("latency_s"), "attempts": g.get("attempts"),
           "response_model": g.get("response_model"), "source": None, "error": g.get("error"), "received_at": None,
           "verdict": g.get("verdict"), "reason": g.get("reason"), "check": None}
    if line is None:
        out["check"] = f"no line for this turn in {TRANSCRIPT}"
        return out
    sent = line.get("sent") if isinstance(line.get("sent"), list) else []
    out["sent"] = [{"role": str(m.get("role")), "content": _text(m.get("content"))} if isinstance(m, dict)
                   else {"role": "?", "content": _text(m)} for m in sent]
    comp = line.get("completion") if isinstance(line.get("completion"), dict) else None
    if comp is not None:
        out.update({k: comp.get(k) for k in ("finish_reason", "usage", "latency_s", "attempts", "response_model")})
        out["content"], out["reasoning"] = _text(comp.get("content")), _text(comp.get("reasoning"))
        out["answer"] = "null" if out["content"] is None else "text"
    if isinstance(line.get("batch"), dict):
        out["batch"] = line["batch"]
    out.update(source=_text(line.get("source")), error=_text(line.get("error")),
               received_at=_text(line.get("received_at")))
    if gen_turn is None:
        out["check"] = "generation.json has no such turn"
    elif line.get("request_sha256") != g.get("request_sha256"):
        out["check"] = "its request key is not the one generation.json records for this turn"
    elif g.get("completion_sha256") and sha256_text(out["content"] or "") != g["completion_sha256"]:
        out["check"] = "its completion is not the text generation.json records (sha256) for this turn"
    return out


def load_conversations(run_dir: Path, run: dict) -> Conversations | None:
    """The conversations of a run's generated candidates: generation.json found by
    :func:`find_generation`, its transcript (:func:`transcript_path`), joined per task,
    sample and turn with generation.json's ``samples[].turns[]`` (verdict, reason; a transcript
    line's request key and completion are checked against the turn's). Never raises on
    a missing, unreadable or malformed file: the returned ``notes`` name it.

    Returns:
        None for a run that links no generation.json, else :class:`Conversations`.
    """
    path, why = find_generation(run_dir, run)
    if path is None and why is None:
        return None
    conv = Conversations()
    if path is None:
        conv.notes.append(f"{why}; conversations are not shown")
        return conv
    conv.generation = path
    try:
        gen = json.loads(path.read_text(encoding="utf-8"))
        conv.model = (gen.get("model") or {}).get("served")
        samples = [s for s in gen.get("samples") or [] if isinstance(s, dict)]
    except (OSError, ValueError, AttributeError) as exc:
        conv.notes.append(f"{path}: not a generation.json the report can read ({exc}); conversations are not shown")
        return conv
    conv.transcript, sha256 = transcript_path(path, gen)
    lines = _transcript_lines(conv.transcript, sha256, conv.notes)
    if lines is None:
        return conv
    conv.readable = True
    gen_turns: dict[tuple[str, int], dict[int, dict]] = {}
    for s in samples:
        gen_turns[(str(s.get("task_id")), s.get("sample"))] = {t["turn"]: t for t in s.get("turns") or []
                                                                if isinstance(t, dict) and isinstance(t.get("turn"), int)}
    for task_id, sample, t in lines:
        gen_turns.setdefault((task_id, sample), {}).setdefault(t, None)
    for key, turns in gen_turns.items():
        conv.chats[key] = [_turn(t, lines.get((*key, t)), turns[t]) for t in sorted(turns)]
    return conv
