"""The storage ports (core.repository) in memory: the fake every door test runs on, and the bench's in-memory store.

It runs the repository contract suite beside moto and DynamoDB Local (tests/integration), so it cannot drift from
them. Plain on purpose: one lock per repository, copies in and out, the contract's order written once in `_order`.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator, Mapping, Sequence

from core.access import ApiKey
from core.clock import parse_timestamp
from core.contract import RetrievalQuery
from core.errors import AuthenticationError, MemoryNotFoundError, VersionMismatchError, WriteConflictError
from core.history import Change, Revision
from core.limits import IDEMPOTENCY_WINDOW_SECONDS
from core.model import IdempotentCreate, Memory, MemoryChanges
from core.repository import (
    KEY_NOT_LIVE,
    Client,
    Grant,
    IdempotencyKeyTakenError,
    LiveKey,
    Matches,
    PriorCreate,
    RegistrationBound,
    RegistrationWindow,
    Revisions,
)


def _copy(memory: Memory) -> Memory:
    return memory.model_copy(deep=True)


def _order(memories: list[Memory], sort: str) -> list[Memory]:
    """The contract's total order: `id` ascending; a timestamp descending, ties by id descending, a never-set
    timestamp (only `last_accessed_at` can be one) after every set one, by id descending too."""
    if sort == "id":
        return sorted(memories, key=lambda memory: memory.id)

    def key(memory: Memory) -> tuple[bool, str, int]:
        value: str | None = getattr(memory, sort)
        return (value is not None, value or "", memory.id)

    return sorted(memories, key=key, reverse=True)


class InMemoryMemoryRepository:
    """MemoryRepository in a dict, thread-safe; `get` (not part of the port) reads a stored memory unstamped.

    `keys` is the key store of the same "table": a fenced write (LiveKey) lands only while its key is live there, as
    the DynamoDB adapter's ConditionCheck on the key item; without `keys`, no fenced write lands."""

    def __init__(self, keys: InMemoryKeyRepository | None = None) -> None:
        self._keys = keys
        self._lock = threading.Lock()
        self._rows: dict[tuple[str, int], Memory] = {}
        self._next_ids: dict[str, int] = {}
        self._idempotency: dict[tuple[str, str], tuple[PriorCreate, float]] = {}
        self._revisions: dict[tuple[str, int], list[Revision]] = {}
        # A deleted memory's status before the delete, and when it was deleted.
        self._deleted: dict[tuple[str, int], tuple[str, str]] = {}

    def reset(self, rows: Mapping[tuple[str, int], Memory], next_ids: Mapping[str, int]) -> None:
        """Replace everything stored by `rows` (without history); each namespace's next id is `next_ids`' (the bench
        resets with it)."""
        with self._lock:
            self._rows = {key: _copy(memory) for key, memory in rows.items()}
            self._next_ids = {namespace: start - 1 for namespace, start in next_ids.items()}
            self._idempotency = {}
            self._revisions = {}
            self._deleted = {}

    def _record(self, namespace: str, memory: Memory, change: Change, now: str, key_id: str | None) -> None:
        revisions = self._revisions.setdefault((namespace, memory.id), [])
        revisions.append(Revision.of(memory, len(revisions) + 1, change, now, key_id))

    def _fence(self, live_key: LiveKey | None) -> None:
        """Refuse a write whose live key is not stored, revoked or expired (called before anything is changed)."""
        if live_key is None:
            return
        key = None if self._keys is None else self._keys.get(live_key.key_id)
        if key is None or key.state(parse_timestamp(live_key.now)) != "active":
            raise AuthenticationError(KEY_NOT_LIVE)

    def next_id(self, namespace: str, live_key: LiveKey | None = None) -> int:
        with self._lock:
            if namespace not in self._next_ids:
                self._fence(live_key)  # as the adapter: only a live key starts a namespace's counter
            self._next_ids[namespace] = self._next_ids.get(namespace, 0) + 1
            return self._next_ids[namespace]

    def add(
        self,
        namespace: str,
        memory: Memory,
        idempotency: IdempotentCreate | None = None,
        key_id: str | None = None,
        live_key: LiveKey | None = None,
    ) -> None:
        with self._lock:
            self._fence(live_key)
            now = parse_timestamp(memory.created_at).timestamp()
            if idempotency is not None:
                recorded = self._idempotency.get((namespace, idempotency.key_hash))
                if recorded is not None and recorded[1] > now:
                    raise IdempotencyKeyTakenError(recorded[0])
            if (namespace, memory.id) in self._rows:
                raise WriteConflictError(f"id {memory.id} collided with another write; retry the create")
            self._rows[namespace, memory.id] = _copy(memory)
            self._record(namespace, memory, "created", memory.created_at, key_id)
            if idempotency is not None:
                prior = PriorCreate(memory.id, memory.created_at, idempotency.fingerprint)
                self._idempotency[namespace, idempotency.key_hash] = (prior, now + IDEMPOTENCY_WINDOW_SECONDS)

    def get(self, namespace: str, memory_id: int) -> Memory | None:
        with self._lock:
            stored = self._rows.get((namespace, memory_id))
            return None if stored is None else _copy(stored)

    def _visible(self, namespace: str, memory_id: int) -> Memory:
        stored = self._rows.get((namespace, memory_id))
        if stored is None or stored.status == "deleted":
            raise MemoryNotFoundError(memory_id)
        return stored

    def _stamp_one(self, namespace: str, memory: Memory, accessed_at: str) -> Memory:
        if memory.last_accessed_at is not None and memory.last_accessed_at >= accessed_at:
            return memory
        self._rows[namespace, memory.id] = stamped = memory.model_copy(update={"last_accessed_at": accessed_at})
        return stamped

    def read(self, namespace: str, memory_id: int, accessed_at: str | None) -> Memory:
        with self._lock:
            visible = self._visible(namespace, memory_id)
            return _copy(visible if accessed_at is None else self._stamp_one(namespace, visible, accessed_at))

    def apply(
        self,
        namespace: str,
        memory_id: int,
        changes: MemoryChanges,
        expected_versions: frozenset[int] | None,
        now: str,
        key_id: str | None = None,
        live_key: LiveKey | None = None,
    ) -> Memory:
        with self._lock:
            current = self._visible(namespace, memory_id)
            if expected_versions is not None and current.version not in expected_versions:
                raise VersionMismatchError(memory_id, current.version)
            updated = changes.apply_to(current, now)
            if updated is not current:
                self._fence(live_key)
                self._rows[namespace, memory_id] = _copy(updated)
                self._record(namespace, updated, "updated", now, key_id)
            return _copy(updated)

    def delete(
        self, namespace: str, memory_id: int, now: str, key_id: str | None = None, live_key: LiveKey | None = None
    ) -> None:
        with self._lock:
            current = self._visible(namespace, memory_id)
            self._fence(live_key)
            self._rows[namespace, memory_id] = deleted = current.model_copy(update={"status": "deleted"})
            self._deleted[namespace, memory_id] = (current.status, now)
            self._record(namespace, deleted, "deleted", now, key_id)

    def _stored_deleted(self, namespace: str, memory_id: int) -> Memory:
        stored = self._rows.get((namespace, memory_id))
        if stored is None:
            raise MemoryNotFoundError(memory_id)
        if stored.status != "deleted":
            raise MemoryNotFoundError(memory_id, "is not deleted")
        return stored

    def restore(
        self, namespace: str, memory_id: int, now: str, key_id: str | None = None, live_key: LiveKey | None = None
    ) -> Memory:
        with self._lock:
            stored = self._stored_deleted(namespace, memory_id)
            self._fence(live_key)
            prior, _ = self._deleted.pop((namespace, memory_id))
            self._rows[namespace, memory_id] = restored = stored.model_copy(update={"status": prior})
            self._record(namespace, restored, "restored", now, key_id)
            return _copy(restored)

    def history(self, namespace: str, memory_id: int, limit: int, offset: int) -> Revisions:
        with self._lock:
            if (namespace, memory_id) not in self._rows:
                raise MemoryNotFoundError(memory_id)
            newest_first = self._revisions.get((namespace, memory_id), [])[::-1]
            return Revisions(items=newest_first[offset : offset + limit], total=len(newest_first))

    def purge(self, namespace: str, memory_id: int) -> None:
        with self._lock:
            self._stored_deleted(namespace, memory_id)
            self._forget(namespace, memory_id)

    def _forget(self, namespace: str, memory_id: int) -> None:
        del self._rows[namespace, memory_id], self._deleted[namespace, memory_id]
        self._revisions.pop((namespace, memory_id), None)
        for key, (prior, _) in list(self._idempotency.items()):
            if key[0] == namespace and prior.memory_id == memory_id:
                del self._idempotency[key]

    def purge_deleted(self, deleted_before: str) -> int:
        with self._lock:
            due = [key for key, (_, deleted_at) in self._deleted.items() if deleted_at < deleted_before]
            for namespace, memory_id in due:
                self._forget(namespace, memory_id)
            return len(due)

    def find(self, namespace: str, query: RetrievalQuery) -> Matches:
        with self._lock:
            matches = [
                memory
                for (stored_in, _), memory in self._rows.items()
                if stored_in == namespace
                and (memory.status == query.status if query.status else memory.status != "deleted")
                and (query.memory_type is None or memory.memory_type == query.memory_type)
                and query.matches(memory)
            ]
            page = _order(matches, query.sort)[query.offset : query.offset + query.limit]
            # As DynamoDB's listing: every row but its stamp, which the caller replaces on every row it returns.
            unstamped = [memory.model_copy(update={"last_accessed_at": None}, deep=True) for memory in page]
            return Matches(items=unstamped, total=len(matches))

    def stamp(self, namespace: str, memory_ids: Sequence[int], accessed_at: str) -> None:
        with self._lock:
            for memory_id in memory_ids:
                stored = self._rows.get((namespace, memory_id))
                if stored is not None:
                    self._stamp_one(namespace, stored, accessed_at)


class InMemoryKeyRepository:
    """KeyRepository in a dict, thread-safe (ApiKey is immutable, so it is stored as given)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._keys: dict[str, ApiKey] = {}

    def add(self, key: ApiKey) -> None:
        with self._lock:
            if key.key_id in self._keys:
                raise WriteConflictError(f"key id {key.key_id} is already taken; retry")
            self._keys[key.key_id] = key

    def get(self, key_id: str) -> ApiKey | None:
        with self._lock:
            return self._keys.get(key_id)

    def find(self, namespace: str | None) -> Iterator[ApiKey]:
        with self._lock:
            found = [key for key in self._keys.values() if namespace is None or key.namespace == namespace]
        return iter(found)

    def revoke(self, key_id: str) -> ApiKey | None:
        with self._lock:
            key = self._keys.get(key_id)
            if key is None:
                return None
            self._keys[key_id] = revoked = dataclasses.replace(key, revoked=True)
            return revoked


class InMemoryGrantRepository:
    """GrantRepository in dicts, thread-safe, with the adapter's conditions (Client and Grant are immutable).

    `keys`, when given, is the key store of the same "table": a grant is then stored only while its consenting key is
    live there (without it, as in door tests that build their own key service, grants are stored unfenced)."""

    def __init__(self, keys: InMemoryKeyRepository | None = None) -> None:
        self._keys = keys
        self._lock = threading.Lock()
        self.clients: dict[str, Client] = {}
        self.grants: dict[str, Grant] = {}
        self.spent: set[tuple[str, str]] = set()
        # Registrations counted per (caller hash, or None for the total; window start).
        self.registrations: dict[tuple[str | None, int], int] = {}
        self.stored_secret: bytes | None = None

    def add_client(self, client: Client, window: RegistrationWindow) -> RegistrationBound | None:
        counts: list[tuple[tuple[str | None, int], int, RegistrationBound]] = [
            ((window.caller, window.starts_at), window.per_caller, "caller"),
            ((None, window.starts_at), window.total, "total"),
        ]
        with self._lock:
            for counter, bound, name in counts:
                if self.registrations.get(counter, 0) >= bound:
                    return name
                self.registrations[counter] = self.registrations.get(counter, 0) + 1
            if client.client_id in self.clients:
                raise WriteConflictError(f"client id {client.client_id} is already taken; retry")
            self.clients[client.client_id] = client
            return None

    def get_client(self, client_id: str) -> Client | None:
        with self._lock:
            return self.clients.get(client_id)

    def add_grant(self, grant: Grant, live_key: LiveKey) -> None:
        key = None if self._keys is None else self._keys.get(live_key.key_id)
        if self._keys is not None and (key is None or key.state(parse_timestamp(live_key.now)) != "active"):
            raise AuthenticationError(KEY_NOT_LIVE)
        with self._lock:
            if grant.grant_id in self.grants:
                raise WriteConflictError(f"grant id {grant.grant_id} is already taken; retry")
            self.grants[grant.grant_id] = grant

    def get_grant(self, grant_id: str) -> Grant | None:
        with self._lock:
            return self.grants.get(grant_id)

    def issue(self, issued: Grant, expected_hash: str, spent: bool, client_expires_at: int) -> bool:
        with self._lock:
            stored = self.grants.get(issued.grant_id)
            client = self.clients.get(issued.client_id)
            if stored is None or client is None or stored.revoked:
                return False
            held = stored.refresh_hash if spent else (None if stored.code_used else stored.code_hash)
            if held != expected_hash:
                return False
            self.grants[issued.grant_id] = issued
            self.clients[client.client_id] = dataclasses.replace(client, expires_at=client_expires_at)
            if spent:
                self.spent.add((issued.grant_id, expected_hash))
            return True

    def is_spent(self, grant_id: str, refresh_hash: str) -> bool:
        with self._lock:
            return (grant_id, refresh_hash) in self.spent

    def revoke(self, grant_id: str) -> None:
        with self._lock:
            grant = self.grants.get(grant_id)
            if grant is not None:
                self.grants[grant_id] = dataclasses.replace(grant, revoked=True)

    def secret(self, candidate: bytes) -> bytes:
        with self._lock:
            if self.stored_secret is None:
                self.stored_secret = candidate
            return self.stored_secret
