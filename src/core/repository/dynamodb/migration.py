"""`agent-memory migrate`: bring a table's stored memories up to this version's layout.

Today that is one step: tag copies (codec.py) for every memory stored before they existed. Each memory is copied in
a transaction conditioned on its version and status and on having no copies yet, so a concurrent PATCH or delete
(which copies a memory it writes) is never double counted. Once a pass over the table finds every memory of a
namespace copied, its STATS item says so and tag searches there read the tag's copies instead of the namespace.
Run it once after deploying this version (writers of the previous version store memories without copies).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from core.repository.dynamodb.client import TransactionCancelledError, call, storage_refused
from core.repository.dynamodb.codec import (
    MEMORY_PREFIX,
    NAMESPACE_PREFIX,
    STATS_SK,
    TAG_COPIES,
    TAG_PARTITION,
    from_item,
    memory_partition,
)
from core.repository.dynamodb.expressions import tag_copy_actions

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

# A memory that keeps changing under its copy is read again this many times before the run gives up on it.
COPY_ATTEMPTS: Final = 5


@dataclass
class Migrated:
    namespaces: int = 0
    copied: int = 0
    skipped: int = 0  # changed by another writer meanwhile: their namespace stays unmarked; run again


def migrate(client: DynamoDBClient, table: str) -> Migrated:
    """Copy every memory without tag copies, then mark each namespace whose memories all have them."""
    result = Migrated()
    unfinished: set[str] = set()
    namespaces: set[str] = set()
    for item in _memories_and_stats(client, table):
        namespace = item["pk"]["S"][len(NAMESPACE_PREFIX) :]
        namespaces.add(namespace)
        if not item["sk"]["S"].startswith(MEMORY_PREFIX) or TAG_COPIES in item:
            continue
        if _copy(client, table, namespace, item["sk"]):
            result.copied += 1
        else:
            result.skipped += 1
            unfinished.add(namespace)
    for namespace in sorted(namespaces - unfinished):
        call(
            client.update_item,
            TableName=table,
            Key={"pk": memory_partition(namespace), "sk": {"S": STATS_SK}},
            UpdateExpression=f"SET {TAG_COPIES} = :one",
            ExpressionAttributeValues={":one": {"N": "1"}},
        )
    result.namespaces = len(namespaces - unfinished)
    return result


def _memories_and_stats(client: DynamoDBClient, table: str) -> Iterator[dict[str, Any]]:
    """The key (and copies mark) of every memory and namespace STATS item in the table, tag partitions left out."""
    request: dict[str, Any] = {
        "TableName": table,
        "ProjectionExpression": f"pk, sk, {TAG_COPIES}",
        "FilterExpression": (
            "begins_with(pk, :ns) AND NOT contains(pk, :tag) AND (begins_with(sk, :mem) OR sk = :stats)"
        ),
        "ExpressionAttributeValues": {
            ":ns": {"S": NAMESPACE_PREFIX},
            ":tag": {"S": TAG_PARTITION},
            ":mem": {"S": MEMORY_PREFIX},
            ":stats": {"S": STATS_SK},
        },
        "ConsistentRead": True,
    }
    while True:
        response = call(client.scan, **request)
        yield from response.get("Items", [])
        if "LastEvaluatedKey" not in response:
            return
        request["ExclusiveStartKey"] = response["LastEvaluatedKey"]


def _copy(client: DynamoDBClient, table: str, namespace: str, sort_key: dict[str, Any]) -> bool:
    """Write one memory's copies and count them; False when it kept changing under the attempts."""
    key = {"pk": memory_partition(namespace), "sk": sort_key}
    for _ in range(COPY_ATTEMPTS):
        item = call(client.get_item, TableName=table, Key=key, ConsistentRead=True).get("Item")
        if item is None:
            return True  # gone: nothing to copy
        if TAG_COPIES in item:
            return True  # a PATCH or delete copied it meanwhile
        memory = from_item(item)
        mark = {
            "TableName": table,
            "Key": key,
            "UpdateExpression": f"SET {TAG_COPIES} = :copies",
            "ConditionExpression": f"version = :version AND #status = :status AND attribute_not_exists({TAG_COPIES})",
            "ExpressionAttributeNames": {"#status": "status"},
            "ExpressionAttributeValues": {
                ":copies": {"BOOL": True},
                ":version": {"N": str(memory.version)},
                ":status": {"S": memory.status},
            },
        }
        try:
            call(
                client.transact_write_items,
                TransactItems=[{"Update": mark}, *tag_copy_actions(table, namespace, None, memory)],
            )
        except TransactionCancelledError as cancelled:
            if cancelled.failed(0) or cancelled.only_collided:
                continue  # changed meanwhile: read it again
            raise storage_refused(cancelled) from None
        return True
    return False
