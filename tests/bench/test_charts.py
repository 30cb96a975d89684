"""The performance page's pictures (bench.charts): each point given is drawn where its values put it on logarithmic
axes, and a run's recall and `q` rows, cold and warm, become the lines."""

from __future__ import annotations

import math
from pathlib import Path
from xml.etree import ElementTree

import pytest

from bench.charts import Series, line_chart, series_of, write_charts

SVG = "{http://www.w3.org/2000/svg}"
COLD = Series("recall, cold", [(1000.0, 70.0), (10000.0, 700.0), (30000.0, 2100.0)], "#0072b2")
WARM = Series("recall, warm", [(1000.0, 12.0), (10000.0, 13.5), (30000.0, 14.5)], "#0072b2", "6 4")


def drawn(svg: str) -> dict[tuple[str, float, float], tuple[float, float]]:
    """Each circle of the chart: its series and values, and where it is drawn."""
    circles = ElementTree.fromstring(svg).iter(f"{SVG}circle")
    return {
        (circle.attrib["data-series"], float(circle.attrib["data-x"]), float(circle.attrib["data-y"])): (
            float(circle.attrib["cx"]),
            float(circle.attrib["cy"]),
        )
        for circle in circles
    }


def test_the_chart_draws_every_point_it_is_given_and_no_other() -> None:
    points = drawn(line_chart("Read units", "memories", "RCU", [COLD, WARM]))

    assert set(points) == {(line.name, x, y) for line in (COLD, WARM) for x, y in line.points}


def test_the_chart_places_its_points_on_logarithmic_axes() -> None:
    points = drawn(line_chart("Read units", "memories", "RCU", [COLD, WARM]))
    (x1, y1), (x2, y2), (x3, y3) = (points["recall, cold", x, y] for x, y in COLD.points)

    # 1,000 to 10,000 is a decade, 10,000 to 30,000 log10(3) of one: so on both axes (the cold line grows in step).
    assert (x3 - x2) / (x2 - x1) == pytest.approx(math.log10(3), abs=0.01)
    assert (y3 - y2) / (y2 - y1) == pytest.approx(math.log10(3), abs=0.01)
    assert x1 < x2 < x3
    assert y1 > y2 > y3  # more units, higher up
    warm = [points["recall, warm", x, y] for x, y in WARM.points]
    assert all(cy > y3 for _, cy in warm)  # every warm point below the cold line's top


def test_each_line_joins_its_own_points_in_order() -> None:
    svg = line_chart("Read units", "memories", "RCU", [COLD, WARM])
    points = drawn(svg)
    lines = [element.attrib["points"] for element in ElementTree.fromstring(svg).iter(f"{SVG}polyline")]

    expected = [
        " ".join(f"{cx:.1f},{cy:.1f}" for cx, cy in (points[line.name, x, y] for x, y in line.points))
        for line in (COLD, WARM)
    ]
    assert lines == expected


def test_a_runs_recall_and_q_rows_become_its_lines_and_its_pictures(tmp_path: Path) -> None:
    def row(rcu: float, p50: float) -> dict[str, float]:
        return {"rcu": rcu, "p50_ms": p50}

    run = {
        "ops": {
            "sizes": {
                "1000": {"ops": {"recall": row(70, 90), "recall_warm": row(12, 40), "search_q": row(38, 50)}},
                "30000": {"ops": {"recall": row(2100, 2000), "recall_warm": row(14, 60)}},
            }
        }
    }

    lines = {line.name: list(line.points) for line in series_of(run, "rcu")}
    written = write_charts(run, tmp_path)

    assert lines == {
        "recall, cold": [(1000.0, 70.0), (30000.0, 2100.0)],
        "recall, warm": [(1000.0, 12.0), (30000.0, 14.0)],
        "q, cold": [(1000.0, 38.0)],
    }
    assert [path.name for path in written] == ["performance-units.svg", "performance-latency.svg"]
    assert ("recall, warm", 30000.0, 60.0) in drawn(written[1].read_text())
