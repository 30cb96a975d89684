"""Recall's digests as DynamoDB holds them: terms are stored deflated, and every memory has its digest from its first
write, whatever service wrote it (one layout)."""

from __future__ import annotations

import pytest

from adapters.dynamodb import DynamoDBMemoryRepository
from core.contract import RetrievalQuery
from core.memories import MemoryService
from core.model import MemoryChanges, NewMemory
from core.recall.indexing import RecallIndexer
from core.recall.lexical import memory_terms
from core.recall.standin import StandInEmbedder
from tests.conftest import NAMESPACE, Engine, FakeClock

CONTENT = "The user prefers green tea in the morning, and espresso after lunch"
TAGS = ["preference", "food"]


@pytest.fixture
def repository(moto_engine: Engine, moto_table: str) -> DynamoDBMemoryRepository:
    return DynamoDBMemoryRepository(moto_engine.client, moto_table)


@pytest.fixture
def created(repository: DynamoDBMemoryRepository, clock: FakeClock) -> int:
    service = MemoryService(repository, clock, indexer=RecallIndexer(StandInEmbedder()))
    return service.create(NAMESPACE, NewMemory.parse({"content": CONTENT, "tags": TAGS})).id


def digest_item(engine: Engine, table: str, memory_id: int) -> dict[str, dict[str, object]]:
    key = {"pk": {"S": f"NS#{NAMESPACE}"}, "sk": {"S": f"RCL#{memory_id:010d}"}}
    item: dict[str, dict[str, object]] = engine.client.get_item(TableName=table, Key=key, ConsistentRead=True)["Item"]
    return item


def test_a_digest_holds_its_terms_in_fewer_bytes_than_the_text_they_spell(
    moto_engine: Engine, moto_table: str, created: int
) -> None:
    stored = digest_item(moto_engine, moto_table, created)["terms"]
    spelled = " ".join(memory_terms(CONTENT, TAGS)).encode()
    assert set(stored) == {"B"}
    assert len(stored["B"]) < len(spelled)  # type: ignore[arg-type]


def test_a_memory_created_by_a_service_without_an_indexer_still_has_the_digest_of_its_terms(
    repository: DynamoDBMemoryRepository, clock: FakeClock
) -> None:
    # One layout: every memory has its digest from its first write, whatever service wrote it.
    created = MemoryService(repository, clock).create(NAMESPACE, NewMemory.parse({"content": CONTENT, "tags": TAGS}))
    (candidate,) = repository.recall_candidates(NAMESPACE, RetrievalQuery.parse({}))
    assert (candidate.memory_id, candidate.terms, candidate.vector) == (
        created.id,
        tuple(memory_terms(CONTENT, TAGS)),
        None,
    )


def test_a_memory_whose_text_a_service_without_an_indexer_changes_keeps_a_digest_of_its_new_terms(
    repository: DynamoDBMemoryRepository, clock: FakeClock, created: int
) -> None:
    MemoryService(repository, clock).update(NAMESPACE, created, MemoryChanges.parse({"content": "espresso only"}))
    (candidate,) = repository.recall_candidates(NAMESPACE, RetrievalQuery.parse({}))
    assert candidate.terms == tuple(memory_terms("espresso only", TAGS))
