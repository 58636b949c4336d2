"""NTP4VC's files: the three manifests, the 600 tasks, and the published per-goal
Auto_level_3 results that every task carries.

``fetched`` is what ``datasets.fetch("ntp4vc")`` returns (or the user's own dataset:
anything with ``files`` (repo-relative path -> local Path), ``sha256`` and ``root``), or
a directory laid out like the repository (``str``/``Path``).
"""

from __future__ import annotations

import csv
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ...model import canonical_json, sha256_text

LANGUAGES = ("isabelle", "lean", "rocq")
MANIFESTS = {"isabelle": "test_set.isabelle.lst", "lean": "test_set.lean.txt.lst",
             "rocq": "test_set.rocq.lst"}
SUFFIXES = {"isabelle": ".thy", "lean": ".lean", "rocq": ".v"}
SOURCES = ("pearl", "frama_c")

# ---- where the NTP4VC images keep the benchmark's libraries (the verifiers get them as options)

#: The NTP4VC checkout inside the image (commit dcfadfaa), with the generated
#: ``lib/isabelle`` theories of every task project; its ``ROOTS`` lists the sessions
#: ``NTP4Verif`` (lib/Isabelle/NTP4Verif) and ``Why3STD``/``mach`` (generation/isabelle).
ISABELLE_PROJECT_ROOT = "/opt/ntp4vc"
#: Session directories given with ``-d``: the NTP4VC checkout, the AFP release matching
#: Isabelle2024 (``Word_Lib``, ``List-Index``), and the author's sessions ``NTP4Verif``
#: needs besides (``Automation_Base``, ``Minilang``). Heaps of NTP4Verif, Why3STD and mach
#: are built into the system heap directory at image-build time.
ISABELLE_SESSION_DIRS = (ISABELLE_PROJECT_ROOT, "/opt/afp/thys", "/opt/isabelle-deps")
#: The NTP4VC Lake workspace inside the ``ntp4vc-lean`` image: ``data/why3`` of the
#: NTP4VC checkout (commit dcfadfaa), requiring Mathlib v4.21.0 and the ``Why3`` library of
#: ``generation/lean``, with every module imported by the 600 tasks built.
LEAN_PROJECT = "/opt/ntp4vc/data/why3"


N_TASKS = 600
AL3_SUFFIX = "/why3_auto_level_3.db.csv"

# The categories of Tables 2 and 6, by source (for reference: not derivable, see the
# package docstring).
CATEGORIES = {"pearl": ("Algorithm", "Data Structure", "Calculation", "Engineering", "Competition"),
              "frama_c": ("Function", "Loop", "Memory", "Invalid Arg.")}
# Frama-C project directory -> Table 3 row key (kLIBC's string and stdio are one row).
TABLE3_PROJECT = {"contiki_list": "contiki_list", "contiki_memb": "contiki_memb",
                  "standard_algorithms": "standard_algorithms", "x509_parser": "x509_parser",
                  "should_we_balance": "should_we_balance", "verker": "verker",
                  "klibc_string": "klibc", "klibc_stdio": "klibc", "airborne": "airborne"}


class ManifestError(ValueError):
    """A manifest or result file is malformed; the message names ``file:line``."""


@dataclass(frozen=True)
class Task:
    """One NTP4VC item (one VC, stated in the three languages, from one Why3 goal).

    Attributes:
        task_id: ``<source dir>/<mlw name>::<goal>`` (see the package docstring), shared
            by the three languages.
        goal: the Why3 goal name (file stem without the ``X`` prefix).
        isabelle, lean, rocq: repo-relative path of the file in each language, exactly as
            the manifest lists it.
        mlw: repo-relative path of the source ``.mlw`` file.
        source: ``pearl`` or ``frama_c`` (real C verification).
        project: ``pearl`` or the Frama-C project directory (e.g. ``contiki_list``).
        category: always None: not derivable from the released data.
        x_prefixed: languages whose file name carries the extra ``X`` prefix.
        mlw_pinned: the ``.mlw`` source is a file of the dataset (the pearl goals): the
            ``why3`` mode can run the goal.
        published_al3: the published Auto_level_3 result of the goal (all its rows in
            ``why3_auto_level_3.db.csv`` True), or None when the dataset has no row for it.
        files_sha256: ``((repo path, sha256 hex or None), ...)`` of the task's language
            files and ``.mlw`` source, as the dataset verified them (None: unknown).
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
    mlw_pinned: bool = False
    published_al3: bool | None = None
    files_sha256: tuple[tuple[str, str | None], ...] = field(default=(), compare=False)

    def file(self, language: str) -> str:
        """Repo-relative path of the task's file in ``language`` (``rocq``, ``lean``,
        ``isabelle``)."""
        return getattr(self, language)

    @property
    def table3_project(self) -> str | None:
        """The Table 3 row of a Frama-C task (kLIBC's string and stdio are one row)."""
        return TABLE3_PROJECT.get(self.project) if self.source == "frama_c" else None

    @property
    def sha256(self) -> str:
        """sha256 hex of the task's identity and its files' hashes (:attr:`files_sha256`).
        Jobs hash the text they actually ship (``Job.task_sha256``)."""
        return sha256_text(canonical_json({"task_id": self.task_id, "files": dict(self.files_sha256)}))


def _root(fetched) -> Path:
    if isinstance(fetched, (str, Path)):
        return Path(fetched)
    root = getattr(fetched, "root", None)
    if root is None:  # files split between cache and mirrors: use file paths
        raise ManifestError("ntp4vc: fetched files are not under one root")
    return Path(root)


def _files(fetched) -> dict | None:
    return None if isinstance(fetched, (str, Path)) else getattr(fetched, "files", None)


def path_of(fetched, rel: str) -> Path:
    """Local path of the repo-relative file ``rel`` of ``fetched``.

    Raises:
        ManifestError: ``rel`` is not a fetched file and the files have no common root.
    """
    files = _files(fetched)
    if files is not None and rel in files:
        return files[rel]
    return _root(fetched) / rel


def has_file(fetched, rel: str) -> bool:
    """Whether ``rel`` is a file of ``fetched`` (a pinned file, or present in a directory)."""
    files = _files(fetched)
    if files is not None:
        return rel in files
    return (_root(fetched) / rel).is_file()


def all_paths(fetched) -> list[str]:
    """Every repo-relative file path of ``fetched``, sorted."""
    files = _files(fetched)
    if files is not None:
        return sorted(files)
    root = _root(fetched)
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


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


def load_tasks(fetched) -> list[Task]:
    """The 600 tasks, in the order of the Lean manifest.

    The three manifests must list the same items (after dropping the ``X`` prefix).
    Each task gets its published Auto_level_3 result (:func:`read_auto_level_3`; None
    when the dataset has no such file or no row for the goal).

    Raises:
        ManifestError: naming ``file:line`` for a malformed line, a duplicated item, an
            item missing from one language, or a malformed/contradictory result row.
    """
    per_lang: dict[str, dict[tuple[str, str], tuple[str, str, str, bool, int]]] = {}
    order: list[tuple[str, str]] = []
    for lang in LANGUAGES:
        rel = MANIFESTS[lang]
        path = path_of(fetched, rel)
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
            raise ManifestError(f"{path_of(fetched, MANIFESTS[lang])}: {len(diff)} item(s) not in "
                                f"all three manifests, e.g. {goal!r} of {mlw}")
    al3 = read_auto_level_3(fetched)["goals"]
    digests = {} if isinstance(fetched, (str, Path)) else dict(getattr(fetched, "sha256", None) or {})
    tasks = []
    for key in order:
        mlw, goal = key
        e = {lang: per_lang[lang][key] for lang in LANGUAGES}
        _, source, project, _, _ = e["lean"]
        tid = f"{mlw[len('data/why3/'):-len('.mlw')]}::{goal}"
        paths = [e[lang][0] for lang in LANGUAGES] + [mlw]
        results = al3.get(key)
        tasks.append(Task(task_id=tid, goal=goal, isabelle=e["isabelle"][0], lean=e["lean"][0],
                          rocq=e["rocq"][0], mlw=mlw, source=source, project=project,
                          category=None,
                          x_prefixed=tuple(lang for lang in LANGUAGES if e[lang][3]),
                          mlw_pinned=has_file(fetched, mlw),
                          published_al3=all(results) if results else None,
                          files_sha256=tuple((p, digests.get(p)) for p in paths)))
    return tasks


def al3_files(fetched) -> list[str]:
    """Repo-relative paths of the per-goal Auto_level_3 CSV files of ``fetched``."""
    files = _files(fetched)
    if files is not None:
        return sorted(p for p in files if p.endswith(AL3_SUFFIX))
    root = _root(fetched)
    return sorted(str(p.relative_to(root)) for p in (root / "data/why3").rglob(AL3_SUFFIX[1:]))


def read_auto_level_3(fetched) -> dict:
    """The published per-goal Auto_level_3 results
    (``data/why3/**/why3_auto_level_3.db.csv``: ``<mlw path>,<goal>,True|False``).

    Returns:
        ``{"goals": {(mlw path, goal): [bool, ...]}, "files": [csv paths],
        "distinct": number of distinct goals, "duplicates": rows repeating a goal with
        the same result (counted once)}``.

    Raises:
        ManifestError: a malformed row, or a goal given two different results
            (``file:line``).
    """
    goals: dict[tuple[str, str], list[bool]] = defaultdict(list)
    seen: dict[tuple[str, str], str] = {}
    duplicates = 0
    files = al3_files(fetched)
    for rel in files:
        path = path_of(fetched, rel)
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
    return {"goals": dict(goals), "files": files, "distinct": len(seen), "duplicates": duplicates}
