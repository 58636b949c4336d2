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
"conversation" button. The run's transcripts (read by
:func:`harness.results.transcripts.load_conversations`) are embedded once per run as JSON
(``<script type="application/json">``, ``<``, ``>`` and ``&`` written as ``\\u``
escapes), and a conversation is built into the page only when its button is clicked,
with text nodes only (the model's text is never parsed as HTML).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import jinja2

from . import __version__, plots, registry
from .metrics import pass_at_k_curves
from .model import VERDICTS, Record
from .plugin import Bars, Block, Scatter, Table, Text, VerdictBars
from .report import read_checked_run_dir
from .results import (SUMS, ValidationError, is_canary, load_records, record_identity, record_outcome, run_id_of,
                      write_text_atomic)
from .results.transcripts import load_conversations

TEMPLATES = Path(__file__).resolve().parent / "templates"


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
        for model, c in sorted(m["per_model"].items(), key=lambda mc: (is_canary(mc[0]), mc[0])):
            rows.append({"model": model, "canary": is_canary(model), "c": c, "rate": _pct(c.get("rate")),
                         "ci": "-" if not c.get("ci95") else f"{c['ci95'][0] * 100:.1f}–{c['ci95'][1] * 100:.1f} %",
                         "pass": [(k, (c.get("pass_at_k") or {}).get(str(k))) for k in ks]})
        overall = m["overall"]
        counts = {model: c["by_verdict"] for model, c in m["per_model"].items() if not is_canary(model)}
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
                     "wall_s": (r.get("timings") or {}).get("wall_s"), "canary": is_canary(c["model"]),
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
                for r in v.records if r["verdict"] == "rejected" and not is_canary(r["candidate"]["model"])]
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
