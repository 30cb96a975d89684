"""The Queries a listing sends: the request for a query in a partition (its index, filters and projection), the id
segments a search reads at once (and how many ids a segment of recall's digests holds), and the leading rows of some in
a sort order."""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Mapping
from typing import Any, Final

from adapters.dynamodb.codec import (
    ACCESSED_KEY,
    DELETED,
    INDEXES,
    LISTED_ATTRIBUTES,
    MEMORY_PREFIX,
    TAG_PARTITION,
    item_id,
    sort_value,
    tags_value,
)
from core.contract import RetrievalQuery
from core.limits import MAX_MEMORY_ID

_TAG_CHARACTERS: Final = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_.:")

Item = dict[str, Any]


def kind_conditions(status: str | None, memory_type: str | None, tag: str | None) -> tuple[list[str], dict[str, Any]]:
    """The conditions (and their values) of the filters a record and its digest share: a status (else not deleted), a
    type, a tag (`tag` None where the partition read holds that tag's copies only). Names #status."""
    values: dict[str, Any] = {}
    if status is None:
        conditions = ["#status <> :deleted"]
        values[":deleted"] = DELETED
    else:
        conditions = ["#status = :status"]
        values[":status"] = {"S": status}
    if memory_type is not None:
        conditions.append("memory_type = :type")
        values[":type"] = {"S": memory_type}
    if tag is not None:
        conditions.append("contains(tags, :tag)")
        values[":tag"] = {"S": tags_value([tag])}
    return conditions, values


def query_request(
    table: str, partition: Mapping[str, Any], query: RetrievalQuery, *, by_id: bool = False
) -> dict[str, Any]:
    """The Query for `query` in `partition` (on the table by id when `by_id`, else on its sort's index), with
    every filter evaluated by DynamoDB, exactly as query.matches does (a tag's partition holds its tag only)."""
    by_tag = query.tag is not None and TAG_PARTITION not in partition["S"]
    filters, values = kind_conditions(query.status, query.memory_type, query.tag if by_tag else None)
    values[":pk"] = partition
    if query.q is not None:
        needle = query.q.casefold()
        found_in = ["contains(folded, :q)", "(attribute_not_exists(folded) AND contains(content, :q))"]
        if set(needle) <= _TAG_CHARACTERS:  # any other character can be in no tag, and cannot span two
            found_in.append("contains(tags, :q)")
        filters.append(f"({' OR '.join(found_in)})")
        values[":q"] = {"S": needle}
    projected = LISTED_ATTRIBUTES
    request: dict[str, Any] = {
        "TableName": table,
        "FilterExpression": " AND ".join(filters),
        "ProjectionExpression": ", ".join(f"#{name}" if name == "status" else name for name in projected),
        "ExpressionAttributeNames": {"#status": "status"},
        "ExpressionAttributeValues": values,
    }
    if by_id:
        return request  # each segment adds its own range of ids
    if query.sort == "id":
        request["KeyConditionExpression"] = "pk = :pk AND begins_with(sk, :memory)"
        values[":memory"] = {"S": MEMORY_PREFIX}
    else:
        request["IndexName"] = INDEXES[query.sort][0]
        request["KeyConditionExpression"] = "pk = :pk"
        request["ScanIndexForward"] = False
    return request


def leading_rows(sort: str, wanted: int) -> Callable[[list[Item]], list[Item]]:
    """The first `wanted` of some rows in the `sort` order: by id ascending, else by the sort value descending
    ("<timestamp>#<id>", so ties fall by id)."""
    if sort == "id":
        return lambda rows: heapq.nsmallest(wanted, rows, key=lambda row: str(row["sk"]["S"]))
    attribute = ACCESSED_KEY if sort == "last_accessed_at" else INDEXES[sort][1]

    def value(row: Item) -> str:  # a memory (or access item) never stamped may hold no stamp at all
        return str(row[attribute]["S"] if attribute in row else sort_value(None, item_id(row))["S"])

    return lambda rows: heapq.nlargest(wanted, rows, key=value)


# A search sends at most this many Queries at once, however high a namespace's counter went (an import may start it
# near 10^9): past it, segments grow and a large one reads on page by page, instead of a Query per `size` ids.
MAX_SEGMENTS: Final = 64


def segments(highest_id: int, size: int) -> list[tuple[int, int]]:
    """Id ranges covering every id, `size` each up to the highest id drawn (larger when that would take more than
    MAX_SEGMENTS of them), the last one open-ended."""
    count = max(1, min(math.ceil(highest_id / size), MAX_SEGMENTS))
    size = max(size, math.ceil(highest_id / count))
    bounds = [(1 + i * size, (i + 1) * size) for i in range(count)]
    bounds[-1] = (bounds[-1][0], MAX_MEMORY_ID)
    return bounds


# A recall reads the digests in id segments at once (`segments`), each meant to be one page: a Query stops at
# 1 MB, and a segment past it reads on, one more round trip. By DynamoDB's item-size rules (names and values, in
# bytes), a digest item holds at their longest: its key (pk, "NS#" and a namespace of 64: 69; sk, "RCL#" and 10
# digits: 16), memory_type 21, status 13, updated_at 37, created_at 37 (once it differs), version 13, vec_scale 19,
# vec_model 209 (a model name of 200), and the names text, tags and vec (11): 445 bytes; then its vector, a byte a
# dimension, and its content (`text`) and tags deflated. DIGEST_BYTES_BESIDE_VECTOR allows 1,024 bytes beside the
# vector, so 579 for content and tags: a memory of about 800 characters of prose and a few tags (prose deflates to
# about 0.7 of a byte a character; the bench's memories take about 155 bytes). A segment is as many ids as such digests
# fill 1 MB with: 744 at 384 dimensions, 512 at 1,024 (tests/adapters/dynamodb/test_digest_segments.py). The largest
# content a digest can hold is far larger (8,192 characters of rare CJK deflate to about 22 KB): segments sized for
# those would hold about 40 ids,
# and past 32 of them (1,300 memories) wait for read threads (client.READ_CONCURRENCY), past 64 (MAX_SEGMENTS)
# grow again: more round trips than the rare segment of long memories reading on costs.
PAGE_BYTES: Final = 1024 * 1024
DIGEST_BYTES_BESIDE_VECTOR: Final = 1024
# The dimensions a store sizes its segments for when it is not told its model's: the largest vectors a deployment's
# model makes (Titan Text Embeddings V2's 1,024).
LARGEST_DIMENSIONS: Final = 1024


def digest_segment_ids(dimensions: int) -> int:
    """The ids of a recall's segment for vectors of `dimensions`: as many as digests of DIGEST_BYTES_BESIDE_VECTOR
    bytes beside their vector fill one 1 MB page with."""
    return max(1, PAGE_BYTES // (DIGEST_BYTES_BESIDE_VECTOR + dimensions))
