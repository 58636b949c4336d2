"""The test programs of a dataset: the pinned ``dafny-intent`` dataset
(Mondego/dafny-synthesis: ``MBPP-DFY-153/test/task_id_<N>.dfy`` and the RQ3 GPT-4
generations with the human labels), or a directory of one's own MBPP-DFY-style programs.

``fetched`` is anything with ``root`` (the directory, or None) and ``files`` (relative
POSIX path -> local Path): the pinned dataset's ``FetchedDataset`` or a local dataset; a plain
directory path is accepted too. The upstream layout is recognised by its test programs;
otherwise every ``*.dfy`` file (at any depth, any name) is one test program whose task id
is its relative path without ``.dfy``, and there are no human labels and no GPT-4
generations.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ...model import GOLD
from .grammar import TaskFileError
from .tests import Skipped, Task, read_task

TEST_DIR = "MBPP-DFY-153/test"
RQ3_JSON = ("RQs/RQ3-[Dynamic-Few-Shot-Prompting]/"
            "rq3-dynamic-few-shot-prompting-GPT-4-temp_0.5-verified-unverified-tagged.json")
#: The generation files of RQ1-RQ3 (GPT-4 and PaLM-2, each entry with a human-tagged
#: ``note``), by short name: ``verikit convert dafny-intent --rq NAME`` reads one.
RQ_FILES = {
    "rq1-gpt-4": "RQs/RQ1-[Contextless-Prompting]/rq1-contextless-prompting-GPT-4-temp_0.75-verified-unverified-tagged.json",
    "rq1-palm-2": "RQs/RQ1-[Contextless-Prompting]/rq1-contextless-prompting-PaLM-2-temp_0.0-verified-unverified-tagged.json",
    "rq2-gpt-4": "RQs/RQ2-[Signature-Prompting]/rq2-signature-prompting-GPT-4-temp_0.75-verified-unverified-tagged.json",
    "rq2-palm-2": "RQs/RQ2-[Signature-Prompting]/rq2-signature-prompting-PaLM-2-temp_0.5-verified-unverified-tagged.json",
    "rq3-gpt-4": RQ3_JSON,
    "rq3-palm-2": ("RQs/RQ3-[Dynamic-Few-Shot-Prompting]/"
                   "rq3-dynamic-few-shot-prompting-PaLM-2-temp_0.5-verified-unverified-tagged.json"),
}
_UPSTREAM_TEST = re.compile(re.escape(TEST_DIR) + r"/task_id_(\d+)\.dfy")

#: What the latest :func:`survey` found (the ``coverage`` report section): ``programs``,
#: ``tasks`` (ids), ``skipped`` (``{task_id, path, category, reason}``), ``notes``.
_LAST_SURVEY: dict = {}


def _files(fetched) -> dict[str, Path]:
    """Relative POSIX path -> local Path of every file of ``fetched`` (of a plain
    directory: every file not under a hidden name, such as ``.git``)."""
    files = getattr(fetched, "files", None)
    if files is not None:
        return files
    root = Path(fetched)
    return {p.relative_to(root).as_posix(): p for p in root.rglob("*")
            if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)}


def dataset_file(fetched, rel: str) -> Path:
    """The path of the dataset file ``rel`` in ``fetched`` (a fetched pinned dataset, or a
    directory). Raises TaskFileError when the dataset has no such file."""
    files = getattr(fetched, "files", None)
    if files is None:
        return Path(fetched) / rel
    if rel in files:
        return files[rel]
    if getattr(fetched, "root", None) is not None:
        return fetched.root / rel
    raise TaskFileError(f"{rel}: not in the fetched dataset")


def has_upstream_layout(fetched) -> bool:
    """True when ``fetched`` has the upstream layout, the pinned dataset's (some
    ``MBPP-DFY-153/test/task_id_<N>.dfy``): it then has the RQ3 GPT-4 generations and the
    human labels; otherwise it is a directory of one's own programs."""
    return any(_UPSTREAM_TEST.fullmatch(rel) for rel in _files(fetched))


def _natural(rel: str) -> list:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", rel)]


def program_files(fetched) -> list[tuple[str, str]]:
    """``[(task_id, relative path)]`` of the test programs, in order: the pinned dataset's
    ``task_id_<N>.dfy`` (id ``N``, by number), or else every ``*.dfy`` file (id: the path
    without ``.dfy``; natural order, so ``t2`` comes before ``t10``)."""
    files = _files(fetched)
    found = [(m.group(1), rel) for rel in files if (m := _UPSTREAM_TEST.fullmatch(rel))]
    if found:
        return sorted(found, key=lambda x: int(x[0]))
    return sorted(((rel[:-len(".dfy")], rel) for rel in files if rel.endswith(".dfy")),
                  key=lambda x: _natural(x[1]))


def human_label(note: str | None) -> tuple[str | None, list[str]]:
    """``(label, tags)`` of a generation's ``note`` (as the RQ3 json writes it): the tags in
    square brackets; the label is ``WRONG`` when tagged ``[WRONG]``, else ``STRONG`` for
    ``[STRONG-POST]``, ``WEAK`` for ``[WEAK-POST]``, else None (unlabelled)."""
    tags = re.findall(r"\[([A-Z0-9_-]+)\]", note or "")
    label = ("WRONG" if "WRONG" in tags else "STRONG" if "STRONG-POST" in tags
             else "WEAK" if "WEAK-POST" in tags else None)
    return label, tags


def _read_entries(path: Path, name: str) -> list[dict]:
    """The JSON list of generation entries in ``path``, each a dict with ``task_id``.

    Raises:
        TaskFileError: not JSON, not a list, or an entry without ``task_id`` (names ``name``
            and the entry index).
    """
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise TaskFileError(f"{name}: not JSON: {exc}") from None
    if not isinstance(entries, list):
        raise TaskFileError(f"{name}: expected a JSON list of generations")
    for i, e in enumerate(entries):
        if not isinstance(e, dict) or "task_id" not in e:
            raise TaskFileError(f"{name}: entry {i}: no task_id")
    return entries


def read_generations(path: Path, where: str | None = None) -> list[dict]:
    """The entries of an RQ1-RQ3 generation file (a JSON list of ``{"task_id", "model",
    "temperature", "isVerified", "dafny_code", "note", ...}``), each checked for the fields
    a conversion needs.

    Raises:
        TaskFileError: not JSON, not a list, or an entry without ``task_id`` or a string
            ``dafny_code`` (names the file, ``where`` if given, and the entry index).
    """
    name = where or str(path)
    entries = _read_entries(Path(path), name)
    for i, e in enumerate(entries):
        if not isinstance(e.get("dafny_code"), str):
            raise TaskFileError(f"{name}: entry {i} (task {e['task_id']}): no dafny_code string")
    return entries


def read_labels(fetched) -> dict[str, dict]:
    """The RQ3 GPT-4 entries by task id: ``{"label": STRONG|WEAK|WRONG|None, "tags": [...],
    "verified": bool}``. The human label is a tag in ``note`` (as the RQ3 json writes it):
    ``[STRONG-POST]``, ``[WEAK-POST]``, ``[WRONG]``; entries with none of them are
    unlabelled. ``{}`` for a directory of one's own programs (no RQ3 file).

    Raises:
        TaskFileError: the file is not the expected JSON list (names the file and entry).
        OSError: the pinned dataset's RQ3 file cannot be read.
    """
    if not has_upstream_layout(fetched):
        return {}
    path = dataset_file(fetched, RQ3_JSON)
    out = {}
    for e in _read_entries(path, str(path)):
        label, tags = human_label(e.get("note"))
        out[str(e["task_id"])] = {"label": label, "tags": tags, "verified": bool(e.get("isVerified"))}
    return out


def survey(fetched) -> tuple[list[Task], list[Skipped]]:
    """Every test program of the dataset: the tasks the kit evaluates and the programs it
    skips, each with its reason (``path:line: ...``) and category. A task's ``source`` is
    ``gpt-4`` when the RQ3 file has an entry for it, else ``gold`` (the authors' own
    specification; every program of a directory of one's own)."""
    labels = read_labels(fetched)
    tasks, skipped = [], []
    for tid, rel in program_files(fetched):
        text = dataset_file(fetched, rel).read_text(encoding="utf-8")
        info = labels.get(tid)
        r = read_task(text, rel, tid, source="gpt-4" if info else GOLD, label=info["label"] if info else None)
        (tasks if isinstance(r, Task) else skipped).append(r)
    _LAST_SURVEY.clear()
    _LAST_SURVEY.update({"programs": len(tasks) + len(skipped), "tasks": [t.task_id for t in tasks],
                         "skipped": [{"task_id": s.task_id, "path": s.path, "category": s.category,
                                      "reason": s.reason} for s in skipped],
                         "notes": {t.task_id: list(t.notes) for t in tasks if t.notes}})
    return tasks, skipped


def last_survey() -> dict:
    """A copy of what the latest :func:`survey` in this process found (``{}`` before any)."""
    return dict(_LAST_SURVEY)


def load_tasks(fetched) -> list[Task]:
    """The tasks the kit evaluates (see :func:`survey` for the skipped programs)."""
    return survey(fetched)[0]


def convert_generations(fetched, tasks: list[Task], *, path: Path | None = None, rq: str | None = None,
                        model: str | None = None) -> list[dict]:
    """Predictions lines from an RQ1-RQ3 generation file (``verikit convert dafny-intent``).

    The file is ``path``, or the pinned dataset's :data:`RQ_FILES` entry ``rq`` (default
    ``rq3-gpt-4``). One line per entry whose ``task_id`` is a task of ``tasks``:
    ``{"task_id", "model", "sample": 0, "output": dafny_code, "temperature", "meta":
    {"source", "label", "tags", "verified_upstream"}}``; ``model`` defaults to the short
    name (``rq1-gpt-4``) or the file's ``model`` field. Every entry is converted, verified
    upstream or not: the kit judges each (an unverified or mis-signed generation is then
    ``failed``, ``invalid`` or ``rejected`` as Dafny and the integrity checks say). The human
    label in ``meta`` is what the ``labels`` report section compares the kit's labels with.

    Raises:
        TaskFileError: an unknown ``rq``, a malformed file (names the file and entry), or
            an entry repeated for one task.
    """
    where = None
    if path is None:
        rq = rq or "rq3-gpt-4"
        if rq not in RQ_FILES:
            raise TaskFileError(f"dafny-intent: unknown generation file {rq!r}: no such file, and not one of "
                                f"{', '.join(RQ_FILES)}")
        where = RQ_FILES[rq]
        path = dataset_file(fetched, where)
    entries = read_generations(path, where)
    wanted = {t.task_id for t in tasks}
    out, seen = [], set()
    for i, e in enumerate(entries):
        tid = str(e["task_id"])
        if tid not in wanted:
            continue
        if tid in seen:
            raise TaskFileError(f"{where or path}: entry {i}: task {tid} appears twice")
        seen.add(tid)
        label, tags = human_label(e.get("note"))
        line = {"task_id": tid, "model": model or rq or str(e.get("model") or "unknown"), "sample": 0,
                "output": e["dafny_code"],
                "meta": {"source": f"{where or path}#{i}", "label": label, "tags": tags,
                         "verified_upstream": bool(e.get("isVerified"))}}
        if isinstance(e.get("temperature"), (int, float)) and e["temperature"] >= 0:
            line["temperature"] = e["temperature"]
        out.append(line)
    return out
