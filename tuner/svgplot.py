"""A small, dependency-free SVG line plot (matplotlib is not installed here): speedup against budget.

Deterministic: the same lines give the same bytes (fixed sizes, coordinates rounded to 0.1 px, series in
the order given). Text is escaped, so workload or algorithm names cannot inject markup.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any
from xml.sax.saxutils import escape

WIDTH, HEIGHT = 640, 400
LEFT, RIGHT, TOP, BOTTOM = 64, 150, 40, 52
COLOURS = ("#1d4ed8", "#b91c1c", "#15803d", "#92400e", "#6d28d9", "#0e7490", "#be185d", "#4b5563")


def _ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values covering [low, high] (1, 2, 5 × a power of ten apart)."""
    span = max(high - low, 1e-9)
    raw = span / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    start = math.floor(low / step) * step
    ticks, value = [], start
    while value <= high + step * 1e-6:
        ticks.append(round(value, 10))
        value += step
    return ticks


def _num(value: float) -> str:
    return f"{value:.1f}"


def _label(value: float) -> str:
    return f"{value:g}"


def line_plot(lines: Mapping[str, Sequence[tuple[float, float]]], *, title: str, x_label: str,
              y_label: str) -> str:
    """An SVG document with one polyline (and point markers) per entry of ``lines``."""
    points = [p for line in lines.values() for p in line]
    if not points:
        raise ValueError("nothing to plot")
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    x_ticks = _ticks(min(xs), max(xs))
    y_ticks = _ticks(min(0.0, min(ys)), max(max(ys), 1.0) * 1.1)  # headroom: a line never sits on the frame
    x0, x1, y0, y1 = x_ticks[0], x_ticks[-1], y_ticks[0], y_ticks[-1]
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def sx(x: float) -> float:
        return LEFT + (x - x0) / ((x1 - x0) or 1) * plot_w

    def sy(y: float) -> float:
        return TOP + plot_h - (y - y0) / ((y1 - y0) or 1) * plot_h

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
           f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{escape(title, {chr(34): "&quot;"})}">',
           f"<title>{escape(title)}</title>",
           f'<rect width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>',
           f'<text x="{WIDTH / 2:.1f}" y="22" text-anchor="middle" font-family="sans-serif" '
           f'font-size="15">{escape(title)}</text>']
    for tick in x_ticks:
        out.append(f'<line x1="{_num(sx(tick))}" y1="{TOP}" x2="{_num(sx(tick))}" y2="{TOP + plot_h}" '
                   f'stroke="#e5e7eb"/>')
        out.append(f'<text x="{_num(sx(tick))}" y="{TOP + plot_h + 18}" text-anchor="middle" '
                   f'font-family="sans-serif" font-size="12">{_label(tick)}</text>')
    for tick in y_ticks:
        out.append(f'<line x1="{LEFT}" y1="{_num(sy(tick))}" x2="{LEFT + plot_w}" y2="{_num(sy(tick))}" '
                   f'stroke="#e5e7eb"/>')
        out.append(f'<text x="{LEFT - 8}" y="{_num(sy(tick) + 4)}" text-anchor="end" '
                   f'font-family="sans-serif" font-size="12">{_label(tick)}</text>')
    out.append(f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" '
               f'stroke="#6b7280"/>')
    out.append(f'<text x="{LEFT + plot_w / 2:.1f}" y="{HEIGHT - 12}" text-anchor="middle" '
               f'font-family="sans-serif" font-size="13">{escape(x_label)}</text>')
    out.append(f'<text transform="translate(16 {TOP + plot_h / 2:.1f}) rotate(-90)" text-anchor="middle" '
               f'font-family="sans-serif" font-size="13">{escape(y_label)}</text>')
    for index, (name, line) in enumerate(lines.items()):
        colour = COLOURS[index % len(COLOURS)]
        coords = " ".join(f"{_num(sx(x))},{_num(sy(y))}" for x, y in line)
        out.append(f'<polyline class="series" data-name="{escape(name, {chr(34): "&quot;"})}" '
                   f'points="{coords}" fill="none" stroke="{colour}" stroke-width="2"/>')
        out.extend(f'<circle cx="{_num(sx(x))}" cy="{_num(sy(y))}" r="3" fill="{colour}"/>' for x, y in line)
        legend_y = TOP + 16 + 20 * index
        out.append(f'<line x1="{LEFT + plot_w + 14}" y1="{legend_y - 4}" x2="{LEFT + plot_w + 34}" '
                   f'y2="{legend_y - 4}" stroke="{colour}" stroke-width="2"/>')
        out.append(f'<text x="{LEFT + plot_w + 40}" y="{legend_y}" font-family="sans-serif" '
                   f'font-size="12">{escape(name)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def speedup_plot(summary: Sequence[Mapping[str, Any]], *, statistic: str = "geomean") -> str:
    """The summary rows as one line per algorithm: ``statistic`` of the best speedup against budget."""
    lines: dict[str, list[tuple[float, float]]] = {}
    for row in summary:
        value = row.get(statistic)
        if value is not None:
            lines.setdefault(str(row["algorithm"]), []).append((float(row["budget"]), float(value)))
    return line_plot(lines, title=f"best speedup over the source ({statistic} over workloads)",
                     x_label="verification budget", y_label="speedup (×)")
