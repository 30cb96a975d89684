"""What the MCP endpoint's guard (handlers.mcp.endpoint) answers at the HTTP level, before or around the SDK's
transport: the routes and methods it does not serve, CORS, the body read whole, and a problem document for every
refusal the transport would answer in plain text or with a bare status."""

from __future__ import annotations

from collections import deque
from http.client import responses as reason_phrases
from typing import Final

from mcp.server.streamable_http import check_accept_headers
from starlette.datastructures import Headers, MutableHeaders
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Message, Receive, Send
from starlette.types import Scope as AsgiScope

from core.limits import MAX_REQUEST_BYTES
from handlers.oauth.paths import RESOURCE_PATH
from handlers.problem import (
    BODY_TOO_LARGE,
    BODY_TOO_LARGE_DETAIL,
    UNSUPPORTED_MEDIA_TYPE,
    declares_json,
    http_problem,
    media_type_refusal,
    problem_response,
)

# The MCP endpoint is the OAuth protected resource: one path.
MCP_PATH: Final = RESOURCE_PATH
# The methods /mcp serves: POST carries every message; OPTIONS answers CORS preflights (and plain OPTIONS).
ALLOWED_METHODS: Final = "POST, OPTIONS"
# What a browser page may send cross-origin, and read back: the transport's headers in both protocol eras.
CORS_ALLOW_HEADERS: Final = (
    "authorization, content-type, mcp-protocol-version, mcp-session-id, last-event-id, mcp-method, mcp-name"
)
CORS_EXPOSE_HEADERS: Final = "mcp-session-id, www-authenticate"
CORS_MAX_AGE_SECONDS: Final = 600


def refusal(scope: AsgiScope, headers: Headers, origin: str | None) -> Response | None:
    """The answer to anything but a POST to /mcp, or None for a POST to /mcp."""
    if scope["path"] != MCP_PATH:
        detail = f"no route {scope['path']!r}: the MCP endpoint is {MCP_PATH} (no trailing slash)"
        return http_problem(404, detail)
    if scope["method"] == "OPTIONS":
        preflight = {"Allow": ALLOWED_METHODS}
        if origin is not None and "access-control-request-method" in headers:
            preflight |= {
                "Access-Control-Allow-Methods": "POST",
                "Access-Control-Allow-Headers": CORS_ALLOW_HEADERS,
                "Access-Control-Max-Age": str(CORS_MAX_AGE_SECONDS),
            }
        return Response(status_code=204, headers=preflight)
    if scope["method"] != "POST":
        detail = f"{MCP_PATH} is stateless and answers POST only: no event stream (GET), no session to end (DELETE)"
        return http_problem(405, detail, headers={"Allow": ALLOWED_METHODS})
    return None


def unreadable(scope: AsgiScope, headers: Headers) -> Response | None:
    """The refusal of a POST whose body or answer the transport would refuse before reading it, or None: a body not
    declared as JSON (as the HTTP API reads it; the SDK says 400 in plain text), a client that does not accept JSON
    (406, which the SDK says without a body or in JSON-RPC), a body declared over the bound (413, plain text)."""
    content_type = headers.get("content-type")
    if not declares_json(content_type):
        status, slug, title = UNSUPPORTED_MEDIA_TYPE
        return problem_response(status, slug, title, media_type_refusal(content_type))
    accepts_json, _ = check_accept_headers(Request(scope))
    if not accepts_json:
        detail = "the client must accept application/json: send Accept: application/json, text/event-stream"
        return problem_response(406, "not-acceptable", "Not acceptable", detail)
    declared = headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_REQUEST_BYTES:
        return too_large()
    return None


def too_large() -> Response:
    return problem_response(*BODY_TOO_LARGE, BODY_TOO_LARGE_DETAIL)


def as_json(scope: AsgiScope) -> list[tuple[bytes, bytes]]:
    """The request's headers, its Content-Type (which declares JSON) spelt as the transport reads JSON: exactly
    `application/json` (it refuses `Application/JSON` and `application/<x>+json`, which the HTTP API reads)."""
    return [(name, b"application/json" if name == b"content-type" else value) for name, value in scope["headers"]]


def with_cors(send: Send, origin: str) -> Send:
    """`send` adding the CORS response headers for an admitted `origin` to whatever response goes out."""

    async def send_with_cors(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = MutableHeaders(scope=message)
            headers["Access-Control-Allow-Origin"] = origin
            headers["Access-Control-Expose-Headers"] = CORS_EXPOSE_HEADERS
            headers.add_vary_header("Origin")
        await send(message)

    return send_with_cors


def errors_as_problems(send: Send) -> Send:
    """`send` turning an error the transport answers without JSON (plain text, or a bare status such as its 406 for a
    subscriptions/listen that cannot stream) into the problem document of that status; JSON-RPC errors, which MCP
    clients read, pass as they are."""
    held: list[Message] = []

    async def send_problem(message: Message) -> None:
        if message["type"] == "http.response.start" and message["status"] >= 400:
            media_type = Headers(raw=message.get("headers", [])).get("content-type", "")
            if not media_type.startswith("application/json"):
                held.append(message)
                return
        if not held or message["type"] != "http.response.body":
            await send(message)
            return
        held.append(message)
        if message.get("more_body", False):
            return
        start, *parts = held
        status: int = start["status"]
        text = b"".join(part.get("body", b"") for part in parts).decode("utf-8", "replace").strip()
        reason = reason_phrases.get(status, "HTTP error")
        problem = problem_response(status, "http-error", reason, text or f"{MCP_PATH} refused the request: {reason}")
        kept = [(name, value) for name, value in start.get("headers", []) if name.lower() not in _REPLACED]
        await send({"type": "http.response.start", "status": status, "headers": [*kept, *problem.raw_headers]})
        await send({"type": "http.response.body", "body": problem.body})

    return send_problem


# The headers of a transport's answer that its problem document replaces.
_REPLACED: Final = frozenset({b"content-length", b"content-type"})


async def whole_body(receive: Receive) -> tuple[Receive, bytes] | None:
    """A `receive` replaying the request body read to its end (or just past the size bound: refuse it), and that
    body; or None when the client disconnected first."""
    messages: deque[Message] = deque()
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        messages.append(message)
        size += len(message.get("body", b""))
        if not message.get("more_body", False) or size > MAX_REQUEST_BYTES:
            break

    content = b"".join(message.get("body", b"") for message in messages)

    async def replay() -> Message:
        return messages.popleft() if messages else await receive()

    return replay, content
