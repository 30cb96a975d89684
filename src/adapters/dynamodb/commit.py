"""The write side over one table: a memory loaded as a write reads it, a commit assembled from every kind of item's own
actions (`actions`, the one place that knows which kinds a change touches) and written in one transaction, and a
memory's removal. Nothing here decides: core.changes did, core.writes retries."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from adapters.dynamodb import (
    accessitems,
    changes,
    counters,
    digests,
    idempotency,
    records,
    revisions,
    searchcopies,
    tagcopies,
)
from adapters.dynamodb.client import TransactionCancelledError, storage_refused
from adapters.dynamodb.codec import memory_partition
from adapters.dynamodb.fence import transact_fenced
from adapters.dynamodb.table import Items
from core.errors import WriteConflictError
from core.repository import Commit, IdempotencyKeyTakenError, Loaded
from core.repository.commit import CommitTooLargeError, StaleLoadError

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

Item = dict[str, Any]
# The most actions one TransactWriteItems takes.
TRANSACTION_ITEMS: Final = 100


@dataclass(frozen=True)
class Assembled:
    """A commit's transaction, and where in it each change's record (and each create's idempotency record) is, so a
    cancellation is read change by change."""

    actions: list[Item]
    records: list[int]
    idempotency: dict[int, int]  # change's index -> its idempotency record's
    checks: list[int]


def load(items: Items, namespace: str, memory_id: int) -> Loaded | None:
    """The memory item with its stamp, by strongly consistent reads in one call; None when there is none."""
    item = accessitems.stamped(items, namespace, [memory_id], consistent=True)[0]
    return records.loaded(item) if item else None


def actions(table: str, commit: Commit) -> Assembled:
    """Every action of a commit: the changes' records first (the i-th action is the i-th change's), the checks of the
    memories it reads but does not change, the namespace's totals they move, the creates' idempotency records, each
    change's revision, access item, search copy, digest and tag copies, then the tags' totals: one Update per partition
    whose totals move."""
    namespace = commit.namespace
    moves: counters.Moves = {}
    partition = memory_partition(namespace)
    for change in commit.changes:
        counters.move(moves, partition, change.before.memory if change.before else None, change.after)
    namespace_totals = counters.totals_actions(table, {partition["S"]: moves.pop(partition["S"])})
    found = [records.change_action(table, namespace, change) for change in commit.changes]
    checked = range(len(found), len(found) + len(commit.checks))
    found += [records.check_action(table, namespace, loaded) for loaded in commit.checks] + namespace_totals
    assembled = Assembled(found, list(range(len(commit.changes))), {}, list(checked))
    for index, change in enumerate(commit.changes):
        if change.idempotency is not None:
            assembled.idempotency[index] = len(found)
            found.append(idempotency.put_action(table, namespace, change.after, change.idempotency))
    for change in commit.changes:
        before, after = (change.before.memory if change.before else None), change.after
        found += [
            revisions.put_action(table, namespace, change.revision),
            *accessitems.change_actions(table, namespace, before, after),
            searchcopies.put_action(table, namespace, after),
            digests.change_action(table, namespace, after, change.digest),
            *tagcopies.copy_actions(table, namespace, after.id, before, after, moves),
        ]
    found += counters.totals_actions(table, moves)
    return assembled


def removal(table: str, namespace: str, loaded: Loaded) -> list[Item]:
    """The one transaction removing a memory whose revisions are gone: its record (only while its removal is marked),
    digest, search copy, access item, tag copies and idempotency record, and the totals counting it."""
    memory = loaded.memory
    moves: counters.Moves = {}
    counters.move(moves, memory_partition(namespace), memory, None)
    removed = [
        records.removal_action(table, namespace, memory.id),
        {"Put": {"TableName": table, "Item": changes.marker(namespace, memory.id, "gone")}},
        digests.removal_action(table, namespace, memory.id),
        searchcopies.removal_action(table, namespace, memory.id),
        accessitems.removal_action(table, namespace, memory.id),
        *tagcopies.copy_actions(table, namespace, memory.id, memory, None, moves),
    ]
    if (key_hash := records.token_of(loaded).idempotency) is not None:
        removed.append(idempotency.removal_action(table, namespace, key_hash, memory.id))
    return [*removed, *counters.totals_actions(table, moves)]


class Committer:
    """Commits and removals over one table."""

    def __init__(self, client: DynamoDBClient, table_name: str, items: Items) -> None:
        self._client = client
        self._table = table_name
        self._items = items

    def commit(self, commit: Commit) -> None:
        assembled = actions(self._table, commit)
        fence = 0 if commit.live_key is None else 1
        if len(assembled.actions) + fence > TRANSACTION_ITEMS:
            raise CommitTooLargeError(len(assembled.actions) + fence, TRANSACTION_ITEMS)
        try:
            transact_fenced(self._items, self._table, assembled.actions, commit.live_key)
        except TransactionCancelledError as cancelled:
            raise self._refusal(commit, assembled, cancelled) from None

    def _refusal(self, commit: Commit, assembled: Assembled, cancelled: TransactionCancelledError) -> Exception:
        """What a cancelled commit tells its caller, by the first change (or check) whose own condition failed."""
        for checked_at, loaded in zip(assembled.checks, commit.checks, strict=True):
            if cancelled.failed(checked_at):
                return StaleLoadError(loaded.memory.id)
        for index, change in enumerate(commit.changes):
            position = assembled.idempotency.get(index)
            if position is not None and change.idempotency is not None:
                if cancelled.failed(position):
                    prior = idempotency.prior_create(self._items, commit.namespace, change.idempotency.key_hash)
                    if prior is not None:
                        return IdempotencyKeyTakenError(prior)
                if cancelled.collided(position):
                    field = change.idempotency.field
                    return WriteConflictError(f"a create with this {field} is still in flight; retry it shortly")
            failed = cancelled.failed(assembled.records[index]) or (position is not None and cancelled.failed(position))
            if failed and change.before is not None:
                return StaleLoadError(change.after.id)
            if failed:
                return WriteConflictError(f"id {change.after.id} collided with another write; retry the create")
        return storage_refused(cancelled)

    def remove(self, namespace: str, loaded: Loaded) -> bool:
        """Remove a memory for good: mark its removal begun (unless it is), remove its revisions, then everything
        else in one transaction, then the totals of tags no memory has any more. A removal interrupted half-way is
        finished by the next one. False when the memory is no longer as loaded."""
        if not loaded.purging and not records.mark_purging(self._client, self._table, namespace, loaded):
            return False
        revisions.delete_all(self._items, namespace, loaded.memory.id)
        try:
            self._items.transact(removal(self._table, namespace, loaded))
        except TransactionCancelledError as cancelled:
            if not cancelled.failed(0):  # failed(0): another purge finished it first
                raise storage_refused(cancelled) from None
            return True
        counters.drop_unused_tag_totals(self._client, self._table, namespace, loaded.memory.tags)
        return True
