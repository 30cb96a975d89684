"""Access stamps: `last_accessed_at` set by a conditional write that never moves it back, for one read, or for a
page in batches of PartiQL statements (each with its own condition, so one row stamped later by another reader
does not hold up the rest). A stamp writes the memory's access item (accessitems.py), never its record."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from concurrent.futures import wait
from typing import TYPE_CHECKING, Any, Final

from adapters.dynamodb.accessitems import access_key, joined, stamp_of
from adapters.dynamodb.client import READERS, STAMPERS, ConditionFailedError, call, incidental
from adapters.dynamodb.codec import ACCESSED_KEY, DELETED, sort_value
from adapters.dynamodb.records import from_item, memory_key
from adapters.dynamodb.table import Items
from core.budget import carried
from core.errors import MemoryNotFoundError, StorageUnavailableError, TableMissingError
from core.model import Memory
from core.repository.digests import StoredStamp

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


# BatchExecuteStatement takes at most 25 statements.
BATCH_STATEMENTS: Final = 25
# A statement refused for a passing reason is sent again in the next batch call, this many times at most.
BATCH_ATTEMPTS: Final = 3
BATCH_BACKOFF_SECONDS: Final = 0.02
_PASSING: Final = frozenset(
    {"ThrottlingError", "ProvisionedThroughputExceeded", "RequestLimitExceeded", "InternalServerError"}
    | {"TransactionConflict"}
)
# Written so that a stamp never creates a row (UPDATE finds none) and never moves one back.
_STAMP: Final = 'UPDATE "{table}" SET accessed_key = ? WHERE pk = ? AND sk = ? AND accessed_key < ?'


class Stamps:
    """The access stamps of one table's memories."""

    def __init__(self, client: DynamoDBClient, table_name: str, items: Items) -> None:
        self._client = client
        self._table = table_name
        self._items = items

    def read(
        self, namespace: str, memory_id: int, accessed_at: str, confirm: Callable[[], None] | None = None
    ) -> Memory:
        """Stamp one visible memory and return it: a conditional write of its access item, sent with a strongly
        consistent read of its record (one round trip). With `confirm` (the read fence, core.repository.LiveKey), the
        record is read first, then `confirm` runs, and only then is the memory stamped (one round trip after another:
        the stamp must not land before the check, nor the check come before the read)."""
        stamp = sort_value(accessed_at, memory_id)
        if confirm is not None:
            item = self._items.get(memory_key(namespace, memory_id))
            confirm()
            if item is None or item["status"] == DELETED:
                raise MemoryNotFoundError(memory_id)
            return self._stamped_read(namespace, memory_id, stamp, lambda: item)
        record = READERS.submit(carried(lambda: self._items.get(memory_key(namespace, memory_id))))
        try:
            return self._stamped_read(namespace, memory_id, stamp, record.result)
        except Exception:
            wait([record])  # no call of this request outlives it
            raise

    def _stamped_read(
        self, namespace: str, memory_id: int, stamp: dict[str, Any], record: Callable[[], dict[str, Any] | None]
    ) -> Memory:
        """Stamp the memory and return it, its record being `record()` (read before, or meanwhile)."""
        access = self._stamped(namespace, memory_id, stamp)  # MemoryNotFoundError: never stored, or purged
        item = record()
        if item is None or item["status"] == DELETED:
            raise MemoryNotFoundError(memory_id)  # deleted (or purged) since the stamp
        return from_item(joined(item, access))

    def _stamped(self, namespace: str, memory_id: int, stamp: dict[str, Any]) -> dict[str, Any]:
        """Stamp the memory's access item and return its stamp, or all of it as it was when another reader stamped it
        later first. MemoryNotFoundError when there is no such item or its memory is deleted."""
        written, item = self._conditional(namespace, memory_id, stamp, "UPDATED_NEW")
        if not written and (not item or item["status"] == DELETED):
            raise MemoryNotFoundError(memory_id)
        return item or {}

    def _conditional(
        self, namespace: str, memory_id: int, stamp: dict[str, Any], returned: str
    ) -> tuple[bool, dict[str, Any] | None]:
        """Stamp the memory's access item where it exists, is not deleted and holds an earlier stamp: whether it was
        written, and what the write returned (`returned`: ReturnValues) or, when not written, the item as it is
        (None: no item). ReturnValues cost no read."""
        try:
            # The sort value starts with the timestamp and ends with this memory's id, so it compares as the stamp.
            with incidental():
                response = call(
                    self._client.update_item,
                    TableName=self._table,
                    Key=access_key(namespace, memory_id),
                    UpdateExpression=f"SET {ACCESSED_KEY} = :stamp",
                    ConditionExpression=f"attribute_exists(pk) AND {ACCESSED_KEY} < :stamp AND #status <> :deleted",
                    ExpressionAttributeNames={"#status": "status"},
                    ExpressionAttributeValues={":stamp": stamp, ":deleted": DELETED},
                    ReturnValues=returned,
                    ReturnValuesOnConditionCheckFailure="ALL_OLD",
                )
        except ConditionFailedError as failed:
            # Missing, deleted, or already stamped later by a concurrent reader: the old item tells which.
            return False, dict(failed.old_item) if failed.old_item else None
        attributes: dict[str, Any] = response.get("Attributes", {})
        return True, attributes

    def stamp_with_prior(self, namespace: str, memory_ids: Sequence[int], accessed_at: str) -> dict[int, StoredStamp]:
        """Stamp each memory not deleted by a conditional UpdateItem of its access item, all at once, each answering
        with the item as it was (`ReturnValues` costs no read): 1 WCU a memory, as a batch's stamp."""
        priors = STAMPERS.map(carried(lambda memory_id: self._prior(namespace, memory_id, accessed_at)), memory_ids)
        return {memory_id: prior for memory_id, prior in zip(memory_ids, priors, strict=True) if prior is not None}

    def _prior(self, namespace: str, memory_id: int, accessed_at: str) -> StoredStamp | None:
        _, old = self._conditional(namespace, memory_id, sort_value(accessed_at, memory_id), "ALL_OLD")
        return stamp_of(old) if old else None  # none stored, deleted, or stamped later by another reader: as it is

    def stamp(self, namespace: str, memory_ids: Sequence[int], accessed_at: str) -> None:
        keys = [(access_key(namespace, memory_id), memory_id) for memory_id in memory_ids]
        batches = [keys[i : i + BATCH_STATEMENTS] for i in range(0, len(keys), BATCH_STATEMENTS)]
        if len(batches) == 1:
            self._stamp_batch(batches[0], accessed_at)
            return
        # list() waits for every batch and re-raises the first failure.
        list(STAMPERS.map(carried(lambda batch: self._stamp_batch(batch, accessed_at)), batches))

    def _stamp_batch(self, keys: Sequence[tuple[dict[str, Any], int]], accessed_at: str) -> None:
        statement = _STAMP.format(table=self._table)
        pending = [
            {"Statement": statement, "Parameters": [stamp, key["pk"], key["sk"], stamp]}
            for key, memory_id in keys
            for stamp in [sort_value(accessed_at, memory_id)]
        ]
        for attempt in range(BATCH_ATTEMPTS):
            with incidental():
                response = call(self._client.batch_execute_statement, Statements=pending)
            refused = []
            for sent, answer in zip(pending, response["Responses"], strict=True):
                code = answer.get("Error", {}).get("Code")
                # A failed condition: already stamped later by another reader, or never stored; nothing to do.
                if code is None or code == "ConditionalCheckFailed":
                    continue
                if code in _PASSING:
                    refused.append(sent)
                elif code == "ResourceNotFound":
                    raise TableMissingError(self._table)
                else:
                    raise RuntimeError(f"a stamp was refused: {code}: {answer['Error'].get('Message', '')}")
            if not refused:
                return
            pending = refused
            if attempt < BATCH_ATTEMPTS - 1:
                time.sleep(random.uniform(0, BATCH_BACKOFF_SECONDS * 2**attempt))  # noqa: S311
        raise StorageUnavailableError(f"storage kept refusing {len(pending)} access stamps; retry shortly")
