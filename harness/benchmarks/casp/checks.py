"""What the CASP integrity rules share: the record of one check (:func:`_check`: the
records' ``checks``) and the reading of Frama-C's view (functions by name, the key of a
global annotation)."""

from __future__ import annotations


def _check(name: str, problems: list[str], ok_detail: str) -> dict:
    return {"name": name, "ok": not problems, "detail": "; ".join(problems[:4]) if problems else ok_detail}


def _functions(view: dict) -> dict[str, dict]:
    return {f["name"]: f for f in view.get("functions", [])}


def _global_key(g: dict) -> tuple:
    return g["kind"], g["name"], g["text"]
