"""The one TTL cache (core.cache): a value is trusted for the ttl from when it was read, never from the future, the
cache starts over when full, and a revocation forgets what it names."""

from __future__ import annotations

from datetime import timedelta

from core.cache import TtlCache
from tests.conftest import FakeClock

TTL = timedelta(seconds=30)


def cache(clock: FakeClock, max_entries: int = 8) -> TtlCache[str, int]:
    return TtlCache(TTL, max_entries, clock)


def test_a_value_put_is_got_within_the_ttl() -> None:
    clock = FakeClock()
    values = cache(clock)
    values.put("a", 1)
    clock.advance(seconds=TTL.total_seconds() - 1)

    assert values.get("a") == 1


def test_a_key_never_put_is_none() -> None:
    assert cache(FakeClock()).get("a") is None


def test_a_value_as_old_as_the_ttl_is_none() -> None:
    clock = FakeClock()
    values = cache(clock)
    values.put("a", 1)
    clock.advance(seconds=TTL.total_seconds())

    assert values.get("a") is None


def test_the_ttl_runs_from_when_the_value_was_read_not_from_when_it_was_put() -> None:
    clock = FakeClock()
    values = cache(clock)
    read_at = clock()
    clock.advance(seconds=10)
    values.put("a", 1, read_at=read_at)
    clock.advance(seconds=TTL.total_seconds() - 10)

    assert values.get("a") is None


def test_a_value_put_later_than_now_is_none_once_the_clock_steps_back() -> None:
    clock = FakeClock()
    values = cache(clock)
    values.put("a", 1)
    clock.advance(seconds=-1)

    assert values.get("a") is None


def test_a_full_cache_starts_over_with_the_value_put() -> None:
    clock = FakeClock()
    values = cache(clock, max_entries=2)
    for index, key in enumerate("abc"):
        values.put(key, index)

    assert [values.get(key) for key in "abc"] == [None, None, 2]
    assert list(values) == ["c"]


def test_discard_forgets_one_key_and_discard_where_every_value_it_names() -> None:
    values = cache(FakeClock())
    for index, key in enumerate("abcd"):
        values.put(key, index)

    values.discard("a")
    values.discard("missing")
    values.discard_where(lambda value: value % 2 == 1)

    assert {key: values.get(key) for key in "abcd"} == {"a": None, "b": None, "c": 2, "d": None}


def test_clear_forgets_every_value_however_fresh() -> None:
    values = cache(FakeClock())
    values.put("a", 1)
    values.put("b", 2)

    values.clear()

    assert (values.get("a"), values.get("b"), list(values)) == (None, None, [])
