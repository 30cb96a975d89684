"""How often a search or a recall reads the namespace's id counter: once a request. The counter tells a whole read
how far the ids go and a warm copy whether the namespace is still the one it copied (its epoch, changes.py); one
GetItem answers both, so a second read of it within a request is a round trip and half a read unit for nothing."""

from __future__ import annotations

from typing import Any

import pytest

from adapters.dynamodb import DynamoDBMemoryRepository
from core.contract import RetrievalQuery
from core.memories import MemoryService
from core.model import NewMemory
from core.recall.indexing import RecallIndexer
from core.recall.query import RecallQuery
from core.recall.service import RecallService
from core.recall.standin import StandInEmbedder
from tests.conftest import Engine, FakeClock

NS = "team"


class CounterReads:
    """The reads of the namespace's id counter a client sends (GetItem, or a key of a BatchGetItem)."""

    def __init__(self, engine: Engine) -> None:
        self.count = 0
        engine.client.meta.events.register("before-parameter-build.dynamodb.*", self._record)

    def _record(self, model: Any, params: dict[str, Any], **_: Any) -> None:
        keys = [params["Key"]] if model.name == "GetItem" else []
        if model.name == "BatchGetItem":
            keys = [key for wanted in params["RequestItems"].values() for key in wanted["Keys"]]
        self.count += sum(1 for key in keys if key["sk"]["S"] == "COUNTER")


@pytest.fixture
def repository(moto_engine: Engine, moto_table: str, clock: FakeClock) -> DynamoDBMemoryRepository:
    store = DynamoDBMemoryRepository(moto_engine.client, moto_table)
    service = MemoryService(store, clock, indexer=RecallIndexer(StandInEmbedder()))
    for number in range(5):
        service.create(NS, NewMemory.parse({"content": f"tea in the garden, note {number}"}))
    return store


def test_a_warm_q_search_reads_the_id_counter_once(repository: DynamoDBMemoryRepository, moto_engine: Engine) -> None:
    query = RetrievalQuery.parse({"q": "garden"})
    assert repository.find(NS, query).total == 5  # the process's first: reads the copies whole
    reads = CounterReads(moto_engine)
    assert repository.find(NS, query).total == 5
    assert reads.count == 1


def test_a_warm_recall_reads_the_id_counter_once(
    repository: DynamoDBMemoryRepository, moto_engine: Engine, clock: FakeClock
) -> None:
    recall = RecallService(repository, StandInEmbedder(), clock=clock)
    question = RecallQuery(query="garden")
    assert recall.recall(NS, question, stamp=False).total == 5
    reads = CounterReads(moto_engine)
    assert recall.recall(NS, question, stamp=False).total == 5
    assert reads.count == 1


def test_a_cold_q_search_and_a_cold_recall_read_the_id_counter_once_each(
    repository: DynamoDBMemoryRepository, moto_engine: Engine, clock: FakeClock
) -> None:
    reads = CounterReads(moto_engine)
    assert repository.find(NS, RetrievalQuery.parse({"q": "garden"})).total == 5
    assert reads.count == 1
    recall = RecallService(repository, StandInEmbedder(), clock=clock)
    assert recall.recall(NS, RecallQuery(query="garden"), stamp=False).total == 5
    assert reads.count == 2
