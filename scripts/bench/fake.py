"""In-memory stand-ins for the storage ports (core.repository), for timing the doors without any I/O.

The one place to adapt when the MemoryRepository port changes: keep it plain and small.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence

from core.access import ApiKey
from core.contract import SortKey
from core.model import Memory, MemoryType, Status


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

    def add(self, namespace: str, memory: Memory) -> None:
        self.rows[namespace, memory.id] = memory

    def get(self, namespace: str, memory_id: int) -> Memory | None:
        return self.rows.get((namespace, memory_id))

    def get_and_stamp(self, namespace: str, memory_id: int, accessed_at: str) -> Memory | None:
        memory = self.rows.get((namespace, memory_id))
        if memory is None or memory.status == "deleted":
            return None
        memory = memory.model_copy(update={"last_accessed_at": accessed_at})
        self.rows[namespace, memory_id] = memory
        return memory

    def update(self, namespace: str, memory: Memory, expected_version: int) -> Memory | None:
        current = self.rows.get((namespace, memory.id))
        if current is None or current.status == "deleted" or current.version != expected_version:
            return None
        self.rows[namespace, memory.id] = memory
        return memory

    def soft_delete(self, namespace: str, memory_id: int) -> bool:
        memory = self.rows.get((namespace, memory_id))
        if memory is None or memory.status == "deleted":
            return False
        self.rows[namespace, memory_id] = memory.model_copy(update={"status": "deleted"})
        return True

    def scan(
        self, namespace: str, sort: SortKey, status: Status | None, memory_type: MemoryType | None
    ) -> Iterator[Memory]:
        found = [
            memory
            for (ns, _), memory in self.rows.items()
            if ns == namespace
            and (memory.status == status if status else memory.status != "deleted")
            and (memory_type is None or memory.memory_type == memory_type)
        ]
        if sort == "id":
            found.sort(key=lambda memory: memory.id)
        else:
            found.sort(key=lambda memory: (getattr(memory, sort) or "", memory.id), reverse=True)
        return iter(found)

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
