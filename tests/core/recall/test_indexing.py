"""core.recall.indexing: a memory's digest is its terms and, when the model can make one now, its vector; an
unavailable model is not asked again for a while, so writes do not each wait on its timeouts."""

from __future__ import annotations

from collections.abc import Sequence

from core.digest import Digest, Vector
from core.recall.embedding import EmbedderUnavailableError, Kind, passage_text
from core.recall.indexing import PAUSE_AFTER_FAILURE_SECONDS, RecallIndexer
from core.recall.standin import StandInEmbedder


class Flaky(StandInEmbedder):
    """The stand-in, unavailable while `down`; counts the calls it was asked."""

    def __init__(self) -> None:
        self.down = False
        self.calls = 0

    def embed(self, texts: Sequence[str], kind: Kind) -> list[Vector]:
        self.calls += 1
        if self.down:
            raise EmbedderUnavailableError("throttled")
        return super().embed(texts, kind)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def embedded(content: str, tags: list[str]) -> Digest:
    (vector,) = StandInEmbedder().embed([passage_text(content, tags)], "passage")
    return Digest(vector, StandInEmbedder.model)


def test_a_digest_holds_the_passage_vector_of_the_content_and_tags() -> None:
    assert RecallIndexer(StandInEmbedder()).digest("Eats no meat", ["diet:vegetarian"]) == embedded(
        "Eats no meat", ["diet:vegetarian"]
    )


def test_without_a_model_a_digest_holds_no_vector() -> None:
    assert RecallIndexer(None).digest("Eats no meat", ["food"]) == Digest()


def test_after_the_model_fails_it_is_not_asked_again_until_the_pause_is_over() -> None:
    model, clock = Flaky(), Clock()
    indexer = RecallIndexer(model, clock)
    model.down = True

    assert indexer.digest("one", []).vector is None
    model.down = False
    clock.now += PAUSE_AFTER_FAILURE_SECONDS - 1
    assert indexer.digest("two", []) == Digest()
    assert model.calls == 1

    clock.now += 1
    assert indexer.digest("three", []) == embedded("three", [])
    assert model.calls == 2
