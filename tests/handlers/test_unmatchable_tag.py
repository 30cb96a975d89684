"""A `tag` filter that no stored tag can equal (too long, or outside the tag alphabet once trimmed and lower-cased)
matches nothing, and is answered as the ordinary empty page at both doors without a storage call: its partition
key could not even be formed (DynamoDB refuses keys over 2,048 bytes; that was a 500)."""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import pytest
from fastapi.testclient import TestClient

from adapters.memory import InMemoryMemoryRepository
from core.contract import RetrievalQuery
from core.limits import TAG_MAX_CHARS
from core.memories import MemoryService
from core.model import NewMemory
from core.repository import Matches
from handlers.auth import open_access
from handlers.http.app import create_app
from handlers.mcp import create_server
from tests.handlers.conftest import call_tool

UNMATCHABLE = {
    "3000-characters": "a" * 3000,
    "one-over-the-bound": "a" * (TAG_MAX_CHARS + 1),
    "the-issues-2040": "a" * 2040,
    "spaces": "two words",
    "non-ascii": "é" * 1500,
    "leading-dash": "-travel",
    "lone-surrogate": "a\ud800",
}
# A URL cannot carry a lone surrogate (its percent-encoding is UTF-8).
IN_A_URL = {name: tag for name, tag in UNMATCHABLE.items() if name != "lone-surrogate"}
EMPTY_PAGE = {"items": [], "total": 0, "offset": 0, "has_more": False}


class StorageNeverRead(InMemoryMemoryRepository):
    """A store that fails any retrieval: an answer from it was given without reading storage."""

    def find(self, namespace: str, query: RetrievalQuery) -> Matches:
        raise AssertionError(f"storage was read for tag {query.tag!r}")


@pytest.fixture
def unreadable() -> MemoryService:
    return MemoryService(StorageNeverRead())


@pytest.fixture
def http(unreadable: MemoryService) -> Iterator[TestClient]:
    with TestClient(
        create_app(unreadable, open_access(), version="test"),
        raise_server_exceptions=False,
    ) as client:
        yield client


@pytest.mark.parametrize("tag", UNMATCHABLE.values(), ids=UNMATCHABLE.keys())
def test_a_tag_no_stored_tag_can_equal_matches_nothing(tag: str) -> None:
    assert RetrievalQuery.parse({"tag": tag}).matches_nothing


@pytest.mark.parametrize("tag", ["travel", " Travel ", "a" * TAG_MAX_CHARS, "project:apollo", "\u212aelvin"])
def test_a_tag_that_a_memory_can_carry_is_looked_for(tag: str) -> None:
    assert not RetrievalQuery.parse({"tag": tag}).matches_nothing


def test_no_tag_filter_is_looked_for() -> None:
    assert not RetrievalQuery.parse({"q": "a" * 256}).matches_nothing


@pytest.mark.parametrize("tag", UNMATCHABLE.values(), ids=UNMATCHABLE.keys())
def test_the_service_answers_an_unmatchable_tag_with_the_empty_page_without_reading_storage(
    unreadable: MemoryService, tag: str
) -> None:
    page = unreadable.search("default", RetrievalQuery.parse({"tag": tag, "limit": 5, "offset": 7}))

    assert page.model_dump() == {**EMPTY_PAGE, "limit": 5, "offset": 7}


@pytest.mark.parametrize("tag", IN_A_URL.values(), ids=IN_A_URL.keys())
def test_an_unmatchable_tag_over_http_is_the_empty_page_not_a_500(http: TestClient, tag: str) -> None:
    response = http.get("/memories", params={"tag": tag})

    assert response.status_code == 200, response.text
    assert response.json() == {**EMPTY_PAGE, "limit": 10}


@pytest.mark.parametrize(("tool", "limit"), [("search_memories", 10), ("prime_memory_context", 20)])
@pytest.mark.parametrize("tag", UNMATCHABLE.values(), ids=UNMATCHABLE.keys())
def test_an_unmatchable_tag_over_mcp_is_the_empty_page_not_a_tool_error(
    unreadable: MemoryService, tool: str, limit: int, tag: str
) -> None:
    server = create_server(unreadable, open_access(), version="test")

    result = anyio.run(call_tool, server, tool, {"tag": tag})

    assert not result.is_error, result.content
    assert result.structured_content == {**EMPTY_PAGE, "limit": limit}


def test_a_tag_of_exactly_the_maximum_length_is_still_found(memory_service: MemoryService) -> None:
    tag = "t" * TAG_MAX_CHARS
    created = memory_service.create("default", NewMemory.parse({"content": "x", "tags": [tag]}))

    page = memory_service.search("default", RetrievalQuery.parse({"tag": tag.upper()}))

    assert [memory.id for memory in page.items] == [created.id]
