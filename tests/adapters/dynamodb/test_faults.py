"""The adapter under injected DynamoDB faults: bounded retries, domain errors by code, no retried conditions."""

from __future__ import annotations

import itertools
import json
import types
from collections.abc import Iterator
from typing import Any

import botocore.endpoint
import pytest
from botocore.awsrequest import AWSResponse
from botocore.exceptions import ClientError, EndpointConnectionError

from adapters.dynamodb import TRANSACTION_ATTEMPTS, DynamoDBMemoryRepository
from adapters.dynamodb import stamps as stamps_module
from adapters.dynamodb import table as stored_module
from adapters.dynamodb.codec import CHANGE_INDEX, memory_partition
from adapters.dynamodb.stamps import BATCH_ATTEMPTS, Stamps
from adapters.dynamodb.table import BATCH_GET_ATTEMPTS, BATCH_WRITE_ATTEMPTS, Items
from core import writes
from core.contract import RetrievalQuery
from core.errors import (
    MemoryNotFoundError,
    StorageUnavailableError,
    TableMissingError,
    VersionMismatchError,
    WriteConflictError,
)
from core.model import IdempotentCreate, Memory, MemoryChanges, NewMemory
from core.writes import UPDATE_ATTEMPTS
from tests.conftest import NAMESPACE, Engine
from tests.faults import answer, error_answer


class Faults:
    """Answers the first `times` calls of one operation with a DynamoDB error, before moto sees them."""

    def __init__(self, client: Any, operation: str, code: str, times: int, **extra: Any) -> None:
        self.attempts = 0
        self.left = times
        self.code = code
        self.extra = extra
        client.meta.events.register_first(f"before-send.dynamodb.{operation}", self._send)

    def _send(self, request: Any, **_: Any) -> AWSResponse | None:
        self.attempts += 1
        if self.left <= 0:
            return None
        self.left -= 1
        return error_answer(request, self.code, **self.extra)


LATER = "2026-04-06T14:13:00.000000Z"


def memory(memory_id: int) -> Memory:
    at = "2026-04-06T14:12:00.000000Z"
    return Memory(
        id=memory_id, content="x", tags=[], created_at=at, updated_at=at, last_accessed_at=None,
        memory_type="fact", status="active", version=1,
    )  # fmt: skip


@pytest.fixture(autouse=True)
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The backoffs asked for between attempts (botocore's, and ours between batches and transactions), recorded
    instead of slept: these tests hold how often a call is tried and what it answers, not its seconds (about 12 s
    of sleeping in all; tests/core/test_storage_budget.py holds the seconds a request may take)."""
    asked: list[float] = []
    for module in (botocore.endpoint, stored_module, stamps_module):
        monkeypatch.setattr(module, "time", types.SimpleNamespace(sleep=asked.append))
    return asked


@pytest.fixture
def repository(moto_engine: Engine, moto_table: str) -> DynamoDBMemoryRepository:
    return DynamoDBMemoryRepository(moto_engine.client, moto_table)


@pytest.mark.parametrize("code", ["ProvisionedThroughputExceededException", "ThrottlingException"])
def test_throttling_is_retried_up_to_three_attempts_then_reported_unavailable(
    moto_engine: Engine, repository: DynamoDBMemoryRepository, code: str, waits: list[float]
) -> None:
    faults = Faults(moto_engine.client, "BatchGetItem", code, times=10)

    with pytest.raises(StorageUnavailableError) as raised:
        repository.get(NAMESPACE, 1)

    assert faults.attempts == 3
    assert len(waits) == 2  # a backoff before each retry
    assert raised.value.retry_after_seconds >= 1


def test_a_throttled_call_that_recovers_within_the_bound_succeeds(
    moto_engine: Engine, repository: DynamoDBMemoryRepository
) -> None:
    writes.add(repository, NAMESPACE, memory(1))
    faults = Faults(moto_engine.client, "BatchGetItem", "ThrottlingException", times=2)

    assert repository.get(NAMESPACE, 1) == memory(1)
    assert faults.attempts == 3


def test_a_server_error_is_reported_unavailable_not_raised_raw(
    moto_engine: Engine, repository: DynamoDBMemoryRepository
) -> None:
    Faults(moto_engine.client, "Query", "InternalServerError", times=10)

    with pytest.raises(StorageUnavailableError):
        repository.find(NAMESPACE, RetrievalQuery.parse({}))


def test_a_version_mismatch_is_answered_from_one_read_and_writes_nothing(
    moto_engine: Engine, repository: DynamoDBMemoryRepository
) -> None:
    writes.add(repository, NAMESPACE, memory(1))
    reads = Faults(moto_engine.client, "BatchGetItem", "ThrottlingException", times=0)
    transactions = Faults(moto_engine.client, "TransactWriteItems", "ThrottlingException", times=0)

    with pytest.raises(VersionMismatchError):
        writes.apply(repository, NAMESPACE, 1, MemoryChanges.parse({"content": "late"}), frozenset({2}), LATER)
    assert (reads.attempts, transactions.attempts) == (1, 0)


def test_a_throttled_create_reports_unavailable_and_its_id_is_never_reused(
    moto_engine: Engine, repository: DynamoDBMemoryRepository
) -> None:
    first = repository.next_id(NAMESPACE)
    Faults(moto_engine.client, "TransactWriteItems", "ThrottlingException", times=10)

    with pytest.raises(StorageUnavailableError):
        writes.add(repository, NAMESPACE, memory(first))

    # Whether the write landed is moto's business here (it applies a request even when a hook answers it).
    assert repository.next_id(NAMESPACE) == first + 1


def test_an_unreachable_store_is_reported_unavailable(
    moto_engine: Engine, repository: DynamoDBMemoryRepository
) -> None:
    def refuse(request: Any, **_: Any) -> None:
        raise EndpointConnectionError(endpoint_url=request.url)

    moto_engine.client.meta.events.register_first("before-send.dynamodb.BatchGetItem", refuse)

    with pytest.raises(StorageUnavailableError):
        repository.get(NAMESPACE, 1)


def test_a_stamp_failure_during_a_listing_is_reported_unavailable(
    moto_engine: Engine, repository: DynamoDBMemoryRepository
) -> None:
    writes.add(repository, NAMESPACE, memory(1))
    Faults(moto_engine.client, "BatchExecuteStatement", "ThrottlingException", times=10)

    with pytest.raises(StorageUnavailableError):
        repository.stamp(NAMESPACE, [1], "2026-04-06T14:13:00.000000Z")


def test_a_recall_s_stamps_refused_are_reported_unavailable(
    moto_engine: Engine, repository: DynamoDBMemoryRepository
) -> None:
    for memory_id in (1, 2):
        writes.add(repository, NAMESPACE, memory(memory_id))
    faults = Faults(moto_engine.client, "UpdateItem", "ThrottlingException", times=10)

    with pytest.raises(StorageUnavailableError):
        repository.stamp_with_prior(NAMESPACE, [1, 2], "2026-04-06T14:13:00.000000Z")
    assert faults.attempts >= 2  # each memory's stamp was tried


def test_a_read_whose_stamp_is_refused_is_unavailable_and_leaves_no_call_of_it_running(
    moto_engine: Engine, repository: DynamoDBMemoryRepository
) -> None:
    writes.add(repository, NAMESPACE, memory(1))
    Faults(moto_engine.client, "UpdateItem", "ThrottlingException", times=10)
    reads = Faults(moto_engine.client, "GetItem", "ThrottlingException", times=0)

    with pytest.raises(StorageUnavailableError):
        repository.read(NAMESPACE, 1, LATER)
    # The record's read, sent with the stamp, has ended by the time the read answers.
    assert reads.attempts == 1


class ScriptedStatements:
    """A client whose BatchExecuteStatement answers each statement with the next code of `codes` (None: it
    succeeded), and records the statements of every call."""

    def __init__(self, codes: Iterator[str | None]) -> None:
        self._codes = codes
        self.calls: list[list[dict[str, Any]]] = []

    def batch_execute_statement(self, Statements: list[dict[str, Any]]) -> dict[str, Any]:  # noqa: N803
        self.calls.append(Statements)
        answers = []
        for _ in Statements:
            code = next(self._codes)
            answers.append({"Error": {"Code": code, "Message": "scripted"}} if code else {"TableName": "t"})
        return {"Responses": answers}


def stamps(client: Any) -> Stamps:
    """The stamps of table "memories" over `client`."""
    return Stamps(client, "memories", Items(client, "memories"))


def test_a_page_of_stamps_goes_in_batches_of_25_statements_each_keeping_its_own_condition() -> None:
    client = ScriptedStatements(itertools.repeat(None))

    stamps(client).stamp(NAMESPACE, list(range(1, 61)), LATER)

    assert sorted(len(statements) for statements in client.calls) == [10, 25, 25]
    stamped = sorted(int(s["Parameters"][2]["S"].removeprefix("A#")) for call in client.calls for s in call)
    assert stamped == list(range(1, 61))
    statement = client.calls[0][0]["Statement"]
    assert statement.startswith('UPDATE "memories" SET accessed_key = ? WHERE pk = ? AND sk = ?')
    assert statement.endswith("AND accessed_key < ?")  # never moves a stamp back, and finds no row to create


def test_a_failed_condition_is_a_row_stamped_later_or_never_stored_not_an_error() -> None:
    client = ScriptedStatements(iter(["ConditionalCheckFailed", None, "ConditionalCheckFailed"]))

    stamps(client).stamp(NAMESPACE, [1, 2, 3], LATER)

    assert len(client.calls) == 1


def test_statements_refused_for_a_passing_reason_are_sent_again_alone() -> None:
    client = ScriptedStatements(iter([None, "ThrottlingError", None, "TransactionConflict", None, None]))

    stamps(client).stamp(NAMESPACE, [1, 2, 3, 4], LATER)

    assert [len(statements) for statements in client.calls] == [4, 2]
    assert [s["Parameters"][2]["S"] for s in client.calls[1]] == ["A#0000000002", "A#0000000004"]


def test_statements_refused_on_every_attempt_are_storage_unavailable() -> None:
    client = ScriptedStatements(itertools.repeat("ProvisionedThroughputExceeded"))

    with pytest.raises(StorageUnavailableError, match="access stamps"):
        stamps(client).stamp(NAMESPACE, [1, 2], LATER)
    assert len(client.calls) == BATCH_ATTEMPTS


def test_a_stamp_statement_on_a_missing_table_is_table_missing() -> None:
    client = ScriptedStatements(itertools.repeat("ResourceNotFound"))

    with pytest.raises(TableMissingError):
        stamps(client).stamp(NAMESPACE, [1], LATER)


def test_a_stamp_statement_refused_for_any_other_reason_is_not_taken_for_a_passing_one() -> None:
    client = ScriptedStatements(itertools.repeat("AccessDenied"))

    with pytest.raises(RuntimeError, match="AccessDenied"):
        stamps(client).stamp(NAMESPACE, [1], LATER)
    assert len(client.calls) == 1


def conflict_at(action: int, actions: int = 3) -> dict[str, Any]:
    """A TransactionCanceledException's reasons: another transaction held action `action`'s item."""
    return {"CancellationReasons": [{"Code": "TransactionConflict" if i == action else "None"} for i in range(actions)]}


class CancelledTransactions:
    """A client whose first `times` transactions are cancelled with `reasons(actions)` before they reach the store
    (a wrapper, not a botocore hook: moto would apply a request a hook answered)."""

    def __init__(self, client: Any, times: int, reasons: Any = lambda actions: conflict_at(1, actions)) -> None:
        self._client = client
        self.left = times
        self.attempts = 0
        self._reasons = reasons

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def transact_write_items(self, **kwargs: Any) -> Any:
        self.attempts += 1
        if self.left > 0:
            self.left -= 1
            error = {"Error": {"Code": "TransactionCanceledException", "Message": "injected"}}
            reasons = self._reasons(len(kwargs["TransactItems"]))
            raise ClientError({**error, **reasons}, "TransactWriteItems")  # type: ignore[typeddict-item]
        return self._client.transact_write_items(**kwargs)


def failed_at(action: int) -> Any:
    return lambda actions: {
        "CancellationReasons": [{"Code": "ConditionalCheckFailed" if i == action else "None"} for i in range(actions)]
    }


def over(client: Any, moto_engine: Engine) -> DynamoDBMemoryRepository:
    return DynamoDBMemoryRepository(client, moto_engine.new_table())


def test_a_transaction_that_collides_is_retried_and_then_lands(moto_engine: Engine) -> None:
    client = CancelledTransactions(moto_engine.client, times=2)
    repository = over(client, moto_engine)

    writes.add(repository, NAMESPACE, memory(1))

    assert client.attempts == 3
    assert repository.get(NAMESPACE, 1) == memory(1)


class TimedAttempts(CancelledTransactions):
    """CancelledTransactions recording the change keys each attempt sends."""

    def __init__(self, client: Any, times: int) -> None:
        super().__init__(client, times)
        self.sent: list[list[str]] = []

    def transact_write_items(self, **kwargs: Any) -> Any:
        puts = [action["Put"]["Item"] for action in kwargs["TransactItems"] if "Put" in action]
        self.sent.append([item["change_key"]["S"] for item in puts if "change_key" in item])
        return super().transact_write_items(**kwargs)


def test_each_attempt_of_a_transaction_times_its_change_again_and_the_last_one_lands(moto_engine: Engine) -> None:
    # A change lands within one call of its timing (adapters.dynamodb.changes' window), however often it collided.
    client: Any = TimedAttempts(moto_engine.client, times=2)
    table = moto_engine.new_table()

    writes.add(DynamoDBMemoryRepository(client, table), NAMESPACE, memory(1))

    first, second, landed = client.sent
    assert len(first) == len(second) == len(landed) == 1
    assert first < second < landed
    stored = moto_engine.client.query(
        TableName=table,
        IndexName=CHANGE_INDEX,
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": memory_partition(NAMESPACE)},
    )["Items"]
    assert [item["change_key"]["S"] for item in stored] == landed


def test_a_create_that_keeps_colliding_on_its_totals_is_reported_unavailable(
    moto_engine: Engine, repository: DynamoDBMemoryRepository
) -> None:
    faults = Faults(moto_engine.client, "TransactWriteItems", "TransactionCanceledException", 10, **conflict_at(1, 2))

    with pytest.raises(StorageUnavailableError):
        writes.add(repository, NAMESPACE, memory(1))
    assert faults.attempts == TRANSACTION_ATTEMPTS


def test_an_identical_create_still_in_flight_is_a_conflict_to_retry_later(
    moto_engine: Engine, repository: DynamoDBMemoryRepository
) -> None:
    new = NewMemory.parse({"content": "x"})
    Faults(moto_engine.client, "TransactWriteItems", "TransactionCanceledException", 10, **conflict_at(2))

    with pytest.raises(WriteConflictError) as raised:
        writes.add(repository, NAMESPACE, memory(1), IdempotentCreate.of("k", new, "Idempotency-Key"))
    assert "Idempotency-Key is still in flight" in str(raised.value)
    assert raised.value.retry_after_seconds >= 1


def test_a_transaction_cancelled_without_reasons_is_not_mistaken_for_a_collision(
    moto_engine: Engine, repository: DynamoDBMemoryRepository
) -> None:
    faults = Faults(moto_engine.client, "TransactWriteItems", "TransactionCanceledException", 10)

    with pytest.raises(StorageUnavailableError):
        writes.add(repository, NAMESPACE, memory(1))
    assert faults.attempts == 1


def test_a_key_found_taken_but_gone_by_the_time_it_is_read_is_a_conflict_to_retry(moto_engine: Engine) -> None:
    # The key's record lapsed (and TTL removed it) between the failed condition and the read.
    repository = over(CancelledTransactions(moto_engine.client, 1, failed_at(2)), moto_engine)
    new = NewMemory.parse({"content": "x"})

    with pytest.raises(WriteConflictError):
        writes.add(repository, NAMESPACE, memory(1), IdempotentCreate.of("k", new, "Idempotency-Key"))


def test_a_delete_rereads_when_the_memory_changed_under_it_and_gives_up_after_the_bound(moto_engine: Engine) -> None:
    client = CancelledTransactions(moto_engine.client, 0, failed_at(0))
    repository = over(client, moto_engine)
    writes.add(repository, NAMESPACE, memory(1))
    writes.add(repository, NAMESPACE, memory(2))
    client.left, client.attempts = 1, 0

    writes.delete(repository, NAMESPACE, 1, LATER)
    assert client.attempts == 2
    client.left = 10
    with pytest.raises(WriteConflictError):
        writes.delete(repository, NAMESPACE, 2, LATER)
    assert repository.get(NAMESPACE, 2) == memory(2)


@pytest.mark.parametrize("operation", ["delete", "move"])
def test_a_delete_or_move_that_keeps_colliding_on_the_totals_is_reported_unavailable(
    moto_engine: Engine, operation: str
) -> None:
    client = CancelledTransactions(moto_engine.client, 0)
    repository = over(client, moto_engine)
    writes.add(repository, NAMESPACE, memory(1))
    client.left, client.attempts = 10, 0

    move = MemoryChanges.parse({"status": "invalid"})
    write = (
        (lambda: writes.delete(repository, NAMESPACE, 1, LATER))
        if operation == "delete"
        else (lambda: writes.apply(repository, NAMESPACE, 1, move, None, LATER))
    )
    with pytest.raises(StorageUnavailableError):
        write()
    assert client.attempts == TRANSACTION_ATTEMPTS
    assert repository.get(NAMESPACE, 1) == memory(1)


class ChangedUnderTheWrite:
    """A client that, before each of the first `times` transactions, lets another writer edit memory 1 first, so
    the transaction meets a newer version than the one it was computed from (the store's condition refuses it)."""

    def __init__(self, client: Any, other: DynamoDBMemoryRepository, times: int) -> None:
        self._client = client
        self._other = other
        self.left = times
        self.attempts = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def transact_write_items(self, **kwargs: Any) -> Any:
        self.attempts += 1
        if self.left > 0:
            self.left -= 1
            edit = MemoryChanges.parse({"content": f"concurrent {self.attempts}"})
            writes.apply(self._other, NAMESPACE, 1, edit, None, LATER)
        return self._client.transact_write_items(**kwargs)


def test_a_move_between_totals_rereads_when_the_memory_changed_under_it_and_keeps_the_other_write(
    moto_engine: Engine,
) -> None:
    table = moto_engine.new_table()
    other = DynamoDBMemoryRepository(moto_engine.client, table)
    client = ChangedUnderTheWrite(moto_engine.client, other, times=0)
    repository = DynamoDBMemoryRepository(client, table)  # type: ignore[arg-type]
    writes.add(repository, NAMESPACE, memory(1))
    client.left, client.attempts = 1, 0

    moved = writes.apply(repository, NAMESPACE, 1, MemoryChanges.parse({"memory_type": "event"}), None, LATER)

    assert client.attempts == 2
    assert (moved.content, moved.memory_type, moved.version) == ("concurrent 1", "event", 3)
    assert repository.get(NAMESPACE, 1) == moved


def test_a_move_between_totals_never_writes_over_a_version_it_was_not_computed_from(moto_engine: Engine) -> None:
    table = moto_engine.new_table()
    other = DynamoDBMemoryRepository(moto_engine.client, table)
    client = ChangedUnderTheWrite(moto_engine.client, other, times=0)
    repository = DynamoDBMemoryRepository(client, table)  # type: ignore[arg-type]
    writes.add(repository, NAMESPACE, memory(1))
    client.left, client.attempts = UPDATE_ATTEMPTS, 0

    with pytest.raises(WriteConflictError):
        writes.apply(repository, NAMESPACE, 1, MemoryChanges.parse({"memory_type": "event"}), None, LATER)

    assert client.attempts == UPDATE_ATTEMPTS
    stored = repository.get(NAMESPACE, 1)
    assert stored is not None
    assert (stored.content, stored.memory_type, stored.version) == (f"concurrent {UPDATE_ATTEMPTS}", "fact", 4)


def test_a_patch_admitting_several_versions_writes_only_while_one_of_them_is_current(moto_engine: Engine) -> None:
    table = moto_engine.new_table()
    other = DynamoDBMemoryRepository(moto_engine.client, table)
    client = ChangedUnderTheWrite(moto_engine.client, other, times=0)
    repository = DynamoDBMemoryRepository(client, table)  # type: ignore[arg-type]
    writes.add(repository, NAMESPACE, memory(1))
    client.left = 1

    # The read sees version 1, the write meets version 2: re-read, and version 2 is not admitted.
    with pytest.raises(VersionMismatchError) as raised:
        writes.apply(repository, NAMESPACE, 1, MemoryChanges.parse({"status": "invalid"}), frozenset({1, 5}), LATER)

    assert raised.value.current_version == 2


class Unprocessed:
    """Answers the first `times` BatchGetItem (or BatchWriteItem) calls with every request unprocessed, before moto
    sees them."""

    def __init__(self, client: Any, times: int, operation: str = "BatchGetItem") -> None:
        self.attempts = 0
        self.left = times
        self.unprocessed = "UnprocessedKeys" if operation == "BatchGetItem" else "UnprocessedItems"
        client.meta.events.register_first(f"before-send.dynamodb.{operation}", self._send)

    def _send(self, request: Any, **_: Any) -> AWSResponse | None:
        self.attempts += 1
        if self.left <= 0:
            return None
        self.left -= 1
        asked = json.loads(request.body)["RequestItems"]
        body = json.dumps({"Responses": {table: [] for table in asked}, self.unprocessed: asked}).encode()
        return answer(request, 200, body)


def tagged(memory_id: int) -> Memory:
    return memory(memory_id).model_copy(update={"tags": ["travel"]})


def test_reads_left_unprocessed_are_asked_for_again(moto_engine: Engine, repository: DynamoDBMemoryRepository) -> None:
    writes.add(repository, NAMESPACE, tagged(1))
    unprocessed = Unprocessed(moto_engine.client, times=2)

    found = repository.records(NAMESPACE, [1])  # the record and its access item, in one BatchGetItem

    assert unprocessed.attempts == 3
    assert [m.id for m in found] == [1]


def test_reads_left_unprocessed_every_time_are_reported_unavailable(
    moto_engine: Engine, repository: DynamoDBMemoryRepository
) -> None:
    writes.add(repository, NAMESPACE, tagged(1))
    unprocessed = Unprocessed(moto_engine.client, times=100)

    with pytest.raises(StorageUnavailableError):
        repository.records(NAMESPACE, [1])

    assert unprocessed.attempts == BATCH_GET_ATTEMPTS


def test_a_purges_deletes_left_unprocessed_are_sent_again_and_then_land(
    moto_engine: Engine, repository: DynamoDBMemoryRepository
) -> None:
    writes.add(repository, NAMESPACE, memory(1))
    writes.delete(repository, NAMESPACE, 1, LATER)
    unprocessed = Unprocessed(moto_engine.client, times=2, operation="BatchWriteItem")

    writes.purge(repository, NAMESPACE, 1)

    assert unprocessed.attempts == 3
    assert repository.get(NAMESPACE, 1) is None


def test_a_purge_whose_deletes_stay_unprocessed_is_unavailable_and_finished_by_the_next_one(
    moto_engine: Engine, repository: DynamoDBMemoryRepository, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("adapters.dynamodb.table.time.sleep", lambda seconds: None)  # the waits, not the count
    writes.add(repository, NAMESPACE, memory(1))
    writes.delete(repository, NAMESPACE, 1, LATER)
    unprocessed = Unprocessed(moto_engine.client, times=100, operation="BatchWriteItem")

    with pytest.raises(StorageUnavailableError):
        writes.purge(repository, NAMESPACE, 1)
    assert unprocessed.attempts == BATCH_WRITE_ATTEMPTS
    with pytest.raises(MemoryNotFoundError):  # its purge has begun: no history, no restore
        repository.history(NAMESPACE, 1, 10, 0)

    unprocessed.left = 0
    writes.purge(repository, NAMESPACE, 1)
    assert repository.get(NAMESPACE, 1) is None
