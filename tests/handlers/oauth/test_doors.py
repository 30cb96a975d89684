"""The whole OAuth flow, as the `mcp` SDK's OAuthClientProvider runs it, through the two real doors: the MCP
function's own `handler` fed function-URL events (its wiring, over moto), and `agent-memory serve` over HTTP (over
DynamoDB Local). From a bare 401 to tools called, refreshed, a rotated refresh token refused, and revoked."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from adapters.dynamodb import DynamoDBKeyRepository
from adapters.memory import InMemoryGrantRepository
from core.grant_terms import ACCESS_TTL
from core.grants import GrantService
from core.keys import KeyService
from core.memories import MemoryService
from handlers.auth import key_authenticator
from handlers.mcp import create_server
from handlers.mcp.endpoint import create_handler
from handlers.oauth import OAuthServer
from tests.conftest import Engine, FakeClock, LambdaFunctions
from tests.handlers.conftest import FUNCTION_URL_HOST, FunctionUrlBridge, LambdaWorker
from tests.handlers.oauth.flow import MemoryTokenStorage, Person, oauth_client

pytestmark = pytest.mark.anyio


async def run_the_whole_flow(
    base: str, key: str, namespace: str, transport: httpx2.AsyncBaseTransport | None = None
) -> list[str]:
    """Connect by URL alone, consent with `key`, call tools (writes only: moto cannot run the stamps of reads),
    refresh, check the rotated refresh token is refused (which ends the grant), then connect again and revoke.
    Returns every secret the flow handled: codes, access and refresh tokens."""
    async with (
        httpx2.AsyncClient(transport=transport, base_url=base) as http,
        httpx2.AsyncClient(transport=transport, base_url=base) as browser,
        httpx2.AsyncClient(transport=transport, base_url=base) as plain,
    ):
        return await _flow(http, browser, plain, f"{base}/mcp", key, namespace)


async def _flow(
    http: httpx2.AsyncClient,
    browser: httpx2.AsyncClient,
    plain: httpx2.AsyncClient,
    mcp_url: str,
    key: str,
    namespace: str,
) -> list[str]:
    person = Person(browser, namespace, key)
    storage = MemoryTokenStorage()
    provider = oauth_client(mcp_url, person, storage)
    http.auth = provider

    async with Client(streamable_http_client(mcp_url, http_client=http)) as client:
        created = await client.call_tool("create_memory", {"content": "The user is left-handed"})
        assert not created.is_error, created
    assert storage.tokens is not None
    first = storage.tokens

    provider.context.token_expiry_time = time.time() - 1  # the client believes its token expired: it refreshes
    async with Client(streamable_http_client(mcp_url, http_client=http)) as client:
        second = await client.call_tool("create_memory", {"content": "The user keeps bees"})
    assert second.structured_content is not None
    assert created.structured_content is not None
    assert second.structured_content["id"] == created.structured_content["id"] + 1  # the namespace consented for
    assert storage.tokens.refresh_token != first.refresh_token

    client_id = storage.client_info.client_id if storage.client_info else ""
    token_url = str(http.base_url.join("/token"))  # `plain` sends what it is given: no OAuth of its own
    reuse = await plain.post(
        token_url,
        data={"grant_type": "refresh_token", "client_id": client_id, "refresh_token": first.refresh_token or ""},
    )
    assert (reuse.status_code, reuse.json()["error"]) == (400, "invalid_grant")
    ended = await plain.post(
        str(http.base_url.join("/mcp")),
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={
            "authorization": f"Bearer {storage.tokens.access_token}",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2025-11-25",
        },
    )
    assert ended.status_code == 401  # the reuse ended the whole grant

    again = MemoryTokenStorage()
    second_person = Person(browser, namespace, key)
    http.auth = oauth_client(mcp_url, second_person, again)
    async with Client(streamable_http_client(mcp_url, http_client=http)) as client:
        third = await client.call_tool("create_memory", {"content": "The user keeps wasps"})
    assert third.structured_content is not None
    assert third.structured_content["id"] == second.structured_content["id"] + 1
    assert again.tokens is not None
    assert again.client_info is not None
    revoked = await plain.post(
        str(http.base_url.join("/revoke")),
        data={"token": again.tokens.access_token, "client_id": again.client_info.client_id or ""},
    )
    refused = await plain.post(
        token_url,
        data={
            "grant_type": "refresh_token",
            "client_id": again.client_info.client_id or "",
            "refresh_token": again.tokens.refresh_token or "",
        },
    )
    assert revoked.status_code == 200
    assert refused.json()["error"] == "invalid_grant"
    codes = [parse_qs(urlsplit(p.redirect or "").query)["code"][0] for p in (person, second_person)]
    tokens = [first, storage.tokens, again.tokens]
    return [*codes, *(t.access_token for t in tokens), *(t.refresh_token or "" for t in tokens)]


@pytest.fixture
async def bridge(deployed_environment: LambdaFunctions, lambda_worker: LambdaWorker) -> FunctionUrlBridge:
    """The MCP function as deployed (over moto), reached through function URL events."""
    return FunctionUrlBridge(deployed_environment.mcp, lambda_worker)


async def test_the_mcp_function_runs_the_whole_flow_through_function_url_events(
    bridge: FunctionUrlBridge, moto_engine: Engine
) -> None:
    _, key = KeyService(DynamoDBKeyRepository(moto_engine.client, "agent-memory-mcp-test")).create("alice")
    await run_the_whole_flow(f"https://{FUNCTION_URL_HOST}", key, "alice", bridge)

    assert {"GET", "POST"} == set(bridge.methods)


async def test_serve_runs_the_whole_flow_over_http(shared_serve: tuple[str, str]) -> None:
    base, key = shared_serve
    await run_the_whole_flow(base, key, "default")  # serve's first key is of namespace default


async def test_through_function_url_events_an_expired_token_is_refused_and_the_client_refreshes_it(
    lambda_worker: LambdaWorker, memory_service: MemoryService, key_service: KeyService
) -> None:
    clock = FakeClock(datetime.now(UTC))  # the grants' clock, moved on by hand
    grants = GrantService(InMemoryGrantRepository(), key_service, clock)
    keys = key_authenticator(key_service)
    server = create_server(memory_service, keys, version="test")
    bridge = FunctionUrlBridge(create_handler(server, authenticate=keys, oauth=OAuthServer(grants)), lambda_worker)
    base = f"https://{FUNCTION_URL_HOST}"
    storage = MemoryTokenStorage()
    async with (
        httpx2.AsyncClient(transport=bridge, base_url=base) as http,
        httpx2.AsyncClient(transport=bridge, base_url=base) as browser,
    ):
        provider = oauth_client(f"{base}/mcp", Person(browser, "alice", key_service.create("alice")[1]), storage)
        http.auth = provider
        async with Client(streamable_http_client(f"{base}/mcp", http_client=http)) as client:
            await client.call_tool("create_memory", {"content": "The user keeps bees"})
        assert storage.tokens is not None
        expired_token = storage.tokens.access_token
        clock.advance(seconds=ACCESS_TTL.total_seconds())

        refused = await browser.post(
            "/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"authorization": f"Bearer {expired_token}", "accept": "application/json, text/event-stream"},
        )
        provider.context.token_expiry_time = time.time() - 1  # the client's clock agrees
        async with Client(streamable_http_client(f"{base}/mcp", http_client=http)) as client:
            found = await client.call_tool("search_memories", {})

    assert refused.status_code == 401
    assert refused.json()["detail"] == "the access token expired: refresh it"
    assert 'error="invalid_token"' in refused.headers["www-authenticate"]
    assert found.structured_content is not None
    assert found.structured_content["total"] == 1
    assert storage.tokens.access_token != expired_token
