"""The authorization server under attack, in process over the in-memory store: dynamic client registration is
bounded per caller and in total (429 with `Retry-After`), a redirect URI's host must be a host (nothing of it can
reach the consent page's Content-Security-Policy), and the consent form's anti-forgery token is bound to the
authorization request it was made for, in a `__Host-` cookie on https."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import httpx2
import pytest

from adapters.memory import InMemoryGrantRepository
from core.grant_terms import UNUSED_CLIENT_TTL
from core.grants import GrantService
from core.keys import KeyService
from core.limits import REGISTRATIONS_PER_CALLER
from core.memories import MemoryService
from core.registration import RegistrationBounds
from core.repository import Client
from handlers.auth import key_authenticator
from handlers.mcp import create_server
from handlers.mcp.endpoint import MCPEndpoint, create_endpoint, create_handler
from handlers.oauth import OAuthServer
from tests.conftest import FakeClock
from tests.handlers.conftest import FUNCTION_URL_HOST, FunctionUrlBridge, LambdaWorker
from tests.handlers.oauth.flow import REDIRECT_URI, client_metadata, form_of, pkce
from tests.handlers.oauth.test_oauth import ORIGIN, authorization_url, query_of

pytestmark = pytest.mark.anyio

# 14:12 on a fixed day: the hour's window started 12 minutes ago and ends in 48.
NOW = datetime(2026, 4, 6, 14, 12, tzinfo=UTC)
WINDOW_LEFT_SECONDS = 48 * 60


@pytest.fixture
def clock() -> FakeClock:
    clock = FakeClock(NOW)
    clock.freeze()
    return clock


@pytest.fixture
def grant_store() -> InMemoryGrantRepository:
    return InMemoryGrantRepository()


@pytest.fixture
def bounds() -> RegistrationBounds:
    return RegistrationBounds()


@pytest.fixture
def door(
    memory_service: MemoryService,
    key_service: KeyService,
    grant_store: InMemoryGrantRepository,
    clock: FakeClock,
    bounds: RegistrationBounds,
) -> MCPEndpoint:
    grants = GrantService(grant_store, key_service, clock, bounds)
    keys = key_authenticator(key_service)
    server = create_server(memory_service, keys, version="test")
    return create_endpoint(server, authenticate=keys, oauth=OAuthServer(grants))


def client_at(door: MCPEndpoint, address: str = "127.0.0.1", origin: str = ORIGIN) -> httpx2.AsyncClient:
    """An HTTP client reaching `door` from `address` (the ASGI `client` the door sees)."""
    return httpx2.AsyncClient(transport=httpx2.ASGITransport(app=door, client=(address, 50123)), base_url=origin)


@pytest.fixture
async def browser(door: MCPEndpoint) -> AsyncIterator[httpx2.AsyncClient]:
    async with client_at(door) as client:
        yield client


async def register(door: MCPEndpoint, address: str = "127.0.0.1", **overrides: Any) -> httpx2.Response:
    async with client_at(door, address) as http:
        body = client_metadata(**overrides).model_dump(mode="json", exclude_none=True)
        return await http.post("/register", json=body)


# --- registration bounds ---


def assert_refused_until_the_window_ends(answer: httpx2.Response, who: str) -> None:
    assert answer.status_code == 429, answer.text
    assert answer.headers["retry-after"] == str(WINDOW_LEFT_SECONDS)
    assert answer.headers["cache-control"] == "no-store"
    assert answer.json()["error"] == "temporarily_unavailable"
    assert who in answer.json()["error_description"]


async def test_one_address_registers_its_bound_of_clients_an_hour_and_then_gets_429_until_the_window_ends(
    door: MCPEndpoint, grant_store: InMemoryGrantRepository, clock: FakeClock
) -> None:
    registered = [await register(door, "203.0.113.7") for _ in range(REGISTRATIONS_PER_CALLER)]

    refused = await register(door, "203.0.113.7")
    elsewhere = await register(door, "198.51.100.1")
    clock.advance(seconds=WINDOW_LEFT_SECONDS)  # the next window
    again = await register(door, "203.0.113.7")

    assert [answer.status_code for answer in registered] == [201] * REGISTRATIONS_PER_CALLER
    assert_refused_until_the_window_ends(refused, f"from this address: at most {REGISTRATIONS_PER_CALLER} per 60")
    assert (elsewhere.status_code, again.status_code) == (201, 201)
    assert len(grant_store.clients) == REGISTRATIONS_PER_CALLER + 2


@pytest.mark.parametrize("bounds", [RegistrationBounds(per_caller=2, total=3)])
async def test_every_address_together_registers_at_most_the_total_bound_per_window(
    door: MCPEndpoint, grant_store: InMemoryGrantRepository
) -> None:
    answers = [await register(door, address) for address in ("192.0.2.1", "192.0.2.1", "192.0.2.2")]

    refused = await register(door, "192.0.2.3")

    assert [answer.status_code for answer in answers] == [201, 201, 201]
    assert_refused_until_the_window_ends(refused, "every address together): at most 3 per 60")
    assert len(grant_store.clients) == 3


@pytest.mark.parametrize("bounds", [RegistrationBounds(per_caller=2)])
async def test_an_ipv6_caller_is_counted_by_its_64_whichever_of_its_addresses_it_uses(door: MCPEndpoint) -> None:
    answers = [await register(door, address) for address in ("2001:db8::1", "2001:db8::2:3", "2001:db8::ffff")]
    other_subscriber = await register(door, "2001:db8:0:1::1")

    assert [answer.status_code for answer in answers] == [201, 201, 429]
    assert other_subscriber.status_code == 201


class FromAddress(FunctionUrlBridge):
    """Function-URL events as if sent from `address` (`requestContext.http.sourceIp`)."""

    address = "203.0.113.24"

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        self._template["requestContext"]["http"]["sourceIp"] = self.address
        return await super().handle_async_request(request)


async def test_on_a_function_url_each_caller_is_counted_by_the_events_source_address(
    memory_service: MemoryService,
    key_service: KeyService,
    grant_store: InMemoryGrantRepository,
    clock: FakeClock,
    lambda_worker: LambdaWorker,
) -> None:
    grants = GrantService(grant_store, key_service, clock, RegistrationBounds(per_caller=1))
    keys = key_authenticator(key_service)
    server = create_server(memory_service, keys, version="test")
    bridge = FromAddress(create_handler(server, authenticate=keys, oauth=OAuthServer(grants)), lambda_worker)
    body = client_metadata().model_dump(mode="json", exclude_none=True)
    answers: list[int] = []

    async with httpx2.AsyncClient(transport=bridge, base_url=f"https://{FUNCTION_URL_HOST}") as http:
        for address in ("198.51.100.7", "198.51.100.7", "198.51.100.8"):
            bridge.address = address
            answers.append((await http.post("/register", json=body)).status_code)

    assert answers == [201, 429, 201]


async def test_registrations_are_counted_under_a_hash_of_the_address_never_the_address(
    door: MCPEndpoint, grant_store: InMemoryGrantRepository
) -> None:
    await register(door, "203.0.113.7")

    assert grant_store.registrations
    assert "203.0.113.7" not in json.dumps(list(grant_store.registrations))


async def test_an_invalid_registration_is_not_counted(door: MCPEndpoint, grant_store: InMemoryGrantRepository) -> None:
    await register(door, "203.0.113.7", redirect_uris=["https://evil.example;sandbox/cb"])

    assert grant_store.registrations == {}


# --- redirect URIs: hosts that are hosts ---


@pytest.mark.parametrize(
    "uri",
    [
        "https://evil.example;sandbox/cb",
        "https://evil.example,sandbox/cb",
        "https://evil.example'unsafe-inline'/cb",
        'https://evil.example"x/cb',
        "https://*.evil.example/cb",
        "https://evil.example%3Bsandbox/cb",
        "https://user:password@evil.example/cb",
        "https://evil.example:0/cb",
        "https://evil_example.com/cb",
        "https://-evil.example/cb",
        "https://evil..example/cb",
    ],
)
async def test_registration_refuses_a_redirect_uri_whose_host_is_no_host(
    door: MCPEndpoint, grant_store: InMemoryGrantRepository, uri: str
) -> None:
    answer = await register(door, redirect_uris=[uri])

    assert answer.status_code == 400, answer.text
    assert answer.json()["error"] == "invalid_redirect_uri"
    assert grant_store.clients == {}


@pytest.mark.parametrize(
    "uri",
    [
        "https://xn--bcher-kva.example/cb",
        "https://bücher.example/cb",
        "http://[::1]:33418/cb",
        "https://192.0.2.1:8443/",
    ],
)
async def test_registration_takes_idn_hosts_ip_addresses_and_ports(door: MCPEndpoint, uri: str) -> None:
    answer = await register(door, redirect_uris=[uri])

    assert answer.status_code == 201, answer.text


async def test_a_client_stored_with_a_hostile_redirect_uri_cannot_reach_the_consent_pages_policy(
    browser: httpx2.AsyncClient, grant_store: InMemoryGrantRepository, clock: FakeClock
) -> None:
    hostile = "https://evil.example;sandbox/cb"
    metadata = client_metadata(redirect_uris=["https://good.example/cb"]).model_dump(mode="json", exclude_none=True)
    metadata["redirect_uris"] = [hostile]  # as a registration before these rules could have stored it
    expires = int(clock.now.timestamp() + UNUSED_CLIENT_TTL.total_seconds())
    grant_store.clients["old-client"] = Client("old-client", json.dumps(metadata), expires)
    query = {
        "client_id": "old-client",
        "redirect_uri": hostile,
        "code_challenge": pkce()[1],
        "scope": "read write",
        "state": "s",
    }

    page = await browser.get("/consent", params=query)

    assert page.status_code == 400
    assert "not one this server accepts" in page.text
    policy = page.headers["content-security-policy"]
    assert "form-action 'self';" in policy
    assert "evil" not in policy
    assert "sandbox" not in policy


# --- the consent form's anti-forgery token ---


async def consent_page(browser: httpx2.AsyncClient, door: MCPEndpoint, **overrides: str) -> httpx2.Response:
    client_id = (await register(door)).json()["client_id"]
    answer = await browser.get(authorization_url(client_id, pkce()[1], **overrides))
    assert answer.status_code == 302, answer.text
    return await browser.get(answer.headers["location"])


async def post(browser: httpx2.AsyncClient, fields: dict[str, str], key: str) -> httpx2.Response:
    answer = {"scope_read": "on", "scope_write": "on", "namespace": "alice", "api_key": key, "decision": "approve"}
    return await browser.post("/consent", data=fields | answer)


@pytest.fixture
def alice_key(key_service: KeyService) -> str:
    return key_service.create("alice")[1]


async def test_a_cookie_and_field_an_attacker_chose_are_refused(
    browser: httpx2.AsyncClient, door: MCPEndpoint, alice_key: str, grant_store: InMemoryGrantRepository
) -> None:
    page = await consent_page(browser, door)
    browser.cookies.clear()
    browser.cookies.set("agent_memory_consent", "chosen-by-the-attacker", domain="127.0.0.1", path="/consent")

    answer = await post(browser, form_of(page.text)[0] | {"csrf": "chosen-by-the-attacker"}, alice_key)

    assert answer.status_code == 403, answer.text
    assert grant_store.grants == {}


async def test_a_token_made_for_another_authorization_request_is_refused(
    browser: httpx2.AsyncClient, door: MCPEndpoint, alice_key: str, grant_store: InMemoryGrantRepository
) -> None:
    victims = await consent_page(browser, door, state="the-victims")
    own = await consent_page(browser, door, state="the-attackers")  # the browser now holds this page's cookie

    answer = await post(browser, form_of(victims.text)[0] | {"csrf": form_of(own.text)[0]["csrf"]}, alice_key)

    assert answer.status_code == 403, answer.text
    assert grant_store.grants == {}


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("state", "another-state"),
        ("scope", "read"),
        ("code_challenge", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"),
        ("state", ""),
    ],
)
async def test_a_form_whose_bound_field_was_changed_is_refused(
    browser: httpx2.AsyncClient,
    door: MCPEndpoint,
    alice_key: str,
    grant_store: InMemoryGrantRepository,
    field: str,
    value: str,
) -> None:
    page = await consent_page(browser, door)

    answer = await post(browser, form_of(page.text)[0] | {field: value}, alice_key)

    assert answer.status_code == 403, answer.text
    assert grant_store.grants == {}


async def test_over_http_on_loopback_the_form_cookie_has_its_plain_name_and_the_form_works(
    browser: httpx2.AsyncClient, door: MCPEndpoint, alice_key: str
) -> None:
    page = await consent_page(browser, door)

    answer = await post(browser, form_of(page.text)[0], alice_key)

    cookie = page.headers["set-cookie"]
    assert cookie.startswith("agent_memory_consent=")
    assert "Path=/consent" in cookie
    assert "secure" not in cookie.lower()
    assert answer.status_code == 302, answer.text
    assert "code" in query_of(answer.headers["location"])


async def test_over_https_the_form_cookie_is_host_prefixed_secure_for_the_whole_origin_and_alone_counts(
    door: MCPEndpoint, alice_key: str
) -> None:
    async with client_at(door, origin="https://memory.example.com") as browser:
        page = await consent_page(browser, door, resource="https://memory.example.com/mcp")
        cookie = page.headers["set-cookie"]
        nonce = cookie.split(";")[0].split("=", 1)[1]
        browser.cookies.clear()
        browser.cookies.set("agent_memory_consent", nonce, domain="memory.example.com", path="/consent")
        plain_named = await post(browser, form_of(page.text)[0], alice_key)
        browser.cookies.clear()
        browser.cookies.set("__Host-agent_memory_consent", nonce, domain="memory.example.com", path="/")
        host_prefixed = await post(browser, form_of(page.text)[0], alice_key)

    assert cookie.startswith("__Host-agent_memory_consent=")
    assert "; Path=/;" in cookie or cookie.endswith("; Path=/")
    assert "; Secure" in cookie
    assert "Domain" not in cookie
    assert plain_named.status_code == 403
    assert host_prefixed.status_code == 302, host_prefixed.text
    assert host_prefixed.headers["location"].startswith(REDIRECT_URI)
