"""The write fence and the id and version bounds, part of the repository contract, on every store (in memory, Amazon
DynamoDB Local): a fenced write lands only while its API key is live, and leaves nothing when it is not; no create
gets an id past MAX_MEMORY_ID and no PATCH a version past MAX_VERSION."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest

from core import writes
from core.contract import RetrievalQuery
from core.errors import AuthenticationError, MemoryNotFoundError, NamespaceFullError, VersionExhaustedError
from core.history import HistoryQuery
from core.keys import KeyService
from core.limits import MAX_MEMORY_ID, MAX_VERSION
from core.memories import MemoryService
from core.model import MemoryChanges, NewMemory
from core.repository import KEY_NOT_LIVE, LiveKey
from tests.conftest import Engine, FakeClock
from tests.integration.test_repository_contract import memory

NS = "alice"
UNKNOWN_KEY_ID = "0123456789ab"  # never stored, or erased with its namespace


@pytest.fixture
def table(engine: Engine) -> str:
    return engine.new_table()


@pytest.fixture
def keys(engine: Engine, table: str, clock: FakeClock) -> KeyService:
    return KeyService(engine.keys(table), clock)


@pytest.fixture
def fenced(engine: Engine, table: str, clock: FakeClock) -> MemoryService:
    """The service as deployed: every change fenced on the key making it."""
    return MemoryService(engine.memories(table), clock, fenced=True)


@pytest.fixture
def unfenced(engine: Engine, table: str, clock: FakeClock) -> MemoryService:
    return MemoryService(engine.memories(table), clock)


def dead_key(state: str, keys: KeyService, clock: FakeClock) -> str:
    """The id of a key of NS that is no longer live: never stored (or erased), revoked, or expired."""
    if state == "unknown":
        return UNKNOWN_KEY_ID
    key, _ = keys.create(NS, expires_in=timedelta(seconds=5))
    if state == "revoked":
        keys.revoke(key.key_id)
    else:
        clock.advance(seconds=5)
    return key.key_id


def nothing_stored(engine: Engine, table: str, service: MemoryService) -> bool:
    """No memory, totals or history in NS, and no id counter: the next unfenced create is memory 1."""
    found = service.search(NS, RetrievalQuery.parse({"status": "deleted"})).total
    found += service.search(NS, RetrievalQuery.parse({})).total
    if engine.client is not None:
        items = engine.client.scan(TableName=table, ConsistentRead=True)["Items"]
        found += sum(item["pk"]["S"].startswith(f"NS#{NS}") for item in items)
    with pytest.raises(MemoryNotFoundError):
        service.history(NS, 1, HistoryQuery.parse({}))
    return found == 0 and service.create(NS, NewMemory.parse({"content": "first"})).id == 1


STATES = ["unknown", "revoked", "expired"]


@pytest.mark.parametrize("state", STATES)
def test_a_create_behind_a_key_that_is_not_live_is_refused_and_leaves_nothing(
    engine: Engine,
    table: str,
    fenced: MemoryService,
    unfenced: MemoryService,
    keys: KeyService,
    clock: FakeClock,
    state: str,
) -> None:
    key_id = dead_key(state, keys, clock)

    with pytest.raises(AuthenticationError, match=KEY_NOT_LIVE):
        fenced.create(NS, NewMemory.parse({"content": "too late", "tags": ["t"]}), key_id=key_id)

    assert nothing_stored(engine, table, unfenced)


@pytest.mark.parametrize("state", STATES)
def test_a_change_behind_a_key_that_is_not_live_is_refused_and_changes_nothing(
    fenced: MemoryService, unfenced: MemoryService, keys: KeyService, clock: FakeClock, state: str
) -> None:
    unfenced.create(NS, NewMemory.parse({"content": "kept", "tags": ["t"]}))
    unfenced.create(NS, NewMemory.parse({"content": "deleted"}))
    unfenced.delete(NS, 2)
    key_id = dead_key(state, keys, clock)
    writes: list[Callable[[], object]] = [
        lambda: fenced.update(NS, 1, MemoryChanges.parse({"content": "changed", "tags": ["u"]}), key_id=key_id),
        lambda: fenced.delete(NS, 1, key_id=key_id),
        lambda: fenced.restore(NS, 2, key_id=key_id),
    ]

    for write in writes:
        with pytest.raises(AuthenticationError, match=KEY_NOT_LIVE):
            write()

    assert unfenced.get(NS, 1, stamp=False).model_dump(include={"content", "tags", "version", "status"}) == {
        "content": "kept",
        "tags": ["t"],
        "version": 1,
        "status": "active",
    }
    assert unfenced.history(NS, 1, HistoryQuery.parse({})).total == 1
    assert unfenced.history(NS, 2, HistoryQuery.parse({})).total == 2
    assert unfenced.search(NS, RetrievalQuery.parse({"tag": "u"})).total == 0


def test_every_change_behind_a_live_key_lands_and_names_the_key(fenced: MemoryService, keys: KeyService) -> None:
    key, _ = keys.create(NS, expires_in=timedelta(hours=1))

    fenced.create(NS, NewMemory.parse({"content": "one", "tags": ["t"]}), key_id=key.key_id)
    fenced.update(NS, 1, MemoryChanges.parse({"content": "two"}), key_id=key.key_id)
    fenced.delete(NS, 1, key_id=key.key_id)
    fenced.restore(NS, 1, key_id=key.key_id)

    history = fenced.history(NS, 1, HistoryQuery.parse({})).items
    assert [(r.change, r.key_id) for r in history] == [
        (change, key.key_id) for change in ("restored", "deleted", "updated", "created")
    ]


def test_a_change_without_a_key_is_not_fenced(fenced: MemoryService) -> None:
    # An open server (serve --no-auth) has no key to fence on.
    assert fenced.create(NS, NewMemory.parse({"content": "open"})).id == 1


@pytest.mark.parametrize("state", STATES)
def test_without_the_fence_a_key_id_only_names_the_key_in_the_history(
    unfenced: MemoryService, keys: KeyService, clock: FakeClock, state: str
) -> None:
    key_id = dead_key(state, keys, clock)

    unfenced.create(NS, NewMemory.parse({"content": "one"}), key_id=key_id)
    unfenced.update(NS, 1, MemoryChanges.parse({"content": "two"}), key_id=key_id)

    assert [r.key_id for r in unfenced.history(NS, 1, HistoryQuery.parse({})).items] == [key_id, key_id]


def test_only_a_live_key_starts_a_namespaces_id_counter(
    engine: Engine, table: str, keys: KeyService, clock: FakeClock
) -> None:
    repository = engine.memories(table)
    now = "2026-04-06T14:12:00.000000Z"
    live, _ = keys.create(NS)

    with pytest.raises(AuthenticationError, match=KEY_NOT_LIVE):
        repository.next_id(NS, LiveKey(UNKNOWN_KEY_ID, now))
    assert repository.next_id(NS, LiveKey(live.key_id, now)) == 1
    # Drawing from a counter that exists checks no key: the memory's own write is fenced.
    assert repository.next_id(NS, LiveKey(UNKNOWN_KEY_ID, now)) == 2


# --- the bounds ----------------------------------------------------------------------------------------------


def seed_counter(engine: Engine, table: str, drawn: int) -> None:
    """Make NS's counter stand at `drawn`, as if that many ids had been drawn."""
    if engine.client is None:
        engine.tables[table][0].reset({}, {NS: drawn + 1})
    else:
        item = {"pk": {"S": f"NS#{NS}"}, "sk": {"S": "COUNTER"}, "next_id": {"N": str(drawn)}}
        engine.client.put_item(TableName=table, Item=item)


def test_a_namespace_that_drew_every_id_refuses_a_create_and_stores_nothing(
    engine: Engine, table: str, unfenced: MemoryService
) -> None:
    seed_counter(engine, table, MAX_MEMORY_ID - 1)
    last = unfenced.create(NS, NewMemory.parse({"content": "the last one"}))

    for _ in range(2):
        with pytest.raises(NamespaceFullError, match=f"every memory id up to {MAX_MEMORY_ID}"):
            unfenced.create(NS, NewMemory.parse({"content": "one too many"}))

    assert last.id == MAX_MEMORY_ID
    # Listed without `q` or `tag`: a search reads the namespace in segments up to its counter, 10**10 / 512 here.
    listed = unfenced.search(NS, RetrievalQuery.parse({}))
    assert (listed.total, [m.id for m in listed.items]) == (1, [MAX_MEMORY_ID])
    assert unfenced.get(NS, MAX_MEMORY_ID).content == "the last one"


def test_a_memory_at_the_highest_version_refuses_a_change_but_still_answers_one_that_changes_nothing(
    engine: Engine, table: str, unfenced: MemoryService
) -> None:
    writes.add(engine.memories(table), NS, memory(1, content="worn out", version=MAX_VERSION))

    with pytest.raises(VersionExhaustedError, match=f"memory 1 is at version {MAX_VERSION}"):
        unfenced.update(NS, 1, MemoryChanges.parse({"content": "once more"}))
    same = unfenced.update(NS, 1, MemoryChanges.parse({"content": "worn out"}), expected_version=MAX_VERSION)

    stored = unfenced.get(NS, 1, stamp=False)
    assert (stored.content, stored.version) == ("worn out", MAX_VERSION)
    assert same.version == MAX_VERSION
