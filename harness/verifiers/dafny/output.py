"""Reading Dafny's output, per method: one run's printed errors and summary, in either
dialect (:func:`parse_file_output`), and the ``/xml`` report of dialect 2
(:func:`_apply_xml`)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

STATUSES = ("verified", "failed", "timeout", "out_of_resource", "invalid", "not_run", "unknown")

_ERR = re.compile(r"^(?P<file>[^\s(][^(]*?)\((?P<line>\d+),(?P<col>\d+)\): (?:(?P<kind>Error|Related location|Warning)"
                  r"(?: BP\d+)?:? ?)?(?P<msg>.*)$")
_SUMMARY = re.compile(r"Dafny program verifier finished with (\d+) verified, (\d+) errors?"
                      r"(?:, (\d+) time outs?)?(?:, (\d+) out of resource)?")
_STOP = re.compile(r"(\d+) (parse|resolution/type) errors? detected in (\S+)")
_TIMEOUT4 = re.compile(r"Verification of '([^']+)' timed out")
_OOR4 = re.compile(r"Verification out of resource \(([^)]+)\)")
_POSTCONDITION = re.compile(r"postcondition (might not hold|could not be proved)", re.I)


def Counter_(goal_results: list[dict]) -> dict:
    """Number of methods per status (every status of :data:`STATUSES` present)."""
    c = {s: 0 for s in STATUSES}
    for g in goal_results:
        c[g["status"]] += 1
    return c


def parse_file_output(text: str, methods: list, dialect: str, xml: bytes | None, path: str,
                      *, outside: list | None = None) -> tuple[dict, str]:
    """Results of one Dafny run on one file.

    Args:
        text: the run's combined output; methods: ``[[name, first line, last line], ...]``
        of the file; dialect: ``"2"`` or ``"4"``; xml: the ``/xml`` report (dialect 2) or
        None; path: the file name as given to Dafny (errors of other files are ignored);
        outside: when given, receives ``"<file>(<line>): <message>"`` for every error
        outside the methods' line ranges and every procedure of the ``/xml`` report that
        is not one of the methods and whose outcome is not ``correct`` (completed runs
        only: a stopped run's errors make its methods ``invalid``).

    Returns:
        ``({method: {"status", "failure", "messages", "time_s"}}, outcome)`` where
        ``outcome`` is ``completed``, ``stopped: <message>`` (parse/resolution errors: the
        methods with an error in their range are ``invalid``, the others ``not_run``) or
        ``crashed`` (no summary line: every method ``unknown``).
    """
    base = path.rsplit("/", 1)[-1]
    errors = []  # (line, kind, message)
    for raw in text.splitlines():
        m = _ERR.match(raw.strip())
        if m and m.group("file").rsplit("/", 1)[-1] == base:
            msg = m.group("msg").strip()
            kind = m.group("kind") or ("Error" if re.search(r"timed out|Timed out on", msg) else "Info")
            errors.append((int(m.group("line")), kind, msg))
    per = {n: {"status": "verified", "failure": None, "messages": [], "time_s": None} for n, _a, _b in methods}

    def owner(line: int) -> str | None:
        for n, a, b in methods:
            if a <= line <= b:
                return n
        return None

    stop = _STOP.search(text)
    if stop:
        for n in per:
            per[n]["status"] = "not_run"
        for line, kind, msg in errors:
            n = owner(line)
            if n and kind == "Error":
                per[n]["status"] = "invalid"
                per[n]["messages"].append(f"{base}({line}): {msg}")
        return per, f"stopped: {stop.group(0)}" + (f" (first: line {errors[0][0]}: {errors[0][2]})" if errors else "")
    summary = _SUMMARY.search(text)
    if not summary:
        for n in per:
            per[n]["status"] = "unknown"
        return per, "crashed"
    # errors by location (Related locations point into the same method's clauses)
    for line, kind, msg in errors:
        n = owner(line)
        if n is None and kind == "Error" and outside is not None:
            outside.append(f"{base}({line}): {msg}")
        if n is None or kind != "Error":
            continue
        r = per[n]
        t4, o4 = _TIMEOUT4.search(msg), _OOR4.search(msg)
        if t4 or "timed out" in msg or msg.startswith("Timed out on"):
            r["status"] = "timeout"
        elif o4:
            r["status"] = "out_of_resource"
        elif r["status"] not in ("timeout", "out_of_resource"):
            r["status"] = "failed"
            kind_ = "postcondition" if _POSTCONDITION.search(msg) else "other"
            r["failure"] = kind_ if r["failure"] in (None, kind_) else "other"
        r["messages"].append(f"{base}({line}): {msg}")
    if dialect == "4":
        for m in _TIMEOUT4.finditer(text):
            if m.group(1) in per:
                per[m.group(1)]["status"] = "timeout"
        for m in _OOR4.finditer(text):
            if m.group(1) in per:
                per[m.group(1)]["status"] = "out_of_resource"
    if xml is not None:
        _apply_xml(per, xml, outside, base)
    return per, "completed"


def _apply_xml(per: dict, xml: bytes, outside: list | None = None, base: str = "") -> None:
    """Dialect 2: fold the per-procedure outcomes of Boogie's ``/xml`` report into the
    results (timeouts, resource outs, durations; an ``errors`` outcome without an error
    message in the text is the resource-limit case, see the package docstring). A
    procedure that is none of the methods (a helper's well-formedness or body) with an
    outcome other than ``correct`` is appended to ``outside``."""
    try:
        root = ET.fromstring(xml.decode("utf-8-sig", "replace"))
    except ET.ParseError:
        return
    by_boogie = {}
    for n in per:
        suffix = n.replace("_", "__")
        by_boogie["Impl$$_module.__default." + suffix] = n
        by_boogie["CheckWellformed$$_module.__default." + suffix] = n
    seen = set()
    for m in root.iter("method"):
        n = by_boogie.get(m.get("name", ""))
        if n is None:
            concl = m.find("conclusion")
            oc = concl.get("outcome", "").replace(" ", "").lower() if concl is not None else "none"
            if oc != "correct" and outside is not None:
                outside.append(f"{base}: procedure {m.get('name', '?')}: outcome {oc or 'none'}")
            continue
        seen.add(n)
        concl = m.find("conclusion")
        if concl is None:
            per[n]["status"] = "unknown"
            continue
        outcome = concl.get("outcome", "").replace(" ", "").lower()  # Boogie 2.3 writes "timedout"
        dur = concl.get("duration")
        if dur is not None:
            per[n]["time_s"] = round((per[n]["time_s"] or 0.0) + float(dur), 3)
        r = per[n]
        if outcome == "timedout":
            r["status"] = "timeout"
        elif outcome == "outofresource":
            r["status"] = "out_of_resource"
        elif outcome == "outofmemory":
            r["status"] = "unknown"
            r["messages"].append("prover out of memory")
        elif outcome == "inconclusive":
            r["status"] = "unknown" if r["status"] == "verified" else r["status"]
        elif outcome == "errors" and r["status"] == "verified":
            has_error = m.find("error") is not None
            r["status"] = "failed" if has_error else "out_of_resource"
            if not has_error:
                r["messages"].append("the prover stopped without an answer (resource limit exceeded)")
        elif outcome not in ("correct", "errors"):  # fail closed on an outcome this parser does not know
            r["status"] = "unknown"
            r["messages"].append(f"unknown verifier outcome {concl.get('outcome')!r}")
    for n in per:
        if n not in seen and per[n]["status"] == "verified":
            per[n]["status"] = "unknown"
            per[n]["messages"].append("no outcome for this method in the verifier's XML report")
