"""How the HTTP door answers what goes wrong: every failure is a problem document (handlers.problem), a domain error
by the one table of domain errors, a refusal of routing or HTTP by the one table of HTTP errors."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any, Final

from aws_lambda_powertools import Logger
from fastapi import Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from core.errors import DomainError, FieldError, InvalidInputError
from handlers.http.input import HttpProblemError
from handlers.http.routing import allowed_methods, no_route
from handlers.problem import domain_problem, http_problem, problem_response

logger = Logger()


async def domain_error(request: Request, exc: DomainError) -> Response:
    return domain_problem(exc)


async def http_only_problem(request: Request, exc: HttpProblemError) -> Response:
    return problem_response(exc.status, exc.slug, exc.title, exc.detail)


async def request_validation(request: Request, exc: RequestValidationError) -> Response:
    """A parameter FastAPI itself validated (a query literal), answered as an invalid input naming the field."""
    errors = [FieldError(".".join(str(p) for p in e["loc"][1:]) or "body", e["msg"]) for e in exc.errors()]
    return domain_problem(InvalidInputError(errors))


async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
    headers = dict(exc.headers) if exc.headers else {}
    detail = str(exc.detail)
    if exc.status_code == 404:
        detail = no_route(request.app, request)
    if exc.status_code == 405:
        # Starlette names only the first route matching the path; a resource allows every route's methods.
        headers["Allow"] = ", ".join(allowed_methods(request.app, request.scope))
    return http_problem(exc.status_code, detail, headers)


async def unexpected(request: Request, exc: Exception) -> Response:
    logger.exception("unhandled error")
    return problem_response(500, "internal-error", "Internal error", "an unexpected error occurred")


# The door's exception handlers (FastAPI copies them): the most specific class of an error picks its handler.
EXCEPTION_HANDLERS: Final[dict[int | type[Exception], Callable[[Request, Any], Coroutine[Any, Any, Response]]]] = {
    DomainError: domain_error,
    HttpProblemError: http_only_problem,
    RequestValidationError: request_validation,
    StarletteHTTPException: http_error,
    Exception: unexpected,
}
