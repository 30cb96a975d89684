"""Recall over a large namespace with a vector search engine (core.repository.vectors.VectorSearch, off unless one is
given): past a number of memories, a recall takes as candidates the nearest memories the engine names (at most 100),
reads their digests by key from the store (strongly consistent: a status changed since the engine's copy is seen),
keeps those the filters still match, and ranks them as every recall is ranked (RecallService._rank). Its reads are
then independent of the namespace's size.

The one difference in what it returns: the candidates are the vector-nearest only. A memory that ranks by its words
alone (no vector near the question) is not among them, and `total` counts the candidates, not every match. Nothing
exact is cheap for the lexical side: the terms live in each digest, and finding the ones holding a word is the read of
the namespace this path avoids.
"""

from __future__ import annotations

import logging
from typing import Final

from core.digest import Vector
from core.recall.warm import WARM_INDEX_BYTES, shown
from core.repository.digests import Candidate, CandidateFilter, DigestReads
from core.repository.vectors import NEAREST_MOST, VectorSearch, VectorSearchUnavailableError

# A kept digest of the offline model (384 dimensions) is about 2.2 KB in a warm index (core.recall.warm): past this
# many memories a namespace no longer fits the default budget, and every recall would read it whole.
LARGE_NAMESPACE: Final = WARM_INDEX_BYTES // 2_200

logger = logging.getLogger(__name__)


class NearestCandidates:
    """The candidates of recalls over large namespaces, from a vector search engine and the store."""

    def __init__(self, store: DigestReads, vectors: VectorSearch, threshold: int = LARGE_NAMESPACE) -> None:
        self._store = store
        self._vectors = vectors
        self._threshold = threshold

    def applies(self, namespace: str) -> bool:
        """Whether the namespace holds more memories than the threshold."""
        return self._vectors.holds(namespace) > self._threshold

    def candidates(self, namespace: str, filters: CandidateFilter, question: Vector) -> list[Candidate] | None:
        """The filters' matches among the memories whose vectors are nearest `question`, as the store holds them;
        None when the engine cannot answer (the namespace is then read whole: slower and dearer, never wrong)."""
        try:
            ids = self._vectors.nearest(namespace, question, filters, NEAREST_MOST)
        except VectorSearchUnavailableError as exc:
            logger.warning("vector index unavailable, namespace read whole: %s", exc)
            return None
        rows = self._store.digest_rows(namespace, ids)
        return [row.candidate for row in rows if shown(row, filters)]
