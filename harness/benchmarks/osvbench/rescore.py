"""Rescoring OSVBench's published run (``verikit reproduce osvbench``).

Upstream's ``stats.py`` rule on the pinned verifier log (``outputs/output_claude3sonnet_Spec``)
gives the paper's Claude-3.5-sonnet figures (Tables 1 and 2, the upstream README row); the
kit also classifies every log entry finer (:func:`harness.verifiers.hyperkernel.classify`):
the paper's "syntax error" is in truth a Python exception class (or one real
SyntaxError), "semantic error" a Z3 counterexample. No tool runs: a rescoring.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from ...model import sha256_text
from ...plugin import Reproduction
from ...verifiers import hyperkernel
from .convert import load_results
from .prompts import Prompts
from .spec import integrity_scan
from .tasks import (BENCHMARK_JSON, BUG_TYPES, CORRECT, LOG, RESULTS_JSON, LoadedTasks, ManifestError, Task,
                    has_file, load_benchmark, path_of)

NAME = "osvbench"
#: Sections of report.json the rescoring adds (:attr:`harness.plugin.Reproduction.sections`).
SECTION = "published_run"


def _pct(passed: int, total: int) -> float | None:
    return round(100.0 * passed / total, 2) if total else None


def _agg(passed: int, total: int) -> dict:
    return {"passed": passed, "total": total, "percent": _pct(passed, total)}


def read_log(fetched, tasks: list[Task], rel: str = LOG) -> list[hyperkernel.LogEntry]:
    """The entries of an upstream verifier log, one per task in benchmark order.

    Raises:
        ManifestError (``file:line``): not such a log, a different number of entries than
            tasks (with a diagnosis when the log holds several appended runs), or an entry
            whose syscall is not the task's at that position (upstream's stats.py pairs
            entries and tasks by position).
    """
    path = path_of(fetched, rel)
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        entries = hyperkernel.split_upstream_log(text, rel)
    except hyperkernel.LogError as exc:
        raise ManifestError(str(exc)) from exc
    if len(entries) != len(tasks):
        runs = hyperkernel.repeated_runs(entries, [t.syscall for t in tasks])
        hint = (f"; it holds {runs} copies of the same run: upstream's runner appends to its log, so a rerun "
                f"doubles it" if runs > 1 else "")
        raise ManifestError(f"{rel}: {len(entries)} entries for {len(tasks)} tasks{hint}")
    for e, t in zip(entries, tasks):
        if e.syscall != t.syscall:
            raise ManifestError(f"{rel}:{e.line}: entry {e.index} is for {e.syscall}, but task {t.task_id} "
                                f"({BENCHMARK_JSON}:{t.line}) is {t.syscall}")
    return entries


def _kit_class(c: hyperkernel.Classification) -> str:
    """The paper's category from the kit's finer cause."""
    if c.kind == "verified":
        return "pass"
    if c.kind in ("counterexample", "timeout"):
        return "semantic"
    return "syntax"


def rescore(fetched, bench: LoadedTasks | None = None, log: str = LOG) -> dict:
    """Upstream's stats.py on the pinned log, plus the finer classification of every entry.

    Returns a dict:
        ``overall`` (pass), ``errors`` ({syntax, semantic}), each ``{passed, total,
        percent}`` (``passed`` = the count); ``by_bug_type`` (Table 1 columns with
        upstream's substring rule, denominators counted the same way; key ``correct``
        included); ``by_bug_type_normalized`` (misspellings read as meant: not a
        published figure); ``by_bug_num`` (upstream's rule: Figure 4, not printed in the
        paper); ``finer`` ({upstream class: {cause: n}}); ``raised_in`` ({class:
        {origin: n}}); ``per_task`` (list of dicts: task_id, syscall, upstream, kit,
        cause, kind, exception, message, raised_in, spec_line, outcome, line);
        ``checks`` (list of ``{check, ok, detail}``); ``quirks`` (list of str).
    """
    bench = bench or load_benchmark(fetched)
    tasks = bench.tasks
    entries = read_log(fetched, tasks, log)
    text = path_of(fetched, log).read_text(encoding="utf-8", errors="replace")
    pieces = hyperkernel.upstream_split(text)
    per_task = []
    for e, t in zip(entries, tasks):
        c = hyperkernel.classify(e.text, t.syscall)
        per_task.append({"task_id": t.task_id, "syscall": t.syscall, "line": e.line, "upstream": c.upstream,
                         "kit": _kit_class(c), "cause": c.cause, "kind": c.kind, "exception": c.exception,
                         "message": c.message, "raised_in": c.raised_in, "spec_line": c.spec_line,
                         "outcome": c.outcome, "z3_version": c.z3_version})
    up = Counter(p["upstream"] for p in per_task)
    n = len(tasks)
    passed = {p["task_id"] for p in per_task if p["upstream"] == "pass"}
    by_type: dict[str, dict] = {}
    by_norm: dict[str, dict] = {}
    for col in BUG_TYPES + (CORRECT,):
        members = [t for t in tasks if col in t.upstream_bug_columns]
        by_type[col] = _agg(sum(t.task_id in passed for t in members), len(members))
        norm = [t for t in tasks if (t.correct if col == CORRECT else col in t.bug_types)]
        by_norm[col] = _agg(sum(t.task_id in passed for t in norm), len(norm))
    by_num: dict[str, dict] = {}
    for k in range(1, 6):
        # stats.py: if "1" in bug_num ... elif "2" ... (first digit found wins)
        members = [t for t in tasks if t.bug_num_raw is not None
                   and next((d for d in "12345" if d in t.bug_num_raw), None) == str(k)]
        by_num[str(k)] = _agg(sum(t.task_id in passed for t in members), len(members))
    finer: dict[str, Counter] = defaultdict(Counter)
    raised: dict[str, Counter] = defaultdict(Counter)
    for p in per_task:
        finer[p["upstream"]][p["cause"]] += 1
        if p["raised_in"] and p["upstream"] == "syntax":
            raised[p["upstream"]][p["raised_in"]] += 1
    checks = [
        {"check": "one log entry per task, in benchmark order (stats.py pairs them by position)", "ok": True,
         "detail": f"{len(entries)} entries, syscalls match the {n} tasks"},
        {"check": "the kit's line-anchored split gives the same entries as upstream's split('Syscall ')",
         "ok": len(pieces) == len(entries) and all(p == e.text for p, e in zip(pieces, entries)),
         "detail": f"upstream split: {len(pieces)} pieces"},
        {"check": "no entry skipped by upstream's ':' rule", "ok": None not in up,
         "detail": f"{up.get(None, 0)} skipped"},
        {"check": "pass + syntax + semantic == number of tasks (stats.py's assertion)",
         "ok": up["pass"] + up["syntax"] + up["semantic"] == n,
         "detail": f"{up['pass']} + {up['syntax']} + {up['semantic']} = {up['pass'] + up['syntax'] + up['semantic']}"},
        {"check": "the kit's finer cause gives upstream's class for every entry",
         "ok": all(p["kit"] == p["upstream"] for p in per_task),
         "detail": ", ".join(f"task {p['task_id']}: kit {p['kit']} vs upstream {p['upstream']}"
                             for p in per_task if p["kit"] != p["upstream"]) or "all agree"},
        {"check": "the finer causes add up to upstream's totals",
         "ok": all(sum(finer[k].values()) == up[k] for k in hyperkernel.UPSTREAM_CLASSES),
         "detail": "; ".join(f"{k}: {sum(finer[k].values())} = {up[k]}" for k in hyperkernel.UPSTREAM_CLASSES)},
    ]
    return {"overall": _agg(up["pass"], n),
            "errors": {"syntax": _agg(up["syntax"], n), "semantic": _agg(up["semantic"], n)},
            "by_bug_type": by_type, "by_bug_type_normalized": by_norm, "by_bug_num": by_num,
            "finer": {k: dict(finer[k].most_common()) for k in hyperkernel.UPSTREAM_CLASSES},
            "raised_in": {k: dict(v.most_common()) for k, v in raised.items()},
            "per_task": per_task, "checks": checks, "quirks": [str(q) for q in bench.quirks]}


def check_results_json(fetched, tasks: list[Task], rel: str = RESULTS_JSON) -> dict:
    """Facts about the published specs: ``{"tasks", "specs_per_task" (Counter as dict),
    "keys_match" (every key i names task i's syscall), "rejected" (task_id -> findings
    of :func:`integrity_scan`)}``. Raises ManifestError (file) when not upstream's shape."""
    data = load_results(path_of(fetched, rel), rel)
    per = Counter()
    match = True
    rejected = {}
    for i, t in enumerate(tasks):
        entry = data.get(str(i))
        if not isinstance(entry, dict):
            raise ManifestError(f"{rel}: no entry for task {i}")
        match &= list(entry) == [t.syscall]
        specs = entry.get(t.syscall)
        specs = specs if isinstance(specs, list) else []
        per[len(specs)] += 1
        for s in specs:
            found = integrity_scan(s)
            if found:
                rejected[t.task_id] = found
    return {"tasks": len(data), "specs_per_task": {str(k): v for k, v in sorted(per.items())},
            "keys_match": match, "rejected": rejected}



def load_published() -> dict:
    """``results/published/osvbench.json``: the paper's figures, each with its source.

    Raises:
        OSError, json.JSONDecodeError: the file is missing or not JSON.
    """
    from .. import published_figures

    return published_figures(NAME)


def _figure_value(scores: dict, metric: dict) -> dict:
    scope, key = metric["scope"], metric.get("key")
    if scope == "overall":
        return scores["overall"]
    if scope == "bug_type":
        return scores["by_bug_type"][key]
    if scope == "error":
        return scores["errors"][key]
    raise ValueError(f"unknown figure scope {scope!r}")


def reproduce(fetched, run: dict | None = None, *, published: dict | None = None) -> Reproduction:
    """Published vs reproduced for every figure of ``results/published/osvbench.json``
    (16: Table 1's seven columns, Table 2's two error rates, the README's seven columns),
    rescored from the published run (``run`` is None: no job runs).

    Returns:
        :class:`harness.plugin.Reproduction`: ``figures`` ``[{name, table, row, column,
        published, reproduced, equal, status, notes}]`` (equality exact on counts and on
        percentages to 2 decimals); a failed consistency check is added as a figure with
        status ``differs`` (and its ``criterion``), so the reproduction fails loudly;
        ``notes`` (quirks, the rule, the finer causes...); ``sections[SECTION]``: the finer
        classification (``finer``, ``raised_in``, ``by_bug_type_normalized``,
        ``by_bug_num``, ``per_task``), the consistency ``checks`` and the ``quirks``.

    Raises:
        ManifestError: a pinned file is malformed (``file:line``).
    """
    published = published or load_published()
    bench = load_benchmark(fetched)
    scores = rescore(fetched, bench)
    results = check_results_json(fetched, bench.tasks)
    figures = []
    for fig in published["figures"]:
        pub = {k: fig[k] for k in ("passed", "total", "percent") if k in fig}
        rep = _figure_value(scores, fig["metric"])
        equal = all(rep.get(k) == v if k != "percent" else round(rep[k], 2) == round(v, 2) for k, v in pub.items())
        figures.append({"name": fig["name"], "table": fig["table"], "row": fig["row"], "column": fig["column"],
                        "published": pub, "reproduced": {k: rep.get(k) for k in pub}, "equal": equal,
                        "status": "reproduced" if equal else "differs",
                        "notes": [fig["source"]] if fig.get("source") else []})
    checks = scores["checks"] + [
        {"check": "the published results JSON has one spec per task, keyed by the task's syscall",
         "ok": results["keys_match"] and results["specs_per_task"] == {"1": len(bench.tasks)},
         "detail": f"specs per task: {results['specs_per_task']}"},
    ]
    for i, c in enumerate(checks):
        if not c["ok"]:
            figures.append({"name": f"check.{i}", "table": "consistency check", "row": c["check"], "column": "ok",
                            "published": True, "reproduced": False, "equal": False, "status": "differs",
                            "criterion": c["check"], "notes": [c["detail"]]})
    section = {"classification": {k: scores[k] for k in ("finer", "raised_in", "by_bug_type_normalized",
                                                         "by_bug_num", "per_task")},
               "checks": checks, "quirks": scores["quirks"], "source": published.get("source")}
    return Reproduction(figures=figures, notes=_notes(fetched, bench, scores, results), sections={SECTION: section})


def _notes(fetched, bench: LoadedTasks, scores: dict, results: dict) -> list[str]:
    shown = set(Prompts.load(fetched).example_syscalls(5))
    inside = [p for p in scores["per_task"] if p["syscall"] in shown]
    outside = [p for p in scores["per_task"] if p["syscall"] not in shown]
    f, r = scores["finer"], scores["raised_in"].get("syntax", {})
    norm = scores["by_bug_type_normalized"]
    return [
        *(f"quirk: {q}" for q in scores["quirks"]),
        ("rule (upstream stats.py): an entry is a pass if it contains '... ok', else a semantic error if it "
         "contains 'Could not prove, trying to find a minimal ce' or 'Timeout', else a 'syntax error'"),
        "finer causes: pass = " + ", ".join(f"{k} {v}" for k, v in f["pass"].items())
        + "; semantic = " + ", ".join(f"{k} {v}" for k, v in f["semantic"].items())
        + "; syntax = " + ", ".join(f"{k} {v}" for k, v in f["syntax"].items()),
        "'syntax' errors by where the exception was raised: " + ", ".join(f"{k} {v}" for k, v in r.items())
        + " (candidate = the spec's own code; hv6py = Hyperkernel's state classes rejecting a misuse; "
          "z3 = Z3 rejecting an ill-sorted term; libirpy/harness = Hyperkernel's checker)",
        (f"Table 1 columns follow upstream's exact-spelling rule; with the misspellings read as meant, memory "
         f"leak would be {norm['memory leak']['passed']}/{norm['memory leak']['total']} and buffer overflow "
         f"{norm['buffer overflow']['passed']}/{norm['buffer overflow']['total']} (not published figures)"),
        (f"the 5-shot prompt contains the solved specs of {len(shown)} of the 49 syscalls ({', '.join(sorted(shown))}): "
         f"pass rate {sum(p['upstream'] == 'pass' for p in inside)}/{len(inside)} on their tasks vs "
         f"{sum(p['upstream'] == 'pass' for p in outside)}/{len(outside)} on the others"),
        ("the released runner (spec_util.py) checks each spec with HV6.test_<syscall> on the one Hyperkernel "
         "build inside its image: the task's (possibly buggy) code variant is shown to the model but not compiled "
         "or checked by it (the paper defines a pass against all injected-bug implementations)"),
        (f"integrity scan of the published specs (forbidden names outside comments/strings): "
         f"{len(results['rejected'])} of {len(bench.tasks)} would be rejected"),
    ]


def published_log(fetched, tasks: list[Task]) -> dict[str, tuple[str, hyperkernel.Classification]] | None:
    """The published run per task: task id -> (sha256 of the published spec, the
    classification of its log entry), or None when the dataset lacks the published
    results JSON or log (e.g. a dataset of one's own).

    Raises:
        ManifestError: the files are there but malformed.
    """
    if not (has_file(fetched, RESULTS_JSON) and has_file(fetched, LOG)):
        return None
    data = load_results(path_of(fetched, RESULTS_JSON), RESULTS_JSON)
    out = {}
    for e, t in zip(read_log(fetched, tasks), tasks):
        specs = (data.get(t.task_id) or {}).get(t.syscall)
        if isinstance(specs, list) and specs and isinstance(specs[0], str):
            out[t.task_id] = (sha256_text(specs[0]), hyperkernel.classify(e.text, t.syscall))
    return out
