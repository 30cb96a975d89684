"""A slow embedding model never holds a request (issue 38): a write waits for its memory's vector at most the
indexer's wait, then is stored without one (the backfill embeds it); while that embedding still runs, later writes
do not queue behind it; a recall waits for its question's vector at most the service's wait, then ranks without
meaning. A short wait keeps these tests quick; nothing here measures time."""

from __future__ import annotations

from adapters.memory import InMemoryMemoryRepository
from core.digest import Digest
from core.memories import MemoryService
from core.model import NewMemory
from core.recall.backfill import Backfill
from core.recall.indexing import RecallIndexer
from core.recall.query import RecallQuery
from core.recall.service import RecallService
from core.recall.standin import StandInEmbedder
from tests.conftest import FakeClock
from tests.embedding_models import TINY_WAIT_SECONDS, SlowModel, wait_for

NS = "alice"


def test_a_write_waits_for_its_vector_at_most_the_wait_and_is_digested_without_one() -> None:
    model = SlowModel()
    indexer = RecallIndexer(model, wait_seconds=TINY_WAIT_SECONDS)
    try:
        digest = indexer.digest("The user slowly learns Korean", ["language"])

        assert digest == Digest()
        assert not model.finished_slow.is_set()
    finally:
        model.release.set()


def test_while_an_embedding_outlasts_its_wait_writes_do_not_queue_behind_it_and_ask_again_once_it_is_answered() -> None:
    model = SlowModel()
    indexer = RecallIndexer(model, wait_seconds=TINY_WAIT_SECONDS)
    try:
        assert indexer.digest("The user slowly learns Korean", []).vector is None
        assert indexer.digest("The user lives in Lyon", []).vector is None
        assert not model.finished_slow.is_set()
        assert model.calls == 1  # the second write did not wait for the model, which was still busy
    finally:
        model.release.set()

    wait_for(lambda: indexer.digest("The user lives in Lyon", []).vector is not None, "a write embedded again")


def test_a_recall_waits_for_its_question_at_most_the_wait_and_then_ranks_without_meaning() -> None:
    store, clock, model = InMemoryMemoryRepository(), FakeClock(), SlowModel()
    MemoryService(store, clock, indexer=RecallIndexer(StandInEmbedder())).create(
        NS, NewMemory.parse({"content": "The user drinks green tea"})
    )
    recall = RecallService(store, model, clock=clock, wait_seconds=TINY_WAIT_SECONDS)
    try:
        page = recall.recall(NS, RecallQuery.parse({"query": "what does the user slowly drink?"}))

        assert (page.ranking.semantic, page.ranking.unembedded, page.total) == (False, 0, 1)
        assert [item.memory.content for item in page.items] == ["The user drinks green tea"]
        assert not model.finished_slow.is_set()
    finally:
        model.release.set()


def test_a_memory_stored_without_its_vector_is_embedded_by_the_backfill_once_the_model_answers() -> None:
    store, clock, model = InMemoryMemoryRepository(), FakeClock(), SlowModel()
    memories = MemoryService(store, clock, indexer=RecallIndexer(model, wait_seconds=TINY_WAIT_SECONDS))
    recall = RecallService(store, StandInEmbedder(), clock=clock)
    question = RecallQuery.parse({"query": "what is the user learning?"})
    try:
        memories.create(NS, NewMemory.parse({"content": "The user slowly learns Korean"}))
        assert recall.recall(NS, question).ranking.unembedded == 1
    finally:
        model.release.set()

    assert Backfill(store, model).run().embedded == 1
    assert recall.recall(NS, question).ranking.unembedded == 0
