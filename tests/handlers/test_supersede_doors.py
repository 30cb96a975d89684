"""Superseding on both doors (CONTRACT.md, Keeping memories true): the same data and arguments give the same records,
and the same refusals in the same words; the twins of test_parity's data, one per door."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.handlers.conftest import tool_text
from tests.handlers.test_parity import Doors, twin_doors

pytestmark = pytest.mark.anyio


@pytest.fixture
def doors() -> Iterator[Doors]:
    with twin_doors() as both:
        yield both


# test_parity's seed: 1-11 live (10 invalid), 12 deleted.
REFUSALS: list[tuple[dict[str, Any], list[str]]] = [
    ({"ids": [99]}, ["ids[0]"]),
    ({"ids": [3, 12]}, ["ids[1]"]),
    ({"ids": [3, 3]}, ["ids[1]"]),
    ({"ids": [4, 1]}, ["ids[1]"]),
    ({"ids": [99, 12, 5, 5]}, ["ids[0]", "ids[1]", "ids[3]"]),
    ({"ids": []}, ["ids"]),
    ({"ids": list(range(2, 13))}, ["ids"]),
    ({"ids": [0]}, ["ids[0]"]),
    ({"ids": ["3"]}, ["ids[0]"]),
    ({"ids": [2.5]}, ["ids[0]"]),
    ({}, ["ids"]),
]


@pytest.mark.parametrize(("body", "fields"), REFUSALS)
async def test_a_supersede_that_cannot_be_made_is_refused_by_both_doors_in_the_same_words_and_writes_nothing(
    doors: Doors, body: dict[str, Any], fields: list[str]
) -> None:
    async with doors.mcp as client:
        result = await client.call_tool("supersede_memories", {"id": 1, **body})
        invalid = await client.call_tool("search_memories", {"status": "invalid"})
    response = doors.http.post("/memories/1/supersede", json=body)

    assert response.status_code == 422, response.text
    problem = response.json()
    assert [error["field"] for error in problem["errors"]] == fields
    assert result.is_error
    assert tool_text(result) == problem["detail"]
    assert invalid.structured_content is not None
    assert invalid.structured_content["total"] == 1
    assert doors.http.get("/memories", params={"status": "invalid"}).json()["total"] == 1


async def test_a_supersede_answers_the_superseded_records_alike_on_both_doors(doors: Doors) -> None:
    async with doors.mcp as client:
        result = await client.call_tool("supersede_memories", {"id": 4, "ids": [10, 3]})
    response = doors.http.post("/memories/4/supersede", json={"ids": [10, 3]})

    assert response.status_code == 200, response.text
    assert not result.is_error, tool_text(result)
    assert result.structured_content == response.json()
    items = response.json()["items"]
    assert [(item["id"], item["status"]) for item in items] == [(10, "invalid"), (3, "invalid")]


async def test_a_create_that_supersedes_is_answered_alike_and_refused_alike(doors: Doors) -> None:
    body = {"content": "The user lives in Braga", "tags": ["place"], "supersedes": [4]}
    async with doors.mcp as client:
        created = await client.call_tool("create_memory", body)
        refused = await client.call_tool("create_memory", {**body, "supersedes": [4, 12]})
    response = doors.http.post("/memories", json=body)
    refusal = doors.http.post("/memories", json={**body, "supersedes": [4, 12]})

    assert response.status_code == 201, response.text
    assert created.structured_content == response.json()
    assert "supersedes" not in response.json()
    assert refusal.status_code == 422, refusal.text
    assert [error["field"] for error in refusal.json()["errors"]] == ["supersedes[1]"]  # 4, now invalid, may be again
    assert tool_text(refused) == refusal.json()["detail"]


async def test_a_supersede_by_a_missing_deleted_or_invalid_memory_is_refused_alike(doors: Doors) -> None:
    async with doors.mcp as client:
        missing = await client.call_tool("supersede_memories", {"id": 99, "ids": [3]})
        deleted = await client.call_tool("supersede_memories", {"id": 12, "ids": [3]})
        invalid = await client.call_tool("supersede_memories", {"id": 10, "ids": [3]})
    answers = [doors.http.post(f"/memories/{i}/supersede", json={"ids": [3]}) for i in (99, 12, 10)]

    assert [answer.status_code for answer in answers] == [404, 404, 422]
    assert answers[2].json()["errors"][0]["field"] == "id"
    for result, answer in zip((missing, deleted, invalid), answers, strict=True):
        assert result.is_error
        assert tool_text(result).startswith(answer.json()["detail"])
