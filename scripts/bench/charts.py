"""The performance page's pictures: recall's and a `q` search's read units and median latency against the namespace's
size, cold and warm, drawn from a run as small SVG files (no plotting library: the same run always gives the same
bytes, which a test holds). `make perf-doc` writes them beside docs/performance.json.

    python -m bench --charts docs/performance.json   (writes docs/performance-units.svg, docs/performance-latency.svg)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final
from xml.sax.saxutils import escape, quoteattr

# Recall and `q`, each as a process's first read (cold) and from its warm copy (bench.ops.WARM): the run's operation,
# what it is, how it read.
COLD_AND_WARM: Final = (
    ("recall", "recall", "cold"),
    ("recall_warm", "recall", "warm"),
    ("recall_warm_changed", "recall", "warm, 10 changed"),
    ("search_q", "q", "cold"),
    ("search_q_warm", "q", "warm"),
    ("search_q_warm_changed", "q", "warm, 10 changed"),
)
# Each operation its colour, each way of reading its line (colour-blind safe: Okabe and Ito's blue and vermillion).
_COLOURS: Final = {"recall": "#0072b2", "q": "#d55e00"}
_DASHES: Final = {"cold": "", "warm": "6 4", "warm, 10 changed": "2 3"}
WIDTH, HEIGHT = 720, 420
LEFT, RIGHT, TOP, BOTTOM = 70, 190, 40, 56
# The pictures a run gives: file name, the figure of each operation drawn, title, axis label, and guide lines.
CHARTS: Final = (
    (
        "performance-units.svg",
        "rcu",
        "Read units per request",
        "read units (RCU)",
        ((5.0, "5 RCU: warm recall's budget besides what changed"),),
    ),
    (
        "performance-latency.svg",
        "p50_ms",
        "Median latency (this machine, DynamoDB Local)",
        "p50 (ms)",
        ((100.0, "100 ms: warm recall's budget on serve"), (1000.0, "1 s")),
    ),
)


@dataclass(frozen=True)
class Series:
    name: str
    points: Sequence[tuple[float, float]]
    colour: str = "#000000"
    dash: str = ""


def series_of(result: dict[str, Any], figure: str) -> list[Series]:
    """One line per operation and way of reading it that the run measured: `figure` (an op's `rcu`, `p50_ms`...)
    at each namespace size."""
    sizes = result.get("ops", {}).get("sizes", {})
    found = []
    for op, what, how in COLD_AND_WARM:
        points = [(float(size), float(entry["ops"][op][figure])) for size, entry in sizes.items() if op in entry["ops"]]
        if points:
            found.append(Series(f"{what}, {how}", sorted(points), _COLOURS[what], _DASHES[how]))
    return found


def write_charts(result: dict[str, Any], folder: Path) -> list[Path]:
    """The run's pictures, written into `folder` (those with no line to draw are not written); their paths."""
    written = []
    for name, figure, title, label, guides in CHARTS:
        lines = series_of(result, figure)
        if lines:
            path = folder / name
            path.write_text(line_chart(title, "memories in the namespace", label, lines, guides))
            written.append(path)
    return written


def _number(value: float) -> str:
    """A tick's label: thousands separated, no needless decimals."""
    return f"{value:,.0f}" if value >= 1 else f"{value:g}"


def _bounds(values: Sequence[float]) -> tuple[float, float]:
    """The whole decades around `values` (all positive)."""
    low, high = min(values), max(values)
    return 10 ** math.floor(math.log10(low)), 10 ** math.ceil(math.log10(high) if high > low else math.log10(high) + 1)


def _ticks(low: float, high: float) -> list[float]:
    """Each decade from low to high, with 2 and 5 between them when there are at most two decades."""
    decades = round(math.log10(high / low))
    steps = (1, 2, 5) if decades <= 2 else (1,)
    return [low * 10**d * step for d in range(decades + 1) for step in steps if low * 10**d * step <= high * 1.0001]


class _LogScale:
    """Values from low to high onto pixels from `start` to `end`, logarithmically."""

    def __init__(self, low: float, high: float, start: float, end: float) -> None:
        self._low, self._span = math.log10(low), math.log10(high) - math.log10(low)
        self._start, self._end = start, end

    def __call__(self, value: float) -> float:
        return self._start + (math.log10(value) - self._low) / self._span * (self._end - self._start)


def line_chart(
    title: str,
    x_label: str,
    y_label: str,
    series: Sequence[Series],
    guides: Sequence[tuple[float, str]] = (),
) -> str:
    """An SVG line chart of `series` on logarithmic axes: x ticked at the sizes measured, y at whole decades; each point
    a circle carrying its values (`data-x`, `data-y`, and a tooltip), and `guides` as labelled horizontal lines."""
    points = [point for line in series for point in line.points if point[0] > 0 and point[1] > 0]
    xs = sorted({x for x, _ in points})
    x_scale = _LogScale(xs[0] / 1.5, xs[-1] * 1.5, LEFT, WIDTH - RIGHT)
    low, high = _bounds([y for _, y in points])
    shown = [(value, text) for value, text in guides if low <= value <= high]
    y_scale = _LogScale(low, high, HEIGHT - BOTTOM, TOP)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" '
        'font-family="sans-serif" font-size="12">',
        f"<title>{escape(title)}</title>",
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>',
        f'<text x="{LEFT}" y="{TOP - 16}" font-size="14" font-weight="bold">{escape(title)}</text>',
    ]
    for tick in _ticks(low, high):
        y = y_scale(tick)
        out.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" y2="{y:.1f}" stroke="#e0e0e0"/>')
        out.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{_number(tick)}</text>')
    for x in xs:
        at = x_scale(x)
        out.append(f'<line x1="{at:.1f}" y1="{TOP}" x2="{at:.1f}" y2="{HEIGHT - BOTTOM}" stroke="#e0e0e0"/>')
        out.append(f'<text x="{at:.1f}" y="{HEIGHT - BOTTOM + 16}" text-anchor="middle">{_number(x)}</text>')
    for value, text in shown:
        y = y_scale(value)
        guide = f'x1="{LEFT}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" y2="{y:.1f}"'
        out.append(f'<line {guide} stroke="#777777" stroke-dasharray="1 3"/>')
        out.append(f'<text x="{LEFT + 4}" y="{y - 4:.1f}" fill="#555555">{escape(text)}</text>')
    out.append(_axes(x_label, y_label))
    for rank, line in enumerate(series):
        out.extend(_line(line, x_scale, y_scale))
        out.extend(_legend(line, rank))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _axes(x_label: str, y_label: str) -> str:
    bottom, middle = HEIGHT - BOTTOM, (TOP + HEIGHT - BOTTOM) / 2
    return (
        f'<path d="M{LEFT},{TOP} V{bottom} H{WIDTH - RIGHT}" fill="none" stroke="#000000"/>\n'
        f'<text x="{(LEFT + WIDTH - RIGHT) / 2:.1f}" y="{HEIGHT - 16}" text-anchor="middle">{escape(x_label)}</text>\n'
        f'<text x="16" y="{middle:.1f}" text-anchor="middle" transform="rotate(-90 16 {middle:.1f})">'
        f"{escape(y_label)}</text>"
    )


def _line(line: Series, x_scale: _LogScale, y_scale: _LogScale) -> list[str]:
    drawn = [(x, y) for x, y in line.points if x > 0 and y > 0]
    path = " ".join(f"{x_scale(x):.1f},{y_scale(y):.1f}" for x, y in drawn)
    dash = f' stroke-dasharray="{line.dash}"' if line.dash else ""
    out = [f'<polyline points="{path}" fill="none" stroke="{line.colour}" stroke-width="2"{dash}/>']
    for x, y in drawn:
        tip = escape(f"{line.name}: {_number(x)} memories, {y:g}")
        out.append(
            f'<circle cx="{x_scale(x):.1f}" cy="{y_scale(y):.1f}" r="3.5" fill="{line.colour}" '
            f'data-series={quoteattr(line.name)} data-x="{x:g}" data-y="{y:g}"><title>{tip}</title></circle>'
        )
    return out


def _legend(line: Series, rank: int) -> list[str]:
    x, y = WIDTH - RIGHT + 16, TOP + 10 + 20 * rank
    dash = f' stroke-dasharray="{line.dash}"' if line.dash else ""
    return [
        f'<line x1="{x}" y1="{y}" x2="{x + 28}" y2="{y}" stroke="{line.colour}" stroke-width="2"{dash}/>',
        f'<text x="{x + 34}" y="{y + 4}">{escape(line.name)}</text>',
    ]
