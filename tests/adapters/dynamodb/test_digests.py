"""Recall's digests as DynamoDB holds them: the record but its stamp, its content deflated, so a recall answers from
them; every memory has its digest from its first write, whatever service wrote it (one layout)."""

from __future__ import annotations

from collections import Counter

import pytest

from adapters.dynamodb import DynamoDBMemoryRepository
from adapters.dynamodb.codec import inflated
from core.contract import RetrievalQuery
from core.memories import MemoryService
from core.model import MemoryChanges, NewMemory
from core.recall.indexing import RecallIndexer
from core.recall.standin import StandInEmbedder
from core.words import memory_terms
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


def test_a_digest_holds_its_content_deflated_and_no_creation_time_while_it_is_the_update_time(
    moto_engine: Engine, moto_table: str, created: int
) -> None:
    item = digest_item(moto_engine, moto_table, created)
    assert set(item["text"]) == {"B"}
    assert inflated(item["text"]["B"]) == CONTENT  # type: ignore[arg-type]
    assert len(item["text"]["B"]) < len(CONTENT.encode())  # type: ignore[arg-type]
    assert "terms" not in item
    assert "created_at" not in item


def test_a_memory_created_by_a_service_without_an_indexer_still_has_its_digest_whose_terms_recall_counts(
    repository: DynamoDBMemoryRepository, clock: FakeClock
) -> None:
    # One layout: every memory has its digest from its first write, whatever service wrote it.
    created = MemoryService(repository, clock).create(NAMESPACE, NewMemory.parse({"content": CONTENT, "tags": TAGS}))
    (candidate,) = repository.recall_candidates(NAMESPACE, RetrievalQuery.parse({}))
    assert (candidate.memory_id, candidate.record(), candidate.vector) == (created.id, created, None)
    assert candidate.term_counts == Counter(memory_terms(CONTENT, TAGS))
    assert candidate.term_total == len(memory_terms(CONTENT, TAGS))


@pytest.mark.parametrize(
    "change",
    [
        {"content": "espresso only"},  # a new digest
        {"memory_type": "identity"},  # the stored digest follows
        {"status": "invalid"},
    ],
)
def test_a_digest_stands_for_the_record_after_each_kind_of_change_but_its_stamp(
    repository: DynamoDBMemoryRepository, clock: FakeClock, created: int, change: dict[str, str]
) -> None:
    clock.advance(minutes=5)
    updated = MemoryService(repository, clock).update(NAMESPACE, created, MemoryChanges.parse(change))
    (candidate,) = repository.recall_candidates(NAMESPACE, RetrievalQuery.parse({"status": updated.status}))
    assert updated.created_at != updated.updated_at
    assert candidate.record() == updated.model_copy(update={"last_accessed_at": None})
