"""The ``why3`` mode: Why3's Auto_level_3 (AL3) baseline re-run on NTP4VC goals from their
``.mlw`` sources, compared goal by goal with the published per-goal results.

The paper's "ATP pass" (Table 2) is AL3 applied to each VC; the repository publishes its
outcome per goal (``data/why3/**/why3_auto_level_3.db.csv``, on every :class:`Task` as
``published_al3``). ``verikit run ntp4vc --lang why3`` runs AL3 through the stock
``why3 shell`` of the rocq image (the ``why3`` verifier in strategy mode, see
``harness/verifiers/why3.py``) on every goal whose ``.mlw`` sources are files of the
dataset (the 300 pearl goals; the Frama-C goals would need ``lib/frama-c``'s ``.why``
theories, not pinned), one goal and one prover at a time.

- Tasks and candidates: the gold candidate of a goal is the goal itself (its output is
  the goal's NTP4VC name); nothing is checked but the strategy's reading. The mode takes
  no other candidates and has no canaries (there is no candidate to cheat with).
- Job files: the goal's ``.mlw`` file and the files of its directory it ``use``s or
  ``clone``s, transitively (:func:`dependencies`), shipped flat with ``-L .``; the
  verifier adds ``why3.conf`` and its driver.
- Limits (those of the recorded re-run, fixed for the mode and part of every key): the
  strategy is cut after :data:`MAX_WALL_S` seconds per goal, the job is killed at
  :data:`LIMITS` (``MAX_WALL_S + 240`` s, 6144 MB: AL3's last tier gives each prover
  4000 MB). The paper allowed 10 minutes on 12 cores.
- The sample of the recorded re-run (``harness/benchmarks/ntp4vc/docs-why3-rerun.md``):
  :func:`sample_goals` with 20 published-proved and 10 published-unproved goals, seed 0.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ...model import GOLD, Candidate, Job, Limits, candidate_ref, canonical_json, sha256_text, Record
from .data import Task, has_file, path_of

NAME = "ntp4vc"
MODE = "why3"
#: Seconds after which the strategy is cut, per goal (the recorded re-run's ``--max-wall``).
MAX_WALL_S = 45.0
#: Job limits of the mode: the strategy's cut plus time to start Why3 and save the session.
LIMITS = Limits(wall_s=MAX_WALL_S + 240, mem_mb=6144, cpus=1)
_USE = re.compile(r"\b(?:use|clone)\s+(?:import\s+|export\s+)?([A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)+)")
_THEORY = re.compile(r"(?m)^\s*(?:module|theory)\s+([A-Za-z_][\w]*)")
_NOT_COMPARED = ("invalid", "infra_error")

LIMITATIONS = [
    "Provers: the paper's AL3 used Z3, CVC4, SPASS, Alt-Ergo and E; the trixie image has Z3 4.13.3, CVC4 1.8, "
    "CVC5 1.1.2 and E 3.2.5 (no Alt-Ergo, no SPASS), and Why3 generates Auto_level_3 from what it detects.",
    "E 3.2.5 is not recognized by Why3 1.8.0, which drives it with E 2.0's command line; E 3 rejects it "
    "(option -t), so every E call of the strategy is a HighFailure.",
    f"The strategy is cut at {MAX_WALL_S:g} s per goal (the paper: 10 minutes on a 12-core workstation) and "
    "provers run one at a time, so a published-True goal whose proof needs more time is counted as not proved "
    "(listed as cut), and published-False goals are mostly cut before the strategy ends.",
    "The authors used a modified Why3 1.8.0 (why3-for-NTP: its shell prints the proof tree as JSON); this "
    "re-run uses the stock Debian build, whose strategies are generated from the locally detected provers.",
]


def _strip_comments(text: str) -> str:
    return re.sub(r"\(\*.*?\*\)", " ", text, flags=re.S)


def _exists(fetched, rel: str) -> bool:
    if has_file(fetched, rel):
        return True
    root = fetched if isinstance(fetched, (str, Path)) else getattr(fetched, "root", None)
    return root is not None and (Path(root) / rel).is_file()


def dependencies(fetched, mlw: str) -> dict[str, str]:
    """The ``.mlw`` file and the files of its directory it uses (transitively), read
    from the dataset's (sha256-verified) files.

    ``use a.M`` / ``clone a.b.M`` name file ``a.mlw`` / ``a/b.mlw`` (or ``.why``) in the
    load path; only those that exist beside ``mlw`` are shipped (the rest is Why3's
    standard library). Returns job-relative path -> text, ``mlw`` under its base name.

    Raises:
        ValueError: a file used is beside ``mlw`` but not a file of the dataset, or is
            not UTF-8 (the message names it).
    """
    parent = PurePosixPath(mlw).parent
    out: dict[str, str] = {}
    todo = [PurePosixPath(mlw).name]
    while todo:
        rel = todo.pop()
        if rel in out:
            continue
        repo_rel = str(parent / rel)
        if not has_file(fetched, repo_rel):
            raise ValueError(f"{repo_rel} is used by {mlw} but is not a pinned file of the ntp4vc dataset")
        try:
            text = path_of(fetched, repo_rel).read_bytes().decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"{repo_rel}: not UTF-8 ({exc})") from None
        out[rel] = text
        for qual in _USE.findall(_strip_comments(text)):
            parts = qual.split(".")[:-1]
            for ext in (".mlw", ".why"):
                cand = "/".join(parts) + ext
                if cand not in out and _exists(fetched, str(parent / cand)):
                    todo.append(cand)
    return out


def why3_target(task: Task, text: str) -> tuple[str, str]:
    """(theory, goal) of a task: its goal name is ``<file stem>_<Theory>_<goal>`` with ``'``
    written ``qt`` (``avl_AVL_balanceqtvc`` -> ``("AVL", "balance'vc")``); a file without
    ``module`` declarations is Why3's theory ``Top``.

    Raises:
        ValueError: no theory of the file, or more than one, fits the name.
    """
    stem = PurePosixPath(task.mlw).stem
    theories = set(_THEORY.findall(_strip_comments(text))) | {"Top"}
    fits = [t for t in theories if task.goal.startswith(f"{stem}_{t}_")]
    if len(fits) != 1:
        raise ValueError(f"{task.task_id}: {len(fits)} theories of {task.mlw} fit {task.goal!r}: {sorted(fits)}")
    rest = task.goal[len(stem) + len(fits[0]) + 2:]
    goal = rest[: -len("qtvc")] + "'vc" if rest.endswith("qtvc") else rest
    return fits[0], goal


def runnable(tasks: list[Task]) -> list[Task]:
    """The tasks the mode can run: those whose ``.mlw`` source is a file of the dataset."""
    return [t for t in tasks if t.mlw_pinned]


def sample_goals(tasks: list[Task], n_true: int, n_false: int, seed: int) -> list[str]:
    """Ids of ``n_true`` published-proved and ``n_false`` published-unproved runnable
    goals, drawn with ``random.Random(seed).sample`` from the id-sorted pools (True pool
    first, same generator), in manifest order. With 20, 10 and seed 0: the recorded
    re-run's 30 goals.

    Raises:
        ValueError: a pool holds fewer goals than asked for.
    """
    pool = [t for t in runnable(tasks) if t.published_al3 is not None]
    pool_t = sorted(t.task_id for t in pool if t.published_al3)
    pool_f = sorted(t.task_id for t in pool if not t.published_al3)
    if n_true > len(pool_t) or n_false > len(pool_f):
        raise ValueError(f"cannot draw {n_true} published-proved and {n_false} published-unproved goals from "
                         f"{len(pool_t)} and {len(pool_f)}")
    rng = random.Random(seed)
    chosen = set(rng.sample(pool_t, n_true)) | set(rng.sample(pool_f, n_false))
    return [t.task_id for t in tasks if t.task_id in chosen]


def sample(tasks: list[Task], n: int, seed: int) -> list[str]:
    """``n`` goals stratified by their published result: ``n // 3`` published-unproved,
    the rest published-proved (:func:`sample_goals`; ``n=30, seed=0`` is the recorded
    re-run's sample). Raises ValueError as :func:`sample_goals`."""
    return sample_goals(tasks, n - n // 3, n // 3, seed)


@dataclass
class Why3Context:
    """Per-run state of the mode: the dataset and the sources read so far (by ``.mlw``)."""

    fetched: object
    _sources: dict = field(default_factory=dict)

    def sources(self, mlw: str) -> dict[str, str]:
        """:func:`dependencies` of ``mlw``, read once per run."""
        if mlw not in self._sources:
            self._sources[mlw] = dependencies(self.fetched, mlw)
        return self._sources[mlw]


def gold_candidates(tasks: list[Task]) -> list[Candidate]:
    """The goal itself, for each runnable task (output: the goal's NTP4VC name)."""
    return [Candidate(t.task_id, GOLD, 0, t.goal, "gold") for t in runnable(tasks)]


def build_why3_job(task: Task, cand: Candidate, options: dict, dataset: dict, ctx: Why3Context, *,
                   version: str) -> Job:
    """The AL3 job of a goal: its sources as job files, the Why3 target (``mlw``,
    ``theory``, ``goal``), the cut ``max_wall_s`` and the sources' sha256 (``sources``) in
    the options, :data:`LIMITS`.

    Raises:
        ValueError: a candidate other than ``gold`` (the mode checks goals, not model
            outputs), a goal whose ``.mlw`` source is not a file of the dataset, or as
            :func:`dependencies` and :func:`why3_target`.
    """
    if cand.model != GOLD:
        raise ValueError(f"ntp4vc --lang why3 runs Why3's Auto_level_3 on the goals themselves and takes no "
                         f"candidates; {cand.origin} gives one for {cand.task_id}")
    if not task.mlw_pinned:
        raise ValueError(f"{task.task_id}: its source {task.mlw} is not a file of the dataset (the why3 mode "
                         f"runs the goals whose .mlw sources are pinned: the pearl goals)")
    files = ctx.sources(task.mlw)
    name = PurePosixPath(task.mlw).name
    theory, goal = why3_target(task, files[name])
    digests = {k: sha256_text(v) for k, v in sorted(files.items())}
    opts = dict(options, mlw=name, theory=theory, goal=goal, max_wall_s=MAX_WALL_S, sources=digests)
    return Job(benchmark=NAME, benchmark_version=version, dataset=dataset, mode=MODE, task_id=task.task_id,
               task_sha256=sha256_text(canonical_json({"files": digests, "theory": theory, "goal": goal})),
               candidate=candidate_ref(cand), files=dict(files), options=opts, limits=LIMITS)


def _rows(records: list[Record]) -> list[dict]:
    return [r for r in records if r["mode"] == MODE and r["candidate"]["model"] == GOLD]


def _driver(r: dict) -> dict:
    return (r.get("verifier") or {}).get("extra", {}).get("driver") or {}


def _difference(published: bool, r: dict) -> str:
    if published:
        if r["verdict"] == "timeout":
            return (f"not proved within the cut ({r['verifier']['options'].get('max_wall_s')} s per goal, one "
                    "prover at a time; the paper allowed 10 min on 12 cores)")
        return "Auto_level_3 finished without a proof with the image's provers (no Alt-Ergo, no SPASS, E unusable)"
    return ("proved by the re-run but not in the published run; the provers differ (the published run's "
            "per-prover results are not available)")


def compare(records: list[Record], tasks: dict, fetched=None) -> list[dict]:
    """Each ``why3`` gold record vs the goal's published Auto_level_3 result
    (``tasks``: task id -> :class:`Task`, which holds it; ``fetched`` is not read).

    Returns report.json ``comparison`` entries ``{"task_id", "mode", "model",
    "published": {"auto_level_3"}, "reproduced": {"auto_level_3", "verdict"}, "agree",
    "differences"}``. ``agree`` is None (not compared) when the re-run ended ``invalid``
    or ``infra_error``, or when the dataset has no published result for the goal (the
    difference says which).
    """
    out = []
    for r in _rows(records):
        t = tasks.get(r["task_id"])
        pub = t.published_al3 if t is not None else None
        ran = r["verdict"] not in _NOT_COMPARED
        rerun = r["verdict"] == "verified" if ran else None
        if pub is None:
            agree, diffs = None, [{"field": "auto_level_3", "published": None, "reproduced": rerun,
                                   "explanation": "the dataset publishes no Auto_level_3 result for this goal"}]
        elif not ran:
            agree, diffs = None, [{"field": "auto_level_3", "published": pub, "reproduced": None,
                                   "explanation": f"not compared: the re-run ended {r['verdict']}: {r['reason']}"}]
        else:
            agree = pub == rerun
            diffs = [] if agree else [{"field": "auto_level_3", "published": pub, "reproduced": rerun,
                                       "explanation": _difference(pub, r)}]
        out.append({"task_id": r["task_id"], "mode": MODE, "model": GOLD, "published": {"auto_level_3": pub},
                    "reproduced": {"auto_level_3": rerun, "verdict": r["verdict"]}, "agree": agree,
                    "differences": diffs})
    return out


def agreement_section(records: list[Record], tasks: list[Task]) -> dict:
    """The ``why3_auto_level_3`` section of report.json.

    Returns ``{"agreement": {"both_true", "both_false", "published_only", "rerun_only",
    "agree", "compared"}, "rerun_unproved_breakdown": {"strategy_finished",
    "cut_at_max_wall", "killed_at_job_limit"}, "not_compared": [{"task_id", "verdict",
    "reason"}], "not_runnable": {"tasks", "reason"}, "strategy": {"name", "code",
    "max_wall_s", "running_provers_max"}, "goals": [{"task_id", "theory", "goal",
    "published", "rerun", "verdict", "strategy_status", "strategy_wall_s", "wall_s",
    "proved_by", "leaves"}], "limitations"}``.
    """
    by_id = {t.task_id: t for t in tasks}
    goals = []
    for r in _rows(records):
        t = by_id.get(r["task_id"])
        opts, extra = r["verifier"]["options"], r["verifier"].get("extra") or {}
        ran = r["verdict"] not in _NOT_COMPARED
        goals.append({"task_id": r["task_id"], "theory": opts.get("theory"), "goal": opts.get("goal"),
                      "published": t.published_al3 if t is not None else None,
                      "rerun": (r["verdict"] == "verified") if ran else None, "verdict": r["verdict"],
                      "strategy_status": _driver(r).get("status"),
                      "strategy_wall_s": _driver(r).get("strategy_wall_s"), "wall_s": r["timings"]["wall_s"],
                      "proved_by": extra.get("proved_by"), "leaves": extra.get("leaves")})
    ran = [g for g in goals if g["rerun"] is not None and g["published"] is not None]
    agree = {"both_true": sum(g["published"] and g["rerun"] for g in ran),
             "both_false": sum(not g["published"] and not g["rerun"] for g in ran),
             "published_only": sum(g["published"] and not g["rerun"] for g in ran),
             "rerun_only": sum(not g["published"] and g["rerun"] for g in ran)}
    agree["agree"] = agree["both_true"] + agree["both_false"]
    agree["compared"] = len(ran)
    unproved = [g for g in ran if not g["rerun"]]
    rows = _rows(records)
    first = rows[0]["verifier"]["options"] if rows else {}
    skipped = [t for t in tasks if not t.mlw_pinned]
    return {
        "agreement": agree,
        "rerun_unproved_breakdown": {
            "strategy_finished": sum(g["strategy_status"] == "done" for g in unproved),
            "cut_at_max_wall": sum(g["strategy_status"] == "cut" for g in unproved),
            "killed_at_job_limit": sum(g["strategy_status"] is None for g in unproved)},
        "not_compared": [{"task_id": g["task_id"], "verdict": g["verdict"],
                          "reason": next(r["reason"] for r in rows if r["task_id"] == g["task_id"])}
                         for g in goals if g not in ran],
        "not_runnable": {"tasks": len(skipped),
                         "reason": "their .mlw sources are not files of the dataset (Frama-C goals)"},
        "strategy": {"name": first.get("strategy"), "code": first.get("strategy_code"),
                     "max_wall_s": first.get("max_wall_s"),
                     "running_provers_max": first.get("running_provers_max")},
        "goals": goals,
        "limitations": LIMITATIONS,
    }
