"""What a memory's recorded life can have been, by the rules the service changes memories by (core.changes): an import
brings in only records and histories some memory could have lived. Each broken rule is one FieldError naming the field,
in the order a reader would find it.

Two things a real store exports are not errors: a history that begins after the memory's creation (a memory imported
without its history has history from its first change after the import), and a change whose time is a little
before the one before it (overlapping requests land in either order, each carrying the time it arrived).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Final

from core.clock import parse_timestamp
from core.errors import FieldError
from core.history import Revision
from core.limits import IMPORT_CHANGED_AT_SLACK_SECONDS
from core.model import Memory

# What a delete or a restore leaves as it was: they change only the status.
_KEPT_BY_STATUS_CHANGES: Final = ("content", "tags", "memory_type", "updated_at", "version")
_STATUS_CHANGE: Final = {"deleted": "delete", "restored": "restore"}
# What the last revision holds of the record: all of it but last_accessed_at.
_RECORDED: Final = tuple(name for name in Memory.model_fields if name != "last_accessed_at")
_SLACK: Final = timedelta(seconds=IMPORT_CHANGED_AT_SLACK_SECONDS)
_REVISION_TIMES: Final = ("created_at", "updated_at", "changed_at")


def after_the_import(now: str) -> str:
    """What a time later than `now`, the import's own time (its clock when it began), is told."""
    return f"must not be after this import's own time ({now}): an export holds only what has already happened"


def life_errors(
    memory: Memory, deleted_at: str | None, revisions: list[Revision] | None, now: str | None = None
) -> Iterator[FieldError]:
    """Every rule the record (`deleted_at` when it is deleted) and its history (oldest first) break; with `now`, the
    import's own time, first every time they record after it."""
    if now is not None:
        yield from _after(now, memory, deleted_at, revisions or [])
    created = memory.created_at
    if memory.last_accessed_at is not None and memory.last_accessed_at < created:
        yield FieldError("memory.last_accessed_at", "must not be before created_at: a memory is read after it exists")
    if deleted_at is not None and deleted_at < created:
        yield FieldError("deleted_at", "must not be before memory.created_at: a memory is deleted after it exists")
    if revisions:
        yield from _beginning(memory, revisions[0])
        for index, revision in enumerate(revisions):
            yield from _revision_errors(memory, index, revision, revisions[index - 1] if index else None)
        yield from _ending(memory, len(revisions) - 1, revisions[-1])


def _after(now: str, memory: Memory, deleted_at: str | None, revisions: list[Revision]) -> Iterator[FieldError]:
    times = [(f"memory.{name}", getattr(memory, name)) for name in ("created_at", "updated_at", "last_accessed_at")]
    times.append(("deleted_at", deleted_at))
    for index, revision in enumerate(revisions):
        times += [(f"revisions[{index}].{name}", getattr(revision, name)) for name in _REVISION_TIMES]
    # Contract timestamps are fixed-width, so they compare as strings.
    yield from (FieldError(field, after_the_import(now)) for field, value in times if value is not None and value > now)


def _beginning(memory: Memory, first: Revision) -> Iterator[FieldError]:
    created = memory.created_at
    if first.change != "created":
        if first.changed_at == created:
            yield FieldError(
                "revisions[0].change",
                "must be 'created': a history whose first change is at created_at begins with the creation (only a "
                "memory imported without its history has a history that begins later, at a later change)",
            )
        return
    if first.changed_at != created:
        yield FieldError("revisions[0].changed_at", "must equal memory.created_at: the creation is when it was made")
    if first.version != 1:
        yield FieldError("revisions[0].version", "must be 1: a memory is created at version 1")
    if first.updated_at != created:
        yield FieldError("revisions[0].updated_at", "must equal created_at: a memory is created unchanged")


def _revision_errors(memory: Memory, index: int, revision: Revision, before: Revision | None) -> Iterator[FieldError]:
    field = f"revisions[{index}]"
    if revision.created_at != memory.created_at:
        yield FieldError(f"{field}.created_at", "must equal memory.created_at: a memory is created once")
    if before is not None:
        yield from _order(field, revision, before)
    if revision.status == "deleted" and revision.change != "deleted":
        message = f"must not be 'deleted' after a change {revision.change!r}: only a delete makes a memory deleted"
        yield FieldError(f"{field}.status", message)
    elif revision.change == "deleted" and revision.status != "deleted":
        yield FieldError(f"{field}.status", "must be 'deleted' after a change 'deleted'")
    if before is not None:
        yield from _made_by_change(field, revision, before)
    if revision.changed_at < memory.created_at:
        yield FieldError(
            f"{field}.changed_at", "must not be before memory.created_at: a memory changes after it exists"
        )
    elif before is not None and parse_timestamp(before.changed_at) - parse_timestamp(revision.changed_at) > _SLACK:
        yield FieldError(
            f"{field}.changed_at",
            f"must not be more than {IMPORT_CHANGED_AT_SLACK_SECONDS} seconds before the change before it "
            f"({before.changed_at}): changes are recorded in the order they were made",
        )


def _order(field: str, revision: Revision, before: Revision) -> Iterator[FieldError]:
    """Whether `revision`'s change can follow `before`: created only first, a restore only of a deleted memory,
    an update or a delete never of one."""
    deleted = before.status == "deleted"
    if revision.change == "created":
        yield FieldError(f"{field}.change", "must not be 'created': only the first change creates a memory")
    elif revision.change == "restored" and not deleted:
        yield FieldError(f"{field}.change", "must not be 'restored': only a deleted memory can be restored")
    elif revision.change in ("updated", "deleted", "superseded") and deleted:
        yield FieldError(
            f"{field}.change", f"must not be {revision.change!r}: a deleted memory is only restored (or purged)"
        )


def _made_by_change(field: str, revision: Revision, before: Revision) -> Iterator[FieldError]:
    """What the change itself makes: an update (and a supersede) adds 1 to the version and sets updated_at to its time;
    a supersede makes the memory invalid and names what superseded it; a delete or a restore changes only the status."""
    if revision.change in ("updated", "superseded"):
        if revision.version != before.version + 1:
            yield FieldError(f"{field}.version", f"must be {before.version + 1}: every update adds 1 to the version")
        if revision.updated_at != revision.changed_at:
            yield FieldError(f"{field}.updated_at", "must equal its changed_at: an update sets updated_at to its time")
    yield from _superseding(field, revision)
    if revision.change in _STATUS_CHANGE:
        change = _STATUS_CHANGE[revision.change]
        for name in _KEPT_BY_STATUS_CHANGES:
            if getattr(revision, name) != getattr(before, name):
                yield FieldError(
                    f"{field}.{name}", f"must be as in the revision before it: a {change} changes only the status"
                )


def _superseding(field: str, revision: Revision) -> Iterator[FieldError]:
    """A supersede makes the memory invalid and names what superseded it; no other change names one."""
    if revision.change != "superseded":
        if revision.superseded_by is not None:
            yield FieldError(f"{field}.superseded_by", "must be null: only a change 'superseded' names its superseder")
        return
    if revision.status != "invalid":
        yield FieldError(f"{field}.status", "must be 'invalid': a superseded memory is invalid")
    if revision.superseded_by is None:
        yield FieldError(f"{field}.superseded_by", "must name the memory that superseded it")


def _ending(memory: Memory, index: int, last: Revision) -> Iterator[FieldError]:
    for name in _RECORDED:
        if getattr(last, name) != getattr(memory, name):
            yield FieldError(
                f"revisions[{index}].{name}",
                f"must equal memory.{name}: the last revision must be the memory as it is (but last_accessed_at)",
            )
