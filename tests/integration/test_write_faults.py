"""Writes under faults on Amazon DynamoDB Local: every write either lands whole or not at all.

Faults are injected in front of the real client, after botocore's own bounded retries: a write call fails either
before it is sent (nothing written) or after DynamoDB applied it (the response is lost, as on a timeout). Callers
retry as agents do, creates with their Idempotency-Key. Afterwards every memory, every total and the id counter
must be exactly what the successful operations say: no half record, no lost or duplicated memory, no reused id.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable
from typing import Any, TypeVar

from botocore.exceptions import ClientError

from adapters.dynamodb import DynamoDBMemoryRepository
from core.contract import RetrievalQuery
from core.errors import MemoryNotFoundError, StorageUnavailableError
from core.memories import MemoryService
from core.model import MEMORY_TYPES, IdempotentCreate, MemoryChanges, NewMemory
from tests.conftest import Engine, FakeClock
from tests.integration.test_totals_search_idempotency import assert_totals_match, stored

NS = "alice"
WRITES = frozenset({"put_item", "update_item", "transact_write_items"})
T = TypeVar("T")


class FlakyClient:
    """A DynamoDB client whose write calls fail at `rate`: half before sending, half after DynamoDB applied them."""

    def __init__(self, client: Any, seed: int, rate: float) -> None:
        self._client = client
        self._random = random.Random(seed)
        self._rate = rate
        self.lost_before = 0
        self.lost_after = 0

    def __getattr__(self, name: str) -> Any:
        call = getattr(self._client, name)
        if name not in WRITES:
            return call

        def flaky(**kwargs: Any) -> Any:
            fate = self._random.random()
            if fate < self._rate / 2:
                self.lost_before += 1
                raise ClientError({"Error": {"Code": "ThrottlingException", "Message": "injected"}}, name)
            result = call(**kwargs)
            if fate < self._rate:
                self.lost_after += 1
                raise ClientError({"Error": {"Code": "InternalServerError", "Message": "injected"}}, name)
            return result

        return flaky


def retried(operation: Callable[..., T], *args: Any) -> T:
    """Call until the store answers, as a client retrying 503s does."""
    for _ in range(50):
        try:
            return operation(*args)
        except StorageUnavailableError:
            continue
    raise AssertionError("the store never answered")


def test_every_write_lands_whole_or_not_at_all_under_faults(
    ddb_local_engine: Engine, ddb_local_table: str, clock: FakeClock
) -> None:
    flaky = FlakyClient(ddb_local_engine.client, seed=20260406, rate=0.4)
    service = MemoryService(DynamoDBMemoryRepository(flaky, ddb_local_table), clock)  # type: ignore[arg-type]
    choose = random.Random(7)
    model: dict[int, dict[str, str]] = {}  # id -> what the successful operations say

    for step in range(80):
        action = choose.choice(["create", "create", "status", "type", "content", "delete", "list"])
        live = [mid for mid, fields in model.items() if fields["status"] != "deleted"]
        if action == "create" or not live:
            new = NewMemory.parse({"content": f"memory {step}", "memory_type": choose.choice(MEMORY_TYPES)})
            key = IdempotentCreate.of(f"create-{step}", new, "Idempotency-Key")
            memory = retried(service.create, NS, new, key)
            assert memory.id not in model, "an id was handed out twice"
            model[memory.id] = {"content": new.content, "memory_type": new.memory_type, "status": "active"}
            continue
        target = choose.choice(live)
        if action == "delete":
            with contextlib.suppress(MemoryNotFoundError):  # an earlier attempt landed; its response was lost
                retried(service.delete, NS, target)
            model[target]["status"] = "deleted"
        elif action == "list":
            # Every returned row is stamped, and a lost stamp fails the listing: small pages get through.
            page = retried(service.search, NS, RetrievalQuery.parse({"limit": 3, "sort": "created_at"}))
            assert [m.id for m in page.items] == sorted(live, reverse=True)[:3]
            assert page.total == len(live)
        else:
            field, value = {
                "status": ("status", choose.choice(["active", "invalid"])),
                "type": ("memory_type", choose.choice(MEMORY_TYPES)),
                "content": ("content", f"edited at {step}"),
            }[action]
            retried(service.update, NS, target, MemoryChanges.parse({field: value}))
            model[target][field] = value

    assert flaky.lost_before > 10
    assert flaky.lost_after > 10
    clean = MemoryService(DynamoDBMemoryRepository(ddb_local_engine.client, ddb_local_table), clock)
    repository = DynamoDBMemoryRepository(ddb_local_engine.client, ddb_local_table)
    counter = repository.next_id(NS)  # above every id ever drawn, the lost ones included
    memories = stored(repository, counter)
    assert {m.id: {"content": m.content, "memory_type": m.memory_type, "status": m.status} for m in memories} == model
    assert_totals_match(clean, memories)
