"""How a door runs a blocking call (every storage call and every key lookup is one): the one concurrency policy of
both doors, chosen per entrypoint by the composition root.

- On Lambda an execution environment serves one request at a time, so nothing waits behind a blocking call: it runs
  `inline`, on the event loop (a worker-thread hop would cost more than the rest of a warm request).
- `agent-memory serve` answers many requests at once in one process: each blocking call runs `in_worker_thread`, so a
  stalled call holds up only its own request, never the event loop, /healthz or the other door.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import ParamSpec, Protocol, TypeVar

from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Receive, Scope, Send

from core.budget import storage_budget

P = ParamSpec("P")
T = TypeVar("T")


class RunBlocking(Protocol):
    def __call__(self, call: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Awaitable[T]: ...


async def inline(call: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    return call(*args, **kwargs)


async def in_worker_thread(call: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    return await run_in_threadpool(call, *args, **kwargs)


class WithinRequestBudget:
    """ASGI middleware: every HTTP request runs inside one budget (core.budget) for every call out it makes, the
    blocking calls it runs in worker threads included, so it ends before API Gateway's 30 s and the function's
    timeout however many calls it makes and however slowly each is answered."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        with storage_budget():
            await self.app(scope, receive, send)
