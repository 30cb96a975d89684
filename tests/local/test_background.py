"""`serve`'s background embedding (local.purging.start_embedding): what waits for a recall vector gets it within a
run, and a run the model cannot serve is reported and tried again, until the thread is stopped."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import timedelta

import pytest

from core.digest import Vector
from core.memories import MemoryService
from core.model import NewMemory
from core.recall.backfill import Backfill
from core.recall.embedding import EmbedderUnavailableError, Kind
from core.recall.indexing import RecallIndexer
from core.recall.standin import StandInEmbedder
from core.repository.memory import InMemoryMemoryRepository
from local.purging import start_embedding
from tests.conftest import FakeClock

EVERY = timedelta(milliseconds=10)


class Recovering(StandInEmbedder):
    """Unavailable for its first call, then the stand-in."""

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts: Sequence[str], kind: Kind) -> list[Vector]:
        self.calls += 1
        if self.calls == 1:
            raise EmbedderUnavailableError("the model is unreachable")
        return super().embed(texts, kind)


def waiting_store(count: int) -> InMemoryMemoryRepository:
    store = InMemoryMemoryRepository()
    writer = MemoryService(store, FakeClock(), indexer=RecallIndexer(None))  # as an import leaves them
    for n in range(count):
        writer.create("alice", NewMemory.parse({"content": f"note {n}"}))
    return store


def wait_for(done: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 5
    while not done() and time.monotonic() < deadline:
        time.sleep(0.01)


def test_serve_embeds_in_the_background_what_waits_for_a_vector(capsys: pytest.CaptureFixture[str]) -> None:
    store = waiting_store(3)

    stop = start_embedding(Backfill(store, StandInEmbedder()), EVERY)
    try:
        wait_for(lambda: not store.unembedded(10))
    finally:
        stop()

    assert store.unembedded(10) == []
    assert f"embedded 3 memories waiting for their recall vector ({StandInEmbedder.model})" in capsys.readouterr().out


def test_a_background_run_the_model_cannot_serve_is_reported_and_tried_again(
    capsys: pytest.CaptureFixture[str],
) -> None:
    store, model = waiting_store(1), Recovering()

    stop = start_embedding(Backfill(store, model), EVERY)
    try:
        wait_for(lambda: not store.unembedded(10))
    finally:
        stop()
    calls = model.calls
    time.sleep(0.05)

    assert store.unembedded(10) == []
    assert model.calls == calls  # stopped: no run after the stop returned
    captured = capsys.readouterr()
    assert "embedding of waiting memories failed" in captured.err
    assert "the model is unreachable" in captured.err
