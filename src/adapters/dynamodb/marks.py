"""The namespace-wide marks a namespace's STATS item carries (`tag_copies`, `search_copies`, `access_items`: every
memory of the namespace has them), as this container has seen them. A mark once set stays (an erase removes the
namespace, and its next first create sets them all again), so after one read that finds it no read asks again."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from adapters.dynamodb.codec import ACCESS_ITEMS, SEARCH_COPIES, STATS_SK, TAG_COPIES, memory_partition

if TYPE_CHECKING:
    from adapters.dynamodb.stored import Items

NAMESPACE_MARKS: Final = (TAG_COPIES, SEARCH_COPIES, ACCESS_ITEMS)


def stats_key(namespace: str) -> dict[str, Any]:
    return {"pk": memory_partition(namespace), "sk": {"S": STATS_SK}}


class Marks:
    """The marks seen on the STATS items of one table's namespaces."""

    def __init__(self, items: Items) -> None:
        self._items = items
        self._seen: dict[str, set[str]] = {mark: set() for mark in NAMESPACE_MARKS}

    def learn(self, namespace: str, stats: Mapping[str, Any] | None) -> None:
        """Remember the marks on `stats`, the namespace's STATS item as just read (None: it has none)."""
        for mark, namespaces in self._seen.items():
            if mark in (stats or {}):
                namespaces.add(namespace)

    def has(self, namespace: str, mark: str) -> bool:
        """Whether the namespace was seen with `mark` (False: not yet seen, or not set)."""
        return namespace in self._seen[mark]

    def check(self, namespace: str, mark: str) -> bool:
        """Whether the namespace has `mark`, reading its STATS (eventually consistent) while it was not seen with it."""
        if not self.has(namespace, mark):
            self.learn(namespace, self._items.get_many([stats_key(namespace)])[0])
        return self.has(namespace, mark)
