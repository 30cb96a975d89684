"""What recall keeps of a memory beside its record, its digest: the memory's embedding, an int8 `Vector`, with the name
of the model that made it. The core computes a digest before a write (an `Indexer`: core.recall.indexing over an
embedding model) and the store keeps it in the same atomic write as the memory's change, with what recall reads of the
memory itself (core.repository.digests.Candidate: its content, tags and timestamps, whose terms it counts), so recall
reads digests (small) instead of records. A digest without a vector (the model was unavailable, or the memory
came from an import) waits for the backfill (core.recall.backfill), which embeds it later.

This module sits below the storage port, which carries digests, and needs no package beyond the standard library: the
purge function, which embeds what waits, ships it without recall's extra.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Protocol

_CODE_MAX: Final = 127


@dataclass(frozen=True)
class Vector:
    """An embedding quantised to int8: `codes` (one signed byte per dimension) times `scale` approximates it."""

    codes: bytes
    scale: float

    @classmethod
    def quantise(cls, values: Sequence[float]) -> Vector:
        """The int8 codes of `values`: each divided by the largest magnitude / 127 and rounded (half away from zero)."""
        if not values:
            raise ValueError("an embedding has at least one dimension")
        largest = max(abs(value) for value in values)
        scale = largest / _CODE_MAX if largest > 0 else 1.0
        codes = array("b", (int(math.copysign(math.floor(abs(value) / scale + 0.5), value)) for value in values))
        return cls(codes.tobytes(), scale)

    @property
    def dimensions(self) -> int:
        return len(self.codes)


@dataclass(frozen=True)
class Digest:
    """A memory's vector, once embedded, and the model that made it (both or neither)."""

    vector: Vector | None = None
    model: str | None = None

    def __post_init__(self) -> None:
        if (self.vector is None) != (self.model is None):
            raise ValueError("a digest's vector comes with the name of its model, and only with one")


class Indexer(Protocol):
    """Computes the digest of a memory's content and tags. Never fails because the embedding model is unavailable:
    the digest then has no vector (the backfill embeds it later)."""

    def digest(self, content: str, tags: Sequence[str]) -> Digest: ...
