"""The recall half of the memory port (core.repository.MemoryRepository): what recall reads of the digests kept beside
the records (core.digest), and what the backfill reads and writes to embed the ones still waiting for a vector."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Protocol

from core.digest import Vector
from core.model import Memory, MemoryType, Status
from core.words import memory_terms


@dataclass(frozen=True)
class Candidate:
    """What recall reads of one memory, its digest: the memory's record as its last write left it but its stamp (which
    lives in its access item: recall reads or learns it), and its vector with the model that made it (both None while
    it waits for one). A recall ranks by it, filters by it as the store does (core.recall.warm.shown), and answers its
    page from it (`record`) without reading a record."""

    memory_id: int
    content: str
    tags: tuple[str, ...]
    created_at: str
    updated_at: str
    memory_type: MemoryType
    status: Status
    version: int
    vector: Vector | None = None
    model: str | None = None

    @cached_property
    def term_counts(self) -> Counter[str]:
        """How many times each of its terms (core.words.memory_terms) occurs: counted once per candidate, which a warm
        index keeps across recalls (with `term_total`, counted at the same time)."""
        terms = memory_terms(self.content, self.tags)
        self.__dict__["term_total"] = len(terms)  # what cached_property would keep: read as a plain attribute
        return Counter(terms)

    @cached_property
    def term_total(self) -> int:
        """How many terms it has, repeats counted (BM25's document length)."""
        return self.term_counts.total()

    def record(self) -> Memory:
        """The memory's record as the digest stands for it, `last_accessed_at` unknown (None)."""
        return Memory.model_construct(
            id=self.memory_id,
            content=self.content,
            tags=list(self.tags),
            created_at=self.created_at,
            updated_at=self.updated_at,
            last_accessed_at=None,
            memory_type=self.memory_type,
            status=self.status,
            version=self.version,
        )


class CandidateFilter(Protocol):
    """The exact filters of a recall, with the retrieval's rules (core.recall.query.RecallQuery is one): `status`
    (None: every status but deleted), `memory_type`, and `tag` (one whole stored tag, already normalised)."""

    @property
    def status(self) -> Status | None: ...

    @property
    def memory_type(self) -> MemoryType | None: ...

    @property
    def tag(self) -> str | None: ...


@dataclass(frozen=True)
class OwnDigest:
    """What related memories read of the memory they are asked about: its status (as its record's) and its vector
    with the model that made it (None: it waits for one)."""

    status: Status
    vector: Vector | None
    model: str | None


@dataclass(frozen=True)
class DigestSnapshot:
    """Every stored digest of a namespace (deleted memories' too), and the mark changes after it are read from."""

    rows: list[Candidate]
    mark: object  # the store's own: only the store that made it reads it


@dataclass(frozen=True)
class DigestChanges:
    """The memories changed (or gone) since a mark, whose rows a warm copy reads again (their digests; the DynamoDB
    adapter's search copies too); and the mark to read the next changes from."""

    memory_ids: frozenset[int]
    mark: object


@dataclass(frozen=True)
class StoredStamp:
    """What a read of a memory's stamp sees: its status, and its stored `last_accessed_at` (None: never used)."""

    status: Status
    last_accessed_at: str | None


@dataclass(frozen=True)
class Unembedded:
    """A memory whose digest waits for its vector."""

    namespace: str
    memory_id: int


class DigestReads(Protocol):
    """Recall's reads, and the backfill's reads and writes (each digest is written with its memory)."""

    def recall_candidates(self, namespace: str, filters: CandidateFilter) -> list[Candidate]:
        """The digest of every memory of the namespace the filters match, in no particular order (every memory has
        one, from its first write)."""
        ...

    def digest_snapshot(self, namespace: str) -> DigestSnapshot:
        """Every digest of the namespace, whatever its status, as `recall_candidates` reads them (what a warm index
        starts from), with the mark of the moment it was read: every change after it is in `digest_changes`."""
        ...

    def digest_changes(self, namespace: str, mark: object) -> DigestChanges | None:
        """The memories whose digest changed, appeared or went since `mark` (a snapshot's or a previous call's; a
        memory may be named that did not change); None when the store cannot say (the namespace was erased or
        started again since, or the mark is older than the changes the store keeps): read a snapshot instead."""
        ...

    def digest_rows(self, namespace: str, memory_ids: Sequence[int]) -> list[Candidate]:
        """The stored digests of these memories, strongly consistent; ids with none (purged, erased) are left out."""
        ...

    def digest_of(self, namespace: str, memory_id: int) -> OwnDigest | None:
        """The stored digest of one memory, strongly consistent (a memory just written is read as written); None when
        the memory was never stored or is purged. Stamps nothing."""
        ...

    def records(self, namespace: str, memory_ids: Sequence[int]) -> list[Memory]:
        """The stored records of these ids, with their stored `last_accessed_at`, whatever their status (the caller
        keeps the ones it may show); ids with no record are left out. Stamps nothing."""
        ...

    def stored_stamps(self, namespace: str, memory_ids: Sequence[int]) -> dict[int, StoredStamp]:
        """The status and stored `last_accessed_at` of each of these ids still stored (eventually consistent), without
        reading their records: at most half of what `records` reads for them, far less for ids close together. What
        a listing that stamps nothing shows of its page, and what recall's `use` part needs of matches it may not
        return. Stamps nothing."""
        ...

    def unembedded(self, limit: int) -> list[Unembedded]:
        """Up to `limit` memories, of any namespace, whose digest has no vector yet (or one of a model the store is
        being re-embedded away from: `agent-memory embed --all`), read from a sparse index, never by a scan.
        Eventually consistent: one embedded a moment ago may still be listed (`embed` then refuses it)."""
        ...

    def embed(self, namespace: str, memory_id: int, version: int, vector: Vector, model: str) -> bool:
        """Give the memory's waiting digest `vector`, made by `model` from the memory at `version`; only while the
        digest still waits and is still of that version (a memory changed since keeps its newer digest). False
        when it was not written."""
        ...
