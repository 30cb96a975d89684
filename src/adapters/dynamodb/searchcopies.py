"""A `q` search over a namespace's search copies (codec.py), in the id segments a record search reads (listing.py).

A search copy holds a memory's content deflated and what a listing returns of it but its access stamp, so a search
reads about 40 % of the bytes the records hold (a record keeps its content twice, as written and casefolded, and
three sort keys): DynamoDB evaluates the status, type and tag filters, and the core the `q` it cannot see in deflated
text, with the contract's own rule (RetrievalQuery.matches). The page comes from the copies themselves, so a search
still takes two sequential round trips: the id counter (with the namespace's STATS), then every segment at once.

That is a process's first search of a namespace: it keeps every copy it read (core.warm), and its next searches read
only the copies changed since (changes.py), filtering the kept ones as DynamoDB and the core filter a cold read.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from adapters.dynamodb import changes
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
from core.repository.digests import DigestChanges
from core.warm import WarmCopies

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

# A process's warm copies of search copies (core.warm), by their estimated bytes: 64 MiB hold about 37,000 memories
# of 300 characters. A kept copy's Python objects take _COPY_OVERHEAD bytes besides its text: with it, `copy_bytes`
# is what tracemalloc measured for 3,000 memories of 100, 300 and 1,000 characters, to 0.1 %.
WARM_SEARCH_BYTES: Final = 64 * 1024 * 1024
_COPY_OVERHEAD: Final = 1380
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
    """The search copies of one table's namespaces, read for a `q` search: from this process's warm copy of the
    namespace's (core.warm: read whole once, then only what changed, changes.py), or, with `warm_bytes` 0, from the
    table each time."""

    def __init__(self, client: DynamoDBClient, items: Items, warm_bytes: int = WARM_SEARCH_BYTES) -> None:
        self._items = items
        watch(client)
        self._warm = (
            WarmCopies(self._whole, self._changes, self._some, lambda memory: memory.id, copy_bytes, warm_bytes)
            if warm_bytes > 0
            else None
        )

    def find(self, namespace: str, query: RetrievalQuery, highest_id: Callable[[], int]) -> Matches:
        """The page of `query` (searchable) and the number of matches, from the copies of ids up to `highest_id()`
        (an eventually consistent counter: the last segment is open-ended, so no later memory is missed), which only
        a read of the table asks: a warm copy reads the counter with its changes."""
        if self._warm is not None:
            found = [memory for memory in self._warm.rows(namespace) if _matches(query, memory)]
            wanted = query.offset + query.limit
            return Matches(items=_leading(query, wanted, found)[query.offset :], total=len(found))
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
                segments(highest_id(), SEARCH_SEGMENT_IDS),
            )
        )
        page = _leading(query, wanted, [memory for _, found in parts for memory in found])[query.offset :]
        return Matches(items=page, total=sum(count for count, _ in parts))

    def _whole(self, namespace: str) -> tuple[list[Memory], object]:
        """Every copy of the namespace, after the mark of the changes they hold."""
        counter = changes.counter(self._items, namespace)
        mark = changes.mark(self._items, namespace, counter)
        request = {
            "KeyConditionExpression": "pk = :pk AND sk BETWEEN :first AND :last",
            "ExpressionAttributeValues": {":pk": memory_partition(namespace)},
        }
        bounds = segments(changes.highest_id(counter), SEARCH_SEGMENT_IDS)
        parts = READERS.map(carried(lambda bound: self._read(request, *bound)), bounds)
        return [memory for part in parts for memory in part], mark

    def _read(self, request: Item, first: int, last: int) -> list[Memory]:
        values = {
            **request["ExpressionAttributeValues"],
            ":first": search_copy_sort_key(first),
            ":last": search_copy_sort_key(last),
        }
        with raw_items():
            return [
                from_search_copy(item)
                for page in self._items.pages({**request, "ExpressionAttributeValues": values})
                for item in page
            ]

    def _changes(self, namespace: str, mark: object) -> DigestChanges | None:
        return changes.since(self._items, namespace, mark)

    def _some(self, namespace: str, memory_ids: Sequence[int]) -> list[Memory]:
        keys = [search_copy_key(namespace, memory_id) for memory_id in memory_ids]
        return [from_search_copy(item) for item in self._items.get_many(keys, consistent=True) if item]

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


def copy_bytes(memory: Memory) -> int:
    """A kept copy's estimated size: its text, and the Python objects holding it (as core.recall.warm.row_bytes)."""
    text = memory.content
    return _COPY_OVERHEAD + len(text) * (1 if text.isascii() else 4) + sum(len(tag) + 50 for tag in memory.tags)


def _matches(query: RetrievalQuery, memory: Memory) -> bool:
    """The filters a cold search's Query and its `q` test hold (queries.kind_conditions, RetrievalQuery.matches)."""
    if memory.status != query.status if query.status is not None else memory.status == "deleted":
        return False
    if query.memory_type is not None and memory.memory_type != query.memory_type:
        return False
    return query.matches(memory)


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
