"""Total order and paging on Amazon DynamoDB Local, with the clock frozen so every timestamp ties.

With all timestamps equal, only the id tie-break (built into the index keys) decides the order; a store that
left ties to chance would repeat or skip rows between pages.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from core.contract import Page, RetrievalQuery
from core.memories import MemoryService
from core.model import Memory, NewMemory
from tests.conftest import FakeClock

NS = "default"
COUNT = 250
PAGE = 7
# Smaller than COUNT: filters cut every walk short anyway, and the suite stays fast.
FILTERED_COUNT = 120


def create_many(service: MemoryService, count: int, body: Any = None) -> list[Memory]:
    """Create `count` memories (in parallel, as setup only); `body(i)` gives the i-th body, i from 0."""

    def create(index: int) -> Memory:
        data = body(index) if body else {"content": f"memory {index}"}
        return service.create(NS, NewMemory.parse(data))

    with ThreadPoolExecutor(max_workers=8) as pool:
        return list(pool.map(create, range(count)))


def search(service: MemoryService, **params: Any) -> Page:
    return service.search(NS, RetrievalQuery.parse(params))


def walk(service: MemoryService, total: int, **params: Any) -> list[int]:
    """Page through every match with limit PAGE, checking each envelope, and return the ids in page order."""
    seen: list[int] = []
    for offset in range(0, total, PAGE):
        page = search(service, limit=PAGE, offset=offset, **params)
        expected_size = min(PAGE, total - offset)
        assert (page.total, page.limit, page.offset) == (total, PAGE, offset)
        assert len(page.items) == expected_size, f"page at offset {offset}"
        assert page.has_more == (offset + expected_size < total), f"page at offset {offset}"
        seen.extend(m.id for m in page.items)
    beyond = search(service, limit=PAGE, offset=total + 2, **params)
    assert (beyond.items, beyond.total, beyond.has_more) == ([], total, False)
    return seen


@pytest.fixture
def frozen(ddb_local_service: MemoryService, clock: FakeClock) -> MemoryService:
    """COUNT active facts whose created_at and updated_at are all the same instant, never accessed."""
    clock.freeze()
    created = create_many(ddb_local_service, COUNT)
    assert len({(m.created_at, m.updated_at) for m in created}) == 1
    return ddb_local_service


def test_paging_by_id_created_at_and_updated_at_never_repeats_nor_skips(frozen: MemoryService) -> None:
    # Each page stamps its rows, which changes last_accessed_at only: these three orders, and so the data they
    # page over, stay the same for the whole walk. One data set serves all three to keep the suite fast.
    expected = {
        "id": list(range(1, COUNT + 1)),
        "created_at": list(range(COUNT, 0, -1)),
        "updated_at": list(range(COUNT, 0, -1)),
    }
    for sort, ids in expected.items():
        assert walk(frozen, COUNT, sort=sort) == ids, f"sort={sort}"


def test_sorting_by_last_accessed_at_puts_tied_stamps_by_id_descending_before_never_accessed(
    ddb_local_service: MemoryService, clock: FakeClock
) -> None:
    clock.freeze()
    create_many(ddb_local_service, 100)
    accessed = list(range(3, 101, 3))
    for memory_id in accessed:
        ddb_local_service.get(NS, memory_id)

    page = search(ddb_local_service, sort="last_accessed_at", limit=100)

    never = [i for i in range(100, 0, -1) if i not in accessed]
    assert [m.id for m in page.items] == accessed[::-1] + never
    # The page itself stamped every returned row with the one frozen instant.
    assert len({m.last_accessed_at for m in page.items}) == 1


def test_paging_by_last_accessed_at_never_repeats_nor_skips_while_the_stamps_stay_the_same(
    frozen: MemoryService,
) -> None:
    # The contract promises pages that never overlap or skip *while the data stays the same*. Paging by
    # last_accessed_at is the one walk that changes its own sort key: each page stamps its rows, and a row
    # stamped newer than the others jumps to the front, shifting every later offset. So the promise is tested
    # where the walk does not change the data: every row is stamped first with the frozen instant, and a
    # stamp only writes when it is newer (`last_accessed_at < :at`), so re-stamping with that same instant
    # leaves every row, and the order, as it was.
    prestamped = [
        m for offset in range(0, COUNT, 100) for m in search(frozen, sort="id", limit=100, offset=offset).items
    ]
    assert len(prestamped) == COUNT
    assert len({m.last_accessed_at for m in prestamped}) == 1

    assert walk(frozen, COUNT, sort="last_accessed_at") == list(range(COUNT, 0, -1))


def test_paging_with_filters_counts_only_matches_and_never_repeats_nor_skips(
    ddb_local_service: MemoryService, clock: FakeClock
) -> None:
    clock.freeze()
    types = ("fact", "preference", "identity", "event")

    def body(index: int) -> dict[str, Any]:
        return {
            "content": f"memory {index}",
            "memory_type": types[index % 4],
            "status": "invalid" if index % 3 == 0 else "active",
        }

    created = create_many(ddb_local_service, FILTERED_COUNT, body)
    for memory in created[::5]:
        ddb_local_service.delete(NS, memory.id)
    deleted = {m.id for m in created[::5]}

    def matching(status: str | None, memory_type: str | None) -> list[int]:
        current = {m.id: "deleted" if m.id in deleted else m.status for m in created}
        return [
            m.id
            for m in created
            if (current[m.id] == status if status else current[m.id] != "deleted")
            and (memory_type is None or m.memory_type == memory_type)
        ]

    for status, memory_type in [("invalid", None), ("active", "preference"), (None, "event"), ("deleted", None)]:
        filters = {k: v for k, v in {"status": status, "memory_type": memory_type}.items() if v is not None}
        expected = sorted(matching(status, memory_type))
        assert walk(ddb_local_service, len(expected), sort="id", **filters) == expected
        assert walk(ddb_local_service, len(expected), sort="created_at", **filters) == expected[::-1]
