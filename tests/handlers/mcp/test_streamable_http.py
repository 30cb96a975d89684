"""The real SDK client over Streamable HTTP against the guarded ASGI app, in both protocol eras, and the guard."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx2
import pytest
from fastapi.testclient import TestClient
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server import MCPServer
from mcp.shared.exceptions import MCPError
from mcp.types import METHOD_NOT_FOUND

from core.memories import MemoryService
from handlers.auth import open_access
from handlers.http.app import create_app
from handlers.mcp import create_server
from handlers.mcp.endpoint import MCPEndpoint, create_endpoint, with_mcp_endpoint
from tests.handlers.conftest import FUNCTION_URL_HOST, tool_text
from tests.handlers.mcp.test_tools import TOOLS

pytestmark = pytest.mark.anyio

MODES = ["auto", "legacy"]
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
JSON_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
# The transport and the guard's other checks, with every request let in; tests/handlers/mcp/test_auth.py covers keys.
OPEN = open_access()


@asynccontextmanager
async def serving(endpoint: MCPEndpoint, base_url: str = "http://testserver") -> AsyncIterator[httpx2.AsyncClient]:
    """The endpoint's lifespan entered (ASGITransport does not run it) and an HTTP client pointed at it."""
    transport = httpx2.ASGITransport(app=endpoint)
    async with endpoint.session_manager.run(), httpx2.AsyncClient(transport=transport, base_url=base_url) as http:
        yield http


@pytest.mark.parametrize("mode", MODES)
async def test_the_sdk_client_lists_and_calls_tools_over_streamable_http(server: MCPServer, mode: str) -> None:
    async with (
        serving(create_endpoint(server, authenticate=OPEN)) as http,
        Client(streamable_http_client("http://testserver/mcp", http_client=http), mode=mode) as client,
    ):
        tools = await client.list_tools()
        created = await client.call_tool("create_memory", {"content": "The user likes tea", "tags": ["food"]})
        found = await client.call_tool("search_memories", {"tag": "food"})
        refused = await client.call_tool("search_memories", {"limit": 0})
        era = client.protocol_version

    assert era == ("2026-07-28" if mode == "auto" else "2025-11-25")
    assert len(tools.tools) == len(TOOLS)
    assert created.structured_content is not None
    assert created.structured_content["version"] == 1
    assert found.structured_content is not None
    assert found.structured_content["total"] == 1
    assert refused.is_error
    assert tool_text(refused).endswith("limit: must be 1 or more")


@pytest.mark.parametrize("mode", MODES)
async def test_only_tools_are_advertised_and_an_unknown_prompt_is_method_not_found_without_an_error_log(
    server: MCPServer, mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    async with (
        serving(create_endpoint(server, authenticate=OPEN)) as http,
        Client(streamable_http_client("http://testserver/mcp", http_client=http), mode=mode) as client,
    ):
        capabilities = client.server_capabilities
        with pytest.raises(MCPError) as prompt:
            await client.get_prompt("nope")
        with pytest.raises(MCPError) as resource:
            await client.read_resource("memory://1")

    assert capabilities is not None
    assert capabilities.tools is not None
    assert (capabilities.prompts, capabilities.resources) == (None, None)
    assert (prompt.value.error.code, resource.value.error.code) == (METHOD_NOT_FOUND, METHOD_NOT_FOUND)
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []


@pytest.mark.parametrize("mode", MODES)
async def test_each_request_stands_alone_without_a_session_id(server: MCPServer, mode: str) -> None:
    responses: list[httpx2.Response] = []

    async def record(response: httpx2.Response) -> None:
        responses.append(response)

    async with serving(create_endpoint(server, authenticate=OPEN)) as http:
        http.event_hooks["response"].append(record)
        async with Client(streamable_http_client("http://testserver/mcp", http_client=http), mode=mode) as client:
            await client.call_tool("prime_memory_context", {})

    assert responses
    assert all(r.request.method == "POST" for r in responses)
    assert all("mcp-session-id" not in r.headers for r in responses)
    assert all(r.headers["content-type"].startswith("application/json") for r in responses if r.status_code == 200)


@pytest.mark.parametrize("method", ["GET", "HEAD", "DELETE"])
async def test_get_head_and_delete_on_mcp_get_405_allowing_post_instead_of_an_endless_stream(
    server: MCPServer, method: str
) -> None:
    async with serving(create_endpoint(server, authenticate=OPEN)) as http:
        response = await http.request(method, "/mcp", headers={"accept": "text/event-stream"})

    assert response.status_code == 405
    assert response.headers["allow"] == "POST, OPTIONS"
    assert response.headers["content-type"] == "application/problem+json"


async def test_a_foreign_origin_gets_403(server: MCPServer) -> None:
    async with serving(create_endpoint(server, allowed_origins=["https://app.example"], authenticate=OPEN)) as http:
        response = await http.post(
            "/mcp", json=INITIALIZE, headers={**JSON_HEADERS, "origin": "https://attacker.example"}
        )

    assert response.status_code == 403


async def test_an_allowed_origin_and_no_origin_are_served(server: MCPServer) -> None:
    async with serving(create_endpoint(server, allowed_origins=["https://app.example"], authenticate=OPEN)) as http:
        allowed = await http.post("/mcp", json=INITIALIZE, headers={**JSON_HEADERS, "origin": "https://app.example"})
        absent = await http.post("/mcp", json=INITIALIZE, headers=JSON_HEADERS)

    for response in (allowed, absent):
        assert response.status_code == 200
        assert response.json()["result"]["serverInfo"]["name"] == "agent-memory"


async def test_a_function_url_host_is_not_refused_as_a_rebinding_attempt(server: MCPServer) -> None:
    async with serving(create_endpoint(server, authenticate=OPEN), base_url=f"https://{FUNCTION_URL_HOST}") as http:
        response = await http.post("/mcp", json=INITIALIZE, headers=JSON_HEADERS)

    assert response.status_code == 200
    assert response.json()["result"]["serverInfo"]["name"] == "agent-memory"


async def test_a_body_that_is_not_json_rpc_is_refused_with_400_and_one_not_declared_json_with_415(
    server: MCPServer,
) -> None:
    async with serving(create_endpoint(server, authenticate=OPEN)) as http:
        not_json = await http.post("/mcp", content=b"{oops", headers=JSON_HEADERS)
        wrong_type = await http.post("/mcp", content=b"{}", headers={**JSON_HEADERS, "content-type": "text/plain"})

    assert (not_json.status_code, wrong_type.status_code) == (400, 415)
    assert wrong_type.headers["content-type"] == "application/problem+json"


async def test_a_body_over_the_http_doors_bound_is_refused_with_413(server: MCPServer) -> None:
    async with serving(create_endpoint(server, authenticate=OPEN)) as http:
        response = await http.post("/mcp", content=b" " * (128 * 1024 + 1), headers=JSON_HEADERS)

    assert response.status_code == 413


def test_one_process_serves_the_http_api_and_mcp_side_by_side(memory_service: MemoryService) -> None:
    server = create_server(memory_service, OPEN, version="test")
    endpoint = create_endpoint(server, authenticate=OPEN)
    app = with_mcp_endpoint(create_app(memory_service, OPEN, version="test"), endpoint)

    with TestClient(app) as client:
        created = client.post("/memories", json={"content": "The user likes tea"})
        listed = client.post(
            "/mcp",
            json={"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search_memories"}},
            headers={**JSON_HEADERS, "mcp-protocol-version": "2025-11-25"},
        )
        stream = client.get("/mcp")
        missing = client.get("/nowhere")

    assert created.status_code == 201
    assert listed.status_code == 200
    assert listed.json()["result"]["structuredContent"]["items"][0]["content"] == "The user likes tea"
    assert stream.status_code == 405
    assert (missing.status_code, missing.headers["content-type"]) == (404, "application/problem+json")


def test_beside_mcp_an_unknown_routes_404_names_mcp_too(memory_service: MemoryService) -> None:
    server = create_server(memory_service, OPEN, version="test")
    endpoint = create_endpoint(server, authenticate=OPEN)
    app = with_mcp_endpoint(create_app(memory_service, OPEN, version="test"), endpoint)

    with TestClient(app) as client:
        response = client.get("/nowhere")

    assert (response.status_code, response.headers["content-type"]) == (404, "application/problem+json")
    assert response.json()["detail"] == (
        "no route GET /nowhere; the routes are /changes, /console, /console/{name}, /healthz, /key, /keys, "
        "/keys/{key_id}, /mcp, /memories, /memories/{memory_id}, "
        "/memories/{memory_id}/history, /memories/{memory_id}/related, /memories/{memory_id}/restore, "
        "/memories/{memory_id}/supersede, /openapi.json, /recall"
    )


def test_beside_mcp_every_path_reaches_the_http_api_even_one_holding_a_newline(memory_service: MemoryService) -> None:
    # Found by schemathesis: a Mount("/") left `/memories/1%0A2` to Starlette's text/plain 404.
    server = create_server(memory_service, OPEN, version="test")
    endpoint = create_endpoint(server, authenticate=OPEN)
    app = with_mcp_endpoint(create_app(memory_service, OPEN, version="test"), endpoint)

    with TestClient(app) as client:
        responses = [client.get(path) for path in ("/memories/1%0A2", "/memories/%0A", "/mcp/", "/%0A")]

    assert [(r.status_code, r.headers["content-type"]) for r in responses] == [(404, "application/problem+json")] * 4
