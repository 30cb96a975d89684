"""Related memories at both doors (CONTRACT.md, Keeping memories true): `GET /memories/{id}/related` and the tool
`related_memories` give the same answer over the same memories and refuse bad input in the same words, stamping
nothing; and the answers of create_memory and of an update_memory that changes content name the related memories in a
second text block, the structured content staying the record. Each door gets its own twin of the data (same records,
same clock). The rules themselves are tested on every store in tests/integration/test_related_contract.py."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from fastapi.testclient import TestClient
from mcp.client import Client
from mcp.server import MCPServer
from mcp.types import CallToolResult, TextContent

from adapters.memory import InMemoryMemoryRepository
from core.access import SCOPES, Principal
from core.contract import RetrievalQuery
from core.digest import Vector
from core.errors import StorageUnavailableError
from core.memories import MemoryService
from core.model import NewMemory
from core.recall.embedding import EmbedderUnavailableError, Kind
from core.recall.indexing import RecallIndexer
from core.recall.service import RecallService
from core.recall.standin import StandInEmbedder
from core.repository.digests import Candidate, CandidateFilter, DigestChanges, DigestSnapshot
from handlers.auth import Authenticator, open_access
from handlers.http.app import create_app
from handlers.mcp import create_server
from tests.conftest import NAMESPACE, FakeClock
from tests.handlers.conftest import call_tool, tool_text
from tests.handlers.test_parity import seed

pytestmark = pytest.mark.anyio

STAND_IN = StandInEmbedder()
JOB = "The user works as a data analyst at Northwind Traders in Leeds"
REPEAT = "User is a data analyst at Northwind Traders"
BEES = "Bob keeps bees on the roof"


@dataclass
class Doors:
    mcp: Client
    http: TestClient
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


def http_related(http: TestClient, arguments: dict[str, Any]) -> Any:
    return http.get(f"/memories/{arguments['id']}/related", params={k: v for k, v in arguments.items() if k != "id"})


RELATED: list[dict[str, Any]] = [
    {"id": 1},  # dark roast coffee: the evening tea is related
    {"id": 8, "limit": 1},
    {"id": 8, "limit": "2"},
    {"id": 4, "limit": 10},  # lives in Porto: the invalid Lisbon is never related
    {"id": 10},  # itself invalid
    {"id": 2},
]


@pytest.mark.parametrize("arguments", RELATED, ids=[str(arguments) for arguments in RELATED])
async def test_related_memories_and_get_related_give_the_same_answer_and_stamp_nothing(
    doors: Doors, arguments: dict[str, Any]
) -> None:
    before = stamps(doors.http_memories)

    async with doors.mcp as client:
        result = await client.call_tool("related_memories", arguments)
    response = http_related(doors.http, arguments)

    assert response.status_code == 200, response.text
    assert not result.is_error, tool_text(result)
    answer = response.json()
    assert result.structured_content == answer
    assert set(answer) == {"items", "model", "floor", "waiting"}
    assert (answer["model"], answer["floor"], answer["waiting"]) == (STAND_IN.model, STAND_IN.related_floor, False)
    order = [(item["similarity"], item["memory"]["id"]) for item in answer["items"]]
    assert order == sorted(order, reverse=True)
    assert all(item["similarity"] > answer["floor"] for item in answer["items"])
    assert all(item["memory"]["status"] == "active" for item in answer["items"])
    assert arguments["id"] not in {item["memory"]["id"] for item in answer["items"]}
    assert stamps(doors.http_memories) == before == stamps(doors.mcp_memories)


async def test_the_seeded_coffees_closest_related_memory_is_the_evening_tea(doors: Doors) -> None:
    response = http_related(doors.http, {"id": 1})

    assert response.json()["items"][0]["memory"]["content"] == "The user drinks tea in the evening"


BAD: list[tuple[dict[str, Any], list[str]]] = [
    ({"id": 1, "limit": 0}, ["limit"]),
    ({"id": 1, "limit": 11}, ["limit"]),
    ({"id": 1, "limit": -3}, ["limit"]),
    ({"id": 1, "limit": "ten"}, ["limit"]),
    ({"id": 1, "limit": 2.5}, ["limit"]),
]


@pytest.mark.parametrize(("arguments", "fields"), BAD, ids=[str(arguments) for arguments, _ in BAD])
async def test_a_bad_limit_is_refused_by_both_doors_in_the_same_words(
    doors: Doors, arguments: dict[str, Any], fields: list[str]
) -> None:
    async with doors.mcp as client:
        result = await client.call_tool("related_memories", arguments)
    response = http_related(doors.http, arguments)

    assert response.status_code == 422
    problem = response.json()
    assert [error["field"] for error in problem["errors"]] == fields
    assert result.is_error
    assert tool_text(result) == problem["detail"]


async def test_the_contracts_words_for_a_limit_over_ten(doors: Doors) -> None:
    assert http_related(doors.http, {"id": 1, "limit": 11}).json()["detail"] == "limit: must be at most 10"
    assert http_related(doors.http, {"id": 1, "limit": 0}).json()["detail"] == "limit: must be 1 or more"


@pytest.mark.parametrize("memory_id", [12, 99, "0", "abc"])
async def test_a_deleted_missing_or_impossible_id_is_not_found_at_both_doors(doors: Doors, memory_id: object) -> None:
    async with doors.mcp as client:
        result = await client.call_tool("related_memories", {"id": memory_id})
    response = http_related(doors.http, {"id": memory_id})

    assert response.status_code == 404
    assert result.is_error
    assert tool_text(result) == f"{response.json()['detail']}; find the right id with search_memories"


async def test_an_unknown_argument_is_ignored_by_get_related_and_refused_by_related_memories(doors: Doors) -> None:
    async with doors.mcp as client:
        result = await client.call_tool("related_memories", {"id": 1, "page": 2})
    response = doors.http.get("/memories/1/related", params={"page": 2})

    assert response.status_code == 200
    assert result.is_error
    assert tool_text(result) == "page: is not a field of this request"


# --- the write's answer ---------------------------------------------------------------------------------------------


class Outage(StandInEmbedder):
    """The stand-in model while it is unavailable: every call fails as an unreachable model does."""

    def embed(self, texts: Sequence[str], kind: Kind) -> list[Vector]:
        raise EmbedderUnavailableError("the model is unreachable")


class ReadsFailing(InMemoryMemoryRepository):
    """The in-memory store whose digest reads fail (throttled) once `failing` is set: writes still land."""

    failing = False

    def recall_candidates(self, namespace: str, filters: CandidateFilter) -> list[Candidate]:
        if self.failing:
            raise StorageUnavailableError("storage is throttled")
        return super().recall_candidates(namespace, filters)

    # What recall's warm index reads instead.
    def digest_snapshot(self, namespace: str) -> DigestSnapshot:
        if self.failing:
            raise StorageUnavailableError("storage is throttled")
        return super().digest_snapshot(namespace)

    def digest_changes(self, namespace: str, mark: object) -> DigestChanges | None:
        if self.failing:
            raise StorageUnavailableError("storage is throttled")
        return super().digest_changes(namespace, mark)


@dataclass
class Writer:
    server: MCPServer
    memories: MemoryService
    store: InMemoryMemoryRepository


def writer(
    *, model: StandInEmbedder = STAND_IN, authenticate: Authenticator | None = None, store: InMemoryMemoryRepository
) -> Writer:
    clock = FakeClock()
    memories = MemoryService(store, clock, indexer=RecallIndexer(model))
    recall = RecallService(store, STAND_IN, clock=clock)
    return Writer(
        create_server(memories, authenticate or open_access(), version="test", recall=recall), memories, store
    )


@pytest.fixture
def written() -> Writer:
    return writer(store=InMemoryMemoryRepository())


def stored(memories: MemoryService, content: str) -> int:
    return memories.create(NAMESPACE, NewMemory.parse({"content": content})).id


def blocks(result: CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, TextContent)]


def record_alone(result: CallToolResult, memories: MemoryService) -> None:
    """The answer is the record exactly as before: structured, and the same JSON as its one text block."""
    assert not result.is_error, tool_text(result)
    assert result.structured_content is not None
    expected = memories.get(NAMESPACE, result.structured_content["id"], stamp=False).model_dump(mode="json")
    assert result.structured_content == expected
    assert json.loads(blocks(result)[0]) == expected


async def test_create_memorys_answer_names_a_closely_related_memory_and_omits_an_unrelated_one(written: Writer) -> None:
    job, bees = stored(written.memories, JOB), stored(written.memories, BEES)

    result = await call_tool(written.server, "create_memory", {"content": REPEAT})

    texts = blocks(result)
    assert len(texts) == 2
    assert result.structured_content is not None
    created = result.structured_content["id"]
    assert result.structured_content == written.memories.get(NAMESPACE, created, stamp=False).model_dump(mode="json")
    assert json.loads(texts[0]) == result.structured_content
    note = texts[1]
    assert f"- memory {job} (similarity 0." in note
    assert JOB in note
    assert f"memory {bees}" not in note
    assert BEES not in note
    assert f"supersede_memories(id={created}, ids=[{job}])" in note
    assert f"supersedes=[{job}, {created}]" in note  # a merge
    assert f"delete_memory(id={created})" in note


async def test_create_memory_answers_the_record_alone_when_nothing_is_related(written: Writer) -> None:
    stored(written.memories, BEES)

    result = await call_tool(written.server, "create_memory", {"content": JOB})

    assert len(blocks(result)) == 1
    record_alone(result, written.memories)


async def test_a_long_related_memory_is_named_by_an_excerpt(written: Writer) -> None:
    long = f"{JOB}.\n\nShe works {'as a data analyst in Leeds, ' * 6}and mentors the juniors."
    stored(written.memories, long)

    result = await call_tool(written.server, "create_memory", {"content": JOB})

    line = next(line for line in blocks(result)[1].splitlines() if line.startswith("- memory 1 "))
    excerpt = line.split("): ", 1)[1]
    assert excerpt.startswith(f"{JOB}. She works as a data analyst in Leeds, as a")
    assert excerpt.endswith("\u2026")
    assert len(excerpt) == 160


async def test_a_create_that_supersedes_does_not_name_what_it_superseded(written: Writer) -> None:
    old, repeat = stored(written.memories, JOB), stored(written.memories, REPEAT)

    result = await call_tool(written.server, "create_memory", {"content": JOB, "supersedes": [old]})

    assert not result.is_error, tool_text(result)
    note = blocks(result)[1]
    assert f"- memory {repeat} " in note
    assert f"memory {old} " not in note


async def test_an_update_of_content_names_related_memories_and_one_of_tags_alone_does_not(written: Writer) -> None:
    job, other = stored(written.memories, JOB), stored(written.memories, BEES)

    retagged = await call_tool(written.server, "update_memory", {"id": other, "tags": ["animals"]})
    assert len(blocks(retagged)) == 1
    record_alone(retagged, written.memories)

    rewritten = await call_tool(written.server, "update_memory", {"id": other, "content": REPEAT})

    assert rewritten.structured_content == written.memories.get(NAMESPACE, other, stamp=False).model_dump(mode="json")
    assert f"- memory {job} (similarity" in blocks(rewritten)[1]


async def test_a_key_without_read_is_told_nothing_of_related_memories() -> None:
    write_only = Principal(NAMESPACE, frozenset(SCOPES) - {"read"})
    keyed = writer(authenticate=lambda _: write_only, store=InMemoryMemoryRepository())
    stored(keyed.memories, JOB)

    result = await call_tool(keyed.server, "create_memory", {"content": REPEAT})

    assert len(blocks(result)) == 1
    record_alone(result, keyed.memories)


async def test_while_the_model_is_unavailable_a_write_succeeds_and_says_nothing_of_related_memories() -> None:
    out = writer(model=Outage(), store=InMemoryMemoryRepository())
    stored(out.memories, JOB)

    result = await call_tool(out.server, "create_memory", {"content": JOB})

    assert len(blocks(result)) == 1
    record_alone(result, out.memories)


async def test_a_write_whose_related_read_fails_after_it_landed_answers_the_record() -> None:
    store = ReadsFailing()
    failing = writer(store=store)
    stored(failing.memories, JOB)
    store.failing = True

    result = await call_tool(failing.server, "create_memory", {"content": REPEAT})

    assert len(blocks(result)) == 1
    record_alone(result, failing.memories)
