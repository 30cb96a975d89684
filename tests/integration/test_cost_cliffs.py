"""Reads that cost what their answer needs, on Amazon DynamoDB Local, counted as DynamoDB counts them (the units each
call reports consuming) and by the calls sent: a recall ranked without meaning (the stored vectors are another
model's, during a model change) reads only its page's records, a listing that stamps nothing reads each record
once, and a warm recall asked again reads the id counter and the changes alone (its page's records kept, their stamps
learnt from stamping them)."""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest

from adapters.dynamodb.codec import MEMORY_PREFIX
from adapters.dynamodb.usage import CapacityTally
from core.contract import RetrievalQuery
from core.memories import MemoryService
from core.model import NewMemory
from core.recall.indexing import RecallIndexer
from core.recall.query import RecallQuery
from core.recall.service import RecallService
from core.recall.standin import StandInEmbedder
from tests.conftest import Engine, FakeClock, StoredMemories

NS = "alice"
STAND_IN = StandInEmbedder()


class Renamed(StandInEmbedder):
    """The model a deployment moved to: none of the stored vectors is its own yet."""

    model = "stand-in:renamed"


@dataclass
class Cost:
    """What one operation sent: its read units, and each call's operation and parameters, in order."""

    read_units: float = 0.0
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def records_read(self) -> int:
        """The memory records (not their access items, digests or copies) read by key."""
        keys = [
            *(params["Key"] for name, params in self.calls if name == "GetItem"),
            *(
                key
                for name, params in self.calls
                if name == "BatchGetItem"
                for wanted in params["RequestItems"].values()
                for key in wanted["Keys"]
            ),
        ]
        return sum(key["sk"]["S"].startswith(MEMORY_PREFIX) for key in keys)


class Meter:
    """The engine client's calls and consumed capacity, per operation measured."""

    def __init__(self, engine: Engine) -> None:
        self._tally = CapacityTally()
        self._tally.watch(engine.client)
        self._sent: list[tuple[str, dict[str, Any]]] = []
        engine.client.meta.events.register("before-parameter-build.dynamodb.*", self._record)

    def _record(self, model: Any, params: dict[str, Any], **_: Any) -> None:
        self._sent.append((model.name, dict(params)))

    @contextmanager
    def measuring(self) -> Iterator[Cost]:
        self._tally.take()
        self._sent.clear()
        cost = Cost()
        yield cost
        cost.read_units = self._tally.take().read_units
        cost.calls = list(self._sent)


@pytest.fixture
def repository(ddb_local_engine: Engine, ddb_local_table: str) -> StoredMemories:
    return ddb_local_engine.memories(ddb_local_table)


@pytest.fixture
def meter(ddb_local_engine: Engine) -> Meter:
    return Meter(ddb_local_engine)


WORDS = ("espresso", "tea", "Lisbon", "piano", "jazz", "trains", "garden", "chess", "sister", "Apollo", "bread")


def noted(repository: StoredMemories, clock: FakeClock, rng: random.Random, count: int, words: int) -> MemoryService:
    """`count` notes of `words` of WORDS each, drawn by `rng`, written by a service embedding them; the service."""
    memories = MemoryService(repository, clock, indexer=RecallIndexer(STAND_IN))
    for n in range(count):
        drawn = " ".join(rng.choice(WORDS) for _ in range(words))
        memories.create(NS, NewMemory.parse({"content": f"The user mentioned {drawn} in note {n}"}))
    return memories


def test_a_recall_ranked_without_meaning_reads_no_record(
    repository: StoredMemories, meter: Meter, clock: FakeClock
) -> None:
    rng = random.Random(3)
    memories = noted(repository, clock, rng, 240, 6)
    for memory_id in rng.sample(range(1, 241), 30):
        clock.advance(minutes=1)
        memories.get(NS, memory_id)
    question = RecallQuery.parse({"query": "which sports does the user follow"})

    with meter.measuring() as normal:
        RecallService(repository, STAND_IN, clock=clock).recall(NS, question, stamp=False)
    with meter.measuring() as changing:
        page = RecallService(repository, Renamed(), clock=clock).recall(NS, question, stamp=False)

    assert page.ranking.unembedded == page.total == 240
    assert changing.records_read() == normal.records_read() == 0  # the page is answered from the digests
    assert "BatchGetItem" not in [name for name, _ in changing.calls]
    # Every match's stamp besides (about 100 bytes each, by one Query): a few units more than with meaning.
    assert changing.read_units <= 1.25 * normal.read_units


def test_a_list_that_stamps_nothing_reads_each_record_once(
    repository: StoredMemories, meter: Meter, clock: FakeClock
) -> None:
    memories = MemoryService(repository, clock)
    for n in range(30):
        memories.create(NS, NewMemory.parse({"content": f"The user noted thing number {n}, at some length. " * 4}))
    for memory_id in (3, 25, 28):
        memories.get(NS, memory_id)
    listing = RetrievalQuery.parse({"limit": 10})

    with meter.measuring() as unstamped:
        page = memories.search(NS, listing, stamp=False)
    stored = [repository.get(NS, memory.id) for memory in page.items]
    with meter.measuring() as stamped:
        memories.search(NS, listing)

    assert [memory.last_accessed_at for memory in page.items] == [
        memory.last_accessed_at for memory in stored if memory
    ]
    assert [memory.id for memory in page.items if memory.last_accessed_at is not None] == [3]
    assert unstamped.records_read() == 0
    # Beside what the stamped read reads: the page's stamps, about 100 bytes each, in one Query (half a unit), where
    # the stamped read writes them (10 write units, which DynamoDB Local does not report for PartiQL).
    assert unstamped.read_units <= stamped.read_units + 0.5, (unstamped.read_units, stamped.read_units)


def test_a_warm_recall_reads_the_changes_alone_whatever_its_page(
    repository: StoredMemories, meter: Meter, clock: FakeClock
) -> None:
    noted(repository, clock, random.Random(5), 200, 5)
    recall = RecallService(repository, STAND_IN, clock=clock)
    question = RecallQuery.parse({"query": "espresso in Lisbon"})
    recall.recall(NS, question)  # this process's first: the namespace's digests

    with meter.measuring() as again:
        page = recall.recall(NS, question)
    with meter.measuring() as other:
        other_page = recall.recall(NS, RecallQuery.parse({"query": "chess with my sister"}))

    new = {item.memory.id for item in other_page.items} - {item.memory.id for item in page.items}
    assert len(new) == question.limit  # another page, not one answered before
    # The change index's last WINDOW_SECONDS holds every create of this test (about 150 bytes an entry); once the
    # window has passed, it is an empty Query (make bench: settled).
    window = 0.5 * math.ceil(200 * 150 / 4096)
    for cost, answered in ((again, page), (other, other_page)):
        sent = [name for name, _ in cost.calls]
        # The id counter and the change index; the stamps learnt from stamping the page (one UpdateItem a memory),
        # and (another page) the stored stamps of the matches at its edge that use could still reorder.
        assert cost.records_read() == 0
        assert {"GetItem", "Query", "UpdateItem"} <= set(sent) <= {"GetItem", "Query", "BatchGetItem", "UpdateItem"}
        assert sent.count("UpdateItem") == len(answered.items) == question.limit
    assert again.read_units <= 0.5 + window, again.read_units  # the id counter, the change index
    assert other.read_units <= 5 + window, other.read_units  # #41's target: at most 5 units beside the changes
