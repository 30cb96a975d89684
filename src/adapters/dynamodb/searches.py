"""Searches (listing.py): the whole namespace, or a tag's partition of copies, read in id segments at once, each
small enough to be one page (a Query reads at most 1 MB), so a search takes two sequential round trips (the id
counter, then every segment) instead of one per megabyte, whatever the namespace's size.

In the namespace, a `q` search in any order but last use reads the memories' search copies (searchcopies.py), and a
listing by last use without `q` or `tag` reads their access items (accessitems.py). Any other search by last use
reads the records, each segment joined with its access items.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

from adapters.dynamodb import changes
from adapters.dynamodb.accessitems import AccessItems, joined_all
from adapters.dynamodb.client import READERS, call
from adapters.dynamodb.codec import memory_partition
from adapters.dynamodb.queries import leading_rows, query_request, segments
from adapters.dynamodb.records import from_item, memory_sort_key
from adapters.dynamodb.searchcopies import SearchCopies, searchable
from adapters.dynamodb.table import Items
from core.budget import carried
from core.contract import RetrievalQuery
from core.repository import Matches

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

# Ids per search segment: 512 items of up to 2 KB (a memory of a few hundred characters takes about 1 KB) are one
# 1 MB page. Larger items only make a segment take more than one page; the result is the same.
SEGMENT_IDS: Final = 512

Item = dict[str, Any]


class Searches:
    """The searches of one table's namespaces."""

    def __init__(self, client: DynamoDBClient, table_name: str, items: Items, warm_bytes: int) -> None:
        self._client = client
        self._table = table_name
        self._items = items
        self._copies = SearchCopies(client, items, warm_bytes)
        self._accesses = AccessItems(client, items)

    def find(self, namespace: str, query: RetrievalQuery, partition: Mapping[str, Any]) -> Matches:
        """A search through `partition`: the namespace's (its search copies or access items when they can answer),
        or a tag's."""
        home = partition == memory_partition(namespace)
        by_use = query.sort == "last_accessed_at"
        if home and searchable(query):
            # A warm copy reads the counter with its changes: read here, it would be read twice.
            return self._copies.find(
                namespace, query, lambda: changes.highest_id(changes.counter(self._items, namespace))
            )
        highest_id = changes.highest_id(changes.counter(self._items, namespace))
        if home and by_use and query.q is None and query.tag is None:
            return self._accesses.find(namespace, query, highest_id)
        # Eventually consistent: the last segment is open-ended, so a stale counter misses no memory.
        request = query_request(self._table, partition, query, by_id=True)
        bounds = segments(highest_id, SEGMENT_IDS)
        # Each segment keeps only the matches that can reach the page, so a search holds a few pages of rows, not
        # every match of the namespace.
        leading = leading_rows(query.sort, query.offset + query.limit)
        stamps = (lambda first, last: self._accesses.stamps(namespace, first, last)) if by_use else None
        parts = list(READERS.map(carried(lambda bound: self._segment(request, leading, stamps, *bound)), bounds))
        rows = leading([row for _, part in parts for row in part])
        window = rows[query.offset : query.offset + query.limit]
        return Matches(items=[from_item(row) for row in window], total=sum(count for count, _ in parts))

    def _segment(
        self,
        request: Mapping[str, Any],
        leading: Callable[[list[Item]], list[Item]],
        stamps: Callable[[int, int], list[Item]] | None,
        first: int,
        last: int,
    ) -> tuple[int, list[Item]]:
        """The number of matches in ids first..last, and the leading ones of them (each with its stamp from the
        segment's access items, read first, when `stamps` reads them)."""
        accesses = stamps(first, last) if stamps else []
        segment = {
            **request,
            "KeyConditionExpression": "pk = :pk AND sk BETWEEN :first AND :last",
            "ExpressionAttributeValues": {
                **request["ExpressionAttributeValues"],
                ":first": memory_sort_key(first),
                ":last": memory_sort_key(last),
            },
        }
        rows: list[Item] = []
        count = 0
        while True:
            response = call(self._client.query, **segment)
            found = joined_all(response.get("Items", []), accesses) if stamps else response.get("Items", [])
            count += len(found)
            rows = leading(rows + found)
            if "LastEvaluatedKey" not in response:
                return count, rows
            segment["ExclusiveStartKey"] = response["LastEvaluatedKey"]
