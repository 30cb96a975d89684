"""The store's own bookkeeping, in memory and on DynamoDB Local: exact totals kept per status and type,
`q` and `tag` evaluated by the store exactly as the core defines them, one-write PATCHes, and idempotent creates."""

from __future__ import annotations

import itertools
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapters.dynamodb import DynamoDBMemoryRepository
from core.contract import RetrievalQuery
from core.errors import InvalidInputError, MemoryNotFoundError, VersionMismatchError, WriteConflictError
from core.memories import MemoryService
from core.model import MEMORY_TYPES, IdempotentCreate, Memory, MemoryChanges, NewMemory
from tests.conftest import Engine, FakeClock, StoredMemories

NS = "alice"
FILTERS = [
    {"status": status, "memory_type": memory_type}
    for status, memory_type in itertools.product([None, "active", "invalid", "deleted"], [None, *MEMORY_TYPES])
]


def query(**fields: Any) -> RetrievalQuery:
    return RetrievalQuery.parse({name: value for name, value in fields.items() if value is not None})


def stored(repository: StoredMemories, count: int) -> list[Memory]:
    """Every memory with an id up to `count`, read one by one (no listing involved)."""
    return [memory for memory_id in range(1, count + 1) if (memory := repository.get(NS, memory_id)) is not None]


def assert_totals_match(service: MemoryService, memories: list[Memory]) -> None:
    """The counted total of every status x type filter equals a plain count of the stored memories."""
    for fields in FILTERS:
        expected = [
            m
            for m in memories
            if (m.status == fields["status"] if fields["status"] else m.status != "deleted")
            and (fields["memory_type"] is None or m.memory_type == fields["memory_type"])
        ]
        page = service.search(NS, query(**fields, limit=100))
        assert page.total == len(expected), fields
        assert sorted(m.id for m in page.items) == sorted(m.id for m in expected), fields


# --- totals ------------------------------------------------------------------------------------------------


def test_totals_follow_every_create_patch_and_delete(service: MemoryService, repository: StoredMemories) -> None:
    cells = list(itertools.product(["active", "invalid"], MEMORY_TYPES))
    for n, (status, memory_type) in enumerate(cells * 2):
        service.create(NS, NewMemory.parse({"content": f"m{n}", "status": status, "memory_type": memory_type}))
    assert_totals_match(service, stored(repository, 16))

    service.update(NS, 1, MemoryChanges.parse({"status": "invalid"}))
    service.update(NS, 2, MemoryChanges.parse({"memory_type": "event", "status": "active"}))
    service.update(NS, 3, MemoryChanges.parse({"status": "active"}))  # already active: nothing moves
    service.update(NS, 4, MemoryChanges.parse({"content": "edited", "tags": ["x"]}))
    service.delete(NS, 5)
    service.delete(NS, 12)
    with pytest.raises(MemoryNotFoundError):
        service.delete(NS, 5)
    with pytest.raises(MemoryNotFoundError):
        service.update(NS, 12, MemoryChanges.parse({"status": "active"}))

    assert_totals_match(service, stored(repository, 16))


def test_a_window_past_the_last_match_is_empty_with_the_exact_total(service: MemoryService) -> None:
    for n in range(7):
        service.create(NS, NewMemory.parse({"content": f"m{n}", "memory_type": "event" if n % 3 else "fact"}))

    page = service.search(NS, query(memory_type="event", offset=4, limit=3))
    assert (page.items, page.total, page.has_more) == ([], 4, False)
    page = service.search(NS, query(memory_type="event", sort="created_at", offset=1, limit=2))
    assert ([m.id for m in page.items], page.total, page.has_more) == ([5, 3], 4, True)


# --- q and tag, evaluated by DynamoDB ----------------------------------------------------------------------

# Case pairs whose folding is not plain lower-casing, words sharing substrings, and tags that q can span.
CORPUS = [
    ("Straße in München", ["travel", "de:city"]),
    ("STRASSE", []),
    ("Ὀδυσσεύς ΣΊΣΥΦΟΣ", ["myth"]),
    ("İstanbul trip", ["travel-plans"]),
    ("espresso, no sugar", ["food", "coffee"]),
    ("Espresso machine broke", ["home"]),
    ("line one\nline two", ["notes"]),
    ("travel", []),
    ("a_b%c\\d", ["x.y:z"]),
    ("ﬁle ﬂow", ["typography"]),
]
NEEDLES = ["straße", "STRASSE", "ss", "σίσυφος", "İ", "i̇stanbul", "espresso", "ESPRESSO", "travel", "travel-p",
           "e:ci", "\n", "one\nline", "_b%", "\\", "x.y", "y:z", "fi", "FILE", "o", "zz", "travel\ntravel"]  # fmt: skip


@pytest.fixture
def corpus(service: MemoryService) -> MemoryService:
    for content, tags in CORPUS:
        service.create(NS, NewMemory.parse({"content": content, "tags": tags}))
    service.create(NS, NewMemory.parse({"content": "deleted espresso", "tags": ["travel"]}))
    service.delete(NS, len(CORPUS) + 1)
    return service


def _expected(q: RetrievalQuery) -> list[int]:
    fixed: dict[str, Any] = {"created_at": "x", "updated_at": "x", "last_accessed_at": None, "version": 1}
    records = [
        Memory(id=n, content=content.strip(), tags=tags, memory_type="fact", status="active", **fixed)
        for n, (content, tags) in enumerate(CORPUS, start=1)
    ]
    return [m.id for m in records if q.matches(m)]


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    needle=st.one_of(st.sampled_from(NEEDLES), st.text(alphabet="aeinorstßΣ\u03c3İi̇\n-:_ ", min_size=1, max_size=4)),
    field=st.sampled_from(["q", "tag"]),
    sort=st.sampled_from(["id", "created_at", "last_accessed_at"]),
)
def test_q_and_tag_select_exactly_what_the_core_definition_matches(
    corpus: MemoryService, needle: str, field: str, sort: str
) -> None:
    retrieval = query(**{field: needle, "sort": sort, "limit": 100})
    page = corpus.search(NS, retrieval)
    assert sorted(m.id for m in page.items) == _expected(retrieval)
    assert page.total == len(page.items)


def test_search_pages_count_every_match_beyond_the_window(service: MemoryService) -> None:
    for n in range(1, 31):
        service.create(NS, NewMemory.parse({"content": f"note {n}" + (" Espresso" if n % 3 == 0 else "")}))
    pages = [service.search(NS, query(q="espresso", offset=offset, limit=4)) for offset in (0, 4, 8)]
    assert [p.total for p in pages] == [10, 10, 10]
    assert [m.id for p in pages for m in p.items] == [3, 6, 9, 12, 15, 18, 21, 24, 27, 30]
    assert [p.has_more for p in pages] == [True, True, False]


# --- PATCH of content and tags in one conditional write ----------------------------------------------------


def test_a_content_or_tags_patch_changes_only_what_differs(service: MemoryService) -> None:
    created = service.create(NS, NewMemory.parse({"content": "Lives in Lyon", "tags": ["home"]}))

    same = service.update(NS, created.id, MemoryChanges.parse({"content": " Lives in Lyon ", "tags": ["HOME"]}))
    assert same == created
    moved = service.update(NS, created.id, MemoryChanges.parse({"tags": []}), expected_version=1)
    assert (moved.version, moved.tags, moved.content) == (2, [], "Lives in Lyon")
    assert service.update(NS, created.id, MemoryChanges.parse({"tags": []})) == moved
    renamed = service.update(NS, created.id, MemoryChanges.parse({"content": "Lives in PARIS"}))
    assert (renamed.version, renamed.updated_at > moved.updated_at) == (3, True)
    assert [m.id for m in service.search(NS, query(q="paris")).items] == [created.id]
    assert service.search(NS, query(q="lyon")).total == 0

    with pytest.raises(VersionMismatchError) as stale:
        service.update(NS, created.id, MemoryChanges.parse({"content": "Lives in PARIS"}), expected_version=2)
    assert stale.value.current_version == 3
    service.delete(NS, created.id)
    with pytest.raises(MemoryNotFoundError):
        service.update(NS, created.id, MemoryChanges.parse({"content": "back"}))
    with pytest.raises(MemoryNotFoundError):
        service.update(NS, 99, MemoryChanges.parse({"tags": ["x"]}))


# --- idempotent create -------------------------------------------------------------------------------------


def once(key: str, new: NewMemory) -> IdempotentCreate:
    return IdempotentCreate.of(key, new, "Idempotency-Key")


def test_a_retried_create_returns_the_first_record_and_stores_nothing_more(
    service: MemoryService, repository: StoredMemories, clock: FakeClock
) -> None:
    new = NewMemory.parse({"content": "Prefers tea", "tags": ["food"], "memory_type": "preference"})
    first = service.create(NS, new, once("k-1", new))
    service.get(NS, first.id)  # stamps it: a replay still answers what the first create answered
    clock.advance(hours=23)

    again = NewMemory.parse({"content": "  Prefers tea ", "tags": ["FOOD", "food"], "memory_type": "preference"})
    assert service.create(NS, again, once("k-1", again)) == first
    assert service.search(NS, query(limit=100)).total == 1
    # The retry drew an id it never used: the next create skips it (gaps are allowed, repeats are not).
    assert service.create(NS, new).id == first.id + 2


def test_the_same_key_with_another_body_is_refused_naming_the_key(service: MemoryService) -> None:
    new = NewMemory.parse({"content": "Prefers tea"})
    service.create(NS, new, once("k-1", new))
    other = NewMemory.parse({"content": "Prefers coffee"})

    with pytest.raises(InvalidInputError) as refused:
        service.create(NS, other, IdempotentCreate.of("k-1", other, "idempotency_key"))
    assert [e.field for e in refused.value.errors] == ["idempotency_key"]
    assert service.search(NS, query()).total == 1


def test_keys_are_per_namespace_and_lapse_after_24_hours(service: MemoryService, clock: FakeClock) -> None:
    new = NewMemory.parse({"content": "Prefers tea"})
    first = service.create(NS, new, once("k-1", new))

    assert service.create("bob", new, once("k-1", new)).id == 1
    assert service.search("bob", query()).total == 1
    clock.advance(hours=24, seconds=1)
    later = service.create(NS, new, once("k-1", new))
    assert later.id != first.id
    assert service.create(NS, new, once("k-1", new)) == later


@pytest.mark.parametrize("key", ["", "has space", "x" * 256, "naïve", "tab\there"])
def test_a_malformed_idempotency_key_is_refused(key: str) -> None:
    with pytest.raises(InvalidInputError) as refused:
        once(key, NewMemory.parse({"content": "x"}))
    assert [e.field for e in refused.value.errors] == ["Idempotency-Key"]


def test_concurrent_identical_creates_store_one_memory(ddb_local_service: MemoryService) -> None:
    new = NewMemory.parse({"content": "Booked the 9:40 train"})

    def attempt(_: int) -> int | str:
        try:
            return ddb_local_service.create(NS, new, once("train", new)).id
        except WriteConflictError:
            return "409"

    with ThreadPoolExecutor(max_workers=8) as pool:
        outcomes = list(pool.map(attempt, range(8)))

    ids = {outcome for outcome in outcomes if outcome != "409"}
    assert len(ids) == 1
    assert ddb_local_service.search(NS, query()).total == 1


def test_concurrent_creates_and_deletes_keep_exact_totals(
    ddb_local_service: MemoryService, ddb_local_engine: Engine, ddb_local_table: str
) -> None:
    types = list(MEMORY_TYPES)

    def create(n: int) -> int:
        return ddb_local_service.create(NS, NewMemory.parse({"content": f"m{n}", "memory_type": types[n % 4]})).id

    with ThreadPoolExecutor(max_workers=8) as pool:
        created = list(pool.map(create, range(24)))
        list(pool.map(lambda mid: ddb_local_service.delete(NS, mid), created[::3]))

    repository = DynamoDBMemoryRepository(ddb_local_engine.client, ddb_local_table)
    assert_totals_match(ddb_local_service, stored(repository, max(created)))
