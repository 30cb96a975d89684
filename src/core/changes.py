"""The rules each change of a memory is decided by, pure: what a create, an update, a delete and a restore make of a
loaded memory (its record, its next revision, its deletion, its digest), for core.writes to commit. core.life checks an
imported history against the same rules."""

from __future__ import annotations

from collections.abc import Callable, Sequence, Set

from core.digest import Digest
from core.errors import FieldError, InvalidInputError, MemoryNotFoundError, VersionExhaustedError, VersionMismatchError
from core.history import Change as ChangeKind
from core.history import Revision
from core.limits import MAX_VERSION
from core.model import IdempotentCreate, Memory, MemoryChanges
from core.repository.commit import Change, Deletion, Loaded

# What computes a digest (core.digest.Indexer.digest): called only when a change's text is new.
Index = Callable[[str, Sequence[str]], Digest]


def created(memory: Memory, key_id: str | None, digest: Digest, idempotency: IdempotentCreate | None = None) -> Change:
    """A new memory: its first revision, its digest, and its idempotency key if it has one."""
    revision = Revision.of(memory, 1, "created", memory.created_at, key_id)
    return Change(None, memory, revision, None, digest, idempotency)


def visible(loaded: Loaded | None, memory_id: int) -> Loaded:
    """The loaded memory when a request can see it; MemoryNotFoundError when it is missing or deleted."""
    if loaded is None or loaded.memory.status == "deleted":
        raise MemoryNotFoundError(memory_id)
    return loaded


def deleted_one(loaded: Loaded | None, memory_id: int) -> Loaded:
    """The loaded memory when it is deleted and its removal has not begun (what a restore or a purge takes);
    MemoryNotFoundError otherwise."""
    if loaded is None or loaded.purging:
        raise MemoryNotFoundError(memory_id)
    if loaded.deletion is None:
        raise MemoryNotFoundError(memory_id, "is not deleted")
    return loaded


def updated(
    loaded: Loaded, changes: MemoryChanges, expected: Set[int] | None, now: str, key_id: str | None, index: Index
) -> Change | None:
    """A PATCH of a visible memory: None when no given field changes; a new digest only when its text changes.
    VersionMismatchError unless `expected` (None: any) holds the loaded version, even for a PATCH that changes
    nothing; VersionExhaustedError for a change of a memory at MAX_VERSION."""
    before = loaded.memory
    if expected is not None and before.version not in expected:
        raise VersionMismatchError(before.id, before.version)
    after = changes.apply_to(before, now)
    if after is before:
        return None
    text_changed = (after.content, after.tags) != (before.content, before.tags)
    digest = index(after.content, after.tags) if text_changed else None
    return _next(loaded, after, "updated", now, key_id, None, digest)


def deleted(loaded: Loaded, now: str, key_id: str | None) -> Change:
    """A delete of a visible memory: only its status changes (`version` and `updated_at` stay); it keeps the status
    it had for a restore."""
    before = loaded.memory
    deletion = Deletion(prior_status=before.status, deleted_at=now)
    after = before.model_copy(update={"status": "deleted"})
    return _next(loaded, after, "deleted", now, key_id, deletion, None)


def restored(loaded: Loaded, now: str, key_id: str | None) -> Change:
    """A restore of a deleted memory: the status it had before the delete comes back, nothing else changes."""
    assert loaded.deletion is not None
    after = loaded.memory.model_copy(update={"status": loaded.deletion.prior_status})
    return _next(loaded, after, "restored", now, key_id, None, None)


def superseded(loaded: Loaded, by: int, now: str, key_id: str | None) -> Change:
    """A visible memory superseded by memory `by`: it becomes `invalid`, its version +1 and `updated_at` its time (its
    text unchanged, so its digest follows); its revision names `by`. VersionExhaustedError at MAX_VERSION."""
    before = loaded.memory
    if before.version >= MAX_VERSION:
        raise VersionExhaustedError(before.id)
    after = before.model_copy(update={"status": "invalid", "updated_at": now, "version": before.version + 1})
    return _next(loaded, after, "superseded", now, key_id, None, None, superseded_by=by)


def superseding(loaded: Loaded | None, memory_id: int) -> Loaded:
    """The loaded memory when it may supersede others: visible (MemoryNotFoundError otherwise) and active (a memory
    believed wrong replaces nothing: InvalidInputError naming `id`)."""
    by = visible(loaded, memory_id)
    if by.memory.status != "active":
        raise InvalidInputError([FieldError("id", "must be active: only a memory believed true supersedes others")])
    return by


def supersede_errors(
    ids: Sequence[int], loaded: Sequence[Loaded | None], field: str, by: int | None = None
) -> list[FieldError]:
    """What keeps the memories `ids` (`field`'s entries; `loaded`, in the same order) from being superseded by memory
    `by`: each repeated, missing or deleted entry, and `by` itself, named by its place in the list."""
    errors: list[FieldError] = []
    seen: dict[int, int] = {}
    for index, (memory_id, entry) in enumerate(zip(ids, loaded, strict=True)):
        name = f"{field}[{index}]"
        if memory_id in seen:
            errors.append(FieldError(name, f"repeats {field}[{seen[memory_id]}]: list each memory once"))
        elif memory_id == by:
            errors.append(FieldError(name, "must not be the superseding memory itself"))
        elif entry is None:
            errors.append(FieldError(name, "does not exist"))
        elif entry.memory.status == "deleted":
            errors.append(FieldError(name, "is deleted: only a memory that is not deleted can be superseded"))
        seen.setdefault(memory_id, index)
    return errors


def _next(
    loaded: Loaded,
    after: Memory,
    change: ChangeKind,
    now: str,
    key_id: str | None,
    deletion: Deletion | None,
    digest: Digest | None,
    superseded_by: int | None = None,
) -> Change:
    """The change after `loaded`, recorded as its next revision (numbered 1, 2, ... in the memory's life)."""
    revision = Revision.of(after, loaded.revisions + 1, change, now, key_id, superseded_by)
    return Change(loaded, after, revision, deletion, digest)
