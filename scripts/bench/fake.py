"""In-memory stand-ins for the storage ports (core.repository), for timing the doors without any I/O.

The one place to adapt when the MemoryRepository port changes: keep it plain and small.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence

from core.access import ApiKey
from core.contract import RetrievalQuery
from core.errors import MemoryNotFoundError, VersionMismatchError
from core.model import IdempotentCreate, Memory, MemoryChanges
from core.repository import Matches


class FakeMemoryRepository:
    def __init__(self) -> None:
        self.rows: dict[tuple[str, int], Memory] = {}
        self._ids: dict[str, itertools.count[int]] = {}

    def snapshot(self) -> dict[tuple[str, int], Memory]:
        return dict(self.rows)

    def restore(self, rows: dict[tuple[str, int], Memory], next_ids: dict[str, int]) -> None:
        self.rows = dict(rows)
        self._ids = {namespace: itertools.count(start) for namespace, start in next_ids.items()}

    def next_id(self, namespace: str) -> int:
        return next(self._ids.setdefault(namespace, itertools.count(1)))

    def add(self, namespace: str, memory: Memory, idempotency: IdempotentCreate | None = None) -> None:
        self.rows[namespace, memory.id] = memory

    def get(self, namespace: str, memory_id: int) -> Memory | None:
        return self.rows.get((namespace, memory_id))

    def read(self, namespace: str, memory_id: int, accessed_at: str) -> Memory:
        memory = self.rows.get((namespace, memory_id))
        if memory is None or memory.status == "deleted":
            raise MemoryNotFoundError(memory_id)
        memory = memory.model_copy(update={"last_accessed_at": accessed_at})
        self.rows[namespace, memory_id] = memory
        return memory

    def apply(
        self,
        namespace: str,
        memory_id: int,
        changes: MemoryChanges,
        expected_versions: frozenset[int] | None,
        now: str,
    ) -> Memory:
        stored = self.rows.get((namespace, memory_id))
        if stored is None or stored.status == "deleted":
            raise MemoryNotFoundError(memory_id)
        if expected_versions is not None and stored.version not in expected_versions:
            raise VersionMismatchError(memory_id, stored.version)
        self.rows[namespace, memory_id] = changed = changes.apply_to(stored, now)
        return changed

    def delete(self, namespace: str, memory_id: int) -> None:
        memory = self.rows.get((namespace, memory_id))
        if memory is None or memory.status == "deleted":
            raise MemoryNotFoundError(memory_id)
        self.rows[namespace, memory_id] = memory.model_copy(update={"status": "deleted"})

    def find(self, namespace: str, query: RetrievalQuery) -> Matches:
        found = [
            memory
            for (ns, _), memory in self.rows.items()
            if ns == namespace
            and (memory.status == query.status if query.status else memory.status != "deleted")
            and (query.memory_type is None or memory.memory_type == query.memory_type)
            and query.matches(memory)
        ]
        if query.sort == "id":
            found.sort(key=lambda memory: memory.id)
        else:
            found.sort(key=lambda memory: (getattr(memory, query.sort) or "", memory.id), reverse=True)
        return Matches(items=found[query.offset : query.offset + query.limit], total=len(found))

    def stamp(self, namespace: str, memory_ids: Sequence[int], accessed_at: str) -> None:
        for memory_id in memory_ids:
            memory = self.rows.get((namespace, memory_id))
            if memory is not None:
                self.rows[namespace, memory_id] = memory.model_copy(update={"last_accessed_at": accessed_at})


class FakeKeyRepository:
    def __init__(self) -> None:
        self.keys: dict[str, ApiKey] = {}

    def add(self, key: ApiKey) -> None:
        self.keys[key.key_id] = key

    def get(self, key_id: str) -> ApiKey | None:
        return self.keys.get(key_id)

    def find(self, namespace: str | None) -> Iterator[ApiKey]:
        return iter([key for key in self.keys.values() if namespace is None or key.namespace == namespace])

    def revoke(self, key_id: str) -> ApiKey | None:
        return self.keys.get(key_id)
