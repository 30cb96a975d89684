"""One budget per request: a door opens it around every request, and every call out made for that request (storage,
and the embedding model), in whatever thread the door runs it, keeps inside it.

A request that makes several storage calls one after another (an OAuth token exchange reads the client, the grant
and the consenting key, then writes) would otherwise have each call's own worst case, one after another: four calls
of a stalling store could outlast API Gateway's 30 s and the function's timeout. The store's adapter checks the budget
before every attempt it sends and sends none that could not end in time, answering StorageUnavailableError instead.
The embedding model's adapter does the same, so a write that embeds (the embedding first, then the storage calls)
still ends within the budget, whatever the model and the store each take; and a request waits for the model only a
short while (core.recall.guard's EMBEDDING_WAIT_SECONDS), so a slow model never leaves the storage calls short of
time, nor is its slowness answered as storage's. The budget travels in a context variable,
which worker threads started by the doors inherit (anyio copies it); a budget opened inside another ends no later.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Final, TypeVar

# One call's worst case under the DynamoDB client's bounds (3 attempts x (2 s connect + 5 s read) plus backoff stays
# under 25 s), so a request with one call keeps every attempt it had; the MCP function's timeout is 28 s.
REQUEST_STORAGE_SECONDS: Final = 25.0

_deadline: ContextVar[float | None] = ContextVar("storage_deadline", default=None)

T = TypeVar("T")


def clock() -> float:
    """Seconds on a monotonic clock (tests replace it)."""
    return time.monotonic()


@contextmanager
def storage_budget(seconds: float = REQUEST_STORAGE_SECONDS) -> Iterator[None]:
    """Every storage call inside the block (and in threads it starts) ends within `seconds` of its start."""
    outer = _deadline.get()
    deadline = clock() + seconds
    token = _deadline.set(deadline if outer is None else min(outer, deadline))
    try:
        yield
    finally:
        _deadline.reset(token)


def seconds_left() -> float | None:
    """What is left of the current request's storage budget; None outside any budget (no bound but the store's)."""
    deadline = _deadline.get()
    return None if deadline is None else deadline - clock()


def refuse_late_attempts(attempt_seconds: float, refusal: Callable[[], Exception]) -> Callable[..., None]:
    """A botocore `before-send` handler refusing (raising `refusal()`) an attempt, retries included, that could end
    after the request's budget: one that would take its whole `attempt_seconds` (connect and read timeouts). Raised
    there, botocore neither sends nor retries it."""

    def check(**_: Any) -> None:
        left = seconds_left()
        if left is not None and left < attempt_seconds:
            raise refusal()

    return check


def carried(call: Callable[..., T]) -> Callable[..., T]:
    """`call` holding the caller's budget, for a thread pool to run: a pool's threads keep their own context variables,
    so without it the reads, stamps and embedding a request hands to one would run without its budget."""
    deadline = _deadline.get()

    def run(*args: Any, **kwargs: Any) -> T:
        token = _deadline.set(deadline)
        try:
            return call(*args, **kwargs)
        finally:
            _deadline.reset(token)

    return run
