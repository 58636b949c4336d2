"""Reading Frama-C WP's output (both log dialects of the package docstring): goals,
smoke tests and the summary, into a :class:`~harness.model.VerifierResult`."""

from __future__ import annotations

import json
import re

from ...model import GoalCounts, VerifierResult

_SUMMARY = re.compile(r"^\[wp\] Proved goals:\s+(\d+)\s*/\s*(\d+)", re.M)
_SUMMARY_ITEM = re.compile(r"^\s{2,}([A-Za-z][\w .+-]*?):\s+(\d+)\b", re.M)
_GOAL25 = re.compile(r"^\[wp\] \[([^\]]+)\] Goal (\S+)(?: : (\w+))?(.*)$")
_SMOKE = re.compile(r"^\[wp\] \[(Passed|Failed)\] Smoke-test (\S+)")
_GOAL30 = re.compile(r"^\[wp\] \[(Timeout|Failed|Unknown|Stepout|Unsuccess|Doomed|Unreachable)\] (typed_\S+)(.*)$")
_REQUIRES_SMOKE = re.compile(r"_wp_smoke_\w*requires")
_LOCATED_SMOKE = re.compile(r"^\[wp\] (\S+:\d+): Warning: Failed smoke-test\s*$")
_NO_GOAL = "[wp] Warning: No goal generated"  # WP's whole output when there is nothing to prove
_PROVER_LINE = re.compile(r"^\s+([A-Za-z][\w .+-]*?):\s+(\w+)")
_ERROR = re.compile(r"^\[(kernel|wp|rte)[^\]]*\].*(error|Error|Failure|aborted|Warning|\.c:\d+:\s*$)", re.M)


def error_messages(log: str) -> list[str]:
    """Error/warning lines, each joined with its indented continuation line."""
    lines = log.splitlines()
    out = []
    for i, line in enumerate(lines):
        if _ERROR.match(line) and "Smoke-test" not in line and "Failed smoke-test" not in line:
            nxt = lines[i + 1].strip() if i + 1 < len(lines) and lines[i + 1].startswith("  ") else ""
            out.append(f"{line.strip()} {nxt}".strip())
    return out[:20]


def parse_goals(log: str, report: bytes | None, messages: list[str]) -> VerifierResult:
    """A WP log (and its ``-wp-report-json`` report, when there is one) as a result: goal
    counts from WP's own summary less the smoke tests, the unproved goals, failed smoke
    tests of requires in ``vacuous`` (verdict ``failed``), the others in ``extra["dead_code"]``.
    ``infra_error`` when the log has no WP summary at all."""
    goal_results: dict[str, dict] = {}
    smoke: dict[str, str] = {}
    lines = log.splitlines()
    for i, line in enumerate(lines):
        m = _SMOKE.match(line)
        if m:
            smoke[m.group(2)] = "passed" if m.group(1) == "Passed" else "doomed"
            continue
        m = _GOAL25.match(line)
        if m:
            tag, name, status, rest = m.groups()
            if status is None:  # "[wp] [Failed] Goal X" + indented prover lines
                status, prover = tag, None
                for follow in lines[i + 1:]:
                    pm = _PROVER_LINE.match(follow)
                    if not pm:
                        break
                    prover, status = pm.group(1), pm.group(2)
                    if status == "Timeout":
                        break
            else:
                prover = tag
            goal_results[name] = {"name": name, "status": status.lower(), "prover": prover,
                                  "time_s": _time(rest)}
            continue
        m = _GOAL30.match(line)
        if m:
            status, name, rest = m.groups()
            goal_results[name] = {"name": name, "status": status.lower(), "prover": None, "time_s": _time(rest)}
    summary = _SUMMARY.search(log)
    items = {k.strip(): int(v) for k, v in _SUMMARY_ITEM.findall(log[summary.end():])} if summary else {}
    json_counts = _report_counts(report)
    unnamed = _unnamed_failed_smoke(lines)
    n_smoke = (len(smoke) or json_counts.get("smoke_total", 0)) + len(unnamed)
    smoke_passed = sum(1 for s in smoke.values() if s == "passed")
    if summary:
        proved_all, total_all = int(summary.group(1)), int(summary.group(2))
        proved, total = proved_all - smoke_passed, total_all - n_smoke
    elif json_counts:
        proved, total = json_counts["valid"], json_counts["total"]
    else:
        proved = total = 0
    statuses = [g["status"] for g in goal_results.values() if "_wp_smoke_" not in g["name"]]
    goals = GoalCounts(
        proved=proved,
        total=total,
        timeout=max(items.get("Timeout", 0), statuses.count("timeout")),
        failed=max(items.get("Failed", 0), statuses.count("failed") - statuses.count("timeout")),
        unknown=statuses.count("unknown"),
    )
    doomed = sorted(n for n, s in smoke.items() if s == "doomed")
    # A doomed smoke test on a precondition means the contract is inconsistent (vacuous).
    # Dead code, loops or calls under a consistent contract are reported, not rejected:
    # a strong precondition legitimately makes a branch dead (CASP pair 04_140).
    vacuous = [n for n in doomed if _REQUIRES_SMOKE.search(n)]
    dead = [n for n in doomed if n not in vacuous]
    extra = {k: items[k] for k in ("Terminating", "Unreachable") if k in items}
    if n_smoke:
        extra["smoke_tests"] = n_smoke
    if unnamed:
        extra["smoke_failed_unnamed"] = unnamed
    if dead:
        extra["dead_code"] = dead
    if json_counts.get("functions"):
        extra["functions"] = json_counts["functions"]
    unproved = [g for g in goal_results.values() if g["status"] != "valid" and "_wp_smoke_" not in g["name"]]
    if summary is None and not json_counts and _NO_GOAL not in log:
        return VerifierResult("infra_error", "no WP summary in the output", messages=messages)
    if vacuous:  # fail closed: an inconsistent contract never counts as verified
        verdict, reason = "failed", f"smoke test(s) failed: {', '.join(vacuous[:3])} (inconsistent precondition)"
    elif total == 0:
        verdict, reason = "failed", "WP generated no proof obligation"
    elif proved == total:
        verdict, reason = "verified", f"all {total} goals proved"
    else:
        names = ", ".join(g["name"] for g in unproved[:3])
        verdict, reason = "failed", f"{proved}/{total} goals proved" + (f"; not proved: {names}" if names else "")
    return VerifierResult(verdict, reason, goals=goals, goal_results=sorted(unproved, key=lambda g: g["name"]),
                          vacuous=vacuous, messages=messages, extra=extra)


def _unnamed_failed_smoke(lines: list[str]) -> list[str]:
    """The locations (``file.c:line``) of failed smoke tests WP reports only as a warning
    with no goal name (Frama-C 25: code after ``while (1) ;``), counted in its summary's
    total but not goals; a warning after a named ``[Failed] Smoke-test`` is that test's."""
    out, prev = [], ""
    for line in lines:
        m = _LOCATED_SMOKE.match(line)
        if m and not _SMOKE.match(prev) and m.group(1) not in out:
            out.append(m.group(1))
        if line[:1] not in (" ", "\t"):
            prev = line
    return out


def _time(rest: str) -> float | None:
    """Largest duration in a goal line's tail, in seconds (``(20ms)``, ``(2s)``)."""
    best = None
    for num, unit in re.findall(r"(\d+(?:\.\d+)?)(ms|s)\b", rest or ""):
        t = float(num) / (1000 if unit == "ms" else 1)
        best = t if best is None else max(best, t)
    return best


def _report_counts(report: bytes | None) -> dict:
    """Totals from ``-wp-report-json``: non-smoke ``total``/``valid`` and ``smoke_total``."""
    if not report:
        return {}
    try:
        data = json.loads(report)
    except (ValueError, UnicodeDecodeError):
        return {}
    if not isinstance(data, dict):  # WP writes "null" when no function had a goal
        return {}
    total = valid = smoke = 0
    for props in data.get("wp:functions", {}).values():
        for prop, stats in props.items():
            if prop == "wp:section":
                continue
            main = stats.get("wp:main", {})
            if "_wp_smoke_" in prop:
                smoke += main.get("total", 0)
            else:
                total += main.get("total", 0)
                valid += main.get("valid", 0)
    return {"total": total, "valid": valid, "smoke_total": smoke, "functions": len(data.get("wp:functions", {}))}
