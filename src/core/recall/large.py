"""Recall over a large namespace with a vector search engine (core.repository.vectors.VectorSearch, off unless one is
given): past a number of memories, a recall takes as candidates the memories the engine names, reads their digests by
key from the store (strongly consistent: a status changed since the engine's copy is seen), keeps those the filters
still match, and ranks them as every recall is ranked (RecallService._rank). Its reads are then independent of the
namespace's size.

The engine is asked at once for the nearest memories to the question (at most 100) and, for each of the question's
words (its lexical terms, core.recall.lexical; at most HOLDING_MOST), for the nearest among those holding it (its share
of 100 more), so that a memory ranking by its words rather than its meaning is among the candidates too: a rare word's
few holders all are. What it returns differs in two ways from a recall reading every digest: a memory holding only
common words of the question, far from it in meaning, is missed; and `total` counts the candidates, not every match.
The engine keeps a memory's first terms only (adapters/s3vectors.py: its filterable metadata is bounded), so a word
past them finds it by meaning alone.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Final

from core.budget import carried
from core.digest import Vector
from core.recall.warm import WARM_INDEX_BYTES, shown
from core.repository.digests import Candidate, CandidateFilter, DigestReads
from core.repository.vectors import HOLDING_MOST, NEAREST_MOST, VectorSearch, VectorSearchUnavailableError

# A kept digest of the offline model (384 dimensions) is put at about 2.15 KB in a warm index (core.recall.warm): past
# this many memories a namespace no longer fits the default budget, and every recall would read it whole.
LARGE_NAMESPACE: Final = WARM_INDEX_BYTES // 2_150

logger = logging.getLogger(__name__)
# The engine's two queries of a recall run at once, in these threads (started on first use, shared by the process).
_ENGINE: Final = ThreadPoolExecutor(max_workers=8, thread_name_prefix="nearest")


class NearestCandidates:
    """The candidates of recalls over large namespaces, from a vector search engine and the store."""

    def __init__(self, store: DigestReads, vectors: VectorSearch, threshold: int = LARGE_NAMESPACE) -> None:
        self._store = store
        self._vectors = vectors
        self._threshold = threshold

    def applies(self, namespace: str) -> bool:
        """Whether the namespace holds more memories than the threshold."""
        return self._vectors.holds(namespace) > self._threshold

    def candidates(
        self, namespace: str, filters: CandidateFilter, question: Vector, terms: Sequence[str] = ()
    ) -> list[Candidate] | None:
        """The filters' matches among the memories whose vectors are nearest `question`, and the nearest of those
        holding one of `terms` (the question's lexical terms), as the store holds them; None when the engine cannot
        answer (the namespace is then read whole: slower and dearer, never wrong)."""
        words = list(dict.fromkeys(terms))[:HOLDING_MOST]
        nearest = carried(self._vectors.nearest)
        asked = [_ENGINE.submit(nearest, namespace, question, filters, NEAREST_MOST)]
        # One query a word, each naming its share of NEAREST_MOST: a rare word's few holders are all found, as BM25
        # rewards them, where one query for any of the words would name the common word's nearest alone.
        share = max(1, NEAREST_MOST // len(words)) if words else 0
        asked += [_ENGINE.submit(nearest, namespace, question, filters, share, [word]) for word in words]
        try:
            found = [future.result() for future in asked]
        except VectorSearchUnavailableError as exc:
            logger.warning("vector index unavailable, namespace read whole: %s", exc)
            return None
        finally:
            wait(asked)  # no call of this recall outlives it
        ids = list(dict.fromkeys(memory_id for answer in found for memory_id in answer))
        return [candidate for candidate in self._store.digest_rows(namespace, ids) if shown(candidate, filters)]
