"""A memory's whole life on every store (in memory, Amazon DynamoDB Local): each change leaves one revision, a
restore brings back the status before the delete, a purge (on request or after the retention window, driven by an
injected clock) removes everything of the memory and keeps the totals exact."""

from __future__ import annotations

import io
import time
from datetime import timedelta
from typing import Any

import pytest
from botocore.awsrequest import AWSResponse

from core.contract import RetrievalQuery
from core.errors import MemoryNotFoundError, StorageUnavailableError, VersionMismatchError
from core.history import HistoryQuery
from core.memories import MemoryService
from core.model import IdempotentCreate, MemoryChanges, NewMemory
from local.purging import start_purging
from tests.conftest import Engine, FakeClock
from tests.copies import assert_copies_mirror, scan
from tests.threads import all_ended, threads_started

NS = "alice"
KEY = "0123456789ab"
RETENTION = timedelta(days=30)


def new(content: str = "The user keeps bees", **fields: Any) -> NewMemory:
    return NewMemory.parse({"content": content, **fields})


def history(service: MemoryService, memory_id: int, **paging: Any) -> Any:
    return service.history(NS, memory_id, HistoryQuery.parse(paging))


def total(service: MemoryService, **filters: Any) -> int:
    return service.search(NS, RetrievalQuery.parse(filters)).total


def test_every_change_leaves_one_revision_newest_first_with_the_record_after_it(service: MemoryService) -> None:
    created = service.create(NS, new(tags=["garden"]), key_id=KEY)
    updated = service.update(NS, created.id, MemoryChanges.parse({"content": "The user keeps wasps"}), key_id=KEY)
    service.update(NS, created.id, MemoryChanges.parse({"status": "invalid", "tags": ["pests"]}))
    service.delete(NS, created.id, key_id="ba9876543210")
    restored = service.restore(NS, created.id, key_id=KEY)

    page = history(service, created.id)

    assert [(r.revision, r.change, r.version, r.status) for r in page.items] == [
        (5, "restored", 3, "invalid"),
        (4, "deleted", 3, "deleted"),
        (3, "updated", 3, "invalid"),
        (2, "updated", 2, "active"),
        (1, "created", 1, "active"),
    ]
    assert [r.key_id for r in page.items] == [KEY, "ba9876543210", None, KEY, KEY]
    assert (page.total, page.has_more) == (5, False)
    first, second = page.items[-1], page.items[-2]
    assert first.memory() == created
    assert (second.content, second.tags, second.updated_at) == (updated.content, ["garden"], updated.updated_at)
    assert first.changed_at == created.created_at
    assert second.changed_at == updated.updated_at
    assert page.items[0].memory() == restored.model_copy(update={"last_accessed_at": None})
    assert page.items[0].changed_at > page.items[1].changed_at > updated.updated_at


def test_history_pages_like_a_retrieval_with_an_exact_total(service: MemoryService) -> None:
    created = service.create(NS, new("v1"))
    for n in range(2, 8):
        service.update(NS, created.id, MemoryChanges.parse({"content": f"v{n}"}))

    pages = [history(service, created.id, limit=3, offset=offset) for offset in (0, 3, 6, 7, 50)]

    assert [[r.content for r in page.items] for page in pages] == [
        ["v7", "v6", "v5"],
        ["v4", "v3", "v2"],
        ["v1"],
        [],
        [],
    ]
    assert {page.total for page in pages} == {7}
    assert [page.has_more for page in pages] == [True, True, False, False, False]
    assert history(service, created.id, limit=500).limit == 100


def test_a_write_that_changes_nothing_or_is_refused_leaves_no_revision(service: MemoryService) -> None:
    created = service.create(NS, new())
    service.update(NS, created.id, MemoryChanges.parse({"content": created.content}))
    with pytest.raises(VersionMismatchError):
        service.update(NS, created.id, MemoryChanges.parse({"content": "other"}), expected_version=7)
    service.delete(NS, created.id)
    with pytest.raises(MemoryNotFoundError):
        service.delete(NS, created.id)
    with pytest.raises(MemoryNotFoundError):
        service.update(NS, created.id, MemoryChanges.parse({"content": "other"}))

    assert [r.change for r in history(service, created.id).items] == ["deleted", "created"]


def test_history_is_404_for_an_id_never_created_or_of_another_namespace_and_does_not_stamp(
    service: MemoryService, repository: Any
) -> None:
    created = service.create(NS, new())
    with pytest.raises(MemoryNotFoundError):
        history(service, created.id + 1)
    with pytest.raises(MemoryNotFoundError):
        service.history("bob", created.id, HistoryQuery.parse({}))

    history(service, created.id)

    assert repository.get(NS, created.id).last_accessed_at is None


def test_a_restore_brings_back_the_status_before_the_delete_and_keeps_version_and_updated_at(
    service: MemoryService,
) -> None:
    wrong = service.create(NS, new("wrong", status="invalid", tags=["t"], memory_type="event"))
    right = service.create(NS, new("right", tags=["t"]))
    service.delete(NS, wrong.id)
    service.delete(NS, right.id)
    assert (total(service), total(service, status="deleted"), total(service, tag="t")) == (0, 2, 0)

    restored = service.restore(NS, wrong.id)

    unstamped = {"last_accessed_at": None}  # the deleted listing above stamped them
    assert restored.model_copy(update=unstamped) == wrong
    assert restored.last_accessed_at is not None
    assert service.restore(NS, right.id).model_copy(update=unstamped) == right
    assert (total(service), total(service, status="deleted")) == (2, 0)
    assert total(service, tag="t", status="invalid", memory_type="event") == 1
    assert [m.id for m in service.search(NS, RetrievalQuery.parse({"tag": "t", "sort": "updated_at"})).items] == [
        right.id,
        wrong.id,
    ]


def test_a_restore_is_404_for_a_missing_an_active_or_a_purged_memory(service: MemoryService) -> None:
    active = service.create(NS, new())
    purged = service.create(NS, new())
    service.delete(NS, purged.id)
    service.purge(NS, purged.id)

    for memory_id, reason in [(99, "does not exist"), (active.id, "is not deleted"), (purged.id, "does not exist")]:
        with pytest.raises(MemoryNotFoundError, match=reason):
            service.restore(NS, memory_id)
    assert service.get(NS, active.id).status == "active"


def test_a_purge_needs_a_deleted_memory_and_then_removes_it_for_good(service: MemoryService) -> None:
    kept = service.create(NS, new("kept", tags=["t"]))
    gone = service.create(NS, new("gone", tags=["t", "u"]))
    with pytest.raises(MemoryNotFoundError, match="is not deleted"):
        service.purge(NS, gone.id)
    service.delete(NS, gone.id)

    service.purge(NS, gone.id)

    for read in (service.get, service.restore, service.purge):
        with pytest.raises(MemoryNotFoundError):
            read(NS, gone.id)
    with pytest.raises(MemoryNotFoundError):
        history(service, gone.id)
    assert (total(service), total(service, status="deleted")) == (1, 0)
    assert (total(service, tag="t"), total(service, tag="u", status="deleted")) == (1, 0)
    assert service.get(NS, kept.id).content == "kept"
    assert service.create(NS, new()).id == gone.id + 1  # ids are never reused


def test_the_sweep_purges_exactly_the_memories_deleted_longer_than_the_window_ago(
    service: MemoryService, clock: FakeClock
) -> None:
    old, restored, recent, active = (service.create(NS, new(f"m{n}", tags=["t"])) for n in range(4))
    service.delete(NS, old.id)
    service.delete(NS, restored.id)
    clock.advance(days=10)
    service.restore(NS, restored.id)
    service.delete(NS, recent.id)
    clock.advance(days=21)  # old: deleted 31 days ago; recent: 21 days ago

    assert service.purge_expired(RETENTION) == 1
    assert service.purge_expired(RETENTION) == 0

    with pytest.raises(MemoryNotFoundError):
        history(service, old.id)
    assert [service.get(NS, m.id).id for m in (restored, active)] == [restored.id, active.id]
    assert service.restore(NS, recent.id).id == recent.id
    assert (total(service), total(service, status="deleted"), total(service, tag="t")) == (3, 0, 3)


def test_a_create_retried_after_its_memory_was_purged_creates_anew(service: MemoryService) -> None:
    body = new()
    idempotent = IdempotentCreate.of("retry-1", body, "Idempotency-Key")
    first = service.create(NS, body, idempotent)
    service.delete(NS, first.id)
    service.purge(NS, first.id)

    again = service.create(NS, body, idempotent)

    assert again.id != first.id
    assert service.get(NS, again.id).content == body.content


# --- what DynamoDB holds -------------------------------------------------------------------------------------


def keys_of(engine: Engine, table: str, memory_id: int) -> list[tuple[str, str]]:
    """Every item of the table that belongs to the memory: itself, its revisions, its tag copies."""
    marks = (f"MEM#{memory_id:010d}", f"REV#{memory_id:010d}#")
    return sorted(
        (item["pk"]["S"], item["sk"]["S"]) for item in scan(engine, table) if item["sk"]["S"].startswith(marks)
    )


def test_a_purge_leaves_no_item_of_the_memory_in_the_table(
    ddb_local_engine: Engine, ddb_local_table: str, ddb_local_service: MemoryService
) -> None:
    body = new(tags=["t", "u"])
    gone = ddb_local_service.create(NS, body, IdempotentCreate.of("k", body, "Idempotency-Key"))
    kept = ddb_local_service.create(NS, new(tags=["t"]))
    for n in range(30):  # more revisions than one batch of deletes
        ddb_local_service.update(NS, gone.id, MemoryChanges.parse({"content": f"v{n}"}))
    ddb_local_service.delete(NS, gone.id)
    assert len(keys_of(ddb_local_engine, ddb_local_table, gone.id)) == 1 + 32 + 2

    ddb_local_service.purge(NS, gone.id)

    assert keys_of(ddb_local_engine, ddb_local_table, gone.id) == []
    assert not [item for item in scan(ddb_local_engine, ddb_local_table) if item["sk"]["S"].startswith("IDEM#")]
    assert len(keys_of(ddb_local_engine, ddb_local_table, kept.id)) == 3
    assert_copies_mirror(ddb_local_engine, ddb_local_table, NS)


def test_a_purge_interrupted_after_it_began_hides_the_memory_and_is_finished_by_the_next(
    ddb_local_engine: Engine, ddb_local_table: str, ddb_local_service: MemoryService, clock: FakeClock
) -> None:
    gone = ddb_local_service.create(NS, new(tags=["t"]))
    ddb_local_service.delete(NS, gone.id)
    # What a purge that stopped after marking the memory (and deleting some revisions) leaves.
    client, key = ddb_local_engine.client, {"pk": {"S": f"NS#{NS}"}, "sk": {"S": f"MEM#{gone.id:010d}"}}
    client.update_item(
        TableName=ddb_local_table,
        Key=key,
        UpdateExpression="SET purging = :t",
        ExpressionAttributeValues={":t": {"BOOL": True}},
    )
    client.delete_item(TableName=ddb_local_table, Key={**key, "sk": {"S": f"REV#{gone.id:010d}#{1:010d}"}})

    with pytest.raises(MemoryNotFoundError):
        history(ddb_local_service, gone.id)
    with pytest.raises(MemoryNotFoundError):
        ddb_local_service.restore(NS, gone.id)
    clock.advance(days=31)
    assert ddb_local_service.purge_expired(RETENTION) == 1

    assert keys_of(ddb_local_engine, ddb_local_table, gone.id) == []
    assert total(ddb_local_service, status="deleted") == 0
    assert_copies_mirror(ddb_local_engine, ddb_local_table, NS)


# --- where the purge runs ------------------------------------------------------------------------------------


def test_serve_purges_in_the_background_what_is_past_the_window(
    memory_service: MemoryService, clock: FakeClock
) -> None:
    gone = memory_service.create(NS, new())
    kept = memory_service.create(NS, new())
    memory_service.delete(NS, gone.id)
    clock.advance(days=31)
    memory_service.delete(NS, kept.id)

    stop = start_purging(memory_service, RETENTION, timedelta(milliseconds=10))
    try:
        deadline = time.monotonic() + 30  # ends at once when done; long only on a loaded machine
        while total(memory_service, status="deleted") > 1 and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        stop()

    assert [m.id for m in memory_service.search(NS, RetrievalQuery.parse({"status": "deleted"})).items] == [kept.id]


def test_a_failed_background_purge_is_reported_and_tried_again(capsys: pytest.CaptureFixture[str]) -> None:
    class Flaky:
        calls = 0

        def purge_expired(self, retention: timedelta) -> int:
            self.calls += 1
            if self.calls == 1:
                raise StorageUnavailableError("storage could not be reached; retry shortly")
            return 2

    flaky = Flaky()
    with threads_started() as purging:
        stop = start_purging(flaky, RETENTION, timedelta(milliseconds=10))  # type: ignore[arg-type]
    deadline = time.monotonic() + 30  # ends at once when done; long only on a loaded machine
    while flaky.calls < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    stop()
    assert purging  # the thread that purged ...
    assert all_ended(purging)  # ... has ended when stop returns: no run can come after it

    captured = capsys.readouterr()
    assert "purge of deleted memories failed" in captured.err
    assert "storage could not be reached" in captured.err
    assert "purged 2 memories deleted more than 30 days ago" in captured.out


def test_a_change_storage_refused_leaves_no_revision_and_a_retry_leaves_one(
    ddb_local_engine: Engine, ddb_local_service: MemoryService
) -> None:
    created = ddb_local_service.create(NS, new())
    events = ddb_local_engine.client.meta.events

    def throttled(request: Any, **_: Any) -> AWSResponse:
        body = b'{"__type":"com.amazonaws.dynamodb.v20120810#ThrottlingException","message":"injected"}'
        raw = io.BytesIO(body)
        raw.stream = lambda **_: iter([body])  # type: ignore[attr-defined]
        return AWSResponse(request.url, 400, {"x-amzn-ErrorType": "ThrottlingException"}, raw)  # type: ignore[arg-type]

    events.register_first("before-send.dynamodb.TransactWriteItems", throttled)
    try:
        with pytest.raises(StorageUnavailableError):
            ddb_local_service.update(NS, created.id, MemoryChanges.parse({"content": "lost"}))
        with pytest.raises(StorageUnavailableError):
            ddb_local_service.delete(NS, created.id)
    finally:
        events.unregister("before-send.dynamodb.TransactWriteItems", throttled)

    assert [r.change for r in history(ddb_local_service, created.id).items] == ["created"]
    ddb_local_service.update(NS, created.id, MemoryChanges.parse({"content": "landed"}))
    assert [(r.change, r.content) for r in history(ddb_local_service, created.id).items] == [
        ("updated", "landed"),
        ("created", created.content),
    ]
