"""Related memories (CONTRACT.md, Keeping memories true): the namespace's active memories closest in meaning to one
memory, above its model's related floor (core.recall.embedding.Embedder.related_floor), so that a writer sees what a
memory may replace or repeat. Nothing is embedded: the memory's stored vector (or, right after a write, the vector the
write computed) is compared with the stored digests, read once as recall reads them. Nothing is stamped either: it helps
a writer, it is no retrieval."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Annotated

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema

from core.clock import Clock, format_timestamp, utc_now
from core.contract import RetrievalQuery, integer
from core.digest import Vector
from core.errors import MemoryNotFoundError
from core.limits import RELATED_DEFAULT_LIMIT, RELATED_MAX_LIMIT
from core.model import InputModel, Memory
from core.recall.embedding import Embedder
from core.recall.vectors import similarities
from core.repository import LiveKey, MemoryRepository, fence_of
from core.repository.digests import Candidate, CandidateFilter

# Similarities are rounded as recall's scores are, so both doors and every store give the same figures and order.
_DECIMALS = 6


# The candidates of related memories: the active ones, of any type and tag.
_ACTIVE = RetrievalQuery(status="active")
# Where a namespace's digests matching some filters are read.
Candidates = Callable[[str, CandidateFilter], list[Candidate]]


def _bounded(value: int) -> int:
    if value < 1:
        raise ValueError("must be 1 or more")
    if value > RELATED_MAX_LIMIT:
        raise ValueError(f"must be at most {RELATED_MAX_LIMIT}")
    return value


RelatedLimit = Annotated[
    int,
    WithJsonSchema({"type": "integer", "minimum": 1, "maximum": RELATED_MAX_LIMIT}),
    BeforeValidator(integer),
    AfterValidator(_bounded),
]


class RelatedQuery(InputModel):
    """What a related read asks besides the memory: how many."""

    model_config = ConfigDict(extra="forbid", strict=False, frozen=True)

    limit: RelatedLimit = Field(
        default=RELATED_DEFAULT_LIMIT,
        description=f"How many related memories at most, 1 to {RELATED_MAX_LIMIT} (default {RELATED_DEFAULT_LIMIT}).",
    )


class RelatedItem(BaseModel):
    model_config = ConfigDict(frozen=True)

    memory: Memory
    similarity: float = Field(
        description="The cosine similarity of the two memories' embeddings, rounded to 6 decimals; above `floor`."
    )


class RelatedMemories(BaseModel):
    """The memories closest in meaning to one memory, most similar first (ties by id, newest first)."""

    model_config = ConfigDict(frozen=True)

    items: list[RelatedItem]
    model: str = Field(description="The embedding model whose vectors were compared.")
    floor: float = Field(description="This model's related floor: only memories more similar than this are listed.")
    waiting: bool = Field(
        description="True when the memory has no vector of this model yet (just written while the model was "
        "unavailable or slow): items is then empty, and asking again once it is embedded answers."
    )


class RelatedService:
    def __init__(
        self,
        store: MemoryRepository,
        embedder: Embedder,
        clock: Clock = utc_now,
        *,
        fenced: bool = False,
        candidates: Candidates | None = None,
    ) -> None:
        """`fenced` (every deployed or served one): the answer is given only while the caller's API key is still live
        in the store, checked after every read (core.repository.LiveKey), as recall's. `candidates`: where the
        digests are read (recall's warm index; else the store's)."""
        self._store = store
        self._candidates = candidates or store.recall_candidates
        self._embedder = embedder
        self._clock = clock
        self._fenced = fenced

    @property
    def floor(self) -> float:
        return self._embedder.related_floor

    def related(
        self, namespace: str, memory_id: int, query: RelatedQuery, key_id: str | None = None
    ) -> RelatedMemories:
        """The active memories most similar to memory `memory_id` (itself left out). MemoryNotFoundError when it is
        missing or deleted, told only behind the read fence."""
        fence = self._fence(key_id)
        own = self._store.digest_of(namespace, memory_id)
        if own is None or own.status == "deleted":
            self._confirm(fence)
            raise MemoryNotFoundError(memory_id)
        waiting = own.vector is None or own.model != self._embedder.model
        items = [] if waiting else self._nearest(namespace, own.vector, {memory_id}, query.limit)
        self._confirm(fence)
        return RelatedMemories(items=items, model=self._embedder.model, floor=self.floor, waiting=waiting)

    def near(
        self,
        namespace: str,
        vector: Vector,
        model: str | None,
        left_out: Collection[int],
        key_id: str | None = None,
        limit: int = RELATED_DEFAULT_LIMIT,
    ) -> list[RelatedItem]:
        """The active memories most similar to `vector` (what a write just computed, by `model`), those of
        `left_out` left out (the memory written, and what it superseded); none when the vector is another model's."""
        if model != self._embedder.model:
            return []
        fence = self._fence(key_id)
        items = self._nearest(namespace, vector, left_out, limit)
        self._confirm(fence)
        return items

    def _fence(self, key_id: str | None) -> LiveKey | None:
        return fence_of(key_id, format_timestamp(self._clock()), fenced=self._fenced)

    def _confirm(self, fence: LiveKey | None) -> None:
        """The read fence: after every read, before anything is answered."""
        if fence is not None:
            self._store.confirm_live(fence)

    def _nearest(
        self, namespace: str, vector: Vector | None, left_out: Collection[int], limit: int
    ) -> list[RelatedItem]:
        candidates = {candidate.memory_id: candidate for candidate in self._candidates(namespace, _ACTIVE)}
        ranked = self._ranked(vector, list(candidates.values()), left_out)
        items: list[RelatedItem] = []
        # The records are the digests' (core.repository.digests.Candidate.record), with the stored stamps. The digests
        # are read eventually consistent: one deleted or superseded since is left out by its stamp's status, and the
        # next most similar read in its place.
        while ranked and len(items) < limit:
            batch, ranked = ranked[: limit - len(items)], ranked[limit - len(items) :]
            stamps = self._store.stored_stamps(namespace, [mid for mid, _ in batch])
            items += [
                RelatedItem(
                    memory=candidates[mid].record().model_copy(update={"last_accessed_at": stamp.last_accessed_at}),
                    similarity=similarity,
                )
                for mid, similarity in batch
                for stamp in [stamps.get(mid)]
                if stamp is not None and stamp.status == "active"
            ]
        return items

    def _ranked(
        self, vector: Vector | None, candidates: Sequence[Candidate], left_out: Collection[int]
    ) -> list[tuple[int, float]]:
        """(id, similarity) of each candidate above the floor, most similar first, ties by id descending."""
        if vector is None:
            return []
        model = self._embedder.model
        compared = [c for c in candidates if c.memory_id not in left_out and c.vector is not None and c.model == model]
        sims = similarities(vector, [candidate.vector for candidate in compared])
        above = [
            (candidate.memory_id, round(similarity, _DECIMALS))
            for candidate, similarity in zip(compared, sims, strict=True)
            if similarity is not None and round(similarity, _DECIMALS) > self.floor
        ]
        return sorted(above, key=lambda pair: (pair[1], pair[0]), reverse=True)
