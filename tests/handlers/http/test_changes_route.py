"""GET /changes at the HTTP door: the namespace's changes in the retrieval envelope, a bad `since` or paging value a
422 naming the field, nothing stamped, `read` needed (CONTRACT.md's style; the stores' side is
tests/integration/test_namespace_changes.py)."""

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


def bearer(key_service: KeyService, *scopes: str) -> dict[str, str]:
    _, token = key_service.create("alice", list(scopes))
    return {"authorization": f"Bearer {token}"}


def test_changes_list_each_change_with_its_key_newest_first_and_stamp_nothing(
    door: TestClient, key_service: KeyService
) -> None:
    agent_key, agent_token = key_service.create("alice", ["read", "write"], name="assistant agent")
    agent = {"authorization": f"Bearer {agent_token}"}
    first = door.post("/memories", json={"content": "The user keeps bees"}, headers=agent).json()["id"]
    body = {"content": "The user keeps hives", "supersedes": [first]}
    second = door.post("/memories", json=body, headers=agent).json()["id"]

    response = door.get("/changes", headers=bearer(key_service, "read"))

    assert response.status_code == 200
    page = response.json()
    # One commit made the last two changes at one moment: the newer memory's first.
    assert [(r["id"], r["change"], r["key_id"], r.get("superseded_by")) for r in page["items"]] == [
        (second, "created", agent_key.key_id, None),
        (first, "superseded", agent_key.key_id, second),
        (first, "created", agent_key.key_id, None),
    ]
    assert (page["total"], page["limit"], page["offset"], page["has_more"]) == (3, 10, 0, False)
    assert page["since"] < page["items"][-1]["changed_at"]
    stored = door.get(f"/memories/{first}", headers={**agent, "prefer": "no-stamp"}).json()
    assert stored["last_accessed_at"] is None


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("since=yesterday", "since"),
        ("since=2026-13-01T00:00:00Z", "since"),
        ("limit=0", "limit"),
        ("offset=-1", "offset"),
    ],
)
def test_a_bad_since_or_paging_value_is_a_422_naming_it(
    door: TestClient, key_service: KeyService, query: str, field: str
) -> None:
    response = door.get(f"/changes?{query}", headers=bearer(key_service, "read"))

    assert response.status_code == 422
    assert response.headers["content-type"] == "application/problem+json"
    assert [error["field"] for error in response.json()["errors"]] == [field]


def test_a_key_that_may_only_write_may_not_read_the_changes(door: TestClient, key_service: KeyService) -> None:
    response = door.get("/changes", headers=bearer(key_service, "write"))

    assert response.status_code == 403
