"""The HTTP door with real API keys over the in-memory store: 401 for every way a key can be missing or bad, 403 for
a missing scope, the namespace taken from the key alone, and the security scheme in the OpenAPI document."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.routing import iter_route_contexts
from fastapi.testclient import TestClient
from starlette.routing import BaseRoute

from adapters.memory import InMemoryKeyRepository, InMemoryMemoryRepository
from core.contract import RetrievalQuery
from core.errors import DomainError
from core.keys import CACHE_TTL, KeyService
from core.memories import MemoryService
from core.model import NewMemory
from core.recall.service import RecallService
from core.repository import KEY_NOT_LIVE, READ_KEY_NOT_LIVE, KeyRepository
from handlers.auth import bearer_token, key_authenticator
from handlers.http.app import create_app
from handlers.problem import DOMAIN_STATUS
from tests.conftest import FakeClock, UnavailableKeys, domain_error_classes

PROBLEM_JSON = "application/problem+json"
CHALLENGE = 'Bearer realm="agent-memory"'
INVALID_TOKEN = 'Bearer realm="agent-memory", error="invalid_token"'
ROUTES: list[tuple[str, str, dict[str, Any] | None]] = [
    ("POST", "/memories", {"content": "The user keeps bees"}),
    ("GET", "/memories/1", None),
    ("PATCH", "/memories/1", {"content": "The user keeps wasps"}),
    ("DELETE", "/memories/1", None),
    ("GET", "/memories", None),
    ("POST", "/memories/1/restore", None),
    ("GET", "/memories/1/history", None),
    ("GET", "/changes", None),
    ("GET", "/recall?query=bees", None),
    ("GET", "/memories/1/related", None),
    ("POST", "/memories/1/supersede", {"ids": [2]}),
    ("GET", "/keys", None),
]
READS = [route for route in ROUTES if route[0] == "GET"]
WRITES = [route for route in ROUTES if route[0] != "GET"]
ROUTE_IDS = [f"{method} {path}" for method, path, _ in ROUTES]
# Any valid key may call these, whatever its scopes (tests/handlers/http/test_key_route.py).
# Revoking a key too: a key may always revoke itself, another key only with `keys` (test_keys_route.py).
ANY_SCOPE = [("GET", "/key", None), ("DELETE", "/keys/{key_id}", None)]


@pytest.fixture
def door(memory_service: MemoryService, recall_service: RecallService, key_service: KeyService) -> Iterator[TestClient]:
    """The app over the in-memory store authenticating with key_service, holding memory 1 of namespace alice."""
    memory_service.create("alice", NewMemory.parse({"content": "The user keeps bees"}))
    app = create_app(memory_service, key_authenticator(key_service), version="test", recall=recall_service)
    with TestClient(app) as client:
        yield client


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def send(door: TestClient, route: tuple[str, str, dict[str, Any] | None], headers: dict[str, str]) -> Any:
    method, path, body = route
    return door.request(method, path, json=body, headers=headers)


def assert_problem(response: Any, status: int, slug: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM_JSON
    problem: dict[str, Any] = response.json()
    assert problem["status"] == status
    assert problem["type"] == f"urn:agent-memory:problem:{slug}"
    assert problem["title"]
    assert problem["detail"]
    return problem


def stored_state(service: MemoryService) -> list[tuple[int, str, str, int]]:
    page = service.search("alice", RetrievalQuery.parse({"status": "active"}))
    return [(m.id, m.content, m.status, m.version) for m in page.items]


# --- 401 ---


NO_KEY_HEADERS: list[dict[str, str]] = [
    {},
    {"authorization": ""},
    {"authorization": "Bearer"},
    {"authorization": "Bearer    "},
    {"authorization": "Basic YWxpY2U6c2VjcmV0"},
    {"authorization": "Token am_0123456789ab_" + "a" * 43},
    {"x-api-key": "am_0123456789ab_" + "a" * 43},
]
BAD_KEY_HEADERS: list[dict[str, str]] = [
    bearer("am_0123456789ab_" + "a" * 43),
    bearer("not-a-key"),
    bearer("am_0123456789ab_" + "a" * 43 + " trailing"),
    bearer("am_" + "a" * 5000),
]


@pytest.mark.parametrize("route", ROUTES, ids=ROUTE_IDS)
@pytest.mark.parametrize("headers", NO_KEY_HEADERS, ids=lambda h: repr(h)[:40])
def test_a_request_without_a_bearer_key_is_401_with_a_bearer_challenge(
    door: TestClient, memory_service: MemoryService, route: tuple[str, str, Any], headers: dict[str, str]
) -> None:
    before = stored_state(memory_service)

    response = send(door, route, headers)

    assert_problem(response, 401, "unauthenticated")
    assert response.headers["www-authenticate"] == CHALLENGE
    assert stored_state(memory_service) == before


@pytest.mark.parametrize("route", ROUTES, ids=ROUTE_IDS)
@pytest.mark.parametrize("headers", BAD_KEY_HEADERS, ids=lambda h: h["authorization"][:30])
def test_a_request_with_an_unknown_or_malformed_key_is_401_naming_an_invalid_token(
    door: TestClient, memory_service: MemoryService, route: tuple[str, str, Any], headers: dict[str, str]
) -> None:
    before = stored_state(memory_service)

    response = send(door, route, headers)

    assert_problem(response, 401, "unauthenticated")
    assert response.headers["www-authenticate"] == INVALID_TOKEN
    assert stored_state(memory_service) == before


def test_a_known_key_id_with_a_wrong_secret_is_401(door: TestClient, key_service: KeyService) -> None:
    key, _ = key_service.create("alice")

    response = door.get("/memories", headers=bearer(f"am_{key.key_id}_{'a' * 43}"))

    assert_problem(response, 401, "unauthenticated")


def test_the_bearer_scheme_name_is_case_insensitive(door: TestClient, key_service: KeyService) -> None:
    _, token = key_service.create("alice")

    assert door.get("/memories", headers={"authorization": f"bEaReR {token}"}).status_code == 200


def test_a_revoked_key_is_401_once_the_cache_window_has_passed(
    door: TestClient, key_service: KeyService, api_keys: KeyRepository, clock: FakeClock
) -> None:
    key, token = key_service.create("alice")
    assert door.get("/memories", headers=bearer(token)).status_code == 200
    # Revoked by another process (the CLI): this server learns of it when its cached verification runs out.
    KeyService(api_keys, clock).revoke(key.key_id)
    clock.advance(seconds=CACHE_TTL.total_seconds())

    response = door.get("/memories", headers=bearer(token))

    problem = assert_problem(response, 401, "unauthenticated")
    assert problem["detail"] == "the API key has been revoked"
    assert response.headers["www-authenticate"] == INVALID_TOKEN


def test_a_write_with_a_key_revoked_while_its_verification_is_cached_is_401_and_changes_nothing(
    key_service: KeyService, api_keys: InMemoryKeyRepository, clock: FakeClock
) -> None:
    # As deployed: every change is fenced on its key being live in the store, whatever this process has cached.
    fenced = MemoryService(InMemoryMemoryRepository(api_keys), clock, fenced=True)
    app = create_app(fenced, key_authenticator(key_service), version="test")
    key, token = key_service.create("alice")
    with TestClient(app) as door:
        for content in ("The user keeps bees", "The user kept wasps"):
            assert door.post("/memories", json={"content": content}, headers=bearer(token)).status_code == 201
        assert door.delete("/memories/2", headers=bearer(token)).status_code == 204
        before = stored_state(fenced)
        KeyService(api_keys, clock).revoke(key.key_id)  # by another process: this one still trusts its cache

        writes = [
            door.post("/memories", json={"content": "The user keeps hornets"}, headers=bearer(token)),
            door.patch("/memories/1", json={"content": "The user keeps ants"}, headers=bearer(token)),
            door.delete("/memories/1", headers=bearer(token)),
            door.post("/memories/2/restore", headers=bearer(token)),
        ]
        read = door.get("/memories", headers=bearer(token))

    for response in writes:
        problem = assert_problem(response, 401, "unauthenticated")
        assert problem["detail"] == KEY_NOT_LIVE
        assert response.headers["www-authenticate"] == INVALID_TOKEN
    assert assert_problem(read, 401, "unauthenticated")["detail"] == READ_KEY_NOT_LIVE  # reads are fenced too
    assert stored_state(fenced) == before
    assert fenced.search("alice", RetrievalQuery.parse({"status": "deleted"})).total == 1


def test_an_expired_key_is_401_even_while_its_verification_is_cached(
    door: TestClient, key_service: KeyService, clock: FakeClock
) -> None:
    _, token = key_service.create("alice", expires_in=timedelta(seconds=5))
    assert door.get("/memories", headers=bearer(token)).status_code == 200
    clock.advance(seconds=5)

    response = door.get("/memories", headers=bearer(token))

    problem = assert_problem(response, 401, "unauthenticated")
    assert problem["detail"].startswith("the API key expired at ")


def test_authentication_comes_before_body_validation(door: TestClient) -> None:
    response = door.post("/memories", content=b"{not json", headers={"content-type": "application/json"})

    assert_problem(response, 401, "unauthenticated")


def test_exactly_healthz_the_openapi_document_and_the_console_answer_without_a_key(door: TestClient) -> None:
    app = door.app
    assert isinstance(app, FastAPI)
    open_routes = set()
    # Every route as the app serves it, those its routers include too (FastAPI keeps them out of `app.routes`).
    for route in (context.original_route for context in iter_route_contexts(app.routes)):
        assert isinstance(route, BaseRoute)
        for method in sorted(getattr(route, "methods", None) or ()):
            path = getattr(route, "path", "").replace("{memory_id}", "1")
            if door.request(method, path, json={"content": "x"}).status_code != 401:
                open_routes.add(f"{method} {getattr(route, 'path', '')}")

    # The console is static files holding no data: the person's key is what its calls to the API carry.
    console = {f"{method} /console{path}" for method in ("GET", "HEAD") for path in ("", "/", "/{name}")}
    assert open_routes == {"GET /healthz", "GET /openapi.json", "HEAD /openapi.json"} | console


@pytest.mark.parametrize("path", ["/docs", "/redoc", "/docs/oauth2-redirect"])
def test_no_interactive_docs_page_is_served(door: TestClient, path: str) -> None:
    response = door.get(path)
    assert_problem(response, 404, "http-error")


def test_healthz_answers_without_a_key(door: TestClient) -> None:
    assert door.get("/healthz").status_code == 200


def test_storage_unavailable_while_checking_a_key_is_503_not_a_crash(memory_service: MemoryService) -> None:
    app = create_app(memory_service, key_authenticator(KeyService(UnavailableKeys(3))), version="test")
    with TestClient(app) as client:
        response = client.get("/memories", headers=bearer("am_0123456789ab_" + "a" * 43))

    assert_problem(response, 503, "storage-unavailable")
    assert response.headers["retry-after"] == "3"


# --- 403: scopes ---


@pytest.mark.parametrize("route", WRITES, ids=[f"{m} {p}" for m, p, _ in WRITES])
def test_a_read_only_key_may_not_write_and_changes_nothing(
    door: TestClient, memory_service: MemoryService, key_service: KeyService, route: tuple[str, str, Any]
) -> None:
    _, token = key_service.create("alice", ["read"])
    before = stored_state(memory_service)

    response = send(door, route, bearer(token))

    problem = assert_problem(response, 403, "forbidden")
    assert "'write' scope" in problem["detail"]
    assert (
        response.headers["www-authenticate"] == 'Bearer realm="agent-memory", error="insufficient_scope", scope="write"'
    )
    assert stored_state(memory_service) == before


@pytest.mark.parametrize("route", READS, ids=[f"{m} {p}" for m, p, _ in READS])
def test_a_read_only_key_may_read(door: TestClient, key_service: KeyService, route: tuple[str, str, Any]) -> None:
    _, token = key_service.create("alice", ["read"])

    assert send(door, route, bearer(token)).status_code == 200


@pytest.mark.parametrize("route", READS, ids=[f"{m} {p}" for m, p, _ in READS])
def test_a_write_only_key_may_not_read(door: TestClient, key_service: KeyService, route: tuple[str, str, Any]) -> None:
    _, token = key_service.create("alice", ["write"])

    problem = assert_problem(send(door, route, bearer(token)), 403, "forbidden")

    assert "'read' scope" in problem["detail"]


def test_a_write_only_key_may_create_change_delete_and_restore_but_sees_no_record(
    door: TestClient, key_service: KeyService
) -> None:
    _, token = key_service.create("alice", ["write"])

    responses = [send(door, route, bearer(token)) for route in WRITES]

    assert [response.status_code for response in responses] == [201, 204, 204, 204, 204]
    assert responses[3].headers["ETag"] == '"2"'
    assert responses[3].content == b""


def test_a_missing_scope_is_403_even_for_an_id_that_does_not_exist(door: TestClient, key_service: KeyService) -> None:
    _, token = key_service.create("alice", ["read"])

    assert_problem(door.delete("/memories/999", headers=bearer(token)), 403, "forbidden")


# --- the namespace comes from the key alone ---


def test_a_key_reaches_only_its_own_namespace(
    door: TestClient, memory_service: MemoryService, key_service: KeyService
) -> None:
    _, bob = key_service.create("bob")

    created = door.post("/memories", json={"content": "The user plays chess"}, headers=bearer(bob))

    assert created.json()["id"] == 1
    assert [m.content for m in memory_service.search("bob", RetrievalQuery.parse({})).items] == ["The user plays chess"]
    assert [m.content for m in memory_service.search("alice", RetrievalQuery.parse({})).items] == [
        "The user keeps bees"
    ]


def test_a_namespace_named_in_the_request_is_ignored_or_refused(door: TestClient, key_service: KeyService) -> None:
    _, bob = key_service.create("bob")

    listed = door.get("/memories", params={"namespace": "alice"}, headers={**bearer(bob), "x-namespace": "alice"})
    body_field = door.post("/memories", json={"content": "x", "namespace": "alice"}, headers=bearer(bob))

    assert listed.json()["total"] == 0
    problem = assert_problem(body_field, 422, "invalid-input")
    assert problem["errors"] == [{"field": "namespace", "message": "is not a field of this request"}]


# --- the shared bearer parser ---


@pytest.mark.parametrize(
    ("header", "token"),
    [("Bearer abc", "abc"), ("bearer abc", "abc"), ("BEARER   abc  ", "abc"), ("  Bearer abc", "abc")],
)
def test_the_bearer_parser_reads_the_token_of_a_bearer_header(header: str, token: str) -> None:
    assert bearer_token(header) == token


# --- the OpenAPI document and the error table ---


def test_the_openapi_document_declares_the_bearer_scheme_on_every_route(door: TestClient) -> None:
    schema = door.get("/openapi.json").json()

    assert schema["components"]["securitySchemes"]["ApiKey"]["type"] == "http"
    assert schema["components"]["securitySchemes"]["ApiKey"]["scheme"] == "bearer"
    operations = [operation for path in schema["paths"].values() for operation in path.values()]
    assert len(operations) == len(ROUTES) + len(ANY_SCOPE)
    for operation in operations:
        assert operation["security"] == [{"ApiKey": []}], operation["summary"]
        assert {"401", "403"} <= set(operation["responses"]), operation["summary"]
        assert "WWW-Authenticate" in operation["responses"]["401"]["headers"]


def test_every_domain_error_has_an_http_status() -> None:
    classes: list[type[DomainError]] = domain_error_classes()

    assert set(DOMAIN_STATUS) == set(classes)


# --- behind a function URL or API with AWS_IAM auth: SigV4 occupies Authorization ---

SIGV4 = (
    "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261202/us-east-1/lambda/aws4_request, SignedHeaders=host, Signature=0"
)


def test_a_sigv4_signed_request_presents_its_key_in_the_agent_memory_header(
    door: TestClient, key_service: KeyService
) -> None:
    _, token = key_service.create("alice", ["read"])

    response = door.get(
        "/memories/1", headers={"authorization": SIGV4, "x-agent-memory-authorization": f"Bearer {token}"}
    )

    assert response.status_code == 200, response.text
    assert response.json()["content"] == "The user keeps bees"


def test_a_sigv4_signed_request_without_the_agent_memory_header_is_401(door: TestClient) -> None:
    assert_problem(door.get("/memories/1", headers={"authorization": SIGV4}), 401, "unauthenticated")


def test_the_agent_memory_header_is_ignored_when_authorization_is_a_bearer_key(
    door: TestClient, key_service: KeyService
) -> None:
    _, token = key_service.create("alice", ["read"])
    headers = {**bearer("am_0123456789ab_" + "a" * 43), "x-agent-memory-authorization": f"Bearer {token}"}

    assert_problem(door.get("/memories/1", headers=headers), 401, "unauthenticated")


# --- one key, in the header its scheme says ---


@pytest.mark.parametrize("second", ["the same key", "another key"])
def test_two_authorization_headers_are_401_even_when_the_first_holds_a_valid_key(
    door: TestClient, key_service: KeyService, second: str
) -> None:
    _, token = key_service.create("alice", ["read"])
    other = token if second == "the same key" else key_service.create("alice", ["read"])[1]

    response = door.get(
        "/memories/1", headers=[("authorization", f"Bearer {token}"), ("authorization", f"Bearer {other}")]
    )

    problem = assert_problem(response, 401, "unauthenticated")
    assert response.headers["www-authenticate"] == CHALLENGE
    assert problem["detail"].startswith("send one `authorization` header, not several")


def test_two_agent_memory_headers_under_a_signature_are_401(door: TestClient, key_service: KeyService) -> None:
    _, token = key_service.create("alice", ["read"])
    headers = [
        ("authorization", SIGV4),
        ("x-agent-memory-authorization", f"Bearer {token}"),
        ("x-agent-memory-authorization", f"Bearer {token}"),
    ]

    response = door.get("/memories/1", headers=headers)

    problem = assert_problem(response, 401, "unauthenticated")
    assert problem["detail"].startswith("send one `x-agent-memory-authorization` header, not several")


@pytest.mark.parametrize("authorization", ["AWS4-HMAC-SHA256garbage", "AWS4-HMAC-SHA256", "AWS4-HMAC-SHA256X x=y"])
def test_an_authorization_merely_starting_like_sigv4_does_not_hand_over_to_the_agent_memory_header(
    door: TestClient, key_service: KeyService, authorization: str
) -> None:
    _, token = key_service.create("alice", ["read"])

    response = door.get(
        "/memories/1", headers={"authorization": authorization, "x-agent-memory-authorization": f"Bearer {token}"}
    )

    problem = assert_problem(response, 401, "unauthenticated")
    assert response.headers["www-authenticate"] == CHALLENGE
    assert "Bearer scheme" in problem["detail"]


def test_the_sigv4_scheme_token_is_case_insensitive(door: TestClient, key_service: KeyService) -> None:
    _, token = key_service.create("alice", ["read"])

    response = door.get(
        "/memories/1", headers={"authorization": SIGV4.lower(), "x-agent-memory-authorization": f"Bearer {token}"}
    )

    assert response.status_code == 200, response.text
    assert response.json()["content"] == "The user keeps bees"
