"""`serve`'s background embedding (local.purging.start_embedding): what waits for a recall vector gets it within a
run, and a run the model cannot serve is reported and tried again, until the thread is stopped; `serve --no-embed`
starts none (local.serve.embed_in_background)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import timedelta

import pytest

from adapters.memory import InMemoryMemoryRepository
from core.digest import Vector
from core.memories import MemoryService
from core.model import NewMemory
from core.recall.backfill import Backfill
from core.recall.embedding import EmbedderUnavailableError, Kind
from core.recall.indexing import RecallIndexer
from core.recall.standin import StandInEmbedder
from local.cli import build_parser
from local.purging import start_embedding
from local.serve import embed_in_background
from tests.conftest import FakeClock
from tests.threads import all_ended, threads_started

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
    deadline = time.monotonic() + 60  # a ceiling only a stuck thread reaches, never a speed claim
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

    with threads_started() as embedding:
        stop = start_embedding(Backfill(store, model), EVERY)
    try:
        wait_for(lambda: not store.unembedded(10))
    finally:
        stop()

    assert store.unembedded(10) == []
    assert embedding  # the thread that embedded ...
    assert all_ended(embedding)  # ... has ended when stop returns: no run can come after it
    captured = capsys.readouterr()
    assert "embedding of waiting memories failed" in captured.err
    assert "the model is unreachable" in captured.err


def test_serve_with_no_embed_leaves_what_waits_waiting_and_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    store = waiting_store(3)

    with threads_started() as started:
        stop = embed_in_background(Backfill(store, StandInEmbedder()), every=None)
    stop()

    assert started == set()  # nothing was set going that could embed later

    assert len(store.unembedded(10)) == 3
    out = capsys.readouterr().out
    assert f"recall model           {StandInEmbedder.model} (--no-embed: a memory waiting for its vector waits)" in out
    assert "embedded" not in out


def test_serve_without_no_embed_embeds_what_waits_and_names_its_model(capsys: pytest.CaptureFixture[str]) -> None:
    store = waiting_store(3)

    stop = embed_in_background(Backfill(store, StandInEmbedder()), every=EVERY)
    try:
        wait_for(lambda: not store.unembedded(10))
    finally:
        stop()

    assert store.unembedded(10) == []
    assert "(a memory waiting for its vector gets it within seconds)" in capsys.readouterr().out


@pytest.mark.parametrize(("arguments", "embeds"), [([], True), (["--no-embed"], False)])
def test_serve_embeds_in_the_background_unless_told_no_embed(arguments: list[str], embeds: bool) -> None:
    args = build_parser().parse_args(["serve", *arguments])

    assert args.no_embed is not embeds
