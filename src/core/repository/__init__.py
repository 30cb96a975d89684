"""The storage port: what the service needs from a store, whatever the engine behind it."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol

from core.access import ApiKey
from core.contract import SortKey
from core.model import Memory, MemoryType, Status


class MemoryRepository(Protocol):
    """Memories of many namespaces; every method is confined to the namespace it is given."""

    def next_id(self, namespace: str) -> int:
        """A fresh id from the namespace's atomic counter; ids may have gaps but never repeat."""
        ...

    def add(self, namespace: str, memory: Memory) -> None:
        """Store a new memory; never overwrites an existing id."""
        ...

    def get(self, namespace: str, memory_id: int) -> Memory | None:
        """The stored memory (deleted ones included) by a strongly consistent read, without stamping it."""
        ...

    def get_and_stamp(self, namespace: str, memory_id: int, accessed_at: str) -> Memory | None:
        """Stamp a visible memory's `last_accessed_at` (never backwards) and return it, in one round trip.

        None when the memory is missing or deleted; a missing memory is never created.
        """
        ...

    def update(self, namespace: str, memory: Memory, expected_version: int) -> Memory | None:
        """Write the editable fields, `updated_at` and `version` if the stored version is still `expected_version`
        and the memory is not deleted; return the stored result, or None when that condition failed."""
        ...

    def soft_delete(self, namespace: str, memory_id: int) -> bool:
        """Mark a visible memory deleted, leaving `version` and `updated_at`; False when missing or deleted."""
        ...

    def scan(
        self, namespace: str, sort: SortKey, status: Status | None, memory_type: MemoryType | None
    ) -> Iterator[Memory]:
        """Every memory matching the exact filters, in the contract's total order for `sort`.

        Without `status`, deleted memories are left out.
        """
        ...

    def stamp(self, namespace: str, memory_ids: Sequence[int], accessed_at: str) -> None:
        """Set `last_accessed_at` on each listed memory concurrently (deleted ones too, when a listing asked for
        them: a stamp never changes `status`); never creates a memory or moves the stamp back."""
        ...


class KeyRepository(Protocol):
    """The API keys of every namespace, by key id."""

    def add(self, key: ApiKey) -> None:
        """Store a new key; never overwrites an existing key id (WriteConflictError instead)."""
        ...

    def get(self, key_id: str) -> ApiKey | None:
        """The stored key by a strongly consistent read, so a revoke is seen at once; None when unknown."""
        ...

    def find(self, namespace: str | None) -> Iterator[ApiKey]:
        """Every key (revoked and expired ones included), or only one namespace's."""
        ...

    def revoke(self, key_id: str) -> ApiKey | None:
        """Mark the key revoked (again, harmlessly, if it already is) and return it; None when unknown."""
        ...
