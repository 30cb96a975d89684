"""The HTTP door: FastAPI routes over the core's service (handlers.aws.http serves it on Lambda)."""

from collections.abc import Awaitable, Callable
from functools import partial
from typing import Annotated, Literal

from aws_lambda_powertools import Logger
from fastapi import Depends, FastAPI, Header, Query, Request, Response, Security
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.exceptions import HTTPException as StarletteHTTPException

from core.access import Principal, Scope, sees_records
from core.contract import Page
from core.errors import DomainError, FieldError, InvalidInputError
from core.history import DEFAULT_RETENTION_DAYS, HistoryPage, HistoryQuery
from core.limits import IDEMPOTENCY_KEY_MAX_CHARS, IDEMPOTENCY_WINDOW_HOURS, MAX_MEMORY_ID, MAX_VERSION
from core.memories import MemoryService
from core.model import IdempotentCreate, Memory, MemoryChanges, NewMemory, parse_memory_id
from handlers.auth import Authenticator, authorize, presented_credentials
from handlers.concurrency import RunBlocking, inline
from handlers.console import CONSOLE_PATH, Console
from handlers.http.input import (
    NO_STAMP,
    HttpProblemError,
    Prefer,
    etag,
    parse_if_match,
    query_string,
    read_json_body,
    retrieval_query,
    stamps_wanted,
)
from handlers.http.openapi import (
    BODY_RESPONSES,
    COMMON_RESPONSES,
    INVALID_INPUT_RESPONSES,
    NOT_FOUND_RESPONSES,
    document_schemas,
    etag_only_doc,
    json_schema_body,
    problem_doc,
    retrieval_parameters,
)
from handlers.http.routing import allowed_methods, no_route
from handlers.metrics import rows_served
from handlers.problem import DOMAIN_STATUS, domain_problem, problem_response

logger = Logger()


def _with_etag(memory: Memory, response: Response) -> Memory:
    response.headers["ETag"] = etag(memory)
    return memory


def _written(memory: Memory, caller: Principal, response: Response) -> Memory | Response:
    """A changed record with its ETag, or only the ETag (204) for a key that may not read records."""
    if not sees_records(caller):
        return Response(status_code=204, headers={"ETag": etag(memory)})
    return _with_etag(memory, response)


API_KEY_SCHEME = HTTPBearer(
    scheme_name="ApiKey",
    bearerFormat="am_<key id>_<secret>",
    description="An agent-memory API key. Its namespace is the only one the request sees; its scopes decide "
    "what it may do (`read`: GET routes, `write`: POST, PATCH and DELETE).",
    # Declares the scheme in the OpenAPI document; the key itself is read and checked by `authorize`.
    auto_error=False,
)


def create_app(
    provide_service: Callable[[], MemoryService],
    authenticate: Authenticator,
    version: str,
    run_blocking: RunBlocking = inline,
    retention_days: int = DEFAULT_RETENTION_DAYS,
) -> FastAPI:
    """The HTTP API over the service `provide_service` gives (called per request, so it can be built lazily),
    authenticating each request with `authenticate`; handlers.bootstrap assembles both, tests pass their own.

    Every blocking service and key call goes through `run_blocking`, the entrypoint's concurrency policy
    (handlers.concurrency).
    """
    app = FastAPI(
        title="agent-memory",
        version=version,
        description="Memory for AI agents: store facts, preferences, identity and events; find them predictably.",
        responses=COMMON_RESPONSES,
        # Only the document: Swagger UI and ReDoc load their assets from a public CDN (blank offline), and serving
        # them locally would not fit the HTTP function's artifact budget. Any OpenAPI viewer reads /openapi.json.
        docs_url=None,
        redoc_url=None,
        swagger_ui_oauth2_redirect_url=None,
        # A path with a stray slash is a 404 problem: Starlette's redirect would build its Location from the Host
        # header the client sent, an open redirect to any host.
        redirect_slashes=False,
    )

    # Dependencies are coroutines, like the routes: FastAPI would run plain functions in a worker thread, a hop
    # costing more than the rest of a warm request.
    async def service() -> MemoryService:
        return provide_service()

    blocking = run_blocking

    Service = Annotated[MemoryService, Depends(service)]  # noqa: N806  # a type alias, named like one

    def caller_allowed(scope: Scope) -> Callable[..., Awaitable[Principal]]:
        async def principal(
            request: Request, _: Annotated[HTTPAuthorizationCredentials | None, Security(API_KEY_SCHEME)]
        ) -> Principal:
            return await blocking(authorize, authenticate, presented_credentials(request.headers), scope)

        return principal

    # The namespace of every route comes from the key alone, never from the request.
    Reader = Annotated[Principal, Depends(caller_allowed("read"))]  # noqa: N806
    Writer = Annotated[Principal, Depends(caller_allowed("write"))]  # noqa: N806

    @app.exception_handler(DomainError)
    async def _domain_error(request: Request, exc: DomainError) -> JSONResponse:
        return domain_problem(exc)

    @app.exception_handler(HttpProblemError)
    async def _http_problem(request: Request, exc: HttpProblemError) -> JSONResponse:
        return problem_response(exc.status, exc.slug, exc.title, exc.detail)

    @app.exception_handler(RequestValidationError)
    async def _request_validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [FieldError(".".join(str(p) for p in e["loc"][1:]) or "body", e["msg"]) for e in exc.errors()]
        detail = "; ".join(str(e) for e in errors)
        return problem_response(422, "invalid-input", DOMAIN_STATUS[InvalidInputError][2], detail, errors)

    @app.exception_handler(StarletteHTTPException)
    async def _http_exception(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        title = {404: "Not found", 405: "Method not allowed"}.get(exc.status_code, "HTTP error")
        headers = dict(exc.headers) if exc.headers else {}
        detail = str(exc.detail)
        if exc.status_code == 404:
            detail = no_route(app, request)
        if exc.status_code == 405:
            # Starlette names only the first route matching the path; a resource allows every route's methods.
            headers["Allow"] = ", ".join(allowed_methods(app, request.scope))
        return problem_response(exc.status_code, "http-error", title, detail, headers=headers)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        logger.exception("unhandled error")
        return problem_response(500, "internal-error", "Internal error", "an unexpected error occurred")

    @app.get("/healthz", include_in_schema=False)
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    # The memory console: a page for people, open like /healthz (it holds no data; the person's key is sent by it).
    console = Console(retention_days)
    app.add_route(CONSOLE_PATH, console.redirect, methods=["GET", "HEAD"], include_in_schema=False)
    app.add_route(f"{CONSOLE_PATH}/", console.serve, methods=["GET", "HEAD"], include_in_schema=False)
    app.add_route(f"{CONSOLE_PATH}/{{name}}", console.serve, methods=["GET", "HEAD"], include_in_schema=False)

    @app.post(
        "/memories",
        status_code=201,
        response_model=Memory,
        responses={
            **BODY_RESPONSES,
            **INVALID_INPUT_RESPONSES,
            409: problem_doc("Collides with a write in flight; retry."),
            507: problem_doc(f"The namespace has used every id up to {MAX_MEMORY_ID}; nothing was stored."),
        },
        openapi_extra=json_schema_body(NewMemory),
        summary="Create a memory",
    )
    async def create_memory(
        request: Request,
        response: Response,
        service: Service,
        caller: Writer,
        idempotency_key: Annotated[
            str | None,
            Header(
                alias="Idempotency-Key",
                description="A unique string (e.g. a UUID) naming this create, 1 to "
                f"{IDEMPOTENCY_KEY_MAX_CHARS} visible ASCII characters. Within {IDEMPOTENCY_WINDOW_HOURS} hours, a "
                "retry with the same key and body returns the first response's record with 201 and creates nothing; "
                "the same key with another body is a 422; while an identical request is still in flight, a 409 with "
                "Retry-After.",
            ),
        ] = None,
    ) -> Memory:
        new = NewMemory.parse(await read_json_body(request))
        idempotent = None if idempotency_key is None else IdempotentCreate.of(idempotency_key, new, "Idempotency-Key")
        memory = await blocking(service.create, caller.namespace, new, idempotent, caller.key_id)
        response.headers["Location"] = f"/memories/{memory.id}"
        return _with_etag(memory, response)

    @app.get(
        "/memories/{memory_id}",
        response_model=Memory,
        responses=NOT_FOUND_RESPONSES,
        summary="Read one memory",
        description=f"Stamps `last_accessed_at`, unless the request says `Prefer: {NO_STAMP}`.",
    )
    async def get_memory(
        memory_id: str, request: Request, response: Response, service: Service, caller: Reader, prefer: Prefer = None
    ) -> Memory:
        stamp = stamps_wanted(request, response)
        memory = await blocking(partial(service.get, stamp=stamp), caller.namespace, parse_memory_id(memory_id))
        rows_served(1)
        return _with_etag(memory, response)

    @app.patch(
        "/memories/{memory_id}",
        response_model=Memory,
        responses={
            **BODY_RESPONSES,
            **NOT_FOUND_RESPONSES,
            **INVALID_INPUT_RESPONSES,
            204: etag_only_doc("Updated"),
            409: problem_doc(
                "Other writers kept colliding with this one; retry. Or (type `version-exhausted`, no `Retry-After`) "
                f"the memory is at version {MAX_VERSION} and can change no further."
            ),
            412: problem_doc("`If-Match` names no current version, or is malformed (`type` tells which)."),
        },
        openapi_extra=json_schema_body(MemoryChanges),
        summary="Change a memory's editable fields",
    )
    async def update_memory(
        memory_id: str,
        request: Request,
        response: Response,
        service: Service,
        caller: Writer,
        if_match: Annotated[str | None, Header(description='The ETag read earlier, e.g. "3".')] = None,
    ) -> Memory | Response:
        mid = parse_memory_id(memory_id)
        changes = MemoryChanges.parse(await read_json_body(request))
        memory = await blocking(service.update, caller.namespace, mid, changes, parse_if_match(if_match), caller.key_id)
        return _written(memory, caller, response)

    @app.delete(
        "/memories/{memory_id}",
        status_code=204,
        responses=NOT_FOUND_RESPONSES,
        summary="Soft-delete a memory, or purge a deleted one",
        description="Without `purge`, the memory is marked deleted: it stays restorable for the retention window, "
        "then it is purged. With `purge=true`, a memory already deleted is purged at once: its record and its history "
        "are gone for good (an active memory is a 404: delete it first).",
    )
    async def delete_memory(
        memory_id: str,
        service: Service,
        caller: Writer,
        purge: Annotated[
            Literal["true", "false"], Query(description="true: purge a deleted memory now, for good.")
        ] = "false",
    ) -> Response:
        mid = parse_memory_id(memory_id)
        if purge == "true":
            await blocking(service.purge, caller.namespace, mid)
        else:
            await blocking(service.delete, caller.namespace, mid, caller.key_id)
        return Response(status_code=204)

    @app.post(
        "/memories/{memory_id}/restore",
        response_model=Memory,
        responses={
            **NOT_FOUND_RESPONSES,
            204: etag_only_doc("Restored"),
            409: problem_doc("Other writers kept colliding with this one; retry."),
        },
        summary="Restore a deleted memory",
        description="The memory gets back the status it had before the delete; `version` and `updated_at` stay. "
        "404 when it is missing, not deleted, or purged.",
    )
    async def restore_memory(memory_id: str, response: Response, service: Service, caller: Writer) -> Memory | Response:
        memory = await blocking(service.restore, caller.namespace, parse_memory_id(memory_id), caller.key_id)
        return _written(memory, caller, response)

    @app.get(
        "/memories/{memory_id}/history",
        response_model=HistoryPage,
        responses={**NOT_FOUND_RESPONSES, **INVALID_INPUT_RESPONSES},
        openapi_extra={"parameters": retrieval_parameters(HistoryQuery)},
        summary="A memory's revisions, newest first",
        description="Every change of the memory (created, updated, deleted, restored) as the record was right after "
        "it, when, and the id of the API key that made it; deleted memories too. Does not stamp `last_accessed_at`. "
        "404 when the memory never existed or is purged.",
    )
    async def memory_history(memory_id: str, request: Request, service: Service, caller: Reader) -> HistoryPage:
        mid = parse_memory_id(memory_id)
        params = {name: request.query_params.getlist(name) for name in request.query_params}
        page = await blocking(service.history, caller.namespace, mid, query_string(HistoryQuery, params))
        rows_served(len(page.items))
        return page

    @app.get(
        "/memories",
        response_model=Page,
        responses=INVALID_INPUT_RESPONSES,
        openapi_extra={"parameters": retrieval_parameters()},
        summary="Filter, sort and page memories",
        description=f"Stamps `last_accessed_at` of each returned record, unless the request says `Prefer: {NO_STAMP}`.",
    )
    async def search_memories(
        request: Request, response: Response, service: Service, caller: Reader, prefer: Prefer = None
    ) -> Page:
        stamp = stamps_wanted(request, response)
        params = {name: request.query_params.getlist(name) for name in request.query_params}
        page = await blocking(partial(service.search, stamp=stamp), caller.namespace, retrieval_query(params))
        rows_served(len(page.items))
        return page

    document_schemas(app)
    return app
