"""The embedding stand-in for fast tests: deterministic, instant, and no model at all."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Final

from core.digest import Vector
from core.recall.embedding import Kind
from core.words import terms

STAND_IN_DIMENSIONS: Final = 256
# Above it, two memories share enough words to be taken as versions or repeats of one fact: measured on eval/related
# (`python -m recall_eval.related`), as each model's is.
STAND_IN_RELATED_FLOOR: Final = 0.34


class StandInEmbedder:
    """NOT a model: a deterministic stand-in for fast tests. Each stemmed word is hashed to one of 256 dimensions with
    a sign, so texts sharing words are similar and nothing else is; the same text always gives the same vector."""

    model = "stand-in:hashed-words-256"
    floor = 0.0
    related_floor = STAND_IN_RELATED_FLOOR
    dimensions = STAND_IN_DIMENSIONS

    def embed(self, texts: Sequence[str], kind: Kind) -> list[Vector]:
        return [self._vector(terms(text)) for text in texts]

    @staticmethod
    def _vector(words: Sequence[str]) -> Vector:
        values = [0.0] * STAND_IN_DIMENSIONS
        for word in words:
            digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
            values[int.from_bytes(digest[:2]) % STAND_IN_DIMENSIONS] += 1.0 if digest[2] & 1 else -1.0
        if not any(values):
            values[0] = 1.0  # a text without words still gets a (shared) direction
        return Vector.quantise(values)
