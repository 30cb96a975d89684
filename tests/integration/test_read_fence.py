"""The read fence, part of the repository contract, on every store (in memory, Amazon DynamoDB Local): a read made for
a keyed caller answers and stamps only while the caller's API key is live in the store, checked after the data is read
and before anything is stamped or returned, whatever the process's cache of verified keys still believes (issue #38).
On DynamoDB that check is one strongly consistent GetItem of the key item, and nothing else."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import pytest

from adapters.dynamodb.namespaces import Namespaces
from core.clock import format_timestamp, parse_timestamp
from core.contract import RetrievalQuery
from core.errors import AuthenticationError
from core.history import HistoryQuery
from core.keys import KeyService
from core.memories import MemoryService
from core.model import MemoryChanges, NewMemory
from core.recall.indexing import RecallIndexer
from core.recall.query import RecallQuery
from core.recall.related import RelatedQuery
from core.recall.service import RecallService
from core.recall.standin import StandInEmbedder
from core.repository import READ_KEY_NOT_LIVE, LiveKey
from tests.conftest import Engine, FakeClock

NS = "alice"
STAND_IN = StandInEmbedder()
REFUSED = re.escape(READ_KEY_NOT_LIVE)
# As the MCP tool prime_memory_context asks (handlers.mcp.tools PRIME_*).
PRIME = {"status": "active", "sort": "updated_at", "limit": 20}


@pytest.fixture
def table(engine: Engine) -> str:
    return engine.new_table()


@pytest.fixture
def this_process(engine: Engine, table: str, clock: FakeClock) -> KeyService:
    """The key service of the process serving the reads: what it verified, it trusts for its cache window."""
    return KeyService(engine.keys(table), clock)


@pytest.fixture
def elsewhere(engine: Engine, table: str, clock: FakeClock) -> KeyService:
    """Another process over the same table (the command line, another function instance)."""
    return KeyService(engine.keys(table), clock)


@pytest.fixture
def fenced(engine: Engine, table: str, clock: FakeClock) -> MemoryService:
    """The memory service as deployed: every write and read behind the caller's key."""
    return MemoryService(engine.memories(table), clock, fenced=True, indexer=RecallIndexer(STAND_IN))


@pytest.fixture
def recall(engine: Engine, table: str, clock: FakeClock) -> RecallService:
    """Recall as deployed: behind the caller's key."""
    return RecallService(engine.memories(table), STAND_IN, clock=clock, fenced=True)


def erase(engine: Engine, table: str, namespace: str) -> None:
    """`agent-memory namespace erase`: its keys first, then everything else of it."""
    if engine.client is None:
        engine.tables[table][0].erase(namespace)
    else:
        Namespaces(engine.client, table).erase(namespace, lambda _: None)


def reads(memories: MemoryService, recall: RecallService, key_id: str | None) -> dict[str, Callable[[], object]]:
    """Every read a door makes for a caller, stamping and not, of memory 1, of a missing one, and of the namespace;
    and a PATCH that changes nothing, which answers with the record it read."""
    question = RecallQuery.parse({"query": "what does the user keep"})
    return {
        "get": lambda: memories.get(NS, 1, key_id=key_id),
        "get unstamped": lambda: memories.get(NS, 1, stamp=False, key_id=key_id),
        "get of a missing memory": lambda: memories.get(NS, 99, key_id=key_id),
        "search": lambda: memories.search(NS, RetrievalQuery.parse({}), key_id=key_id),
        "search unstamped": lambda: memories.search(NS, RetrievalQuery.parse({}), stamp=False, key_id=key_id),
        "search by last use": lambda: memories.search(
            NS, RetrievalQuery.parse({"sort": "last_accessed_at"}), stamp=False, key_id=key_id
        ),
        "search by tag": lambda: memories.search(NS, RetrievalQuery.parse({"tag": "animals"}), key_id=key_id),
        "search by text": lambda: memories.search(NS, RetrievalQuery.parse({"q": "keeps"}), key_id=key_id),
        "prime": lambda: memories.search(NS, RetrievalQuery.parse(PRIME), key_id=key_id),
        "history": lambda: memories.history(NS, 1, HistoryQuery.parse({}), key_id=key_id),
        "history of a missing memory": lambda: memories.history(NS, 99, HistoryQuery.parse({}), key_id=key_id),
        "recall": lambda: recall.recall(NS, question, key_id=key_id),
        "recall unstamped": lambda: recall.recall(NS, question, stamp=False, key_id=key_id),
        "related": lambda: recall.related.related(NS, 1, RelatedQuery(), key_id=key_id),
        "related of a missing memory": lambda: recall.related.related(NS, 99, RelatedQuery(), key_id=key_id),
        "patch that changes nothing": lambda: memories.update(NS, 1, MemoryChanges.parse({}), key_id=key_id),
        "supersede of a missing memory": lambda: memories.supersede(NS, 1, [99], key_id=key_id),
        "supersede by a missing memory": lambda: memories.supersede(NS, 99, [1], key_id=key_id),
        "create superseding a missing memory": lambda: memories.create(
            NS, NewMemory.parse({"content": "x", "supersedes": [99]}), key_id=key_id
        ),
    }


@pytest.mark.parametrize("ending", ["erased", "revoked"])
def test_every_read_with_a_cached_key_erased_or_revoked_elsewhere_is_refused_and_stamps_nothing(
    engine: Engine,
    table: str,
    this_process: KeyService,
    elsewhere: KeyService,
    fenced: MemoryService,
    recall: RecallService,
    ending: str,
) -> None:
    old, token = this_process.create(NS)
    cached = this_process.authenticate(token)
    fenced.create(NS, NewMemory.parse({"content": "The user keeps bees", "tags": ["animals"]}), key_id=old.key_id)
    if ending == "erased":
        erase(engine, table, NS)
        new, _ = elsewhere.create(NS)
        owner = {"content": "The new owner keeps goats", "tags": ["animals"]}
        fenced.create(NS, NewMemory.parse(owner), key_id=new.key_id)
    else:
        elsewhere.revoke(old.key_id)
    before = fenced.get(NS, 1, stamp=False)
    assert this_process.authenticate(token) == cached  # this process still trusts its cached verification

    for name, read in reads(fenced, recall, old.key_id).items():
        with pytest.raises(AuthenticationError, match=REFUSED):
            read()
        assert fenced.get(NS, 1, stamp=False) == before, name

    assert before.last_accessed_at is None


@pytest.mark.parametrize("state", ["unknown", "revoked", "expired"])
def test_a_key_that_is_not_live_fails_the_read_fence_as_it_fails_the_write_fence(
    engine: Engine, table: str, this_process: KeyService, clock: FakeClock, state: str
) -> None:
    repository = engine.memories(table)
    key, _ = this_process.create(NS, expires_in=timedelta(seconds=5))
    if state == "revoked":
        this_process.revoke(key.key_id)
    elif state == "expired":
        clock.advance(seconds=5)  # expires_at is now: expired, as the write fence has it
    key_id = "0123456789ab" if state == "unknown" else key.key_id

    with pytest.raises(AuthenticationError, match=REFUSED):
        repository.confirm_live(LiveKey(key_id, format_timestamp(this_process.now())))


def test_a_key_is_live_until_the_instant_it_expires(engine: Engine, table: str, this_process: KeyService) -> None:
    repository = engine.memories(table)
    key, _ = this_process.create(NS, expires_in=timedelta(seconds=5))
    assert key.expires_at is not None
    expires_at = parse_timestamp(key.expires_at)

    repository.confirm_live(LiveKey(key.key_id, format_timestamp(expires_at - timedelta(microseconds=1))))
    with pytest.raises(AuthenticationError, match=REFUSED):
        repository.confirm_live(LiveKey(key.key_id, key.expires_at))


def test_reads_behind_a_live_key_answer_and_stamp_as_ever(
    this_process: KeyService, fenced: MemoryService, recall: RecallService, clock: FakeClock
) -> None:
    key, _ = this_process.create(NS, expires_in=timedelta(hours=1))
    fenced.create(NS, NewMemory.parse({"content": "The user keeps bees", "tags": ["animals"]}), key_id=key.key_id)
    clock.advance(seconds=1)
    clock.freeze()
    now = format_timestamp(clock.now)

    got = fenced.get(NS, 1, key_id=key.key_id)
    listed = fenced.search(NS, RetrievalQuery.parse({"tag": "animals"}), key_id=key.key_id)
    recalled = recall.recall(NS, RecallQuery.parse({"query": "what does the user keep"}), key_id=key.key_id)
    history = fenced.history(NS, 1, HistoryQuery.parse({}), key_id=key.key_id)

    assert got.last_accessed_at == now
    assert [(m.id, m.last_accessed_at) for m in listed.items] == [(1, now)]
    assert [(item.memory.id, item.memory.last_accessed_at) for item in recalled.items] == [(1, now)]
    assert history.total == 1
    assert fenced.get(NS, 1, stamp=False).last_accessed_at == now


def test_a_read_without_a_key_is_not_fenced(fenced: MemoryService, recall: RecallService) -> None:
    # An open server (serve --no-auth) has no key to fence on, and the store holds none.
    fenced.create(NS, NewMemory.parse({"content": "The user keeps bees"}))

    assert fenced.get(NS, 1).content == "The user keeps bees"
    assert fenced.search(NS, RetrievalQuery.parse({})).total == 1
    assert recall.recall(NS, RecallQuery.parse({"query": "bees"})).total == 1


# --- what it costs on DynamoDB ----------------------------------------------------------------------------------


@contextmanager
def calls_of(client: Any) -> Iterator[list[tuple[str, dict[str, Any]]]]:
    """Every DynamoDB call `client` makes inside the block: its operation and parameters, in the order sent."""
    sent: list[tuple[str, dict[str, Any]]] = []

    def record(params: dict[str, Any], model: Any, **_: Any) -> None:
        sent.append((model.name, dict(params)))

    client.meta.events.register("before-parameter-build.dynamodb.*", record)
    try:
        yield sent
    finally:
        client.meta.events.unregister("before-parameter-build.dynamodb.*", record)


WRITES = ("UpdateItem", "BatchExecuteStatement", "TransactWriteItems", "PutItem")


@pytest.mark.parametrize("read", ["get", "get unstamped", "search", "search unstamped", "history", "recall", "related"])
def test_on_dynamodb_a_fenced_read_costs_one_consistent_get_item_of_its_key_between_its_reads_and_its_stamps(
    ddb_local_engine: Engine, clock: FakeClock, read: str
) -> None:
    table = ddb_local_engine.new_table()
    keys = KeyService(ddb_local_engine.keys(table), clock)
    key, _ = keys.create(NS)
    memories = MemoryService(ddb_local_engine.memories(table), clock, fenced=True, indexer=RecallIndexer(STAND_IN))
    ranked = RecallService(ddb_local_engine.memories(table), STAND_IN, clock=clock, fenced=True)
    for content in ("The user keeps bees", "The user keeps goats"):
        memories.create(NS, NewMemory.parse({"content": content, "tags": ["animals"]}), key_id=key.key_id)

    reads(memories, ranked, None)[read]()  # what a container reads once and remembers (namespace marks) is read here
    with calls_of(ddb_local_engine.client) as unfenced:
        reads(memories, ranked, None)[read]()  # no key: no fence (an open server)
    with calls_of(ddb_local_engine.client) as behind:
        reads(memories, ranked, key.key_id)[read]()

    extra = Counter(name for name, _ in behind) - Counter(name for name, _ in unfenced)
    assert extra == Counter({"GetItem": 1}), (behind, unfenced)
    checks = [i for i, (name, params) in enumerate(behind) if params.get("Key", {}).get("pk") == {"S": "KEYS"}]
    assert len(checks) == 1
    check = behind[checks[0]]
    assert check == ("GetItem", {"TableName": table, "Key": check[1]["Key"], "ConsistentRead": True})
    assert all(name not in WRITES for name, _ in behind[: checks[0]])  # nothing stamped before the check
    assert any(name not in WRITES for name, _ in behind[: checks[0]])  # the data was read before it
