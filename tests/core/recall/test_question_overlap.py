"""A recall's question is embedded while its digests are read, not before: the model's round trip (Bedrock's,
deployed) overlaps the storage read instead of adding to it."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from adapters.memory import InMemoryMemoryRepository
from core.digest import Vector
from core.memories import MemoryService
from core.model import NewMemory
from core.recall.embedding import Kind
from core.recall.indexing import RecallIndexer
from core.recall.query import RecallQuery
from core.recall.service import RecallService
from core.recall.standin import StandInEmbedder
from core.repository.digests import Candidate, CandidateFilter, DigestSnapshot
from tests.conftest import FakeClock

NS = "alice"
# Long enough never to be reached when the two overlap; a recall that runs them one after the other waits this out.
PATIENCE_SECONDS = 10.0


class ReadingStore(InMemoryMemoryRepository):
    """The in-memory store, saying when recall starts reading its digests."""

    def __init__(self) -> None:
        super().__init__()
        self.reading = threading.Event()

    def recall_candidates(self, namespace: str, filters: CandidateFilter) -> list[Candidate]:
        self.reading.set()
        return super().recall_candidates(namespace, filters)

    def digest_snapshot(self, namespace: str) -> DigestSnapshot:  # what a recall's warm index reads first
        self.reading.set()
        return super().digest_snapshot(namespace)


class ModelThatAnswersOnceReadingStarted:
    """The stand-in, answering a question only once the digests are being read (None of them read: no vector)."""

    model = StandInEmbedder.model
    floor = StandInEmbedder.floor
    related_floor = StandInEmbedder.related_floor
    dimensions = StandInEmbedder.dimensions

    def __init__(self, store: ReadingStore) -> None:
        self._store = store
        self.overlapped: list[bool] = []

    def embed(self, texts: Sequence[str], kind: Kind) -> list[Vector]:
        if kind == "query":
            self.overlapped.append(self._store.reading.wait(PATIENCE_SECONDS))
        return StandInEmbedder().embed(texts, kind)


def test_the_question_is_embedded_while_the_digests_are_read() -> None:
    store = ReadingStore()
    model = ModelThatAnswersOnceReadingStarted(store)
    MemoryService(store, FakeClock(), indexer=RecallIndexer(StandInEmbedder())).create(
        NS, NewMemory.parse({"content": "The user drinks green tea"})
    )

    page = RecallService(store, model).recall(NS, RecallQuery.parse({"query": "what tea"}))

    assert model.overlapped == [True]
    assert page.ranking.semantic
    assert [item.memory.content for item in page.items] == ["The user drinks green tea"]
