"""The authorization server while storage fails: every OAuth endpoint answers 503 with `Retry-After` in its own error
format (RFC 6749's JSON error, the consent page's HTML), at the first failing storage call of the request and
without another one; a stalled store costs /authorize one storage call; every request keeps inside one storage
budget however many storage calls it makes; and a method a route does not take is a 405 naming the ones it does."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from datetime import UTC, datetime
from typing import Any, TypeVar, cast

import httpx2
import pytest
from botocore.awsrequest import AWSResponse

import core.budget
from adapters.dynamodb import DynamoDBGrantRepository, DynamoDBKeyRepository, make_client
from adapters.memory import InMemoryGrantRepository, InMemoryKeyRepository, InMemoryMemoryRepository
from core.budget import REQUEST_STORAGE_SECONDS
from core.clock import Clock, utc_now
from core.errors import StorageUnavailableError
from core.grants import GrantService
from core.keys import KeyService
from core.memories import MemoryService
from handlers.auth import key_authenticator
from handlers.mcp import create_server
from handlers.mcp.endpoint import MCPEndpoint, create_endpoint
from handlers.oauth import OAuthServer
from tests.conftest import REGION, Engine, FakeClock
from tests.faults import error_answer
from tests.handlers.oauth.flow import pkce
from tests.handlers.oauth.test_oauth import (
    ORIGIN,
    authorization_url,
    code_for,
    consent_page,
    exchange,
    refresh,
    register,
    registered,
    submit,
    tokens_for,
)
from tests.integration.test_serve_stall import StalledStorage

pytestmark = pytest.mark.anyio

T = TypeVar("T")


class Outage:
    """Both stores (grants and keys) behind one switch: every call is counted, and once `fail_after` is set, every
    call past that many more raises StorageUnavailableError, as the adapter does when DynamoDB is throttled or
    unreachable."""

    def __init__(self) -> None:
        self.calls = 0
        self.fails_from: int | None = None

    def store(self, inner: T) -> T:
        return cast("T", _Failing(inner, self))

    def fail_after(self, healthy_calls: int) -> None:
        self.fails_from = self.calls + healthy_calls + 1

    @property
    def tripped(self) -> bool:
        return self.fails_from is not None and self.calls >= self.fails_from

    def count(self) -> None:
        self.calls += 1
        if self.tripped:
            raise StorageUnavailableError("storage is briefly unavailable (injected)")


class _Failing:
    def __init__(self, inner: Any, outage: Outage) -> None:
        self._inner = inner
        self._outage = outage

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._inner, name)
        if name == "note_use":
            # A key's last use is written best effort and never decides an answer (core.keys): not one of the
            # endpoint's own storage calls that an outage must stop at once.
            return method

        def call(*args: Any, **kwargs: Any) -> Any:
            self._outage.count()
            return method(*args, **kwargs)

        return call


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(datetime.now(UTC))  # the SDK checks a code's expiry against the wall clock


@pytest.fixture
def outage() -> Outage:
    return Outage()


@pytest.fixture
def door(api_keys: InMemoryKeyRepository, clock: FakeClock, outage: Outage) -> MCPEndpoint:
    keys = KeyService(outage.store(api_keys), clock)
    return oauth_app((GrantService(outage.store(InMemoryGrantRepository()), keys, clock), keys))


@pytest.fixture
async def http(door: MCPEndpoint) -> AsyncIterator[httpx2.AsyncClient]:
    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=door), base_url=ORIGIN) as client:
        yield client


@pytest.fixture
async def browser(door: MCPEndpoint) -> AsyncIterator[httpx2.AsyncClient]:
    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=door), base_url=ORIGIN) as client:
        yield client


@pytest.fixture
def alice_key(api_keys: InMemoryKeyRepository, clock: FakeClock) -> str:
    return KeyService(api_keys, clock).create("alice")[1]


Request = Callable[[], Awaitable[httpx2.Response]]


async def prepared(endpoint: str, http: httpx2.AsyncClient, browser: httpx2.AsyncClient, key: str) -> Request:
    """The request to `endpoint`, with everything it needs (a client, a code, tokens, a consent form) made while
    storage still works."""
    if endpoint == "/register":
        return lambda: register(http)
    if endpoint == "/authorize":
        client_id = await registered(http)
        return lambda: browser.get(authorization_url(client_id, pkce()[1]))
    if endpoint == "/token (code)":
        client_id = await registered(http)
        code, verifier = await code_for(browser, client_id, key)
        return lambda: exchange(http, client_id, code, verifier)
    if endpoint == "/token (refresh)":
        tokens = await tokens_for(http, browser, key)
        return lambda: refresh(http, tokens["client_id"], tokens["refresh_token"])
    if endpoint == "/revoke":
        tokens = await tokens_for(http, browser, key)
        return lambda: http.post("/revoke", data={"client_id": tokens["client_id"], "token": tokens["access_token"]})
    if endpoint == "GET /consent":
        client_id = await registered(http)
        answer = await browser.get(authorization_url(client_id, pkce()[1]))
        return lambda: browser.get(answer.headers["location"])
    page = await consent_page(http, browser)  # POST /consent
    return lambda: submit(browser, page, key=key)


JSON_ENDPOINTS = ["/register", "/authorize", "/token (code)", "/token (refresh)", "/revoke"]


@pytest.mark.parametrize("healthy_calls", [0, 1, 2, 3])
@pytest.mark.parametrize("endpoint", JSON_ENDPOINTS)
async def test_storage_failing_at_any_call_of_a_json_endpoint_answers_503_temporarily_unavailable_at_once(
    http: httpx2.AsyncClient,
    browser: httpx2.AsyncClient,
    alice_key: str,
    outage: Outage,
    endpoint: str,
    healthy_calls: int,
) -> None:
    request = await prepared(endpoint, http, browser, alice_key)
    outage.fail_after(healthy_calls)

    answer = await request()

    assert answer.status_code != 500, answer.text
    if healthy_calls == 0:
        assert outage.tripped  # every endpoint's first storage call failed
    if outage.tripped:
        assert answer.status_code == 503, answer.text
        assert answer.headers["retry-after"] == "1"
        assert answer.headers["content-type"] == "application/json"
        assert answer.headers["cache-control"] == "no-store"
        assert answer.json() == {
            "error": "temporarily_unavailable",
            "error_description": "storage is briefly unavailable (injected)",
        }
        assert outage.calls == outage.fails_from  # nothing after the first failure: it answered at once


@pytest.mark.parametrize("healthy_calls", [0, 1, 2, 3])
@pytest.mark.parametrize("endpoint", ["GET /consent", "POST /consent"])
async def test_storage_failing_at_any_call_of_the_consent_page_answers_its_own_503_page(
    http: httpx2.AsyncClient,
    browser: httpx2.AsyncClient,
    alice_key: str,
    outage: Outage,
    endpoint: str,
    healthy_calls: int,
) -> None:
    request = await prepared(endpoint, http, browser, alice_key)
    outage.fail_after(healthy_calls)

    answer = await request()

    assert answer.status_code != 500, answer.text
    if healthy_calls == 0:
        assert outage.tripped
    if outage.tripped:
        assert answer.status_code == 503, answer.text
        assert answer.headers["retry-after"] == "1"
        assert answer.headers["content-type"].startswith("text/html")
        assert "try again shortly" in answer.text.lower()
        assert "location" not in answer.headers
        assert outage.calls == outage.fails_from


@pytest.mark.parametrize(
    ("path", "method", "allowed"),
    [
        ("/register", "GET", "OPTIONS, POST"),
        ("/register", "PUT", "OPTIONS, POST"),
        ("/register", "DELETE", "OPTIONS, POST"),
        ("/token", "GET", "OPTIONS, POST"),
        ("/token", "PUT", "OPTIONS, POST"),
        ("/token", "DELETE", "OPTIONS, POST"),
        ("/revoke", "GET", "OPTIONS, POST"),
        ("/revoke", "PUT", "OPTIONS, POST"),
        ("/revoke", "DELETE", "OPTIONS, POST"),
        ("/authorize", "DELETE", "GET, HEAD, POST"),
        ("/consent", "PUT", "GET, HEAD, POST"),
        ("/.well-known/oauth-authorization-server", "POST", "GET, HEAD, OPTIONS"),
    ],
)
async def test_a_method_a_route_does_not_take_is_a_405_naming_the_ones_it_does_in_json(
    http: httpx2.AsyncClient, outage: Outage, path: str, method: str, allowed: str
) -> None:
    answer = await http.request(method, path)

    assert answer.status_code == 405
    assert answer.headers["allow"] == allowed
    assert answer.headers["content-type"] == "application/json"
    assert answer.json() == {
        "error": "invalid_request",
        "error_description": f"{path} does not answer {method}: send one of {allowed}",
    }
    assert outage.calls == 0


# --- over DynamoDB ---


def services_over(client: Any, table: str, clock: Clock = utc_now) -> tuple[GrantService, KeyService]:
    keys = KeyService(DynamoDBKeyRepository(client, table), clock)
    return GrantService(DynamoDBGrantRepository(client, table), keys, clock), keys


def oauth_app(services: tuple[GrantService, KeyService]) -> MCPEndpoint:
    grants, keys = services
    authenticate = key_authenticator(keys)
    server = create_server(unused_memories(), authenticate, version="test")
    return create_endpoint(server, authenticate=authenticate, oauth=OAuthServer(grants))


def unused_memories() -> MemoryService:
    return MemoryService(InMemoryMemoryRepository())  # /mcp is not under test here


class CountedCalls:
    """Counts the DynamoDB calls a client makes (each however many attempts botocore gives it)."""

    def __init__(self, client: Any) -> None:
        self.operations: list[str] = []
        client.meta.events.register("before-call.dynamodb", self._count)

    def _count(self, model: Any, **_: Any) -> None:
        self.operations.append(model.name)


@pytest.fixture
def stalled() -> Iterator[StalledStorage]:
    storage = StalledStorage()
    yield storage
    storage.close()


async def test_while_storage_stalls_authorize_answers_503_after_one_storage_call(stalled: StalledStorage) -> None:
    client = make_client(stalled.url, REGION, connect_timeout=1, read_timeout=0.5)
    calls = CountedCalls(client)
    app = oauth_app(services_over(client, "agent-memory-stalled"))
    url = authorization_url("0b0f2bd4-3a5e-4f54-9a49-8e8c1e0e7f11", pkce()[1])

    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url=ORIGIN) as browser:
        answer = await browser.get(url)

    assert answer.status_code == 503, answer.text
    assert answer.headers["retry-after"] == "1"
    assert answer.json()["error"] == "temporarily_unavailable"
    assert calls.operations == ["GetItem"]  # the client, read once: no second read after the first failed
    assert stalled.accepted == 3  # that one call's 3 attempts


def throttle_everything(client: Any) -> None:
    def throttled(request: Any, **_: Any) -> AWSResponse:
        return error_answer(request, "ThrottlingException")

    client.meta.events.register_first("before-send.dynamodb", throttled)


async def test_on_dynamodb_local_throttled_registration_answers_503_and_stores_nothing(
    ddb_local_engine: Engine,
) -> None:
    table = ddb_local_engine.new_table()
    app = oauth_app(services_over(ddb_local_engine.client, table))
    throttle_everything(ddb_local_engine.client)

    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url=ORIGIN) as http:
        answer = await register(http)

    assert answer.status_code == 503, answer.text
    assert answer.headers["retry-after"] == "1"
    assert answer.json()["error"] == "temporarily_unavailable"
    stored = make_client(ddb_local_engine.client.meta.endpoint_url, REGION).scan(TableName=table)["Items"]
    assert [item for item in stored if item["pk"]["S"].startswith("OAUTH#CLIENT#")] == []


class SlowStorage:
    """Every attempt at a DynamoDB call takes the longest an attempt can (make_client's connect and read timeouts)
    on a fake clock the storage budget reads, then succeeds."""

    ATTEMPT_SECONDS = 2 + 5

    def __init__(self, client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        self.now = 0.0
        self.attempts = 0
        self.on = False
        monkeypatch.setattr(core.budget, "clock", lambda: self.now)
        client.meta.events.register_last("before-send.dynamodb", self._attempt)

    def _attempt(self, **_: Any) -> None:
        if self.on:
            self.attempts += 1
            self.now += self.ATTEMPT_SECONDS


async def test_a_token_request_keeps_inside_one_storage_budget_however_many_calls_it_makes(
    moto_engine: Engine, monkeypatch: pytest.MonkeyPatch, clock: FakeClock
) -> None:
    table = moto_engine.new_table()
    slow = SlowStorage(moto_engine.client, monkeypatch)
    setup = services_over(moto_engine.client, table, clock)
    door = services_over(moto_engine.client, table, clock)  # its own key cache: /token reads the key again
    async with (
        httpx2.AsyncClient(transport=httpx2.ASGITransport(app=oauth_app(setup)), base_url=ORIGIN) as http,
        httpx2.AsyncClient(transport=httpx2.ASGITransport(app=oauth_app(setup)), base_url=ORIGIN) as browser,
    ):
        key = setup[1].create("alice")[1]
        client_id = await registered(http)
        code, verifier = await code_for(browser, client_id, key)
    slow.on = True

    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=oauth_app(door)), base_url=ORIGIN) as http:
        answer = await exchange(http, client_id, code, verifier)

    # A code exchange reads the client, the grant and the consenting key, then writes the tokens: four calls of
    # up to one attempt's worst case each would outlast the budget, so the last one is never sent.
    assert answer.status_code == 503, answer.text
    assert answer.headers["retry-after"] == "1"
    assert answer.json()["error"] == "temporarily_unavailable"
    assert slow.now <= REQUEST_STORAGE_SECONDS
    assert slow.attempts == REQUEST_STORAGE_SECONDS // SlowStorage.ATTEMPT_SECONDS
