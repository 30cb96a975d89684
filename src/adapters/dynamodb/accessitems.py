"""Access items: each memory's `last_accessed_at` in a small item of its own beside it (codec.py), so an access stamp
rewrites about 100 bytes, 1 WCU, and no index entry (the record is 1 KB or more, and an index keyed on the stamp
would move its entry, a delete and a put, on every stamp).

What reads a stamp joins it to the record (`joined`), and a listing by last use reads the namespace's access items
(DynamoDB filters status and type, which they carry) in id segments read at once, orders them in the function,
then reads the page's records: three sequential round trips (the id counter, every segment, the page) whatever the
namespace's size, and about 100 bytes read per memory. A `q` or `tag` search by last use reads the records, as
any search does, and joins each segment's stamps (searches.py). A read that needs some memories' stamps but not
their records (a listing that stamps nothing, recall ranking by use) reads their access items alone (`stored_stamps`).
The stamps themselves are written by stamps.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any, Final

from adapters.dynamodb.client import READERS
from adapters.dynamodb.codec import (
    ACCESS_PREFIX,
    ACCESSED_KEY,
    NEVER_ACCESSED,
    item_id,
    memory_partition,
    sort_value,
    timestamp_of,
)
from adapters.dynamodb.queries import kind_conditions, leading_rows, segments
from adapters.dynamodb.rawitems import raw_items, watch
from adapters.dynamodb.records import from_item, memory_key
from adapters.dynamodb.table import BATCH_GET_ITEMS, Items
from core.budget import carried
from core.contract import RetrievalQuery
from core.limits import ID_DIGITS
from core.model import Memory
from core.repository import Matches
from core.repository.digests import StoredStamp

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

# Ids per segment: 4,096 access items of about 120 bytes (a namespace name of up to 64 characters) are one 1 MB page.
ACCESS_SEGMENT_IDS: Final = 4096
# Stamps read by id: ids at most this far apart are read by one Query of their range, the items between them included,
# since a read by key costs half a unit (4 KB) however small the item, and an access item is at most 167 bytes (pk 69,
# sk 14, accessed_key 50, status 13, memory_type 21): 24 of them are less than 4 KB.
CLOSE_IDS: Final = 24

Item = dict[str, Any]


def access_sort_key(memory_id: int) -> dict[str, Any]:
    return {"S": f"{ACCESS_PREFIX}{memory_id:0{ID_DIGITS}d}"}


def access_key(namespace: str, memory_id: int) -> dict[str, Any]:
    return {"pk": memory_partition(namespace), "sk": access_sort_key(memory_id)}


def joined(record: dict[str, Any], access: Mapping[str, Any] | None) -> dict[str, Any]:
    """The memory item with the stamp its access item holds (without one, as read: never stamped, or being purged)."""
    return record if access is None or ACCESSED_KEY not in access else {**record, ACCESSED_KEY: access[ACCESSED_KEY]}


def stamped(items: Items, namespace: str, memory_ids: list[int], consistent: bool = False) -> list[Item | None]:
    """The memory items of `memory_ids` (None where there is none), each with its stamp joined from its access item,
    read together."""
    found = items.get_many([key(namespace, i) for key in (memory_key, access_key) for i in memory_ids], consistent)
    records, accesses = found[: len(memory_ids)], found[len(memory_ids) :]
    return [joined(item, access) if item else None for item, access in zip(records, accesses, strict=True)]


def stored_stamps(items: Items, namespace: str, memory_ids: Iterable[int]) -> dict[int, StoredStamp]:
    """The status and stamp of each of `memory_ids` still stored, from their access items alone (eventually
    consistent), read at once: each run of ids at most CLOSE_IDS apart by a Query of its range (in segments of one
    page), each id far from any other by key, in BatchGetItems."""
    wanted = sorted(set(memory_ids))
    runs: list[list[int]] = []
    for memory_id in wanted:
        if runs and memory_id - runs[-1][-1] <= CLOSE_IDS:
            runs[-1].append(memory_id)
        else:
            runs.append([memory_id])
    ranges = [
        (first, min(first + ACCESS_SEGMENT_IDS - 1, run[-1]))
        for run in runs
        if len(run) > 1
        for first in range(run[0], run[-1] + 1, ACCESS_SEGMENT_IDS)
    ]
    alone = [access_key(namespace, run[0]) for run in runs if len(run) == 1]
    reads: list[Callable[[], Iterable[Item | None]]] = [
        *(partial(_range, items, namespace, first, last) for first, last in ranges),
        *(partial(items.get_many, alone[i : i + BATCH_GET_ITEMS]) for i in range(0, len(alone), BATCH_GET_ITEMS)),
    ]
    found = [item for part in READERS.map(carried(lambda read: read()), reads) for item in part if item]
    keep = set(wanted)
    return {item_id(item): stamp_of(item) for item in found if item_id(item) in keep}


def _range(items: Items, namespace: str, first: int, last: int) -> list[Item]:
    request = {**AccessItems.range_request(namespace, first, last), "ExpressionAttributeNames": {"#status": "status"}}
    request["ProjectionExpression"] += ", #status"
    with raw_items():
        return [item for page in items.pages(request) for item in page]


def stamp_of(access: Mapping[str, Any]) -> StoredStamp:
    """The status and stamp an access item holds."""
    accessed = access.get(ACCESSED_KEY, {}).get("S", NEVER_ACCESSED)
    return StoredStamp(access["status"]["S"], None if accessed.startswith(NEVER_ACCESSED) else timestamp_of(accessed))


def change_actions(table: str, namespace: str, before: Memory | None, after: Memory) -> list[Item]:
    """What a change of a memory does to its access item: a create puts it (with the stamp the record has); a change
    of status or type updates them (its stamp left as it is, never a stampless one in place of a lost one)."""
    if before is None:
        return [{"Put": {"TableName": table, "Item": to_access_item(namespace, after)}}]
    if (before.status, before.memory_type) == (after.status, after.memory_type):
        return []
    update = {
        "TableName": table,
        "Key": access_key(namespace, after.id),
        "UpdateExpression": "SET #status = :status, memory_type = :type",
        "ConditionExpression": "attribute_exists(pk)",
        "ExpressionAttributeNames": {"#status": "status"},
        "ExpressionAttributeValues": {":status": {"S": after.status}, ":type": {"S": after.memory_type}},
    }
    return [{"Update": update}]


def removal_action(table: str, namespace: str, memory_id: int) -> Item:
    return {"Delete": {"TableName": table, "Key": access_key(namespace, memory_id)}}


def to_access_item(namespace: str, memory: Memory) -> dict[str, Any]:
    return {
        **access_key(namespace, memory.id),
        ACCESSED_KEY: sort_value(memory.last_accessed_at, memory.id),
        "status": {"S": memory.status},
        "memory_type": {"S": memory.memory_type},
    }


def joined_all(records: Iterable[Item], accesses: Iterable[Mapping[str, Any]]) -> list[Item]:
    """`joined` for each record, with the access items among `accesses` (of any memories)."""
    by_id = {item_id(access): access for access in accesses}
    return [joined(record, by_id.get(item_id(record))) for record in records]


class AccessItems:
    """The access items of one table's namespaces, read for a listing by last use."""

    def __init__(self, client: DynamoDBClient, items: Items) -> None:
        self._items = items
        watch(client)

    def find(self, namespace: str, query: RetrievalQuery, highest_id: int) -> Matches:
        """The page of `query` (by last use, without `q` or `tag`) and the number of matches, from the access items of
        ids up to `highest_id` (an eventually consistent counter: the last segment is open-ended), then the page's
        records (a memory purged since is left out of the page)."""
        leading = leading_rows(query.sort, query.offset + query.limit)
        parts = list(
            READERS.map(
                carried(lambda bound: self._segment(namespace, query, leading, *bound)),
                segments(highest_id, ACCESS_SEGMENT_IDS),
            )
        )
        page = leading([row for _, rows in parts for row in rows])[query.offset :]
        records = self._items.get_many([memory_key(namespace, item_id(row)) for row in page]) if page else []
        items = [from_item(joined(record, row)) for record, row in zip(records, page, strict=True) if record]
        return Matches(items=items, total=sum(count for count, _ in parts), stored_stamps=True)

    def _segment(
        self, namespace: str, query: RetrievalQuery, leading: Callable[[list[Item]], list[Item]], first: int, last: int
    ) -> tuple[int, list[Item]]:
        """The number of matching access items of ids first..last, and the `leading` (most recently used) of them."""
        conditions, values = kind_conditions(query.status, query.memory_type, None)
        request = {
            **self.range_request(namespace, first, last),
            "FilterExpression": " AND ".join(conditions),
            "ExpressionAttributeNames": {"#status": "status"},
        }
        request["ExpressionAttributeValues"] |= values
        count, kept = 0, list[Item]()
        with raw_items():  # thousands of items: read from the answer's JSON, not through botocore's parser
            for page in self._items.pages(request):
                count += len(page)
                kept = leading(kept + page)
        return count, kept

    def stamps(self, namespace: str, first: int, last: int) -> list[Item]:
        """The access items of ids first..last, their keys and stamps only (eventually consistent, as a listing)."""
        request = self.range_request(namespace, first, last)
        with raw_items():
            return [item for page in self._items.pages(request) for item in page]

    @staticmethod
    def range_request(namespace: str, first: int, last: int) -> dict[str, Any]:
        return {
            "KeyConditionExpression": "pk = :pk AND sk BETWEEN :first AND :last",
            "ProjectionExpression": f"sk, {ACCESSED_KEY}",
            "ExpressionAttributeValues": {
                ":pk": memory_partition(namespace),
                ":first": access_sort_key(first),
                ":last": access_sort_key(last),
            },
        }
