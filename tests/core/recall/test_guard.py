"""core.recall.guard, the embedding port's one guard: whatever a model raises (but an interrupt) and whatever malformed
answer it gives is EmbedderUnavailableError, logged with its cause and never with the text; a good answer passes as
it is; and the backfill, which embeds through it, meets a failing model as an unavailable one (serve's background
embedding reports it and tries again later, instead of dying)."""

from __future__ import annotations

import logging

import pytest

from adapters.memory import InMemoryMemoryRepository
from core.memories import MemoryService
from core.model import NewMemory
from core.recall.backfill import Backfill
from core.recall.embedding import EmbedderUnavailableError
from core.recall.guard import GuardedEmbedder, guarded
from core.recall.indexing import RecallIndexer
from core.recall.standin import StandInEmbedder
from tests.conftest import FakeClock
from tests.embedding_models import FAILURES, FailingModel, raising

SECRET = "The user's PIN is 4921"


@pytest.mark.parametrize("failure", list(FAILURES))
def test_every_failure_of_the_model_is_unavailable_and_logged_without_the_text(
    failure: str, caplog: pytest.LogCaptureFixture
) -> None:
    model = guarded(FailingModel(FAILURES[failure]))

    with caplog.at_level(logging.WARNING), pytest.raises(EmbedderUnavailableError, match="is unavailable: it "):
        model.embed([SECRET], "passage")

    (record,) = caplog.records
    assert record.levelno == logging.WARNING
    assert StandInEmbedder.model in record.getMessage()
    assert "4921" not in record.getMessage()


def test_an_exception_is_logged_by_its_type_and_place_not_by_its_message(caplog: pytest.LogCaptureFixture) -> None:
    model = guarded(FailingModel(raising(ValueError(f"cannot tokenise {SECRET!r}"))))

    with caplog.at_level(logging.WARNING), pytest.raises(EmbedderUnavailableError) as raised:
        model.embed([SECRET], "query")

    assert "it failed (ValueError at embedding_models.py:" in caplog.text
    assert "4921" not in caplog.text
    assert "4921" not in str(raised.value)


@pytest.mark.parametrize("interrupt", [KeyboardInterrupt, SystemExit])
def test_an_interrupt_is_no_failure_of_the_model_and_goes_on(interrupt: type[BaseException]) -> None:
    with pytest.raises(interrupt):
        guarded(FailingModel(raising(interrupt()))).embed(["x"], "query")


def test_a_good_answer_passes_as_it_is_and_a_guarded_model_is_guarded_once() -> None:
    model = guarded(StandInEmbedder())

    assert model.embed(["The user drinks tea"], "passage") == StandInEmbedder().embed(
        ["The user drinks tea"], "passage"
    )
    assert guarded(model) is model
    assert isinstance(model, GuardedEmbedder)
    assert (model.model, model.floor, model.dimensions) == (StandInEmbedder.model, 0.0, 256)


def test_the_backfill_meets_a_failing_model_as_an_unavailable_one() -> None:
    store = InMemoryMemoryRepository()
    MemoryService(store, FakeClock(), indexer=RecallIndexer(None)).create("alice", NewMemory.parse({"content": "x"}))

    with pytest.raises(EmbedderUnavailableError):
        Backfill(store, FailingModel(raising(TypeError("a bug")))).run()
