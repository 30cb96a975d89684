"""Access stamps: `last_accessed_at` set by a conditional write that never moves it back, for one read or a page."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from core.errors import MemoryNotFoundError
from core.model import Memory
from core.repository.dynamodb.client import STAMPERS, ConditionFailedError, call
from core.repository.dynamodb.codec import DELETED, from_item, memory_key, sort_value

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


class Stamps:
    """The access stamps of one table's memories."""

    def __init__(self, client: DynamoDBClient, table_name: str) -> None:
        self._client = client
        self._table = table_name

    def read(self, namespace: str, memory_id: int, accessed_at: str) -> Memory:
        try:
            response = self._stamp_call(namespace, memory_id, accessed_at, visible_only=True, ReturnValues="ALL_NEW")
        except ConditionFailedError as failed:
            # Missing, deleted, or already stamped later by a concurrent reader: the old item tells which.
            old = failed.old_item
            if not old or old["status"]["S"] == "deleted":
                raise MemoryNotFoundError(memory_id) from None
            return from_item(old)
        return from_item(response["Attributes"])

    def stamp(self, namespace: str, memory_ids: Sequence[int], accessed_at: str) -> None:
        # list() waits for every stamp and re-raises the first failure.
        list(STAMPERS.map(lambda mid: self._stamp_one(namespace, mid, accessed_at), memory_ids))

    def _stamp_one(self, namespace: str, memory_id: int, accessed_at: str) -> None:
        # A failed condition means already stamped later by another reader (or never stored): nothing to do.
        with contextlib.suppress(ConditionFailedError):
            self._stamp_call(namespace, memory_id, accessed_at, visible_only=False)

    def _stamp_call(self, namespace: str, memory_id: int, accessed_at: str, *, visible_only: bool, **extra: Any) -> Any:
        # The sort value starts with the timestamp and ends with this memory's id, so it compares as the stamp.
        condition = "attribute_exists(pk) AND accessed_key < :stamp"
        names: dict[str, str] = {}
        values: dict[str, Any] = {":stamp": sort_value(accessed_at, memory_id)}
        if visible_only:
            condition += " AND #status <> :deleted"
            names["#status"] = "status"
            values[":deleted"] = DELETED
        return call(
            self._client.update_item,
            TableName=self._table,
            Key=memory_key(namespace, memory_id),
            UpdateExpression="SET accessed_key = :stamp",
            ConditionExpression=condition,
            ExpressionAttributeValues=values,
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
            **({"ExpressionAttributeNames": names} if names else {}),
            **extra,
        )
