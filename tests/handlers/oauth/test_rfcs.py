"""What the RFCs and the MCP authorization specification ask of the authorization server beyond the flow itself, in
process over the in-memory store: a loopback redirect URI comes back on any port (RFC 8252 §7.3), a rotation ends the
access token it replaced at once, /token refuses a `resource` of another server (RFC 8707 `invalid_target`), and every
401 from /mcp names the scopes to ask for (MCP 2025-11-25)."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx2
import pytest

from adapters.memory import InMemoryGrantRepository
from core.grants import GrantService
from core.keys import KeyService
from core.memories import MemoryService
from handlers.auth import key_authenticator
from handlers.mcp import create_server
from handlers.mcp.endpoint import MCPEndpoint, create_endpoint
from handlers.oauth import OAuthServer
from tests.conftest import FakeClock
from tests.handlers.oauth.flow import REDIRECT_URI, form_of, pkce
from tests.handlers.oauth.test_oauth import (
    MCP_URL,
    METADATA_URL,
    ORIGIN,
    assert_needs_scope,
    authorization_url,
    code_for,
    exchange,
    lists_tools,
    mcp_call,
    query_of,
    refresh,
    registered,
    token_request,
    tokens_for,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def clock() -> FakeClock:
    # The SDK's token handler checks a code's expiry against the wall clock: start there.
    return FakeClock(datetime.now(UTC))


@pytest.fixture
def endpoint(memory_service: MemoryService, key_service: KeyService, clock: FakeClock) -> MCPEndpoint:
    keys = key_authenticator(key_service)
    server = create_server(memory_service, keys, version="test")
    grants = GrantService(InMemoryGrantRepository(), key_service, clock)
    return create_endpoint(server, authenticate=keys, oauth=OAuthServer(grants))


# --- RFC 8252 §7.3: a loopback redirect URI on any port ---


@pytest.mark.parametrize(
    ("registered_uri", "used_uri"),
    [
        ("http://127.0.0.1/callback", "http://127.0.0.1:54321/callback"),
        ("http://127.0.0.1:53682/callback", "http://127.0.0.1:61000/callback"),
        ("http://[::1]/callback", "http://[::1]:54321/callback"),
        ("http://localhost/callback", "http://localhost:54321/callback"),
        ("http://127.0.0.1:54321/callback", "http://127.0.0.1/callback"),
    ],
)
async def test_a_loopback_redirect_uri_comes_back_on_whatever_port_the_client_got(
    http: httpx2.AsyncClient, browser: httpx2.AsyncClient, alice_key: str, registered_uri: str, used_uri: str
) -> None:
    client_id = await registered(http, redirect_uris=[registered_uri])
    verifier, challenge = pkce()

    answer = await browser.get(authorization_url(client_id, challenge, redirect_uri=used_uri))
    assert answer.status_code == 302, answer.text
    page = await browser.get(answer.headers["location"])
    assert page.status_code == 200, page.text
    origin = used_uri.removesuffix("/callback")
    assert f"form-action 'self' {origin};" in page.headers["content-security-policy"]
    hidden, offered = form_of(page.text)
    fields = {**hidden, "namespace": "alice", "api_key": alice_key, "decision": "approve"}
    approved = await browser.post("/consent", data=fields | dict.fromkeys(offered, "on"))
    assert approved.status_code == 302, approved.text
    assert approved.headers["location"].startswith(f"{used_uri}?")
    code = query_of(approved.headers["location"])["code"]
    form = {"grant_type": "authorization_code", "client_id": client_id, "code": code, "code_verifier": verifier}

    elsewhere = await token_request(http, **form, redirect_uri=f"{origin}9/callback", resource=MCP_URL)
    exchanged = await token_request(http, **form, redirect_uri=used_uri, resource=MCP_URL)

    # The code is bound to the redirect URI used at /authorize, port and all (RFC 6749 §4.1.3).
    assert (elsewhere.status_code, elsewhere.json()["error"]) == (400, "invalid_request")
    assert exchanged.status_code == 200, exchanged.text
    assert await lists_tools(http, exchanged.json()["access_token"]) == 200


@pytest.mark.parametrize(
    ("registered_uri", "used_uri"),
    [
        ("http://127.0.0.1/callback", "http://127.0.0.1:54321/other"),
        ("http://127.0.0.1/callback", "http://127.0.0.1:54321/callback?x=1"),
        ("http://127.0.0.1/callback", "http://[::1]:54321/callback"),
        ("http://127.0.0.1/callback", "http://localhost:54321/callback"),
        ("http://127.0.0.1/callback", "https://127.0.0.1:54321/callback"),
        ("https://app.example.com/callback", "https://app.example.com:8443/callback"),
    ],
)
async def test_only_the_port_of_a_loopback_redirect_uri_may_differ_from_the_registered_one(
    http: httpx2.AsyncClient, browser: httpx2.AsyncClient, registered_uri: str, used_uri: str
) -> None:
    client_id = await registered(http, redirect_uris=[registered_uri])

    answer = await browser.get(authorization_url(client_id, pkce()[1], redirect_uri=used_uri))

    assert answer.status_code == 400, answer.text
    assert answer.json()["error"] == "invalid_request"
    assert "location" not in answer.headers


async def test_a_forged_consent_form_cannot_move_a_loopback_redirect_to_another_path(
    http: httpx2.AsyncClient, browser: httpx2.AsyncClient, alice_key: str
) -> None:
    client_id = await registered(http, redirect_uris=["http://127.0.0.1/callback"])
    answer = await browser.get(authorization_url(client_id, pkce()[1], redirect_uri="http://127.0.0.1:5000/callback"))
    page = await browser.get(answer.headers["location"])
    hidden, offered = form_of(page.text)

    forged = hidden | {"redirect_uri": "http://127.0.0.1:5000/elsewhere"}
    fields = {**forged, "namespace": "alice", "api_key": alice_key, "decision": "approve"}
    answer = await browser.post("/consent", data=fields | dict.fromkeys(offered, "on"))

    assert answer.status_code == 400
    assert "location" not in answer.headers


# --- a rotation ends the access token it replaced, at once ---


async def test_refreshing_ends_the_replaced_access_token_at_once_though_this_process_had_verified_it(
    http: httpx2.AsyncClient, browser: httpx2.AsyncClient, alice_key: str
) -> None:
    tokens = await tokens_for(http, browser, alice_key)
    assert await lists_tools(http, tokens["access_token"]) == 200  # verified, so trusted for a while without a read

    rotated = await refresh(http, tokens["client_id"], tokens["refresh_token"])

    assert rotated.status_code == 200
    assert await lists_tools(http, tokens["access_token"]) == 401
    assert await lists_tools(http, rotated.json()["access_token"]) == 200


# --- RFC 8707 at /token: a resource of another server is invalid_target ---

ANOTHER_SERVER = "https://another.example.com/mcp"


async def test_a_code_exchange_naming_another_servers_resource_is_invalid_target_and_spends_nothing(
    http: httpx2.AsyncClient, browser: httpx2.AsyncClient, alice_key: str
) -> None:
    client_id = await registered(http)
    code, verifier = await code_for(browser, client_id, alice_key)
    form = {"grant_type": "authorization_code", "client_id": client_id, "code": code, "code_verifier": verifier}

    refused = await token_request(http, **form, redirect_uri=REDIRECT_URI, resource=ANOTHER_SERVER)

    assert (refused.status_code, refused.json()["error"]) == (400, "invalid_target")
    assert MCP_URL in refused.json()["error_description"]
    assert refused.headers["cache-control"] == "no-store"
    assert (await exchange(http, client_id, code, verifier)).status_code == 200


async def test_a_refresh_naming_another_servers_resource_is_invalid_target_and_keeps_the_grant(
    http: httpx2.AsyncClient, browser: httpx2.AsyncClient, alice_key: str
) -> None:
    tokens = await tokens_for(http, browser, alice_key)
    form = {"grant_type": "refresh_token", "client_id": tokens["client_id"], "refresh_token": tokens["refresh_token"]}

    refused = await token_request(http, **form, resource=ANOTHER_SERVER)
    sideways = await token_request(http, **form, resource=f"{ORIGIN}/memories")

    assert (refused.status_code, refused.json()["error"]) == (400, "invalid_target")
    assert (sideways.status_code, sideways.json()["error"]) == (400, "invalid_target")
    assert await lists_tools(http, tokens["access_token"]) == 200
    assert (await token_request(http, **form, resource=f"{MCP_URL}/")).status_code == 200


# --- MCP 2025-11-25: every 401 from /mcp names the scopes to ask for ---


async def test_every_401_from_mcp_names_the_supported_scopes_beside_the_resource_metadata(
    http: httpx2.AsyncClient, browser: httpx2.AsyncClient, alice_key: str
) -> None:
    bare = await mcp_call(http, None, "prime_memory_context")
    unknown = await mcp_call(http, "amt_0123456789abcdef_" + "a" * 43, "prime_memory_context")
    read_only = await tokens_for(http, browser, alice_key, scopes=["read"])
    write = await mcp_call(http, read_only["access_token"], "create_memory", content="x")

    assert (bare.status_code, unknown.status_code) == (401, 401)
    assert bare.headers["www-authenticate"] == (
        f'Bearer realm="agent-memory", scope="read write", resource_metadata="{METADATA_URL}"'
    )
    assert unknown.headers["www-authenticate"] == (
        f'Bearer realm="agent-memory", error="invalid_token", scope="read write", resource_metadata="{METADATA_URL}"'
    )
    assert_needs_scope(write, "write")  # a 403 names the one scope it needs, once
