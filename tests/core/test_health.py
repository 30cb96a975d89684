"""The process's storage health as /healthz reads it: degraded from a storage call that failed (after its own
retries) until one succeeds, or until a while passes with no call failing; its clock is the test's."""

from __future__ import annotations

import threading

from core.health import DEGRADED_FOR_SECONDS, StorageHealth


class Seconds:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_process_that_has_seen_no_storage_call_fail_is_healthy() -> None:
    assert StorageHealth(Seconds()).degraded() is None


def test_a_failed_storage_call_degrades_health_until_one_succeeds() -> None:
    clock = Seconds()
    health = StorageHealth(clock)

    health.failed("ThrottlingException")
    health.failed("no answer in time")
    clock.now += 2
    degraded = health.degraded()
    health.succeeded()

    assert degraded is not None
    assert degraded.reason == (
        "the last 2 storage calls failed, the latest 2 s ago (no answer in time); none has succeeded since"
    )
    assert health.degraded() is None


def test_without_a_failure_for_a_while_health_is_no_longer_degraded() -> None:
    clock = Seconds()
    health = StorageHealth(clock)
    health.failed("ThrottlingException")

    clock.now += DEGRADED_FOR_SECONDS
    still = health.degraded()
    clock.now += 1

    assert still is not None
    assert still.reason.startswith("the last storage call failed, the latest")
    assert health.degraded() is None


def test_failures_and_successes_from_many_threads_are_all_counted() -> None:
    health = StorageHealth(Seconds())

    def fail() -> None:
        for _ in range(1000):
            health.failed("x")

    threads = [threading.Thread(target=fail) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    degraded = health.degraded()

    assert degraded is not None
    assert degraded.failures == 8000
