"""The MCP door as an OAuth 2.1 protected resource with its own authorization server, in process over the in-memory
store: the `mcp` SDK's OAuth client discovers it from a bare 401, registers, runs PKCE through the consent page,
calls tools with its token, refreshes and revokes; and every request the RFCs refuse is refused, touching nothing."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from adapters.memory import InMemoryGrantRepository
from core.contract import RetrievalQuery
from core.grant_terms import ACCESS_TTL, CODE_TTL, REFRESH_TTL, TOKEN_CACHE_TTL, UNUSED_CLIENT_TTL
from core.grants import GrantService
from core.keys import KeyService
from core.memories import MemoryService
from core.model import NewMemory
from core.repository import KeyRepository
from handlers import bootstrap
from handlers.auth import key_authenticator
from handlers.http.app import create_app
from handlers.mcp import create_server
from handlers.mcp.endpoint import MCPEndpoint, create_endpoint
from handlers.oauth import OAuthServer
from tests.conftest import FakeClock
from tests.handlers.mcp.test_auth import READ_CALLS, WRITE_CALLS
from tests.handlers.oauth.flow import (
    REDIRECT_URI,
    MemoryTokenStorage,
    Person,
    client_metadata,
    form_of,
    oauth_client,
    pkce,
)

pytestmark = pytest.mark.anyio

ORIGIN = "http://127.0.0.1"
MCP_URL = f"{ORIGIN}/mcp"
METADATA_URL = f"{ORIGIN}/.well-known/oauth-protected-resource/mcp"
JSON_HEADERS = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": "2025-11-25",
}


@pytest.fixture
def clock() -> FakeClock:
    # The SDK's token handler checks a code's expiry against the wall clock: start there.
    return FakeClock(datetime.now(UTC))


@pytest.fixture
def grant_store() -> InMemoryGrantRepository:
    return InMemoryGrantRepository()


@pytest.fixture
def grants(grant_store: InMemoryGrantRepository, key_service: KeyService, clock: FakeClock) -> GrantService:
    return GrantService(grant_store, key_service, clock)


@pytest.fixture
def endpoint(memory_service: MemoryService, key_service: KeyService, grants: GrantService) -> MCPEndpoint:
    memory_service.create("alice", NewMemory.parse({"content": "The user keeps bees"}))
    keys = key_authenticator(key_service)
    server = create_server(memory_service, keys, version="test")
    return create_endpoint(server, authenticate=keys, oauth=OAuthServer(grants))


def alice_contents(service: MemoryService) -> list[str]:
    return sorted(m.content for m in service.search("alice", RetrievalQuery.parse({"status": "active"})).items)


async def mcp_call(http: httpx2.AsyncClient, token: str | None, tool: str, **arguments: Any) -> httpx2.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    headers = JSON_HEADERS | ({"authorization": f"Bearer {token}"} if token else {})
    return await http.post("/mcp", json=body, headers=headers)


def assert_tool_result(response: httpx2.Response) -> dict[str, Any]:
    """The tool ran and answered a result, not a tool error (both are HTTP 200): its structured content."""
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()["result"]
    assert result["isError"] is False, result
    content: dict[str, Any] = result["structuredContent"]
    return content


def assert_needs_scope(response: httpx2.Response, scope: str) -> None:
    """Refused before any tool ran with 403 insufficient_scope, naming `scope` in the challenge and the problem."""
    assert response.status_code == 403, response.text
    assert response.headers["www-authenticate"] == (
        f'Bearer realm="agent-memory", error="insufficient_scope", scope="{scope}", resource_metadata="{METADATA_URL}"'
    )
    assert response.headers["content-type"] == "application/problem+json"
    assert f"lacks the '{scope}' scope" in response.json()["detail"]


# --- the whole flow, as the SDK's client runs it ---


async def test_the_sdk_client_discovers_registers_consents_and_calls_tools_by_url_alone(
    http: httpx2.AsyncClient, browser: httpx2.AsyncClient, alice_key: str, memory_service: MemoryService
) -> None:
    person = Person(browser, "alice", alice_key)
    storage = MemoryTokenStorage()
    http.auth = oauth_client(MCP_URL, person, storage)

    async with Client(streamable_http_client(MCP_URL, http_client=http)) as client:
        created = await client.call_tool("create_memory", {"content": "The user is left-handed"})
        primed = await client.call_tool("prime_memory_context", {})

    assert not created.is_error, created
    assert primed.structured_content is not None
    assert primed.structured_content["total"] == 2
    assert alice_contents(memory_service) == ["The user is left-handed", "The user keeps bees"]
    assert storage.client_info is not None
    assert storage.client_info.token_endpoint_auth_method == "none"  # public: no secret was issued or stored
    assert storage.client_info.client_secret is None
    assert storage.tokens is not None
    assert storage.tokens.access_token.startswith("amt_")
    assert storage.tokens.refresh_token is not None
    assert storage.tokens.scope == "read write"
    assert storage.tokens.expires_in == ACCESS_TTL.total_seconds()


# --- the flow by hand, one step at a time ---


async def register(http: httpx2.AsyncClient, **overrides: Any) -> httpx2.Response:
    return await http.post("/register", json=client_metadata(**overrides).model_dump(mode="json", exclude_none=True))


async def registered(http: httpx2.AsyncClient, **overrides: Any) -> str:
    response = await register(http, **overrides)
    assert response.status_code == 201, response.text
    client_id: str = response.json()["client_id"]
    return client_id


def authorization_url(client_id: str, challenge: str, **overrides: str | None) -> str:
    params: dict[str, str | None] = {
        **{
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": REDIRECT_URI,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "state": "the-state",
            "scope": "read write",
            "resource": MCP_URL,
        },
        **overrides,
    }
    return str(httpx2.URL("/authorize", params={k: v for k, v in params.items() if v is not None}))


def query_of(location: str) -> dict[str, str]:
    return {name: values[0] for name, values in parse_qs(urlsplit(location).query).items()}


async def code_for(
    browser: httpx2.AsyncClient, client_id: str, key: str, namespace: str = "alice", **overrides: Any
) -> tuple[str, str]:
    """An authorization code the person approved, and its PKCE verifier."""
    verifier, challenge = pkce()
    person = Person(browser, namespace, key, **overrides)
    answer = await person.open(authorization_url(client_id, challenge))
    assert answer.status_code == 302, answer.text
    return query_of(answer.headers["location"])["code"], verifier


async def token_request(http: httpx2.AsyncClient, **form: str) -> httpx2.Response:
    return await http.post("/token", data=form)


async def exchange(http: httpx2.AsyncClient, client_id: str, code: str, verifier: str) -> httpx2.Response:
    return await token_request(
        http,
        grant_type="authorization_code",
        client_id=client_id,
        code=code,
        code_verifier=verifier,
        redirect_uri=REDIRECT_URI,
        resource=MCP_URL,
    )


async def tokens_for(
    http: httpx2.AsyncClient, browser: httpx2.AsyncClient, key: str, client_id: str | None = None, **overrides: Any
) -> dict[str, Any]:
    client_id = client_id or await registered(http)
    code, verifier = await code_for(browser, client_id, key, **overrides)
    response = await exchange(http, client_id, code, verifier)
    assert response.status_code == 200, response.text
    return {"client_id": client_id, **response.json()}


async def refresh(http: httpx2.AsyncClient, client_id: str, refresh_token: str) -> httpx2.Response:
    return await token_request(http, grant_type="refresh_token", client_id=client_id, refresh_token=refresh_token)


async def lists_tools(http: httpx2.AsyncClient, token: str) -> int:
    """The status of a tools/list with `token`; when it is 200, its body lists the tools."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    response = await http.post("/mcp", json=body, headers=JSON_HEADERS | {"authorization": f"Bearer {token}"})
    if response.status_code == 200:
        assert "create_memory" in {tool["name"] for tool in response.json()["result"]["tools"]}, response.text
    return response.status_code


# --- discovery ---


async def test_a_bare_401_points_at_the_resource_metadata(http: httpx2.AsyncClient) -> None:
    bare = await mcp_call(http, None, "prime_memory_context")
    refused = await mcp_call(http, "amt_0123456789abcdef_" + "a" * 43, "prime_memory_context")

    assert bare.status_code == 401
    assert bare.headers["www-authenticate"] == (
        f'Bearer realm="agent-memory", scope="read write", resource_metadata="{METADATA_URL}"'
    )
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"] == (
        f'Bearer realm="agent-memory", error="invalid_token", scope="read write", resource_metadata="{METADATA_URL}"'
    )


@pytest.mark.parametrize("path", ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"])
async def test_the_protected_resource_metadata_names_this_origin_as_its_authorization_server(
    http: httpx2.AsyncClient, path: str
) -> None:
    response = await http.get(path)

    assert response.status_code == 200
    assert response.json()["resource"] == MCP_URL
    assert response.json()["authorization_servers"] == [ORIGIN]
    assert response.json()["scopes_supported"] == ["read", "write"]


async def test_the_authorization_server_metadata_offers_pkce_registration_and_revocation(
    http: httpx2.AsyncClient,
) -> None:
    metadata = (await http.get("/.well-known/oauth-authorization-server")).json()

    assert metadata["issuer"] == ORIGIN
    assert metadata["authorization_endpoint"] == f"{ORIGIN}/authorize"
    assert metadata["token_endpoint"] == f"{ORIGIN}/token"
    assert metadata["registration_endpoint"] == f"{ORIGIN}/register"
    assert metadata["revocation_endpoint"] == f"{ORIGIN}/revoke"
    assert metadata["code_challenge_methods_supported"] == ["S256"]
    assert metadata["grant_types_supported"] == ["authorization_code", "refresh_token"]
    assert metadata["token_endpoint_auth_methods_supported"] == ["none"]


async def test_a_host_reached_over_plain_http_that_is_not_loopback_has_no_authorization_server(
    http: httpx2.AsyncClient,
) -> None:
    metadata = await http.get("/.well-known/oauth-authorization-server", headers={"host": "memory.example.com"})
    bare = await http.post("/mcp", json={}, headers=JSON_HEADERS | {"host": "memory.example.com"})

    assert metadata.status_code == 404
    assert "https" in metadata.json()["detail"]
    assert bare.headers["www-authenticate"] == 'Bearer realm="agent-memory"'


async def test_without_an_authorization_server_the_door_serves_keys_only(
    memory_service: MemoryService, key_service: KeyService
) -> None:
    keys = key_authenticator(key_service)
    server = create_server(memory_service, keys, version="test")
    endpoint = create_endpoint(server, authenticate=keys)
    transport = httpx2.ASGITransport(app=endpoint)
    async with httpx2.AsyncClient(transport=transport, base_url=ORIGIN) as http:
        metadata = await http.get("/.well-known/oauth-protected-resource/mcp")
        bare = await mcp_call(http, None, "prime_memory_context")

    assert metadata.status_code == 404
    assert bare.headers["www-authenticate"] == 'Bearer realm="agent-memory"'


# --- registration ---


@pytest.mark.parametrize(
    ("uris", "error"),
    [
        (["http://memory.example.com/callback"], "invalid_redirect_uri"),
        (["myapp://callback"], "invalid_redirect_uri"),
        (["https://example.com/cb#fragment"], "invalid_redirect_uri"),
        ([f"http://127.0.0.1:{port}/cb" for port in range(11)], "invalid_redirect_uri"),
    ],
)
async def test_registration_refuses_redirect_uris_a_thief_could_own(
    http: httpx2.AsyncClient, grant_store: InMemoryGrantRepository, uris: list[str], error: str
) -> None:
    response = await register(http, redirect_uris=uris)

    assert response.status_code == 400
    assert response.json()["error"] == error
    assert grant_store.clients == {}


async def test_registration_metadata_is_bounded(http: httpx2.AsyncClient, grant_store: InMemoryGrantRepository) -> None:
    response = await register(http, client_name="x" * 9000)

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_client_metadata"
    assert grant_store.clients == {}


@pytest.mark.parametrize("uri", ["https://claude.ai/api/mcp/auth_callback", "http://localhost:33418/callback"])
async def test_registration_takes_https_and_loopback_redirects_and_issues_no_secret(
    http: httpx2.AsyncClient, uri: str
) -> None:
    response = await register(http, redirect_uris=[uri], token_endpoint_auth_method="client_secret_basic")

    assert response.status_code == 201
    assert response.json()["redirect_uris"] == [uri]
    assert response.json()["token_endpoint_auth_method"] == "none"
    assert "client_secret" not in response.json()


async def test_an_unused_registration_expires(
    http: httpx2.AsyncClient, browser: httpx2.AsyncClient, clock: FakeClock
) -> None:
    client_id = await registered(http)
    clock.advance(seconds=UNUSED_CLIENT_TTL.total_seconds())

    response = await browser.get(authorization_url(client_id, pkce()[1]))

    assert response.status_code == 400
    assert "not found" in response.json()["error_description"]


async def test_a_client_that_obtained_tokens_outlives_the_unused_window(
    http: httpx2.AsyncClient, browser: httpx2.AsyncClient, alice_key: str, clock: FakeClock
) -> None:
    tokens = await tokens_for(http, browser, alice_key)
    clock.advance(seconds=UNUSED_CLIENT_TTL.total_seconds() + 60)

    again = await tokens_for(http, browser, alice_key, client_id=tokens["client_id"])

    assert again["access_token"] != tokens["access_token"]


# --- /authorize ---


async def test_authorize_refuses_an_unregistered_redirect_uri_without_redirecting(
    http: httpx2.AsyncClient, browser: httpx2.AsyncClient
) -> None:
    client_id = await registered(http)

    response = await browser.get(authorization_url(client_id, pkce()[1], redirect_uri="http://127.0.0.1:1/evil"))

    assert response.status_code == 400
    assert response.json()["error"] == "invalid_request"
    assert "location" not in response.headers


@pytest.mark.parametrize(
    ("overrides", "error"),
    [
        ({"resource": "https://another.example.com/mcp"}, "invalid_target"),
        ({"code_challenge": None}, "invalid_request"),
        ({"code_challenge_method": "plain"}, "invalid_request"),
        ({"scope": "read admin"}, "invalid_scope"),
        ({"response_type": "token"}, "unsupported_response_type"),
    ],
)
async def test_authorize_sends_an_invalid_request_back_to_the_client_with_its_error_and_state(
    http: httpx2.AsyncClient, browser: httpx2.AsyncClient, overrides: dict[str, str | None], error: str
) -> None:
    client_id = await registered(http)

    response = await browser.get(authorization_url(client_id, pkce()[1], **overrides))

    assert response.status_code == 302
    assert response.headers["location"].startswith(REDIRECT_URI)
    assert query_of(response.headers["location"])["error"] == error
    assert query_of(response.headers["location"])["state"] == "the-state"


# --- the consent page ---


async def consent_page(
    http: httpx2.AsyncClient, browser: httpx2.AsyncClient, **overrides: str | None
) -> httpx2.Response:
    client_id = await registered(http)
    answer = await browser.get(authorization_url(client_id, pkce()[1], **overrides))
    assert answer.status_code == 302, answer.text
    return await browser.get(answer.headers["location"])


async def test_the_consent_page_says_who_asks_for_what_and_cannot_be_framed(
    http: httpx2.AsyncClient, browser: httpx2.AsyncClient
) -> None:
    page = await consent_page(http, browser)

    assert page.status_code == 200
    assert "Test Client" in page.text
    assert "127.0.0.1:53682" in page.text
    assert form_of(page.text)[1] == ["scope_read", "scope_write"]
    assert "<script" not in page.text
    policy = page.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in policy
    assert "default-src 'none'" in policy
    assert page.headers["x-frame-options"] == "DENY"
    assert page.headers["cache-control"] == "no-store"
    cookie = page.headers["set-cookie"].lower()
    assert "httponly" in cookie
    assert "samesite=strict" in cookie


async def submit(
    browser: httpx2.AsyncClient, page: httpx2.Response, *, key: str, namespace: str = "alice", **fields: str
) -> httpx2.Response:
    hidden, offered = form_of(page.text)
    form = hidden | dict.fromkeys(offered, "on") | {"namespace": namespace, "api_key": key, "decision": "approve"}
    return await browser.post("/consent", data=form | fields)


@pytest.mark.parametrize(
    ("namespace", "key_of", "scopes", "refusal"),
    [
        ("alice", None, ("read", "write"), "not valid"),
        ("alice", "bob", ("read", "write"), "not a key of namespace alice"),
        ("alice", "alice", ("read",), "may not grant write"),
    ],
)
async def test_a_key_that_cannot_grant_the_request_is_refused_on_the_page_without_echoing_it(
    http: httpx2.AsyncClient,
    browser: httpx2.AsyncClient,
    key_service: KeyService,
    grant_store: InMemoryGrantRepository,
    namespace: str,
    key_of: str | None,
    scopes: tuple[str, ...],
    refusal: str,
) -> None:
    key = key_service.create(key_of, scopes)[1] if key_of else "am_0123456789ab_" + "b" * 43
    page = await consent_page(http, browser)

    answer = await submit(browser, page, key=key, namespace=namespace)

    assert answer.status_code == 400
    assert refusal in answer.text
    assert key not in answer.text
    assert key[3:15] not in answer.text  # not even its key id
    assert grant_store.grants == {}


async def test_a_read_only_key_grants_read_when_the_person_unticks_write(
    http: httpx2.AsyncClient, browser: httpx2.AsyncClient, key_service: KeyService, memory_service: MemoryService
) -> None:
    reader = key_service.create("alice", ["read"])[1]

    tokens = await tokens_for(http, browser, reader, scopes=["read"])
    listed = await mcp_call(http, tokens["access_token"], "search_memories")
    created = await mcp_call(http, tokens["access_token"], "create_memory", content="The user keeps wasps")

    assert tokens["scope"] == "read"
    assert assert_tool_result(listed)["total"] == 1
    assert created.status_code == 403
    assert created.headers["www-authenticate"] == (
        f'Bearer realm="agent-memory", error="insufficient_scope", scope="write", resource_metadata="{METADATA_URL}"'
    )
    assert alice_contents(memory_service) == ["The user keeps bees"]


async def test_deny_returns_access_denied_and_the_state_to_the_client(
    http: httpx2.AsyncClient, browser: httpx2.AsyncClient, alice_key: str, grant_store: InMemoryGrantRepository
) -> None:
    page = await consent_page(http, browser)

    answer = await submit(browser, page, key="", decision="deny")

    assert answer.status_code == 302
    assert answer.headers["location"].startswith(REDIRECT_URI)
    assert query_of(answer.headers["location"]) == {
        "error": "access_denied",
        "error_description": "the person denied access",
        "state": "the-state",
    }
    assert grant_store.grants == {}


@pytest.mark.parametrize("csrf", [None, "forged"])
async def test_a_consent_not_sent_from_the_page_is_refused(
    http: httpx2.AsyncClient,
    browser: httpx2.AsyncClient,
    alice_key: str,
    grant_store: InMemoryGrantRepository,
    csrf: str | None,
) -> None:
    page = await consent_page(http, browser)
    browser.cookies.clear()
    if csrf is not None:
        browser.cookies.set("agent_memory_consent", csrf, domain="127.0.0.1", path="/consent")

    answer = await submit(browser, page, key=alice_key)

    assert answer.status_code == 403
    assert grant_store.grants == {}


async def test_a_forged_form_cannot_redirect_a_code_to_an_unregistered_uri(
    http: httpx2.AsyncClient, browser: httpx2.AsyncClient, alice_key: str, grant_store: InMemoryGrantRepository
) -> None:
    page = await consent_page(http, browser)

    answer = await submit(browser, page, key=alice_key, redirect_uri="https://evil.example.com/cb")

    assert answer.status_code == 400
    assert "location" not in answer.headers
    assert grant_store.grants == {}


# --- /token: codes ---


async def test_a_code_with_a_wrong_or_missing_verifier_is_refused(
    http: httpx2.AsyncClient, browser: httpx2.AsyncClient, alice_key: str
) -> None:
    client_id = await registered(http)
    code, verifier = await code_for(browser, client_id, alice_key)

    wrong = await exchange(http, client_id, code, pkce()[0])
    missing = await token_request(
        http, grant_type="authorization_code", client_id=client_id, code=code, redirect_uri=REDIRECT_URI
    )
    right = await exchange(http, client_id, code, verifier)

    assert (wrong.status_code, wrong.json()["error"]) == (400, "invalid_grant")
    assert (missing.status_code, missing.json()["error"]) == (400, "invalid_request")
    assert right.status_code == 200


async def test_a_replayed_code_is_refused_and_revokes_the_tokens_it_gave(
    http: httpx2.AsyncClient, browser: httpx2.AsyncClient, alice_key: str
) -> None:
    client_id = await registered(http)
    code, verifier = await code_for(browser, client_id, alice_key)
    first = (await exchange(http, client_id, code, verifier)).json()

    replay = await exchange(http, client_id, code, verifier)

    assert (replay.status_code, replay.json()["error"]) == (400, "invalid_grant")
    assert await lists_tools(http, first["access_token"]) == 401
    assert (await refresh(http, client_id, first["refresh_token"])).json()["error"] == "invalid_grant"


async def test_a_code_is_good_only_for_the_client_and_redirect_uri_it_was_issued_to(
    http: httpx2.AsyncClient, browser: httpx2.AsyncClient, alice_key: str
) -> None:
    client_id = await registered(http)
    other = await registered(http)
    code, verifier = await code_for(browser, client_id, alice_key)

    stolen = await exchange(http, other, code, verifier)
    moved = await token_request(
        http,
        grant_type="authorization_code",
        client_id=client_id,
        code=code,
        code_verifier=verifier,
        redirect_uri="http://127.0.0.1:53682/other",
    )

    assert (stolen.status_code, stolen.json()["error"]) == (400, "invalid_grant")
    assert (moved.status_code, moved.json()["error"]) == (400, "invalid_request")
    assert (await exchange(http, client_id, code, verifier)).status_code == 200


async def test_a_code_expires_after_five_minutes(
    http: httpx2.AsyncClient, browser: httpx2.AsyncClient, alice_key: str, clock: FakeClock
) -> None:
    client_id = await registered(http)
    code, verifier = await code_for(browser, client_id, alice_key)
    clock.advance(seconds=CODE_TTL.total_seconds())

    response = await exchange(http, client_id, code, verifier)

    assert (response.status_code, response.json()["error"]) == (400, "invalid_grant")


async def test_an_unknown_client_cannot_use_the_token_endpoint(http: httpx2.AsyncClient) -> None:
    response = await token_request(
        http, grant_type="authorization_code", client_id="nobody", code="amc_x", code_verifier="v" * 43
    )

    assert response.status_code == 401
    assert response.json()["error"] == "invalid_client"


# --- access tokens at /mcp ---


async def test_an_access_token_gives_exactly_its_namespace(
    http: httpx2.AsyncClient, browser: httpx2.AsyncClient, key_service: KeyService, memory_service: MemoryService
) -> None:
    bob = key_service.create("bob")[1]
    tokens = await tokens_for(http, browser, bob, namespace="bob")

    created = await mcp_call(http, tokens["access_token"], "create_memory", content="Bob keeps ants")
    searched = await mcp_call(http, tokens["access_token"], "search_memories")

    assert assert_tool_result(created)["content"] == "Bob keeps ants"
    assert assert_tool_result(searched)["total"] == 1
    assert alice_contents(memory_service) == ["The user keeps bees"]


async def test_a_token_for_another_audience_is_refused(
    http: httpx2.AsyncClient, browser: httpx2.AsyncClient, alice_key: str
) -> None:
    tokens = await tokens_for(http, browser, alice_key)
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = JSON_HEADERS | {"authorization": f"Bearer {tokens['access_token']}", "host": "localhost"}

    response = await http.post("/mcp", json=body, headers=headers)

    assert response.status_code == 401
    assert 'error="invalid_token"' in response.headers["www-authenticate"]
    assert "issued for http://127.0.0.1/mcp" in response.json()["detail"]


async def test_an_access_token_expires_after_an_hour_and_refreshing_gives_a_new_one(
    http: httpx2.AsyncClient, browser: httpx2.AsyncClient, alice_key: str, clock: FakeClock
) -> None:
    tokens = await tokens_for(http, browser, alice_key)
    clock.advance(seconds=ACCESS_TTL.total_seconds())

    expired = await lists_tools(http, tokens["access_token"])
    refreshed = await refresh(http, tokens["client_id"], tokens["refresh_token"])

    assert expired == 401
    assert refreshed.status_code == 200
    assert refreshed.json()["refresh_token"] != tokens["refresh_token"]
    assert await lists_tools(http, refreshed.json()["access_token"]) == 200


# --- refresh tokens ---


async def test_refresh_rotates_both_tokens_and_may_narrow_the_scope(
    http: httpx2.AsyncClient, browser: httpx2.AsyncClient, alice_key: str
) -> None:
    tokens = await tokens_for(http, browser, alice_key)

    narrowed = await token_request(
        http,
        grant_type="refresh_token",
        client_id=tokens["client_id"],
        refresh_token=tokens["refresh_token"],
        scope="read",
    )

    assert narrowed.status_code == 200
    assert narrowed.json()["scope"] == "read"
    assert await lists_tools(http, tokens["access_token"]) == 401  # the replaced access token
    created = await mcp_call(http, narrowed.json()["access_token"], "create_memory", content="x")
    assert created.status_code == 403


async def test_reusing_a_rotated_refresh_token_revokes_the_whole_grant(
    http: httpx2.AsyncClient, browser: httpx2.AsyncClient, alice_key: str
) -> None:
    tokens = await tokens_for(http, browser, alice_key)
    rotated = (await refresh(http, tokens["client_id"], tokens["refresh_token"])).json()

    reuse = await refresh(http, tokens["client_id"], tokens["refresh_token"])

    assert (reuse.status_code, reuse.json()["error"]) == (400, "invalid_grant")
    assert await lists_tools(http, rotated["access_token"]) == 401
    assert (await refresh(http, tokens["client_id"], rotated["refresh_token"])).json()["error"] == "invalid_grant"


async def test_a_refresh_token_of_another_client_is_refused(
    http: httpx2.AsyncClient, browser: httpx2.AsyncClient, alice_key: str
) -> None:
    tokens = await tokens_for(http, browser, alice_key)
    other = await registered(http)

    response = await refresh(http, other, tokens["refresh_token"])

    assert (response.status_code, response.json()["error"]) == (400, "invalid_grant")
    assert (await refresh(http, tokens["client_id"], tokens["refresh_token"])).status_code == 200


async def test_a_grant_unused_for_its_refresh_window_ends(
    http: httpx2.AsyncClient, browser: httpx2.AsyncClient, alice_key: str, clock: FakeClock
) -> None:
    tokens = await tokens_for(http, browser, alice_key)
    clock.advance(seconds=REFRESH_TTL.total_seconds())

    response = await refresh(http, tokens["client_id"], tokens["refresh_token"])

    assert (response.status_code, response.json()["error"]) == (400, "invalid_grant")


# --- revocation ---


@pytest.mark.parametrize("which", ["access_token", "refresh_token"])
async def test_revoking_either_token_ends_the_grant(
    http: httpx2.AsyncClient, browser: httpx2.AsyncClient, alice_key: str, which: str
) -> None:
    tokens = await tokens_for(http, browser, alice_key)

    response = await http.post("/revoke", data={"token": tokens[which], "client_id": tokens["client_id"]})

    assert response.status_code == 200
    assert await lists_tools(http, tokens["access_token"]) == 401
    assert (await refresh(http, tokens["client_id"], tokens["refresh_token"])).json()["error"] == "invalid_grant"


async def test_revoking_an_unknown_token_or_another_clients_changes_nothing(
    http: httpx2.AsyncClient, browser: httpx2.AsyncClient, alice_key: str
) -> None:
    tokens = await tokens_for(http, browser, alice_key)
    other = await registered(http)

    unknown = await http.post("/revoke", data={"token": "amt_nothing", "client_id": tokens["client_id"]})
    foreign = await http.post("/revoke", data={"token": tokens["access_token"], "client_id": other})

    assert (unknown.status_code, foreign.status_code) == (200, 200)
    assert await lists_tools(http, tokens["access_token"]) == 200


async def test_revoking_the_consenting_key_ends_its_grants(
    http: httpx2.AsyncClient, browser: httpx2.AsyncClient, key_service: KeyService, api_keys: KeyRepository
) -> None:
    key, token = key_service.create("alice")
    tokens = await tokens_for(http, browser, token)
    assert await lists_tools(http, tokens["access_token"]) == 200

    key_service.revoke(key.key_id)

    assert await lists_tools(http, tokens["access_token"]) == 401
    refused = await refresh(http, tokens["client_id"], tokens["refresh_token"])
    assert (refused.status_code, refused.json()["error"]) == (400, "invalid_grant")


async def test_another_process_sees_a_revoked_key_within_the_cache_window(
    http: httpx2.AsyncClient,
    browser: httpx2.AsyncClient,
    key_service: KeyService,
    api_keys: KeyRepository,
    clock: FakeClock,
) -> None:
    key, token = key_service.create("alice")
    tokens = await tokens_for(http, browser, token)
    assert await lists_tools(http, tokens["access_token"]) == 200

    KeyService(api_keys, clock).revoke(key.key_id)  # another process's service
    clock.advance(seconds=TOKEN_CACHE_TTL.total_seconds())

    assert await lists_tools(http, tokens["access_token"]) == 401


async def test_the_sdk_client_refreshes_an_expired_token_by_itself(
    http: httpx2.AsyncClient, browser: httpx2.AsyncClient, alice_key: str, clock: FakeClock
) -> None:
    person = Person(browser, "alice", alice_key)
    storage = MemoryTokenStorage()
    provider = oauth_client(MCP_URL, person, storage)
    http.auth = provider
    async with Client(streamable_http_client(MCP_URL, http_client=http)) as client:
        await client.call_tool("prime_memory_context", {})
    first = storage.tokens
    assert first is not None
    clock.advance(seconds=ACCESS_TTL.total_seconds())
    provider.context.token_expiry_time = time.time() - 1  # the client's own clock says so too

    async with Client(streamable_http_client(MCP_URL, http_client=http)) as client:
        primed = await client.call_tool("prime_memory_context", {})

    assert not primed.is_error
    assert storage.tokens is not None
    assert storage.tokens.refresh_token != first.refresh_token
    assert len([page for page in person.pages if page.request.method == "POST"]) == 1  # no second consent


# --- where the issuer comes from, and what it covers ---


async def test_a_configured_issuer_is_used_whatever_host_a_request_reached(
    memory_service: MemoryService, key_service: KeyService, grants: GrantService
) -> None:
    keys = key_authenticator(key_service)
    server = create_server(memory_service, keys, version="test")
    oauth = OAuthServer(grants, issuer="https://memory.example.com/")
    endpoint = create_endpoint(server, authenticate=keys, oauth=oauth)
    transport = httpx2.ASGITransport(app=endpoint)
    async with httpx2.AsyncClient(transport=transport, base_url="https://abc.lambda-url.us-east-1.on.aws") as http:
        metadata = (await http.get("/.well-known/oauth-authorization-server")).json()
        resource = (await http.get("/.well-known/oauth-protected-resource/mcp")).json()
        bare = await mcp_call(http, None, "prime_memory_context")

    assert metadata["issuer"] == "https://memory.example.com"
    assert metadata["token_endpoint"] == "https://memory.example.com/token"
    assert resource["resource"] == "https://memory.example.com/mcp"
    assert bare.headers["www-authenticate"].endswith(
        'resource_metadata="https://memory.example.com/.well-known/oauth-protected-resource/mcp"'
    )


@pytest.mark.parametrize("host", ['127.0.0.1"/x', "127.0.0.1:80:80", "", "a b"])
async def test_a_host_header_that_is_no_plain_host_makes_no_issuer(http: httpx2.AsyncClient, host: str) -> None:
    response = await http.get("/.well-known/oauth-authorization-server", headers={"host": host})

    assert response.status_code == 404


@pytest.mark.parametrize(
    ("scheme", "host"),
    [
        ("http", "localhost:0"),
        ("http", "127.0.0.1:65536"),
        ("https", "-memory-.example.com"),
        ("https", "[1::2::3]"),
        ("https", "memory.example.10"),
    ],
)
async def test_a_host_header_of_the_right_shape_that_is_no_valid_host_and_port_makes_no_issuer(
    endpoint: MCPEndpoint, scheme: str, host: str
) -> None:
    transport = httpx2.ASGITransport(app=endpoint)
    async with httpx2.AsyncClient(transport=transport, base_url=f"{scheme}://127.0.0.1") as client:
        metadata = await client.get("/.well-known/oauth-authorization-server", headers={"host": host})
        resource = await client.get("/.well-known/oauth-protected-resource/mcp", headers={"host": host})

    assert (metadata.status_code, resource.status_code) == (404, 404)
    assert metadata.headers["content-type"] == "application/problem+json"


async def test_an_overlong_state_is_refused(http: httpx2.AsyncClient, browser: httpx2.AsyncClient) -> None:
    client_id = await registered(http)

    response = await browser.get(authorization_url(client_id, pkce()[1], state="s" * 1025))

    assert response.status_code == 302
    assert query_of(response.headers["location"])["error"] == "invalid_request"


async def test_the_http_api_takes_api_keys_only(
    http: httpx2.AsyncClient,
    browser: httpx2.AsyncClient,
    alice_key: str,
    memory_service: MemoryService,
    key_service: KeyService,
) -> None:
    tokens = await tokens_for(http, browser, alice_key)
    api = create_app(memory_service, key_authenticator(key_service), version="test")
    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=api), base_url=ORIGIN) as rest:
        with_token = await rest.get("/memories", headers={"authorization": f"Bearer {tokens['access_token']}"})
        with_key = await rest.get("/memories", headers={"authorization": f"Bearer {alice_key}"})

    assert with_token.status_code == 401
    assert with_key.status_code == 200


@pytest.mark.parametrize(
    ("env", "enabled", "issuer"),
    [
        ({}, True, None),
        ({"OAUTH_ENABLED": "false", "OAUTH_ISSUER": ""}, False, None),
        ({"OAUTH_ENABLED": "true", "OAUTH_ISSUER": "https://memory.example.com"}, True, "https://memory.example.com"),
    ],
)
def test_the_functions_settings_turn_the_authorization_server_on_and_name_its_issuer(
    env: dict[str, str], enabled: bool, issuer: str | None
) -> None:
    settings = bootstrap.Settings.from_env(env)

    assert (settings.oauth_enabled, settings.oauth_issuer) == (enabled, issuer)


async def test_a_code_whose_consenting_key_was_revoked_before_the_exchange_gets_no_tokens(
    http: httpx2.AsyncClient, browser: httpx2.AsyncClient, key_service: KeyService
) -> None:
    key, token = key_service.create("alice")
    client_id = await registered(http)
    code, verifier = await code_for(browser, client_id, token)
    key_service.revoke(key.key_id)

    response = await exchange(http, client_id, code, verifier)

    assert (response.status_code, response.json()["error"]) == (400, "invalid_grant")
    assert "revoked or expired" in response.json()["error_description"]


async def test_the_scope_a_token_needs_per_tool_is_the_one_each_tool_itself_requires(
    http: httpx2.AsyncClient, browser: httpx2.AsyncClient, key_service: KeyService
) -> None:
    # test_auth.py's READ_CALLS and WRITE_CALLS are what the tools themselves refuse a key lacking `read` or `write`
    # for; the guard derives a token's needed scope from the tools' read-only annotations: the two must agree.
    readers = await tokens_for(http, browser, key_service.create("alice", ["read"])[1], scopes=["read"])
    writers = await tokens_for(http, browser, key_service.create("alice", ["write"])[1], scopes=["write"])

    # Both answers are read whole: a tool error is an HTTP 200 too, and only the body tells it from a result.
    for needed, refused, allowed, calls in [
        ("read", writers, readers, READ_CALLS),
        ("write", readers, writers, WRITE_CALLS),
    ]:
        for tool, arguments in calls:
            assert_needs_scope(await mcp_call(http, refused["access_token"], tool, **arguments), needed)
            assert_tool_result(await mcp_call(http, allowed["access_token"], tool, **arguments))
