"""What every request to the authorization server goes through, whichever route answers it (most are the `mcp` SDK's
handlers, which know no storage failure and no rate limit):

- a method its route does not take: 405 with `Allow` and an RFC 6749 error body (Starlette's is plain text);
- storage failing anywhere under the route (StorageUnavailableError, TableMissingError): 503 with `Retry-After` and
  RFC 6749's `temporarily_unavailable` (§4.1.2.1), or the consent page's own 503 page, never a 500;
- a registration over its bounds (core.grants.RegistrationLimitError): 429 with `Retry-After`;
- one storage budget (core.budget) for the whole request, and no storage call after the first one failed: the
  SDK's /authorize catches every exception and reads the client again to shape its error, which doubled the wait.

The request's caller (the ASGI `client` host: a function URL's `requestContext.http.sourceIp` through Mangum, the
peer address under `serve`) is kept for the routes, which the SDK gives no request: registration counts per caller.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Final, ParamSpec, TypeVar

from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from core.budget import storage_budget
from core.errors import StorageUnavailableError, WriteConflictError
from core.registration import RegistrationLimitError
from handlers.concurrency import RunBlocking
from handlers.oauth.consent import CONSENT_PATH, unavailable_page

P = ParamSpec("P")
T = TypeVar("T")

# Storage failures a retry soon may cure; each carries its `retry_after_seconds`.
_RETRYABLE: Final = (StorageUnavailableError, WriteConflictError)
_NO_STORE: Final = {"Cache-Control": "no-store"}


@dataclass
class _Request:
    caller: str
    failure: StorageUnavailableError | WriteConflictError | None = None


_current: ContextVar[_Request | None] = ContextVar("oauth_request", default=None)


def caller() -> str:
    """The address the current request came from ("" outside a request, or when the server was not told)."""
    request = _current.get()
    return request.caller if request is not None else ""


def failing_fast(run: RunBlocking) -> RunBlocking:
    """`run`, except that once a storage call of the current request failed, every later one fails the same way at
    once: the request is answered 503 anyway, and another call would only add its wait."""

    async def run_unless_failed(call: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        request = _current.get()
        if request is not None and request.failure is not None:
            raise request.failure
        try:
            return await run(call, *args, **kwargs)
        except _RETRYABLE as exc:
            if request is not None:
                request.failure = exc
            raise

    return run_unless_failed


class Guarded:
    """`app` (the authorization server's router) behind the answers above; `methods` names what each path takes."""

    def __init__(self, app: ASGIApp, methods: Mapping[str, frozenset[str]]) -> None:
        self._app = app
        self._methods = methods

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"]
        allowed = self._methods.get(path)
        if allowed is not None and scope["method"] not in allowed:
            await _method_not_allowed(path, scope["method"], allowed)(scope, receive, send)
            return
        client = scope.get("client")
        token = _current.set(_Request(caller=str(client[0]) if client else ""))
        started = False

        async def tracking(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            with storage_budget():
                await self._app(scope, receive, tracking)
        except (*_RETRYABLE, RegistrationLimitError) as exc:
            if started:
                raise  # too late for another answer: the server closes the connection
            await _refusal(path, exc)(scope, receive, send)
        finally:
            _current.reset(token)


def _method_not_allowed(path: str, method: str, allowed: frozenset[str]) -> Response:
    methods = ", ".join(sorted(allowed))
    return _error(405, "invalid_request", f"{path} does not answer {method}: send one of {methods}", Allow=methods)


def _refusal(path: str, exc: StorageUnavailableError | WriteConflictError | RegistrationLimitError) -> Response:
    retry_after = str(exc.retry_after_seconds)
    if isinstance(exc, RegistrationLimitError):
        return _error(429, "temporarily_unavailable", str(exc), **{"Retry-After": retry_after})
    if path == CONSENT_PATH:
        return unavailable_page(exc.retry_after_seconds)
    return _error(503, "temporarily_unavailable", str(exc), **{"Retry-After": retry_after})


def _error(status: int, error: str, description: str, **headers: str) -> JSONResponse:
    body = {"error": error, "error_description": description}
    return JSONResponse(body, status_code=status, headers=_NO_STORE | headers)
