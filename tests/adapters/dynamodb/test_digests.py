"""Recall's digests as DynamoDB holds them: terms are stored deflated, and digests written before that (terms as a
string) are still read, so a table needs no rewrite when it is upgraded."""

from __future__ import annotations

import pytest

from adapters.dynamodb import DynamoDBMemoryRepository
from core.contract import RetrievalQuery
from core.memories import MemoryService
from core.model import NewMemory
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


def test_a_digest_written_with_its_terms_as_a_string_is_read_as_one_written_now(
    moto_engine: Engine, moto_table: str, repository: DynamoDBMemoryRepository, created: int
) -> None:
    (now,) = repository.recall_candidates(NAMESPACE, RetrievalQuery.parse({}))
    older = digest_item(moto_engine, moto_table, created) | {"terms": {"S": " ".join(now.terms)}}
    moto_engine.client.put_item(TableName=moto_table, Item=older)
    assert repository.recall_candidates(NAMESPACE, RetrievalQuery.parse({})) == [now]
    assert now.terms == tuple(memory_terms(CONTENT, TAGS))
