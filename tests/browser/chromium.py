"""What every browser test shares: Debian's Chromium for Playwright, where screenshots of the pages go, and a page
served on a loopback origin of its own."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from playwright.sync_api import Page

from tests.conftest import SERVE_ROOT, free_port, missing_test_peer

# Written by each run, looked at by people (the README's console picture is one of them); git-ignored.
SCREENSHOTS = SERVE_ROOT / ".pytest_cache" / "screenshots"
# The ceiling on any one wait of a browser test: a page's load event, an element, an assertion, a request. What is
# waited for is the signal itself (the load event, the element shown), so a quiet machine never nears this; it is
# generous because on a machine busy with two test runs the browser, serve and its engine share two cores, and a wait
# cut short there (once 30 s) turns slowness into a failure.
PATIENCE_MS = 120_000


def chromium_executable() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        missing_test_peer("Chromium", "no `chromium` on PATH", "run `make browser` (apt-get install -y chromium)")
    return found


def patient(page: Page) -> Page:
    """`page`, its actions, navigations (each waits for the page's load event) and waits bounded by PATIENCE_MS."""
    page.set_default_timeout(PATIENCE_MS)
    page.set_default_navigation_timeout(PATIENCE_MS)
    return page


def screenshot(page: Page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


@contextmanager
def page_origin(page: bytes) -> Iterator[tuple[str, list[dict[str, str]]]]:
    """`page` served at every path of a free loopback port while the block runs: its origin, and the query of each
    request it answered (but the browser's own /favicon.ico), e.g. the OAuth redirect a client receives."""
    received: list[dict[str, str]] = []

    class Page(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            if parts.path != "/favicon.ico":
                received.append({name: values[0] for name, values in parse_qs(parts.query).items()})
            self.send_response(200)
            self.send_header("content-type", "text/html; charset=utf-8")
            self.send_header("content-length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", free_port()), Page)
    thread = threading.Thread(target=server.serve_forever, name="page-origin", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
