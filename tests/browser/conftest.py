"""The console's browser tests each see a namespace of their module's own (tests.browser.console_scene)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.browser.console_scene import Scene, console_scene


@pytest.fixture(scope="module")
def scene(shared_serve_engine: tuple[str, str, int]) -> Iterator[Scene]:
    with console_scene(shared_serve_engine) as seen:
        yield seen
