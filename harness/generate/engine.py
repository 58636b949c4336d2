"""The turns of a generation (:func:`run_generation`); being written."""

from __future__ import annotations


def run_generation(spec, out, settings, console):
    """Not implemented yet."""
    raise NotImplementedError("verikit generate: the engine is being written")
