"""One storage budget per request: a door opens it around a request, and every storage call made for that request,
in whatever thread the door runs it, keeps inside it.

A request that makes several storage calls one after another (an OAuth token exchange reads the client, the grant
and the consenting key, then writes) would otherwise have each call's own worst case, one after another: four calls
of a stalling store could outlast API Gateway's 30 s and the function's timeout. The store's adapter checks the budget
before every attempt it sends and sends none that could not end in time, answering StorageUnavailableError instead.
The budget travels in a context variable, which worker threads started by the doors inherit (anyio copies it).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Final

# One call's worst case under the DynamoDB client's bounds (3 attempts x (2 s connect + 5 s read) plus backoff stays
# under 25 s), so a request with one call keeps every attempt it had; the MCP function's timeout is 28 s.
REQUEST_STORAGE_SECONDS: Final = 25.0

_deadline: ContextVar[float | None] = ContextVar("storage_deadline", default=None)


def clock() -> float:
    """Seconds on a monotonic clock (tests replace it)."""
    return time.monotonic()


@contextmanager
def storage_budget(seconds: float = REQUEST_STORAGE_SECONDS) -> Iterator[None]:
    """Every storage call inside the block (and in threads it starts) ends within `seconds` of its start."""
    token = _deadline.set(clock() + seconds)
    try:
        yield
    finally:
        _deadline.reset(token)


def seconds_left() -> float | None:
    """What is left of the current request's storage budget; None outside any budget (no bound but the store's)."""
    deadline = _deadline.get()
    return None if deadline is None else deadline - clock()
