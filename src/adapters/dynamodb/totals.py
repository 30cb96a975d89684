"""A partition's stored counts (a namespace's or a tag's STATS item), and the rows a Query must read to reach some
matches when a known share of the rows match."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final

from adapters.dynamodb.counters import totals_attribute
from core.contract import RetrievalQuery
from core.model import MEMORY_TYPES

# Query's Limit must fit 32 bits; DynamoDB ends a page at 1 MB read anyway, so a larger one would read no more.
QUERY_LIMIT_MAX: Final = 100_000
SLACK_ROWS: Final = 2
_STATUSES: Final = ("active", "invalid", "deleted")

Item = dict[str, Any]


class Totals:
    """A namespace's (or a tag's) stored counts per status and type (its STATS item)."""

    def __init__(self, counters: Mapping[str, int]) -> None:
        self._counters = counters

    def _sum(self, statuses: tuple[str, ...], memory_type: str | None) -> int:
        types = [memory_type] if memory_type else MEMORY_TYPES
        return sum(self._counters.get(totals_attribute(s, t), 0) for s in statuses for t in types)

    def matching(self, query: RetrievalQuery) -> int:
        """The memories the query's status and type filters match (without q or tag, the exact total)."""
        statuses = (query.status,) if query.status else ("active", "invalid")
        return self._sum(statuses, query.memory_type)

    def share_after(self, query: RetrievalQuery, found: int, scanned: int) -> float:
        """The share of an index's rows (every memory, deleted ones too) not yet read that the filters match, once
        `scanned` rows from its start held `found` matches."""
        unread = self._sum(_STATUSES, None) - scanned
        remaining = self.matching(query) - found
        return min(1.0, remaining / unread) if remaining > 0 and unread > 0 else 1.0


def numbers(item: Item | None) -> dict[str, int]:
    return {name: int(value["N"]) for name, value in (item or {}).items() if "N" in value}


def sized(matches: int, share: float, sigmas: float) -> int:
    """A Query Limit (rows read) expected to reach `matches` matches where `share` of the rows match: the mean of
    that number of rows (negative binomial) plus `sigmas` of its standard deviations, plus SLACK_ROWS."""
    matches, share = max(matches, 1), max(share, 1 / QUERY_LIMIT_MAX)
    rows = (matches + sigmas * math.sqrt(matches * (1 - share))) / share
    return min(math.ceil(rows) + SLACK_ROWS, QUERY_LIMIT_MAX)
