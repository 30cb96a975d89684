"""A memory's life after its creation: every change written with its revision, restore, the history read, and
the purge (on request or by the sweep over the sparse index of deleted memories)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from adapters.dynamodb.client import ConditionFailedError, TransactionCancelledError, call, storage_refused
from adapters.dynamodb.codec import (
    DELETED_INDEX,
    IDEMPOTENCY_PREFIX,
    MEMORY_PREFIX,
    NAMESPACE_PREFIX,
    PURGE_SHARDS,
    STATS_SK,
    TOTALS_ATTRIBUTES,
    access_key,
    digest_key,
    from_revision,
    memory_key,
    memory_partition,
    revision_prefix,
    search_copy_key,
    tag_partition,
    to_revision,
    totals_attribute,
)
from adapters.dynamodb.digests import KEEP, Keep, digest_actions
from adapters.dynamodb.expressions import Write, tag_copy_actions, totals_update
from adapters.dynamodb.fence import transact_fenced
from adapters.dynamodb.searchcopies import to_search_copy
from adapters.dynamodb.stored import TRANSACTION_ATTEMPTS, Items, Stored
from core.digest import Digest
from core.errors import MemoryNotFoundError, WriteConflictError
from core.history import Change, Revision
from core.limits import ID_DIGITS
from core.model import Memory
from core.repository import LiveKey, Revisions

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


class Lifecycle:
    """The writes that leave a revision, and the reads and purges of a memory's history, over one table."""

    def __init__(self, client: DynamoDBClient, table_name: str, items: Items) -> None:
        self._client = client
        self._table = table_name
        self._items = items

    def change(
        self,
        namespace: str,
        stored: Stored,
        write: Write,
        after: Memory,
        change: Change,
        now: str,
        key_id: str | None,
        live_key: LiveKey | None = None,
        digest: Digest | Keep = KEEP,
    ) -> bool:
        """Write `write` to the memory `stored` holds and its next revision (`after`, as `change`), moving its
        totals, tag copies and access item's status and type, rewriting its search copy and writing its digest
        (digests.digest_actions), all in one transaction that holds only while the memory is still as read (and
        `live_key` is live: AuthenticationError otherwise); False when it no longer is (nothing written)."""
        number = stored.revisions + 1
        condition, values = stored.unchanged()
        write.set("revisions = :revisions", revisions={"N": str(number)})
        request = write.request()
        request["ExpressionAttributeValues"] = {**request["ExpressionAttributeValues"], **values}
        update = {
            "TableName": self._table,
            "Key": memory_key(namespace, after.id),
            "ConditionExpression": condition,
            **request,
        }
        revision = Revision.of(after, number, change, now, key_id)
        actions: list[dict[str, Any]] = [
            {"Update": update},
            # Unconditional: the memory's own condition (its revision count) makes this number its alone.
            {"Put": {"TableName": self._table, "Item": to_revision(namespace, revision)}},
        ]
        before = stored.memory
        moved: dict[str, int] = {}
        for memory, delta in ((before, -1), (after, 1)):
            attribute = totals_attribute(memory.status, memory.memory_type)
            moved[attribute] = moved.get(attribute, 0) + delta
        if moved := {attribute: delta for attribute, delta in moved.items() if delta}:
            actions.append(totals_update(self._table, memory_partition(namespace), moved))
        actions += tag_copy_actions(self._table, namespace, before, after)
        actions.append({"Put": {"TableName": self._table, "Item": to_search_copy(namespace, after)}})
        if (before.status, before.memory_type) != (after.status, after.memory_type):
            actions.append({"Update": self._access_kind(namespace, after)})
        actions += digest_actions(self._table, namespace, after, digest)
        try:
            transact_fenced(self._items, self._table, actions, live_key)
        except TransactionCancelledError as cancelled:
            if cancelled.failed(0):
                return False  # changed since the read
            raise storage_refused(cancelled) from None
        return True

    def _access_kind(self, namespace: str, after: Memory) -> dict[str, Any]:
        """The update of the memory's access item to its new status and type (its stamp left as it is)."""
        return {
            "TableName": self._table,
            "Key": access_key(namespace, after.id),
            "UpdateExpression": "SET #status = :status, memory_type = :type",
            "ConditionExpression": "attribute_exists(pk)",  # never a stampless one in place of a lost one
            "ExpressionAttributeNames": {"#status": "status"},
            "ExpressionAttributeValues": {":status": {"S": after.status}, ":type": {"S": after.memory_type}},
        }

    def restore(
        self, namespace: str, memory_id: int, now: str, key_id: str | None, live_key: LiveKey | None = None
    ) -> Memory:
        for _ in range(TRANSACTION_ATTEMPTS):
            stored = self._deleted(namespace, memory_id)
            restored = stored.memory.model_copy(update={"status": stored.prior_status})
            write = Write()
            write.set("#status = :status", status={"S": restored.status})
            write.removes += ["prior_status", "deleted_at", "purge_shard"]
            if self.change(namespace, stored, write, restored, "restored", now, key_id, live_key):
                return restored
        raise WriteConflictError(f"memory {memory_id} kept changing under this restore; retry it")

    def _deleted(self, namespace: str, memory_id: int) -> Stored:
        """The stored memory, when it is deleted and its purge has not begun; MemoryNotFoundError otherwise."""
        stored = self._items.read(namespace, memory_id)
        if stored is None or stored.purging:
            raise MemoryNotFoundError(memory_id)
        if stored.memory.status != "deleted":
            raise MemoryNotFoundError(memory_id, "is not deleted")
        return stored

    def history(self, namespace: str, memory_id: int, limit: int, offset: int) -> Revisions:
        stored = self._items.read(namespace, memory_id)
        if stored is None or stored.purging:
            raise MemoryNotFoundError(memory_id)
        total = stored.revisions
        newest = total - offset  # revisions are numbered 1..total, so a page is a range of numbers
        if newest < 1:
            return Revisions(items=[], total=total)
        oldest = max(1, newest - limit + 1)
        prefix = revision_prefix(memory_id)
        response = call(
            self._client.query,
            TableName=self._table,
            KeyConditionExpression="pk = :pk AND sk BETWEEN :oldest AND :newest",
            ExpressionAttributeValues={
                ":pk": memory_partition(namespace),
                ":oldest": {"S": f"{prefix}{oldest:0{ID_DIGITS}d}"},
                ":newest": {"S": f"{prefix}{newest:0{ID_DIGITS}d}"},
            },
            ScanIndexForward=False,
            ConsistentRead=True,
        )
        return Revisions(items=[from_revision(item) for item in response["Items"]], total=total)

    def purge(self, namespace: str, memory_id: int, deleted_before: str | None = None) -> bool:
        """Remove a deleted memory for good: its revisions, then in one transaction the memory, its tag copies,
        its idempotency record and its counts. A purge interrupted half-way is finished by the next one (the
        memory is marked `purging` first, which hides its history and refuses a restore). With `deleted_before`,
        only a memory deleted before then; False when it is not (nothing removed). MemoryNotFoundError when the
        memory is missing or not deleted."""
        for _ in range(TRANSACTION_ATTEMPTS):
            stored = self._items.read(namespace, memory_id)
            if stored is None:
                raise MemoryNotFoundError(memory_id)
            if stored.memory.status != "deleted":
                raise MemoryNotFoundError(memory_id, "is not deleted")
            if deleted_before is not None and not (stored.deleted_at or deleted_before) < deleted_before:
                return False
            if stored.purging or self._mark_purging(namespace, stored):
                self._delete_revisions(namespace, memory_id)
                self._remove(namespace, stored)
                return True
        raise WriteConflictError(f"memory {memory_id} kept changing under this purge; retry it")

    def _mark_purging(self, namespace: str, stored: Stored) -> bool:
        condition, values = stored.unchanged()
        try:
            call(
                self._client.update_item,
                TableName=self._table,
                Key=memory_key(namespace, stored.memory.id),
                UpdateExpression="SET purging = :purging",
                ConditionExpression=condition,
                ExpressionAttributeNames={"#status": "status"},
                ExpressionAttributeValues={**values, ":purging": {"BOOL": True}},
            )
        except ConditionFailedError:
            return False
        return True

    def _delete_revisions(self, namespace: str, memory_id: int) -> None:
        request = {
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)",
            "ExpressionAttributeValues": {
                ":pk": memory_partition(namespace),
                ":prefix": {"S": revision_prefix(memory_id)},
            },
            "ProjectionExpression": "pk, sk",
            "ConsistentRead": True,
        }
        keys = [key for page in self._items.pages(request) for key in page]
        self._items.batch_write([{"DeleteRequest": {"Key": key}} for key in keys])

    def _remove(self, namespace: str, stored: Stored) -> None:
        memory = stored.memory
        actions: list[dict[str, Any]] = [
            {
                "Delete": {
                    "TableName": self._table,
                    "Key": memory_key(namespace, memory.id),
                    "ConditionExpression": "attribute_exists(purging)",
                }
            },
            totals_update(
                self._table, memory_partition(namespace), {totals_attribute("deleted", memory.memory_type): -1}
            ),
            {"Delete": {"TableName": self._table, "Key": digest_key(namespace, memory.id)}},
            {"Delete": {"TableName": self._table, "Key": search_copy_key(namespace, memory.id)}},
            {"Delete": {"TableName": self._table, "Key": access_key(namespace, memory.id)}},
        ]
        actions += tag_copy_actions(self._table, namespace, memory, memory.model_copy(update={"tags": []}))
        if stored.idempotency is not None:
            actions.append(
                {
                    "Delete": {
                        "TableName": self._table,
                        "Key": {
                            "pk": memory_partition(namespace),
                            "sk": {"S": f"{IDEMPOTENCY_PREFIX}{stored.idempotency}"},
                        },
                        "ConditionExpression": "attribute_not_exists(pk) OR memory_id = :id",
                        "ExpressionAttributeValues": {":id": {"N": str(memory.id)}},
                    }
                }
            )
        try:
            self._items.transact(actions)
        except TransactionCancelledError as cancelled:
            if not cancelled.failed(0):  # failed(0): another purge finished it first
                raise storage_refused(cancelled) from None
            return
        self._drop_unused_tag_totals(namespace, memory.tags)

    def _drop_unused_tag_totals(self, namespace: str, tags: list[str]) -> None:
        """Delete the totals of each of `tags` that no longer count any memory, so a tag no memory has leaves
        nothing behind. The condition keeps totals a concurrent create has just counted again. (A transaction
        cannot both move an item's counts and delete it, hence a write of its own after the purge's.)"""
        names = {f"#n{i}": attribute for i, attribute in enumerate(TOTALS_ATTRIBUTES)}
        unused = " AND ".join(f"(attribute_not_exists({name}) OR {name} = :zero)" for name in names)
        for tag in tags:
            try:
                call(
                    self._client.delete_item,
                    TableName=self._table,
                    Key={"pk": tag_partition(namespace, tag), "sk": {"S": STATS_SK}},
                    ConditionExpression=unused,
                    ExpressionAttributeNames=names,
                    ExpressionAttributeValues={":zero": {"N": "0"}},
                )
            except ConditionFailedError:
                continue  # the tag still counts a memory

    def purge_deleted(self, deleted_before: str) -> int:
        """Purge every memory deleted before `deleted_before`, found in the sparse index of deleted memories
        (never by scanning the table); the number purged."""
        purged = 0
        for shard in range(PURGE_SHARDS):
            for key in self._due(f"{shard:02d}", deleted_before):
                namespace = key["pk"]["S"][len(NAMESPACE_PREFIX) :]
                memory_id = int(key["sk"]["S"][len(MEMORY_PREFIX) :])
                try:
                    purged += self.purge(namespace, memory_id, deleted_before)
                except MemoryNotFoundError:
                    continue  # restored, or purged by a request, since the index was read
        return purged

    def _due(self, shard: str, deleted_before: str) -> Iterator[dict[str, Any]]:
        request = {
            "IndexName": DELETED_INDEX,
            "KeyConditionExpression": "purge_shard = :shard AND deleted_at < :before",
            "ExpressionAttributeValues": {":shard": {"S": shard}, ":before": {"S": deleted_before}},
        }
        for page in self._items.pages(request):
            yield from page
