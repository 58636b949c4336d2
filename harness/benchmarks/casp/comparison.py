"""CASP published vs reproduced: the study's per-candidate results (:func:`study_results`,
its Frama-C logs read with the live parser), the comparison of a run with the dataset's
and the study's verdicts and goal counts (:func:`compare`), the paper's figures
(:func:`load_published`, :func:`model_figures`) and the reproduced ones
(:func:`reproduce`), and the report's notes (:func:`notes`)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from ... import datasets
from ...model import GOLD, ProcResult, Record
from ...plugin import Reproduction
from ...results import is_canary
from ...verifiers.framac import FramaC
from .. import published_figures, published_model_figures
from . import execution, integrity, soundness
from .tasks import NAME, SAMPLE_ROOT

framac_parser = FramaC()  # reads the study's recorded logs exactly as live runs are read


def study_results(fetched: datasets.FetchedDataset) -> dict[tuple[str, str], dict]:
    """Per-candidate results of the CASP-LLM-Verification-Study (``framac_results.csv``).

    Returns:
        ``{(task_id, "<provider>/<model>"): {"verdict", "proved", "total", "returncode"}}``;
        their protocol: the candidate file alone (no task dependencies), ``frama-c -wp
        -wp-rte -wp-prover alt-ergo`` with default timeout, Alt-Ergo 2.4.3.
    """
    path = fetched.files.get("framac_results.csv")
    if not path:
        return {}
    out = {}
    for row in csv.DictReader(io.StringIO(Path(path).read_text())):
        rc = int(row["returncode"])
        proved = int(float(row["proved_goals"])) if row["proved_goals"] else None
        total = int(float(row["total_goals"])) if row["total_goals"] else None
        verdict = "invalid" if rc != 0 else ("verified" if proved == total else "failed")
        entry = {"verdict": verdict, "proved": proved, "total": total, "returncode": rc, "reason": ""}
        log = fetched.files.get(f"{SAMPLE_ROOT}/{row['directory']}/framac_log_{row['provider']}_{row['model']}.log")
        if log:  # the study's own Frama-C log, read with the same parser as live runs
            body = Path(log).read_text().split("# --- Begin frama-c output ---\n", 1)[-1]
            entry["reason"] = framac_parser.parse(ProcResult(argv=[], returncode=rc, stdout=body)).reason
        out[(row["directory"], f"{row['provider']}/{row['model']}")] = entry
    return out


# --------------------------------------------------------------------------- comparison

def _framac_major(tc: dict) -> int:
    raw = (tc.get("tools", {}).get("frama-c", {}) or {}).get("version") or "0"
    try:
        return int(raw.split(".")[0])
    except ValueError:
        return 0


def _explain_goals(pub_total: int, rep_total: int, record: dict) -> str:
    d = pub_total - rep_total
    tc = record["toolchain"]
    fc_tool = tc.get("tools", {}).get("frama-c", {}) or {}
    fc, pin = fc_tool.get("version"), fc_tool.get("published")
    n_fun = record["verifier"].get("extra", {}).get("functions")
    if n_fun and d == 2 * n_fun and _framac_major(tc) < 26:
        return (f"goal-count change between Frama-C versions: Frama-C {pin} adds one 'Terminating' and one "
                f"'Unreachable' goal per function (the study's Frama-C logs count them), Frama-C {fc} "
                f"generates neither: {n_fun} function(s) x 2 = {d}")
    return f"toolchain drift: Frama-C {fc} vs published {pin}; goal total differs by {d:+d}"


def compare_gold(records: list[Record], tasks: dict) -> list[dict]:
    """Per task, the dataset's published verification (Frama-C 30.0) vs this run."""
    rows = []
    for r in records:
        if r["mode"] != "gold" or r["candidate"]["model"] != "gold":
            continue
        pub = tasks[r["task_id"]].published
        if pub is None:  # the user's own dataset: nothing published to compare with
            continue
        published = {"verdict": "verified" if pub.get("verified") else "failed",
                     "proved": pub.get("verified_goals"), "total": pub.get("total_goals"),
                     "source": "dataset (meta.txt / parquet columns), counted by the published Frama-C"}
        goals = r["goals"] or {}
        reproduced = {"verdict": r["verdict"], "proved": goals.get("proved"), "total": goals.get("total")}
        diffs = []
        tc = r["toolchain"]
        if published["verdict"] != reproduced["verdict"]:
            diffs.append({"field": "verdict", "published": published["verdict"], "reproduced": r["verdict"],
                          "explanation": f"{r['reason']}; toolchain drift: {_drift_text(tc)}"})
        diffs += _goal_diffs(published, reproduced, r)
        rows.append({"task_id": r["task_id"], "mode": "gold", "model": "gold", "published": published,
                     "reproduced": reproduced, "agree": published["verdict"] == reproduced["verdict"],
                     "differences": diffs})
    return rows


def compare_study(records: list[Record], study: dict) -> list[dict]:
    """Per bundled candidate, the study's verdict (its own protocol) vs this run."""
    rows = []
    for r in records:
        key = (r["task_id"], r["candidate"]["model"])
        if r["mode"] != "spec-from-code" or not r["candidate"]["origin"].startswith("bundled:") or key not in study:
            continue
        pub = dict(study[key], source="CASP-LLM-Verification-Study framac_results.csv + log")
        goals = r["goals"] or {}
        rep = {"verdict": r["verdict"], "proved": goals.get("proved"), "total": goals.get("total")}
        diffs = []
        if pub["verdict"] != rep["verdict"]:
            if r["verdict"] == "rejected":
                why = f"integrity check of the kit (the study has none): {r['reason']}"
            elif pub["verdict"] == "invalid":
                why = (f"context: the study checked the candidate file alone and Frama-C stopped with "
                       f"'{pub['reason']}'; the kit checks the contract with the pair's dependencies")
            else:
                why = (f"provers and limits differ: the study used Alt-Ergo 2.4.3 alone with Frama-C's default "
                       f"10 s; the kit used {', '.join(r['verifier']['options'].get('provers', []))} with "
                       f"{r['verifier']['options'].get('wp_steps')} steps / {r['verifier']['options'].get('wp_timeout_s')} s"
                       f" ({r['reason']})")
            diffs.append({"field": "verdict", "published": pub["verdict"], "reproduced": rep["verdict"],
                          "explanation": why})
        diffs += _goal_diffs(pub, rep, r)
        rows.append({"task_id": r["task_id"], "mode": r["mode"], "model": r["candidate"]["model"],
                     "published": pub, "reproduced": rep, "agree": pub["verdict"] == rep["verdict"],
                     "differences": diffs})
    return rows


def _goal_diffs(pub: dict, rep: dict, record: dict) -> list[dict]:
    """Differences in goal counts: total, and proved when it differs by another amount."""
    if None in (pub["total"], rep["total"], pub["proved"], rep["proved"]):
        return []
    out = []
    if pub["total"] != rep["total"]:
        out.append({"field": "goals.total", "published": pub["total"], "reproduced": rep["total"],
                    "explanation": _explain_goals(pub["total"], rep["total"], record)})
    if pub["proved"] - rep["proved"] != pub["total"] - rep["total"]:
        out.append({"field": "goals.proved", "published": pub["proved"], "reproduced": rep["proved"],
                    "explanation": f"{rep['proved']}/{rep['total']} proved here vs {pub['proved']}/{pub['total']} "
                                   f"published: {record['reason']}"})
    return out


def _drift_text(tc: dict) -> str:
    return ", ".join(f"{d['tool']} {d['probed'] or 'missing'} vs {d['published']}" for d in tc.get("drift", [])) \
        or "none"


def compare(records: list[Record], tasks: dict, fetched) -> list[dict]:
    """Gold verdicts and goal counts vs the dataset's published ones
    (:func:`compare_gold`); bundled specifications vs the CASP-LLM-Verification-Study's
    verdicts (:func:`compare_study`)."""
    return compare_gold(records, tasks) + compare_study(records, study_results(fetched))


def load_published() -> dict:
    """``results/published/casp.json``: the paper's figures."""
    return published_figures(NAME)


def model_figures(mode: str, model: str | None = None) -> list[dict]:
    """The CASP paper gives no per-model figure; the CASP-LLM-Verification-Study's
    verdicts give one per model for ``spec-from-code`` on casp-sample10 (pass@1, one
    specification per pair; ``results/published/casp.json`` ``model_figures``)."""
    return published_model_figures(NAME, mode, model)


def reproduce(fetched, run: dict | None) -> Reproduction:
    """The gold pairs' verdicts and goal counts of the run of ``gold`` vs the dataset's
    published ones (Frama-C 30.0): :func:`reproduce_figures`. ``fetched`` is not read
    (the run's tasks carry the published results)."""
    return reproduce_figures(run["records"], {t.task_id: t for t in run["tasks"]})


def reproduce_figures(records: list[Record], tasks: dict) -> Reproduction:
    """Published vs reproduced for the gold pairs: how many verify, and per pair its
    verdict and goal total as the dataset records them (Frama-C 30.0 counts).

    A goal total that differs while the toolchain does not match the published pins is
    ``not_reproducible`` (goal counts belong to a Frama-C version: 30.0 adds Terminating
    and Unreachable goals, see :func:`_explain_goals`), with both values and the reason;
    with matching pins it ``differs``. Verdicts are compared whatever the toolchain.
    """
    gold = sorted((r for r in records if r["mode"] == "gold" and r["candidate"]["model"] == GOLD),
                  key=lambda r: r["task_id"])
    figures, notes = [], []
    pub_ok = sum(bool((tasks[r["task_id"]].published or {}).get("verified")) for r in gold)
    rep_ok = sum(r["verdict"] == "verified" for r in gold)
    figures.append({"table": "dataset", "row": "gold pairs verified", "column": "count",
                    "published": {"passed": pub_ok, "total": len(gold)}, "reproduced": {"passed": rep_ok, "total": len(gold)},
                    "status": "reproduced" if pub_ok == rep_ok else "differs"})
    unpublished = [r["task_id"] for r in gold if tasks[r["task_id"]].published is None]
    if unpublished:
        return Reproduction(figures=[{"table": "dataset", "row": "gold", "column": "verdicts", "published": None,
                                      "reproduced": {"passed": rep_ok, "total": len(gold)}, "status": "not_reproducible",
                                      "notes": [f"the dataset publishes no verdicts for {len(unpublished)} task(s)"]}],
                            notes=["this dataset publishes no verdicts: nothing to compare with"])
    for r in gold:
        pub = tasks[r["task_id"]].published
        pub_verdict = "verified" if pub.get("verified") else "failed"
        figures.append({"table": "dataset", "row": r["task_id"], "column": "verdict", "published": pub_verdict,
                        "reproduced": r["verdict"], "status": "reproduced" if pub_verdict == r["verdict"] else "differs"})
        total = (r["goals"] or {}).get("total")
        if pub.get("total_goals") is None:
            continue
        fig = {"table": "dataset", "row": r["task_id"], "column": "goals total", "published": pub["total_goals"],
               "reproduced": total, "status": "reproduced" if total == pub["total_goals"] else "differs"}
        if fig["status"] == "differs" and not r["toolchain"]["pin_match"]:
            fig["status"] = "not_reproducible"
            fig["notes"] = [_explain_goals(pub["total_goals"], total or 0, r)]
        figures.append(fig)
    if any(f["status"] == "not_reproducible" for f in figures):
        notes.append("goal totals are counted by the published Frama-C 30.0; this toolchain does not match the pins, "
                     "so differing totals are marked not reproducible (each figure says why)")
    return Reproduction(figures=figures, notes=notes)


def integrity_notes(records: list[Record]) -> list[str]:
    """What the integrity rules found (:mod:`.integrity`), for the report: per candidate
    mode the ``termination`` statuses, the tasks whose own contract has no ensures
    (``trivial_task``), and every scored candidate (not a canary) rejected by a rule
    checked on Frama-C's view, with the rule's finding."""
    out = []
    unsound: dict[str, list] = {}
    for r in records:  # tasks whose fixed part WP's smoke tests find inconsistent
        if r["verifier"].get("extra", {}).get("task_sound") is False:
            unsound.setdefault(r["task_id"], r["verifier"]["extra"].get("task_sound_detail", []))
    for task_id, detail in sorted(unsound.items()):
        out.append(f"task {task_id} is inconsistent (task_sound false: {'; '.join(detail[:3])}): its verdicts rest on "
                   f"a contradiction of the task's own prelude or contract")
    for mode in ("code-from-spec", "spec-from-code"):
        recs = [r for r in records if r["mode"] == mode]
        if not recs:
            continue
        counts: dict[str, int] = {}
        for r in recs:
            status = r["verifier"].get("extra", {}).get("termination", "not-run (decided before Frama-C ran)")
            counts[status] = counts.get(status, 0) + 1
        out.append(f"{mode}: termination {', '.join(f'{k} {v}' for k, v in sorted(counts.items()))} "
                   "(Frama-C 25 proves partial correctness; see harness/benchmarks/casp/docs.md "
                   "'Total correctness (code-from-spec)')")
        trivial = sorted({r["task_id"] for r in recs if r["verifier"].get("extra", {}).get("trivial_task")})
        if trivial:
            out.append(f"{mode}: the task contract of {', '.join(trivial)} has no ensures (trivial_task: a correct "
                       f"body is verified, never counted as a model's failure)")
        stronger = sorted(f"{r['task_id']} {r['candidate']['model']}" for r in recs
                          if r["verifier"].get("extra", {}).get("requires_weaker_or_equal") is False
                          and not is_canary(r["candidate"]["model"]))
        if stronger:  # reported beside the verified rate, not a verdict change
            out.append(f"{mode}: requires stronger than the task's (not implied by the task's requires, WP): "
                       + ", ".join(stronger))
        for r in recs:
            if r["verdict"] == "rejected" and not is_canary(r["candidate"]["model"]):
                view_rules = [c for c in r["checks"] if not c["ok"]
                              and c["name"] in integrity.RULES + soundness.SOUNDNESS_RULES]
                if view_rules:
                    out.append(f"{mode} {r['task_id']} {r['candidate']['model']}: rejected by "
                               + "; ".join(f"{c['name']} ({c['detail']})" for c in view_rules))
    return out


def notes(records: list[Record], modes: list[str]) -> list[str]:
    """Notes for report.json: unreachable code the WP smoke tests find under gold
    contracts (not a rejection), the integrity summary (:func:`integrity_notes`), the
    execution cross-check's statuses and the mean spec strength per model
    (:func:`.execution.report_notes`)."""
    dead = {r["task_id"]: r["verifier"]["extra"]["dead_code"] for r in records
            if r["candidate"]["model"] == GOLD and r["verifier"].get("extra", {}).get("dead_code")}
    out = [f"WP smoke tests find unreachable code or calls under the gold contract of {task_id}: "
           f"{', '.join(names)} (not a rejection: the precondition is consistent)"
           for task_id, names in sorted(dead.items())]
    return out + integrity_notes(records) + execution.report_notes(records)
