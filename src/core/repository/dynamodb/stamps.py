"""Access stamps: `last_accessed_at` set by a conditional write that never moves it back, for one read, or for a
page in batches of PartiQL statements (each with its own condition, so one row stamped later by another reader
does not hold up the rest)."""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from core.budget import carried
from core.errors import MemoryNotFoundError, StorageUnavailableError, TableMissingError
from core.model import Memory
from core.repository.dynamodb.client import STAMPERS, ConditionFailedError, call
from core.repository.dynamodb.codec import DELETED, from_item, memory_key, sort_value

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

    def __init__(self, client: DynamoDBClient, table_name: str) -> None:
        self._client = client
        self._table = table_name

    def read(self, namespace: str, memory_id: int, accessed_at: str) -> Memory:
        """Stamp one visible memory and return it, in one conditional write."""
        try:
            # The sort value starts with the timestamp and ends with this memory's id, so it compares as the stamp.
            response = call(
                self._client.update_item,
                TableName=self._table,
                Key=memory_key(namespace, memory_id),
                UpdateExpression="SET accessed_key = :stamp",
                ConditionExpression="attribute_exists(pk) AND accessed_key < :stamp AND #status <> :deleted",
                ExpressionAttributeNames={"#status": "status"},
                ExpressionAttributeValues={":stamp": sort_value(accessed_at, memory_id), ":deleted": DELETED},
                ReturnValues="ALL_NEW",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ConditionFailedError as failed:
            # Missing, deleted, or already stamped later by a concurrent reader: the old item tells which.
            old = failed.old_item
            if not old or old["status"]["S"] == "deleted":
                raise MemoryNotFoundError(memory_id) from None
            return from_item(old)
        return from_item(response["Attributes"])

    def stamp(self, namespace: str, memory_ids: Sequence[int], accessed_at: str) -> None:
        batches = [memory_ids[i : i + BATCH_STATEMENTS] for i in range(0, len(memory_ids), BATCH_STATEMENTS)]
        if len(batches) == 1:
            self._stamp_batch(namespace, batches[0], accessed_at)
            return
        # list() waits for every batch and re-raises the first failure.
        list(STAMPERS.map(carried(lambda batch: self._stamp_batch(namespace, batch, accessed_at)), batches))

    def _stamp_batch(self, namespace: str, memory_ids: Sequence[int], accessed_at: str) -> None:
        statement = _STAMP.format(table=self._table)
        pending = [
            {"Statement": statement, "Parameters": [stamp, key["pk"], key["sk"], stamp]}
            for memory_id in memory_ids
            for key, stamp in [(memory_key(namespace, memory_id), sort_value(accessed_at, memory_id))]
        ]
        for attempt in range(BATCH_ATTEMPTS):
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
