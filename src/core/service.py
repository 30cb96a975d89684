"""The use cases of the contract, over any MemoryRepository; both doors call these for every memory operation."""

from __future__ import annotations

from core.contract import Page, RetrievalQuery
from core.errors import MemoryNotFoundError, VersionMismatchError, WriteConflictError
from core.model import Clock, Memory, MemoryChanges, NewMemory, format_timestamp, utc_now
from core.repository import MemoryRepository

# A PATCH without a precondition re-reads and re-applies when a concurrent writer got in first; this bounds it.
UPDATE_ATTEMPTS = 3
ANY_VERSION = None


class MemoryService:
    def __init__(self, repository: MemoryRepository, clock: Clock = utc_now) -> None:
        self._repository = repository
        self._clock = clock

    def _now(self) -> str:
        return format_timestamp(self._clock())

    def create(self, namespace: str, new: NewMemory) -> Memory:
        memory_id = self._repository.next_id(namespace)
        now = self._now()
        memory = Memory(
            id=memory_id,
            content=new.content,
            tags=new.tags,
            created_at=now,
            updated_at=now,
            last_accessed_at=None,
            memory_type=new.memory_type,
            status=new.status,
            version=1,
        )
        self._repository.add(namespace, memory)
        return memory

    def get(self, namespace: str, memory_id: int) -> Memory:
        memory = self._repository.get_and_stamp(namespace, memory_id, self._now())
        if memory is None:
            raise MemoryNotFoundError(memory_id)
        return memory

    def update(
        self, namespace: str, memory_id: int, changes: MemoryChanges, expected_version: int | None = ANY_VERSION
    ) -> Memory:
        """Apply a PATCH conditionally on the version it was computed from, so no concurrent update is lost.

        With `expected_version`, a record at any other version raises VersionMismatchError, even when the
        PATCH would change nothing.
        """
        for _ in range(UPDATE_ATTEMPTS):
            current = self._repository.get(namespace, memory_id)
            if current is None or current.status == "deleted":
                raise MemoryNotFoundError(memory_id)
            if expected_version is not None and current.version != expected_version:
                raise VersionMismatchError(memory_id, current.version)
            updated = changes.apply_to(current, self._now())
            if updated is current:
                return current
            stored = self._repository.update(namespace, updated, expected_version=current.version)
            if stored is not None:
                return stored
        raise WriteConflictError(f"memory {memory_id} kept changing under this update; retry it")

    def delete(self, namespace: str, memory_id: int) -> None:
        if not self._repository.soft_delete(namespace, memory_id):
            raise MemoryNotFoundError(memory_id)

    def search(self, namespace: str, query: RetrievalQuery) -> Page:
        """Filter, order and page as the contract says, then stamp exactly the returned rows with one timestamp."""
        page: list[Memory] = []
        total = 0
        for memory in self._repository.scan(namespace, query.sort, query.status, query.memory_type):
            if query.matches(memory):
                if query.offset <= total < query.offset + query.limit:
                    page.append(memory)
                total += 1
        if page:
            now = self._now()
            self._repository.stamp(namespace, [memory.id for memory in page], now)
            page = [memory.model_copy(update={"last_accessed_at": now}) for memory in page]
        return Page(
            items=page,
            total=total,
            limit=query.limit,
            offset=query.offset,
            has_more=query.offset + len(page) < total,
        )
