"""Serving an ASGI app to Lambda through Mangum, the same way for both functions."""

import asyncio
from typing import Any, Final, Literal

from mangum import Mangum
from mangum.adapter import DEFAULT_TEXT_MIME_TYPES
from mangum.types import ASGI

from handlers.problem import PROBLEM_JSON

# problem+json is text too: without it Mangum base64-encodes every error body.
TEXT_MIME_TYPES: Final = [*DEFAULT_TEXT_MIME_TYPES, PROBLEM_JSON]


class _InvocationLoop:
    """The event loop Mangum runs invocations on: one per process, made current before every invocation (an
    asyncio.run() elsewhere in the process unsets the current loop), and replaced if something closed it."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()

    def make_current(self) -> None:
        if self._loop.is_closed():
            self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self._loop)


_invocation_loop: Final = _InvocationLoop()


def invoke(app: ASGI, event: dict[str, Any], context: Any, lifespan: Literal["on", "off"] = "off") -> dict[str, Any]:
    _invocation_loop.make_current()
    response: dict[str, Any] = Mangum(app, lifespan=lifespan, text_mime_types=TEXT_MIME_TYPES)(event, context)
    return response
