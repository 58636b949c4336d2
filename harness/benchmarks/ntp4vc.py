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
import hashlib
import os
import re
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


# ---------------------------------------------------------------------------------------
# Rocq: library closure, adaptation to Coq 8.20.1 + stdpp 1.11, the library image
# ---------------------------------------------------------------------------------------

#: The adaptation of the Rocq 9.0 + stdpp 1.12 files to Coq 8.20.1 + stdpp 1.11 (the rocq
#: image): a load-path shim, no rewriting of any task or library text. Recorded in every
#: run manifest (docs/ntp4vc-rocq-adaptation.md has the evidence).
ROCQ_SHIM_DIR = Path(__file__).resolve().parents[2] / "images" / "ntp4vc-rocq" / "shim"
ROCQ_ADAPTATION = {
    "target": "Rocq 9.0.0 + stdpp 1.12.0 (generation/rocq/dune-project)",
    "runs_on": "Coq 8.20.1 + stdpp 1.11.0 (Debian trixie, rocq image)",
    "shim": ("images/ntp4vc-rocq/shim: 15 files Stdlib/<M>.v = 'Require Export Coq.<M>.' for the 15 "
             "'From Stdlib' modules the files use, Stdlib/Reals/Zfloor.v (Zfloor/Zceil, definitions "
             "of Rocq 9.0's Stdlib.Reals.Zfloor, re-exported by Stdlib/Reals/Reals.v), "
             "stdpp_compat/list_relations.v = 'From stdpp Require Export list.' (split out of "
             "list.v in stdpp 1.12), bound with -Q shim/Stdlib Stdlib -Q shim/stdpp_compat stdpp"),
    "load_path": "one -Q <dir> <name> per dune (coq.theory (name <name>)) stanza of the task's closure",
    "symlinks": ("generation/rocq/Why3/Base.v is a git symlink stored as text in the pinned files; "
                 "its target lib/Rocq4Why3/Why3/Base.v is used"),
    "statements_rewritten": False,
}
_ROCQ_EXTERNAL_ROOTS = ("Stdlib", "stdpp", "Coq", "Ltac2", "Hammer")
_REQUIRE = re.compile(r"^\s*Require\s+(?:Import\s+|Export\s+)?([\w.']+)\s*\.\s*$", re.M)
_DUNE_THEORY = re.compile(r"\(coq\.theory\b.*?\(name\s+([^\s()]+)\)", re.S)


@dataclass
class RocqLibrary:
    """The Rocq side of the dataset: theories, the library closure of each task.

    Attributes:
        theories: logical name -> repo-relative directory (from the dune ``coq.theory``
            stanzas of the pinned files).
        files: repo-relative path -> text of every pinned ``.v`` file (git symlinks
            stored as text are followed, see :data:`ROCQ_ADAPTATION`).
    """

    theories: dict[str, str]
    files: dict[str, str]

    @classmethod
    def load(cls, fetched) -> "RocqLibrary":
        """Read the dune stanzas and ``.v`` files of ``fetched`` (a FetchedDataset or a
        directory laid out like the repository)."""
        paths = _all_paths(fetched)
        theories: dict[str, str] = {}
        for rel in paths:
            if rel.endswith("/dune") and ("/rocq/" in rel or rel.startswith("generation/rocq/")):
                text = _path(fetched, rel).read_text(encoding="utf-8")
                for name in _DUNE_THEORY.findall(text):
                    theories[name] = str(PurePosixPath(rel).parent)
        files = {}
        for rel in paths:
            if rel.endswith(".v"):
                files[rel] = _path(fetched, rel).read_text(encoding="utf-8")
        for rel, text in list(files.items()):  # a git symlink checked out as a text file
            target = text.strip()
            if "\n" not in target and target.endswith(".v") and target.startswith("../"):
                real = str(PurePosixPath(os.path.normpath(str(PurePosixPath(rel).parent / target))))
                if real in files:
                    files[rel] = files[real]
        return cls(theories, files)

    def resolve(self, logical: str) -> str | None:
        """The repo-relative ``.v`` file of module ``logical`` (``Why3.Base``), or None.
        Follows coqc's ``-Q dir name`` rule: ``name.sub.M`` is ``dir/sub/M.v``."""
        for name, directory in self.theories.items():
            if logical.startswith(name + "."):
                rel = f"{directory}/{logical[len(name) + 1:].replace('.', '/')}.v"
                if rel in self.files:
                    return rel
        return None

    def requires(self, text: str) -> list[str]:
        """Modules of this dataset a file loads (``Require Import A.B.`` lines; the
        ``From Stdlib``/``From stdpp`` forms and Coq's own libraries are external)."""
        return [m for m in _REQUIRE.findall(text) if m.split(".")[0] not in _ROCQ_EXTERNAL_ROOTS]

    def closure(self, rel: str, text: str | None = None) -> tuple[list[str], list[str]]:
        """``(library files in dependency order, missing modules)`` for the file ``rel``
        (its own text may be given, e.g. a candidate's). Missing modules are the ones no
        pinned file provides (e.g. the per-project ``lib/`` theories absent upstream)."""
        order: list[str] = []
        missing: list[str] = []
        seen: set[str] = set()

        def visit(path: str, body: str) -> None:
            for mod in self.requires(body):
                dep = self.resolve(mod)
                if dep is None:
                    if mod not in missing:
                        missing.append(mod)
                    continue
                if dep not in seen:
                    seen.add(dep)
                    visit(dep, self.files[dep])
                    order.append(dep)

        visit(rel, self.files[rel] if text is None else text)
        return order, missing

    def theory_of(self, rel: str) -> tuple[str, str] | None:
        """``(logical name, directory)`` of the theory containing file ``rel``."""
        best = None
        for name, directory in self.theories.items():
            if rel.startswith(directory + "/") and (best is None or len(directory) > len(best[1])):
                best = (name, directory)
        return best

    def load_path(self, files: list[str], root: str) -> list[list[str]]:
        """``[[root/dir, name], ...]``: the shim then one entry per theory of ``files``."""
        out = [[f"{root}/shim/Stdlib", "Stdlib"], [f"{root}/shim/stdpp_compat", "stdpp"]]
        for name, directory in sorted({self.theory_of(f) for f in files if self.theory_of(f)}):
            out.append([f"{root}/{directory}", name])
        return out


def _all_paths(fetched) -> list[str]:
    if isinstance(fetched, datasets.FetchedDataset):
        return sorted(fetched.files)
    root = _root(fetched)
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def rocq_library_files(lib: RocqLibrary, tasks: list[Task]) -> list[str]:
    """Every library file some task needs, in a dependency order (each file after the
    files it requires)."""
    order: list[str] = []
    for t in tasks:
        for f in lib.closure(t.rocq)[0]:
            if f not in order:
                order.append(f)
    return order


# ---------------------------------------------------------------------------------------
# Proof checking of candidates (``verikit run ntp4vc --lang rocq|lean|isabelle``)
# ---------------------------------------------------------------------------------------

MODES = LANGUAGES  # one mode per language: the candidate is a proof in that language
DEFAULT_MODES = ("rocq",)  # the only language whose prover runs on this kind of machine
STATEMENT_MODEL = "statement"  # the unmodified task (placeholder kept): does the file load?
CANARY_TASK = "pearl/word_common_factor::word_common_factor_Top_powerqtvc"
CANARY_WALL_S = 20.0  # limit of the looping canary (it must end as a timeout)
#: Known cheats and known answers, run with every check (DESIGN.md "Canaries"), Rocq, on
#: ``power'vc`` (``0 <= n -> n <> 0 -> let o1 := n - 1 in (0 <= n /\\ o1 < n) /\\ 0 <= o1``).
ROCQ_CANARIES = {
    "proof": ("Proof. cbv zeta; lia. Qed.", ("verified",)),
    "admitted": ("Admitted.", ("rejected",)),
    "new-axiom": ("Proof. Axiom cheat : forall P : Prop, P. apply cheat. Qed.", ("rejected",)),
    "admit": ("Proof. cbv zeta. admit. Qed.", ("rejected",)),
    "changed-statement": (None, ("rejected",)),  # the whole file, statement weakened to True
    "ill-typed": ("Proof. exact I. Qed.", ("invalid",)),
    "loop": ("Proof. let rec loop := cbv zeta; loop in loop. Qed.", ("timeout",)),
}


@dataclass
class ProofContext:
    """What job construction needs beyond a task: the task texts, the Rocq library
    (closure, load path, declared axioms) and the language's verifier."""

    fetched: object
    language: str
    verifier: object
    rocq: RocqLibrary | None = None

    def text(self, task: Task) -> str:
        return _path(self.fetched, task.file(self.language)).read_text(encoding="utf-8")


def verifier_for(mode: str) -> str:
    """The verifier of a mode: the language's proof checker."""
    if mode not in MODES:
        raise ValueError(f"unknown NTP4VC language {mode!r}; choose from {', '.join(MODES)}")
    return mode


def context(fetched, tasks: list[Task], mode: str, verifier) -> ProofContext:
    """The :class:`ProofContext` of a run in language ``mode``."""
    return ProofContext(fetched, mode, verifier, RocqLibrary.load(fetched) if mode == "rocq" else None)


def sandbox_image(mode: str, fetched, *, build: bool = True, log=print) -> str | None:
    """The image a language runs in: for Rocq the ``ntp4vc-rocq`` library image (built
    from the rocq toolchain image and the pinned files when missing and ``build``); None
    for the others (their toolchain image)."""
    if mode != "rocq":
        return None
    from ..sandbox import images

    spec = derived_image_spec(mode, fetched)
    return images.build_derived(spec, log=log) if build else images.resolve_derived(spec)


def derived_image_spec(mode: str, fetched) -> dict:
    """Spec of the derived image of language ``mode`` (only ``rocq``: :func:`rocq_library_image`).

    Raises:
        ValueError: no derived image for that language.
    """
    if mode != "rocq":
        raise ValueError(f"no derived image for {mode!r}")
    return rocq_library_image(fetched)


def gold_candidates(tasks: list[Task], mode: str) -> list:
    """No gold proofs exist: the statement check, i.e. the unmodified task file with its
    placeholder, one per task (tells whether the file loads; verdict ``rejected``)."""
    from . import Candidate

    placeholder = {"rocq": "Admitted.", "lean": "sorry", "isabelle": "sorry"}[mode]
    return [Candidate(t.task_id, STATEMENT_MODEL, 0, placeholder, "task") for t in tasks]


def bundled_candidates(fetched, mode: str) -> list:
    """NTP4VC publishes no model proofs: none."""
    return []


def canaries(tasks: list[Task], mode: str) -> list:
    """Canary candidates with their expected verdicts (Rocq only: the other languages
    cannot run here). Run when the canary task is among the run's tasks."""
    from . import Candidate

    if mode != "rocq" or not any(t.task_id == CANARY_TASK for t in tasks):
        return []
    out = []
    for name, (proof, expected) in ROCQ_CANARIES.items():
        out.append((Candidate(CANARY_TASK, f"canary:{name}", 0, proof or "", "canary"), expected))
    return out


def _changed_statement(text: str, thm) -> str:
    """The whole task file with the theorem's statement replaced by ``True`` and proved."""
    head = text[:thm.start]
    stmt_start = head.rfind(thm.statement)
    return head[:stmt_start] + f"Theorem {thm.name} : True.\nProof. exact I. Qed.\n"


def smoke_tests(mode: str) -> bool:
    """Not a Frama-C benchmark: no smoke tests."""
    return False


def study_results(fetched) -> dict:
    """No published per-candidate verdicts to compare with."""
    return {}


def build_job(task: Task, cand, mode: str, options: dict, dataset: dict, ctx: ProofContext):
    """The job for ``cand`` on ``task`` in language ``mode``.

    The candidate is either the proof alone (it replaces the placeholder) or the whole
    file (recognised by the task's theorem name in it): then the statement hash and the
    text before the theorem must equal the task's, and its proof part is used. Integrity
    findings make the job ``rejected``; the prover still runs so that its own assumption
    report is recorded next to the text findings (defense in depth). A Rocq task whose
    library closure is not in the pinned data is ``invalid`` without running.
    """
    from ..executor import Job, sha256_text
    from ..sandbox import Limits
    from ..verifiers import rocq as rocq_mod

    v = ctx.verifier
    text = ctx.text(task)
    thm = v.theorem(text, task.file(mode))
    out = cand.output
    if cand.model == "canary:changed-statement":
        out = _changed_statement(text, thm)
    checks: list[dict] = []
    precheck = None
    proof = out
    if cand.model != STATEMENT_MODEL:
        split = getattr(v, "split_full", None)
        full = split(out, thm.name) if split and _declares(out, thm.name, mode) else None
        if full is not None:
            same_stmt = full.statement_sha256 == thm.statement_sha256
            pre = " ".join(out[: full.start - len(full.statement)].split())
            same_pre = pre == " ".join(text[: text.find(thm.statement)].split())
            checks.append({"name": "statement-unchanged", "ok": same_stmt,
                           "detail": f"statement sha256 {full.statement_sha256[:12]} "
                           + ("= task" if same_stmt else f"!= task {thm.statement_sha256[:12]}")})
            checks.append({"name": "preamble-unchanged", "ok": same_pre,
                           "detail": "text before the theorem equals the task's" if same_pre
                           else "the candidate changed the definitions/axioms before the theorem"})
            proof = out[full.start:]
        findings = v.forbidden(proof)
        checks.append({"name": "no-cheat-tokens", "ok": not findings,
                       "detail": "; ".join(findings) if findings else "none of the forbidden constructs"})
    opts = dict(options, theorem=thm.name, theorem_line=thm.line, statement_sha256=thm.statement_sha256)
    if mode == "isabelle":  # a session ROOT + the theory; imports made absolute in the image
        from ..verifiers import isabelle as isabelle_mod

        task_dir = f"{isabelle_mod.PROJECT_ROOT}/{PurePosixPath(task.isabelle).parent}"
        files = v.job_files(text, thm, proof, task_dir=task_dir)
        opts["theory"] = next(f[:-4] for f in files if f.endswith(".thy"))
    else:
        files = {v.source: v.splice(text, thm, proof)}
    if mode == "lean":  # the task's own axioms; its library's are not in the pinned data
        opts["allowed_assumptions"] = sorted(v.declared_axioms(text))
    limits = Limits(wall_s=CANARY_WALL_S) if cand.model == "canary:loop" else None
    if mode == "rocq":
        closure, missing = ctx.rocq.closure(task.rocq)
        allowed = set(v.declared_axioms(text))
        for f in closure:
            allowed |= v.declared_axioms(ctx.rocq.files[f])
        opts.update(load_path=ctx.rocq.load_path(closure, rocq_mod.LIBRARY_ROOT),
                    allowed_assumptions=sorted(allowed))
        if missing:
            precheck = ("invalid", "the task file cannot load: module(s) not in the pinned data: "
                        + ", ".join(missing[:3]) + (f" (+{len(missing) - 3})" if len(missing) > 3 else ""))
    failed = [c for c in checks if not c["ok"]]
    task_sha = sha256_text(text)
    return Job(benchmark=NAME, benchmark_version=VERSION, dataset=dataset, mode=mode, task_id=task.task_id,
               task_sha256=task_sha,
               candidate={"model": cand.model, "sample": cand.sample, "sha256": sha256_text(cand.output),
                          "origin": cand.origin},
               files=files, options=opts,
               checks=checks, precheck=precheck,
               limits=limits, reject=("; ".join(f"{c['name']}: {c['detail']}" for c in failed) or None))


def _declares(text: str, name: str, mode: str) -> bool:
    kws = {"rocq": r"(?:Theorem|Lemma|Fact|Remark|Corollary|Proposition|Example)",
           "lean": r"theorem", "isabelle": r"(?:theorem|lemma)"}[mode]
    return re.search(rf"(?m)^\s*{kws}\s+{re.escape(name)}(?![\w'])", text) is not None


def judge(job, result) -> tuple[str, str]:
    """Integrity findings win (``rejected``, with the prover's verdict noted); otherwise
    the verifier's verdict; the statement check reports whether the task file loads."""
    if job.candidate["model"] == STATEMENT_MODEL:
        loads = result.extra.get("task_loads", result.verdict not in ("invalid",))
        if result.verdict in ("rejected", "verified") and loads:
            return "rejected", "the task file loads; its proof is the placeholder (statement check)"
        return result.verdict, result.reason
    if job.reject:
        return "rejected", f"{job.reject} (prover: {result.verdict}: {result.reason})"
    return result.verdict, result.reason


ROCQ_IMAGE_CONTAINERFILE = """\
# verikit derived image: the rocq toolchain image + the NTP4VC Rocq library (shim and
# every library file a test task needs, from the pinned files) compiled once with coqc.
ARG BASE
FROM ${BASE}
COPY ntp4vc /opt/verikit/ntp4vc
RUN sh /opt/verikit/ntp4vc/build.sh > /opt/verikit/ntp4vc/build.log 2>&1 \\
 || (tail -n 40 /opt/verikit/ntp4vc/build.log; exit 1); chmod -R a+rX /opt/verikit
"""


def rocq_library_image(fetched) -> dict:
    """Spec of the ``ntp4vc-rocq`` image for :func:`harness.sandbox.images.build_derived`.

    Context: ``ntp4vc/shim/**`` (images/ntp4vc-rocq/shim), every library file of a test
    task's closure at its repo path under ``ntp4vc/``, and ``ntp4vc/build.sh``, which
    compiles the shim, then the library level by level (a file after the files it
    requires; one level's files in parallel with ``xargs -P $(nproc)``).

    Raises:
        ManifestError: a library path with characters unsafe in the shell script.
    """
    from ..sandbox import images
    from ..toolchains import canonical_json
    from ..verifiers import rocq as rocq_mod

    lib = RocqLibrary.load(fetched)
    tasks = load_tasks(fetched)
    files = rocq_library_files(lib, tasks)
    level: dict[str, int] = {}
    for f in files:  # dependency order: requirements come first
        deps = [d for d in (lib.resolve(m) for m in lib.requires(lib.files[f])) if d]
        level[f] = 1 + max((level[d] for d in deps), default=-1)
    for f in files:
        if not re.fullmatch(r"[\w./-]+", f):
            raise ManifestError(f"library path {f!r} has characters unsafe in build.sh")
    shim = {str(p.relative_to(ROCQ_SHIM_DIR)): p.read_bytes() for p in sorted(ROCQ_SHIM_DIR.rglob("*.v"))}
    quiet = f"-q -w {rocq_mod.QUIET_WARNINGS}"
    load_path = " ".join(f"-Q {d.split(rocq_mod.LIBRARY_ROOT + '/', 1)[1]} {n}"
                         for d, n in lib.load_path(files, rocq_mod.LIBRARY_ROOT))
    stdlib_shim = sorted(p for p in shim if p.startswith("Stdlib/") and p != "Stdlib/Reals/Zfloor.v")
    lines = ["set -eu", f"cd {rocq_mod.LIBRARY_ROOT}", 'echo "coqc $(coqc --version | head -n 1)"',
             f"coqc {quiet} -Q shim/Stdlib Stdlib shim/Stdlib/Reals/Zfloor.v"]
    lines += [f"coqc {quiet} -Q shim/Stdlib Stdlib shim/{p}" for p in stdlib_shim]
    lines.append(f"coqc {quiet} -Q shim/stdpp_compat stdpp shim/stdpp_compat/list_relations.v")
    for lv in range(max(level.values(), default=-1) + 1):
        batch = [f for f in files if level[f] == lv]
        lines.append(f"echo 'level {lv}: {len(batch)} file(s)'")
        lines.append("printf '%s\\n' " + " ".join(batch) + f' | xargs -P "$(nproc)" -n 1 coqc {quiet} {load_path}')
    lines.append(f"echo 'library compiled: {len(files)} files'")
    script = "\n".join(lines) + "\n"
    ctx = {f"ntp4vc/shim/{p}": b for p, b in shim.items()}
    ctx.update({f"ntp4vc/{f}": lib.files[f].encode("utf-8") for f in files})
    ctx["ntp4vc/build.sh"] = script.encode()
    digests = {p: hashlib.sha256(b).hexdigest() for p, b in sorted(ctx.items())}
    fp = hashlib.sha256(canonical_json({"base": images.fingerprint("rocq"), "files": digests,
                                        "containerfile": ROCQ_IMAGE_CONTAINERFILE}).encode()).hexdigest()
    revision = fetched.dataset.source.revision if isinstance(fetched, datasets.FetchedDataset) else None
    manifest = {"name": "ntp4vc-rocq", "dataset": {"name": "ntp4vc", "revision": revision},
                "library_files": len(files), "files_sha256": digests, "adaptation": ROCQ_ADAPTATION,
                "root": rocq_mod.LIBRARY_ROOT}
    return {"name": "ntp4vc-rocq", "base_toolchain": "rocq", "fingerprint": fp, "files": ctx,
            "containerfile": ROCQ_IMAGE_CONTAINERFILE, "manifest": manifest}


ADAPTATION = {"rocq": ROCQ_ADAPTATION}  # recorded in run.json per language
CONTAINER_ONLY = True  # no NTP4VC prover is installed on hosts
PASS_AT_K = (1, 4, 8)  # Tables 5 and 6 report pass@1; pass@4/8 when n allows


def compare(records: list[dict], tasks: dict) -> list[dict]:
    """No per-candidate published verdicts exist for proof checking: nothing to compare
    (the published baselines are rescored by :func:`reproduce`)."""
    return []


def _scored(records: list[dict]) -> list[dict]:
    return [r for r in records if r["candidate"]["model"] != STATEMENT_MODEL
            and not r["candidate"]["model"].startswith("canary:")]


def pass_at_k_table(records: list[dict], tasks: dict, *, ks=PASS_AT_K, seed: int = 0) -> dict:
    """pass@k per model, language and group (overall, per source, per category), with a
    95% percentile-bootstrap CI over tasks (``seed`` recorded).

    Returns ``{model: {language: {group: {"tasks", "pass_at_k": {k: value | {"error"}},
    "ci95": {k: [lo, hi]}}}}}``; groups are ``overall``, ``source:<pearl|frama_c>`` and
    ``category`` (``not_reproducible``: no labels in the data). A k larger than a task's
    sample count n is reported as an error for that k (never silently dropped).
    """
    from ..metrics import bootstrap_ci, pass_at_k

    per: dict = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for r in _scored(records):
        if r["verdict"] == "infra_error":
            continue
        cell = per[(r["candidate"]["model"], r["mode"])][r["task_id"]]
        cell[0] += 1
        cell[1] += r["verdict"] == "verified"
    out: dict = {}
    for (model, lang), by_task in sorted(per.items()):
        groups = {"overall": list(by_task)}
        for src in SOURCES:
            groups[f"source:{src}"] = [t for t in by_task if tasks[t].source == src]
        table = {}
        for g, ids in groups.items():
            if not ids:
                continue
            entry = {"tasks": len(ids), "pass_at_k": {}, "ci95": {}}
            for k in ks:
                short = [t for t in ids if by_task[t][0] < k]
                if short:
                    entry["pass_at_k"][str(k)] = {"error": f"pass@{k} needs n >= {k} samples per task; "
                                                  f"{len(short)} task(s) have fewer (e.g. {short[0]}: "
                                                  f"n={by_task[short[0]][0]})"}
                    continue
                vals = [pass_at_k(by_task[t][0], by_task[t][1], k) for t in ids]
                entry["pass_at_k"][str(k)] = sum(vals) / len(vals)
                entry["ci95"][str(k)] = list(bootstrap_ci(vals, seed=seed))
            table[g] = entry
        table["category"] = {"not_reproducible": CATEGORY_NOT_DERIVABLE}
        out.setdefault(model, {})[lang] = table
    return out


def task_loads(records: list[dict], tasks: dict) -> dict:
    """From the statement checks: how many task files load, and why the others do not.

    Returns ``{"checked", "loads", "does_not_load", "by_source": {src: {"checked",
    "loads"}}, "reasons": {reason: count}, "failures": [{"task_id", "reason"}]}``.
    """
    rows = [r for r in records if r["candidate"]["model"] == STATEMENT_MODEL]
    loads = [r for r in rows if r["verdict"] == "rejected"]
    fails = [r for r in rows if r["verdict"] != "rejected"]
    reasons: Counter = Counter()
    for r in fails:
        if "not in the pinned data" in r["reason"]:
            reasons["a required library module is not in the pinned data (upstream per-project lib/ theories "
                    "absent from the repository at this commit)"] += 1
        else:
            reasons[f"{r['verdict']}: {r['reason'][:160]}"] += 1
    by_source = {s: {"checked": sum(tasks[r["task_id"]].source == s for r in rows),
                     "loads": sum(tasks[r["task_id"]].source == s for r in loads)} for s in SOURCES}
    return {"checked": len(rows), "loads": len(loads), "does_not_load": len(fails), "by_source": by_source,
            "reasons": dict(reasons.most_common()),
            "failures": [{"task_id": r["task_id"], "reason": r["reason"]} for r in fails
                         if "not in the pinned data" not in r["reason"]]}


def report_sections(records: list[dict], tasks: list[Task], modes: list[str], *, seed: int = 0) -> dict:
    """``report.json`` ``sections``: ``task_loads`` (statement checks) and ``pass_at_k``."""
    by_id = {t.task_id: t for t in tasks}
    out = {"pass_at_k": pass_at_k_table(records, by_id, seed=seed)}
    if any(r["candidate"]["model"] == STATEMENT_MODEL for r in records):
        out["task_loads"] = task_loads(records, by_id)
    if "rocq" in modes:
        out["adaptation"] = ROCQ_ADAPTATION
    return out


def run_notes(records: list[dict], modes: list[str]) -> list[str]:
    """Notes for report.json: the adaptation and what cannot be checked here."""
    notes = []
    if "rocq" in modes:
        notes.append("Rocq files target Rocq 9.0 + stdpp 1.12 and are checked with Coq 8.20.1 + stdpp 1.11 "
                     "through a load-path shim (run.json 'adaptation'); statements are not rewritten")
    notes.append("per-category pass@k (Tables 5/6 rows): " + CATEGORY_NOT_DERIVABLE)
    same: dict[tuple[str, str], set[str]] = defaultdict(set)
    for r in records:
        same[(r["mode"], r["task_sha256"])].add(r["task_id"])
    twins = sorted(sorted(ids) for ids in same.values() if len(ids) > 1)
    if twins:
        notes.append(f"{len(twins)} group(s) of tasks have byte-identical task files (each task still gets its own "
                     f"record; one prover run serves both): " + "; ".join(" = ".join(g) for g in twins))
    return notes
