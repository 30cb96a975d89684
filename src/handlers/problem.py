"""RFC 9457 problem documents: the one shape of every HTTP error, the one table from domain errors to HTTP statuses
and the one table of HTTP's own refusals (no route, a method not allowed), shared by the HTTP API, the console and the
MCP endpoint's HTTP-level refusals."""

from __future__ import annotations

import re
from typing import Final

from aws_lambda_powertools import Logger
from pydantic import BaseModel
from starlette.responses import JSONResponse

from core.errors import (
    AuthenticationError,
    DomainError,
    FieldError,
    InvalidInputError,
    KeyNotFoundError,
    MemoryNotFoundError,
    NamespaceFullError,
    PermissionDeniedError,
    StorageUnavailableError,
    TableMissingError,
    VersionExhaustedError,
    VersionMismatchError,
    WriteConflictError,
    WriteOutcomeUnknownError,
)
from core.limits import MAX_REQUEST_BYTES

logger = Logger()

PROBLEM_JSON: Final = "application/problem+json"
REALM: Final = "agent-memory"


class ProblemFieldError(BaseModel):
    field: str
    message: str


class Problem(BaseModel):
    """An RFC 9457 problem document."""

    type: str
    title: str
    status: int
    detail: str
    errors: list[ProblemFieldError] | None = None


# The one table from domain errors to HTTP: status, problem type slug and title.
DOMAIN_STATUS: Final[dict[type[DomainError], tuple[int, str, str]]] = {
    InvalidInputError: (422, "invalid-input", "The request breaks the memory contract"),
    MemoryNotFoundError: (404, "not-found", "No such memory"),
    VersionMismatchError: (412, "version-mismatch", "The memory changed since that version"),
    WriteConflictError: (409, "write-conflict", "The write collided with another one in flight"),
    StorageUnavailableError: (503, "storage-unavailable", "Storage is briefly unavailable"),
    # A 503 as any storage failure, with a type of its own: a client that retries blindly may write twice.
    WriteOutcomeUnknownError: (503, "write-outcome-unknown", "Storage failed after the write was sent"),
    TableMissingError: (503, "table-missing", "The storage table is missing"),
    AuthenticationError: (401, "unauthenticated", "A valid API key is required"),
    PermissionDeniedError: (403, "forbidden", "The API key may not do this"),
    KeyNotFoundError: (404, "key-not-found", "No such API key"),
    # 507: the namespace cannot store another memory, a state no retry and no other body can change.
    NamespaceFullError: (507, "namespace-full", "The namespace has no memory id left"),
    # 409 as the resource's state forbids the change; its own type (and no Retry-After) tells it from a collision.
    VersionExhaustedError: (409, "version-exhausted", "The memory is at its highest version"),
}

# The titles a caller holding an OAuth access token reads instead (the error's `by_token`): it has no key to mend.
TOKEN_TITLES: Final[dict[type[DomainError], str]] = {
    AuthenticationError: "A valid access token is required",
    PermissionDeniedError: "The access token may not do this",
}


def problem_response(
    status: int,
    slug: str,
    title: str,
    detail: str,
    errors: list[FieldError] | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    body = Problem(
        type=f"urn:agent-memory:problem:{slug}",
        title=title,
        status=status,
        detail=detail,
        errors=[ProblemFieldError(field=e.field, message=e.message) for e in errors] if errors is not None else None,
    )
    return JSONResponse(
        body.model_dump(exclude_none=True), status_code=status, headers=headers, media_type=PROBLEM_JSON
    )


# The one table of the problems HTTP itself raises (type `http-error`): a path no route serves, a method it does not
# allow, a request refused before any domain rule is read (under `serve`, one too long to read); any other status is
# an "HTTP error".
HTTP_ERROR_TITLES: Final[dict[int, str]] = {
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    414: "URI too long",
    431: "Request header fields too large",
}


def http_problem(status: int, detail: str, headers: dict[str, str] | None = None) -> JSONResponse:
    """The problem document of an HTTP-level refusal: `status`, titled from HTTP_ERROR_TITLES."""
    return problem_response(status, "http-error", HTTP_ERROR_TITLES.get(status, "HTTP error"), detail, headers=headers)


def www_authenticate(exc: AuthenticationError) -> str:
    """The RFC 6750 challenge: `invalid_token` only when a bearer key was presented and refused."""
    challenge = f'Bearer realm="{REALM}"'
    return f'{challenge}, error="invalid_token"' if exc.credentials_given else challenge


def log_operator_error(exc: DomainError) -> None:
    """One log line for each answer a caller cannot fix: the operator must act (a missing table)."""
    if isinstance(exc, TableMissingError):
        logger.error(f"table {exc.table_name} does not exist: answered 503 until it is created again")


def domain_problem(exc: DomainError) -> JSONResponse:
    """The problem document, status and headers for a domain error."""
    log_operator_error(exc)
    status, slug, title = DOMAIN_STATUS[type(exc)]
    headers: dict[str, str] = {}
    if isinstance(exc, StorageUnavailableError | WriteConflictError):
        headers["Retry-After"] = str(exc.retry_after_seconds)
    if isinstance(exc, VersionMismatchError):
        headers["ETag"] = f'"{exc.current_version}"'
    if isinstance(exc, AuthenticationError):
        headers["WWW-Authenticate"] = www_authenticate(exc)
    if isinstance(exc, PermissionDeniedError):
        headers["WWW-Authenticate"] = f'Bearer realm="{REALM}", error="insufficient_scope", scope="{exc.scope}"'
    errors = list(exc.errors) if isinstance(exc, InvalidInputError) else None
    title = TOKEN_TITLES.get(type(exc), title) if getattr(exc, "by_token", False) else title
    return problem_response(status, slug, title, str(exc), errors, headers)


# What both doors read a request body as: JSON, declared as `application/json` or any `application/<x>+json` (RFC
# 6839), with any parameters, case-insensitively. A body declared as anything else is refused unread.
_JSON_MEDIA_TYPE: Final = re.compile(r"application/(?:[!#$%&'*+.^_`|~0-9a-z-]+\+)?json", re.IGNORECASE)
# The refusals of a body at either door: status, problem type slug and title.
UNSUPPORTED_MEDIA_TYPE: Final = (415, "unsupported-media-type", "The body is not declared as JSON")
BODY_TOO_LARGE: Final = (413, "bad-request-body", "Body too large")
BODY_TOO_LARGE_DETAIL: Final = f"the body must be at most {MAX_REQUEST_BYTES} bytes"


def declares_json(content_type: str | None) -> bool:
    return content_type is not None and bool(_JSON_MEDIA_TYPE.fullmatch(content_type.split(";", 1)[0].strip(" \t")))


def media_type_refusal(content_type: str | None) -> str:
    """The 415's detail for a body declared as `content_type` (None: not declared), naming what is read."""
    sent = "none was given" if content_type is None else f"not {content_type[:60]!r}"
    return f"the body must be JSON, declared as Content-Type: application/json (or application/<x>+json); {sent}"
