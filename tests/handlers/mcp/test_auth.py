"""The MCP door with real API keys over the in-memory store: the endpoint answers 401 at the HTTP level before any
tool runs, hands the verified principal to the tools, and the tools refuse a missing scope with a tool error."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

import httpx2
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server import MCPServer
from mcp.server.transport_security import TransportSecuritySettings

from adapters.memory import InMemoryKeyRepository, InMemoryMemoryRepository
from core.contract import RetrievalQuery
from core.keys import CACHE_TTL, KeyService
from core.memories import MemoryService
from core.model import NewMemory
from core.repository import KEY_NOT_LIVE, READ_KEY_NOT_LIVE, KeyRepository
from handlers.auth import Authenticator, key_authenticator
from handlers.mcp import create_server
from handlers.mcp.endpoint import MCPEndpoint, create_endpoint
from tests.conftest import FakeClock, UnavailableKeys
from tests.handlers.conftest import call_tool, tool_text
from tests.handlers.mcp.test_tools import TOOLS

pytestmark = pytest.mark.anyio

JSON_HEADERS = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": "2025-11-25",
}
CHALLENGE = 'Bearer realm="agent-memory"'
READ_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("prime_memory_context", {}),
    ("search_memories", {}),
    ("get_memory", {"id": 1}),
]
WRITE_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("create_memory", {"content": "The user keeps wasps"}),
    ("update_memory", {"id": 1, "content": "The user keeps hornets"}),
    ("delete_memory", {"id": 1}),
]


@pytest.fixture
def keyed(key_service: KeyService) -> Authenticator:
    return key_authenticator(key_service)


@pytest.fixture
def keyed_server(memory_service: MemoryService, keyed: Authenticator) -> MCPServer:
    """The server over the in-memory store authenticating with key_service, holding memory 1 of namespace alice."""
    memory_service.create("alice", NewMemory.parse({"content": "The user keeps bees"}))
    return create_server(memory_service, keyed, version="test")


@asynccontextmanager
async def serving(endpoint: MCPEndpoint) -> AsyncIterator[httpx2.AsyncClient]:
    transport = httpx2.ASGITransport(app=endpoint)
    async with endpoint.session_manager.run(), httpx2.AsyncClient(transport=transport, base_url="http://t") as http:
        yield http


@pytest.fixture
async def http(keyed_server: MCPServer, keyed: Authenticator) -> AsyncIterator[httpx2.AsyncClient]:
    async with serving(create_endpoint(keyed_server, authenticate=keyed)) as client:
        yield client


def rpc(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, **({"params": params} if params is not None else {})}


async def post(http: httpx2.AsyncClient, body: dict[str, Any], token: str | None) -> httpx2.Response:
    headers = {**JSON_HEADERS, **({"authorization": f"Bearer {token}"} if token is not None else {})}
    return await http.post("/mcp", json=body, headers=headers)


async def call(http: httpx2.AsyncClient, token: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    response = await post(http, rpc("tools/call", {"name": tool, "arguments": arguments}), token)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()["result"]
    return result


def alice_contents(service: MemoryService) -> list[str]:
    return [m.content for m in service.search("alice", RetrievalQuery.parse({"status": "active"})).items]


# --- 401 at the HTTP level ---


@pytest.mark.parametrize(
    ("authorization", "challenge"),
    [
        (None, CHALLENGE),
        ("Basic YWxpY2U6c2VjcmV0", CHALLENGE),
        ("Bearer", CHALLENGE),
        ("Bearer not-a-key", f'{CHALLENGE}, error="invalid_token"'),
        ("Bearer am_0123456789ab_" + "a" * 43, f'{CHALLENGE}, error="invalid_token"'),
    ],
)
async def test_a_request_without_a_valid_key_is_401_before_any_tool_runs(
    http: httpx2.AsyncClient, memory_service: MemoryService, authorization: str | None, challenge: str
) -> None:
    headers = {**JSON_HEADERS, **({"authorization": authorization} if authorization is not None else {})}
    create = rpc("tools/call", {"name": "create_memory", "arguments": {"content": "The user keeps wasps"}})

    response = await http.post("/mcp", json=create, headers=headers)

    assert response.status_code == 401
    assert response.headers["www-authenticate"] == challenge
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["type"] == "urn:agent-memory:problem:unauthenticated"
    assert alice_contents(memory_service) == ["The user keeps bees"]


async def test_even_initialize_and_tools_list_need_a_key(http: httpx2.AsyncClient, key_service: KeyService) -> None:
    _, token = key_service.create("alice", ["read"])

    refused = await post(http, rpc("tools/list"), None)
    listed = await post(http, rpc("tools/list"), token)

    assert refused.status_code == 401
    assert listed.status_code == 200
    assert len(listed.json()["result"]["tools"]) == len(TOOLS)


async def test_a_revoked_key_is_401_once_the_cache_window_has_passed(
    http: httpx2.AsyncClient, key_service: KeyService, api_keys: KeyRepository, clock: FakeClock
) -> None:
    key, token = key_service.create("alice")
    assert (await post(http, rpc("tools/list"), token)).status_code == 200
    KeyService(api_keys, clock).revoke(key.key_id)
    clock.advance(seconds=CACHE_TTL.total_seconds())

    response = await post(http, rpc("tools/list"), token)

    assert response.status_code == 401
    assert response.json()["detail"] == "the API key has been revoked"


async def test_a_write_with_a_key_revoked_while_its_verification_is_cached_is_a_tool_error_and_changes_nothing(
    keyed: Authenticator, key_service: KeyService, api_keys: InMemoryKeyRepository, clock: FakeClock
) -> None:
    # As deployed: every change is fenced on its key being live in the store, whatever this process has cached.
    fenced = MemoryService(InMemoryMemoryRepository(api_keys), clock, fenced=True)
    server = create_server(fenced, keyed, version="test")
    key, token = key_service.create("alice")
    async with serving(create_endpoint(server, authenticate=keyed)) as http:
        assert not (await call(http, token, "create_memory", {"content": "The user keeps bees"})).get("isError")
        KeyService(api_keys, clock).revoke(key.key_id)  # by another process: this one still trusts its cache
        results = [
            await call(http, token, "create_memory", {"content": "The user keeps wasps"}),
            await call(http, token, "update_memory", {"id": 1, "content": "The user keeps ants"}),
            await call(http, token, "delete_memory", {"id": 1}),
        ]
        read = await call(http, token, "search_memories", {})

    for result in results:
        assert result["isError"]
        assert result["content"][0]["text"].startswith(KEY_NOT_LIVE)
    assert read["isError"]  # reads are fenced too
    assert read["content"][0]["text"].startswith(READ_KEY_NOT_LIVE)
    assert alice_contents(fenced) == ["The user keeps bees"]
    assert fenced.get("alice", 1, stamp=False).version == 1


async def test_an_expired_key_is_401(http: httpx2.AsyncClient, key_service: KeyService, clock: FakeClock) -> None:
    _, token = key_service.create("alice", expires_in=timedelta(minutes=1))
    assert (await post(http, rpc("tools/list"), token)).status_code == 200
    clock.advance(minutes=1)

    response = await post(http, rpc("tools/list"), token)

    assert response.status_code == 401
    assert response.json()["detail"].startswith("the API key expired at ")


async def test_storage_unavailable_while_checking_a_key_is_503_with_retry_after(keyed_server: MCPServer) -> None:
    async with serving(
        create_endpoint(keyed_server, authenticate=key_authenticator(KeyService(UnavailableKeys(2))))
    ) as http:
        response = await post(http, rpc("tools/list"), "am_0123456789ab_" + "a" * 43)

    assert response.status_code == 503
    assert response.headers["retry-after"] == "2"
    assert response.json()["type"] == "urn:agent-memory:problem:storage-unavailable"


# --- the principal reaches the tools ---


async def test_tools_act_in_the_namespace_of_the_key_the_guard_verified(
    http: httpx2.AsyncClient, memory_service: MemoryService, key_service: KeyService
) -> None:
    _, bob = key_service.create("bob")

    created = await call(http, bob, "create_memory", {"content": "The user plays chess"})
    found = await call(http, bob, "search_memories", {})

    assert created["structuredContent"]["id"] == 1
    assert [item["content"] for item in found["structuredContent"]["items"]] == ["The user plays chess"]
    assert alice_contents(memory_service) == ["The user keeps bees"]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_sdk_client_works_when_it_sends_a_key(
    keyed_server: MCPServer, keyed: Authenticator, key_service: KeyService, mode: str
) -> None:
    _, token = key_service.create("alice")
    endpoint = create_endpoint(keyed_server, authenticate=keyed)
    transport = httpx2.ASGITransport(app=endpoint)
    headers = {"authorization": f"Bearer {token}"}
    async with (
        endpoint.session_manager.run(),
        httpx2.AsyncClient(transport=transport, base_url="http://t", headers=headers) as http,
        Client(streamable_http_client("http://t/mcp", http_client=http), mode=mode) as client,
    ):
        primed = await client.call_tool("prime_memory_context", {})

    assert primed.structured_content is not None
    assert [item["content"] for item in primed.structured_content["items"]] == ["The user keeps bees"]


async def test_an_in_process_client_without_a_key_gets_a_tool_error_not_data(keyed_server: MCPServer) -> None:
    result = await call_tool(keyed_server, "search_memories", {})

    assert result.is_error
    assert "Authorization: Bearer <key>" in tool_text(result)
    assert "bees" not in tool_text(result)


async def test_the_sdk_app_served_without_the_guard_serves_nothing_even_to_a_valid_key(
    keyed_server: MCPServer, key_service: KeyService
) -> None:
    _, token = key_service.create("alice", ["read"])
    app = keyed_server.streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=True,
        json_response=True,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    search = rpc("tools/call", {"name": "search_memories", "arguments": {}})
    async with (
        keyed_server.session_manager.run(),
        httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url="http://t") as http,
    ):
        without = (await http.post("/mcp", json=search, headers=JSON_HEADERS)).json()["result"]
        with_key = (await post(http, search, token)).json()["result"]

    # The guard is the one reader of credentials: tools never re-read a header, so a mount without it refuses all.
    assert without["isError"] is True
    assert with_key["isError"] is True
    assert "Authorization: Bearer <key>" in with_key["content"][0]["text"]
    assert "structuredContent" not in with_key or not with_key["structuredContent"]


# --- scopes: tool errors ---


@pytest.mark.parametrize(("tool", "arguments"), WRITE_CALLS, ids=[name for name, _ in WRITE_CALLS])
async def test_a_read_only_key_gets_a_tool_error_for_every_write_and_changes_nothing(
    http: httpx2.AsyncClient,
    memory_service: MemoryService,
    key_service: KeyService,
    tool: str,
    arguments: dict[str, Any],
) -> None:
    _, token = key_service.create("alice", ["read"])

    result = await call(http, token, tool, arguments)

    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert "lacks the 'write' scope" in text
    assert text.endswith("ask the user for an API key with the write scope")
    assert alice_contents(memory_service) == ["The user keeps bees"]


@pytest.mark.parametrize(("tool", "arguments"), READ_CALLS, ids=[name for name, _ in READ_CALLS])
async def test_a_read_only_key_may_read(
    http: httpx2.AsyncClient, key_service: KeyService, tool: str, arguments: dict[str, Any]
) -> None:
    _, token = key_service.create("alice", ["read"])

    result = await call(http, token, tool, arguments)

    assert result["isError"] is False, result


@pytest.mark.parametrize(("tool", "arguments"), READ_CALLS, ids=[name for name, _ in READ_CALLS])
async def test_a_write_only_key_gets_a_tool_error_for_every_read(
    http: httpx2.AsyncClient, key_service: KeyService, tool: str, arguments: dict[str, Any]
) -> None:
    _, token = key_service.create("alice", ["write"])

    result = await call(http, token, tool, arguments)

    assert result["isError"] is True
    assert "lacks the 'read' scope" in result["content"][0]["text"]
    assert "bees" not in str(result)


async def test_a_write_only_key_may_create_update_and_delete(
    http: httpx2.AsyncClient, memory_service: MemoryService, key_service: KeyService
) -> None:
    _, token = key_service.create("alice", ["write"])

    results = [await call(http, token, tool, arguments) for tool, arguments in WRITE_CALLS]

    assert [result["isError"] for result in results] == [False, False, False]
    assert alice_contents(memory_service) == ["The user keeps wasps"]


async def test_a_sigv4_signed_call_presents_its_key_in_the_agent_memory_header(
    http: httpx2.AsyncClient, key_service: KeyService
) -> None:
    _, token = key_service.create("alice", ["read"])
    signed = {**JSON_HEADERS, "authorization": "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/x, Signature=0"}

    refused = await http.post("/mcp", json=rpc("tools/list"), headers=signed)
    listed = await http.post(
        "/mcp", json=rpc("tools/list"), headers={**signed, "x-agent-memory-authorization": f"Bearer {token}"}
    )

    assert refused.status_code == 401
    assert listed.status_code == 200
    assert len(listed.json()["result"]["tools"]) == len(TOOLS)


async def test_two_authorization_headers_are_401_before_any_tool_runs(
    http: httpx2.AsyncClient, key_service: KeyService, memory_service: MemoryService
) -> None:
    _, token = key_service.create("alice", ["write"])
    headers = [*JSON_HEADERS.items(), ("authorization", f"Bearer {token}"), ("authorization", f"Bearer {token}")]

    response = await http.post(
        "/mcp", json=rpc("tools/call", {"name": "delete_memory", "arguments": {"id": 1}}), headers=headers
    )

    assert response.status_code == 401
    assert response.headers["www-authenticate"] == CHALLENGE
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["detail"].startswith("send one `authorization` header, not several")
    assert alice_contents(memory_service) == ["The user keeps bees"]


async def test_an_authorization_merely_starting_like_sigv4_is_401_even_with_the_agent_memory_header(
    http: httpx2.AsyncClient, key_service: KeyService
) -> None:
    _, token = key_service.create("alice", ["read"])
    headers = {
        **JSON_HEADERS,
        "authorization": "AWS4-HMAC-SHA256garbage",
        "x-agent-memory-authorization": f"Bearer {token}",
    }

    response = await http.post("/mcp", json=rpc("tools/list"), headers=headers)

    assert response.status_code == 401
    assert response.headers["www-authenticate"] == CHALLENGE
    assert "Bearer scheme" in response.json()["detail"]
