"""`GET /keys` and `DELETE /keys/{key_id}`: the namespace's keys as a person's console lists them (never a secret or a
hash), and revoking one: itself always, another key only with the `keys` scope; another namespace's key is a 404."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from core.access import Principal
from core.keys import KeyService
from core.memories import MemoryService
from handlers.auth import key_authenticator
from handlers.http.app import create_app
from handlers.problem import PROBLEM_JSON
from tests.conftest import FakeClock, UnavailableKeys


@pytest.fixture
def door(memory_service: MemoryService, key_service: KeyService) -> Iterator[TestClient]:
    app = create_app(memory_service, key_authenticator(key_service), version="test", keys=key_service)
    with TestClient(app) as client:
        yield client


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def assert_problem(response: Any, status: int, slug: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM_JSON
    problem: dict[str, Any] = response.json()
    assert (problem["status"], problem["type"]) == (status, f"urn:agent-memory:problem:{slug}")
    return problem


def test_keys_lists_the_namespaces_keys_oldest_first_with_names_scopes_times_and_state_never_a_secret(
    door: TestClient, key_service: KeyService, clock: FakeClock
) -> None:
    person, person_token = key_service.create("alice", ["read", "write", "keys"], name="person")
    agent, agent_token = key_service.create("alice", ["read", "write"], name="assistant agent")
    gone, _ = key_service.create("alice", ["read"])
    key_service.revoke(gone.key_id)
    key_service.create("bob", ["read", "write"], name="bob's")
    door.get("/key", headers=bearer(agent_token))  # the agent's key used once

    response = door.get("/keys", headers=bearer(person_token))

    assert response.status_code == 200
    assert response.headers["cache-control"] == "no-store"
    items = response.json()["items"]
    assert [(item["key_id"], item["name"], item["scopes"], item["state"]) for item in items] == [
        (person.key_id, "person", ["read", "write", "keys"], "active"),
        (agent.key_id, "assistant agent", ["read", "write"], "active"),
        (gone.key_id, None, ["read"], "revoked"),
    ]
    assert items[0]["created_at"] == person.created_at
    assert items[0]["expires_at"] is None
    assert items[0]["last_used_at"] is not None  # this very request
    assert items[1]["last_used_at"] is not None
    assert items[2]["last_used_at"] is None
    assert set(items[0]) == {"key_id", "name", "scopes", "created_at", "expires_at", "state", "last_used_at"}
    for token in (person_token, agent_token):
        secret = token.split("_", 2)[2]  # am_<hex id>_<secret>: the secret's base64url may hold "_" itself
        assert secret not in response.text
    assert person.secret_hash not in response.text
    assert agent.secret_hash not in response.text


def test_keys_needs_read_and_a_valid_key(door: TestClient, key_service: KeyService) -> None:
    _, write_only = key_service.create("alice", ["write"])

    assert (
        "lacks the 'read' scope"
        in assert_problem(door.get("/keys", headers=bearer(write_only)), 403, "forbidden")["detail"]
    )
    assert_problem(door.get("/keys"), 401, "unauthenticated")
    assert_problem(door.get("/keys", headers=bearer("am_0123456789ab_" + "x" * 43)), 401, "unauthenticated")


def test_a_key_with_the_keys_scope_revokes_another_and_that_key_can_no_longer_sign_in(
    door: TestClient, key_service: KeyService
) -> None:
    _, person_token = key_service.create("alice", ["read", "write", "keys"])
    agent, agent_token = key_service.create("alice", ["read", "write"])

    response = door.delete(f"/keys/{agent.key_id}", headers=bearer(person_token))

    assert response.status_code == 204
    assert response.content == b""
    assert_problem(door.get("/key", headers=bearer(agent_token)), 401, "unauthenticated")
    listed = door.get("/keys", headers=bearer(person_token)).json()["items"]
    assert [item["state"] for item in listed] == ["active", "revoked"]
    assert door.delete(f"/keys/{agent.key_id}", headers=bearer(person_token)).status_code == 204  # again: harmless


def test_an_agents_read_write_key_may_not_revoke_the_persons_key(door: TestClient, key_service: KeyService) -> None:
    person, person_token = key_service.create("alice", ["read", "write", "keys"])
    _, agent_token = key_service.create("alice", ["read", "write"])

    problem = assert_problem(door.delete(f"/keys/{person.key_id}", headers=bearer(agent_token)), 403, "forbidden")

    assert problem["detail"] == "this API key lacks the 'keys' scope, which this operation needs"
    assert door.get("/key", headers=bearer(person_token)).status_code == 200


def test_any_key_may_revoke_itself(door: TestClient, key_service: KeyService) -> None:
    agent, agent_token = key_service.create("alice", ["write"])

    assert door.delete(f"/keys/{agent.key_id}", headers=bearer(agent_token)).status_code == 204
    assert_problem(door.get("/key", headers=bearer(agent_token)), 401, "unauthenticated")


def test_another_namespaces_key_is_a_404_as_an_unknown_one_and_stays_active(
    door: TestClient, key_service: KeyService
) -> None:
    _, alice_token = key_service.create("alice", ["read", "keys"])
    bob, bob_token = key_service.create("bob", ["read", "write"])

    theirs = assert_problem(door.delete(f"/keys/{bob.key_id}", headers=bearer(alice_token)), 404, "key-not-found")
    unknown = assert_problem(door.delete("/keys/000000000000", headers=bearer(alice_token)), 404, "key-not-found")

    assert theirs["detail"] == f"API key {bob.key_id} does not exist"
    assert unknown["detail"] == "API key 000000000000 does not exist"
    assert door.get("/key", headers=bearer(bob_token)).status_code == 200
    assert bob.key_id not in door.get("/keys", headers=bearer(alice_token)).text


@pytest.mark.parametrize("key_id", ["xyz", "0123456789AB", "0123456789abc", "%20", "KEY%230123456789ab", "x" * 5000])
def test_a_malformed_key_id_is_a_404_problem_never_a_500(
    door: TestClient, key_service: KeyService, key_id: str
) -> None:
    _, token = key_service.create("alice", ["read", "keys"])

    assert_problem(door.delete(f"/keys/{key_id}", headers=bearer(token)), 404, "key-not-found")


def test_revoke_without_a_valid_key_is_a_401(door: TestClient, key_service: KeyService) -> None:
    agent, _ = key_service.create("alice", ["read"])

    assert_problem(door.delete(f"/keys/{agent.key_id}"), 401, "unauthenticated")
    assert key_service.list("alice")[0].revoked is False


@pytest.mark.parametrize("method", ["POST", "PATCH", "PUT"])
def test_keys_allows_only_its_methods(door: TestClient, key_service: KeyService, method: str) -> None:
    _, token = key_service.create("alice", ["read", "write", "keys"])

    assert door.request(method, "/keys", headers=bearer(token)).status_code == 405
    assert door.request(method, "/keys/000000000000", headers=bearer(token)).status_code == 405


def test_storage_that_cannot_answer_is_a_503_with_retry_after(memory_service: MemoryService) -> None:
    person = Principal("alice", frozenset({"read", "keys"}), "0123456789ab")
    app = create_app(memory_service, lambda _: person, version="test", keys=KeyService(UnavailableKeys(3)))
    with TestClient(app) as client:
        listed, revoked = client.get("/keys"), client.delete("/keys/000000000000")

    assert_problem(listed, 503, "storage-unavailable")
    assert_problem(revoked, 503, "storage-unavailable")
    assert listed.headers["retry-after"] == "3"


def test_an_open_server_lists_no_keys_and_revokes_none(http: TestClient) -> None:
    assert http.get("/keys").json() == {"items": []}
    assert_problem(http.delete("/keys/0123456789ab"), 403, "forbidden")


def test_the_keys_routes_are_in_the_openapi_document_with_their_answers(http: TestClient) -> None:
    paths = http.get("/openapi.json").json()["paths"]

    listing, revoke = paths["/keys"]["get"], paths["/keys/{key_id}"]["delete"]
    assert listing["responses"]["200"]["content"]["application/json"]["schema"]
    assert {"204", "401", "403", "404"} <= set(revoke["responses"])
    assert listing["security"] == revoke["security"] == [{"ApiKey": []}]
