"""Parity of the two doors: the same data and arguments give the same results, and the same refusals in the same
words. Each door gets its own twin of the data (same records, same clock), so reads that stamp cannot disturb the
other door's answer."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from fastapi.testclient import TestClient
from mcp.client import Client

from adapters.memory import InMemoryMemoryRepository
from core.memories import MemoryService
from core.model import MemoryChanges, NewMemory
from handlers.auth import open_access
from handlers.http.app import create_app
from handlers.mcp import create_server
from tests.conftest import NAMESPACE, FakeClock
from tests.handlers.conftest import tool_text

pytestmark = pytest.mark.anyio


@dataclass
class Doors:
    mcp: Client
    http: TestClient


def twin_service() -> MemoryService:
    return MemoryService(InMemoryMemoryRepository(), FakeClock())


def seed(service: MemoryService) -> None:
    """Twelve memories of every status and type, some read, one changed, one deleted."""
    rows: list[dict[str, Any]] = [
        {"content": "The user drinks dark roast coffee", "tags": ["preference", "food"], "memory_type": "preference"},
        {"content": "The user's name is Ana Lima", "tags": ["profile"], "memory_type": "identity"},
        {"content": "The user flies to Lisbon on 2026-05-02", "tags": ["travel"], "memory_type": "event"},
        {"content": "The user lives in Porto", "tags": ["place", "profile"], "memory_type": "identity"},
        {"content": "The user plans travel to Japan", "tags": ["travel-plans"], "memory_type": "event"},
        {"content": "The user likes 100% cotton shirts", "tags": ["preference"], "memory_type": "preference"},
        {"content": "The user_id at work is ana_l", "tags": ["work"], "memory_type": "fact"},
        {"content": "The user drinks tea in the evening", "tags": ["preference", "food"], "memory_type": "preference"},
        {"content": "The user works on project Apollo", "tags": ["project:apollo", "work"]},
        {"content": "The user lives in Lisbon", "tags": ["place"], "memory_type": "identity", "status": "invalid"},
        {"content": "The user uses a backslash \\ in paths", "tags": ["tooling"]},
        {"content": "The user's old phone number is 555-0100", "tags": ["profile"]},
    ]
    for row in rows:
        service.create(NAMESPACE, NewMemory.parse(row))
    for memory_id in (3, 1, 8):
        service.get(NAMESPACE, memory_id)
    service.update(NAMESPACE, 2, MemoryChanges.parse({"tags": ["profile", "person"]}))
    service.delete(NAMESPACE, 12)


@contextmanager
def twin_doors() -> Iterator[Doors]:
    """Both doors, each over its own twin of the seeded data."""
    for_mcp, for_http = twin_service(), twin_service()
    seed(for_mcp)
    seed(for_http)
    with TestClient(create_app(for_http, open_access(), version="test")) as http:
        yield Doors(Client(create_server(for_mcp, open_access(), version="test")), http)


@pytest.fixture
def doors() -> Iterator[Doors]:
    with twin_doors() as both:
        yield both


SEARCHES: list[dict[str, Any]] = [
    {},
    {"q": "lisbon"},
    {"q": "%"},
    {"q": "_"},
    {"q": "\\"},
    {"q": "TRAVEL"},
    {"q": "", "tag": ""},
    {"tag": " Travel "},
    {"tag": "profile", "sort": "updated_at"},
    {"status": "invalid"},
    {"status": "deleted"},
    {"status": "active", "memory_type": "preference", "sort": "created_at"},
    {"sort": "last_accessed_at"},
    {"sort": "last_accessed_at", "limit": 2, "offset": 2},
    {"limit": 5, "offset": 5},
    {"limit": 500},
    {"limit": "3", "offset": "1"},
    {"offset": 40},
    {"offset": 2**31},
    {"offset": 2**63 - 1, "sort": "updated_at"},
    {"offset": 2**32, "q": "the", "tag": "travel"},
    {"memory_type": "event", "q": "the", "tag": "travel"},
]


@pytest.mark.parametrize("arguments", SEARCHES, ids=[str(s) for s in SEARCHES])
async def test_search_memories_and_get_memories_return_the_same_page(doors: Doors, arguments: dict[str, Any]) -> None:
    async with doors.mcp as client:
        result = await client.call_tool("search_memories", arguments)
    response = doors.http.get("/memories", params=arguments)

    assert response.status_code == 200, response.text
    assert not result.is_error, tool_text(result)
    envelope = response.json()
    page = result.structured_content
    assert page is not None
    assert [item["id"] for item in page["items"]] == [item["id"] for item in envelope["items"]]
    assert (page["total"], page["has_more"]) == (envelope["total"], envelope["has_more"])
    assert page == envelope


async def test_an_unknown_field_is_ignored_in_the_query_string_and_refused_as_a_tool_argument(doors: Doors) -> None:
    # A query string may carry what a proxy or a cache-buster added (docs/http-api.md); a tool call's arguments are
    # all the caller's, and a misspelt filter silently dropped would answer (and stamp) an unfiltered page.
    async with doors.mcp as client:
        result = await client.call_tool("search_memories", {"q": "lisbon", "page": 2})
    response = doors.http.get("/memories", params={"q": "lisbon", "page": 2})

    assert response.status_code == 200, response.text
    assert result.is_error
    assert tool_text(result) == "page: is not a field of this request"


@pytest.mark.parametrize("tag", ["travel plans", "#travel", "trävel", "-travel", "t" * 65])
async def test_a_tag_no_stored_tag_can_equal_is_an_empty_page_on_both_doors_not_a_422(doors: Doors, tag: str) -> None:
    # CONTRACT.md gives the `tag` filter no syntax of its own ("matches one whole stored tag exactly"; a 422 is named
    # only for status, memory_type, sort, limit, offset and q's length), so such a value simply matches nothing.
    async with doors.mcp as client:
        result = await client.call_tool("search_memories", {"tag": tag})
    response = doors.http.get("/memories", params={"tag": tag})

    empty = {"items": [], "total": 0, "limit": 10, "offset": 0, "has_more": False}
    assert (response.status_code, response.json()) == (200, empty)
    assert (result.is_error, result.structured_content) == (False, empty)


async def test_a_second_page_continues_where_the_first_stopped_on_both_doors(doors: Doors) -> None:
    async with doors.mcp as client:
        pages = [
            (await client.call_tool("search_memories", {"limit": 4, "offset": offset})).structured_content
            for offset in (0, 4, 8)
        ]
    envelopes = [doors.http.get("/memories", params={"limit": 4, "offset": offset}).json() for offset in (0, 4, 8)]

    assert [[i["id"] for i in p["items"]] for p in pages if p] == [[i["id"] for i in e["items"]] for e in envelopes]
    assert [i["id"] for p in pages if p for i in p["items"]] == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]


BAD_SEARCHES: list[tuple[dict[str, Any], list[str]]] = [
    ({"limit": 0}, ["limit"]),
    ({"limit": -5}, ["limit"]),
    ({"limit": "ten"}, ["limit"]),
    ({"offset": -1}, ["offset"]),
    ({"offset": 2**63}, ["offset"]),
    ({"offset": "9" * 30}, ["offset"]),
    ({"sort": "x"}, ["sort"]),
    ({"sort": "newest"}, ["sort"]),
    ({"status": "gone"}, ["status"]),
    ({"memory_type": "x"}, ["memory_type"]),
    ({"q": "q" * 257}, ["q"]),
    ({"limit": 1.5}, ["limit"]),
    ({"offset": 2.5}, ["offset"]),
    ({"status": "gone", "sort": "x", "limit": 0}, ["status", "sort", "limit"]),
]


@pytest.mark.parametrize(("arguments", "fields"), BAD_SEARCHES, ids=[str(a)[:40] for a, _ in BAD_SEARCHES])
async def test_bad_retrieval_arguments_are_refused_by_both_doors_in_the_same_words(
    doors: Doors, arguments: dict[str, Any], fields: list[str]
) -> None:
    async with doors.mcp as client:
        result = await client.call_tool("search_memories", arguments)
    response = doors.http.get("/memories", params=arguments)

    assert response.status_code == 422
    problem = response.json()
    assert [error["field"] for error in problem["errors"]] == fields
    assert result.is_error
    assert tool_text(result) == f"{problem['detail']}"


BAD_CREATES: list[tuple[dict[str, Any], list[str]]] = [
    ({"content": ""}, ["content"]),
    ({"content": "   "}, ["content"]),
    ({"content": "x" * 8193}, ["content"]),
    ({"content": 42}, ["content"]),
    ({"content": "a\x7fb"}, ["content"]),  # DEL
    ({"content": "next\x85line"}, ["content"]),  # a C1 control inside, though str.strip() trims it at the ends
    ({"content": "\x9f"}, ["content"]),
    ({}, ["content"]),
    ({"tags": ["travel"]}, ["content"]),
    ({"colour": "red"}, ["content", "colour"]),
    ({"content": "The user likes tea", "tags": "preference"}, ["tags"]),
    ({"content": "The user likes tea", "tags": ["Bad Tag!"]}, ["tags[0]"]),
    ({"content": "The user likes tea", "tags": [f"t{n}" for n in range(21)]}, ["tags"]),
    ({"content": "The user likes tea", "memory_type": "x"}, ["memory_type"]),
    ({"content": "The user likes tea", "status": "deleted"}, ["status"]),
    ({"content": "The user likes tea", "tag": "travel"}, ["tag"]),
    ({"content": "The user likes tea", "version": 3, "id": 4}, ["version", "id"]),
]


@pytest.mark.parametrize(("body", "fields"), BAD_CREATES, ids=[str(b)[:40] for b, _ in BAD_CREATES])
async def test_bad_creates_are_refused_by_both_doors_in_the_same_words(
    doors: Doors, body: dict[str, Any], fields: list[str]
) -> None:
    async with doors.mcp as client:
        result = await client.call_tool("create_memory", body)
    response = doors.http.post("/memories", json=body)

    assert response.status_code == 422
    problem = response.json()
    assert [error["field"] for error in problem["errors"]] == fields
    assert result.is_error
    assert tool_text(result) == f"{problem['detail']}"


BAD_UPDATES: list[tuple[dict[str, Any], str]] = [
    ({"status": "gone"}, "status"),
    ({"status": "deleted"}, "status"),
    ({"content": ""}, "content"),
    ({"content": "a\x80b"}, "content"),
    ({"memory_type": "opinion"}, "memory_type"),
    ({"tags": ["ok", "-bad"]}, "tags"),
    ({"version": 4}, "version"),
    ({"tag": "travel"}, "tag"),
]


@pytest.mark.parametrize(("body", "field"), BAD_UPDATES, ids=[str(b)[:40] for b, _ in BAD_UPDATES])
async def test_bad_updates_are_refused_by_both_doors_in_the_same_words(
    doors: Doors, body: dict[str, Any], field: str
) -> None:
    async with doors.mcp as client:
        result = await client.call_tool("update_memory", {"id": 1, **body})
    response = doors.http.patch("/memories/1", json=body)

    assert response.status_code == 422
    problem = response.json()
    assert all(error["field"].startswith(field) for error in problem["errors"])
    assert result.is_error
    assert tool_text(result) == f"{problem['detail']}"


async def test_a_stale_version_is_refused_by_both_doors_naming_the_current_version(doors: Doors) -> None:
    async with doors.mcp as client:
        result = await client.call_tool("update_memory", {"id": 2, "content": "Ana", "expected_version": 1})
    response = doors.http.patch("/memories/2", json={"content": "Ana"}, headers={"If-Match": '"1"'})

    assert response.status_code == 412
    assert response.headers["ETag"] == '"2"'
    assert tool_text(result) == f"{response.json()['detail']}"


@pytest.mark.parametrize("memory_id", ["12", "99", "abc"])
async def test_missing_deleted_and_non_numeric_ids_are_not_found_on_both_doors(doors: Doors, memory_id: str) -> None:
    async with doors.mcp as client:
        result = await client.call_tool("get_memory", {"id": memory_id})
    response = doors.http.get(f"/memories/{memory_id}")

    assert response.status_code == 404
    assert tool_text(result).startswith(f"{response.json()['detail']}")
