"""The backfill: digests stored without a vector (the model was unavailable at the write; an import, a service given no
indexer, or a change of model) are embedded later, a batch at a time. The purge function runs it after each hourly
purge, `serve` every few seconds, and `agent-memory embed` until none is left. It reads the memories' records for
their text and computes no terms, so it needs neither the stemmer nor numpy: the purge function ships it without
recall's extra."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from core.recall.embedding import Embedder, passage_text
from core.recall.guard import guarded
from core.repository import MemoryRepository

# Digests one run embeds at most: a few seconds of a deployed model's calls, well inside the purge function's time.
BACKFILL_LIMIT: Final = 200
# Texts sent to the model in one call (Bedrock's Titan embeds one per request anyway; a local model batches them).
EMBED_BATCH: Final = 16


@dataclass
class Backfilled:
    """What backfill runs did: digests embedded, and digests listed but left alone (changed, purged or embedded by
    another run since they were listed: each keeps its newer digest, and waits again if that one has no vector)."""

    embedded: int = 0
    skipped: int = 0

    def add(self, other: Backfilled) -> None:
        self.embedded += other.embedded
        self.skipped += other.skipped


class Backfill:
    """Embeds the waiting digests of a store with one model, behind the port's guard (core.recall.guard)."""

    def __init__(self, repository: MemoryRepository, embedder: Embedder) -> None:
        self._repository = repository
        self._embedder = guarded(embedder)

    @property
    def model(self) -> str:
        return self._embedder.model

    def run(self, limit: int = BACKFILL_LIMIT) -> Backfilled:
        """Embed up to `limit` waiting digests, each only while its memory is still at the version its text was read
        at. EmbedderUnavailableError when the model cannot embed now: what this run embedded before stays."""
        namespaces: dict[str, list[int]] = {}
        for waiting in self._repository.unembedded(limit):
            namespaces.setdefault(waiting.namespace, []).append(waiting.memory_id)
        done = Backfilled()
        for namespace, memory_ids in namespaces.items():
            records = self._repository.records(namespace, memory_ids)
            done.skipped += len(memory_ids) - len(records)  # purged since listed
            for start in range(0, len(records), EMBED_BATCH):
                batch = records[start : start + EMBED_BATCH]
                vectors = self._embedder.embed(
                    [passage_text(memory.content, memory.tags) for memory in batch], "passage"
                )
                for memory, vector in zip(batch, vectors, strict=True):
                    if self._repository.embed(namespace, memory.id, memory.version, vector, self._embedder.model):
                        done.embedded += 1
                    else:
                        done.skipped += 1
        return done

    def until_done(self, progress: Callable[[Backfilled], None] = lambda _: None) -> Backfilled:
        """Run until a run embeds nothing: none waits any more, or what still waits keeps changing (a later run gets
        it). `progress` is told the running totals after each run."""
        total = Backfilled()
        while True:
            done = self.run()
            total.add(done)
            progress(total)
            if not done.embedded:
                return total
