"""Today's way, for the targets that compare with it in the same run: the adapter's listing and access stamps as
they were before performance round two (git 7465010), kept verbatim here (the bench's copy, never the service's)."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any, Final

from adapters.dynamodb import DynamoDBMemoryRepository
from adapters.dynamodb.client import STAMPERS, ConditionFailedError, call
from adapters.dynamodb.codec import (
    DELETED,
    INDEXES,
    LISTED_ATTRIBUTES,
    MEMORY_PREFIX,
    STATS_SK,
    memory_partition,
    sort_value,
    tags_value,
)
from adapters.dynamodb.counters import totals_attribute
from adapters.dynamodb.records import from_item, memory_key
from core.contract import RetrievalQuery
from core.model import MEMORY_TYPES, MemoryType, Status
from core.repository import Matches


class TodayRepository(DynamoDBMemoryRepository):
    """The repository with today's `find` (full rows read while skipping an offset; a search reads page after page)
    and today's `stamp` (one conditional UpdateItem per row, 16 at once)."""

    def __init__(self, client: Any, table_name: str) -> None:
        super().__init__(client, table_name)
        self._today_client, self._today_table = client, table_name
        self._today_listing = TodayListing(client, table_name)

    def find(self, namespace: str, query: RetrievalQuery) -> Matches:
        return self._today_listing.find(namespace, query)

    def stamp(self, namespace: str, memory_ids: Sequence[int], accessed_at: str) -> None:
        list(STAMPERS.map(lambda memory_id: self._stamp_one(namespace, memory_id, accessed_at), memory_ids))

    def _stamp_one(self, namespace: str, memory_id: int, accessed_at: str) -> None:
        with contextlib.suppress(ConditionFailedError):
            call(
                self._today_client.update_item,
                TableName=self._today_table,
                Key=memory_key(namespace, memory_id),
                UpdateExpression="SET accessed_key = :stamp",
                # Today's stamp on today's record; a record stored now holds none until this first writes one.
                ConditionExpression=(
                    "attribute_exists(pk) AND (attribute_not_exists(accessed_key) OR accessed_key < :stamp)"
                ),
                ExpressionAttributeValues={":stamp": sort_value(accessed_at, memory_id)},
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )


# Query's Limit must fit 32 bits; DynamoDB ends a page at 1 MB anyway, so a larger one would read no more per call.
QUERY_LIMIT_MAX: Final = 1000
_TAG_CHARACTERS: Final = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_.:")


class TodayListing:
    """Listing.find as of 7465010, verbatim but for its name."""

    def __init__(self, client: Any, table_name: str) -> None:
        self._client = client
        self._table = table_name

    def find(self, namespace: str, query: RetrievalQuery) -> Matches:
        request = self._request(namespace, query)
        wanted = query.offset + query.limit
        if query.q is None and query.tag is None:
            # The exact total comes from the namespace's counts. A first page reads it while the page is read; a
            # later one reads it first, so a page past the end reads no row and no page reads past the end.
            if query.offset == 0:
                total = STAMPERS.submit(self._total, namespace, query.status, query.memory_type)
                rows = self._first_matches(request, wanted)
                count = total.result()
            else:
                count = self._total(namespace, query.status, query.memory_type)
                if query.offset >= count:
                    return Matches(items=[], total=count)
                rows = self._first_matches(request, min(wanted, count))
        else:
            rows, count = self._all_matches(request, wanted)
        return Matches(items=[from_item(row) for row in rows[query.offset : wanted]], total=count)

    def _request(self, namespace: str, query: RetrievalQuery) -> dict[str, Any]:
        """The Query for `query`'s order, with every filter evaluated by DynamoDB, exactly as query.matches does."""
        values: dict[str, Any] = {":pk": memory_partition(namespace)}
        if query.status is None:
            filters = ["#status <> :deleted"]
            values[":deleted"] = DELETED
        else:
            filters = ["#status = :status"]
            values[":status"] = {"S": query.status}
        if query.memory_type is not None:
            filters.append("memory_type = :type")
            values[":type"] = {"S": query.memory_type}
        if query.tag is not None:
            filters.append("contains(tags, :tag)")
            values[":tag"] = {"S": tags_value([query.tag])}
        if query.q is not None:
            needle = query.q.casefold()
            found_in = ["contains(folded, :q)", "(attribute_not_exists(folded) AND contains(content, :q))"]
            if set(needle) <= _TAG_CHARACTERS:  # any other character can be in no tag, and cannot span two
                found_in.append("contains(tags, :q)")
            filters.append(f"({' OR '.join(found_in)})")
            values[":q"] = {"S": needle}
        request: dict[str, Any] = {
            "TableName": self._table,
            "FilterExpression": " AND ".join(filters),
            "ProjectionExpression": ", ".join(f"#{name}" if name == "status" else name for name in LISTED_ATTRIBUTES),
            "ExpressionAttributeNames": {"#status": "status"},
            "ExpressionAttributeValues": values,
        }
        if query.sort == "id":
            request["KeyConditionExpression"] = "pk = :pk AND begins_with(sk, :memory)"
            values[":memory"] = {"S": MEMORY_PREFIX}
        else:
            request["IndexName"] = INDEXES[query.sort][0]
            request["KeyConditionExpression"] = "pk = :pk"
            request["ScanIndexForward"] = False
        return request

    def _first_matches(self, request: dict[str, Any], wanted: int) -> list[dict[str, Any]]:
        """The first `wanted` matches, reading hardly more items than that many matches need."""
        rows: list[dict[str, Any]] = []
        while len(rows) < wanted:
            # Limit counts items read before the filter; a little slack for filtered-out rows (deleted ones, say)
            # saves a second round trip, each of which costs at least half a read unit.
            missing = wanted - len(rows)
            limit = min(missing + missing // 4 + 2, QUERY_LIMIT_MAX)
            response = call(self._client.query, **request, Limit=limit)
            rows.extend(response.get("Items", []))
            if "LastEvaluatedKey" not in response:
                break
            request["ExclusiveStartKey"] = response["LastEvaluatedKey"]
        return rows[:wanted]

    def _all_matches(self, request: dict[str, Any], wanted: int) -> tuple[list[dict[str, Any]], int]:
        """The first `wanted` matches and the number of all of them: whole pages until the window is full, then
        counts only (DynamoDB filters and counts; nothing beyond the window is sent back or parsed)."""
        rows: list[dict[str, Any]] = []
        total = 0
        while True:
            response = call(self._client.query, **request)
            total += response["Count"]
            rows.extend(response.get("Items", [])[: max(0, wanted - len(rows))])
            if "LastEvaluatedKey" not in response:
                return rows, total
            request["ExclusiveStartKey"] = response["LastEvaluatedKey"]
            if len(rows) >= wanted and "Select" not in request:
                del request["ProjectionExpression"]
                request["Select"] = "COUNT"

    def _total(self, namespace: str, status: Status | None, memory_type: MemoryType | None) -> int:
        response = call(
            self._client.get_item,
            TableName=self._table,
            Key={"pk": memory_partition(namespace), "sk": {"S": STATS_SK}},
            # As consistent as the index pages it is read with (GSI reads are eventually consistent).
            ConsistentRead=False,
        )
        counts = response.get("Item", {})
        statuses = [status] if status else ["active", "invalid"]
        types = [memory_type] if memory_type else MEMORY_TYPES
        return sum(
            int(counts[counter]["N"]) for s in statuses for t in types if (counter := totals_attribute(s, t)) in counts
        )
