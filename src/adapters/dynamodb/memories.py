"""DynamoDBMemoryRepository: the MemoryRepository port over one DynamoDB table (see codec.py for the layout)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, Final

from adapters.dynamodb.accessitems import to_access_item
from adapters.dynamodb.client import (
    ConditionFailedError,
    TransactionCancelledError,
    call,
    incidental,
    storage_refused,
)
from adapters.dynamodb.codec import (
    COUNTER_SK,
    DELETED,
    IDEMPOTENCY_PREFIX,
    memory_partition,
    purge_shard,
    sort_value,
    to_item,
    to_revision,
    totals_attribute,
)
from adapters.dynamodb.digests import KEEP, Digests, Keep, to_digest
from adapters.dynamodb.expressions import ABSENT, Write, idempotency_put, tag_copy_actions, totals_update
from adapters.dynamodb.fence import confirm_live, transact_fenced
from adapters.dynamodb.lifecycle import Lifecycle
from adapters.dynamodb.listing import Listing
from adapters.dynamodb.searchcopies import to_search_copy
from adapters.dynamodb.stamps import Stamps
from adapters.dynamodb.stored import TRANSACTION_ATTEMPTS, Items
from core.contract import RetrievalQuery
from core.digest import Digest, Indexer, Vector
from core.errors import MemoryNotFoundError, VersionMismatchError, WriteConflictError
from core.history import Revision
from core.model import IdempotentCreate, Memory, MemoryChanges
from core.repository import IdempotencyKeyTakenError, LiveKey, Matches, PriorCreate, Revisions
from core.repository.digests import Candidate, CandidateFilter, Unembedded

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

# A write computed from a read re-reads and re-applies when a concurrent writer got in between; this bounds it.
UPDATE_ATTEMPTS: Final = 3


class DynamoDBMemoryRepository:
    """MemoryRepository over one DynamoDB table."""

    def __init__(self, client: DynamoDBClient, table_name: str) -> None:
        self._client = client
        self._table = table_name
        self._items = Items(client, table_name)
        self._listing = Listing(client, table_name)
        self._stamps = Stamps(client, table_name, self._items)
        self._lifecycle = Lifecycle(client, table_name, self._items)
        self._digests = Digests(client, table_name, self._items)

    def next_id(self, namespace: str, live_key: LiveKey | None = None) -> int:
        # Drawing from an existing counter never creates one (a plain ADD would: after an erase, a cached key's
        # create would bring the erased namespace's counter back); only a fenced put starts a counter.
        counter = {"pk": memory_partition(namespace), "sk": {"S": COUNTER_SK}}
        # An id drawn without an answer is at most an id lost (ids may have gaps); the create stored nothing.
        with incidental():
            for _ in range(TRANSACTION_ATTEMPTS):
                try:
                    response = call(
                        self._client.update_item,
                        TableName=self._table,
                        Key=counter,
                        UpdateExpression="ADD next_id :one",
                        ConditionExpression="attribute_exists(pk)",
                        ExpressionAttributeValues={":one": {"N": "1"}},
                        ReturnValues="UPDATED_NEW",
                    )
                    return int(response["Attributes"]["next_id"]["N"])
                except ConditionFailedError:
                    pass  # no counter: a new namespace, or an erased one
                first = {
                    "TableName": self._table,
                    "Item": {**counter, "next_id": {"N": "1"}},
                    "ConditionExpression": ABSENT,
                }
                try:
                    transact_fenced(self._items, self._table, [{"Put": first}], live_key)
                    return 1
                except TransactionCancelledError as cancelled:
                    if not cancelled.failed(0):
                        raise storage_refused(cancelled) from None
                    # Another create started the counter meanwhile: draw from it.
        raise WriteConflictError(f"the id counter of namespace {namespace} kept changing; retry the create")

    def add(
        self,
        namespace: str,
        memory: Memory,
        idempotency: IdempotentCreate | None = None,
        key_id: str | None = None,
        live_key: LiveKey | None = None,
        digest: Digest | None = None,
    ) -> None:
        actions = self._creation(namespace, memory, idempotency, key_id, digest)
        try:
            transact_fenced(self._items, self._table, actions, live_key)
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

    def _creation(
        self,
        namespace: str,
        memory: Memory,
        idempotency: IdempotentCreate | None,
        key_id: str | None,
        digest: Digest | None,
    ) -> list[dict[str, Any]]:
        """The transaction of a create: the memory first, its idempotency record (if any) third, as `add` reads the
        cancellation reasons."""
        counted = {totals_attribute(memory.status, memory.memory_type): 1}
        item = {**to_item(namespace, memory), "revisions": {"N": "1"}}
        if idempotency is not None:
            item["idempotency"] = {"S": idempotency.key_hash}
        created = Revision.of(memory, 1, "created", memory.created_at, key_id)
        actions: list[dict[str, Any]] = [
            {"Put": {"TableName": self._table, "Item": item, "ConditionExpression": ABSENT}},
            totals_update(self._table, memory_partition(namespace), counted),
        ]
        if idempotency is not None:
            actions.append({"Put": idempotency_put(self._table, namespace, memory, idempotency)})
        actions.append({"Put": {"TableName": self._table, "Item": to_revision(namespace, created)}})
        actions += tag_copy_actions(self._table, namespace, None, memory)
        actions.append({"Put": {"TableName": self._table, "Item": to_search_copy(namespace, memory)}})
        actions.append({"Put": {"TableName": self._table, "Item": to_access_item(namespace, memory)}})
        # Every memory has its digest (MemoryService always computes one; a caller without one stores no terms).
        digested = to_digest(namespace, memory, digest or Digest(()))
        actions.append({"Put": {"TableName": self._table, "Item": digested}})
        return actions

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

    def get(self, namespace: str, memory_id: int) -> Memory | None:
        """The stored memory (deleted ones included) by a strongly consistent read, without stamping it; not part
        of the port: tests and the bench look at stored memories with it."""
        stored = self._items.read(namespace, memory_id)
        return stored.memory if stored else None

    def read(self, namespace: str, memory_id: int, accessed_at: str | None, live_key: LiveKey | None = None) -> Memory:
        confirm = None if live_key is None else partial(confirm_live, self._items, live_key)
        if accessed_at is not None:
            return self._stamps.read(namespace, memory_id, accessed_at, confirm)
        stored = self._items.read(namespace, memory_id)
        if confirm is not None:
            confirm()
        if stored is None or stored.memory.status == "deleted":
            raise MemoryNotFoundError(memory_id)
        return stored.memory

    def confirm_live(self, live_key: LiveKey) -> None:
        confirm_live(self._items, live_key)

    def apply(
        self,
        namespace: str,
        memory_id: int,
        changes: MemoryChanges,
        expected_versions: frozenset[int] | None,
        now: str,
        key_id: str | None = None,
        live_key: LiveKey | None = None,
        indexer: Indexer | None = None,
    ) -> Memory:
        # Read, then write conditionally on what was read: the revision holds the whole record after the change.
        indexed: dict[tuple[str, tuple[str, ...]], Digest] = {}  # each text indexed once, however many attempts
        for _ in range(UPDATE_ATTEMPTS):
            stored = self._items.read(namespace, memory_id)
            if stored is None or stored.memory.status == "deleted":
                raise MemoryNotFoundError(memory_id)
            current = stored.memory
            if expected_versions is not None and current.version not in expected_versions:
                raise VersionMismatchError(memory_id, current.version)
            updated = changes.apply_to(current, now)
            if updated is current:
                return current
            write = Write()
            write.content(updated.content)
            write.tags(updated.tags)
            write.set("memory_type = :type", type={"S": updated.memory_type})
            write.set("#status = :status", status={"S": updated.status})
            write.set("updated_key = :updated_key", updated_key=sort_value(updated.updated_at, updated.id))
            write.set("version = :version", version={"N": str(updated.version)})
            digest: Digest | Keep = KEEP
            text = (updated.content, tuple(updated.tags))
            if text != (current.content, tuple(current.tags)):
                if text not in indexed:
                    indexed[text] = indexer.digest(*text) if indexer else Digest(())
                digest = indexed[text]
            if self._lifecycle.change(namespace, stored, write, updated, "updated", now, key_id, live_key, digest):
                # A transaction returns nothing: the record is what was written, with the stamp it was read with.
                return updated
        raise WriteConflictError(f"memory {memory_id} kept changing under this update; retry it")

    def delete(
        self, namespace: str, memory_id: int, now: str, key_id: str | None = None, live_key: LiveKey | None = None
    ) -> None:
        # The totals move from the memory's status to `deleted`, so the delete reads which status that is first,
        # and writes only if the memory is still as read; it keeps that status for a restore.
        for _ in range(TRANSACTION_ATTEMPTS):
            stored = self._items.read(namespace, memory_id)
            if stored is None or stored.memory.status == "deleted":
                raise MemoryNotFoundError(memory_id)
            write = Write()
            write.set("#status = :status", status=DELETED)
            write.set("prior_status = :prior", prior={"S": stored.memory.status})
            write.set("deleted_at = :deleted_at", deleted_at={"S": now})
            write.set("purge_shard = :shard", shard=purge_shard(namespace, memory_id))
            deleted = stored.memory.model_copy(update={"status": "deleted"})
            if self._lifecycle.change(namespace, stored, write, deleted, "deleted", now, key_id, live_key):
                return
        raise WriteConflictError(f"memory {memory_id} kept changing under this delete; retry it")

    def restore(
        self, namespace: str, memory_id: int, now: str, key_id: str | None = None, live_key: LiveKey | None = None
    ) -> Memory:
        return self._lifecycle.restore(namespace, memory_id, now, key_id, live_key)

    def history(self, namespace: str, memory_id: int, limit: int, offset: int) -> Revisions:
        return self._lifecycle.history(namespace, memory_id, limit, offset)

    def purge(self, namespace: str, memory_id: int) -> None:
        self._lifecycle.purge(namespace, memory_id)

    def purge_deleted(self, deleted_before: str) -> int:
        return self._lifecycle.purge_deleted(deleted_before)

    def find(self, namespace: str, query: RetrievalQuery) -> Matches:
        return self._listing.find(namespace, query)

    def stamp(self, namespace: str, memory_ids: Sequence[int], accessed_at: str) -> None:
        self._stamps.stamp(namespace, memory_ids, accessed_at)

    def recall_candidates(self, namespace: str, filters: CandidateFilter) -> list[Candidate]:
        return self._digests.candidates(namespace, filters)

    def records(self, namespace: str, memory_ids: Sequence[int]) -> list[Memory]:
        return self._digests.records(namespace, memory_ids)

    def unembedded(self, limit: int) -> list[Unembedded]:
        return self._digests.unembedded(limit)

    def embed(self, namespace: str, memory_id: int, version: int, vector: Vector, model: str) -> bool:
        return self._digests.embed(namespace, memory_id, version, vector, model)
