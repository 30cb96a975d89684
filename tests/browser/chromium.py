"""What every browser test shares: Debian's Chromium for Playwright, and where screenshots of the pages go."""

from __future__ import annotations

import shutil

from playwright.sync_api import Page

from tests.conftest import SERVE_ROOT, missing_test_peer

# Written by each run, looked at by people (the README's console picture is one of them); git-ignored.
SCREENSHOTS = SERVE_ROOT / ".pytest_cache" / "screenshots"


def chromium_executable() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        missing_test_peer("Chromium", "no `chromium` on PATH", "run `make browser` (apt-get install -y chromium)")
    return found


def screenshot(page: Page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)
