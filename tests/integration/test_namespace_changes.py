"""A namespace's changes (GET /changes) on every store (in memory, Amazon DynamoDB Local): every memory's revisions
since a moment, newest first, each naming its change, its time and its key, paged as retrieval pages, and gone with a
purged memory."""

from __future__ import annotations

from typing import Any

from core.clock import format_timestamp, utc_now
from core.history import ChangesPage, ChangesQuery
from core.memories import MemoryService
from core.model import MemoryChanges, NewMemory
from tests.conftest import INDEXER, StoredMemories

NS = "alice"
AGENT = "0123456789ab"
PERSON = "ba9876543210"


def new(content: str, **fields: Any) -> NewMemory:
    return NewMemory.parse({"content": content, **fields})


def changes(service: MemoryService, namespace: str = NS, **fields: Any) -> ChangesPage:
    return service.changes(namespace, ChangesQuery.parse(fields))


def test_every_change_of_the_namespace_is_listed_newest_first_with_its_key(service: MemoryService) -> None:
    bees = service.create(NS, new("The user keeps bees"), key_id=AGENT)
    wasps = service.create(NS, new("The user keeps wasps"), key_id=AGENT)
    service.update(NS, bees.id, MemoryChanges.parse({"tags": ["garden"]}), key_id=PERSON)
    service.delete(NS, wasps.id, key_id=PERSON)
    service.restore(NS, wasps.id, key_id=AGENT)
    hives = service.create(NS, new("The user keeps hives"), key_id=AGENT)
    service.supersede(NS, hives.id, [bees.id], key_id=AGENT)
    service.create("bob", new("Bob's own memory"), key_id=AGENT)

    page = changes(service)

    assert [(r.id, r.change, r.key_id) for r in page.items] == [
        (bees.id, "superseded", AGENT),
        (hives.id, "created", AGENT),
        (wasps.id, "restored", AGENT),
        (wasps.id, "deleted", PERSON),
        (bees.id, "updated", PERSON),
        (wasps.id, "created", AGENT),
        (bees.id, "created", AGENT),
    ]
    assert page.items[0].superseded_by == hives.id
    assert (page.items[0].status, page.items[0].version) == ("invalid", 3)
    assert (page.total, page.has_more, page.limit, page.offset) == (7, False, 10, 0)


def test_changes_page_as_retrieval_pages_and_a_purged_memory_takes_its_changes_with_it(
    service: MemoryService,
) -> None:
    kept = service.create(NS, new("The user likes tea"), key_id=AGENT)
    gone = service.create(NS, new("The user likes coffee"), key_id=AGENT)
    for n in range(3):
        service.update(NS, kept.id, MemoryChanges.parse({"content": f"The user likes tea, {n} cups"}), key_id=AGENT)
    service.delete(NS, gone.id, key_id=AGENT)

    first, second = changes(service, limit=2), changes(service, limit=2, offset=2)
    everything = changes(service, limit=100)
    service.purge(NS, gone.id, key_id=AGENT)
    after_purge = changes(service)

    assert [r.revision for r in first.items + second.items] == [r.revision for r in everything.items[:4]]
    assert (first.total, first.has_more, everything.total) == (6, True, 6)
    assert [(r.id, r.change) for r in after_purge.items] == [(kept.id, "updated")] * 3 + [(kept.id, "created")]
    assert after_purge.total == 4


def test_only_changes_at_or_after_since_are_listed_and_the_answer_says_which_moment_it_served(
    repository: StoredMemories,
) -> None:
    # The stores' own clock: the DynamoDB store logs a change at the moment its write is assembled.
    service = MemoryService(repository, indexer=INDEXER)
    before = service.create(NS, new("The user moved to Lyon"), key_id=AGENT)
    since = format_timestamp(utc_now())
    after = service.create(NS, new("The user moved to Porto"), key_id=AGENT)

    page = changes(service, since=since)
    default = changes(service)

    assert [(r.id, r.change) for r in page.items] == [(after.id, "created")]
    assert (page.total, page.since) == (1, since)
    assert [r.id for r in default.items] == [after.id, before.id]
    assert default.since < since
