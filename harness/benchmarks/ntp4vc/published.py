"""Rescoring of NTP4VC's published per-item results, and published vs reproduced.

- :func:`rescore_auto_level_3`: Why3 Auto_level_3 per item (Table 2's "ATP pass",
  132/600 = 22.00 %), from the per-goal CSVs; an item is proved when ALL its goals are
  proved (each test item has exactly one goal row at this commit, so the rule is checked
  rather than exercised).
- :func:`rescore_sledgehammer`: Sledgehammer per item (Table 5, Isabelle P@1, 18.00 %),
  from ``data/why3/NTP4VC-SH.db.csv`` (one row per Isabelle file, ``index`` =
  ``<thy path>:<line of the theorem>``; ``status`` ``Status.SUCCESS`` is a proof). Quirks
  handled (reported in the notes): one duplicated row (counted once), 75 rows for files
  outside the test set (ignored), the ``pass`` column is an exit code (not used).
- :func:`reproduce_figures`: every figure of ``results/published/ntp4vc.json`` with its
  status (``reproduced``, ``differs``, ``not_reproducible`` with the reason; never
  approximated); :func:`reproduce`: the same as ``verikit reproduce ntp4vc`` reports it.
- :func:`model_figures`: the paper's per-model figures (Table 5's NTP-model rows).
"""

from __future__ import annotations

import csv
import json
from collections import Counter, defaultdict

from ... import resources
from ...plugin import Reproduction
from .. import published_model_figures
from .data import CATEGORIES, SOURCES, ManifestError, Task, load_tasks, path_of, read_auto_level_3

NAME = "ntp4vc"
SLEDGEHAMMER_CSV = "data/why3/NTP4VC-SH.db.csv"
SH_SUCCESS, SH_FAIL = "Status.SUCCESS", "Status.FAIL"
#: The paper's figures as data (``results/published/ntp4vc.json``, the checkout's or the wheel's).
PUBLISHED_JSON = resources.kit_file(f"results/published/{NAME}.json")

CATEGORY_NOT_DERIVABLE = (
    "category labels are not in the released data (no category column in statistics/*.csv, "
    "the manifests or the result CSVs; Frama-C goal names give 106/141/17/36 "
    "Loop/Function/Memory/Invalid-Arg. items, not the paper's 81/81/74/64)")
NOT_REPRODUCIBLE = {
    "category": CATEGORY_NOT_DERIVABLE,
    "coqhammer": "CoqHammer's per-item results are not published in the repository",
    "hammers_union": ("Table 6's hammer column is the union of Sledgehammer and CoqHammer; "
                      "CoqHammer's per-item results are not published, so the union cannot "
                      "be recomputed (Sledgehammer alone is only a lower bound)"),
}


def _pct(passed: int, total: int) -> float:
    return round(100.0 * passed / total, 2) if total else 0.0


def _totals(tasks: list[Task], proved: dict[str, bool]) -> dict:
    def agg(group: list[Task]) -> dict:
        k = sum(proved[t.task_id] for t in group)
        return {"passed": k, "total": len(group), "percent": _pct(k, len(group))}

    by_source = {s: agg([t for t in tasks if t.source == s]) for s in SOURCES}
    projects = sorted({t.table3_project for t in tasks if t.table3_project})
    by_project = {p: agg([t for t in tasks if t.table3_project == p]) for p in projects}
    by_category = {cat: {"passed": None, "total": None, "percent": None,
                         "not_reproducible": CATEGORY_NOT_DERIVABLE}
                   for cats in CATEGORIES.values() for cat in cats}
    return {"overall": agg(tasks), "by_source": by_source, "by_project": by_project,
            "by_category": by_category}


def rescore_auto_level_3(fetched, tasks: list[Task]) -> dict:
    """Why3 Auto_level_3 per item, from the per-goal CSVs (Table 2's ATP pass).

    Returns ``{"prover", "per_task": {task_id: bool}, "goals_per_task": {task_id: n},
    "overall", "by_source", "by_project", "by_category", "notes"}`` where each total is
    ``{"passed", "total", "percent"}`` (category totals are None: not derivable).

    Raises:
        ManifestError: (file:line) a malformed row, a goal given two different results,
            or a task with no row.
    """
    al3 = read_auto_level_3(fetched)
    per_task: dict[str, bool] = {}
    n_goals: dict[str, int] = {}
    for t in tasks:
        results = al3["goals"].get((t.mlw, t.goal))
        if not results:
            raise ManifestError(f"Auto_level_3: no result row for {t.task_id} "
                                f"({t.mlw}, {t.goal}) in {len(al3['files'])} CSV file(s)")
        per_task[t.task_id] = all(results)
        n_goals[t.task_id] = len(results)
    out = {"prover": "auto_level_3", "per_task": per_task, "goals_per_task": n_goals}
    out.update(_totals(tasks, per_task))
    out["notes"] = [
        (f"{len(al3['files'])} per-goal CSV files, {al3['distinct']} distinct goals; an item is proved when "
         f"all its goals are proved (every test item has {sorted(set(n_goals.values()))} goal "
         f"row(s))"),
        f"{al3['duplicates']} duplicated goal row(s) (same result) counted once",
    ]
    return out


def rescore_sledgehammer(fetched, tasks: list[Task]) -> dict:
    """Sledgehammer (Isabelle) per item, from NTP4VC-SH.db.csv (Table 5, Isabelle P@1).

    Same shape as :func:`rescore_auto_level_3` plus ``duplicates`` (Isabelle files with
    more than one row, each counted once) and ``outside_test_set`` (rows for files not in
    the manifest: ignored).

    Raises:
        ManifestError: a bad header or row, rows of one file that disagree, or a task
            with no row.
    """
    path = path_of(fetched, SLEDGEHAMMER_CSV)
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    if not rows or rows[0][:2] != ["index", "status"]:
        raise ManifestError(f"{path}:1: expected a header starting with index,status")
    by_file: dict[str, list[tuple[str, int]]] = defaultdict(list)
    # csv rows can span several physical lines (multi-line responses): count records
    for n, row in enumerate(rows[1:], 2):
        where = f"{path}: record {n}"
        if len(row) != len(rows[0]) or row[1] not in (SH_SUCCESS, SH_FAIL) or ":" not in row[0]:
            raise ManifestError(f"{where}: malformed Sledgehammer row {row[:3]!r}")
        by_file[row[0].rsplit(":", 1)[0]].append((row[1], n))
    duplicates = {}
    for f, recs in by_file.items():
        if len(recs) > 1:
            statuses = {s for s, _ in recs}
            if len(statuses) > 1:
                raise ManifestError(f"{path}: records {[n for _, n in recs]} give {f} "
                                    f"conflicting statuses {sorted(statuses)}")
            duplicates[f] = {"rows": len(recs), "records": [n for _, n in recs],
                             "status": recs[0][0]}
    wanted = {t.isabelle for t in tasks}
    outside = [f for f in by_file if f not in wanted]
    per_task: dict[str, bool] = {}
    for t in tasks:
        recs = by_file.get(t.isabelle)
        if not recs:
            raise ManifestError(f"{path}: no Sledgehammer row for {t.isabelle}")
        per_task[t.task_id] = recs[0][0] == SH_SUCCESS
    naive = sum(1 for _ in rows[1:] if _[0].rsplit(":", 1)[0] in wanted and _[1] == SH_SUCCESS)
    out = {"prover": "sledgehammer", "per_task": per_task, "duplicates": duplicates,
           "outside_test_set": {"files": len(outside),
                                "success": sum(by_file[f][0][0] == SH_SUCCESS for f in outside)},
           "rows": len(rows) - 1, "naive_success_rows_in_test_set": naive}
    out.update(_totals(tasks, per_task))
    out["notes"] = [
        f"{len(rows) - 1} data rows for {len(by_file)} Isabelle files",
        *(f"duplicated row: {f} appears {d['rows']} times (records {d['records']}, all "
          f"{d['status']}); counted once" for f, d in sorted(duplicates.items())),
        f"counting success rows instead of items would give {naive}/{len(tasks)}",
        (f"{len(outside)} file(s) outside the test set ignored "
         f"({out['outside_test_set']['success']} of them SUCCESS)"),
        "the 'pass' column is 0 on SUCCESS and 1 on FAIL (an exit code): status is used",
    ]
    return out


def load_published() -> dict:
    """``results/published/ntp4vc.json`` (the paper's figures with their sources)."""
    return json.loads(PUBLISHED_JSON.read_text(encoding="utf-8"))


def model_figures(mode: str, model: str | None = None) -> list[dict]:
    """Table 5's NTP-model rows for the language ``mode`` (pass@1/4/8 in percent of the 600
    VCs; ``results/published/ntp4vc.json`` ``model_figures``); none for ``why3``."""
    return published_model_figures(NAME, mode, model)


def _task_counts(tasks: list[Task], scope: str, key: str | None) -> int:
    if scope == "source":
        return sum(t.source == key for t in tasks)
    if scope == "project":
        return sum(t.table3_project == key for t in tasks)
    return len(tasks)


def reproduce_figures(fetched, tasks: list[Task], published: dict | None = None) -> dict:
    """Published vs reproduced, for every figure of ``published`` (default
    :func:`load_published`).

    Returns ``{"figures": [{name, table, row, column, published, reproduced, equal,
    status, notes}], "summary", "consistency", "notes"}``. ``status`` is ``reproduced``,
    ``differs`` or ``not_reproducible`` (then ``reproduced`` and ``equal`` are None and
    ``notes`` gives the reason). Equality is exact on counts and on percentages to 2
    decimals. ``consistency``: Sledgehammer alone is at most Table 6's hammer union.

    Raises:
        ManifestError: as the rescoring functions.
    """
    published = published or load_published()
    scores = {"auto_level_3": rescore_auto_level_3(fetched, tasks),
              "sledgehammer": rescore_sledgehammer(fetched, tasks)}
    figures = []
    for fig in published["figures"]:
        m = fig["metric"]
        pub = {k: fig[k] for k in ("passed", "total", "percent") if k in fig}
        entry = {"name": fig["name"], "table": fig["table"], "row": fig["row"],
                 "column": fig["column"], "published": pub}
        reason = fig.get("not_reproducible") or NOT_REPRODUCIBLE.get(m["prover"] or "")
        if m["scope"] == "category" and not reason:
            reason = CATEGORY_NOT_DERIVABLE
        if reason:
            entry.update(reproduced=None, equal=None, status="not_reproducible", notes=[reason])
            figures.append(entry)
            continue
        if m["prover"] is None:  # a task count (Table 3)
            rep = {"total": _task_counts(tasks, m["scope"], m["key"])}
            notes = []
        else:
            s = scores[m["prover"]]
            rep = dict(s["overall"] if m["scope"] == "overall"
                       else s[{"source": "by_source", "project": "by_project"}[m["scope"]]][m["key"]])
            notes = list(s["notes"])
        equal = all(rep.get(k) == v if k != "percent" else round(rep.get(k), 2) == round(v, 2)
                    for k, v in pub.items())
        entry.update(reproduced={k: rep.get(k) for k in pub}, equal=equal,
                     status="reproduced" if equal else "differs", notes=notes)
        figures.append(entry)
    sh, union = scores["sledgehammer"], {f["name"]: f for f in published["figures"]}
    consistency = []
    for scope, key, name in (("overall", None, "table6.hammers.overall.total"),
                             ("source", "pearl", "table6.hammers.source.pearl"),
                             ("source", "frama_c", "table6.hammers.source.frama_c")):
        if name in union:
            got = sh["overall"] if scope == "overall" else sh["by_source"][key]
            consistency.append({"check": f"Sledgehammer alone <= {name} (union with CoqHammer)",
                                "sledgehammer": got["passed"], "union": union[name]["passed"],
                                "ok": got["passed"] <= union[name]["passed"]})
    counts = Counter(f["status"] for f in figures)
    return {"figures": figures,
            "summary": {"reproduced": counts["reproduced"], "differs": counts["differs"],
                        "not_reproducible": counts["not_reproducible"],
                        "all_reproducible_equal": counts["differs"] == 0},
            "consistency": consistency,
            "notes": scores["auto_level_3"]["notes"] + scores["sledgehammer"]["notes"]
            + [(f"X prefix dropped from the id of {sum(bool(t.x_prefixed) for t in tasks)} "
                f"items (file names in {sorted({lang for t in tasks for lang in t.x_prefixed})})")]}


def reproduce(fetched, run: dict | None) -> Reproduction:
    """Every figure of ``results/published/ntp4vc.json`` vs the rescored published data
    (:func:`reproduce_figures`; ``run`` is None: no job runs): 13 reproduced exactly, 22
    not reproducible (each with its reason); section ``consistency`` (Sledgehammer alone
    <= Table 6's hammer union)."""
    rep = reproduce_figures(fetched, load_tasks(fetched))
    return Reproduction(figures=rep["figures"], notes=rep["notes"], sections={"consistency": rep["consistency"]})
