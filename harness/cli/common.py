"""What the command groups share: argument types, the memory floor, messages."""

from __future__ import annotations

import argparse
import math

from rich.console import Console

#: The smallest memory limit a job may get, MiB: below it no verifier of the kit starts
#: (the JVM of TLC alone reserves more), so a smaller value is a mistake, not a limit.
MIN_MEMORY_MIB = 256


def _number(convert, what: str, ok, bound: str, name: str):
    """An argparse ``type``: ``convert(text)`` (``int`` or ``float``), then ``ok(value)``.
    Raises ArgumentTypeError: "'TEXT' is not WHAT" or "'TEXT': must be BOUND"."""
    def parse(text: str):
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if not ok(value):
            raise argparse.ArgumentTypeError(f"{text!r}: must be {bound}")
        return value
    parse.__name__ = name  # argparse names the type in its messages
    return parse


def int_at_least(low: int):
    return _number(int, "an integer", lambda v: v >= low, f"at least {low}", "int")


positive_seconds = _number(float, "a number of seconds", lambda v: math.isfinite(v) and v > 0,
                            "a finite number of seconds above 0", "positive_seconds")


def say(console: Console, text: str) -> None:
    console.print(text, markup=False, highlight=False)


def number_up_to(high: float):
    return _number(float, "a number", lambda v: 0 <= v <= high, f"from 0 to {high:g}", "number")
