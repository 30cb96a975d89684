"""The warm index's own rules, over the in-memory store: it filters as the store does, keeps copies within its budget
(least recently used out first), keeps no copy larger than the whole budget nor an empty one, reads a copy again
whole when the changes are too many to read one by one, and ranks a copy as it stands while it is brought up to date,
again only when something changed."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.memory import InMemoryMemoryRepository
from core import writes
from core.contract import RetrievalQuery
from core.digest import Digest
from core.errors import StorageUnavailableError
from core.model import Memory
from core.recall.scoring import Columns
from core.recall.warm import COLUMNS_KEPT, WarmIndex, row_bytes
from core.repository.digests import Candidate, DigestChanges, DigestSnapshot

NOW = "2026-04-06T14:13:00.000000Z"
TAGS = ("home", "work", "health")


def memory(memory_id: int, status: str = "active", memory_type: str = "fact", tags: tuple[str, ...] = ()) -> Memory:
    return Memory(
        id=memory_id,
        content=f"memory {memory_id}",
        tags=list(tags),
        created_at=NOW,
        updated_at=NOW,
        last_accessed_at=None,
        memory_type=memory_type,
        status=status,
        version=1,
    )


class CountingStore(InMemoryMemoryRepository):
    """The in-memory store, counting the warm index's reads."""

    def __init__(self) -> None:
        super().__init__()
        self.snapshots: list[str] = []
        self.rows_read: list[int] = []

    def digest_snapshot(self, namespace: str) -> DigestSnapshot:
        self.snapshots.append(namespace)
        return super().digest_snapshot(namespace)

    def digest_rows(self, namespace: str, memory_ids: Sequence[int]) -> list[Candidate]:
        self.rows_read += list(memory_ids)
        return super().digest_rows(namespace, memory_ids)


def filled(store: InMemoryMemoryRepository, namespace: str, count: int) -> None:
    for memory_id in range(1, count + 1):
        writes.add(store, namespace, memory(memory_id), digest=Digest())


rows = st.lists(
    st.tuples(
        st.sampled_from(["active", "invalid", "deleted"]),
        st.sampled_from(["fact", "preference", "event", "identity"]),
        st.lists(st.sampled_from(TAGS), unique=True, max_size=2),
    ),
    max_size=12,
)
filters = st.fixed_dictionaries(
    {},
    optional={
        "status": st.sampled_from(["active", "invalid", "deleted"]),
        "memory_type": st.sampled_from(["fact", "preference", "event", "identity"]),
        "tag": st.sampled_from(TAGS),
    },
)


@settings(max_examples=60, deadline=None)
@given(rows=rows, wanted=filters)
def test_a_warm_index_matches_exactly_the_memories_the_store_s_own_read_matches(
    rows: list[tuple[str, str, list[str]]], wanted: dict[str, str]
) -> None:
    store = InMemoryMemoryRepository()
    for memory_id, (status, memory_type, tags) in enumerate(rows, start=1):
        writes.add(store, "alice", memory(memory_id, status, memory_type, tuple(tags)), digest=Digest())
    query = RetrievalQuery.parse(wanted)

    warm = WarmIndex(store).candidates("alice", query)

    assert sorted(warm, key=lambda c: c.memory_id) == sorted(
        store.recall_candidates("alice", query), key=lambda c: c.memory_id
    )


def test_copies_beyond_the_budget_go_least_recently_used_first() -> None:
    store = CountingStore()
    for namespace in ("a", "b", "c"):
        filled(store, namespace, 10)
    one_copy = sum(row_bytes(row) for row in store.digest_snapshot("a").rows)
    store.snapshots.clear()
    index = WarmIndex(store, budget_bytes=2 * one_copy)

    for namespace in ("a", "b", "a", "c", "a", "b"):
        index.candidates(namespace, RetrievalQuery())

    # a, b: read; a: warm; c: read, b out (a was used after it); a: warm; b: read again, c out.
    assert store.snapshots == ["a", "b", "c", "b"]
    assert index.kept_bytes == 2 * one_copy


def test_a_namespace_larger_than_the_budget_and_an_empty_one_are_read_each_time_and_never_kept() -> None:
    store = CountingStore()
    filled(store, "large", 10)
    index = WarmIndex(store, budget_bytes=100)

    for _ in range(2):
        assert len(index.candidates("large", RetrievalQuery())) == 10
        assert index.candidates("empty", RetrievalQuery()) == []

    assert store.snapshots == ["large", "empty", "large", "empty"]
    assert index.kept_bytes == 0


def test_a_few_changes_are_read_by_id_and_many_by_a_whole_read() -> None:
    store = CountingStore()
    filled(store, "alice", 200)
    index = WarmIndex(store)
    index.candidates("alice", RetrievalQuery())

    writes.add(store, "alice", memory(201), digest=Digest())
    index.candidates("alice", RetrievalQuery())
    assert (store.snapshots, store.rows_read) == (["alice"], [201])

    for memory_id in range(202, 300):
        writes.add(store, "alice", memory(memory_id), digest=Digest())
    assert len(index.candidates("alice", RetrievalQuery())) == 299
    assert store.snapshots == ["alice", "alice"]


class SlowChangesStore(InMemoryMemoryRepository):
    """The in-memory store whose reading of the changes waits, once `hold` is set, until `ranking` is (then a little
    longer): it tells whether the ranking ran while the copy was brought up to date."""

    def __init__(self) -> None:
        super().__init__()
        self.hold = False
        self.ranking = threading.Event()
        self.changes_read = threading.Event()

    def digest_changes(self, namespace: str, mark: object) -> DigestChanges | None:
        if self.hold and not self.ranking.wait(timeout=30):
            raise AssertionError("the ranking did not run while the changes were read")
        if self.hold:
            time.sleep(0.2)  # the reading ends well after the ranking
        changes = super().digest_changes(namespace, mark)
        self.changes_read.set()
        return changes


def ids(candidates: Sequence[Candidate]) -> list[int]:
    return sorted(candidate.memory_id for candidate in candidates)


def test_a_ranking_of_the_copy_as_it_stands_while_nothing_changed_is_kept_and_made_once() -> None:
    store = SlowChangesStore()
    filled(store, "alice", 3)
    index = WarmIndex(store)
    index.candidates("alice", RetrievalQuery())
    store.hold = True
    given: list[tuple[list[int], bool]] = []

    def rank(columns: Columns) -> list[int]:
        given.append((ids(columns.candidates), store.changes_read.is_set()))
        store.ranking.set()
        return ids(columns.candidates)

    assert index.ranked("alice", RetrievalQuery(), rank) == [1, 2, 3]
    # Once, before the changes were read (the reading waited for it)
    assert given == [([1, 2, 3], False)]


def test_a_ranking_of_the_copy_as_it_stands_is_made_again_over_the_changes_read_meanwhile() -> None:
    store = SlowChangesStore()
    filled(store, "alice", 3)
    index = WarmIndex(store)
    index.candidates("alice", RetrievalQuery())
    writes.add(store, "alice", memory(4), digest=Digest())
    writes.delete(store, "alice", 2, NOW)
    store.hold = True
    given: list[list[int]] = []

    def rank(columns: Columns) -> list[int]:
        given.append(ids(columns.candidates))
        store.ranking.set()
        return ids(columns.candidates)

    assert index.ranked("alice", RetrievalQuery(), rank) == [1, 3, 4]
    assert given == [[1, 2, 3], [1, 3, 4]]
    assert ids(store.recall_candidates("alice", RetrievalQuery())) == [1, 3, 4]


def test_a_namespace_found_changed_at_its_last_use_is_brought_up_to_date_before_it_is_ranked_once() -> None:
    store = SlowChangesStore()
    filled(store, "alice", 3)
    index = WarmIndex(store)
    index.candidates("alice", RetrievalQuery())
    writes.add(store, "alice", memory(4), digest=Digest())
    index.candidates("alice", RetrievalQuery())  # found changed: the namespace is being written to
    writes.add(store, "alice", memory(5), digest=Digest())
    store.changes_read.clear()
    given: list[tuple[list[int], bool]] = []

    def rank(columns: Columns) -> list[int]:
        given.append((ids(columns.candidates), store.changes_read.is_set()))
        return ids(columns.candidates)

    assert index.ranked("alice", RetrievalQuery(), rank) == [1, 2, 3, 4, 5]
    assert given == [([1, 2, 3, 4, 5], True)]


def test_a_namespace_with_no_copy_is_read_and_ranked_once() -> None:
    store = CountingStore()
    filled(store, "alice", 3)
    given: list[list[int]] = []

    def rank(columns: Columns) -> int:
        given.append(ids(columns.candidates))
        return len(columns.candidates)

    assert WarmIndex(store).ranked("alice", RetrievalQuery(), rank) == 3
    assert (given, store.snapshots) == ([[1, 2, 3]], ["alice"])


def test_a_ranking_that_fails_waits_for_the_reading_of_the_changes_made_meanwhile() -> None:
    store = SlowChangesStore()
    filled(store, "alice", 3)
    index = WarmIndex(store)
    index.candidates("alice", RetrievalQuery())
    store.hold = True

    def rank(columns: Columns) -> int:
        store.ranking.set()
        raise ValueError("a ranking that fails")

    with pytest.raises(ValueError, match="a ranking that fails"):
        index.ranked("alice", RetrievalQuery(), rank)
    # No read of the recall outlives it
    assert store.changes_read.is_set()


def test_a_failed_reading_of_the_changes_fails_the_ranking_made_meanwhile() -> None:
    class FailingStore(InMemoryMemoryRepository):
        failing = False

        def digest_changes(self, namespace: str, mark: object) -> DigestChanges | None:
            if self.failing:
                raise StorageUnavailableError("the change index did not answer")
            return super().digest_changes(namespace, mark)

    store = FailingStore()
    filled(store, "alice", 3)
    index = WarmIndex(store)
    index.candidates("alice", RetrievalQuery())
    store.failing = True

    with pytest.raises(StorageUnavailableError):
        index.ranked("alice", RetrievalQuery(), lambda columns: len(columns.candidates))


def test_the_columns_of_a_copy_are_made_once_per_filters_and_again_once_it_changed() -> None:
    store = InMemoryMemoryRepository()
    filled(store, "alice", 3)
    filled(store, "bob", 2)
    index = WarmIndex(store)

    def columns(namespace: str, filters: dict[str, str] | None = None) -> Columns:
        return index.ranked(namespace, RetrievalQuery.parse(filters or {}), lambda given: given)

    first = columns("alice")
    assert columns("alice") is first
    assert columns("alice", {"status": "deleted"}) is not first
    writes.add(store, "alice", memory(4), digest=Digest())
    changed = columns("alice")
    assert changed is not first
    assert ids(changed.candidates) == [1, 2, 3, 4]
    # The last COLUMNS_KEPT namespaces and filters: alice's went first when more were ranked after it
    for n in range(COLUMNS_KEPT):
        columns("bob", {"tag": f"tag-{n}"})
    assert columns("alice") is not changed
    assert ids(columns("alice").candidates) == [1, 2, 3, 4]
