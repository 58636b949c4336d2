"""What two run directories establish, compared (:func:`compare_runs`): verdicts and goal
counts exactly, report numbers within a tolerance."""

from __future__ import annotations

import json
from pathlib import Path

from .records import CANARY_PREFIX, load_records, record_identity, record_outcome


#: Default tolerance of :func:`compare_runs` on numbers of report.json (metrics, the
#: reproduced figures): absolute. The kit's metrics are deterministic (seeded bootstrap),
#: so only float formatting across platforms may move them; a verdict or a goal count
#: is always compared exactly.
TOLERANCE = 1e-9


def _leaves(obj, prefix: str = "") -> dict[str, object]:
    """``{"a.b.0": leaf}`` of nested dicts and lists."""
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            out.update(_leaves(v, f"{prefix}{k}."))
        return out
    if isinstance(obj, list):
        out = {}
        for i, v in enumerate(obj):
            out.update(_leaves(v, f"{prefix}{i}."))
        return out
    return {prefix.rstrip("."): obj}


def _same(a, b, tolerance: float) -> bool:
    if isinstance(a, bool) or isinstance(b, bool) or not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
        return a == b
    return abs(a - b) <= tolerance


def _figure_key(f: dict) -> str:
    return str(f.get("name") or " / ".join(str(f.get(k, "")) for k in ("table", "row", "column")))


def compare_runs(expected: Path, actual: Path, *, tolerance: float = TOLERANCE,
                 subset: bool = False) -> tuple[list[tuple[str, str, str]], dict]:
    """Compare what two run directories establish: per job identity (mode, task, model,
    sample, origin) the verdict and the goals proved/total **exactly** (a canary's verdict:
    any of the verdicts its expected report allows it, e.g. a non-terminating proof's
    ``timeout`` or ``memout``, whichever limit the machine hits first), jobs present in
    only one of them, and report.json's ``metrics`` and ``reproduction`` (summary, and
    each figure's reproduced value and status) with numbers within ``tolerance``
    (absolute). Timings, keys, fingerprints, reasons and provenance are not compared
    (they change with the machine and the kit's code). With ``subset``, ``actual`` ran
    part of ``expected``'s jobs (a smoke test): only its records are compared (each must
    be in ``expected``), and report numbers are not (they are over other records).

    Returns:
        ``(differences, counts)``: differences as ``(what, expected, actual)`` strings
        (empty: the runs agree); counts ``{"records", "verdicts_equal", "goals_equal",
        "numbers", "numbers_equal"}``.

    Raises:
        ValidationError: a records.jsonl line is not JSON; OSError: a file is unreadable.
    """
    expected, actual = Path(expected), Path(actual)
    try:  # a canary's claim is that it is rejected: any verdict its expected set allows (a loop: timeout or memout)
        canaries = {(c["mode"], c["model"]): set(c["expected"]) for c in json.loads(
            (expected / "report.json").read_text(encoding="utf-8")).get("canaries", {}).get("results", [])}
    except (OSError, ValueError, KeyError, TypeError):
        canaries = {}
    ref = {record_identity(r): r for r in load_records(expected / "records.jsonl")}
    new = {record_identity(r): r for r in load_records(actual / "records.jsonl")}
    diffs: list[tuple[str, str, str]] = []
    if subset:
        ref = {k: v for k, v in ref.items() if k in new}
    diffs += [(" / ".join(map(str, k)), "present", "missing") for k in sorted(set(ref) - set(new), key=str)]
    diffs += [(" / ".join(map(str, k)), "absent", "present") for k in sorted(set(new) - set(ref), key=str)]
    counts = {"records": len(ref), "verdicts_equal": 0, "goals_equal": 0, "numbers": 0, "numbers_equal": 0}
    for k in sorted(set(ref) & set(new), key=str):
        a, b = record_outcome(ref[k]), record_outcome(new[k])
        allowed = canaries.get((k[0], k[2]))
        if allowed and a["verdict"] in allowed and b["verdict"] in allowed:
            b = {**b, "verdict": a["verdict"]}
        counts["verdicts_equal"] += a["verdict"] == b["verdict"]
        counts["goals_equal"] += (a["goals.proved"], a["goals.total"]) == (b["goals.proved"], b["goals.total"])
        for field_name in a:
            if a[field_name] != b[field_name]:
                diffs.append((f"{' / '.join(map(str, k))}: {field_name}", str(a[field_name]), str(b[field_name])))
    if subset:
        return diffs, counts
    reports = []
    for d in (expected, actual):
        try:
            reports.append(json.loads((d / "report.json").read_text(encoding="utf-8")))
        except FileNotFoundError:
            reports.append({})
    views = []
    for r in reports:
        repro = r.get("reproduction") or {}
        view = {"metrics": r.get("metrics") or {}, "reproduction.summary": repro.get("summary")}
        view["reproduction.figures"] = {_figure_key(f): {"reproduced": f.get("reproduced"), "status": f.get("status")}
                                        for f in repro.get("figures") or []}
        views.append(_leaves(view))
    for path in sorted(set(views[0]) | set(views[1])):
        if f".per_model.{CANARY_PREFIX}" in path:  # a canary's verdict may be any its set allows (above)
            continue
        a, b = views[0].get(path, "absent"), views[1].get(path, "absent")
        counts["numbers"] += 1
        if _same(a, b, tolerance):
            counts["numbers_equal"] += 1
        else:
            diffs.append((f"report.json {path}", json.dumps(a), json.dumps(b)))
    return diffs, counts
