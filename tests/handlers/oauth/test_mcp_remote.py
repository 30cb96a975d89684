"""mcp-remote (npm), the stdio bridge that Claude Desktop and other local-only clients use, connects to `serve` by
URL alone: no header. It finds the authorization server from the 401, registers, opens the consent page with
`$BROWSER` (here a scripted browser that approves with an API key), receives the code on its own callback server,
exchanges it, and then lists and calls tools for the MCP SDK's stdio client on its other side."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.conftest import SERVE_ROOT, missing_test_peer
from tests.handlers.mcp.test_tools import TOOLS

pytestmark = pytest.mark.anyio

MCP_REMOTE = SERVE_ROOT / "tests" / "mcp_remote" / "node_modules" / ".bin" / "mcp-remote"


async def test_mcp_remote_completes_the_oauth_flow_against_serve_and_calls_tools(
    tmp_path: Path, shared_serve: tuple[str, str]
) -> None:
    node = shutil.which("node")
    if node is None or not MCP_REMOTE.exists():
        missing_test_peer("mcp-remote", "node or tests/mcp_remote/node_modules is missing", "make install")
    browser = tmp_path / "browser.sh"
    browser.write_text(
        f'#!/bin/sh\ncd "{SERVE_ROOT}" && exec "{sys.executable}" -m tests.handlers.oauth.scripted_browser "$1"\n'
    )
    browser.chmod(0o755)
    log = tmp_path / "browser.log"
    base, key = shared_serve
    bridge = StdioServerParameters(
        command=node,
        args=[str(MCP_REMOTE), f"{base}/mcp", "--transport", "http-only"],
        env={
            "HOME": str(tmp_path),  # mcp-remote keeps its registration and tokens under ~/.mcp-auth
            "BROWSER": str(browser),
            "AM_BROWSER_LOG": str(log),
            "AM_CONSENT_NAMESPACE": "default",
            "AM_CONSENT_KEY": key,
            "PYTHONPATH": f"{SERVE_ROOT / 'src'}:{SERVE_ROOT}",
        },
    )
    with (tmp_path / "mcp-remote.log").open("w") as errlog:
        async with Client(stdio_client(bridge, errlog=errlog)) as client:
            tools = await client.list_tools()
            created = await client.call_tool("create_memory", {"content": "The user connects by URL"})
            primed = await client.call_tool("prime_memory_context", {"q": "connects by URL"})

    assert len(tools.tools) == len(TOOLS), (tmp_path / "mcp-remote.log").read_text()
    assert not created.is_error
    assert primed.structured_content is not None
    assert primed.structured_content["items"][0]["content"] == "The user connects by URL"
    consented, called_back = log.read_text().splitlines()
    assert consented.startswith("consent 200 -> 302 http://localhost:")  # mcp-remote's own callback server
    assert called_back == "callback 200"
    assert key not in (tmp_path / "mcp-remote.log").read_text()
