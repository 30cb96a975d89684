"""The MCP Inspector CLI (npm `@modelcontextprotocol/inspector`, pinned in tests/mcp_inspector) lists and calls
the tools of a real `agent-memory serve` process, with the API key that serve printed on its first start. It
installs nothing: `npm ci --prefix tests/mcp_inspector` does."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import pytest

from tests.conftest import SERVE_ROOT, missing_test_peer
from tests.handlers.mcp.test_tools import TOOLS

ROOT = SERVE_ROOT
INSPECTOR_DIR = ROOT / "tests" / "mcp_inspector"
INSPECTOR = INSPECTOR_DIR / "node_modules" / ".bin" / "mcp-inspector"


@dataclass(frozen=True)
class Served:
    url: str
    key: str


def _missing_inspector(reason: str) -> NoReturn:
    missing_test_peer("the MCP Inspector", reason, "run `npm ci --prefix tests/mcp_inspector`")


@pytest.fixture(scope="module")
def inspector() -> Path:
    if shutil.which("node") is None:
        _missing_inspector("no `node` on PATH")
    if not INSPECTOR.exists():
        _missing_inspector(f"no {INSPECTOR.relative_to(ROOT)}")
    return INSPECTOR


@pytest.fixture(scope="module")
def served(shared_serve: tuple[str, str]) -> Served:
    """The test process's shared `agent-memory serve` (its embedded engine on free loopback ports) and the key it
    printed on creating the empty table's first key; nothing here counts what other tests stored."""
    base, key = shared_serve
    return Served(f"{base}/mcp", key)


def run_inspector(inspector: Path, served: Served, home: Path, *arguments: str) -> Any:
    authorization = f"Authorization: Bearer {served.key}"
    completed = subprocess.run(
        [str(inspector), "--cli", served.url, "--transport", "http", "--header", authorization, *arguments],
        capture_output=True,
        text=True,
        timeout=60,
        # npm tooling writes caches and settings under HOME; keep them out of the real one.
        env={**os.environ, "HOME": str(home), "NO_COLOR": "1"},
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return json.loads(completed.stdout)


def test_the_inspector_lists_every_tool_with_its_schemas(inspector: Path, served: Served, tmp_path: Path) -> None:
    listed = run_inspector(inspector, served, tmp_path, "--method", "tools/list")

    tools = {tool["name"]: tool for tool in listed["tools"]}
    assert set(tools) == TOOLS
    assert all("outputSchema" in tool and "inputSchema" in tool for tool in tools.values())
    assert tools["get_memory"]["annotations"]["readOnlyHint"] is True


def test_the_inspector_creates_and_finds_a_memory(inspector: Path, served: Served, tmp_path: Path) -> None:
    created = run_inspector(
        inspector,
        served,
        tmp_path,
        *("--method", "tools/call", "--tool-name", "create_memory"),
        *("--tool-arg", "content=The user prefers window seats", "--tool-arg", 'tags=["travel","preference"]'),
    )
    found = run_inspector(
        inspector,
        served,
        tmp_path,
        *("--method", "tools/call", "--tool-name", "search_memories", "--tool-arg", "q=window"),
    )

    assert created["isError"] is False
    assert created["structuredContent"]["tags"] == ["travel", "preference"]
    assert found["structuredContent"]["items"][0]["id"] == created["structuredContent"]["id"]
    assert found["structuredContent"]["items"][0]["last_accessed_at"] is not None


def test_the_served_endpoints_refuse_a_request_without_the_key(served: Served) -> None:
    call = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    base = served.url.removesuffix("/mcp")

    for url, body in ((served.url, call), (f"{base}/memories", None)):
        request = urllib.request.Request(url, data=body, headers=headers, method="POST" if body else "GET")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=5)
        refused.value.close()

        assert refused.value.code == 401, url
        # /mcp names the scopes to ask for and its OAuth resource metadata; the HTTP API takes API keys only.
        metadata = f"{base}/.well-known/oauth-protected-resource/mcp"
        pointer = f', scope="read write", resource_metadata="{metadata}"' if body else ""
        assert refused.value.headers["www-authenticate"] == f'Bearer realm="agent-memory"{pointer}'
