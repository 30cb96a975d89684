"""A `q` search over a namespace's search copies (codec.py), in the id segments a record search reads (listing.py).

A search copy holds a memory's content deflated and what a listing returns of it but its access stamp, so a search
reads about 40 % of the bytes the records hold (a record keeps its content twice, as written and casefolded, and
three sort keys): DynamoDB evaluates the status, type and tag filters, and the core the `q` it cannot see in deflated
text, with the contract's own rule (RetrievalQuery.matches). The page comes from the copies themselves, so a search
still takes two sequential round trips: the id counter (with the namespace's STATS), then every segment at once.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

from adapters.dynamodb.client import READERS
from adapters.dynamodb.codec import SEARCH_PREFIX, deflated, inflated, memory_partition, tags_value
from adapters.dynamodb.queries import kind_conditions, segments
from adapters.dynamodb.rawitems import raw_items, watch
from adapters.dynamodb.table import Items
from core.budget import carried
from core.contract import RetrievalQuery
from core.limits import ID_DIGITS
from core.model import Memory
from core.repository import Matches

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

# Ids per segment: 512 copies of up to 2 KB (the content of up to about 3,000 characters, deflated) are one 1 MB page.
SEARCH_SEGMENT_IDS: Final = 512
# The order of each sort, as a key of the copy's memory that sorts ascending for `id`, descending for the others.
_ORDER: Final[Mapping[str, Callable[[Memory], Any]]] = {
    "id": lambda memory: memory.id,
    "created_at": lambda memory: (memory.created_at, memory.id),
    "updated_at": lambda memory: (memory.updated_at, memory.id),
}

Item = dict[str, Any]


def search_copy_sort_key(memory_id: int) -> dict[str, Any]:
    return {"S": f"{SEARCH_PREFIX}{memory_id:0{ID_DIGITS}d}"}


def search_copy_key(namespace: str, memory_id: int) -> dict[str, Any]:
    return {"pk": memory_partition(namespace), "sk": search_copy_sort_key(memory_id)}


def put_action(table: str, namespace: str, memory: Memory) -> Item:
    """The copy rewritten by a change of its memory (a copy has nothing a change keeps, so it is a Put)."""
    return {"Put": {"TableName": table, "Item": to_search_copy(namespace, memory)}}


def removal_action(table: str, namespace: str, memory_id: int) -> Item:
    return {"Delete": {"TableName": table, "Key": search_copy_key(namespace, memory_id)}}


def to_search_copy(namespace: str, memory: Memory) -> dict[str, Any]:
    item: dict[str, Any] = {
        **search_copy_key(namespace, memory.id),
        "text": {"B": deflated(memory.content)},
        "memory_type": {"S": memory.memory_type},
        "status": {"S": memory.status},
        "version": {"N": str(memory.version)},
        "c": {"S": memory.created_at},
        "u": {"S": memory.updated_at},
    }
    if memory.tags:
        item["tags"] = {"S": tags_value(memory.tags)}
    return item


def from_search_copy(item: Mapping[str, Any], text: tuple[str, list[str]] | None = None) -> Memory:
    """A memory as its search copy holds it: without its access stamp (None), as a listing returns it. `text`: its
    content and tags, read from it already."""
    text = text or copy_text(item)
    return Memory.model_construct(
        id=int(item["sk"]["S"][len(SEARCH_PREFIX) :]),
        content=text[0],
        tags=text[1],
        created_at=item["c"]["S"],
        updated_at=item["u"]["S"],
        last_accessed_at=None,
        memory_type=item["memory_type"]["S"],
        status=item["status"]["S"],
        version=int(item["version"]["N"]),
    )


def searchable(query: RetrievalQuery) -> bool:
    """Whether the copies can answer `query`: a `q` search in any order but last use (the copies carry no stamp)."""
    return query.q is not None and query.sort in _ORDER


class SearchCopies:
    """The search copies of one table's namespaces, read for a `q` search."""

    def __init__(self, client: DynamoDBClient, items: Items) -> None:
        self._items = items
        watch(client)

    def find(self, namespace: str, query: RetrievalQuery, highest_id: int) -> Matches:
        """The page of `query` (searchable) and the number of matches, from the copies of ids up to `highest_id`
        (an eventually consistent counter: the last segment is open-ended, so no later memory is missed)."""
        conditions, values = kind_conditions(query.status, query.memory_type, query.tag)
        request = {
            "KeyConditionExpression": "pk = :pk AND sk BETWEEN :first AND :last",
            "FilterExpression": " AND ".join(conditions),
            "ExpressionAttributeNames": {"#status": "status"},
            "ExpressionAttributeValues": {**values, ":pk": memory_partition(namespace)},
        }
        wanted = query.offset + query.limit
        parts = list(
            READERS.map(
                carried(lambda bound: self._segment(request, query, wanted, *bound)),
                segments(highest_id, SEARCH_SEGMENT_IDS),
            )
        )
        page = _leading(query, wanted, [memory for _, found in parts for memory in found])[query.offset :]
        return Matches(items=page, total=sum(count for count, _ in parts))

    def _segment(
        self, request: Item, query: RetrievalQuery, wanted: int, first: int, last: int
    ) -> tuple[int, list[Memory]]:
        """The number of matches among the copies of ids first..last, and the leading `wanted` of them."""
        values = {
            **request["ExpressionAttributeValues"],
            ":first": search_copy_sort_key(first),
            ":last": search_copy_sort_key(last),
        }
        count, leading = 0, list[Memory]()
        with raw_items():  # thousands of copies: read from the answer's JSON, not through botocore's parser
            for page in self._items.pages({**request, "ExpressionAttributeValues": values}):
                texts = [(item, copy_text(item)) for item in page]
                found = [from_search_copy(item, text) for item, text in texts if query.matches_text(*text)]
                count += len(found)
                leading = _leading(query, wanted, leading + found)
        return count, leading


def copy_text(item: Mapping[str, Any]) -> tuple[str, list[str]]:
    """The content and tags a copy holds: what `q` and `tag` match on (the rest is read for matches only)."""
    tags = item.get("tags")
    return inflated(item["text"]["B"]), tags["S"][1:-1].split("\n") if tags else []


def _leading(query: RetrievalQuery, wanted: int, memories: list[Memory]) -> list[Memory]:
    """The first `wanted` of `memories` in the query's order (ties by id, as the indexes order them)."""
    order = _ORDER[query.sort]
    if query.sort == "id":
        return heapq.nsmallest(wanted, memories, key=order)
    return heapq.nlargest(wanted, memories, key=order)
