"""Whether a failed write may have happened: a write refused before storage acted on it (throttled, unreachable)
surely did not, one that failed after it was sent (no answer in time, a lost connection, a server error) may have,
and the adapter says which by exception class and error code, for any attempt botocore made of it. A read, an
access stamp and an id drawn are never writes a caller asked for: their failures are plainly unavailable."""

from __future__ import annotations

import types
from typing import Any

import botocore.endpoint
import pytest
from botocore.awsrequest import AWSResponse
from botocore.exceptions import EndpointConnectionError, ReadTimeoutError

from adapters.dynamodb import DynamoDBMemoryRepository
from core import writes
from core.errors import StorageUnavailableError, WriteOutcomeUnknownError
from core.model import Memory, MemoryChanges
from tests.conftest import NAMESPACE, Engine
from tests.faults import error_answer

LATER = "2026-04-06T14:13:00.000000Z"


class Attempts:
    """Answers each attempt of one operation, before moto sees it, as `fates` says in turn (then lets it through):
    "timeout" (no answer in time after it was sent), "unreachable" (no connection made), or a DynamoDB error code."""

    def __init__(self, client: Any, operation: str, *fates: str) -> None:
        self.fates = list(fates)
        self.made = 0
        client.meta.events.register_first(f"before-send.dynamodb.{operation}", self._send)

    def _send(self, request: Any, **_: Any) -> AWSResponse | None:
        self.made += 1
        if not self.fates:
            return None
        fate = self.fates.pop(0)
        if fate == "timeout":
            raise ReadTimeoutError(endpoint_url=request.url)
        if fate == "unreachable":
            raise EndpointConnectionError(endpoint_url=request.url)
        return error_answer(request, fate, 500 if fate in ("InternalServerError", "ServiceUnavailable") else 400)


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """botocore's backoffs between attempts, not slept: these tests hold what each attempt answered, not seconds."""
    monkeypatch.setattr(botocore.endpoint, "time", types.SimpleNamespace(sleep=lambda seconds: None))


@pytest.fixture
def repository(moto_engine: Engine, moto_table: str) -> DynamoDBMemoryRepository:
    return DynamoDBMemoryRepository(moto_engine.client, moto_table)


def memory(memory_id: int) -> Memory:
    at = "2026-04-06T14:12:00.000000Z"
    return Memory(
        id=memory_id, content="x", tags=[], created_at=at, updated_at=at, last_accessed_at=None,
        memory_type="fact", status="active", version=1,
    )  # fmt: skip


@pytest.mark.parametrize(
    "fates",
    [
        ("timeout", "timeout", "timeout"),
        ("InternalServerError",) * 3,
        ("ServiceUnavailable",) * 3,
        ("timeout", "ThrottlingException", "ThrottlingException"),
        ("unreachable", "timeout", "unreachable"),
    ],
    ids=["timed-out", "server-error", "service-unavailable", "timed-out-then-throttled", "one-attempt-timed-out"],
)
def test_a_create_whose_write_was_sent_and_never_confirmed_may_have_happened(
    moto_engine: Engine, repository: DynamoDBMemoryRepository, fates: tuple[str, ...]
) -> None:
    attempts = Attempts(moto_engine.client, "TransactWriteItems", *fates)

    with pytest.raises(WriteOutcomeUnknownError) as raised:
        writes.add(repository, NAMESPACE, memory(1))

    assert attempts.made == 3
    assert "may have happened" in str(raised.value)
    assert raised.value.retry_after_seconds >= 1


@pytest.mark.parametrize(
    "fates",
    [("ThrottlingException",) * 3, ("ProvisionedThroughputExceededException",) * 3, ("unreachable",) * 3],
    ids=["throttled", "over-capacity", "unreachable"],
)
def test_a_create_refused_before_storage_acted_on_it_surely_stored_nothing(
    moto_engine: Engine, repository: DynamoDBMemoryRepository, fates: tuple[str, ...]
) -> None:
    Attempts(moto_engine.client, "TransactWriteItems", *fates)

    with pytest.raises(StorageUnavailableError) as raised:
        writes.add(repository, NAMESPACE, memory(1))

    assert not isinstance(raised.value, WriteOutcomeUnknownError)


def test_a_change_whose_transaction_times_out_may_have_happened(
    moto_engine: Engine, repository: DynamoDBMemoryRepository
) -> None:
    writes.add(repository, NAMESPACE, memory(1))
    Attempts(moto_engine.client, "TransactWriteItems", *["timeout"] * 6)

    with pytest.raises(WriteOutcomeUnknownError):
        writes.apply(repository, NAMESPACE, 1, MemoryChanges.parse({"content": "y"}), None, LATER)
    with pytest.raises(WriteOutcomeUnknownError):
        writes.delete(repository, NAMESPACE, 1, LATER)


def test_a_read_that_times_out_is_plainly_unavailable(
    moto_engine: Engine, repository: DynamoDBMemoryRepository
) -> None:
    Attempts(moto_engine.client, "BatchGetItem", "timeout", "timeout", "timeout")

    with pytest.raises(StorageUnavailableError) as raised:
        repository.get(NAMESPACE, 1)

    assert not isinstance(raised.value, WriteOutcomeUnknownError)


def test_a_read_whose_access_stamp_times_out_is_plainly_unavailable(
    moto_engine: Engine, repository: DynamoDBMemoryRepository
) -> None:
    writes.add(repository, NAMESPACE, memory(1))
    Attempts(moto_engine.client, "UpdateItem", "timeout", "timeout", "timeout")

    with pytest.raises(StorageUnavailableError) as raised:
        repository.read(NAMESPACE, 1, LATER)

    assert not isinstance(raised.value, WriteOutcomeUnknownError)


def test_an_id_drawn_without_an_answer_is_plainly_unavailable_for_the_create_stored_nothing(
    moto_engine: Engine, repository: DynamoDBMemoryRepository
) -> None:
    repository.next_id(NAMESPACE)
    Attempts(moto_engine.client, "UpdateItem", "timeout", "timeout", "timeout")

    with pytest.raises(StorageUnavailableError) as raised:
        repository.next_id(NAMESPACE)

    assert not isinstance(raised.value, WriteOutcomeUnknownError)


def test_a_namespaces_first_id_drawn_without_an_answer_is_plainly_unavailable(
    moto_engine: Engine, repository: DynamoDBMemoryRepository
) -> None:
    Attempts(moto_engine.client, "TransactWriteItems", "timeout", "timeout", "timeout")  # the counter's first put

    with pytest.raises(StorageUnavailableError) as raised:
        repository.next_id(NAMESPACE)

    assert not isinstance(raised.value, WriteOutcomeUnknownError)
    assert str(raised.value) == "storage failed (no answer in time); retry shortly"
