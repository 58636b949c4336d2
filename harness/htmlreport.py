"""The HTML report of run directories: one self-contained static page per call.

``verikit report RUN [RUN...] --html FILE`` and the end of every ``verikit run``
(``report.html`` beside report.json) call :func:`write_html`. The page is rendered from a
run directory's own files (run.json, report.json, records.jsonl), after the checks of
``verikit validate`` (:func:`harness.report.check_run_dir`, whose problems are shown at the
top of the page); it is a view of them, not one of them: it is not listed in SHA256SUMS,
and ``publish`` and ``artifact bundle`` render it again from the checked files.

Self-contained: styles, the table script and the plots (matplotlib SVG, :mod:`harness.plots`)
are inline, nothing is fetched when the page is opened (``file://`` or the Hub's file
view). Deterministic: the same run directories give the same bytes (no render time).
Template: ``harness/templates/report.html.j2`` (Jinja2, autoescaped).

Every number of report.json the page shows carries ``data-value`` with the number as
written in report.json, so that a reader (and the tests) can check the page against it.

Conversations: for a run whose run.json links the generation.json of its predictions
(``verikit generate``), each generated candidate's row of the per-task table gets a
"conversation" button. The transcripts (``transcript.jsonl`` beside generation.json,
:func:`load_conversations`) are embedded once per run as JSON (``<script
type="application/json">``, ``<``, ``>`` and ``&`` written as ``\\u`` escapes) and a
conversation is built into the page only when its button is clicked, with text nodes
only (the model's text is never parsed as HTML). Where the page finds generation.json:
:func:`find_generation` (the linked path, else the copy a published or bundled run
carries, :func:`carried_generation_path`).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import jinja2

from . import __version__, plots, registry
from .metrics import pass_at_k_curves
from .model import VERDICTS, Record, sha256_text
from .plugin import Bars, Block, Scatter, Table, Text, VerdictBars
from .report import read_checked_run_dir
from .results import SUMS, ValidationError, load_records, record_identity, record_outcome, run_id_of, write_text_atomic

TEMPLATES = Path(__file__).resolve().parent / "templates"
#: The transcript ``verikit generate`` writes beside generation.json (one JSON line per
#: task, sample and turn: the messages the turn added, the completion, where it came from).
TRANSCRIPT = "transcript.jsonl"
#: The folder of a carried copy of a run (its Hub folder, an artifact's expected run) that
#: holds the generation's files when run.json links them by an absolute path.
CARRIED_GENERATION = "generation"
#: Bad transcript lines named in the page's note (the count says how many in all).
MAX_NAMED_PROBLEMS = 5


class ReportError(ValueError):
    """A run directory that cannot be rendered: a missing or unreadable run.json /
    report.json / records.jsonl (the message names the file, and the line for JSON)."""


@dataclass
class RunView:
    """One run directory as the report shows it.

    Attributes:
        path: the directory; run, report: run.json and report.json; records: records.jsonl.
        problems: what ``verikit validate`` finds (empty: valid).
        run_id: the id ``publish`` gives the run (finish time + SHA256SUMS hash), or None
            when SHA256SUMS is missing.
    """

    path: Path
    run: dict
    report: dict
    records: list[Record]
    problems: list[str] = field(default_factory=list)
    run_id: str | None = None


def load_view(path: Path) -> RunView:
    """Read a run directory for the report.

    Raises:
        ReportError: not a directory, or run.json / report.json / records.jsonl missing,
            unreadable or not JSON (names the file and line).
    """
    path = Path(path)
    if not path.is_dir():
        raise ReportError(f"{path}: not a run directory")
    docs = {}
    for name in ("run.json", "report.json"):
        f = path / name
        try:
            docs[name] = json.loads(f.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ReportError(f"{f}: missing (not a run directory made by verikit)") from None
        except json.JSONDecodeError as exc:
            raise ReportError(f"{f}:{exc.lineno}: not valid JSON: {exc.msg}") from None
        except OSError as exc:
            raise ReportError(f"{f}: {exc.strerror}") from None
    try:
        problems, records = read_checked_run_dir(path)  # one reading of records.jsonl for both
        if records is None:  # a line that is not a record: load_records names it
            load_records(path / "records.jsonl")
    except (ValidationError, OSError) as exc:
        raise ReportError(str(exc)) from None
    try:
        rid = run_id_of(path, docs["run.json"]) if (path / SUMS).exists() else None
    except (KeyError, ValueError, TypeError):
        rid = None
    return RunView(path, docs["run.json"], docs["report.json"], records, problems, rid)


def task_differences(a: list[dict], b: list[dict]) -> list[dict]:
    """Task-by-task differences between two runs' records, matched by what they judge
    (mode, task, model, sample, origin: :func:`harness.results.record_identity`), whatever
    the toolchain.

    Returns:
        ``[{"mode", "task_id", "model", "sample", "change", "a", "b"}]`` sorted by identity,
        ``change`` one of ``verdict`` (the verdict changed, goals maybe too), ``goals``
        (same verdict, other proved/total goal counts), ``only in A``, ``only in B``;
        ``a``/``b``: ``{"verdict", "goals"}`` (goals as ``"proved/total"`` or ``""``), or
        None for the run without the record. Records that agree are not listed.
    """
    ra = {record_identity(r): r for r in a}
    rb = {record_identity(r): r for r in b}
    rows = []
    for ident in sorted(set(ra) | set(rb), key=str):
        sides = []
        for recs in (ra, rb):
            r = recs.get(ident)
            if r is None:
                sides.append(None)
                continue
            o = record_outcome(r)
            goals = "" if o["goals.total"] is None else f"{o['goals.proved']}/{o['goals.total']}"
            sides.append({"verdict": o["verdict"], "goals": goals})
        if sides[0] is None or sides[1] is None:
            change = "only in B" if sides[0] is None else "only in A"
        elif sides[0]["verdict"] != sides[1]["verdict"]:
            change = "verdict"
        elif sides[0]["goals"] != sides[1]["goals"]:
            change = "goals"
        else:
            continue
        mode, task, model, sample, _ = ident
        rows.append({"mode": mode, "task_id": task, "model": model, "sample": sample, "change": change,
                     "a": sides[0], "b": sides[1]})
    return rows


def fmt_value(v) -> str:
    """A published or reproduced figure as text: ``passed/total (percent %)`` for counts,
    ``-`` for None, numbers and strings as they are, other objects as compact JSON."""
    if v is None:
        return "-"
    if isinstance(v, dict) and "total" in v:
        head = f"{v['passed']}/{v['total']}" if "passed" in v else str(v["total"])
        return head + (f" ({v['percent']} %)" if v.get("percent") is not None else "")
    if isinstance(v, (int, float, str)):
        return str(v)
    return json.dumps(v, sort_keys=True)


def _pct(x) -> str:
    return "-" if x is None else f"{x * 100:.1f} %"


def _is_canary(model: str) -> bool:
    return model.startswith("canary:")


def _provenance(v: RunView) -> list[tuple[str, str]]:
    run = v.run
    kit = run.get("kit") or {}
    ds = run.get("dataset") or {}
    src = ds.get("source") or {}
    img = run.get("image") or {}
    rows = [
        ("run directory", str(v.path)),
        ("run id (publish)", v.run_id or "no SHA256SUMS"),
        ("status", str(run.get("status"))),
        ("command", " ".join(map(str, run.get("command") or []))),
        ("started / finished", f"{run.get('started_at')} / {run.get('finished_at')}"),
        ("kit", f"verikit {kit.get('version')} " + (f"at {kit['git_commit']}" if kit.get("git_commit") else
                                                     "installed from a wheel" if kit.get("installed") == "wheel" else
                                                     "at an unknown commit")
                + (" (dirty checkout)" if kit.get("git_dirty") else "")),
        ("benchmark", f"{run.get('benchmark')} (version {run.get('benchmark_version')}), modes "
                      + ", ".join(run.get("modes") or [])),
        ("dataset", f"{ds.get('name')}: {src.get('kind')} {src.get('repo') or src.get('path') or ''} "
                    f"at {src.get('revision') or 'unpinned'}"),
        ("dataset files", f"{ds.get('n_files')} files, sha256 of the file list {ds.get('files_sha256')}"
                          + (f"; unpinned: {', '.join(ds['unpinned'])}" if ds.get("unpinned") else "")),
        ("predictions", "none (gold / bundled candidates)" if not run.get("predictions") else
         f"{run['predictions'].get('path')} sha256 {run['predictions'].get('sha256')} "
         f"({run['predictions'].get('candidates')} candidates, {run['predictions'].get('bad_lines')} bad lines)"),
        ("sandbox", f"{run.get('sandbox')}" + (f", image {img.get('ref')} ({img.get('id')})" if img else "")),
        ("limits per job", ", ".join(f"{k} {val}" for k, val in (run.get("limits") or {}).items())),
        ("seeds", ", ".join(f"{k} {val}" for k, val in (run.get("seeds") or {}).items())),
        ("jobs", ", ".join(f"{k} {val}" for k, val in (run.get("counts") or {}).items())
         + f"; {run.get('jobs_parallel')} in parallel"),
        ("host", ", ".join(f"{k} {val}" for k, val in (run.get("host") or {}).items())),
    ]
    if run.get("adaptation"):
        rows.append(("adaptation", json.dumps(run["adaptation"], sort_keys=True)))
    return rows


def _toolchains(v: RunView) -> list[dict]:
    out = []
    for t in v.run.get("toolchains") or []:
        tools = [{"tool": name, "probed": d.get("version"), "published": d.get("published"), "match": d.get("match"),
                  "raw": d.get("raw")} for name, d in sorted((t.get("tools") or {}).items())]
        out.append({"name": t.get("name"), "flavor": t.get("flavor"), "fingerprint": t.get("fingerprint"),
                    "pin_match": t.get("pin_match"), "image": t.get("image"), "image_digest": t.get("image_digest"),
                    "sandbox": t.get("sandbox"), "tools": tools})
    return out


def _metrics(v: RunView, metric_name: str) -> list[dict]:
    """Per mode: the table rows (models, then the overall row) and the two plots."""
    out = []
    seed = v.report.get("bootstrap_seed", 0)
    curves = pass_at_k_curves(v.records, seed=seed)
    for mode, m in (v.report.get("metrics") or {}).items():
        ks = sorted({int(k) for c in m["per_model"].values() for k in (c.get("pass_at_k") or {})})
        rows = []
        for model, c in sorted(m["per_model"].items(), key=lambda mc: (_is_canary(mc[0]), mc[0])):
            rows.append({"model": model, "canary": _is_canary(model), "c": c, "rate": _pct(c.get("rate")),
                         "ci": "-" if not c.get("ci95") else f"{c['ci95'][0] * 100:.1f}–{c['ci95'][1] * 100:.1f} %",
                         "pass": [(k, (c.get("pass_at_k") or {}).get(str(k))) for k in ks]})
        overall = m["overall"]
        counts = {model: c["by_verdict"] for model, c in m["per_model"].items() if not _is_canary(model)}
        bars = plots.verdict_bars(counts, title=f"verdicts per model ({mode}, canaries apart)",
                                  verdicts=list(VERDICTS)) if counts else None
        mc = curves.get(mode) or {}
        curve = plots.pass_at_k_curves(mc, metric=metric_name,
                                       title=f"{metric_name} with 95 % bootstrap CI over tasks ({mode})") if mc else None
        out.append({"mode": mode, "ks": ks, "rows": rows, "overall": overall, "overall_rate": _pct(overall.get("rate")),
                    "bars": bars, "curve": curve, "excluded": m.get("excluded") or {}})
    return out


def _reproduction(v: RunView) -> dict | None:
    rep = v.report.get("reproduction")
    if not rep:
        return None
    figures = []
    for f in rep.get("figures") or []:
        ci = f.get("ci")
        figures.append({"name": f.get("name") or f"{f.get('table')}.{f.get('row')}.{f.get('column')}",
                        "table": f.get("table"), "row": f.get("row"), "column": f.get("column"),
                        "published": fmt_value(f.get("published")), "reproduced": fmt_value(f.get("reproduced")),
                        "status": f.get("status"), "notes": f.get("notes") or [], "criterion": f.get("criterion"),
                        "basis": f.get("basis") or "exact",  # absent: a report made before basis was recorded
                        "ci": f"[{fmt_value(ci[0])}, {fmt_value(ci[1])}]" if ci else "-",
                        "ci_level": f.get("ci_level")})
    return {"summary": rep.get("summary") or {}, "figures": figures, "notes": rep.get("notes") or []}


def _generation(v: RunView) -> dict | None:
    """report.json's ``generation`` section as table rows (pass@k and fixes with their CIs),
    or None for a run whose predictions ``verikit generate`` did not make."""
    gen = v.report.get("generation")
    if not gen:
        return None
    rows = []
    for mode, models in gen.get("models", {}).items():
        for model, g in models.items():
            fix = g.get("fixes")
            rows.append({"mode": mode, "model": model, "tasks": g["tasks"], "spt": g["samples_per_task"],
                         "pass": [(k, e["value"], e["ci"]) for k, e in g["pass_at_k"].items()],
                         "fixes": fix, "no_answer": g.get("no_answer", 0)})
    return {"rows": rows, "generation_json": gen["generation_json"], "bootstrap": gen["bootstrap"],
            "fixes_definition": gen["fixes_definition"]}


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


def carried_files(run_dir: Path, run: dict) -> dict[str, Path]:
    """The generation files a carried copy of a run (Hub folder, artifact bundle) takes
    along: ``{path relative to the copy's run folder: file here}``, in this order:
    generation.json as :func:`find_generation` finds it (put at
    :func:`carried_generation_path`), then its transcript when there (beside it, under the
    name generation.json records). Empty for a
    run that links no generation.json or whose generation.json is not found."""
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
            completion), the verdict and
            reason from generation.json, ``check`` None or what does not match
            generation.json (no line for the turn, another request key, another
            completion text).
        notes: what the page says of them: a missing or unreadable file (named), bad lines.
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
    lines: dict[tuple[str, int, int], dict] = {}
    bad = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            e = json.loads(line)
            key = (str(e["task_id"]), int(e["sample"]), int(e["turn"]))
        except (ValueError, KeyError, TypeError) as exc:
            bad.append(f"{n} ({type(exc).__name__})")
            continue
        lines[key] = e
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
    :func:`find_generation`, its transcript (:func:`transcript_path`), joined per task, sample and
    turn with generation.json's ``samples[].turns[]`` (verdict, reason; a transcript
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


def _json_script(data) -> str:
    """``data`` as JSON safe inside ``<script type="application/json">``: ``<``, ``>`` and
    ``&`` written as ``\\u`` escapes, so no text of it can close the element."""
    return (json.dumps(data, ensure_ascii=False, sort_keys=True)
            .replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))


def _conversations(v: RunView, tasks: list[dict]) -> dict | None:
    """The page's conversations of a run: sets ``conv`` (an index into the embedded list)
    on each generated candidate's row of ``tasks``; returns ``{"notes", "json", "count",
    "generation", "transcript"}``, or None for a run that links no generation.json."""
    conv = load_conversations(v.path, v.run)
    if conv is None:
        return None
    shown = []
    if conv.readable:
        for row in tasks:
            chat = conv.chats.get((row["task_id"], row["sample"]))
            if row["model"] == conv.model and str(row["origin"]).startswith("predictions:") and chat is not None:
                row["conv"] = len(shown)
                shown.append({"task_id": row["task_id"], "model": row["model"], "sample": row["sample"],
                              "mode": row["mode"], "turns": chat})
    return {"notes": conv.notes, "json": _json_script(shown), "count": len(shown),
            "generation": str(conv.generation) if conv.generation else None,
            "transcript": str(conv.transcript) if conv.transcript else None}


def _comparison(v: RunView) -> dict | None:
    comp = v.report.get("comparison") or []
    if not comp:
        return None
    rows = [{"task_id": c["task_id"], "mode": c["mode"], "model": c["model"], "field": d["field"],
             "published": fmt_value(d["published"]), "reproduced": fmt_value(d["reproduced"]),
             "explanation": d["explanation"], "agree": c["agree"]}
            for c in comp for d in c.get("differences") or []]
    return {"n": len(comp), "agree": sum(1 for c in comp if c["agree"]), "rows": rows}


def _tasks(v: RunView) -> list[dict]:
    rows = []
    for r in v.records:
        c = r["candidate"]
        g = r.get("goals") or {}
        rows.append({"task_id": r["task_id"], "mode": r["mode"], "model": c["model"], "sample": c["sample"],
                     "origin": c["origin"], "verdict": r["verdict"], "reason": r.get("reason") or "",
                     "goals": "" if g.get("total") is None else f"{g.get('proved')}/{g.get('total')}",
                     "wall_s": (r.get("timings") or {}).get("wall_s"), "canary": _is_canary(c["model"]),
                     "conv": None})
    return rows


def _integrity(v: RunView) -> dict:
    failed: dict[str, list[str]] = defaultdict(list)
    ran: Counter = Counter()
    for r in v.records:
        for chk in r.get("checks") or []:
            ran[chk["name"]] += 1
            if not chk.get("ok"):
                failed[chk["name"]].append(f"{r['task_id']} / {r['candidate']['model']}: {chk.get('detail', '')}")
    checks = [{"name": n, "ran": ran[n], "failed": len(failed[n]), "examples": failed[n][:5]} for n in sorted(ran)]
    rejected = [{"task_id": r["task_id"], "model": r["candidate"]["model"], "mode": r["mode"], "reason": r.get("reason")}
                for r in v.records if r["verdict"] == "rejected" and not _is_canary(r["candidate"]["model"])]
    vacuous = sum(1 for r in v.records if r.get("vacuous"))
    can = v.report.get("canaries") or {}
    return {"canaries": can.get("results") or [], "canaries_ok": can.get("ok", True), "checks": checks,
            "rejected": rejected, "vacuous": vacuous}


def _times(v: RunView) -> str | None:
    times: dict[str, list[float]] = defaultdict(list)
    for r in v.records:
        w = (r.get("timings") or {}).get("wall_s")
        if w is not None and r["verdict"] != "infra_error":
            times[f"{(r.get('verifier') or {}).get('name') or r['toolchain']['name']} / {r['mode']}"].append(w)
    if not times:
        return None
    return plots.time_distribution(dict(sorted(times.items())), title="wall time per job, per verifier and mode")


# --- the benchmark's own blocks (harness.plugin: Table, Bars, VerdictBars, Scatter, Text),
# rendered here as {"title", "svg", "table": {"head", "rows"}, "text"}.

def _render_block(block: Block) -> dict:
    if isinstance(block, Table):
        return {"title": block.title, "table": {"head": block.head, "rows": block.rows}}
    if isinstance(block, Bars):
        return {"title": block.title, "svg": plots.grouped_bars(block.values, ylabel=block.ylabel,
                                                                title=block.plot_title, ymax=block.ymax)}
    if isinstance(block, VerdictBars):
        return {"title": block.title, "svg": plots.verdict_bars(block.counts, title=block.plot_title,
                                                                verdicts=list(VERDICTS))}
    if isinstance(block, Scatter):
        return {"title": block.title, "svg": plots.scatter(block.points, xlabel=block.xlabel, ylabel=block.ylabel,
                                                           title=block.plot_title)}
    if isinstance(block, Text):
        return {"title": block.title, "text": block.text}
    raise ReportError(f"unknown report block {type(block).__name__}")


def _benchmark(name: str | None):
    """The registered benchmark of a run, or None (a run of a plugin not installed here
    is shown without its own blocks, its pass@k under that name)."""
    try:
        return registry.benchmark(name) if name else None
    except registry.UnknownName:
        return None


def _context(v: RunView, index: int) -> dict:
    bench = v.report.get("benchmark") or v.run.get("benchmark")
    plugin = _benchmark(bench)
    metric = plugin.k_metric if plugin else "pass@k"
    tasks = _tasks(v)
    return {"index": index, "anchor": f"run{index}", "benchmark": bench, "dataset": v.report.get("dataset"),
            "view": v, "provenance": _provenance(v), "toolchains": _toolchains(v), "metrics": _metrics(v, metric),
            "k_metric": metric, "reproduction": _reproduction(v), "comparison": _comparison(v),
            "generation": _generation(v),
            "tasks": tasks, "conversations": _conversations(v, tasks), "integrity": _integrity(v), "times": _times(v),
            "blocks": [{"title": None, "svg": None, "table": None, "text": None, **_render_block(b)}
                       for b in (plugin.report_blocks(v.report, v.records) if plugin else [])],
            "notes": v.report.get("notes") or [],
            "report_toolchains": v.report.get("toolchains") or [], "infra_errors": v.report.get("infra_errors", 0)}


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["pct"] = _pct
    env.filters["num"] = lambda x: "-" if x is None else (f"{x:.4g}" if isinstance(x, float) else str(x))
    env.filters["jsonval"] = lambda x: json.dumps(x)
    return env


def render_html(views: list[RunView], *, compare: bool = False) -> str:
    """The HTML page (text) for one or more runs; with ``compare`` (exactly two runs), a
    first section lists the task-by-task differences of :func:`task_differences`.

    Raises:
        ReportError: ``compare`` with other than two runs.
    """
    if compare and len(views) != 2:
        raise ReportError(f"--compare takes exactly two runs, got {len(views)}")
    diffs = task_differences(views[0].records, views[1].records) if compare else None
    title = " vs ".join(f"{v.report.get('benchmark')} / {v.report.get('dataset')}" for v in views)
    return _environment().get_template("report.html.j2").render(
        title=title, runs=[_context(v, i) for i, v in enumerate(views)], compare=diffs,
        compare_names=[str(v.path) for v in views], kit_version=__version__, verdicts=list(VERDICTS),
        colours=plots.VERDICT_COLOURS)


def write_html(run_dirs: list[Path], out: Path, *, compare: bool = False) -> Path:
    """Render run directories to one HTML file (written atomically) and return its path.

    Raises:
        ReportError: a run directory cannot be read (see :func:`load_view`), or
            ``compare`` with other than two runs.
    """
    views = [load_view(Path(d)) for d in run_dirs]
    write_text_atomic(Path(out), render_html(views, compare=compare))
    return Path(out)
