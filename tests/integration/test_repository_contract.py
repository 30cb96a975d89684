"""The repository contract, run on every store (in memory, Amazon DynamoDB Local) so none can drift.

Only what real DynamoDB promises is asserted: orders come from the table's composite keys, never from an
engine's incidental tie order.
"""

from __future__ import annotations

from typing import Any

import pytest

from core import writes
from core.contract import RetrievalQuery
from core.errors import MemoryNotFoundError, VersionMismatchError, WriteConflictError
from core.memories import MemoryService
from core.model import MEMORY_TYPES, Memory, MemoryChanges, NewMemory
from tests.conftest import Engine, FakeClock, StoredMemories

NS = "alice"
OTHER_NS = "bob"
NAMESPACES_PROBED = (NS, OTHER_NS, "alic", "alice2", "")
SORTS = ("id", "created_at", "updated_at", "last_accessed_at")


def at(second: int) -> str:
    """A contract timestamp `second` seconds into a fixed minute; later seconds compare greater as strings."""
    return f"2026-04-06T14:12:{second:02d}.000000Z"


def memory(memory_id: int, **fields: Any) -> Memory:
    defaults: dict[str, Any] = {
        "id": memory_id,
        "content": f"memory {memory_id}",
        "tags": [],
        "created_at": at(0),
        "updated_at": at(0),
        "last_accessed_at": None,
        "memory_type": "fact",
        "status": "active",
        "version": 1,
    }
    return Memory(**{**defaults, **fields})


def ids(memories: Any) -> list[int]:
    return [m.id for m in memories]


def scan(repository: StoredMemories, namespace: str, sort: str, status: Any, memory_type: Any) -> list[Memory]:
    """Every match (up to 100) of the exact filters, in `sort`'s order, checking the total against the rows."""
    fields = {"sort": sort, "status": status, "memory_type": memory_type, "limit": 100}
    found = repository.find(namespace, RetrievalQuery.parse({k: v for k, v in fields.items() if v is not None}))
    assert found.total == len(found.items)
    return found.items


def unstamped(memories: list[Memory]) -> list[Memory]:
    """Rows as a listing reads them: it stamps every row it returns, so it never reads `last_accessed_at`."""
    return [m.model_copy(update={"last_accessed_at": None}) for m in memories]


def raw_item(engine: Engine, table: str, namespace: str, memory_id: int) -> object | None:
    """What the store holds under the memory's key, read past the repository where the engine allows it."""
    return engine.stored(table, namespace, memory_id)


@pytest.fixture
def table(engine: Engine) -> str:
    return engine.new_table()


@pytest.fixture
def raw_repository(engine: Engine, table: str) -> StoredMemories:
    """A repository over a table whose name the test knows, so it can look at stored items directly."""
    return engine.memories(table)


# --- ids ---------------------------------------------------------------------------------------------------


def test_next_id_counts_each_namespace_independently(repository: StoredMemories) -> None:
    drawn = [(ns, repository.next_id(ns)) for ns in (NS, NS, OTHER_NS, NS, OTHER_NS)]

    assert [mid for ns, mid in drawn if ns == NS] == [1, 2, 3]
    assert [mid for ns, mid in drawn if ns == OTHER_NS] == [1, 2]


def test_next_id_never_repeats_within_a_namespace(repository: StoredMemories) -> None:
    drawn = [repository.next_id(NS) for _ in range(20)]

    assert len(set(drawn)) == 20
    assert min(drawn) >= 1


def test_created_memories_get_distinct_ids_per_namespace(service: MemoryService) -> None:
    alice = [service.create(NS, NewMemory.parse({"content": f"a{i}"})).id for i in range(3)]
    bob = [service.create(OTHER_NS, NewMemory.parse({"content": f"b{i}"})).id for i in range(2)]

    assert alice == [1, 2, 3]
    assert bob == [1, 2]


# --- add and get -------------------------------------------------------------------------------------------


def test_add_never_overwrites_an_existing_id(repository: StoredMemories) -> None:
    writes.add(repository, NS, memory(1, content="original"))

    with pytest.raises(WriteConflictError):
        writes.add(repository, NS, memory(1, content="impostor", version=7))

    stored = repository.get(NS, 1)
    assert stored is not None
    assert (stored.content, stored.version) == ("original", 1)


def test_add_then_get_returns_every_field_unchanged(repository: StoredMemories) -> None:
    original = memory(
        5,
        content="likes tea",
        tags=["preference", "drink:tea"],
        created_at=at(1),
        updated_at=at(2),
        last_accessed_at=at(3),
        memory_type="preference",
        status="invalid",
        version=4,
    )
    writes.add(repository, NS, original)

    assert repository.get(NS, 5) == original


def test_get_returns_none_for_a_missing_id(repository: StoredMemories) -> None:
    assert repository.get(NS, 42) is None


def test_get_returns_deleted_memories_without_stamping_them(repository: StoredMemories) -> None:
    writes.add(repository, NS, memory(1))
    writes.delete(repository, NS, 1, at(9))

    stored = repository.get(NS, 1)

    assert stored is not None
    assert stored.status == "deleted"
    assert stored.last_accessed_at is None


# --- stamping ----------------------------------------------------------------------------------------------


def test_read_sets_last_accessed_at_and_leaves_version_and_updated_at(
    repository: StoredMemories,
) -> None:
    writes.add(repository, NS, memory(1, updated_at=at(1), version=3))

    stamped = repository.read(NS, 1, at(5))

    assert (stamped.last_accessed_at, stamped.version, stamped.updated_at) == (at(5), 3, at(1))
    assert repository.get(NS, 1) == stamped


def test_read_of_a_missing_id_is_not_found_and_never_creates_it(
    engine: Engine, table: str, raw_repository: StoredMemories
) -> None:
    with pytest.raises(MemoryNotFoundError):
        raw_repository.read(NS, 7, at(5))

    assert raw_item(engine, table, NS, 7) is None
    assert raw_repository.get(NS, 7) is None


def test_read_of_a_deleted_memory_is_not_found_and_does_not_stamp_it(
    repository: StoredMemories,
) -> None:
    writes.add(repository, NS, memory(1))
    writes.delete(repository, NS, 1, at(9))

    with pytest.raises(MemoryNotFoundError):
        repository.read(NS, 1, at(5))

    stored = repository.get(NS, 1)
    assert stored is not None
    assert (stored.status, stored.last_accessed_at) == ("deleted", None)


def test_read_never_moves_last_accessed_at_backwards(repository: StoredMemories) -> None:
    writes.add(repository, NS, memory(1, updated_at=at(1)))
    later, earlier = at(20), at(10)

    first = repository.read(NS, 1, later)
    second = repository.read(NS, 1, earlier)

    assert first.last_accessed_at == second.last_accessed_at == later
    assert (second.version, second.updated_at) == (1, at(1))
    stored = repository.get(NS, 1)
    assert stored is not None
    assert stored.last_accessed_at == later


def test_read_with_the_same_timestamp_again_returns_the_memory(
    repository: StoredMemories,
) -> None:
    writes.add(repository, NS, memory(1))
    repository.read(NS, 1, at(10))

    again = repository.read(NS, 1, at(10))

    assert again.last_accessed_at == at(10)


def test_stamp_never_moves_last_accessed_at_backwards_nor_changes_version_or_updated_at(
    repository: StoredMemories,
) -> None:
    writes.add(repository, NS, memory(1, updated_at=at(1), version=2))
    writes.add(repository, NS, memory(2, updated_at=at(1), version=5))

    repository.stamp(NS, [1, 2], at(20))
    repository.stamp(NS, [1, 2], at(10))

    for memory_id, version in ((1, 2), (2, 5)):
        stored = repository.get(NS, memory_id)
        assert stored is not None
        assert (stored.last_accessed_at, stored.version, stored.updated_at) == (at(20), version, at(1))


def test_stamp_marks_listed_deleted_memories_without_reviving_them_and_never_creates_missing_ones(
    engine: Engine, table: str, raw_repository: StoredMemories
) -> None:
    writes.add(raw_repository, NS, memory(1))
    writes.add(raw_repository, NS, memory(2))
    writes.delete(raw_repository, NS, 2, at(9))

    raw_repository.stamp(NS, [1, 2, 3], at(9))

    visible, deleted = raw_repository.get(NS, 1), raw_repository.get(NS, 2)
    assert visible is not None
    assert deleted is not None
    assert visible.last_accessed_at == at(9)
    # A listing with status=deleted returns deleted memories, and every returned record is stamped (CONTRACT.md).
    assert (deleted.status, deleted.last_accessed_at, deleted.version) == ("deleted", at(9), 1)
    assert raw_item(engine, table, NS, 3) is None


# --- apply and delete -------------------------------------------------------------------------------------


def changes(**fields: Any) -> MemoryChanges:
    return MemoryChanges.parse(fields)


def totals(repository: StoredMemories, namespace: str = NS) -> dict[tuple[str, str], int]:
    """The namespace's totals per (status, type), as a listing without `q` or `tag` reads them."""
    counted: dict[tuple[str, str], int] = {}
    for status in ("active", "invalid", "deleted"):
        for memory_type in MEMORY_TYPES:
            query = RetrievalQuery.parse({"status": status, "memory_type": memory_type, "limit": 1})
            if total := repository.find(namespace, query).total:
                counted[status, memory_type] = total
    return counted


@pytest.mark.parametrize("expected", [None, frozenset({1}), frozenset({1, 4})])
def test_apply_writes_every_given_field_a_new_version_and_updated_at_and_leaves_the_stamp(
    repository: StoredMemories, expected: frozenset[int] | None
) -> None:
    writes.add(repository, NS, memory(1, last_accessed_at=at(3)))
    patch = changes(content="new", tags=["x"], memory_type="event", status="invalid")

    stored = writes.apply(repository, NS, 1, patch, expected, at(8))

    assert (stored.content, stored.tags, stored.memory_type, stored.status) == ("new", ["x"], "event", "invalid")
    assert (stored.version, stored.updated_at, stored.created_at) == (2, at(8), at(0))
    # Only the editable fields, updated_at and version are written: the stamp stays.
    assert stored.last_accessed_at == at(3)
    assert repository.get(NS, 1) == stored
    assert totals(repository) == {("invalid", "event"): 1}


@pytest.mark.parametrize(
    "patch", [{"content": "new"}, {"tags": ["x"]}, {"content": "new", "tags": []}, {"status": "invalid"}, {}]
)
@pytest.mark.parametrize("expected", [frozenset({2}), frozenset({2, 4}), frozenset()])
def test_apply_refuses_a_version_not_expected_even_when_nothing_would_change(
    repository: StoredMemories, patch: dict[str, Any], expected: frozenset[int]
) -> None:
    original = memory(1, version=3)
    writes.add(repository, NS, original)

    with pytest.raises(VersionMismatchError) as raised:
        writes.apply(repository, NS, 1, changes(**patch), expected, at(8))

    assert (raised.value.memory_id, raised.value.current_version) == (1, 3)
    assert repository.get(NS, 1) == original


@pytest.mark.parametrize(
    "patch",
    [
        {"content": "memory 1"},
        {"tags": []},
        {"status": "active", "memory_type": "fact"},
        {"content": "memory 1", "tags": []},
        {},
    ],
)
@pytest.mark.parametrize("expected", [None, frozenset({3}), frozenset({3, 7})])
def test_apply_that_changes_no_field_returns_the_stored_memory_unchanged(
    repository: StoredMemories, patch: dict[str, Any], expected: frozenset[int] | None
) -> None:
    original = memory(1, updated_at=at(2), last_accessed_at=at(4), version=3)
    writes.add(repository, NS, original)

    assert writes.apply(repository, NS, 1, changes(**patch), expected, at(8)) == original
    assert repository.get(NS, 1) == original


@pytest.mark.parametrize("patch", [{"content": "revived"}, {"status": "active"}, {}])
@pytest.mark.parametrize("expected", [None, frozenset({1})])
def test_apply_refuses_missing_and_deleted_memories_and_creates_nothing(
    engine: Engine,
    table: str,
    raw_repository: StoredMemories,
    patch: dict[str, Any],
    expected: frozenset[int] | None,
) -> None:
    writes.add(raw_repository, NS, memory(1))
    writes.delete(raw_repository, NS, 1, at(9))

    for memory_id in (1, 4):
        with pytest.raises(MemoryNotFoundError):
            writes.apply(raw_repository, NS, memory_id, changes(**patch), expected, at(8))

    stored = raw_repository.get(NS, 1)
    assert stored is not None
    assert (stored.status, stored.content, stored.version) == ("deleted", "memory 1", 1)
    assert raw_item(engine, table, NS, 4) is None


def test_apply_moves_the_memory_between_totals_only_when_its_status_or_type_changes(
    repository: StoredMemories,
) -> None:
    for memory_id in (1, 2, 3):
        writes.add(repository, NS, memory(memory_id))

    writes.apply(repository, NS, 1, changes(status="invalid"), None, at(1))
    writes.apply(repository, NS, 2, changes(memory_type="event", status="active"), None, at(2))
    writes.apply(repository, NS, 3, changes(content="edited", tags=["x"]), None, at(3))
    writes.apply(repository, NS, 3, changes(status="active"), None, at(4))

    assert totals(repository) == {("invalid", "fact"): 1, ("active", "event"): 1, ("active", "fact"): 1}
    assert [m.version for m in scan(repository, NS, "id", None, None)] == [2, 2, 2]


def test_delete_marks_deleted_leaves_version_and_updated_at_and_moves_the_totals(
    repository: StoredMemories,
) -> None:
    writes.add(repository, NS, memory(1, updated_at=at(4), version=6, memory_type="event"))

    writes.delete(repository, NS, 1, at(9))

    stored = repository.get(NS, 1)
    assert stored is not None
    assert (stored.status, stored.version, stored.updated_at) == ("deleted", 6, at(4))
    assert totals(repository) == {("deleted", "event"): 1}


def test_delete_refuses_missing_and_already_deleted_memories(
    engine: Engine, table: str, raw_repository: StoredMemories
) -> None:
    writes.add(raw_repository, NS, memory(1))
    writes.delete(raw_repository, NS, 1, at(9))

    with pytest.raises(MemoryNotFoundError):
        writes.delete(raw_repository, NS, 1, at(9))
    with pytest.raises(MemoryNotFoundError):
        writes.delete(raw_repository, NS, 2, at(9))
    assert raw_item(engine, table, NS, 2) is None


def test_service_update_refuses_a_deleted_memory(service: MemoryService) -> None:
    created = service.create(NS, NewMemory.parse({"content": "soon gone"}))
    service.delete(NS, created.id)

    with pytest.raises(MemoryNotFoundError):
        service.update(NS, created.id, MemoryChanges.parse({"content": "back"}))


# --- scan order --------------------------------------------------------------------------------------------

# Timestamps chosen so that every sort gives a different order, with ties in each and some never accessed.
SCAN_FIXTURE = [
    memory(1, created_at=at(3), updated_at=at(4), last_accessed_at=None),
    memory(2, created_at=at(1), updated_at=at(5), last_accessed_at=at(7)),
    memory(3, created_at=at(3), updated_at=at(4), last_accessed_at=None),
    memory(4, created_at=at(2), updated_at=at(4), last_accessed_at=at(7)),
    memory(5, created_at=at(1), updated_at=at(6), last_accessed_at=at(8)),
    memory(6, created_at=at(2), updated_at=at(5), last_accessed_at=None),
]


@pytest.fixture
def scan_fixture(repository: StoredMemories) -> StoredMemories:
    # Added out of id order, so no order can come from insertion.
    for position in (3, 0, 5, 2, 4, 1):
        writes.add(repository, NS, SCAN_FIXTURE[position])
    return repository


@pytest.mark.parametrize(
    ("sort", "expected"),
    [
        ("id", [1, 2, 3, 4, 5, 6]),
        ("created_at", [3, 1, 6, 4, 5, 2]),
        ("updated_at", [5, 6, 2, 4, 3, 1]),
        ("last_accessed_at", [5, 4, 2, 6, 3, 1]),
    ],
)
def test_scan_orders_id_ascending_and_timestamps_descending_with_ties_by_id_descending(
    scan_fixture: StoredMemories, sort: Any, expected: list[int]
) -> None:
    assert ids(scan(scan_fixture, NS, sort, None, None)) == expected


def test_scan_puts_never_accessed_memories_after_accessed_ones_by_id_descending(
    repository: StoredMemories,
) -> None:
    for memory_id in range(1, 7):
        writes.add(repository, NS, memory(memory_id))
    repository.stamp(NS, [2], at(1))
    repository.read(NS, 5, at(1))

    assert ids(scan(repository, NS, "last_accessed_at", None, None)) == [5, 2, 6, 4, 3, 1]


def test_scan_follows_stamps_and_updates_into_the_timestamp_orders(scan_fixture: StoredMemories) -> None:
    scan_fixture.stamp(NS, [1], at(9))
    writes.apply(scan_fixture, NS, 3, changes(content="edited"), frozenset({1}), at(9))

    assert ids(scan(scan_fixture, NS, "last_accessed_at", None, None)) == [1, 5, 4, 2, 6, 3]
    assert ids(scan(scan_fixture, NS, "updated_at", None, None)) == [3, 5, 6, 2, 4, 1]
    # A stamp and an update leave created_at where it was.
    assert ids(scan(scan_fixture, NS, "created_at", None, None)) == [3, 1, 6, 4, 5, 2]


@pytest.mark.parametrize("sort", SORTS)
def test_scan_returns_whole_records_and_the_stamps_only_where_it_says_it_read_them(
    scan_fixture: StoredMemories, sort: Any
) -> None:
    found = scan_fixture.find(NS, RetrievalQuery.parse({"sort": sort, "limit": 100}))

    # Ordered by last use, the rows carry their stamps; in any other order the store need not read them.
    assert found.stored_stamps is (sort == "last_accessed_at")
    expected = SCAN_FIXTURE if found.stored_stamps else unstamped(SCAN_FIXTURE)
    assert sorted(found.items, key=lambda m: m.id) == expected


# --- scan filters ------------------------------------------------------------------------------------------


@pytest.fixture
def mixed(repository: StoredMemories) -> StoredMemories:
    rows = [
        (1, "active", "fact"),
        (2, "invalid", "fact"),
        (3, "active", "preference"),
        (4, "active", "event"),
        (5, "invalid", "preference"),
        (6, "active", "preference"),
        (7, "active", "fact"),
    ]
    for memory_id, status, memory_type in rows:
        writes.add(repository, NS, memory(memory_id, memory_type=memory_type, status=status))
    writes.delete(repository, NS, 6, at(9))
    writes.delete(repository, NS, 7, at(9))
    return repository


@pytest.mark.parametrize("sort", SORTS)
def test_scan_without_status_leaves_deleted_memories_out(mixed: StoredMemories, sort: Any) -> None:
    assert sorted(ids(scan(mixed, NS, sort, None, None))) == [1, 2, 3, 4, 5]


@pytest.mark.parametrize(
    ("status", "memory_type", "expected"),
    [
        ("active", None, [1, 3, 4]),
        ("invalid", None, [2, 5]),
        ("deleted", None, [6, 7]),
        (None, "preference", [3, 5]),
        (None, "fact", [1, 2]),
        (None, "identity", []),
        ("active", "preference", [3]),
        ("deleted", "fact", [7]),
        ("invalid", "event", []),
    ],
)
def test_scan_filters_status_and_memory_type_exactly(
    mixed: StoredMemories, status: Any, memory_type: Any, expected: list[int]
) -> None:
    assert ids(scan(mixed, NS, "id", status, memory_type)) == expected
    assert ids(scan(mixed, NS, "created_at", status, memory_type)) == expected[::-1]


# --- namespaces --------------------------------------------------------------------------------------------


@pytest.fixture
def two_namespaces(engine: Engine, table: str, raw_repository: StoredMemories) -> StoredMemories:
    writes.add(raw_repository, NS, memory(1, content="alice one"))
    writes.add(raw_repository, NS, memory(2, content="alice two"))
    writes.add(raw_repository, OTHER_NS, memory(1, content="bob one"))
    return raw_repository


def test_namespaces_keep_their_own_memories_under_the_same_id(two_namespaces: StoredMemories) -> None:
    alice, bob = two_namespaces.get(NS, 1), two_namespaces.get(OTHER_NS, 1)

    assert alice is not None
    assert bob is not None
    assert (alice.content, bob.content) == ("alice one", "bob one")
    assert two_namespaces.get(OTHER_NS, 2) is None


@pytest.mark.parametrize(
    ("status", "alice", "bob"),
    [(None, ["alice one"], ["bob one"]), ("active", ["alice one"], ["bob one"]), ("deleted", ["alice two"], [])],
)
def test_scan_never_returns_another_namespaces_memories(
    two_namespaces: StoredMemories, status: Any, alice: list[str], bob: list[str]
) -> None:
    writes.delete(two_namespaces, NS, 2, at(9))

    for sort in SORTS:
        # Prefixes and extensions of a namespace are other namespaces, with nothing in them.
        seen = {ns: [m.content for m in scan(two_namespaces, ns, sort, status, None)] for ns in NAMESPACES_PROBED}
        assert seen == {NS: alice, OTHER_NS: bob, "alic": [], "alice2": [], "": []}, sort


def test_stamping_in_one_namespace_never_touches_or_creates_another_namespaces_memory(
    engine: Engine, table: str, two_namespaces: StoredMemories
) -> None:
    with pytest.raises(MemoryNotFoundError):
        two_namespaces.read(OTHER_NS, 2, at(9))
    two_namespaces.stamp(OTHER_NS, [1, 2], at(9))

    alice_one, alice_two = two_namespaces.get(NS, 1), two_namespaces.get(NS, 2)
    assert alice_one is not None
    assert alice_two is not None
    assert alice_one.last_accessed_at is None
    assert alice_two.last_accessed_at is None
    assert raw_item(engine, table, OTHER_NS, 2) is None


def test_update_in_one_namespace_never_touches_or_creates_another_namespaces_memory(
    engine: Engine, table: str, two_namespaces: StoredMemories
) -> None:
    for patch in ({"content": "hijack"}, {"status": "invalid"}):
        with pytest.raises(MemoryNotFoundError):
            writes.apply(two_namespaces, OTHER_NS, 2, changes(**patch), None, at(9))

    alice_two = two_namespaces.get(NS, 2)
    assert alice_two is not None
    assert (alice_two.content, alice_two.version) == ("alice two", 1)
    assert raw_item(engine, table, OTHER_NS, 2) is None


def test_delete_in_one_namespace_never_touches_another_namespaces_memory(
    two_namespaces: StoredMemories,
) -> None:
    with pytest.raises(MemoryNotFoundError):
        writes.delete(two_namespaces, OTHER_NS, 2, at(9))
    writes.delete(two_namespaces, OTHER_NS, 1, at(9))

    alice_one, alice_two = two_namespaces.get(NS, 1), two_namespaces.get(NS, 2)
    assert alice_one is not None
    assert alice_two is not None
    assert (alice_one.status, alice_two.status) == ("active", "active")


def test_service_calls_in_one_namespace_never_reach_another(service: MemoryService) -> None:
    mine = service.create(NS, NewMemory.parse({"content": "mine"}))
    service.create(OTHER_NS, NewMemory.parse({"content": "theirs one"}))
    service.create(OTHER_NS, NewMemory.parse({"content": "theirs two"}))

    with pytest.raises(MemoryNotFoundError):
        service.get(NS, 2)
    with pytest.raises(MemoryNotFoundError):
        service.update(NS, 2, MemoryChanges.parse({"content": "hijack"}))
    with pytest.raises(MemoryNotFoundError):
        service.delete(NS, 2)
    page = service.search(NS, RetrievalQuery.parse({}))
    assert [m.content for m in page.items] == [mine.content]


# --- reading without stamping (Prefer: no-stamp at the HTTP door) ---


def test_a_read_without_a_stamp_returns_the_stored_memory_and_changes_nothing(repository: StoredMemories) -> None:
    writes.add(repository, NS, memory(1, updated_at=at(1)))
    repository.read(NS, 1, at(10))

    read = repository.read(NS, 1, None)

    assert read == memory(1, updated_at=at(1), last_accessed_at=at(10))
    assert repository.get(NS, 1) == read


def test_a_read_without_a_stamp_of_a_deleted_or_missing_memory_is_not_found(repository: StoredMemories) -> None:
    writes.add(repository, NS, memory(1))
    writes.delete(repository, NS, 1, at(9))

    for missing in (1, 2):
        with pytest.raises(MemoryNotFoundError):
            repository.read(NS, missing, None)
    assert repository.get(NS, 2) is None


def test_a_service_asked_not_to_stamp_stamps_nothing_on_get_or_search(service: MemoryService) -> None:
    created = service.create(NS, NewMemory.parse({"content": "The user keeps bees"}))
    service.create(NS, NewMemory.parse({"content": "The user keeps wasps"}))

    got = service.get(NS, created.id, stamp=False)
    listed = service.search(NS, RetrievalQuery.parse({}), stamp=False)

    assert got.last_accessed_at is None
    assert [m.last_accessed_at for m in listed.items] == [None, None]
    assert listed.total == 2
    stamped = service.search(NS, RetrievalQuery.parse({"limit": 1}))  # without the preference, as before
    assert stamped.items[0].last_accessed_at is not None
    assert service.get(NS, created.id, stamp=False).last_accessed_at == (
        stamped.items[0].last_accessed_at if stamped.items[0].id == created.id else None
    )


# Every listing path: each sort's index, a search by `q` (by id), a tag's copies, a tag by last use (the namespace).
NO_STAMP_LISTINGS: tuple[dict[str, Any], ...] = (
    *({"sort": sort} for sort in SORTS),
    *({"q": "bees", "sort": sort} for sort in SORTS),
    *({"tag": "garden", "sort": sort} for sort in SORTS),
)


def test_a_listing_that_does_not_stamp_shows_the_stored_stamps_of_used_memories(
    service: MemoryService, clock: FakeClock
) -> None:
    garden = {"tags": ["garden"]}
    used = service.create(NS, NewMemory.parse({"content": "The user keeps bees", **garden}))
    unused = service.create(NS, NewMemory.parse({"content": "The user keeps more bees", **garden}))
    clock.advance(seconds=5)
    stamp = service.get(NS, used.id).last_accessed_at
    assert stamp is not None
    expected = {used.id: stamp, unused.id: None}

    for fields in NO_STAMP_LISTINGS:
        listed = service.search(NS, RetrievalQuery.parse(fields), stamp=False)
        assert {m.id: m.last_accessed_at for m in listed.items} == expected, fields

    service.delete(NS, used.id)
    service.delete(NS, unused.id)
    for sort in SORTS:
        deleted = service.search(NS, RetrievalQuery.parse({"status": "deleted", "sort": sort}), stamp=False)
        assert {m.id: m.last_accessed_at for m in deleted.items} == expected, sort
