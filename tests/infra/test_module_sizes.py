"""The house stays one where a room fits on a few screens: no module of the product (src/) is over 300 lines. Functions
are held to a screen by ruff's complexity and length limits (pyproject.toml), this is the one limit ruff has not."""

from __future__ import annotations

from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
MAX_LINES = 300


def test_no_module_of_the_product_is_over_300_lines() -> None:
    sizes = {path.relative_to(SRC).as_posix(): len(path.read_text().splitlines()) for path in SRC.rglob("*.py")}
    assert len(sizes) > 100  # the walk found the product
    assert {path: lines for path, lines in sizes.items() if lines > MAX_LINES} == {}
