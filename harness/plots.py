"""Plots for the HTML report, drawn with matplotlib and returned as inline SVG text.

Every function takes plain data (no run directories) and returns one ``<svg>`` element as
a string, ready to be placed in an HTML page: glyphs are drawn as paths
(``svg.fonttype = "path"``), so the SVG needs no font and makes no request; the date
metadata is left out and element ids are salted with a constant, so the same data gives
byte-identical SVG (a report rendered twice is the same file). matplotlib is imported when
the first plot is drawn (``verikit`` commands that draw nothing do not pay for it), and
only its object-oriented API is used (``matplotlib.figure.Figure``, no pyplot state, no
display).
"""

from __future__ import annotations

import io
import math

#: Colours per verdict (the report's legend and the per-task table use the same ones).
VERDICT_COLOURS = {
    "verified": "#2e7d32", "failed": "#c62828", "rejected": "#6a1b9a", "invalid": "#ef6c00",
    "timeout": "#1565c0", "memout": "#00838f", "infra_error": "#757575",
}
_STYLE = {"svg.fonttype": "path", "svg.hashsalt": "verikit-report", "font.size": 9,
          "axes.spines.top": False, "axes.spines.right": False}


def _figure(width_in: float, height_in: float):
    from matplotlib.figure import Figure

    return Figure(figsize=(width_in, height_in), layout="constrained")


def _svg(fig) -> str:
    """``fig`` as inline SVG text; called inside :func:`_styled`'s rc context."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    text = buf.getvalue()
    text = text[text.index("<svg"):]  # drop the XML declaration and DOCTYPE: inline in HTML
    start, end = text.find("<metadata>"), text.find("</metadata>")
    if start >= 0 and end > start:  # the RDF block (creator, format): nothing a reader needs
        text = text[:start] + text[end + len("</metadata>"):]
    return text


def _styled(draw):
    """Run ``draw`` (which builds and returns a figure) inside the report's rc style, so
    that fonts and spines are set when artists are created, not only when saved."""
    import matplotlib

    with matplotlib.rc_context(_STYLE):
        return _svg(draw())


def verdict_bars(counts: dict[str, dict[str, int]], *, title: str, verdicts: list[str]) -> str:
    """Horizontal stacked bars: one bar per row label (a model), one segment per verdict.

    Args:
        counts: ``{label: {verdict: count}}`` (labels in display order, top to bottom).
        title: the axes title; verdicts: the verdicts in stacking order (colours from
            :data:`VERDICT_COLOURS`).

    Returns:
        The ``<svg>`` element (text). Counts are drawn in the segments wide enough for them.
    """
    labels = list(counts)

    def draw():
        fig = _figure(7.0, 0.6 + 0.32 * max(1, len(labels)))
        ax = fig.add_subplot()
        left = [0] * len(labels)
        ys = list(range(len(labels)))[::-1]
        total = max([sum(c.values()) for c in counts.values()] + [1])
        for v in verdicts:
            widths = [counts[label].get(v, 0) for label in labels]
            if not any(widths):
                continue
            bars = ax.barh(ys, widths, left=left, color=VERDICT_COLOURS.get(v, "#999999"), label=v, height=0.7)
            for bar, w in zip(bars, widths):
                if w and w / total > 0.04:
                    ax.text(bar.get_x() + w / 2, bar.get_y() + bar.get_height() / 2, str(w), ha="center",
                            va="center", color="white", fontsize=7)
            left = [a + b for a, b in zip(left, widths)]
        ax.set_yticks(ys, labels)
        ax.set_xlabel("records")
        ax.set_title(title, loc="left")
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False, fontsize=7)
        return fig

    return _styled(draw)


def pass_at_k_curves(curves: dict[str, list[tuple[int, float, float, float]]], *, metric: str, title: str) -> str:
    """pass@k (or Runnable@k) against k, one line per model with its confidence band.

    Args:
        curves: ``{model: [(k, value, ci_low, ci_high), ...]}`` with values in 0..1.
        metric: the y-axis name (``pass@k``, ``Runnable@k``); title: the axes title.

    Returns:
        The ``<svg>`` element (text); a model with one k is drawn as a point with an error bar.
    """
    if curves and all(len(pts) == 1 for pts in curves.values()):
        return _dots(curves, metric=metric.replace("@k", "@1"), title=title.replace("@k", "@1"))

    def draw():
        fig = _figure(6.0, 3.2)
        ax = fig.add_subplot()
        for model, pts in curves.items():
            ks = [p[0] for p in pts]
            vals = [p[1] * 100 for p in pts]
            lo = [p[2] * 100 for p in pts]
            hi = [p[3] * 100 for p in pts]
            if len(pts) == 1:
                ax.errorbar(ks, vals, yerr=[[vals[0] - lo[0]], [hi[0] - vals[0]]], fmt="o", capsize=3, label=model)
            else:
                (line,) = ax.plot(ks, vals, marker="o", label=model)
                ax.fill_between(ks, lo, hi, alpha=0.2, color=line.get_color())
        ks_all = sorted({p[0] for pts in curves.values() for p in pts} or {1})
        ax.set_xticks(ks_all)
        ax.set_xlim(0.5, ks_all[-1] + 0.5)
        ax.set_xlabel("k")
        ax.set_ylabel(f"{metric} (%)")
        ax.set_ylim(0, 100)
        ax.set_title(title, loc="left")
        ax.legend(frameon=False, fontsize=7)
        return fig

    return _styled(draw)


def _dots(curves: dict[str, list[tuple[int, float, float, float]]], *, metric: str, title: str) -> str:
    """One sample per task (only k = 1): a dot per model with its CI as a horizontal bar."""
    models = list(curves)

    def draw():
        fig = _figure(7.0, 0.8 + 0.3 * max(1, len(models)))
        ax = fig.add_subplot()
        ys = list(range(len(models)))[::-1]
        for y, model in zip(ys, models):
            _, v, lo, hi = curves[model][0]
            ax.errorbar([v * 100], [y], xerr=[[v * 100 - lo * 100], [hi * 100 - v * 100]], fmt="o", capsize=3)
        ax.set_yticks(ys, models)
        ax.set_xlim(-2, 102)
        ax.set_xlabel(f"{metric} (%)")
        ax.set_title(title, loc="left")
        return fig

    return _styled(draw)


def time_distribution(times: dict[str, list[float]], *, title: str) -> str:
    """Box plots of wall times (seconds, log scale), one box per verifier or group.

    Args:
        times: ``{label: [wall seconds, ...]}`` (empty lists are left out).

    Returns:
        The ``<svg>`` element (text); each box is labelled with its number of records.
    """
    groups = {k: [max(t, 1e-3) for t in v] for k, v in times.items() if v}

    def draw():
        fig = _figure(6.0, 0.8 + 0.45 * max(1, len(groups)))
        ax = fig.add_subplot()
        labels = [f"{k} (n={len(v)})" for k, v in groups.items()]
        ax.boxplot(list(groups.values()), orientation="horizontal", tick_labels=labels, whis=(0, 100))
        ax.set_xscale("log")
        ax.set_xlabel("wall time per job (s, log scale; whiskers: min and max)")
        ax.set_title(title, loc="left")
        return fig

    return _styled(draw)


def scatter(points: list[tuple[float, float, str]], *, xlabel: str, ylabel: str, title: str) -> str:
    """Scatter plot with one colour per group, points jittered by nothing (exact values).

    Args:
        points: ``[(x, y, group), ...]``; groups are coloured and listed in the legend.

    Returns:
        The ``<svg>`` element (text).
    """
    def draw():
        fig = _figure(5.0, 4.0)
        ax = fig.add_subplot()
        for group in dict.fromkeys(p[2] for p in points):
            xs = [p[0] for p in points if p[2] == group]
            ys = [p[1] for p in points if p[2] == group]
            ax.scatter(xs, ys, label=f"{group} (n={len(xs)})", alpha=0.6, s=18)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_xlim(-0.05, 1.05)
        ax.set_ylim(-0.05, 1.05)
        ax.set_title(title, loc="left")
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False, fontsize=7)
        return fig

    return _styled(draw)


def grouped_bars(values: dict[str, dict[str, float]], *, ylabel: str, title: str, ymax: float | None = None) -> str:
    """Vertical grouped bars: one group per category, one bar per series.

    Args:
        values: ``{category: {series: value}}`` (a missing value is drawn as no bar).
        ylabel: the y-axis name; ymax: the y-axis top (None: automatic).

    Returns:
        The ``<svg>`` element (text); each bar carries its value.
    """
    cats = list(values)
    series = list(dict.fromkeys(s for v in values.values() for s in v))

    def draw():
        fig = _figure(max(4.0, 0.9 * len(cats) * max(1, len(series)) ** 0.5 + 1.5), 3.2)
        ax = fig.add_subplot()
        width = 0.8 / max(1, len(series))
        for i, s in enumerate(series):
            xs = [j + (i - (len(series) - 1) / 2) * width for j in range(len(cats))]
            ys = [values[c].get(s, math.nan) for c in cats]
            bars = ax.bar(xs, [0 if math.isnan(y) else y for y in ys], width=width * 0.95, label=s)
            for bar, y in zip(bars, ys):
                if not math.isnan(y):
                    ax.text(bar.get_x() + bar.get_width() / 2, bar.get_height(), f"{y:g}", ha="center",
                            va="bottom", fontsize=6)
        ax.set_xticks(range(len(cats)), cats, rotation=20, ha="right")
        ax.set_ylabel(ylabel)
        if ymax is not None:
            ax.set_ylim(0, ymax)
        ax.set_title(title, loc="left")
        if len(series) > 1:
            ax.legend(frameon=False, fontsize=7)
        return fig

    return _styled(draw)
