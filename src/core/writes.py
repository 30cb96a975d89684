"""A memory's writes, decided once for every store: load, decide (core.changes), commit all or nothing. A commit that
goes stale (another writer got in between) is loaded and decided again, a bounded number of times; the stores retry
nothing of their own but a transaction's collisions."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence, Set
from contextlib import contextmanager, suppress
from typing import Final

from core import changes as rules
from core.digest import Digest, Indexer
from core.errors import FieldError, InvalidInputError, MemoryNotFoundError, WriteConflictError
from core.model import IdempotentCreate, Memory, MemoryChanges
from core.repository import Commit, LiveKey, MemoryRepository
from core.repository.commit import Change, CommitTooLargeError, Loaded, StaleLoadError

# An update re-reads and re-decides this often while the memory keeps changing under it; a delete, a restore and a
# purge (whose conflicts are rarer and cheaper to decide again) this often.
UPDATE_ATTEMPTS: Final = 3
CHANGE_ATTEMPTS: Final = 4


def add(
    store: MemoryRepository,
    namespace: str,
    memory: Memory,
    idempotency: IdempotentCreate | None = None,
    key_id: str | None = None,
    live_key: LiveKey | None = None,
    digest: Digest | None = None,
) -> None:
    """Store a new memory (its id already drawn), its first revision and its digest (none given: one without a vector,
    for the backfill to embed). IdempotencyKeyTakenError names the earlier create when `idempotency`'s key is
    recorded; WriteConflictError when the id is taken."""
    change = rules.created(memory, key_id, digest or Digest(), idempotency)
    store.commit(Commit(namespace, (change,), live_key))


def add_superseding(
    store: MemoryRepository,
    namespace: str,
    memory: Memory,
    supersedes: Sequence[int],
    idempotency: IdempotentCreate | None = None,
    key_id: str | None = None,
    live_key: LiveKey | None = None,
    digest: Digest | None = None,
) -> None:
    """Store a new memory that supersedes the memories `supersedes` (core.changes.superseded), in one commit with
    them: InvalidInputError naming each missing, deleted or repeated entry (`supersedes[i]`), nothing written."""
    created = rules.created(memory, key_id, digest or Digest(), idempotency)
    for _ in range(CHANGE_ATTEMPTS):
        found = store.load_all(namespace, supersedes)
        changes = _superseded(supersedes, found, memory.id, memory.created_at, key_id, "supersedes")
        with suppress(StaleLoadError), _one_write("supersedes"):  # stale: load and decide again
            store.commit(Commit(namespace, (created, *changes), live_key))
            return
    raise WriteConflictError(f"the memories that memory {memory.id} supersedes kept changing; retry the create")


def supersede(
    store: MemoryRepository,
    namespace: str,
    memory_id: int,
    ids: Sequence[int],
    now: str,
    key_id: str | None = None,
    live_key: LiveKey | None = None,
) -> list[Memory]:
    """Supersede the memories `ids` by the active memory `memory_id`, in one commit that holds only while it is still
    as loaded; the superseded records, in the order of `ids`. MemoryNotFoundError when `memory_id` is missing or
    deleted; InvalidInputError when it is not active (`id`), or naming each entry of `ids` that cannot be superseded."""
    for _ in range(CHANGE_ATTEMPTS):
        found = store.load_all(namespace, [memory_id, *ids])  # one read of them all
        by = rules.superseding(found[0], memory_id)
        changes = _superseded(ids, found[1:], memory_id, now, key_id, "ids")
        with suppress(StaleLoadError), _one_write("ids"):  # stale: load and decide again
            store.commit(Commit(namespace, changes, live_key, checks=(by,)))
            return [change.after for change in changes]
    raise WriteConflictError(f"the memories that memory {memory_id} supersedes kept changing; retry it")


@contextmanager
def _one_write(field: str) -> Iterator[None]:
    """A commit too large for its store's one atomic write, told as bad input naming `field`."""
    try:
        yield
    except CommitTooLargeError as large:
        message = (
            f"these memories and their tags need {large.items} items written in one atomic write, which holds at most "
            f"{large.limit}: supersede fewer memories at once"
        )
        raise InvalidInputError([FieldError(field, message)]) from None


def _superseded(
    ids: Sequence[int], loaded: Sequence[Loaded | None], by: int, now: str, key_id: str | None, field: str
) -> tuple[Change, ...]:
    """The changes superseding `ids` (as `loaded`) by memory `by`."""
    if errors := rules.supersede_errors(ids, loaded, field, by):
        raise InvalidInputError(errors)
    return tuple(rules.superseded(entry, by, now, key_id) for entry in loaded if entry is not None)


def apply(
    store: MemoryRepository,
    namespace: str,
    memory_id: int,
    changes: MemoryChanges,
    expected_versions: Set[int] | None,
    now: str,
    key_id: str | None = None,
    live_key: LiveKey | None = None,
    indexer: Indexer | None = None,
) -> Memory:
    """One PATCH (core.changes.updated), returning the memory as stored after it: unchanged (same version and
    `updated_at`, nothing written) when no given field changes."""
    indexed: dict[tuple[str, tuple[str, ...]], Digest] = {}  # each text indexed once, however many attempts

    def index(content: str, tags: Sequence[str]) -> Digest:
        text = (content, tuple(tags))
        if text not in indexed:
            indexed[text] = indexer.digest(content, tags) if indexer else Digest()
        return indexed[text]

    for _ in range(UPDATE_ATTEMPTS):
        loaded = rules.visible(store.load(namespace, memory_id), memory_id)
        change = rules.updated(loaded, changes, expected_versions, now, key_id, index)
        if change is None:
            return loaded.memory
        with suppress(StaleLoadError):  # stale: load and decide again
            store.commit(Commit(namespace, (change,), live_key))
            return change.after
    raise WriteConflictError(f"memory {memory_id} kept changing under this update; retry it")


def delete(
    store: MemoryRepository,
    namespace: str,
    memory_id: int,
    now: str,
    key_id: str | None = None,
    live_key: LiveKey | None = None,
) -> None:
    """Mark a visible memory deleted at `now` (core.changes.deleted)."""

    def decide(loaded: Loaded | None) -> Change:
        return rules.deleted(rules.visible(loaded, memory_id), now, key_id)

    _committed(store, namespace, memory_id, decide, live_key, "delete")


def restore(
    store: MemoryRepository,
    namespace: str,
    memory_id: int,
    now: str,
    key_id: str | None = None,
    live_key: LiveKey | None = None,
) -> Memory:
    """Give a deleted memory back the status it had (core.changes.restored) and return it."""

    def decide(loaded: Loaded | None) -> Change:
        return rules.restored(rules.deleted_one(loaded, memory_id), now, key_id)

    return _committed(store, namespace, memory_id, decide, live_key, "restore").after


def _committed(
    store: MemoryRepository,
    namespace: str,
    memory_id: int,
    decide: Callable[[Loaded | None], Change],
    live_key: LiveKey | None,
    what: str,
) -> Change:
    """Load the memory, decide its change and commit it; while the commit goes stale, again, CHANGE_ATTEMPTS times."""
    for _ in range(CHANGE_ATTEMPTS):
        change = decide(store.load(namespace, memory_id))
        with suppress(StaleLoadError):  # stale: load and decide again
            store.commit(Commit(namespace, (change,), live_key))
            return change
    raise WriteConflictError(f"memory {memory_id} kept changing under this {what}; retry it")


def purge(store: MemoryRepository, namespace: str, memory_id: int, deleted_before: str | None = None) -> bool:
    """Remove a deleted memory for good (a removal already begun is finished); with `deleted_before`, only one
    deleted before then: False when it is not. MemoryNotFoundError when it is missing or not deleted."""
    for _ in range(CHANGE_ATTEMPTS):
        loaded = store.load(namespace, memory_id)
        if loaded is None:
            raise MemoryNotFoundError(memory_id)
        if loaded.deletion is None:
            raise MemoryNotFoundError(memory_id, "is not deleted")
        if deleted_before is not None and not loaded.deletion.deleted_at < deleted_before:
            return False
        if store.remove(namespace, loaded):
            return True
    raise WriteConflictError(f"memory {memory_id} kept changing under this purge; retry it")


def purge_deleted(store: MemoryRepository, deleted_before: str) -> int:
    """Purge every memory deleted before `deleted_before` (found without reading any other); how many."""
    purged = 0
    for namespace, memory_id in store.deleted_before(deleted_before):
        try:
            purged += purge(store, namespace, memory_id, deleted_before)
        except MemoryNotFoundError:
            continue  # restored, or purged by a request, since it was found
    return purged
