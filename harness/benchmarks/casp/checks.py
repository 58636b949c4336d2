"""What the CASP integrity rules share: the record of one check (:func:`checked`: the
records' ``checks``) and the reading of Frama-C's view (functions by name, the key of a
global annotation)."""

from __future__ import annotations


def checked(name: str, problems: list[str], ok_detail: str) -> dict:
    """One record ``checks`` entry: ``{"name", "ok": no problems, "detail": the first four
    problems, or ok_detail}``."""
    return {"name": name, "ok": not problems, "detail": "; ".join(problems[:4]) if problems else ok_detail}


def functions_by_name(view: dict) -> dict[str, dict]:
    """``{function name: its entry}`` of a Frama-C view (verikit_framac_view.ml's JSON)."""
    return {f["name"]: f for f in view.get("functions", [])}


def global_key(g: dict) -> tuple:
    """``(kind, name, text)``: what tells two global annotations of a view apart."""
    return g["kind"], g["name"], g["text"]
