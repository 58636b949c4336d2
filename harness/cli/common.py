"""What the command groups share: argument types, the memory floor, messages."""

from __future__ import annotations

import argparse
import math

from rich.console import Console

#: The smallest memory limit a job may get, MiB: below it no verifier of the kit starts
#: (the JVM of TLC alone reserves more), so a smaller value is a mistake, not a limit.
MIN_MEMORY_MIB = 256

def _int_at_least(low: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{text!r}: must be at least {low}")
        return value
    parse.__name__ = "int"  # argparse names the type in its messages
    return parse


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: must be a finite number of seconds above 0")
    return value


def _say(console: Console, text: str) -> None:
    console.print(text, markup=False, highlight=False)


def _unit(high: float):
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not 0 <= value <= high:
            raise argparse.ArgumentTypeError(f"{text!r}: must be from 0 to {high:g}")
        return value
    parse.__name__ = "number"
    return parse
