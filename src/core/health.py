"""Whether storage is failing now, as this process's own storage calls have found it: the DynamoDB adapter tells it
how each call ended (after the call's own retries), and /healthz reads it. Reading it is cheap and never a storage
call: a health check must answer while storage stalls, and must not add to a throttled table's load."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

# Without a storage call failing for this long, health is no longer degraded, even if no call has succeeded since:
# a process that stopped calling storage knows nothing newer, and says nothing it has not seen.
DEGRADED_FOR_SECONDS: Final = 60.0


@dataclass(frozen=True)
class Degraded:
    """Storage calls are failing: `failures` in a row, the latest `seconds_ago`, for `cause`."""

    failures: int
    seconds_ago: float
    cause: str

    @property
    def reason(self) -> str:
        calls = "storage call" if self.failures == 1 else f"{self.failures} storage calls"
        return (
            f"the last {calls} failed, the latest {self.seconds_ago:.0f} s ago ({self.cause}); none has succeeded since"
        )


class StorageHealth:
    """The storage calls' outcomes in a row, from any thread: degraded from a failed call until a call succeeds, or
    until DEGRADED_FOR_SECONDS pass without a failure. A call already retried within its bound before it failed, so
    one failure is no passing blip. `clock` is monotonic seconds."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._failures = 0
        self._latest = 0.0
        self._cause = ""

    def succeeded(self) -> None:
        with self._lock:
            self._failures = 0

    def failed(self, cause: str) -> None:
        with self._lock:
            self._failures += 1
            self._latest = self._clock()
            self._cause = cause

    def degraded(self) -> Degraded | None:
        """Why storage is failing now; None while it is not."""
        with self._lock:
            if not self._failures:
                return None
            seconds_ago = self._clock() - self._latest
            if seconds_ago > DEGRADED_FOR_SECONDS:
                return None
            return Degraded(self._failures, seconds_ago, self._cause)
