"""NTP4VC: 600 verification conditions (VCs) to prove in Isabelle, Lean and Rocq.

Paper: "Neural Theorem Proving for Verification Conditions" (NTP4VC, ICLR 2026;
../shared/papers/001_fb0027e113adb610.txt). 300 VCs come from Why3 "pearls of programs",
300 from Frama-C-verified C projects ("real C verification", Table 3). The paper reports
Why3's Auto_level_3 (AL3) pass rate per category (Table 2: 132/600 = 22.00 %), the
Sledgehammer pass@1 on Isabelle (Table 5: 18.00 %) and, per category, the union of the
hammers (Table 6: 114/600).

This module rescores those figures *exactly* from the per-item data the repository
publishes (dataset ``ntp4vc``, xqyww123/NTP4VC at dcfadfaa):

- ``rescore_auto_level_3``: joins the per-goal AL3 results
  (``data/why3/**/why3_auto_level_3.db.csv``: ``<mlw path>,<goal>,True|False``) with the
  600 items; an item is proved when ALL its goals are proved (each test item has exactly
  one goal row at this commit, so the rule is checked rather than exercised).
- ``rescore_sledgehammer``: ``data/why3/NTP4VC-SH.db.csv``, one row per Isabelle file
  (``index`` = ``<thy path>:<line of the theorem>``); ``status`` ``Status.SUCCESS`` is a
  proof. Quirks handled (reported in the results' ``notes``): one row is duplicated (the
  memmem ``disjoint_occr_not_occur_err_part1_goal1`` item appears twice, both SUCCESS,
  different times) and is counted once; 75 rows are for files outside the test set (44 of
  them SUCCESS) and are ignored; the ``pass`` column is 0 on success (an exit code), so
  it is not used.

Not reproducible from the published data (``NOT_REPRODUCIBLE``, never approximated):

- Categories (Table 2 / Table 6 rows: Algorithm, Data Structure, Calculation,
  Engineering, Competition; Function, Loop, Memory, Invalid Arg.). The release labels no
  item with a category: statistics/*.csv has no such column, the manifests and result
  CSVs neither, and the Frama-C goal names do not give the category sizes (a name-based
  split gives Loop/Function/Memory/Invalid-Arg. 106/141/17/36, the paper 81/81/74/64).
  ``Task.category`` is therefore always None; per-category rows are reported as
  ``not_reproducible`` (the per-source subtotals derived from Table 2, pearl 59/300 and
  real C 73/300, are reproduced).
- Table 6's hammer column (114/600) and Table 5's CoqHammer Rocq P@1 (5.67 %): the union
  with CoqHammer needs CoqHammer's per-item results, which are not published.

Task ids: ``<source dir>/<mlw name>::<goal>``, e.g.
``frama_c/verker/__tolower_Why3_ide::__tolower_Why3_ide_VC__tolower_post_goal0`` (the
``.mlw`` path under data/why3 without the suffix, and the Why3 goal name shared by the
three languages). Six Frama-C items carry an extra ``X`` prefix in their file name in the
Isabelle AND Rocq manifests (not in Lean): it is dropped for the id, and kept in the
per-language file names, which are the real file names.
"""

from __future__ import annotations

import csv
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .. import datasets

NAME = "ntp4vc"
VERSION = "1"
DATASETS = ("ntp4vc",)
DEFAULT_DATASET = "ntp4vc"

LANGUAGES = ("isabelle", "lean", "rocq")
MANIFESTS = {"isabelle": "test_set.isabelle.lst", "lean": "test_set.lean.txt.lst",
             "rocq": "test_set.rocq.lst"}
SUFFIXES = {"isabelle": ".thy", "lean": ".lean", "rocq": ".v"}
SOURCES = ("pearl", "frama_c")
N_TASKS = 600
SLEDGEHAMMER_CSV = "data/why3/NTP4VC-SH.db.csv"
AL3_SUFFIX = "/why3_auto_level_3.db.csv"
SH_SUCCESS, SH_FAIL = "Status.SUCCESS", "Status.FAIL"

# The categories of Tables 2 and 6, by source (for reference: not derivable, see above).
CATEGORIES = {"pearl": ("Algorithm", "Data Structure", "Calculation", "Engineering", "Competition"),
              "frama_c": ("Function", "Loop", "Memory", "Invalid Arg.")}
# Frama-C project directory -> Table 3 row key (kLIBC's string and stdio are one row).
TABLE3_PROJECT = {"contiki_list": "contiki_list", "contiki_memb": "contiki_memb",
                  "standard_algorithms": "standard_algorithms", "x509_parser": "x509_parser",
                  "should_we_balance": "should_we_balance", "verker": "verker",
                  "klibc_string": "klibc", "klibc_stdio": "klibc", "airborne": "airborne"}

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


class ManifestError(ValueError):
    """A manifest or result file is malformed; the message names ``file:line``."""


@dataclass(frozen=True)
class Task:
    """One NTP4VC item (one VC, stated in the three languages).

    Attributes:
        task_id: ``<source dir>/<mlw name>::<goal>`` (see the module docstring), shared by
            the three languages.
        goal: the Why3 goal name (file stem without the ``X`` prefix).
        isabelle, lean, rocq: repo-relative path of the file in each language, exactly as
            the manifest lists it.
        mlw: repo-relative path of the source ``.mlw`` file.
        source: ``pearl`` or ``frama_c`` (real C verification).
        project: ``pearl`` or the Frama-C project directory (e.g. ``contiki_list``).
        category: always None: not derivable from the released data (module docstring).
        x_prefixed: languages whose file name carries the extra ``X`` prefix.
    """

    task_id: str
    goal: str
    isabelle: str
    lean: str
    rocq: str
    mlw: str
    source: str
    project: str
    category: str | None = None
    x_prefixed: tuple[str, ...] = ()

    def file(self, language: str) -> str:
        return getattr(self, language)

    @property
    def table3_project(self) -> str | None:
        return TABLE3_PROJECT.get(self.project) if self.source == "frama_c" else None


def _root(fetched: datasets.FetchedDataset | Path | str) -> Path:
    if isinstance(fetched, (str, Path)):
        return Path(fetched)
    if fetched.root is None:  # files split between cache and mirrors: use file paths
        raise ManifestError("ntp4vc: fetched files are not under one root")
    return fetched.root


def _path(fetched, rel: str) -> Path:
    if isinstance(fetched, datasets.FetchedDataset) and rel in fetched.files:
        return fetched.files[rel]
    return _root(fetched) / rel


def _parse_line(where: str, line: str, language: str) -> tuple[str, str, str, str, bool]:
    """(mlw path, goal, source, project, x_prefixed) of one manifest entry."""
    p = PurePosixPath(line)
    parts = p.parts
    suffix = SUFFIXES[language]
    if (line != line.strip() or len(parts) < 6 or parts[:2] != ("data", "why3")
            or parts[2] not in SOURCES or parts[-2] != language or p.suffix != suffix
            or not parts[-3].endswith("_vcg") or ".." in parts):
        raise ManifestError(
            f"{where}: malformed manifest line {line!r}: expected "
            f"data/why3/<pearl|frama_c>/.../<NAME>_vcg/{language}/<FILE>{suffix}")
    vcg = PurePosixPath(*parts[:-2])
    mlw_name = vcg.name[: -len("_vcg")]
    mlw = str(vcg.parent / f"{mlw_name}.mlw")
    stem = p.stem
    x = not stem.startswith(mlw_name) and stem.startswith("X" + mlw_name)
    goal = stem[1:] if x else stem
    if not goal.startswith(mlw_name + "_"):
        raise ManifestError(f"{where}: file {p.name!r} does not name a goal of {mlw_name}.mlw "
                            f"(expected {mlw_name}_<goal>{suffix})")
    source = parts[2]
    project = "pearl" if source == "pearl" else parts[3]
    return mlw, goal, source, project, x


def load_tasks(fetched: datasets.FetchedDataset | Path | str) -> list[Task]:
    """The 600 tasks, in the order of the Lean manifest.

    ``fetched``: what ``datasets.fetch("ntp4vc")`` returns, or a directory laid out like
    the repository. The three manifests must list the same items (after dropping the
    ``X`` prefix). Raises ManifestError naming ``file:line`` for a malformed line, a
    duplicated item, or an item missing from one language.
    """
    per_lang: dict[str, dict[tuple[str, str], tuple[str, str, str, bool, int]]] = {}
    order: list[tuple[str, str]] = []
    for lang in LANGUAGES:
        rel = MANIFESTS[lang]
        path = _path(fetched, rel)
        entries: dict[tuple[str, str], tuple[str, str, str, bool, int]] = {}
        for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not raw.strip():
                continue
            where = f"{path}:{n}"
            mlw, goal, source, project, x = _parse_line(where, raw, lang)
            key = (mlw, goal)
            if key in entries:
                raise ManifestError(f"{where}: duplicate item {goal!r} (first at line "
                                    f"{entries[key][4]})")
            entries[key] = (raw, source, project, x, n)
            if lang == "lean":
                order.append(key)
        per_lang[lang] = entries
    keys = set(per_lang["lean"])
    for lang in LANGUAGES:
        diff = set(per_lang[lang]) ^ keys
        if diff:
            mlw, goal = min(diff)
            raise ManifestError(f"{_path(fetched, MANIFESTS[lang])}: {len(diff)} item(s) not in "
                                f"all three manifests, e.g. {goal!r} of {mlw}")
    tasks = []
    for key in order:
        mlw, goal = key
        e = {lang: per_lang[lang][key] for lang in LANGUAGES}
        _, source, project, _, _ = e["lean"]
        tid = f"{mlw[len('data/why3/'):-len('.mlw')]}::{goal}"
        tasks.append(Task(task_id=tid, goal=goal, isabelle=e["isabelle"][0], lean=e["lean"][0],
                          rocq=e["rocq"][0], mlw=mlw, source=source, project=project,
                          category=None,
                          x_prefixed=tuple(lang for lang in LANGUAGES if e[lang][3])))
    return tasks


# ---------------------------------------------------------------------------------------
# Rescoring
# ---------------------------------------------------------------------------------------

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


def _al3_files(fetched) -> list[str]:
    if isinstance(fetched, datasets.FetchedDataset):
        return sorted(p for p in fetched.files if p.endswith(AL3_SUFFIX))
    root = _root(fetched)
    return sorted(str(p.relative_to(root)) for p in (root / "data/why3").rglob(AL3_SUFFIX[1:]))


def rescore_auto_level_3(fetched, tasks: list[Task]) -> dict:
    """Why3 Auto_level_3 per item, from the per-goal CSVs (Table 2's ATP pass).

    Returns ``{"prover", "per_task": {task_id: bool}, "goals_per_task": {task_id: n},
    "overall", "by_source", "by_project", "by_category", "notes"}`` where each total is
    ``{"passed", "total", "percent"}`` (category totals are None: not derivable). Raises
    ManifestError (file:line) for a malformed row, a goal given two different results,
    or a task with no row.
    """
    goals: dict[tuple[str, str], list[bool]] = defaultdict(list)
    seen: dict[tuple[str, str], str] = {}
    duplicates = 0
    files = _al3_files(fetched)
    for rel in files:
        path = _path(fetched, rel)
        with open(path, newline="", encoding="utf-8") as fh:
            for n, row in enumerate(csv.reader(fh), 1):
                where = f"{path}:{n}"
                if len(row) != 3 or row[2] not in ("True", "False") or not row[0].endswith(".mlw"):
                    raise ManifestError(f"{where}: malformed Auto_level_3 row {row!r}: expected "
                                        f"<mlw path>,<goal>,True|False")
                key = (row[0], row[1])
                if key in seen:
                    if seen[key] != row[2]:
                        raise ManifestError(f"{where}: goal {row[1]!r} has conflicting results")
                    duplicates += 1
                    continue
                seen[key] = row[2]
                goals[key].append(row[2] == "True")
    per_task: dict[str, bool] = {}
    n_goals: dict[str, int] = {}
    for t in tasks:
        results = goals.get((t.mlw, t.goal))
        if not results:
            raise ManifestError(f"Auto_level_3: no result row for {t.task_id} "
                                f"({t.mlw}, {t.goal}) in {len(files)} CSV file(s)")
        per_task[t.task_id] = all(results)
        n_goals[t.task_id] = len(results)
    out = {"prover": "auto_level_3", "per_task": per_task, "goals_per_task": n_goals}
    out.update(_totals(tasks, per_task))
    out["notes"] = [
        (f"{len(files)} per-goal CSV files, {len(seen)} distinct goals; an item is proved when "
        f"all its goals are proved (every test item has {sorted(set(n_goals.values()))} goal "
        f"row(s))"),
        f"{duplicates} duplicated goal row(s) (same result) counted once",
    ]
    return out


def rescore_sledgehammer(fetched, tasks: list[Task]) -> dict:
    """Sledgehammer (Isabelle) per item, from NTP4VC-SH.db.csv (Table 5, Isabelle P@1).

    Same shape as ``rescore_auto_level_3`` plus ``duplicates`` (Isabelle files with more
    than one row, each counted once; rows of one file must agree, else ManifestError)
    and ``outside_test_set`` (rows for files not in the manifest: ignored).
    """
    path = _path(fetched, SLEDGEHAMMER_CSV)
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


# ---------------------------------------------------------------------------------------
# Published vs reproduced
# ---------------------------------------------------------------------------------------

def load_published() -> dict:
    """``results/published/ntp4vc.json``."""
    from ..report import load_published as _load
    return _load(NAME)


def _task_counts(tasks: list[Task], scope: str, key: str | None) -> int:
    if scope == "source":
        return sum(t.source == key for t in tasks)
    if scope == "project":
        return sum(t.table3_project == key for t in tasks)
    return len(tasks)


def reproduce(fetched, published: dict | None = None) -> dict:
    """Published vs reproduced, for every figure of ``results/published/ntp4vc.json``.

    Returns ``{"benchmark", "dataset" (provenance when available), "source", "figures":
    [{name, table, row, column, published, reproduced, equal, status, notes}], "summary",
    "consistency", "notes"}``. ``status`` is ``reproduced``, ``differs`` or
    ``not_reproducible`` (then ``reproduced`` and ``equal`` are None and ``notes`` gives
    the reason). Equality is exact on counts and on percentages to 2 decimals.
    """
    published = published or load_published()
    tasks = load_tasks(fetched)
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
    report = {"benchmark": NAME, "version": VERSION, "source": published.get("source"),
              "figures": figures,
              "summary": {"reproduced": counts["reproduced"], "differs": counts["differs"],
                          "not_reproducible": counts["not_reproducible"],
                          "all_reproducible_equal": counts["differs"] == 0},
              "consistency": consistency,
              "notes": scores["auto_level_3"]["notes"] + scores["sledgehammer"]["notes"]
              + [(f"X prefix dropped from the id of {sum(bool(t.x_prefixed) for t in tasks)} "
                 f"items (file names in {sorted({lang for t in tasks for lang in t.x_prefixed})})")]}
    if isinstance(fetched, datasets.FetchedDataset):
        report["dataset"] = fetched.provenance()
    return report
