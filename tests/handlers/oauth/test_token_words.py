"""A caller connected by OAuth reads about its access token and how to sign in again, never API-key words meant for
a caller holding a key (issue 42, item 11): a token lacking a scope is told so at /mcp, and a token whose consenting
key was revoked elsewhere gets a tool error saying to sign in again; a caller holding a key keeps the key's words."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx2
import pytest

from adapters.memory import InMemoryGrantRepository, InMemoryKeyRepository, InMemoryMemoryRepository
from core.grants import GrantService
from core.keys import KeyService
from core.memories import MemoryService
from handlers.auth import key_authenticator
from handlers.mcp import create_server
from handlers.mcp.endpoint import MCPEndpoint, create_endpoint
from handlers.oauth import OAuthServer
from tests.conftest import FakeClock
from tests.handlers.oauth.test_oauth import mcp_call, tokens_for

pytestmark = pytest.mark.anyio

KEY_WORDS = ("API key", "agent-memory key", "Authorization: Bearer <key>")


@pytest.fixture
def clock() -> FakeClock:
    # The SDK's token handler checks a code's expiry against the wall clock: start there.
    return FakeClock(datetime.now(UTC))


@pytest.fixture
def grants(key_service: KeyService, clock: FakeClock) -> GrantService:
    return GrantService(InMemoryGrantRepository(), key_service, clock)


@pytest.fixture
def endpoint(api_keys: InMemoryKeyRepository, key_service: KeyService, grants: GrantService) -> MCPEndpoint:
    # Fenced on the live key, as every served or deployed door is: a key revoked elsewhere stops the token at once.
    fenced = MemoryService(InMemoryMemoryRepository(api_keys), FakeClock(), fenced=True)
    keys = key_authenticator(key_service)
    return create_endpoint(create_server(fenced, keys, version="test"), authenticate=keys, oauth=OAuthServer(grants))


def assert_in_token_words(text: str) -> None:
    assert "access token" in text or "sign in again" in text, text
    assert [words for words in KEY_WORDS if words in text] == [], text


async def test_a_token_lacking_a_scope_is_told_its_access_token_lacks_it_and_to_sign_in_again(
    http: httpx2.AsyncClient, browser: httpx2.AsyncClient, key_service: KeyService
) -> None:
    readers = await tokens_for(http, browser, key_service.create("alice", ["read"])[1], scopes=["read"])

    refused = await mcp_call(http, readers["access_token"], "create_memory", content="The user keeps wasps")

    assert refused.status_code == 403
    problem = refused.json()
    assert problem["detail"].startswith("this access token lacks the 'write' scope")
    assert "sign in again" in problem["detail"]
    assert_in_token_words(problem["title"])
    assert_in_token_words(problem["detail"])


async def test_a_token_whose_key_was_revoked_elsewhere_is_told_to_sign_in_again_by_the_tool_error(
    http: httpx2.AsyncClient, browser: httpx2.AsyncClient, key_service: KeyService, api_keys: InMemoryKeyRepository
) -> None:
    key, secret = key_service.create("alice")
    tokens = await tokens_for(http, browser, secret)
    assert (await mcp_call(http, tokens["access_token"], "search_memories")).status_code == 200

    KeyService(api_keys, FakeClock()).revoke(key.key_id)  # by another process: this door's caches still trust it
    refused = (await mcp_call(http, tokens["access_token"], "create_memory", content="The user keeps wasps")).json()

    assert refused["result"]["isError"] is True
    text = refused["result"]["content"][0]["text"]
    assert "nothing was written" in text
    assert text.endswith("sign in again: connect the MCP client once more and approve it with a live API key")
    assert "send a valid agent-memory API key" not in text


async def test_a_caller_holding_a_key_keeps_the_keys_words(http: httpx2.AsyncClient, key_service: KeyService) -> None:
    reader = key_service.create("alice", ["read"])[1]

    refused = (await mcp_call(http, reader, "create_memory", content="The user keeps wasps")).json()

    text = refused["result"]["content"][0]["text"]
    assert text.startswith("this API key lacks the 'write' scope")
    assert text.endswith("ask the user for an API key with the write scope")


async def test_a_token_whose_key_was_revoked_here_gets_a_401_titled_for_tokens_saying_to_sign_in_again(
    http: httpx2.AsyncClient, browser: httpx2.AsyncClient, key_service: KeyService
) -> None:
    key, secret = key_service.create("alice")
    tokens = await tokens_for(http, browser, secret)
    key_service.revoke(key.key_id)

    refused = await mcp_call(http, tokens["access_token"], "search_memories")

    assert refused.status_code == 401
    problem = refused.json()
    assert problem["title"] == "A valid access token is required"
    assert problem["detail"].endswith(
        "sign in again: connect the MCP client once more and approve it with a live API key"
    )
