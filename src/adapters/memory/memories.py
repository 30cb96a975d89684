"""MemoryRepository in memory: the records, their history, their digests, the idempotency records and the fence on
live keys."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence

from adapters.memory.digests import DigestReadsInMemory, InMemoryDigests
from adapters.memory.keys import InMemoryKeyRepository
from core.clock import parse_timestamp
from core.contract import RetrievalQuery
from core.errors import AuthenticationError, MemoryNotFoundError, WriteConflictError
from core.history import Revision
from core.limits import IDEMPOTENCY_WINDOW_SECONDS
from core.model import Memory
from core.repository import (
    KEY_NOT_LIVE,
    READ_KEY_NOT_LIVE,
    Commit,
    IdempotencyKeyTakenError,
    LiveKey,
    Matches,
    PriorCreate,
    Revisions,
)
from core.repository.commit import Change, Deletion, Loaded, StaleLoadError
from core.repository.digests import StoredStamp


def _seconds(timestamp: str) -> float:
    return parse_timestamp(timestamp).timestamp()


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


class InMemoryMemoryRepository(DigestReadsInMemory):
    """MemoryRepository in a dict, thread-safe; `get` (not part of the port) reads a stored memory unstamped. It decides
    nothing: a commit lands whole or not at all, on the conditions DynamoDB's transaction holds (a loaded memory
    unchanged, a created id and a live idempotency key free, the key live); a load's token is its revision count.

    `keys` is the key store of the same "table": a fenced write (LiveKey) lands only while its key is live there, as
    the DynamoDB adapter's ConditionCheck on the key item; without `keys`, no fenced write lands."""

    def __init__(self, keys: InMemoryKeyRepository | None = None) -> None:
        self._keys = keys
        self._lock = threading.Lock()
        self._rows: dict[tuple[str, int], Memory] = {}
        self._next_ids: dict[str, int] = {}
        self._idempotency: dict[tuple[str, str], tuple[PriorCreate, float]] = {}
        self._revisions: dict[tuple[str, int], list[Revision]] = {}
        self._deleted: dict[tuple[str, int], Deletion] = {}
        self._digests = InMemoryDigests()

    def reset(self, rows: Mapping[tuple[str, int], Memory], next_ids: Mapping[str, int]) -> None:
        """Replace everything stored by `rows` (without history); each namespace's next id is `next_ids`' (the bench
        resets with it)."""
        with self._lock:
            self._rows = {key: _copy(memory) for key, memory in rows.items()}
            self._next_ids = {namespace: start - 1 for namespace, start in next_ids.items()}
            self._idempotency = {}
            self._revisions = {}
            self._deleted = {}
            self._digests.clear()

    def _fence(self, live_key: LiveKey | None, refusal: str = KEY_NOT_LIVE) -> None:
        """Refuse a write (or, with READ_KEY_NOT_LIVE, a read) whose live key is not stored, revoked or expired (called
        before anything is changed or answered)."""
        if live_key is None:
            return
        if self._keys is None:
            raise AuthenticationError(refusal)
        self._keys.check_live(live_key, refusal)

    def confirm_live(self, live_key: LiveKey) -> None:
        self._fence(live_key, READ_KEY_NOT_LIVE)

    def erase(self, namespace: str) -> None:
        """Remove everything of the namespace, its keys first, as `agent-memory namespace erase` does on DynamoDB
        (adapters.dynamodb.erasure); without `keys`, only its memories. Not part of the port: the doors'
        tests erase with it."""
        if self._keys is not None:
            self._keys.erase(namespace)
        with self._lock:
            for stored_in, memory_id in [key for key in self._rows if key[0] == namespace]:
                del self._rows[stored_in, memory_id]
                self._deleted.pop((stored_in, memory_id), None)
                self._revisions.pop((stored_in, memory_id), None)
                self._digests.drop(stored_in, memory_id)
            self._next_ids.pop(namespace, None)
            self._digests.erased(namespace)
            self._idempotency = {key: value for key, value in self._idempotency.items() if key[0] != namespace}

    def next_id(self, namespace: str, live_key: LiveKey | None = None) -> int:
        with self._lock:
            if namespace not in self._next_ids:
                self._fence(live_key)  # as the adapter: only a live key starts a namespace's counter
            self._next_ids[namespace] = self._next_ids.get(namespace, 0) + 1
            return self._next_ids[namespace]

    def load(self, namespace: str, memory_id: int) -> Loaded | None:
        with self._lock:
            stored = self._rows.get((namespace, memory_id))
            if stored is None:
                return None
            deletion = self._deleted.get((namespace, memory_id))
            count = len(self._revisions.get((namespace, memory_id), []))
            return Loaded(_copy(stored), count, deletion, purging=False, token=count)

    def load_all(self, namespace: str, memory_ids: Sequence[int]) -> list[Loaded | None]:
        return [self.load(namespace, memory_id) for memory_id in memory_ids]

    def commit(self, commit: Commit) -> None:
        namespace = commit.namespace
        with self._lock:
            self._fence(commit.live_key)
            for change in commit.changes:
                self._check(namespace, change)
            for checked in commit.checks:
                if not self._as_loaded(namespace, checked):
                    raise StaleLoadError(checked.memory.id)
            for change in commit.changes:
                self._persist(namespace, change)

    def _check(self, namespace: str, change: Change) -> None:
        """Refuse a change that cannot land as the DynamoDB adapter's conditions would: nothing is written yet."""
        key = (namespace, change.after.id)
        if change.before is not None:
            if not self._as_loaded(namespace, change.before):
                raise StaleLoadError(change.after.id)
            return
        idempotency = change.idempotency
        if idempotency is not None:
            recorded = self._idempotency.get((namespace, idempotency.key_hash))
            if recorded is not None and recorded[1] > _seconds(change.after.created_at):
                raise IdempotencyKeyTakenError(recorded[0])
        if key in self._rows:
            raise WriteConflictError(f"id {change.after.id} collided with another write; retry the create")

    def _as_loaded(self, namespace: str, loaded: Loaded) -> bool:
        key = (namespace, loaded.memory.id)
        return key in self._rows and loaded.token == len(self._revisions.get(key, []))

    def _persist(self, namespace: str, change: Change) -> None:
        after = change.after
        key = (namespace, after.id)
        self._rows[key] = _copy(after)
        if change.deletion is None:
            self._deleted.pop(key, None)
        else:
            self._deleted[key] = change.deletion
        if change.digest is None:
            self._digests.follow(namespace, after)
        else:
            self._digests.put(namespace, after, change.digest)
        self._revisions.setdefault(key, []).append(change.revision)
        if change.idempotency is not None:
            prior = PriorCreate(after.id, after.created_at, change.idempotency.fingerprint)
            expires = _seconds(after.created_at) + IDEMPOTENCY_WINDOW_SECONDS
            self._idempotency[namespace, change.idempotency.key_hash] = (prior, expires)

    def get(self, namespace: str, memory_id: int) -> Memory | None:
        with self._lock:
            stored = self._rows.get((namespace, memory_id))
            return None if stored is None else _copy(stored)

    def _stamp_one(self, namespace: str, memory: Memory, accessed_at: str) -> Memory:
        if memory.last_accessed_at is not None and memory.last_accessed_at >= accessed_at:
            return memory
        self._rows[namespace, memory.id] = stamped = memory.model_copy(update={"last_accessed_at": accessed_at})
        return stamped

    def read(self, namespace: str, memory_id: int, accessed_at: str | None, live_key: LiveKey | None = None) -> Memory:
        with self._lock:
            stored = self._rows.get((namespace, memory_id))
            self._fence(live_key, READ_KEY_NOT_LIVE)  # read, then check, then stamp or answer (LiveKey)
            if stored is None or stored.status == "deleted":
                raise MemoryNotFoundError(memory_id)
            return _copy(stored if accessed_at is None else self._stamp_one(namespace, stored, accessed_at))

    def history(self, namespace: str, memory_id: int, limit: int, offset: int) -> Revisions:
        with self._lock:
            if (namespace, memory_id) not in self._rows:
                raise MemoryNotFoundError(memory_id)
            newest_first = self._revisions.get((namespace, memory_id), [])[::-1]
            return Revisions(items=newest_first[offset : offset + limit], total=len(newest_first))

    def changes(self, namespace: str, since: str, limit: int, offset: int) -> Revisions:
        with self._lock:
            logged = [rev for (ns, _), revs in self._revisions.items() if ns == namespace for rev in revs]
        logged = [rev for rev in logged if rev.changed_at >= since]
        logged.sort(key=lambda rev: (rev.changed_at, rev.id, rev.revision), reverse=True)
        return Revisions(items=logged[offset : offset + limit], total=len(logged))

    def remove(self, namespace: str, loaded: Loaded) -> bool:
        with self._lock:
            if not self._as_loaded(namespace, loaded):
                return False
            self._forget(namespace, loaded.memory.id)
            return True

    def _forget(self, namespace: str, memory_id: int) -> None:
        del self._rows[namespace, memory_id]
        self._deleted.pop((namespace, memory_id), None)
        self._revisions.pop((namespace, memory_id), None)
        self._digests.drop(namespace, memory_id)
        for key, (prior, _) in list(self._idempotency.items()):
            if key[0] == namespace and prior.memory_id == memory_id:
                del self._idempotency[key]

    def deleted_before(self, deleted_before: str) -> Iterator[tuple[str, int]]:
        with self._lock:
            due = [key for key, deletion in self._deleted.items() if deletion.deleted_at < deleted_before]
        yield from due

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
            # As DynamoDB's listing: every row, but its stamp only where the order reads it.
            if query.sort == "last_accessed_at":
                return Matches(items=[_copy(memory) for memory in page], total=len(matches), stored_stamps=True)
            unstamped = [memory.model_copy(update={"last_accessed_at": None}, deep=True) for memory in page]
            return Matches(items=unstamped, total=len(matches))

    def stamp(self, namespace: str, memory_ids: Sequence[int], accessed_at: str) -> None:
        self._stamp_all(namespace, memory_ids, accessed_at, deleted_too=True)

    def stamp_with_prior(self, namespace: str, memory_ids: Sequence[int], accessed_at: str) -> dict[int, StoredStamp]:
        return self._stamp_all(namespace, memory_ids, accessed_at, deleted_too=False)

    def _stamp_all(
        self, namespace: str, memory_ids: Sequence[int], accessed_at: str, *, deleted_too: bool
    ) -> dict[int, StoredStamp]:
        """Stamp each stored memory (a deleted one when `deleted_too`); what each held before."""
        with self._lock:
            priors = {}
            for memory_id in dict.fromkeys(memory_ids):
                stored = self._rows.get((namespace, memory_id))
                if stored is not None:
                    priors[memory_id] = StoredStamp(stored.status, stored.last_accessed_at)
                    if deleted_too or stored.status != "deleted":
                        self._stamp_one(namespace, stored, accessed_at)
            return priors

    def records(self, namespace: str, memory_ids: Sequence[int]) -> list[Memory]:
        with self._lock:
            return [_copy(self._rows[namespace, i]) for i in dict.fromkeys(memory_ids) if (namespace, i) in self._rows]

    def stored_stamps(self, namespace: str, memory_ids: Sequence[int]) -> dict[int, StoredStamp]:
        with self._lock:
            found = [self._rows[namespace, i] for i in memory_ids if (namespace, i) in self._rows]
            return {memory.id: StoredStamp(memory.status, memory.last_accessed_at) for memory in found}
