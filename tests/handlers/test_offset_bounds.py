"""Offsets up to 2^63-1 (CONTRACT.md, "Retrieval"): past the matches an ordinary empty page on both doors, beyond
2^63-1 a 422 naming `offset` (over the in-memory store), and an unfiltered page past the end reads no row at all
(on moto and DynamoDB Local, counting the adapter's Query calls)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from adapters.dynamodb import DynamoDBMemoryRepository
from core.contract import RetrievalQuery
from core.memories import MemoryService
from core.model import NewMemory
from handlers.auth import open_access
from handlers.http.app import create_app
from handlers.mcp import create_server
from tests.conftest import Engine
from tests.handlers.conftest import call_tool, tool_text

MEMORIES = 3
HUGE_OFFSETS = [3, 2147483648, 2**63 - 1]
TOO_LARGE = 2**63
OFFSET_REFUSED = "offset: must be at most 9223372036854775807 (2^63-1)"


class QueryCounter:
    """Counts the Query calls a client makes, through botocore's own event hook."""

    def __init__(self, engine: Engine) -> None:
        self.calls = 0
        engine.client.meta.events.register("before-call.dynamodb.Query", self._count)

    def _count(self, **_: Any) -> None:
        self.calls += 1


def _stock(service: MemoryService) -> MemoryService:
    for index in range(MEMORIES):
        service.create("default", _new(f"memory {index}"))
    return service


@pytest.fixture
def stocked(memory_service: MemoryService) -> MemoryService:
    return _stock(memory_service)


@pytest.fixture
def http(stocked: MemoryService) -> Iterator[TestClient]:
    with TestClient(create_app(stocked, open_access(), version="test")) as client:
        yield client


@pytest.fixture
def http_on_ddb_local_stock(ddb_local_service: MemoryService) -> Iterator[TestClient]:
    """The same stock over DynamoDB Local, for the tests that count the adapter's Query calls (moto cannot run the
    access stamps' PartiQL batches)."""
    service = _stock(ddb_local_service)
    with TestClient(create_app(service, open_access(), version="test")) as client:
        yield client


def _new(content: str) -> NewMemory:
    return NewMemory.parse({"content": content})


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize("sort", ["id", "created_at", "last_accessed_at"])
@pytest.mark.parametrize("offset", HUGE_OFFSETS)
def test_an_offset_at_or_past_the_matches_is_an_empty_page_with_the_true_total(
    http: TestClient, offset: int, sort: str
) -> None:
    response = http.get("/memories", params={"offset": str(offset), "sort": sort})

    assert response.status_code == 200, response.text
    assert response.json() == {"items": [], "total": MEMORIES, "limit": 10, "offset": offset, "has_more": False}


@pytest.mark.parametrize("params", [{"q": "memory"}, {"tag": "travel"}, {"q": "memory", "sort": "updated_at"}])
def test_a_filtered_offset_past_the_matches_is_an_empty_page_with_the_true_total(
    http: TestClient, params: dict[str, str]
) -> None:
    response = http.get("/memories", params={"offset": str(2**63 - 1), **params})

    assert response.status_code == 200, response.text
    total = 0 if "tag" in params else MEMORIES
    assert response.json() == {"items": [], "total": total, "limit": 10, "offset": 2**63 - 1, "has_more": False}


def test_a_large_offset_inside_the_matches_serves_the_rest(http: TestClient) -> None:
    response = http.get("/memories", params={"offset": "2", "limit": "100"})

    assert response.status_code == 200, response.text
    body = response.json()
    assert ([item["content"] for item in body["items"]], body["total"], body["has_more"]) == (["memory 2"], 3, False)


def test_an_offset_above_two_to_the_63_minus_one_is_a_422_naming_offset(http: TestClient) -> None:
    response = http.get("/memories", params={"offset": str(TOO_LARGE)})

    assert response.status_code == 422
    assert response.headers["content-type"] == "application/problem+json"
    body = response.json()
    assert body["detail"] == OFFSET_REFUSED
    assert [error["field"] for error in body["errors"]] == ["offset"]


@pytest.mark.parametrize("sort", ["id", "updated_at"])
def test_an_unfiltered_page_past_the_end_makes_no_query(
    http_on_ddb_local_stock: TestClient, ddb_local_engine: Engine, sort: str
) -> None:
    queries = QueryCounter(ddb_local_engine)

    response = http_on_ddb_local_stock.get("/memories", params={"offset": str(2**63 - 1), "sort": sort})

    assert response.status_code == 200, response.text
    assert response.json()["total"] == MEMORIES
    assert queries.calls == 0


def test_an_unfiltered_page_inside_the_matches_still_queries(
    http_on_ddb_local_stock: TestClient, ddb_local_engine: Engine
) -> None:
    queries = QueryCounter(ddb_local_engine)

    response = http_on_ddb_local_stock.get("/memories", params={"offset": "1"})

    assert [item["content"] for item in response.json()["items"]] == ["memory 1", "memory 2"]
    assert queries.calls == 1


@pytest.mark.anyio
@pytest.mark.parametrize("tool", ["search_memories", "prime_memory_context"])
@pytest.mark.parametrize("offset", HUGE_OFFSETS)
async def test_mcp_retrieval_with_an_offset_past_the_matches_is_an_empty_envelope(
    stocked: MemoryService, tool: str, offset: int
) -> None:
    server = create_server(stocked, open_access(), version="test")

    result = await call_tool(server, tool, {"offset": offset})

    assert not result.is_error, tool_text(result)
    assert result.structured_content == {
        "items": [],
        "total": MEMORIES,
        "limit": 10 if tool == "search_memories" else 20,
        "offset": offset,
        "has_more": False,
    }


@pytest.mark.anyio
@pytest.mark.parametrize("tool", ["search_memories", "prime_memory_context"])
async def test_mcp_retrieval_with_an_offset_above_two_to_the_63_minus_one_is_a_tool_error_naming_offset(
    stocked: MemoryService, tool: str
) -> None:
    server = create_server(stocked, open_access(), version="test")

    result = await call_tool(server, tool, {"offset": TOO_LARGE})

    assert result.is_error
    assert tool_text(result) == OFFSET_REFUSED


def test_an_unfiltered_later_page_asks_for_no_more_rows_than_the_total(moto_engine: Engine) -> None:
    repository = DynamoDBMemoryRepository(moto_engine.client, moto_engine.new_table())
    service = MemoryService(repository)
    for index in range(MEMORIES):
        service.create("default", _new(f"memory {index}"))
    limits: list[int] = []
    moto_engine.client.meta.events.register(
        "before-parameter-build.dynamodb.Query", lambda params, **_: limits.append(params["Limit"])
    )

    found = repository.find("default", RetrievalQuery.parse({"offset": 2, "limit": 100}))

    assert ([m.content for m in found.items], found.total) == (["memory 2"], MEMORIES)
    # offset + limit is 102, but only 3 exist: the one Query asks for those 3 plus the usual slack of 2.
    assert limits == [5]


@pytest.mark.anyio
@pytest.mark.parametrize("tool", ["search_memories", "prime_memory_context"])
async def test_the_mcp_offset_schema_states_the_bound(stocked: MemoryService, tool: str) -> None:
    server = create_server(stocked, open_access(), version="test")

    schema = next(t for t in await server.list_tools() if t.name == tool).input_schema

    assert {"minimum": 0, "maximum": 2**63 - 1}.items() <= schema["properties"]["offset"]["anyOf"][0].items()


def test_the_openapi_offset_parameter_states_the_bound(http: TestClient) -> None:
    parameters = http.get("/openapi.json").json()["paths"]["/memories"]["get"]["parameters"]

    offset = next(p for p in parameters if p["name"] == "offset")
    assert (offset["schema"]["minimum"], offset["schema"]["maximum"]) == (0, 2**63 - 1)
