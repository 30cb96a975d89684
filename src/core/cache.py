"""The one small cache: what a service verified, trusted for a while without asking the store again. Thread-safe (the
local server answers many requests at once), bounded in size, its clock injected."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from typing import Generic, TypeVar

from core.clock import Clock

K = TypeVar("K")
V = TypeVar("V")


class TtlCache(Generic[K, V]):
    """Values trusted for `ttl` from when they were put. When full, the whole cache is cleared: what is cached is
    only what verified, so it fills only with that many live entries, and a clear costs one store read each."""

    def __init__(self, ttl: timedelta, max_entries: int, clock: Clock) -> None:
        self._ttl = ttl
        self._max_entries = max_entries
        self._clock = clock
        self._entries: dict[K, tuple[V, datetime]] = {}
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        """The value put under `key`; None when there is none, it is `ttl` old or older, or it was put later than
        now (the clock stepped back: trust nothing the clock cannot age)."""
        now = self._clock()
        with self._lock:
            entry = self._entries.get(key)
        if entry is None or not timedelta(0) <= now - entry[1] < self._ttl:
            return None
        return entry[0]

    def put(self, key: K, value: V, read_at: datetime | None = None) -> None:
        """Trust `value` for `ttl` from `read_at`: when it was read from the store (a value read before a write
        elsewhere is trusted no longer than `ttl` after that read), now by default."""
        stamp = read_at if read_at is not None else self._clock()
        with self._lock:
            if len(self._entries) >= self._max_entries:
                self._entries.clear()
            self._entries[key] = (value, stamp)

    def clear(self) -> None:
        """Forget everything (a process restored from a snapshot trusts nothing it verified before)."""
        with self._lock:
            self._entries.clear()

    def discard(self, key: K) -> None:
        with self._lock:
            self._entries.pop(key, None)

    def discard_where(self, predicate: Callable[[V], bool]) -> None:
        """Forget every value `predicate` holds for (a revocation forgetting what it revoked)."""
        with self._lock:
            for key in [key for key, (value, _) in self._entries.items() if predicate(value)]:
                del self._entries[key]

    def __iter__(self) -> Iterator[K]:
        """The keys held now (stale ones too, until they are put again or the cache is cleared)."""
        with self._lock:
            return iter(list(self._entries))
