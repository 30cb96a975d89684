"""Query planning for a listing: every filter evaluated by DynamoDB, the exact total from the stored counters
whenever the filters allow it, and a bounded number of sequential round trips whatever the namespace's size.

- Without `q`, a listing reads its sort order's index from the start: the skipped rows counted, then with their
  keys only, then the page, each Query's `Limit` sized from the share of the index the filters match (the stored
  totals say it), so a selective filter does not creep through the index a few rows at a time. With `tag`, the
  index is the tag's partition of copies (see codec.py): it holds that tag's memories only, so the page costs what
  it returns.
- With `q` (matched in content no index orders), or by last use (ordered by no index: see accessitems.py), a
  search reads the whole namespace, or the whole tag partition when a tag is given, in id segments read at once
  (searches.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final

from adapters.dynamodb.client import READERS, call
from adapters.dynamodb.codec import INDEXES, STATS_SK, memory_partition, tag_partition
from adapters.dynamodb.queries import query_request
from adapters.dynamodb.records import from_item
from adapters.dynamodb.searchcopies import WARM_SEARCH_BYTES
from adapters.dynamodb.searches import Searches
from adapters.dynamodb.table import Items
from adapters.dynamodb.totals import QUERY_LIMIT_MAX, Totals, numbers, sized
from core.budget import carried
from core.contract import RetrievalQuery
from core.repository import Matches

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

# A sized Limit reads the rows the matching share predicts plus this many standard deviations of that number
# (matches spread evenly): for a page, enough that a second round trip is rare; while skipping, none, since the page
# re-reads from the last skipped match and a row read past it is read twice.
PAGE_SIGMAS: Final = 2.0
SKIP_SIGMAS: Final = 0.0
# Matches a deep offset counts without reading them (Select=COUNT) stop this many standard deviations, and at
# least COUNT_SHORT_OF_ROWS matches, short of the offset: the rest are read with their keys, to land on the
# offset-th exactly.
COUNT_SIGMAS: Final = 3.0
COUNT_SHORT_OF_ROWS: Final = 50
# From this offset on, skipped rows are counted, then read with their keys only (more round trips, but nothing or
# far less to parse); below it, one Query reads the skipped rows whole with the page.
SKIP_KEYS_FROM: Final = 500

Item = dict[str, Any]


class Listing:
    """The `find` of DynamoDBMemoryRepository: one namespace's page of matches and their number."""

    def __init__(self, client: DynamoDBClient, table_name: str, warm_bytes: int = WARM_SEARCH_BYTES) -> None:
        """`warm_bytes`: the budget of this process's warm copies of search copies (searchcopies.SearchCopies)."""
        self._client = client
        self._table = table_name
        self._reads = Items(client, table_name)
        self._searches = Searches(client, table_name, self._reads, warm_bytes)

    def find(self, namespace: str, query: RetrievalQuery) -> Matches:
        matches = self._found(namespace, query)
        # Ordered by last use, the rows read their stamps (see query_request); no other order reads them.
        return replace(matches, stored_stamps=query.sort == "last_accessed_at")

    def _found(self, namespace: str, query: RetrievalQuery) -> Matches:
        if query.sort == "last_accessed_at":
            return self._searches.find(namespace, query, memory_partition(namespace))
        if query.tag is not None:
            copies = tag_partition(namespace, query.tag)
            if query.q is None:
                return self._in_order(copies, query, lambda: self._totals(copies))
            return self._searches.find(namespace, query, copies)
        if query.q is None:
            partition = memory_partition(namespace)
            return self._in_order(partition, query, lambda: self._totals(partition))
        return self._searches.find(namespace, query, memory_partition(namespace))

    # Listings in an index's order.

    def _in_order(self, partition: Mapping[str, Any], query: RetrievalQuery, totals: Callable[[], Totals]) -> Matches:
        """A page from `partition` in the query's index order."""
        request = query_request(self._table, partition, query)
        counts: Future[Totals] | Totals
        skip = query.offset
        if query.offset == 0:
            # A first page reads the totals while its first Query runs; a later one reads them first, so a page past
            # the end reads no row and the Queries know how many rows to read.
            counts = READERS.submit(carried(totals))
        else:
            counts = totals()
            if query.offset >= counts.matching(query):
                return Matches(items=[], total=counts.matching(query))
        scanned = 0
        if query.offset >= SKIP_KEYS_FROM and isinstance(counts, Totals):
            start, scanned = self._skip(request, query, counts)
            if start is None:
                return Matches(items=[], total=counts.matching(query))
            request["ExclusiveStartKey"], skip = start, 0
        rows = self._first(request, skip + query.limit, counts, query, scanned)
        known = counts.result() if isinstance(counts, Future) else counts
        return Matches(items=[from_item(row) for row in rows[skip:]], total=known.matching(query))

    def _skip(self, request: Mapping[str, Any], query: RetrievalQuery, counts: Totals) -> tuple[Item | None, int]:
        """The key of the `query.offset`-th match (the page starts after it; None when fewer match), and the number
        of rows read: counted (`Select=COUNT`, nothing sent back) to within a few standard deviations of it, then
        read with their keys only to land on it exactly."""
        counted = self._count_past(request, query, counts)
        if isinstance(counted, int):
            return None, counted  # fewer match
        start, skipped, scanned = counted
        index_key = None if query.sort == "id" else INDEXES[query.sort][1]
        keys_only = {**request, "ProjectionExpression": ", ".join(filter(None, ("pk", "sk", index_key)))}
        if start is not None:
            keys_only["ExclusiveStartKey"] = start
        while True:
            missing = query.offset - skipped
            share = counts.share_after(query, skipped, scanned)
            response = call(self._client.query, **keys_only, Limit=sized(missing, share, SKIP_SIGMAS))
            items = response.get("Items", [])
            scanned += response.get("ScannedCount", 0)
            if skipped + len(items) >= query.offset:
                last: Item = items[missing - 1]
                return last, scanned
            skipped += len(items)
            if "LastEvaluatedKey" not in response:
                return None, scanned
            keys_only["ExclusiveStartKey"] = response["LastEvaluatedKey"]

    def _count_past(
        self, request: Mapping[str, Any], query: RetrievalQuery, counts: Totals
    ) -> tuple[Item | None, int, int] | int:
        """Count matches from the index's start, in Queries sized to stop COUNT_SIGMAS standard deviations short of
        the offset-th: the key to read on from (None: the start), the matches counted before it, and the rows read;
        only the rows read when fewer match. A count that reached the offset anyway is read again with keys."""
        counting = {key: value for key, value in request.items() if key != "ProjectionExpression"}
        counting["Select"] = "COUNT"
        start: Item | None = None
        skipped = scanned = 0
        while (missing := query.offset - skipped) > COUNT_SHORT_OF_ROWS:
            share = counts.share_after(query, skipped, scanned)
            short = max(1, math.floor((missing - COUNT_SIGMAS * math.sqrt(missing * (1 - share))) / share))
            response = call(self._client.query, **counting, Limit=min(short, QUERY_LIMIT_MAX), **_from(start))
            counted = int(response.get("Count", 0))
            if skipped + counted >= query.offset:
                return start, skipped, scanned  # past it: read those rows again, with their keys
            skipped += counted
            scanned += int(response.get("ScannedCount", 0))
            if "LastEvaluatedKey" not in response:
                return scanned
            start = response["LastEvaluatedKey"]
        return start, skipped, scanned

    def _first(
        self,
        request: dict[str, Any],
        wanted: int,
        counts: Future[Totals] | Totals,
        query: RetrievalQuery,
        scanned: int,
    ) -> list[Item]:
        """The first `wanted` matches from the request's start (after `scanned` rows read while skipping), each
        Query's Limit sized from the matching share of the rows left once the totals are known (a first page's
        first Query, sent with them, guesses a little slack instead)."""
        rows: list[Item] = []
        before = 0 if "ExclusiveStartKey" not in request else query.offset  # matches before the request's start
        while len(rows) < wanted:
            missing = wanted - len(rows)
            if isinstance(counts, Future) and (rows or "ExclusiveStartKey" in request):
                counts = counts.result()
            if isinstance(counts, Totals):
                found = before + len(rows)
                remaining = counts.matching(query) - found
                if remaining <= 0:
                    break  # every match counted is read
                limit = sized(min(missing, remaining), counts.share_after(query, found, scanned), PAGE_SIGMAS)
            else:
                limit = missing + missing // 4 + 2  # deleted rows are few: a little slack saves a round trip
            response = call(self._client.query, **request, Limit=limit)
            scanned += response.get("ScannedCount", 0)
            rows.extend(response.get("Items", []))
            if "LastEvaluatedKey" not in response:
                break
            request["ExclusiveStartKey"] = response["LastEvaluatedKey"]
        return rows[:wanted]

    def _totals(self, partition: Mapping[str, Any]) -> Totals:
        """The totals of `partition`, the namespace's or a tag's, eventually consistent (as the index pages they are
        read with)."""
        return Totals(numbers(self._reads.get_many([_stats_key(partition)])[0]))


def _stats_key(partition: Mapping[str, Any]) -> Item:
    return {"pk": partition, "sk": {"S": STATS_SK}}


def _from(start: Item | None) -> dict[str, Any]:
    return {} if start is None else {"ExclusiveStartKey": start}
