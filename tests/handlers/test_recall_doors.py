"""Recall at both doors (CONTRACT.md, Recall): `GET /recall` and the tool `recall_memories` give the same envelope
for the same question over the same memories, refuse bad input in the same words, and stamp as the other reads do
(the HTTP door honours `Prefer: no-stamp`; a tool call always stamps). Each door gets its own twin of the data (same
records, same clock), so one door's stamps cannot disturb the other's answer. The ranking itself is tested on every
store in tests/integration/test_recall_contract.py."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from fastapi.testclient import TestClient
from mcp.client import Client

from adapters.memory import InMemoryMemoryRepository
from core.contract import RetrievalQuery
from core.memories import MemoryService
from core.recall.indexing import RecallIndexer
from core.recall.service import RecallService
from core.recall.standin import StandInEmbedder
from handlers.auth import open_access
from handlers.http.app import create_app
from handlers.mcp import create_server
from tests.conftest import NAMESPACE, FakeClock
from tests.handlers.conftest import tool_text
from tests.handlers.test_parity import seed

pytestmark = pytest.mark.anyio

STAND_IN = StandInEmbedder()
NO_STAMP = {"Prefer": "no-stamp"}


@dataclass
class Doors:
    mcp: Client
    http: TestClient
    # The store behind each door, to see what a recall stamped.
    mcp_memories: MemoryService
    http_memories: MemoryService


def twin() -> tuple[MemoryService, RecallService]:
    """The parity suite's twelve memories, indexed with the stand-in model, and the recall over them."""
    clock, store = FakeClock(), InMemoryMemoryRepository()
    memories = MemoryService(store, clock, indexer=RecallIndexer(STAND_IN))
    seed(memories)
    return memories, RecallService(store, STAND_IN, clock=clock)


@pytest.fixture
def doors() -> Iterator[Doors]:
    (for_mcp, mcp_recall), (for_http, http_recall) = twin(), twin()
    app = create_app(for_http, open_access(), version="test", recall=http_recall)
    with TestClient(app) as http:
        yield Doors(
            Client(create_server(for_mcp, open_access(), version="test", recall=mcp_recall)), http, for_mcp, for_http
        )


def stamps(memories: MemoryService) -> dict[int, str | None]:
    """Every stored stamp, deleted memories' too, read without stamping."""
    queries = [RetrievalQuery.parse({"status": status, "limit": 50}) for status in ("active", "invalid", "deleted")]
    return {
        memory.id: memory.last_accessed_at
        for query in queries
        for memory in memories.search(NAMESPACE, query, stamp=False).items
    }


RECALLS: list[dict[str, Any]] = [
    {"query": "what does the user drink?"},
    {"query": "  where does the user live  "},
    {"query": "travel", "status": "active", "limit": 3},
    {"query": "the user", "limit": 4, "offset": 4},
    {"query": "the user", "status": "invalid"},
    {"query": "phone", "status": "deleted"},
    {"query": "work", "memory_type": "fact", "tag": " Work "},
    {"query": "coffee", "tag": "nothing-has-this"},
    {"query": "the user", "limit": 500},
    {"query": "the user", "limit": "3", "offset": "1"},
    {"query": "tea", "as_of": "2031-01-01T00:00:00+02:00"},
    {"query": "tea", "as_of": ""},
    {"query": "lisbon", "offset": 40},
]


@pytest.mark.parametrize("arguments", RECALLS, ids=[str(r)[:60] for r in RECALLS])
async def test_recall_memories_and_get_recall_return_the_same_envelope(doors: Doors, arguments: dict[str, Any]) -> None:
    async with doors.mcp as client:
        result = await client.call_tool("recall_memories", arguments)
    response = doors.http.get("/recall", params=arguments)

    assert response.status_code == 200, response.text
    assert not result.is_error, tool_text(result)
    envelope = response.json()
    assert result.structured_content == envelope
    assert set(envelope) == {"items", "total", "limit", "offset", "has_more", "as_of", "ranking"}
    assert envelope["ranking"]["model"] == STAND_IN.model
    for item in envelope["items"]:
        assert set(item["parts"]) == {"lexical", "semantic", "recency", "use", "type", "newer"}
        assert all(0 <= value <= 1 for value in item["parts"].values())
    order = [(item["score"], item["memory"]["id"]) for item in envelope["items"]]
    assert order == sorted(order, reverse=True)


async def test_an_unknown_field_is_ignored_by_get_recall_and_refused_by_recall_memories(doors: Doors) -> None:
    async with doors.mcp as client:
        result = await client.call_tool("recall_memories", {"query": "lisbon", "page": 2})
    response = doors.http.get("/recall", params={"query": "lisbon", "page": 2})

    assert response.status_code == 200, response.text
    assert result.is_error
    assert tool_text(result) == "page: is not a field of this request"


BAD_RECALLS: list[tuple[dict[str, Any], list[str]]] = [
    ({}, ["query"]),
    ({"status": "active"}, ["query"]),
    ({"query": ""}, ["query"]),
    ({"query": " \t\n"}, ["query"]),
    ({"query": "q" * 1001}, ["query"]),
    ({"query": "tea", "limit": 0}, ["limit"]),
    ({"query": "tea", "limit": "ten"}, ["limit"]),
    ({"query": "tea", "offset": -1}, ["offset"]),
    ({"query": "tea", "status": "gone"}, ["status"]),
    ({"query": "tea", "memory_type": "opinion"}, ["memory_type"]),
    ({"query": "tea", "as_of": "yesterday"}, ["as_of"]),
    ({"query": "tea", "as_of": "2026-12-04T10:00:00"}, ["as_of"]),
    ({"query": "", "limit": 0, "as_of": "2026-12-04"}, ["query", "limit", "as_of"]),
]


@pytest.mark.parametrize(("arguments", "fields"), BAD_RECALLS, ids=[str(a)[:40] for a, _ in BAD_RECALLS])
async def test_bad_recall_arguments_are_refused_by_both_doors_in_the_same_words(
    doors: Doors, arguments: dict[str, Any], fields: list[str]
) -> None:
    async with doors.mcp as client:
        result = await client.call_tool("recall_memories", arguments)
    response = doors.http.get("/recall", params=arguments)

    assert response.status_code == 422
    problem = response.json()
    assert [error["field"] for error in problem["errors"]] == fields
    assert result.is_error
    assert tool_text(result) == problem["detail"]


async def test_the_contracts_words_for_a_missing_query_a_low_limit_and_a_bad_as_of(doors: Doors) -> None:
    response = doors.http.get("/recall", params={"limit": 0, "as_of": "soon"})

    assert response.json()["detail"] == (
        "query: is required; limit: must be 1 or more; "
        "as_of: must be a date and time with its offset (RFC 3339), e.g. 2026-12-04T10:00:00Z, not 'soon'"
    )


def test_a_recall_parameter_given_twice_is_refused(doors: Doors) -> None:
    response = doors.http.get("/recall?query=tea&query=coffee&limit=2")

    assert response.status_code == 422
    assert response.json()["detail"] == "query: must be given at most once"


async def test_both_doors_stamp_the_returned_rows_with_one_timestamp_and_only_those(doors: Doors) -> None:
    before = stamps(doors.http_memories)
    arguments: dict[str, Any] = {"query": "what does the user drink?", "limit": 3}

    async with doors.mcp as client:
        result = await client.call_tool("recall_memories", arguments)
    response = doors.http.get("/recall", params=arguments)

    assert "preference-applied" not in response.headers
    for memories, page in ((doors.mcp_memories, result.structured_content), (doors.http_memories, response.json())):
        assert page is not None
        returned = {item["memory"]["id"] for item in page["items"]}
        (stamp,) = {item["memory"]["last_accessed_at"] for item in page["items"]}
        after = stamps(memories)
        assert {memory_id for memory_id in after if after[memory_id] != before[memory_id]} == returned
        assert {after[memory_id] for memory_id in returned} == {stamp}


def test_a_recall_that_prefers_no_stamp_stamps_nothing_says_so_and_shows_the_stored_stamps(doors: Doors) -> None:
    before = stamps(doors.http_memories)

    response = doors.http.get("/recall", params={"query": "what does the user drink?"}, headers=NO_STAMP)

    assert response.status_code == 200
    assert response.headers["preference-applied"] == "no-stamp"
    assert stamps(doors.http_memories) == before
    shown = {item["memory"]["id"]: item["memory"]["last_accessed_at"] for item in response.json()["items"]}
    assert shown == {memory_id: before[memory_id] for memory_id in shown}
    assert any(stamp is not None for stamp in shown.values())  # memories 1 and 8 were read when seeded


def test_the_same_as_of_reproduces_an_answer_at_the_http_door(doors: Doors) -> None:
    first = doors.http.get("/recall", params={"query": "the user"}, headers=NO_STAMP).json()

    again = doors.http.get("/recall", params={"query": "the user", "as_of": first["as_of"]}, headers=NO_STAMP).json()

    assert again == first


def test_a_read_that_stamps_changes_the_use_an_answer_at_the_same_as_of_shows(doors: Doors) -> None:
    # What the descriptions of as_of say: an answer is reproduced while its memories stay as they were, and a read
    # that stamps changes them (the use of what it returned), so reproducing means reading with Prefer: no-stamp.
    question: dict[str, str | int] = {"query": "the user", "limit": 3}
    first = doors.http.get("/recall", params=question).json()

    again = doors.http.get("/recall", params={**question, "as_of": first["as_of"]}, headers=NO_STAMP).json()

    assert [item["parts"]["use"] for item in again["items"]] == [1.0] * 3
    assert [item["parts"]["use"] for item in first["items"]] != [1.0] * 3


def test_the_openapi_document_publishes_recall_with_a_required_query_and_the_prefer_header(doors: Doors) -> None:
    operation = doors.http.get("/openapi.json").json()["paths"]["/recall"]["get"]

    parameters = {parameter["name"].lower(): parameter for parameter in operation["parameters"]}
    assert set(parameters) == {"query", "status", "memory_type", "tag", "limit", "offset", "as_of", "prefer"}
    assert parameters["query"]["required"] is True
    assert not any(parameters[name]["required"] for name in parameters if name != "query")
    assert parameters["as_of"]["schema"] == {"type": "string", "anyOf": [{"format": "date-time"}, {"const": ""}]}
    assert operation["security"] == [{"ApiKey": []}]
    assert {"200", "401", "403", "422"} <= set(operation["responses"])


async def test_the_tool_is_read_only_and_requires_only_its_query(doors: Doors) -> None:
    async with doors.mcp as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}

    tool = tools["recall_memories"]
    assert tool.annotations is not None
    assert (tool.annotations.read_only_hint, tool.annotations.destructive_hint) == (True, False)
    assert tool.input_schema["required"] == ["query"]
    assert set(tool.input_schema["properties"]) == {"query", "status", "memory_type", "tag", "limit", "offset", "as_of"}
    assert tool.output_schema is not None
    assert set(tool.output_schema["properties"]) == {
        "items",
        "total",
        "limit",
        "offset",
        "has_more",
        "as_of",
        "ranking",
    }
