"""What every request to the authorization server goes through, whichever route answers it (most are the `mcp` SDK's
handlers, which know no storage failure and no rate limit), and the one table of domain errors to OAuth answers:

- a method its route does not take: 405 with `Allow` and an RFC 6749 error body (Starlette's is plain text);
- storage failing anywhere under the route (StorageUnavailableError, TableMissingError): 503 with `Retry-After` and
  RFC 6749's `temporarily_unavailable` (§4.1.2.1), or the route's own page (the consent page's), never a 500;
- a registration over its bounds (core.registration.RegistrationLimitError): 429 with `Retry-After`;
- a client id URL whose Client ID Metadata Document cannot be used (core.clientdocs.document.ClientDocumentError,
  from any route that reads the client): 400 `invalid_client`, saying why;
- one storage budget (core.budget) for the whole request, and no storage call after the first one failed: the
  SDK's /authorize catches every exception and reads the client again to shape its error, which doubled the wait;
- the errors the SDK's handlers answer themselves (RFC 7591 registration errors, RFC 6749 token errors), made here
  from the core's (registration_error, token_error), so no other module maps a domain error to an OAuth answer.
  (The consent page, a page for a person rather than a client, shows its form again, with the reason, when an
  approval was refused or could not be stored.)

The request's caller (the ASGI `client` host: a function URL's `requestContext.http.sourceIp` through Mangum, the
peer address under `serve`) is kept for the routes, which the SDK gives no request: registration counts per caller.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Final, ParamSpec, TypeVar

from mcp.server.auth.provider import RegistrationError, RegistrationErrorCode, TokenError
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from core.budget import storage_budget
from core.clientdocs.document import ClientDocumentError
from core.errors import InvalidInputError, StorageUnavailableError, WriteConflictError
from core.grant_terms import GrantError
from core.registration import RegistrationLimitError
from handlers.concurrency import RunBlocking

P = ParamSpec("P")
T = TypeVar("T")

# Storage failures a retry soon may cure; each carries its `retry_after_seconds`.
RETRYABLE: Final = (StorageUnavailableError, WriteConflictError)
Refused = StorageUnavailableError | WriteConflictError | RegistrationLimitError | ClientDocumentError
# The answers this guard gives itself: status and RFC 6749 error code, by the error's kind (first match wins).
_ANSWERS: Final[tuple[tuple[type[Refused], int, str], ...]] = (
    (ClientDocumentError, 400, "invalid_client"),
    (RegistrationLimitError, 429, "temporarily_unavailable"),
    (StorageUnavailableError, 503, "temporarily_unavailable"),
    (WriteConflictError, 503, "temporarily_unavailable"),
)
_REFUSED: Final = tuple(kind for kind, _, _ in _ANSWERS)
_NO_STORE: Final = {"Cache-Control": "no-store"}
# A route's own answer while storage is unavailable, given the seconds to wait (the consent page's HTML).
UnavailablePage = Callable[[int], Response]


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
        except RETRYABLE as exc:
            if request is not None:
                request.failure = exc
            raise

    return run_unless_failed


class Guarded:
    """`app` (the authorization server's router) behind the answers above; `methods` names what each path takes,
    `pages` the paths that answer an outage with a page of their own rather than RFC 6749's JSON."""

    def __init__(
        self, app: ASGIApp, methods: Mapping[str, frozenset[str]], pages: Mapping[str, UnavailablePage]
    ) -> None:
        self._app = app
        self._methods = methods
        self._pages = pages

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
        except _REFUSED as exc:
            if started:
                raise  # too late for another answer: the server closes the connection
            await self._refusal(path, exc)(scope, receive, send)
        finally:
            _current.reset(token)

    def _refusal(self, path: str, exc: Refused) -> Response:
        status, error = next((status, error) for kind, status, error in _ANSWERS if isinstance(exc, kind))
        if isinstance(exc, ClientDocumentError):
            return error_response(status, error, str(exc))
        page = self._pages.get(path)
        if status == 503 and page is not None:
            return page(exc.retry_after_seconds)
        return error_response(status, error, str(exc), **{"Retry-After": str(exc.retry_after_seconds)})


def registration_error(exc: InvalidInputError) -> RegistrationError:
    """The RFC 7591 §3.2.2 error for client metadata the core refused: its redirect URIs, or anything else."""
    error: RegistrationErrorCode = (
        "invalid_redirect_uri" if exc.errors[0].field == "redirect_uris" else "invalid_client_metadata"
    )
    return RegistrationError(error, "; ".join(f"{e.field} {e.message}" for e in exc.errors))


def token_error(exc: GrantError) -> TokenError:
    """The RFC 6749 §5.2 error for a token request the core refused (the core names its code)."""
    return TokenError(exc.error, exc.description)


def _method_not_allowed(path: str, method: str, allowed: frozenset[str]) -> Response:
    methods = ", ".join(sorted(allowed))
    return error_response(
        405, "invalid_request", f"{path} does not answer {method}: send one of {methods}", Allow=methods
    )


def error_response(status: int, error: str, description: str, **headers: str) -> JSONResponse:
    """An RFC 6749 §5.2 error body (`error`, `error_description`), never cached, with `headers` besides."""
    body = {"error": error, "error_description": description}
    return JSONResponse(body, status_code=status, headers=_NO_STORE | headers)
