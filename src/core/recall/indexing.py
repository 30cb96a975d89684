"""The digest of a memory, computed by the core before every write of its content or tags (core.digest.Indexer):
its lexical terms, and its embedding when the model can make one now."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Final

from core.digest import Digest
from core.recall.embedding import Embedder, EmbedderUnavailableError, passage_text
from core.recall.lexical import memory_terms

# After the model failed, writes go on without asking it for this long: an unreachable model costs each write its
# timeouts (Bedrock's: seconds), and the backfill embeds what was written meanwhile.
PAUSE_AFTER_FAILURE_SECONDS: Final = 30.0


class RecallIndexer:
    """core.digest.Indexer over `embedder`; without one (migrate, an import), while the model is unavailable, and for
    PAUSE_AFTER_FAILURE_SECONDS after it failed, digests carry terms only and wait for the backfill to embed them: a
    write never fails, nor waits long, for want of a vector."""

    def __init__(self, embedder: Embedder | None, clock: Callable[[], float] = time.monotonic) -> None:
        self._embedder = embedder
        self._clock = clock
        self._paused_until = float("-inf")

    def digest(self, content: str, tags: Sequence[str]) -> Digest:
        terms = tuple(memory_terms(content, tags))
        if self._embedder is None or self._clock() < self._paused_until:
            return Digest(terms)
        try:
            (vector,) = self._embedder.embed([passage_text(content, tags)], "passage")
        except EmbedderUnavailableError:
            self._paused_until = self._clock() + PAUSE_AFTER_FAILURE_SECONDS
            return Digest(terms)
        return Digest(terms, vector, self._embedder.model)
