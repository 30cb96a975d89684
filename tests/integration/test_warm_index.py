"""Recall's warm index (core.recall.warm) on every store: a recall from a process's warm copy returns exactly what a
cold read returns, whatever writes, deletes, restores, supersedes, purges, embeddings, erasures and imports came
between, in this process or another."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import pytest

from adapters.dynamodb.codec import DIGEST_PREFIX
from adapters.dynamodb.memories import DynamoDBMemoryRepository
from adapters.dynamodb.namespaces import Namespaces
from bench.portability import synthetic_export
from core.contract import RetrievalQuery
from core.digest import Vector
from core.errors import DomainError
from core.memories import MemoryService
from core.model import MemoryChanges, NewMemory
from core.portable import parse_line
from core.recall.backfill import Backfill
from core.recall.embedding import EmbedderUnavailableError, Kind
from core.recall.indexing import RecallIndexer
from core.recall.query import RecallQuery
from core.recall.service import RecallService
from core.recall.standin import StandInEmbedder
from tests.conftest import Engine, FakeClock, StoredMemories

NS = "alice"
OTHER = "bob"
STAND_IN = StandInEmbedder()
AS_OF = "2026-06-01T00:00:00.000000Z"
WORDS = ("tea", "garden", "berlin", "job", "manager", "piano", "diet", "vegan", "phone", "car", "bike", "sister")
TAGS = ("home", "work", "health")
TYPES = ("fact", "preference", "event", "identity")
# Each recall compared: filters of every kind, and each status.
QUESTIONS: tuple[dict[str, Any], ...] = (
    {"query": "tea garden job"},
    {"query": "manager piano", "status": "invalid"},
    {"query": "vegan diet", "tag": "health"},
    {"query": "phone car bike", "memory_type": "preference"},
    {"query": "sister berlin", "status": "deleted"},
    {"query": "garden", "status": "active", "tag": "home", "memory_type": "fact"},
)


class Outage:
    """The stand-in model while unreachable: digests written meanwhile wait for the backfill."""

    model = StandInEmbedder.model
    floor = StandInEmbedder.floor
    related_floor = StandInEmbedder.related_floor
    dimensions = StandInEmbedder.dimensions

    def embed(self, texts: Sequence[str], kind: Kind) -> list[Vector]:
        raise EmbedderUnavailableError("the model is unreachable")


def answers(recall: RecallService, namespace: str = NS) -> list[dict[str, Any]]:
    return [
        recall.recall(
            namespace, RecallQuery.parse({**question, "as_of": AS_OF, "limit": 100}), stamp=False
        ).model_dump()
        for question in QUESTIONS
    ]


class Writer:
    """Random writes of every kind to one namespace, as another process would make them."""

    def __init__(self, engine: Engine, table: str, seed: int) -> None:
        self.engine, self.table = engine, table
        self.store = engine.memories(table)
        clock = FakeClock()
        self.service = MemoryService(self.store, clock, indexer=RecallIndexer(STAND_IN))
        self.waiting = MemoryService(self.store, clock, indexer=RecallIndexer(Outage()))
        self.random = random.Random(seed)

    def text(self) -> str:
        return " ".join(self.random.sample(WORDS, 3))

    def new(self) -> NewMemory:
        tags = self.random.sample(TAGS, self.random.randint(0, 2))
        return NewMemory.parse({"content": self.text(), "tags": tags, "memory_type": self.random.choice(TYPES)})

    def ids(self, *statuses: str) -> list[int]:
        found = self.store.recall_candidates(NS, RecallQuery.parse({"query": "x"}))
        deleted = self.store.recall_candidates(NS, RecallQuery.parse({"query": "x", "status": "deleted"}))
        pool = {"deleted": [c.memory_id for c in deleted], "live": [c.memory_id for c in found]}
        return sorted(memory_id for status in statuses for memory_id in pool[status])

    def step(self) -> str:
        kinds = ["create"] * 4 + ["update", "status", "delete", "restore", "supersede", "purge", "waiting", "backfill"]
        kind = self.random.choice(kinds)
        live, deleted = self.ids("live"), self.ids("deleted")
        try:
            if kind == "create" or (not live and kind != "waiting"):
                self.service.create(NS, self.new())
            elif kind == "waiting":
                self.waiting.create(NS, self.new())
            else:
                self.change(kind, live, deleted)
        except DomainError:
            pass  # a refused write (a memory already in that state) changes nothing: still compared
        return kind

    def change(self, kind: str, live: list[int], deleted: list[int]) -> None:
        if kind == "update":
            tags = self.random.sample(TAGS, self.random.randint(0, 2))
            changes = MemoryChanges.parse({"content": self.text(), "tags": tags})
            self.service.update(NS, self.random.choice(live), changes)
        elif kind == "status":
            status = self.random.choice(["invalid", "active"])
            self.service.update(NS, self.random.choice(live), MemoryChanges.parse({"status": status}))
        elif kind == "delete":
            self.service.delete(NS, self.random.choice(live))
        elif kind == "restore" and deleted:
            self.service.restore(NS, self.random.choice(deleted))
        elif kind == "supersede" and len(live) > 1:
            newer, *older = self.random.sample(live, min(3, len(live)))
            self.service.update(NS, newer, MemoryChanges.parse({"status": "active"}))
            self.service.supersede(NS, newer, older)
        elif kind == "purge" and deleted:
            self.service.purge(NS, self.random.choice(deleted))
        elif kind == "backfill":
            Backfill(self.store, STAND_IN).run()

    def erase(self) -> None:
        """`agent-memory namespace erase`."""
        if self.engine.client is None:
            self.engine.tables[self.table][0].erase(NS)
        else:
            Namespaces(self.engine.client, self.table).erase(NS, lambda _: None)

    def import_(self, count: int) -> None:
        """`agent-memory import` into the (empty) namespace; on DynamoDB, the one store that imports."""
        text = synthetic_export(NS, count)
        memories = [parse_line(line, n) for n, line in enumerate(text.splitlines()[1:], start=2)]
        namespaces = Namespaces(self.engine.client, self.table)
        namespaces.begin_import(NS, "0" * 64)
        namespaces.load(NS, memories, lambda _: None, RecallIndexer(STAND_IN))
        namespaces.finish_import(NS, memories)


@pytest.mark.parametrize("seed", [1, 2])
def test_a_warm_recall_returns_what_a_cold_one_does_through_every_kind_of_write(engine: Engine, seed: int) -> None:
    table = engine.new_table()
    writer = Writer(engine, table, seed)
    store = engine.memories(table)
    warm = RecallService(store, STAND_IN)  # one process's, kept across every step
    done = []
    for step in range(36):
        done.append(writer.step())
        if step == 24:
            writer.erase()  # and the ids start again at 1
            done.append("erase")
            if engine.client is not None:
                writer.import_(20)
                done.append("import")
        if step % 3 == 0 or step in (24, 25):
            cold = answers(RecallService(store, STAND_IN, warm_bytes=0))
            assert answers(warm) == cold, done
            assert answers(RecallService(store, STAND_IN)) == cold, done  # a new process: its first copy
    assert {"create", "update", "delete", "purge", "backfill"} <= set(done)


def test_an_erased_namespace_s_copy_is_gone_and_a_namespace_started_again_is_read_anew(engine: Engine) -> None:
    table = engine.new_table()
    writer = Writer(engine, table, 3)
    store = engine.memories(table)
    warm = RecallService(store, STAND_IN)
    question = RecallQuery.parse({"query": "tea garden", "as_of": AS_OF, "limit": 3})
    for _ in range(30):
        writer.service.create(NS, NewMemory.parse({"content": "tea garden"}))
    assert warm.recall(NS, question, stamp=False).total == 30

    writer.erase()
    writer.service.create(NS, NewMemory.parse({"content": "a new tea garden"}))

    # A copy that kept the erased memories would count them: only the three it reads the records of are left out.
    page = warm.recall(NS, question, stamp=False)
    assert (page.total, [(item.memory.id, item.memory.content) for item in page.items]) == (
        1,
        [(1, "a new tea garden")],
    )


def test_a_namespace_s_copy_does_not_answer_for_another(engine: Engine) -> None:
    table = engine.new_table()
    writer = Writer(engine, table, 4)
    warm = RecallService(engine.memories(table), STAND_IN)
    writer.service.create(NS, NewMemory.parse({"content": "tea garden"}))
    writer.service.create(OTHER, NewMemory.parse({"content": "garden tea job"}))

    assert answers(warm)[0]["total"] == 1
    assert answers(warm, OTHER)[0]["total"] == 1
    writer.service.delete(OTHER, 1)
    assert (answers(warm)[0]["total"], answers(warm, OTHER)[0]["total"]) == (1, 0)


class Calls:
    """The calls a client sends, by operation, with their parameters."""

    def __init__(self, engine: Engine) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []
        engine.client.meta.events.register("before-parameter-build.dynamodb.*", self._record)

    def _record(self, model: Any, params: dict[str, Any], **_: Any) -> None:
        self.sent.append((model.name, dict(params)))

    def digests_read(self) -> tuple[int, list[int]]:
        """The Queries of digests sent (a whole read), and the digests read by key."""
        queries = sum(
            1
            for name, params in self.sent
            if name == "Query" and "IndexName" not in params and DIGEST_PREFIX in str(params)
        )
        keys = [
            int(key["sk"]["S"][len(DIGEST_PREFIX) :])
            for name, params in self.sent
            if name == "BatchGetItem"
            for wanted in params["RequestItems"].values()
            for key in wanted["Keys"]
            if key["sk"]["S"].startswith(DIGEST_PREFIX)
        ]
        return queries, sorted(keys)


def test_a_warm_recall_reads_the_changes_and_the_digests_that_changed_never_the_namespace(
    ddb_local_engine: Engine,
) -> None:
    table = ddb_local_engine.new_table()
    writer = Writer(ddb_local_engine, table, 5)
    writer.import_(300)
    warm = RecallService(ddb_local_engine.memories(table), STAND_IN)
    calls = Calls(ddb_local_engine)
    question = RecallQuery.parse({"query": "tea garden", "limit": 10})
    warm.recall(NS, question, stamp=False)
    assert calls.digests_read()[0] >= 1  # the first recall of this process reads the namespace whole

    calls.sent.clear()
    warm.recall(NS, question, stamp=False)
    assert calls.digests_read() == (0, [])
    assert [name for name, params in calls.sent if "IndexName" in params] == ["Query"]  # the changes, by index

    for memory_id in (7, 42, 251):
        writer.service.update(NS, memory_id, MemoryChanges.parse({"content": "tea garden, changed"}))
    writer.service.delete(NS, 8)
    calls.sent.clear()
    warm.recall(NS, question, stamp=False)
    assert calls.digests_read() == (0, [7, 8, 42, 251])


SEARCHES: tuple[dict[str, Any], ...] = (
    {"q": "tea"},
    {"q": "GARDEN", "sort": "updated_at", "limit": 5, "offset": 2},
    {"q": "e", "status": "invalid", "sort": "created_at"},
    {"q": "o", "status": "deleted"},
    {"q": "an", "tag": "work", "memory_type": "preference", "limit": 3},
)


def searched(store: StoredMemories) -> list[tuple[int, list[dict[str, Any]]]]:
    found = [store.find(NS, RetrievalQuery.parse(search)) for search in SEARCHES]
    return [(matches.total, [memory.model_dump() for memory in matches.items]) for matches in found]


@pytest.mark.parametrize("seed", [6, 7])
def test_a_q_search_from_a_warm_copy_finds_what_a_cold_one_does_through_every_kind_of_write(
    ddb_local_engine: Engine, seed: int
) -> None:
    table = ddb_local_engine.new_table()
    writer = Writer(ddb_local_engine, table, seed)
    warm = DynamoDBMemoryRepository(ddb_local_engine.client, table)  # one process's, kept across every step
    done = []
    for step in range(30):
        done.append(writer.step())
        if step == 20:
            writer.erase()
            writer.import_(25)
            done += ["erase", "import"]
        if step % 3 == 0 or step in (20, 21):
            cold = searched(DynamoDBMemoryRepository(ddb_local_engine.client, table, warm_search_bytes=0))
            assert searched(warm) == cold, done
            assert searched(DynamoDBMemoryRepository(ddb_local_engine.client, table)) == cold, done
