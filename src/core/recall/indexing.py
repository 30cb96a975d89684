"""The digest of a memory, computed by the core before every write of its content or tags (core.digest.Indexer):
its lexical terms, and its embedding when the model can make one now."""

from __future__ import annotations

from collections.abc import Sequence

from core.digest import Digest
from core.recall.embedding import Embedder, EmbedderUnavailableError, passage_text
from core.recall.lexical import memory_terms


class RecallIndexer:
    """core.digest.Indexer over `embedder`; without one (migrate, an import), or while the model is unavailable,
    digests carry terms only and wait for the backfill to embed them: a write never fails for want of a vector."""

    def __init__(self, embedder: Embedder | None) -> None:
        self._embedder = embedder

    def digest(self, content: str, tags: Sequence[str]) -> Digest:
        terms = tuple(memory_terms(content, tags))
        if self._embedder is None:
            return Digest(terms)
        try:
            (vector,) = self._embedder.embed([passage_text(content, tags)], "passage")
        except EmbedderUnavailableError:
            return Digest(terms)
        return Digest(terms, vector, self._embedder.model)
