"""Scopes shape answers (CONTRACT.md): a key without `read` never receives a record it did not just send. Every
write by every kind of key, checked on status, body and headers: a PATCH by a write-only key is 204 with the new
ETag and nothing else; a create still returns the caller's own record."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from core.keys import KeyService
from core.memories import MemoryService
from core.model import NewMemory
from handlers.auth import key_authenticator
from handlers.http.app import create_app

STORED = "The user keeps bees"
RECORD_FIELDS = {"id", "content", "tags", "created_at", "updated_at", "last_accessed_at", "memory_type", "status"}
PATCHES: dict[str, tuple[dict[str, Any], str]] = {
    # name: (body, the ETag afterwards)
    "change": ({"content": "The user keeps wasps", "tags": ["hobby"]}, '"2"'),
    "empty body": ({}, '"1"'),
    "no-op": ({"content": STORED}, '"1"'),
}
SCOPES = {"read": ["read"], "write": ["write"], "read+write": ["read", "write"]}


@pytest.fixture
def door(memory_service: MemoryService, key_service: KeyService) -> Iterator[TestClient]:
    """The app over the in-memory store with real keys, holding memory 1 of namespace alice."""
    memory_service.create("alice", NewMemory.parse({"content": STORED, "tags": ["secret-tag"]}))
    app = create_app(memory_service, key_authenticator(key_service), version="test")
    with TestClient(app) as client:
        yield client


def key(key_service: KeyService, scopes: str) -> dict[str, str]:
    _, token = key_service.create("alice", SCOPES[scopes])
    return {"authorization": f"Bearer {token}"}


def assert_reveals_nothing_stored(response: Any) -> None:
    assert "bees" not in response.text
    assert "secret-tag" not in response.text


@pytest.mark.parametrize("patch", PATCHES, ids=list(PATCHES))
def test_a_patch_by_a_write_only_key_is_204_with_the_new_etag_and_no_body(
    door: TestClient, key_service: KeyService, patch: str
) -> None:
    body, etag = PATCHES[patch]

    response = door.patch("/memories/1", json=body, headers=key(key_service, "write"))

    assert response.status_code == 204
    assert response.content == b""
    assert response.headers["etag"] == etag
    assert "content-type" not in response.headers
    assert "location" not in response.headers


@pytest.mark.parametrize("patch", PATCHES, ids=list(PATCHES))
def test_a_patch_by_a_read_write_key_is_200_with_the_record_and_its_etag(
    door: TestClient, key_service: KeyService, patch: str
) -> None:
    body, etag = PATCHES[patch]

    response = door.patch("/memories/1", json=body, headers=key(key_service, "read+write"))

    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.headers["etag"] == etag
    record = response.json()
    assert set(record) == RECORD_FIELDS | {"version"}
    assert (record["id"], f'"{record["version"]}"') == (1, etag)
    assert record["content"] == body.get("content", STORED)


@pytest.mark.parametrize("patch", PATCHES, ids=list(PATCHES))
def test_a_patch_by_a_read_only_key_is_403_and_shows_nothing(
    door: TestClient, key_service: KeyService, patch: str
) -> None:
    response = door.patch("/memories/1", json=PATCHES[patch][0], headers=key(key_service, "read"))

    assert response.status_code == 403
    assert response.headers["content-type"] == "application/problem+json"
    assert "etag" not in response.headers
    assert_reveals_nothing_stored(response)


def test_a_write_only_key_that_patches_a_missing_memory_gets_404_and_no_etag(
    door: TestClient, key_service: KeyService
) -> None:
    response = door.patch("/memories/2", json={}, headers=key(key_service, "write"))

    assert response.status_code == 404
    assert "etag" not in response.headers


@pytest.mark.parametrize("scopes", ["write", "read+write"])
def test_a_create_returns_the_callers_own_record_with_location_and_etag(
    door: TestClient, key_service: KeyService, scopes: str
) -> None:
    response = door.post("/memories", json={"content": "The user keeps wasps"}, headers=key(key_service, scopes))

    assert response.status_code == 201
    assert response.headers["content-type"] == "application/json"
    assert (response.headers["location"], response.headers["etag"]) == ("/memories/2", '"1"')
    assert response.json()["content"] == "The user keeps wasps"
    assert_reveals_nothing_stored(response)


@pytest.mark.parametrize("scopes", ["write", "read+write"])
def test_a_delete_is_204_with_no_body_and_no_headers_of_the_record(
    door: TestClient, key_service: KeyService, scopes: str
) -> None:
    response = door.delete("/memories/1", headers=key(key_service, scopes))

    assert response.status_code == 204
    assert response.content == b""
    assert "etag" not in response.headers
    assert "content-type" not in response.headers


@pytest.mark.parametrize(("method", "body"), [("POST", {"content": "x"}), ("DELETE", None)])
def test_a_read_only_key_may_not_create_or_delete_and_sees_nothing(
    door: TestClient, key_service: KeyService, method: str, body: dict[str, Any] | None
) -> None:
    path = "/memories" if method == "POST" else "/memories/1"

    response = door.request(method, path, json=body, headers=key(key_service, "read"))

    assert response.status_code == 403
    assert "etag" not in response.headers
    assert "location" not in response.headers
    assert_reveals_nothing_stored(response)


def test_the_openapi_document_declares_the_204_of_a_patch_with_its_etag(door: TestClient) -> None:
    responses = door.get("/openapi.json").json()["paths"]["/memories/{memory_id}"]["patch"]["responses"]

    assert "content" not in responses["204"]
    assert "ETag" in responses["204"]["headers"]
