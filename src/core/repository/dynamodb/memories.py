"""DynamoDBMemoryRepository: the MemoryRepository port over one DynamoDB table (see codec.py for the layout)."""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from core.contract import RetrievalQuery
from core.errors import MemoryNotFoundError, VersionMismatchError, WriteConflictError
from core.model import IdempotentCreate, Memory, MemoryChanges
from core.repository import IdempotencyKeyTakenError, Matches, PriorCreate
from core.repository.dynamodb.client import (
    ConditionFailedError,
    TransactionCancelledError,
    call,
    storage_refused,
)
from core.repository.dynamodb.codec import (
    COUNTER_SK,
    DELETED,
    IDEMPOTENCY_PREFIX,
    TAG_COPIES,
    from_item,
    memory_key,
    memory_partition,
    sort_value,
    to_item,
    totals_attribute,
)
from core.repository.dynamodb.expressions import (
    ABSENT,
    VISIBLE,
    Write,
    idempotency_put,
    tag_copy_actions,
    totals_update,
)
from core.repository.dynamodb.listing import Listing
from core.repository.dynamodb.stamps import Stamps

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

# Transactions touching a namespace's STATS item at the same moment cancel each other; each retries this often.
TRANSACTION_ATTEMPTS: Final = 4
TRANSACTION_BACKOFF_SECONDS: Final = 0.02
# A write computed from a memory without tag copies (stored before they existed) holds only while it still has none.
_COPIED: Final = {True: "", False: f" AND attribute_not_exists({TAG_COPIES})"}
# A PATCH that reads first re-reads and re-applies when a concurrent writer got in between; this bounds it.
UPDATE_ATTEMPTS: Final = 3


class DynamoDBMemoryRepository:
    """MemoryRepository over one DynamoDB table."""

    def __init__(self, client: DynamoDBClient, table_name: str) -> None:
        self._client = client
        self._table = table_name
        self._listing = Listing(client, table_name)
        self._stamps = Stamps(client, table_name)

    def next_id(self, namespace: str) -> int:
        response = call(
            self._client.update_item,
            TableName=self._table,
            Key={"pk": memory_partition(namespace), "sk": {"S": COUNTER_SK}},
            UpdateExpression="ADD next_id :one",
            ExpressionAttributeValues={":one": {"N": "1"}},
            ReturnValues="UPDATED_NEW",
        )
        return int(response["Attributes"]["next_id"]["N"])

    def add(self, namespace: str, memory: Memory, idempotency: IdempotentCreate | None = None) -> None:
        counted = {totals_attribute(memory.status, memory.memory_type): 1}
        if memory.id == 1:
            counted[TAG_COPIES] = 1  # a new namespace: every memory it will hold has its tag copies
        actions: list[dict[str, Any]] = [
            {"Put": {"TableName": self._table, "Item": to_item(namespace, memory), "ConditionExpression": ABSENT}},
            totals_update(self._table, memory_partition(namespace), counted),
        ]
        if idempotency is not None:
            actions.append({"Put": idempotency_put(self._table, namespace, memory, idempotency)})
        actions += tag_copy_actions(self._table, namespace, None, memory)
        try:
            self._transact(actions)
        except TransactionCancelledError as cancelled:
            if idempotency is not None and cancelled.failed(2):
                prior = self._prior_create(namespace, idempotency.key_hash)
                if prior is not None:
                    raise IdempotencyKeyTakenError(prior) from None
            if idempotency is not None and cancelled.collided(2):
                raise WriteConflictError(
                    f"a create with this {idempotency.field} is still in flight; retry it shortly"
                ) from None
            if cancelled.failed(0) or cancelled.failed(2):
                raise WriteConflictError(f"id {memory.id} collided with another write; retry the create") from None
            raise storage_refused(cancelled) from None

    def _prior_create(self, namespace: str, key_hash: str) -> PriorCreate | None:
        response = call(
            self._client.get_item,
            TableName=self._table,
            Key={"pk": memory_partition(namespace), "sk": {"S": f"{IDEMPOTENCY_PREFIX}{key_hash}"}},
            ConsistentRead=True,
        )
        item = response.get("Item")
        if not item:
            return None
        return PriorCreate(
            memory_id=int(item["memory_id"]["N"]),
            created_at=item["created_at"]["S"],
            fingerprint=item["fingerprint"]["S"],
        )

    def _transact(self, actions: list[dict[str, Any]]) -> None:
        """One all-or-nothing write, retried (with jittered backoff) only while it collides with another one."""
        for attempt in range(TRANSACTION_ATTEMPTS):
            try:
                call(self._client.transact_write_items, TransactItems=actions)
                return
            except TransactionCancelledError as cancelled:
                if not cancelled.only_collided or attempt == TRANSACTION_ATTEMPTS - 1:
                    raise
                time.sleep(random.uniform(0, TRANSACTION_BACKOFF_SECONDS * 2**attempt))  # noqa: S311

    def get(self, namespace: str, memory_id: int) -> Memory | None:
        """The stored memory (deleted ones included) by a strongly consistent read, without stamping it; not part
        of the port: tests and the bench look at stored memories with it."""
        stored = self._stored(namespace, memory_id)
        return stored[0] if stored else None

    def _stored(self, namespace: str, memory_id: int) -> tuple[Memory, bool] | None:
        """The stored memory and whether its tag copies exist, by a strongly consistent read."""
        response = call(
            self._client.get_item, TableName=self._table, Key=memory_key(namespace, memory_id), ConsistentRead=True
        )
        item = response.get("Item")
        return (from_item(item), TAG_COPIES in item) if item else None

    def read(self, namespace: str, memory_id: int, accessed_at: str) -> Memory:
        return self._stamps.read(namespace, memory_id, accessed_at)

    def apply(
        self,
        namespace: str,
        memory_id: int,
        changes: MemoryChanges,
        expected_versions: frozenset[int] | None,
        now: str,
    ) -> Memory:
        known: tuple[Memory, bool] | None = None  # the stored memory, when a refused edit returned it
        if (
            changes.model_fields_set == {"content"}
            and changes.content is not None
            and (expected_versions is None or len(expected_versions) == 1)
        ):
            # Content only, of a memory without tags (so without tag copies), against at most one version: one
            # conditional write, no read, no totals.
            expected = None if expected_versions is None else next(iter(expected_versions))
            edited = self._edit(namespace, memory_id, changes.content, expected, now)
            if isinstance(edited, Memory):
                return edited
            known = edited  # it has tags, so copies to change with it
        # It may move the memory between totals or change its tag copies, or admits several versions: read it,
        # then write conditionally.
        for _ in range(UPDATE_ATTEMPTS):
            stored, known = known or self._stored(namespace, memory_id), None
            if stored is None or stored[0].status == "deleted":
                raise MemoryNotFoundError(memory_id)
            current, copied = stored
            if expected_versions is not None and current.version not in expected_versions:
                raise VersionMismatchError(memory_id, current.version)
            updated = changes.apply_to(current, now)
            if updated is current:
                return current
            written = self._replace(namespace, updated, current, copied=copied)
            if written is not None:
                return written
        raise WriteConflictError(f"memory {memory_id} kept changing under this update; retry it")

    def _replace(self, namespace: str, memory: Memory, current: Memory, *, copied: bool) -> Memory | None:
        """Write `memory`'s editable fields, `updated_at` and `version` if the stored memory is still at
        `current.version` and not deleted (and its tag copies still as `copied` says), moving it between totals
        when its status or type changed and its tag copies with it; the stored result, or None when that condition
        failed."""
        write = Write()
        write.content(memory.content)
        write.tags(memory.tags)
        write.set("memory_type = :type", type={"S": memory.memory_type})
        write.set("#status = :status", status={"S": memory.status})
        write.set("updated_key = :updated_key", updated_key=sort_value(memory.updated_at, memory.id))
        write.set("version = :version", version={"N": str(memory.version)})
        write.set(f"{TAG_COPIES} = :copies", copies={"BOOL": True})
        write.values.update({":expected": {"N": str(current.version)}, ":deleted": DELETED})
        update = {
            "TableName": self._table,
            "Key": memory_key(namespace, memory.id),
            "ConditionExpression": "version = :expected AND #status <> :deleted" + _COPIED[copied],
            **write.request(),
        }
        before, after = (
            totals_attribute(current.status, current.memory_type),
            totals_attribute(memory.status, memory.memory_type),
        )
        actions = tag_copy_actions(self._table, namespace, current if copied else None, memory)
        if before != after:
            actions.append(totals_update(self._table, memory_partition(namespace), {before: -1, after: 1}))
        if not actions:
            try:
                response = call(self._client.update_item, **update, ReturnValues="ALL_NEW")
            except ConditionFailedError:
                return None
            return from_item(response["Attributes"])
        try:
            self._transact([{"Update": update}, *actions])
        except TransactionCancelledError as cancelled:
            if cancelled.failed(0):
                return None
            raise storage_refused(cancelled) from None
        # A transaction returns nothing: the record is what was written, with the stamp `current` was read with.
        return memory.model_copy(update={"last_accessed_at": current.last_accessed_at})

    def _edit(
        self, namespace: str, memory_id: int, content: str, expected_version: int | None, updated_at: str
    ) -> Memory | tuple[Memory, bool]:
        """A PATCH of `content` only, in one round trip: a new version when it changes, the stored memory unchanged
        when it does not; when the memory has tags, whose copies a transaction must change with it, the stored
        memory and whether its copies exist, to write from."""
        write = Write()
        # Only a change makes a new version; otherwise the condition fails and the stored memory comes back
        # unchanged, in the same round trip.
        write.content(content)
        differs = ["content <> :content"]
        write.set("updated_key = :updated_key", updated_key=sort_value(updated_at, memory_id))
        write.set("version = version + :one", one={"N": "1"})
        write.values[":deleted"] = DELETED
        # DynamoDB refuses redundant parentheses, so a lone term goes bare.
        changed = differs[0] if len(differs) == 1 else f"({' OR '.join(differs)})"
        condition = f"{VISIBLE} AND attribute_not_exists(tags) AND {changed}"
        if expected_version is not None:
            condition += " AND version = :expected"
            write.values[":expected"] = {"N": str(expected_version)}
        try:
            response = call(
                self._client.update_item,
                TableName=self._table,
                Key=memory_key(namespace, memory_id),
                ConditionExpression=condition,
                ReturnValues="ALL_NEW",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
                **write.request(),
            )
        except ConditionFailedError as failed:
            old = failed.old_item
            if not old or old["status"]["S"] == "deleted":
                raise MemoryNotFoundError(memory_id) from None
            current = from_item(old)
            if expected_version is not None and current.version != expected_version:
                raise VersionMismatchError(memory_id, current.version) from None
            return (current, TAG_COPIES in old) if current.tags else current
        return from_item(response["Attributes"])

    def delete(self, namespace: str, memory_id: int) -> None:
        # The totals move from the memory's status to `deleted`, so the delete reads which status that is first,
        # and writes only if the memory is still at that version and status.
        for _ in range(TRANSACTION_ATTEMPTS):
            stored = self._stored(namespace, memory_id)
            if stored is None or stored[0].status == "deleted":
                raise MemoryNotFoundError(memory_id)
            current, copied = stored
            delete = {
                "TableName": self._table,
                "Key": memory_key(namespace, memory_id),
                "UpdateExpression": f"SET #status = :deleted, {TAG_COPIES} = :copies",
                "ConditionExpression": "version = :version AND #status = :status" + _COPIED[copied],
                "ExpressionAttributeNames": {"#status": "status"},
                "ExpressionAttributeValues": {
                    ":deleted": DELETED,
                    ":copies": {"BOOL": True},
                    ":version": {"N": str(current.version)},
                    ":status": {"S": current.status},
                },
            }
            moved = {
                totals_attribute(current.status, current.memory_type): -1,
                totals_attribute("deleted", current.memory_type): 1,
            }
            deleted = current.model_copy(update={"status": "deleted"})
            try:
                self._transact(
                    [
                        {"Update": delete},
                        totals_update(self._table, memory_partition(namespace), moved),
                        *tag_copy_actions(self._table, namespace, current if copied else None, deleted),
                    ]
                )
            except TransactionCancelledError as cancelled:
                if cancelled.failed(0):
                    continue  # changed since the read: read it again
                raise storage_refused(cancelled) from None
            return
        raise WriteConflictError(f"memory {memory_id} kept changing under this delete; retry it")

    def find(self, namespace: str, query: RetrievalQuery) -> Matches:
        return self._listing.find(namespace, query)

    def stamp(self, namespace: str, memory_ids: Sequence[int], accessed_at: str) -> None:
        self._stamps.stamp(namespace, memory_ids, accessed_at)
