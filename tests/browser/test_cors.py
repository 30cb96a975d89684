"""CORS on /mcp in a real browser: Debian's Chromium, driven by Playwright, loads a page from an allowed origin
whose fetch() talks MCP to a running `agent-memory serve`, and a page from another origin whose fetch() the browser
itself refuses."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from tests.browser.chromium import chromium_executable, page_origin, patient
from tests.conftest import serving
from tests.handlers.mcp.test_tools import TOOLS

pytestmark = pytest.mark.browser

# The page a browser MCP client would be: its script POSTs one JSON-RPC message and reports what the page could see.
PAGE = b"""<!doctype html>
<meta charset="utf-8">
<title>an MCP client in a page</title>
<script>
async function mcp(url, key, message, extraHeaders) {
  const headers = {"content-type": "application/json", "accept": "application/json, text/event-stream",
                   ...extraHeaders};
  if (key) headers["authorization"] = "Bearer " + key;
  try {
    const response = await fetch(url, {method: "POST", headers, body: JSON.stringify(message)});
    return {status: response.status, body: await response.json(),
            challenge: response.headers.get("www-authenticate")};
  } catch (error) {
    return {error: error.name, message: String(error.message)};
  }
}
</script>
"""
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "page", "version": "1"}},
}
LIST_TOOLS = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
MODERN = "2026-07-28"
DISCOVER = {
    "jsonrpc": "2.0",
    "id": 3,
    "method": "server/discover",
    "params": {
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientInfo": {"name": "page", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    },
}


@dataclass
class Scene:
    """A running `serve` admitting one page origin, a page on that origin and one on another, and a browser."""

    mcp_url: str
    key: str
    allowed: str
    foreign: str
    browser: Browser

    def open(self, origin: str) -> Page:
        page = patient(self.browser.new_page())
        page.goto(f"{origin}/")
        return page

    def call(self, page: Page, message: dict[str, Any], key: str | None, headers: dict[str, str] | None = None) -> Any:
        return page.evaluate(
            "([url, key, message, headers]) => mcp(url, key, message, headers)",
            [self.mcp_url, key, message, headers or {}],
        )


@pytest.fixture(scope="module")
def scene(tmp_path_factory: pytest.TempPathFactory, dynamodb_local_endpoint: str) -> Iterator[Scene]:
    executable = chromium_executable()
    # A serve of its own (it admits the allowed page's origin), over a fresh table in the session's DynamoDB Local.
    store = ["--endpoint-url", dynamodb_local_endpoint, "--table", f"cors-{uuid.uuid4().hex[:12]}"]
    with page_origin(PAGE) as (allowed, _), page_origin(PAGE) as (foreign, _), pytest.MonkeyPatch.context() as env:
        env.setenv("MCP_ALLOWED_ORIGINS", allowed)
        log_dir = tmp_path_factory.mktemp("serve")
        with serving(log_dir, *store) as (base, key), sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=executable)
            try:
                yield Scene(f"{base}/mcp", key, allowed, foreign, browser)
            finally:
                browser.close()


def test_a_page_on_an_allowed_origin_initializes_and_lists_tools_with_its_key(scene: Scene) -> None:
    page = scene.open(scene.allowed)

    initialized = scene.call(page, INITIALIZE, scene.key)
    listed = scene.call(page, LIST_TOOLS, scene.key, {"mcp-protocol-version": "2025-11-25"})

    assert initialized["status"] == 200, initialized
    assert initialized["body"]["result"]["serverInfo"]["name"] == "agent-memory"
    assert listed["status"] == 200, listed
    assert {tool["name"] for tool in listed["body"]["result"]["tools"]} == TOOLS


def test_a_page_on_an_allowed_origin_speaks_the_2026_wire_with_its_headers(scene: Scene) -> None:
    page = scene.open(scene.allowed)

    discovered = scene.call(
        page, DISCOVER, scene.key, {"mcp-protocol-version": MODERN, "mcp-method": "server/discover"}
    )

    assert discovered["status"] == 200, discovered
    assert MODERN in discovered["body"]["result"]["supportedVersions"]


def test_a_page_on_an_allowed_origin_reads_the_401_and_its_challenge_without_a_key(scene: Scene) -> None:
    page = scene.open(scene.allowed)

    refused = scene.call(page, INITIALIZE, None)

    assert refused["status"] == 401, refused
    assert refused["body"]["status"] == 401
    assert refused["challenge"].startswith("Bearer")  # readable only because it is exposed


def test_a_page_on_another_origin_is_refused_by_the_browser_even_with_the_key(scene: Scene) -> None:
    page = scene.open(scene.foreign)

    refused = scene.call(page, INITIALIZE, scene.key)

    assert refused["error"] == "TypeError", refused
