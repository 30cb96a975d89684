"""Offsets up to 2^63-1 on Amazon DynamoDB Local, whose Query refuses a `Limit` beyond 32 bits (moto does not):
past the matches an empty page with the true total on both doors, an unfiltered one without a single Query."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from core.memories import MemoryService
from core.model import NewMemory
from handlers.auth import open_access
from handlers.http.app import create_app
from handlers.mcp import create_server
from tests.conftest import Engine
from tests.handlers.conftest import call_tool, tool_text
from tests.handlers.test_offset_bounds import OFFSET_REFUSED, QueryCounter

MEMORIES = 3
# 2147483648 is the first offset whose Query Limit passed 32 bits; 1.7e9 was the first whose slack did.
LARGE = [1_700_000_000, 2147483648, 2**63 - 1]


@pytest.fixture
def stocked(ddb_local_service: MemoryService) -> MemoryService:
    for index in range(MEMORIES):
        ddb_local_service.create("default", NewMemory.parse({"content": f"memory {index}", "tags": ["travel"]}))
    return ddb_local_service


@pytest.fixture
def http(stocked: MemoryService) -> Iterator[TestClient]:
    with TestClient(create_app(stocked, open_access(), version="test")) as client:
        yield client


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize("params", [{}, {"sort": "created_at"}, {"sort": "last_accessed_at"}, {"tag": "travel"}])
@pytest.mark.parametrize("offset", LARGE)
def test_a_large_offset_is_an_empty_page_with_the_true_total(
    http: TestClient, offset: int, params: dict[str, str]
) -> None:
    response = http.get("/memories", params={"offset": str(offset), **params})

    assert response.status_code == 200, response.text
    assert response.json() == {"items": [], "total": MEMORIES, "limit": 10, "offset": offset, "has_more": False}


def test_an_offset_above_two_to_the_63_minus_one_is_a_422_naming_offset(http: TestClient) -> None:
    response = http.get("/memories", params={"offset": str(2**63)})

    assert response.status_code == 422
    assert response.json()["detail"] == OFFSET_REFUSED
    assert [error["field"] for error in response.json()["errors"]] == ["offset"]


@pytest.mark.parametrize("sort", ["id", "updated_at"])
def test_an_unfiltered_page_past_the_end_makes_no_query(http: TestClient, ddb_local_engine: Engine, sort: str) -> None:
    queries = QueryCounter(ddb_local_engine)

    response = http.get("/memories", params={"offset": str(2147483648), "sort": sort})

    assert response.json()["total"] == MEMORIES
    assert queries.calls == 0


def test_a_page_reaching_past_the_end_serves_what_is_left(http: TestClient) -> None:
    response = http.get("/memories", params={"offset": "2", "limit": "100"})

    body = response.json()
    assert ([item["content"] for item in body["items"]], body["total"], body["has_more"]) == (["memory 2"], 3, False)


@pytest.mark.anyio
@pytest.mark.parametrize("tool", ["search_memories", "prime_memory_context"])
async def test_mcp_retrieval_takes_offsets_up_to_two_to_the_63_minus_one(stocked: MemoryService, tool: str) -> None:
    server = create_server(stocked, open_access(), version="test")

    past = await call_tool(server, tool, {"offset": 2147483648})
    beyond = await call_tool(server, tool, {"offset": 2**63})

    assert not past.is_error, tool_text(past)
    assert past.structured_content is not None
    assert (past.structured_content["items"], past.structured_content["total"]) == ([], MEMORIES)
    assert beyond.is_error
    assert tool_text(beyond) == OFFSET_REFUSED
