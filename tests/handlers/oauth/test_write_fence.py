"""An OAuth access token acts as the API key that consented to its grant, so the write fence holds it too: once that
key is revoked (or erased with its namespace) in the store, the token writes nothing, even while the door still
trusts it from its cache. Through the MCP function's handler fed function-URL events, over the in-memory stores."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx2
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from core.contract import RetrievalQuery
from core.grants import GrantService
from core.keys import KeyService
from core.memories import MemoryService
from core.repository import KEY_NOT_LIVE
from core.repository.memory import InMemoryGrantRepository, InMemoryKeyRepository, InMemoryMemoryRepository
from handlers.auth import key_authenticator
from handlers.mcp import create_server
from handlers.mcp.endpoint import create_handler
from handlers.oauth import OAuthServer
from tests.conftest import FakeClock
from tests.handlers.conftest import FUNCTION_URL_HOST, FunctionUrlBridge, LambdaWorker, tool_text
from tests.handlers.oauth.flow import MemoryTokenStorage, Person, oauth_client

pytestmark = pytest.mark.anyio


async def test_a_token_whose_consenting_key_was_revoked_elsewhere_writes_nothing_while_the_door_still_trusts_it(
    lambda_worker: LambdaWorker, key_service: KeyService, api_keys: InMemoryKeyRepository, clock: FakeClock
) -> None:
    fenced = MemoryService(InMemoryMemoryRepository(api_keys), clock, fenced=True)
    grants = GrantService(InMemoryGrantRepository(), key_service, FakeClock(datetime.now(UTC)))
    keys = key_authenticator(key_service)
    server = create_server(fenced, keys, version="test")
    bridge = FunctionUrlBridge(create_handler(server, authenticate=keys, oauth=OAuthServer(grants)), lambda_worker)
    base = f"https://{FUNCTION_URL_HOST}"
    key, token = key_service.create("alice")
    async with (
        httpx2.AsyncClient(transport=bridge, base_url=base) as http,
        httpx2.AsyncClient(transport=bridge, base_url=base) as browser,
    ):
        http.auth = oauth_client(f"{base}/mcp", Person(browser, "alice", token), MemoryTokenStorage())
        async with Client(streamable_http_client(f"{base}/mcp", http_client=http)) as client:
            landed = await client.call_tool("create_memory", {"content": "The user keeps bees"})
            KeyService(api_keys, clock).revoke(key.key_id)  # by another process: this one's caches still trust it
            refused = await client.call_tool("create_memory", {"content": "The user keeps wasps"})
            listed = await client.call_tool("search_memories", {})

    assert not landed.is_error, tool_text(landed)
    assert refused.is_error
    assert tool_text(refused).startswith(KEY_NOT_LIVE)
    assert listed.structured_content is not None
    assert listed.structured_content["total"] == 1  # reads stay with the cache window: only writes are fenced
    assert [m.content for m in fenced.search("alice", RetrievalQuery.parse({})).items] == ["The user keeps bees"]
