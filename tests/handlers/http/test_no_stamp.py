"""`Prefer: no-stamp` (RFC 7240) at the HTTP door: a person auditing reads without stamping `last_accessed_at`, and
the response says the preference was applied; without it, every read stamps exactly as before."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from core.memories import MemoryService

NO_STAMP = {"Prefer": "no-stamp"}


@pytest.fixture
def stored(http: TestClient) -> int:
    response = http.post("/memories", json={"content": "The user keeps bees"})
    memory_id: int = response.json()["id"]
    return memory_id


def stamp_of(service: MemoryService, memory_id: int) -> str | None:
    return service.get("default", memory_id, stamp=False).last_accessed_at


@pytest.mark.parametrize(
    "prefer",
    ["no-stamp", "NO-STAMP", "respond-async, no-stamp", "no-stamp; because=audit", "wait=5,no-stamp", " no-stamp "],
)
def test_a_read_that_prefers_no_stamp_stamps_nothing_and_says_so(
    http: TestClient, memory_service: MemoryService, stored: int, prefer: str
) -> None:
    one = http.get(f"/memories/{stored}", headers={"Prefer": prefer})
    many = http.get("/memories", headers={"Prefer": prefer})

    assert (one.status_code, many.status_code) == (200, 200)
    assert one.headers["preference-applied"] == "no-stamp"
    assert many.headers["preference-applied"] == "no-stamp"
    assert one.json()["last_accessed_at"] is None
    assert many.json()["items"][0]["last_accessed_at"] is None
    assert stamp_of(memory_service, stored) is None


def test_the_preference_counts_in_any_of_several_prefer_headers(
    http: TestClient, memory_service: MemoryService, stored: int
) -> None:
    response = http.get("/memories", headers=[("Prefer", "return=minimal"), ("Prefer", "no-stamp")])

    assert response.headers["preference-applied"] == "no-stamp"
    assert stamp_of(memory_service, stored) is None


@pytest.mark.parametrize("prefer", [None, "no-stamps", "return=minimal", "stamp=no", "x-no-stamp"])
def test_without_the_preference_every_read_stamps_as_before(
    http: TestClient, memory_service: MemoryService, stored: int, prefer: str | None
) -> None:
    headers = {"Prefer": prefer} if prefer is not None else {}

    one = http.get(f"/memories/{stored}", headers=headers)
    first = stamp_of(memory_service, stored)
    many = http.get("/memories", headers=headers)

    assert "preference-applied" not in one.headers
    assert "preference-applied" not in many.headers
    assert first is not None
    assert one.json()["last_accessed_at"] == first
    second = stamp_of(memory_service, stored)
    assert second is not None
    assert many.json()["items"][0]["last_accessed_at"] == second > first


def test_an_audited_read_still_answers_404_for_a_deleted_memory(http: TestClient, stored: int) -> None:
    http.delete(f"/memories/{stored}")

    response = http.get(f"/memories/{stored}", headers=NO_STAMP)

    assert response.status_code == 404


def test_the_openapi_document_describes_the_preference(http: TestClient) -> None:
    paths = http.get("/openapi.json").json()["paths"]

    for path in ("/memories", "/memories/{memory_id}"):
        names = [parameter["name"] for parameter in paths[path]["get"]["parameters"]]
        assert "prefer" in [name.lower() for name in names], path


def test_a_listing_that_prefers_no_stamp_shows_the_stamp_of_a_memory_agents_used(
    http: TestClient, memory_service: MemoryService, stored: int
) -> None:
    used_at = http.get(f"/memories/{stored}").json()["last_accessed_at"]

    listed = http.get("/memories", headers=NO_STAMP).json()["items"]
    searched = http.get("/memories", params={"q": "bees", "sort": "created_at"}, headers=NO_STAMP).json()["items"]

    assert used_at is not None
    assert [row["last_accessed_at"] for row in listed + searched] == [used_at, used_at]
    assert stamp_of(memory_service, stored) == used_at
