"""The digests beside the in-memory records (core.digest), kept as the DynamoDB adapter keeps them: one per memory
that has one, following every change of its memory, waiting for the backfill while it has no vector."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from core.digest import Digest, Vector
from core.model import Memory
from core.repository.digests import (
    Candidate,
    CandidateFilter,
    DigestChanges,
    DigestSnapshot,
    OwnDigest,
    Unembedded,
)


@dataclass(frozen=True)
class _Stored:
    digest: Digest
    memory: Memory  # the record as the digest's last write saw it (the digest carries all of it but its stamp)
    waiting: bool


class InMemoryDigests:
    """The digests of one in-memory repository; not thread-safe by itself (the repository calls it under its lock)."""

    def __init__(self) -> None:
        self._stored: dict[tuple[str, int], _Stored] = {}
        # Each namespace's changes, in order: the ids whose digest changed (a mark is an epoch and a position here);
        # an erase starts a new epoch.
        self._changed: dict[str, list[int]] = {}
        self._epochs: dict[str, int] = {}
        self._epoch = 0

    def clear(self) -> None:
        self._stored = {}
        self._changed = {}
        self._epochs = {}

    def erased(self, namespace: str) -> None:
        """The namespace is gone: changes after this are of a new epoch (its ids start again)."""
        self._changed.pop(namespace, None)
        self._epochs.pop(namespace, None)

    def _changes(self, namespace: str) -> list[int]:
        if namespace not in self._epochs:
            self._epoch += 1
            self._epochs[namespace] = self._epoch
        return self._changed.setdefault(namespace, [])

    def put(self, namespace: str, memory: Memory, digest: Digest | None) -> None:
        """Store `digest` for the memory as it is now; None stores one without a vector (as the adapter does)."""
        digest = digest or Digest()
        self._stored[namespace, memory.id] = _Stored(digest, memory, waiting=digest.vector is None)
        self._changes(namespace).append(memory.id)

    def follow(self, namespace: str, memory: Memory) -> None:
        """Carry the memory's status, type, `updated_at` and version into its digest, when it has one."""
        stored = self._stored.get((namespace, memory.id))
        if stored is not None:
            self._stored[namespace, memory.id] = dataclasses.replace(stored, memory=memory)
            self._changes(namespace).append(memory.id)

    def drop(self, namespace: str, memory_id: int) -> None:
        if self._stored.pop((namespace, memory_id), None) is not None:
            self._changes(namespace).append(memory_id)

    def candidates(self, namespace: str, filters: CandidateFilter) -> list[Candidate]:
        found = []
        for (stored_in, memory_id), stored in self._stored.items():
            memory = stored.memory
            if (
                stored_in != namespace
                or (memory.status != filters.status if filters.status else memory.status == "deleted")
                or (filters.memory_type is not None and memory.memory_type != filters.memory_type)
                or (filters.tag is not None and filters.tag not in memory.tags)
            ):
                continue
            found.append(_row(memory_id, stored))
        return found

    def snapshot(self, namespace: str) -> DigestSnapshot:
        rows = [
            _row(memory_id, stored) for (stored_in, memory_id), stored in self._stored.items() if stored_in == namespace
        ]
        changes = self._changes(namespace)
        return DigestSnapshot(rows, (self._epochs[namespace], len(changes)))

    def changes(self, namespace: str, mark: object) -> DigestChanges | None:
        changes = self._changes(namespace)
        if not isinstance(mark, tuple) or mark[0] != self._epochs[namespace]:
            return None
        return DigestChanges(frozenset(changes[mark[1] :]), (mark[0], len(changes)))

    def rows(self, namespace: str, memory_ids: Sequence[int]) -> list[Candidate]:
        return [
            _row(i, self._stored[namespace, i]) for i in dict.fromkeys(memory_ids) if (namespace, i) in self._stored
        ]

    def digest_of(self, namespace: str, memory_id: int) -> OwnDigest | None:
        stored = self._stored.get((namespace, memory_id))
        if stored is None:
            return None
        return OwnDigest(stored.memory.status, stored.digest.vector, stored.digest.model)

    def unembedded(self, limit: int) -> list[Unembedded]:
        waiting = sorted(key for key, stored in self._stored.items() if stored.waiting)
        return [Unembedded(namespace, memory_id) for namespace, memory_id in waiting[:limit]]

    def embed(self, namespace: str, memory_id: int, version: int, vector: Vector, model: str) -> bool:
        stored = self._stored.get((namespace, memory_id))
        if stored is None or not stored.waiting or stored.memory.version != version:
            return False
        digest = Digest(vector, model)
        self._stored[namespace, memory_id] = dataclasses.replace(stored, digest=digest, waiting=False)
        self._changes(namespace).append(memory_id)
        return True


def _row(memory_id: int, stored: _Stored) -> Candidate:
    memory, digest = stored.memory, stored.digest
    return Candidate(
        memory_id=memory_id,
        content=memory.content,
        tags=tuple(memory.tags),
        created_at=memory.created_at,
        updated_at=memory.updated_at,
        memory_type=memory.memory_type,
        status=memory.status,
        version=memory.version,
        vector=digest.vector,
        model=digest.model,
    )


class DigestReadsInMemory:
    """The digest reads and writes of DigestReads a repository holding `_digests` under `_lock` answers with them
    (adapters.memory.memories.InMemoryMemoryRepository)."""

    _lock: threading.Lock
    _digests: InMemoryDigests

    def recall_candidates(self, namespace: str, filters: CandidateFilter) -> list[Candidate]:
        with self._lock:
            return self._digests.candidates(namespace, filters)

    def digest_snapshot(self, namespace: str) -> DigestSnapshot:
        with self._lock:
            return self._digests.snapshot(namespace)

    def digest_changes(self, namespace: str, mark: object) -> DigestChanges | None:
        with self._lock:
            return self._digests.changes(namespace, mark)

    def digest_rows(self, namespace: str, memory_ids: Sequence[int]) -> list[Candidate]:
        with self._lock:
            return self._digests.rows(namespace, memory_ids)

    def digest_of(self, namespace: str, memory_id: int) -> OwnDigest | None:
        with self._lock:
            return self._digests.digest_of(namespace, memory_id)

    def unembedded(self, limit: int) -> list[Unembedded]:
        with self._lock:
            return self._digests.unembedded(limit)

    def embed(self, namespace: str, memory_id: int, version: int, vector: Vector, model: str) -> bool:
        with self._lock:
            return self._digests.embed(namespace, memory_id, version, vector, model)
