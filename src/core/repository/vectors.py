"""The vector search port: a managed nearest-neighbour engine (Amazon S3 Vectors: adapters/s3vectors.py) that answers
a recall over a large namespace without reading its every digest. It holds a copy of the digests' vectors, kept in
step from the table's stream; DynamoDB stays the source of truth, and recall re-reads what it names from there."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Protocol

from core.digest import Vector
from core.repository.digests import CandidateFilter

# Amazon S3 Vectors answers at most 100 nearest vectors a query.
NEAREST_MOST: Final = 100
# The most words of a question recall asks the engine for the holders of, one query each (a question's words, stop
# words aside, are rarely more).
HOLDING_MOST: Final = 8


class VectorSearchUnavailableError(Exception):
    """The engine could not answer (throttled, failing, refusing): recall reads the namespace instead, as without it.
    Never leaves recall, so no door maps it."""


class VectorSearch(Protocol):
    def holds(self, namespace: str) -> int:
        """How many memories the namespace holds (an upper bound, from one small read): whether a recall asks
        `nearest` or reads the namespace's digests."""
        ...

    def nearest(
        self, namespace: str, vector: Vector, filters: CandidateFilter, k: int, holding: Sequence[str] = ()
    ) -> list[int]:
        """The ids of at most `k` (at most NEAREST_MOST) memories of the namespace the filters match whose vectors
        are nearest `vector`, nearest first; approximate, and eventually consistent with the table. `holding`: only
        memories holding one of these terms (core.recall.lexical; at most HOLDING_MOST), as far as the engine keeps a
        memory's terms. VectorSearchUnavailableError when the engine cannot answer."""
        ...
