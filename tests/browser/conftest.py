"""The console's browser tests each see a namespace of their module's own (tests.browser.console_scene)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from tests.browser.chromium import PATIENCE_MS
from tests.browser.console_scene import Scene, console_scene

# Every expect() waits for its condition up to the browser tests' one ceiling (Playwright's own default is 5 s).
expect.set_options(timeout=PATIENCE_MS)


@pytest.fixture(scope="module")
def scene(shared_serve_engine: tuple[str, str, int]) -> Iterator[Scene]:
    with console_scene(shared_serve_engine) as seen:
        yield seen
