"""The table's side of recall's vector index backfill (adapters/vectorfill.py): the namespaces (their id counters), a
namespace's digests page by page in id order, and the mark on a namespace's id counter naming the vector index that
holds the namespace whole (codec.INDEXED_IN), which recall reads (counters.namespace_sizes) before it asks the index.

The mark lives on the id counter because the counter is what recall reads already (one GetItem), and because an erase
removes the counter: a namespace started again is another epoch (changes.py), unmarked until a backfill passes it.
Only this module writes the mark; no write of a memory touches it, nor the stream consumer (which never reads the
table). The backfill writes nothing else of the table.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Final

from adapters.dynamodb import changes
from adapters.dynamodb.client import ConditionFailedError, call
from adapters.dynamodb.codec import COUNTER_SK, INDEXED_IN, NAMESPACE_PREFIX, memory_partition
from adapters.dynamodb.digests import ATTRIBUTE_NAMES, CANDIDATE_ATTRIBUTES, digest_key, digest_sort_key, to_candidate
from adapters.dynamodb.table import Items
from core.limits import ID_DIGITS
from core.repository.digests import Candidate, DigestChanges

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

_LAST_ID: Final = 10**ID_DIGITS - 1


class IndexedNamespaces:
    """The namespaces of one table as the vector index's backfill reads and marks them."""

    def __init__(self, client: DynamoDBClient, table_name: str) -> None:
        self._client = client
        self._table = table_name
        self._items = Items(client, table_name)

    def namespaces(self) -> Iterator[str]:
        """Every namespace holding an id counter, page by page (a Scan of the whole table, filtered: the command
        line's read, never a request's), in the table's order."""
        request = {
            "TableName": self._table,
            "FilterExpression": "sk = :counter",
            "ProjectionExpression": "pk",
            "ExpressionAttributeValues": {":counter": {"S": COUNTER_SK}},
        }
        while True:
            response = call(self._client.scan, **request)
            for item in response.get("Items", []):
                partition = str(item["pk"]["S"])
                if partition.startswith(NAMESPACE_PREFIX):
                    yield partition[len(NAMESPACE_PREFIX) :]
            if "LastEvaluatedKey" not in response:
                return
            request["ExclusiveStartKey"] = response["LastEvaluatedKey"]

    def indexed_in(self, namespace: str) -> str | None:
        """The label of the vector index the namespace's counter names (None: none, or no counter)."""
        found = call(
            self._client.get_item,
            TableName=self._table,
            Key={"pk": memory_partition(namespace), "sk": {"S": COUNTER_SK}},
            ProjectionExpression=INDEXED_IN,
            ConsistentRead=True,
        ).get("Item", {})
        return str(found[INDEXED_IN]["S"]) if INDEXED_IN in found else None

    def digest_page(self, namespace: str, after: int, limit: int) -> list[Candidate]:
        """At most `limit` digests of the namespace, of ids above `after`, in id order; strongly consistent (so a
        change that landed before the read is read). Fewer than `limit` when DynamoDB's 1 MB page ends first: the
        next page starts after the last id returned."""
        response = call(
            self._client.query,
            TableName=self._table,
            KeyConditionExpression="pk = :pk AND sk BETWEEN :first AND :last",
            ProjectionExpression=CANDIDATE_ATTRIBUTES,
            ExpressionAttributeNames=ATTRIBUTE_NAMES,
            ExpressionAttributeValues={
                ":pk": memory_partition(namespace),
                ":first": digest_sort_key(after + 1),
                ":last": digest_sort_key(_LAST_ID),
            },
            ConsistentRead=True,
            Limit=limit,
        )
        return [to_candidate(item) for item in response.get("Items", [])]

    def digest_rows(self, namespace: str, memory_ids: Sequence[int]) -> list[Candidate]:
        """The digests of these ids still stored, strongly consistent."""
        keys = [digest_key(namespace, memory_id) for memory_id in memory_ids]
        return [to_candidate(item) for item in self._items.get_many(keys, consistent=True) if item] if keys else []

    def changes_mark(self, namespace: str) -> changes.Mark:
        """The mark of a pass about to read the namespace: its epoch (None: no counter) and now (changes.py)."""
        return changes.mark(self._items, namespace, changes.counter(self._items, namespace))

    def resumed_mark(self, epoch: str, started: datetime) -> changes.Mark:
        """The mark of a pass that started at `started` in `epoch`, resumed: its changes are read from then."""
        return changes.Mark(epoch, started, frozenset())

    def epoch(self, namespace: str) -> str | None:
        return changes.epoch(self._items, namespace)

    def changes_since(self, namespace: str, mark: object) -> DigestChanges | None:
        """The memories changed since `mark` and the next mark; None when they cannot be told (changes.since)."""
        return changes.since(self._items, namespace, mark)

    def mark(self, namespace: str, epoch: str, label: str) -> bool:
        """Name the vector index `label` on the namespace's counter, only while the counter is still of `epoch` (an
        erase, or an erase and a new start, since the backfill began leaves it unmarked); whether it was marked."""
        try:
            call(
                self._client.update_item,
                TableName=self._table,
                Key={"pk": memory_partition(namespace), "sk": {"S": COUNTER_SK}},
                UpdateExpression="SET #indexed = :label",
                ConditionExpression="born = :epoch",
                ExpressionAttributeNames={"#indexed": INDEXED_IN},
                ExpressionAttributeValues={":label": {"S": label}, ":epoch": {"S": epoch}},
            )
        except ConditionFailedError:
            return False
        return True
