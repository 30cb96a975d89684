"""docs/performance.md is generated from a recorded `make bench` run, never pasted: the committed page is exactly what
the renderer makes of the run kept beside it (docs/performance.json), and it says which run that is."""

from __future__ import annotations

import json
from pathlib import Path

from bench.charts import CHARTS, write_charts
from bench.page import GENERATED, markdown

DOCS = Path(__file__).resolve().parents[2] / "docs"
RUN = json.loads((DOCS / "performance.json").read_text())


def test_the_performance_page_is_what_the_renderer_makes_of_its_recorded_run() -> None:
    # On a mismatch: `make perf-doc` renders the page again (after `make bench` for a new run).
    assert (DOCS / "performance.md").read_text() == markdown(RUN)


def test_the_performance_page_says_which_run_it_comes_from() -> None:
    page = markdown(RUN)
    assert page.startswith(GENERATED)
    for fact in (RUN["started"], f"`{RUN['git']}`", "quick" if RUN["quick"] else "full", str(RUN["machine"]["cpus"])):
        assert fact in page
    assert "{{" not in page


def test_a_run_without_a_machine_record_still_renders_saying_so() -> None:
    older = {key: value for key, value in RUN.items() if key not in ("machine", "elapsed_s")}
    assert "| machine | not recorded |" in markdown(older)


def test_the_performance_pages_pictures_are_what_the_chart_module_makes_of_its_recorded_run(tmp_path: Path) -> None:
    # On a mismatch: `make perf-doc` draws them again.
    drawn = write_charts(RUN, tmp_path)

    assert [path.name for path in drawn] == [name for name, *_ in CHARTS]
    assert {path.name: (DOCS / path.name).read_text() for path in drawn} == {
        path.name: path.read_text() for path in drawn
    }
    page = markdown(RUN)
    assert all(f"]({path.name})" in page for path in drawn)
