"""The warm index's own rules, over the in-memory store: it filters as the store does, keeps copies within its budget
(least recently used out first), keeps no copy larger than the whole budget nor an empty one, and reads a copy again
whole when the changes are too many to read one by one."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.memory import InMemoryMemoryRepository
from core import writes
from core.contract import RetrievalQuery
from core.digest import Digest
from core.model import Memory
from core.recall.warm import WarmIndex, row_bytes
from core.repository.digests import Candidate, DigestSnapshot

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
