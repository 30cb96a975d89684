"""A DynamoDB table as the version before access items wrote it (codec.py, accessitems.py): the engine
"dynamodb-local (before access items)" of the repository, lifecycle and concurrency suites, so they prove that a
namespace `agent-memory migrate` has not moved yet keeps the contract as a moved one does."""

from __future__ import annotations

from typing import Any

from adapters.dynamodb import DynamoDBMemoryRepository
from adapters.dynamodb.accessitems import access_key, to_access_item
from adapters.dynamodb.codec import ACCESS_ITEMS, ACCESSED_KEY, STATS_SK, memory_key, memory_partition
from core.model import Memory


class BeforeAccessItems(DynamoDBMemoryRepository):
    """Each memory it adds is left as the version before access items stored it: its stamp on its record, no access
    item, no mark on it or on its namespace's STATS; so every read, stamp, write and listing of it takes the way of a
    namespace not moved yet."""

    def __init__(self, client: Any, table_name: str) -> None:
        super().__init__(client, table_name)
        self._old_client, self._old_table = client, table_name

    def add(self, namespace: str, memory: Memory, *args: Any, **kwargs: Any) -> None:
        super().add(namespace, memory, *args, **kwargs)
        client, table = self._old_client, self._old_table
        client.delete_item(TableName=table, Key=access_key(namespace, memory.id))
        client.update_item(
            TableName=table,
            Key=memory_key(namespace, memory.id),
            UpdateExpression=f"SET {ACCESSED_KEY} = :stamp REMOVE {ACCESS_ITEMS}",
            ExpressionAttributeValues={":stamp": to_access_item(namespace, memory)[ACCESSED_KEY]},
        )
        client.update_item(
            TableName=table,
            Key={"pk": memory_partition(namespace), "sk": {"S": STATS_SK}},
            UpdateExpression=f"REMOVE {ACCESS_ITEMS}",
        )
