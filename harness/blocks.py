"""Report blocks: what a benchmark shows in the HTML report, typed (:class:`Table`,
:class:`Bars`, :class:`VerdictBars`, :class:`Scatter`, :class:`Text`), rendered by a report
that knows no benchmark (:mod:`harness.htmlreport`). Part of the plugin interface:
:mod:`harness.plugin` re-exports them, and a plugin imports them from there. This module
imports nothing of the kit (layer 0).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Table:
    """A table: ``head`` (column names) and ``rows`` (lists of cells: str, numbers, None)."""

    title: str | None
    head: list[str]
    rows: list[list]


@dataclass(frozen=True)
class Bars:
    """Grouped bars: ``values`` is ``{group: {series: value}}``; ``ymax`` caps the axis
    (100 for percentages), None: automatic."""

    title: str | None
    values: dict[str, dict[str, float]]
    ylabel: str
    plot_title: str = ""
    ymax: float | None = None


@dataclass(frozen=True)
class VerdictBars:
    """Stacked verdict counts per group: ``counts`` is ``{group: {verdict: n}}``."""

    title: str | None
    counts: dict[str, dict[str, int]]
    plot_title: str = ""


@dataclass(frozen=True)
class Scatter:
    """Points ``(x, y, label)``."""

    title: str | None
    points: list[tuple[float, float, str]]
    xlabel: str
    ylabel: str
    plot_title: str = ""


@dataclass(frozen=True)
class Text:
    """One paragraph of text."""

    text: str
    title: str | None = None


#: Every report block type.
Block = Table | Bars | VerdictBars | Scatter | Text
