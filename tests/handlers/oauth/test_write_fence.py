"""An OAuth access token acts as the API key that consented to its grant, so the write and read fences hold it too:
once that key is revoked (or erased with its namespace) in the store, the token writes nothing and reads nothing, even
while the door still trusts it from its cache. Through the MCP function's handler fed function-URL events, over the
in-memory stores."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx2
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from adapters.memory import InMemoryGrantRepository, InMemoryKeyRepository, InMemoryMemoryRepository
from core.contract import RetrievalQuery
from core.grants import GrantService
from core.keys import KeyService
from core.memories import MemoryService
from core.model import NewMemory
from core.repository import KEY_NOT_LIVE, READ_KEY_NOT_LIVE
from handlers.auth import key_authenticator
from handlers.mcp import create_server
from handlers.mcp.endpoint import create_handler
from handlers.oauth import OAuthServer
from tests.conftest import FakeClock
from tests.handlers.conftest import FUNCTION_URL_HOST, FunctionUrlBridge, LambdaWorker, tool_text
from tests.handlers.oauth.flow import MemoryTokenStorage, Person, oauth_client

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("ending", ["revoked", "erased"])
async def test_a_token_whose_consenting_key_was_ended_elsewhere_writes_and_reads_nothing_while_the_door_trusts_it(
    lambda_worker: LambdaWorker,
    key_service: KeyService,
    api_keys: InMemoryKeyRepository,
    clock: FakeClock,
    ending: str,
) -> None:
    store = InMemoryMemoryRepository(api_keys)
    fenced = MemoryService(store, clock, fenced=True)
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
            # By another process: this one's caches still trust the token and its key.
            elsewhere = KeyService(api_keys, clock)
            if ending == "revoked":
                elsewhere.revoke(key.key_id)
            else:
                store.erase("alice")
                owner, _ = elsewhere.create("alice")
                fenced.create("alice", NewMemory.parse({"content": "The user keeps bees"}), key_id=owner.key_id)
            refused = await client.call_tool("create_memory", {"content": "The user keeps wasps"})
            reads = [
                await client.call_tool("search_memories", {}),
                await client.call_tool("prime_memory_context", {}),
                await client.call_tool("get_memory", {"id": 1}),
            ]

    assert not landed.is_error, tool_text(landed)
    assert refused.is_error
    assert tool_text(refused).startswith(KEY_NOT_LIVE)
    for read in reads:
        assert read.is_error
        assert tool_text(read).startswith(READ_KEY_NOT_LIVE)
    listed = fenced.search("alice", RetrievalQuery.parse({}), stamp=False).items
    assert [(m.content, m.last_accessed_at) for m in listed] == [("The user keeps bees", None)]
