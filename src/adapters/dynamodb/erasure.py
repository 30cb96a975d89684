"""Erasing a namespace for good (`agent-memory namespace erase`), so that it stays erased.

Its API keys go first: every memory write of a keyed caller is fenced on its key still being stored (fence.py), so
from then on no write of the namespace can land, whatever a door's cache believes. Then everything else of it (its
OAuth grants, its partition, its tag partitions) is found by consistent scans of the table and removed, pass after
pass, until a pass finds nothing: only then is the erase done. Not on any request path: every pass reads the table.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from adapters.dynamodb.codec import STATS_SK, TAG_PARTITION, memory_partition
from adapters.dynamodb.grants import GRANT_PREFIX
from adapters.dynamodb.keys import KEYS_PARTITION, DynamoDBKeyRepository, api_key_key
from adapters.dynamodb.table import BATCH_WRITE_ITEMS, Items
from core.errors import DomainError

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

Item = dict[str, Any]
Progress = Callable[[Counter[str]], None]

# Passes over the table before an erase gives up: with the keys gone the second finds nothing; more would mean
# something unfenced keeps writing the namespace.
ERASE_PASSES: Final = 5
_GRANT_SK: Final = "GRANT"


class EraseUnfinishedError(DomainError):
    """Items of the namespace kept appearing after ERASE_PASSES passes: something unfenced writes it."""


class Erasure:
    """The erase of whole namespaces of one table; `partition_kind` names what an item of a namespace's own
    partition is, for the receipt."""

    def __init__(self, client: DynamoDBClient, table_name: str, partition_kind: Callable[[Item], str]) -> None:
        self._client = client
        self._table = table_name
        self._items = Items(client, table_name)
        self._partition_kind = partition_kind

    def erase(self, namespace: str, progress: Progress) -> Counter[str]:
        """Remove every item of the namespace: its keys, then (scan after scan, until one finds nothing) its OAuth
        grants with every item under them, its partition and its tag partitions. Counts per kind removed, once the
        namespace is verified empty; EraseUnfinishedError when it never is."""
        removed = Counter[str]()
        keys = [api_key_key(key.key_id) for key in DynamoDBKeyRepository(self._client, self._table).find(namespace)]
        self._remove(namespace, keys, removed, progress)
        for _ in range(ERASE_PASSES):
            found = False
            for page in self._items.pages(self._scan(namespace), self._client.scan):
                found = found or bool(page)
                # Keys first, then grants, the namespace's partition and its tags, as the first removal went.
                self._remove(namespace, sorted(page, key=lambda item: _rank(item, namespace)), removed, progress)
            if not found:
                return removed
        raise EraseUnfinishedError(
            f"items of namespace {namespace!r} kept appearing through {ERASE_PASSES} passes: something still writes "
            "it without an API key (an import, an open server); stop it and erase again"
        )

    def _scan(self, namespace: str) -> dict[str, Any]:
        """Every item of the namespace: its partition and tag partitions, and any item naming it (keys, grants)."""
        home = memory_partition(namespace)["S"]
        return {
            "FilterExpression": "pk = :home OR begins_with(pk, :tags) OR #namespace = :namespace",
            "ExpressionAttributeNames": {"#namespace": "namespace"},
            "ExpressionAttributeValues": {
                ":home": {"S": home},
                ":tags": {"S": f"{home}{TAG_PARTITION}"},
                ":namespace": {"S": namespace},
            },
            "ProjectionExpression": "pk, sk",
            "ConsistentRead": True,
        }

    def _remove(self, namespace: str, items: list[Item], removed: Counter[str], progress: Progress) -> None:
        for start in range(0, len(items), BATCH_WRITE_ITEMS):
            chunk = items[start : start + BATCH_WRITE_ITEMS]
            self._items.batch_write([{"DeleteRequest": {"Key": {"pk": i["pk"], "sk": i["sk"]}}} for i in chunk])
            removed.update(self._kind(item, namespace) for item in chunk)
            progress(removed)
        # A grant's other items (spent refresh tokens) name no namespace: they go with the grant, looked for only
        # once it is gone, when no rotation can add one any more.
        for grant in [item["pk"] for item in items if item["sk"]["S"] == _GRANT_SK and _is_grant(item)]:
            under = {"KeyConditionExpression": "pk = :pk", "ExpressionAttributeValues": {":pk": grant}}
            for page in self._items.pages({**under, "ProjectionExpression": "pk, sk", "ConsistentRead": True}):
                self._remove(namespace, page, removed, progress)

    def _kind(self, item: Item, namespace: str) -> str:
        pk = item["pk"]["S"]
        if pk == KEYS_PARTITION:
            return "API keys"
        if _is_grant(item):
            return "OAuth grants" if item["sk"]["S"] == _GRANT_SK else "OAuth spent tokens"
        if pk != memory_partition(namespace)["S"]:
            return "tag totals" if item["sk"]["S"] == STATS_SK else "tag copies"
        return self._partition_kind(item)


def _is_grant(item: Item) -> bool:
    return str(item["pk"]["S"]).startswith(GRANT_PREFIX)


def _rank(item: Item, namespace: str) -> int:
    pk = item["pk"]["S"]
    if pk == KEYS_PARTITION:
        return 0
    if _is_grant(item):
        return 1
    return 2 if pk == memory_partition(namespace)["S"] else 3
