"""Serving an ASGI app to Lambda through Mangum, the same way for both functions: every event gets an answer, a
problem document when the event is not a request the app can be given."""

import asyncio
import atexit
import base64
import re
from typing import Any, Final, Literal

from aws_lambda_powertools import Logger
from mangum import Mangum
from mangum.adapter import DEFAULT_TEXT_MIME_TYPES
from mangum.handlers import HTTPGateway
from mangum.types import ASGI, Response

from handlers.problem import HTTP_ERROR_TITLES, PROBLEM_JSON, Problem

logger = Logger()

# problem+json is text too: without it Mangum base64-encodes every error body.
TEXT_MIME_TYPES: Final = [*DEFAULT_TEXT_MIME_TYPES, PROBLEM_JSON]
# The problem answering an event that is no HTTP request (payload 2.0) at all: the function was invoked by
# something other than its HTTP API or function URL, or with a hand-made event.
UNINTERPRETABLE_EVENT: Final = "urn:agent-memory:problem:uninterpretable-event"
_PORT: Final = re.compile(r"[0-9]{1,9}")


class _InvocationLoop:
    """The event loop Mangum runs invocations on: one per process, made on the first invocation (importing a door
    opens nothing), current before every invocation (an asyncio.run() elsewhere in the process unsets the current
    loop), replaced if something closed it, and closed when the process exits."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None

    def make_current(self) -> asyncio.AbstractEventLoop:
        if self._loop is None or self._loop.is_closed():
            self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self._loop)
        return self._loop

    def close(self) -> None:
        """End what still runs on the loop (a lifespan held open across invocations) and close it, so a process that
        exits (serve, a test run) leaves no open loop and no socket of its self-pipe for the collector to report."""
        loop = self._loop
        if loop is None or loop.is_closed() or loop.is_running():
            return
        pending = asyncio.all_tasks(loop)
        for task in pending:
            task.cancel()
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()


_invocation_loop: Final = _InvocationLoop()
atexit.register(_invocation_loop.close)


def invocation_loop() -> asyncio.AbstractEventLoop:
    """The loop the next invocation runs on, made current: what runs across invocations (a lifespan held open)
    belongs on it."""
    return _invocation_loop.make_current()


class UnreadableBodyError(Exception):
    """The event's body cannot be turned into the request's bytes."""


class _HttpRequestEvent(HTTPGateway):
    """Mangum's reading of a payload 2.0 event, with a body that must decode and a response that carries only the
    headers the app sent (Mangum adds `content-type: application/json` to any response without one, a 204 too)."""

    @property
    def body(self) -> bytes:
        body: str = self.event.get("body") or ""
        try:
            return base64.b64decode(body, validate=True) if self.event.get("isBase64Encoded") else body.encode()
        except UnicodeEncodeError:
            raise UnreadableBodyError("the body is not text: it holds a lone surrogate") from None
        except ValueError:
            raise UnreadableBodyError("the body is marked `isBase64Encoded` but is not base64") from None

    def __call__(self, response: Response) -> dict[str, Any]:
        answer: dict[str, Any] = super().__call__(response)
        if not any(name.lower() == b"content-type" for name, _ in response["headers"]):
            answer.get("headers", {}).pop("content-type", None)
        return answer


def invoke(app: ASGI, event: dict[str, Any], context: Any, lifespan: Literal["on", "off"] = "off") -> dict[str, Any]:
    misreading = _misreading(event)
    if misreading is not None:
        # The reason names fields and types only: the event itself (which carries the caller's key) is never logged.
        logger.error(f"cannot interpret the Lambda event: {misreading}")
        detail = (
            f"the function cannot interpret this Lambda event ({misreading}); it serves HTTP requests (payload 2.0)"
        )
        return _problem(500, UNINTERPRETABLE_EVENT, "The Lambda event cannot be interpreted", detail)
    if not (_is_text(event.get("rawPath", "")) and _is_text(event["requestContext"]["http"]["path"])):
        detail = "no route for a path that is not text (it holds a lone surrogate)"
        return _problem(404, "urn:agent-memory:problem:http-error", HTTP_ERROR_TITLES[404], detail)
    _invocation_loop.make_current()
    adapter = Mangum(app, lifespan=lifespan, text_mime_types=TEXT_MIME_TYPES, custom_handlers=[_HttpRequestEvent])
    try:
        response: dict[str, Any] = adapter(event, context)
    except UnreadableBodyError as exc:
        return _problem(400, "urn:agent-memory:problem:bad-request-body", "Body is not readable", str(exc))
    return response


def _misreading(event: object) -> str | None:
    """Why `event` is not an HTTP request in payload format 2.0 that Mangum can read, or None when it is one.

    Dictionary and type checks only, no copies: this runs on every warm invocation.
    """
    if not isinstance(event, dict):
        return "the event is not a JSON object"
    if event.get("version") != "2.0":
        return '`version` is not "2.0"'
    return _misread_request(event.get("requestContext")) or _misread_headers(event) or _misread_rest(event)


def _misread_request(request_context: object) -> str | None:
    http = request_context.get("http") if isinstance(request_context, dict) else None
    if not isinstance(http, dict):
        return "`requestContext.http` is missing or not an object"
    for field in ("method", "path", "sourceIp"):
        if not isinstance(http.get(field), str):
            return f"`requestContext.http.{field}` is missing or not a string"
    if not _is_text(http["method"]) or not _is_text(http["sourceIp"]):
        return "`requestContext.http` holds a string that is not text (a lone surrogate)"
    return None


def _misread_headers(event: dict[str, Any]) -> str | None:
    headers = event.get("headers", {})
    if not isinstance(headers, dict):
        return "`headers` is not an object"
    for name, value in headers.items():
        if not (isinstance(name, str) and isinstance(value, str)):
            return "`headers` holds a value that is not a string"
        if not (_is_text(name) and _is_text(value)):
            return "`headers` holds a string that is not text (a lone surrogate)"
    return _misread_host(headers)


def _misread_rest(event: dict[str, Any]) -> str | None:
    """The query string, cookies and body."""
    query = event.get("rawQueryString", "")
    if not (isinstance(query, str) and _is_text(query)):
        return "`rawQueryString` is not a string of text"
    cookies = event.get("cookies")
    if cookies and not (isinstance(cookies, list) and all(isinstance(c, str) and _is_text(c) for c in cookies)):
        return "`cookies` is not a list of strings"
    if not isinstance(event.get("body", ""), str | None):
        return "`body` is not a string"
    if not isinstance(event.get("isBase64Encoded", False), bool):
        return "`isBase64Encoded` is not a boolean"
    return None


def _misread_host(headers: dict[str, str]) -> str | None:
    """Why Mangum cannot read the server's name and port from `host` and `x-forwarded-port`, or None."""
    host = port = None
    for name, value in headers.items():
        lowered = name.lower()
        if lowered == "host":
            host = value
        elif lowered == "x-forwarded-port":
            port = value
    if host is not None and ":" in host:
        _, _, port = host.partition(":")
        if not _PORT.fullmatch(port):
            return "the `host` header is not `name[:port]`"
    elif port is not None and not _PORT.fullmatch(port):
        return "the `x-forwarded-port` header is not a port number"
    return None


def _is_text(value: object) -> bool:
    """Whether a string can be sent as UTF-8: one holding a lone surrogate (JSON can carry it, HTTP cannot) cannot."""
    if not isinstance(value, str) or value.isascii():
        return True
    try:
        value.encode()
    except UnicodeEncodeError:
        return False
    return True


def _problem(status: int, problem_type: str, title: str, detail: str) -> dict[str, Any]:
    """A problem document as a Lambda response, for an event that never reaches the app."""
    body = Problem(type=problem_type, title=title, status=status, detail=detail)
    return {
        "statusCode": status,
        "headers": {"content-type": PROBLEM_JSON},
        "body": body.model_dump_json(exclude_none=True),
        "isBase64Encoded": False,
    }
