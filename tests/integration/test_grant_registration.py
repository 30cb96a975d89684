"""Dynamic client registration's bounds and the authorization server's secret on every store (in memory, DynamoDB
Local): registrations are counted per caller and in total per fixed window, shared by every service over the table,
with the caller only hashed and every count expiring with its window; the secret is stored once and every service
of the table gets that one."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import pytest

from core.grants import GrantService
from core.keys import KeyService
from core.registration import RegistrationBounds, RegistrationLimitError
from tests.conftest import Engine, FakeClock

REDIRECT = "http://127.0.0.1:53682/callback"
METADATA = '{"client_name":"Test","redirect_uris":["' + REDIRECT + '"]}'
# 14:12 on a fixed day: the hour's window started 12 minutes ago and ends in 48.
NOW = datetime(2026, 4, 6, 14, 12, tzinfo=UTC)
WINDOW_ENDS = int(datetime(2026, 4, 6, 15, 0, tzinfo=UTC).timestamp())
BOUNDS = RegistrationBounds(per_caller=2, total=3)


@pytest.fixture
def clock() -> FakeClock:
    clock = FakeClock(NOW)
    clock.freeze()
    return clock


@pytest.fixture
def table(engine: Engine) -> str:
    return engine.new_table()


def service(engine: Engine, table: str, clock: FakeClock) -> GrantService:
    """One service over the table, as one more Lambda instance would have."""
    return GrantService(engine.grants(table), KeyService(engine.keys(table), clock), clock, BOUNDS)


def register(grants: GrantService, caller: str, client_id: str) -> None:
    grants.register(client_id, METADATA, [REDIRECT], caller)


def test_registrations_are_bounded_per_caller_and_in_total_across_every_service_of_the_table(
    engine: Engine, table: str, clock: FakeClock
) -> None:
    first, second = service(engine, table, clock), service(engine, table, clock)
    register(first, "192.0.2.1", "a1")
    register(second, "192.0.2.1", "a2")

    with pytest.raises(RegistrationLimitError) as per_caller:
        register(first, "192.0.2.1", "a3")
    register(second, "192.0.2.2", "b1")
    with pytest.raises(RegistrationLimitError) as in_total:
        register(first, "192.0.2.3", "c1")

    left = WINDOW_ENDS - int(NOW.timestamp())
    assert (per_caller.value.bound, per_caller.value.retry_after_seconds) == ("caller", left)
    assert (in_total.value.bound, in_total.value.retry_after_seconds) == ("total", left)
    assert [first.client(client_id) is not None for client_id in ("a1", "a2", "a3", "b1", "c1")] == [
        True, True, False, True, False,
    ]  # fmt: skip


def test_the_next_window_counts_from_zero(engine: Engine, table: str, clock: FakeClock) -> None:
    grants = service(engine, table, clock)
    register(grants, "192.0.2.1", "a1")
    register(grants, "192.0.2.1", "a2")
    clock.advance(seconds=WINDOW_ENDS - int(NOW.timestamp()))

    register(grants, "192.0.2.1", "a3")

    assert grants.client("a3") is not None


def test_concurrent_registrations_never_pass_the_total(engine: Engine, table: str, clock: FakeClock) -> None:
    grants = service(engine, table, clock)
    start = threading.Barrier(8)
    refused: list[RegistrationLimitError] = []

    def register_once(number: int) -> None:
        start.wait()
        try:
            register(grants, f"192.0.2.{number}", f"client-{number}")
        except RegistrationLimitError as exc:
            refused.append(exc)

    threads = [threading.Thread(target=register_once, args=(number,)) for number in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(refused) == 8 - BOUNDS.total
    assert sum(grants.client(f"client-{number}") is not None for number in range(8)) == BOUNDS.total


def test_on_dynamodb_each_count_expires_with_its_window_and_holds_the_caller_only_hashed(
    engine: Engine, table: str, clock: FakeClock
) -> None:
    if engine.client is None:
        pytest.skip("items and TTL are DynamoDB's")
    register(service(engine, table, clock), "203.0.113.7", "a1")

    items = engine.client.scan(TableName=table, ConsistentRead=True)["Items"]
    counts = [item for item in items if item["pk"]["S"].startswith("OAUTH#REGISTRATIONS")]

    assert sorted(item["pk"]["S"].count("#") for item in counts) == [1, 2]  # everyone's, and the caller's
    assert {item["sk"]["S"] for item in counts} == {f"WINDOW#{WINDOW_ENDS - 3600}"}
    assert {item["expires_at"]["N"] for item in counts} == {str(WINDOW_ENDS)}
    assert {item["registrations"]["N"] for item in counts} == {"1"}
    assert "203.0.113" not in str(items)


def test_every_service_of_a_table_gets_the_one_secret_stored_first(
    engine: Engine, table: str, clock: FakeClock
) -> None:
    services = [service(engine, table, clock) for _ in range(6)]
    start = threading.Barrier(len(services))
    secrets: list[bytes] = []

    def read(grants: GrantService) -> None:
        start.wait()
        secrets.append(grants.secret())

    threads = [threading.Thread(target=read, args=(grants,)) for grants in services]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(secrets) == len(services)
    assert len(set(secrets)) == 1
    assert len(secrets[0]) == 32
    assert service(engine, table, clock).secret() == secrets[0]  # a restart reads it back
