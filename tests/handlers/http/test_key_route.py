"""`GET /key`: the key a request is made with, as the console shows it (its id, name, namespace and scopes), to any
valid key whatever its scopes, never its secret or its hash."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from core.keys import KeyService
from core.memories import MemoryService
from handlers.auth import key_authenticator
from handlers.http.app import create_app


@pytest.fixture
def door(memory_service: MemoryService, key_service: KeyService) -> Iterator[TestClient]:
    with TestClient(create_app(memory_service, key_authenticator(key_service), version="test")) as client:
        yield client


@pytest.mark.parametrize("scopes", [["read"], ["write"], ["read", "write"]])
def test_key_answers_any_valid_key_its_id_name_namespace_and_scopes_never_its_secret(
    door: TestClient, key_service: KeyService, scopes: list[str]
) -> None:
    key, token = key_service.create("alice", scopes, name="Ana's laptop")

    response = door.get("/key", headers={"Authorization": f"Bearer {token}"})

    assert response.status_code == 200
    assert response.json() == {"key_id": key.key_id, "name": "Ana's laptop", "namespace": "alice", "scopes": scopes}
    secret = token[len(f"am_{key.key_id}_") :]  # 43 URL-safe characters, which may themselves hold "_"
    assert len(secret) == 43
    assert secret not in response.text
    assert key.secret_hash not in response.text
    assert response.headers["cache-control"] == "no-store"


def test_key_of_a_nameless_key_answers_a_null_name(door: TestClient, key_service: KeyService) -> None:
    _, token = key_service.create("bob", ["read"])

    assert door.get("/key", headers={"Authorization": f"Bearer {token}"}).json()["name"] is None


@pytest.mark.parametrize("authorization", [None, "Bearer am_0123456789ab_" + "x" * 43, "Basic Zm9vOmJhcg=="])
def test_key_without_a_valid_key_is_a_401_problem(door: TestClient, authorization: str | None) -> None:
    headers = {"Authorization": authorization} if authorization else {}

    response = door.get("/key", headers=headers)

    assert response.status_code == 401
    assert response.headers["content-type"] == "application/problem+json"


def test_key_of_an_open_server_names_its_namespace_and_every_scope_without_a_key(http: TestClient) -> None:
    assert http.get("/key").json() == {
        "key_id": None,
        "name": None,
        "namespace": "default",
        "scopes": ["read", "write"],
    }


def test_key_is_in_the_openapi_document_with_its_answer_and_its_401(http: TestClient) -> None:
    operation = http.get("/openapi.json").json()["paths"]["/key"]["get"]

    assert operation["responses"]["200"]["content"]["application/json"]["schema"]
    assert "401" in operation["responses"] or "401" in http.get("/openapi.json").json()["components"]["responses"]
    assert operation["security"] == [{"ApiKey": []}]
