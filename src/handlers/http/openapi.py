"""The HTTP door's OpenAPI document: the core's own schemas (which carry every rule, core.schema) for bodies and
query parameters, the Problem schema and the error responses every route shares, and what only HTTP says: optional
parameters without a `null` alternative, the HTTP-only headers' syntax, response headers, date-times and links."""

from __future__ import annotations

import copy
from typing import Any, Final

from fastapi import FastAPI
from pydantic import BaseModel

from core.contract import RetrievalQuery
from core.limits import MAX_REQUEST_BYTES
from core.schema import IDEMPOTENCY_KEY_SCHEMA
from handlers.http.input import entity_tag_list
from handlers.problem import PROBLEM_JSON, Problem

# RFC 9110 If-Match as the service reads it: `*`, or a comma-separated list of entity tags (`"3"`, weak `W/"3"`),
# empty list elements allowed; only a strong tag naming the current version matches. Visible ASCII inside the quotes
# (the RFC's obs-text, bytes 0x80-0xFF, is read too but not offered to clients).
_ENTITY_TAG: Final = '(?:W/)?"[!#-~]*"'
IF_MATCH_PATTERN: Final = f"^[ \\t]*(?:\\*|{entity_tag_list(_ENTITY_TAG)})[ \\t]*$"


def without_null(schema: dict[str, Any]) -> dict[str, Any]:
    """`X | None` of an optional parameter as just `X`: a parameter is left out by not sending it, and the text
    `null` is no value of it."""
    alternatives = schema.get("anyOf")
    if isinstance(alternatives, list):
        kept = [alternative for alternative in alternatives if alternative != {"type": "null"}]
        if len(kept) == 1 and len(kept) < len(alternatives):
            rest = {key: value for key, value in schema.items() if key != "anyOf"}
            return {**kept[0], **rest}
    return schema


def refine_parameters(openapi: dict[str, Any]) -> None:
    """Every optional header or query parameter without a `null` alternative; If-Match and Idempotency-Key with
    their syntax."""
    for path_item in openapi.get("paths", {}).values():
        for operation in path_item.values():
            for parameter in operation.get("parameters", []) if isinstance(operation, dict) else []:
                if parameter.get("in") in ("header", "query") and not parameter.get("required", False):
                    parameter["schema"] = without_null(parameter["schema"])
                if parameter.get("in") == "header" and parameter["name"].lower() == "if-match":
                    parameter["schema"]["pattern"] = IF_MATCH_PATTERN
                if parameter.get("in") == "header" and parameter["name"].lower() == "idempotency-key":
                    parameter["schema"] |= IDEMPOTENCY_KEY_SCHEMA


# Response headers a client needs, by (path, method, status): the ETag that `If-Match` takes, the new record's
# Location. A 412 for a malformed If-Match is answered before the record is read, so its ETag is optional.
_ETAG: Final = {
    "description": 'The record\'s version in quotes, e.g. "3": send it back as `If-Match`.',
    "schema": {"type": "string", "pattern": '^"[1-9][0-9]*"$'},
}
_LOCATION: Final = {
    "description": "The new record's path, `/memories/{id}`.",
    "schema": {"type": "string", "pattern": "^/memories/[1-9][0-9]*$"},
}
_RETRY_AFTER: Final = {
    "description": "Seconds to wait before retrying.",
    "schema": {"type": "string", "pattern": "^[0-9]+$"},
}
_RECORD_HEADERS: Final[dict[tuple[str, str, str], dict[str, dict[str, Any]]]] = {
    ("/memories", "post", "201"): {"ETag": {**_ETAG, "required": True}, "Location": {**_LOCATION, "required": True}},
    ("/memories/{memory_id}", "get", "200"): {"ETag": {**_ETAG, "required": True}},
    ("/memories/{memory_id}", "patch", "200"): {"ETag": {**_ETAG, "required": True}},
    ("/memories/{memory_id}", "patch", "204"): {"ETag": {**_ETAG, "required": True}},
    ("/memories/{memory_id}", "patch", "412"): {
        "ETag": {
            **_ETAG,
            "description": "The current version's ETag, when `If-Match` was well-formed but named another version.",
        }
    },
}
# Statuses that always say when to retry.
_RETRY_STATUSES: Final = ("409", "429", "503")
# The timestamps of a record: the contract's one spelling, an RFC 3339 date-time in UTC.
_TIMESTAMPS: Final = ("created_at", "updated_at", "last_accessed_at")
# The operations a created record's id leads to (OpenAPI links from POST /memories' 201).
_RECORD_LINKS: Final = {"GetMemory": "get", "UpdateMemory": "patch", "DeleteMemory": "delete"}


def _date_time(schema: dict[str, Any]) -> None:
    if schema.get("type") == "string":
        schema["format"] = "date-time"
    for alternative in schema.get("anyOf", []):
        _date_time(alternative)


def refine_responses(openapi: dict[str, Any]) -> None:
    """Declare the response headers clients need (ETag, Location, Retry-After), the record's timestamps as
    date-times, and links from a create to the created record's operations."""
    paths = openapi.get("paths", {})
    for path, path_item in paths.items():
        for method, operation in path_item.items():
            for status, response in operation.get("responses", {}).items():
                headers = dict(_RECORD_HEADERS.get((path, method, status), {}))
                if status in _RETRY_STATUSES:
                    headers["Retry-After"] = {**_RETRY_AFTER, "required": True}
                if headers:
                    response.setdefault("headers", {}).update(copy.deepcopy(headers))
    record = openapi.get("components", {}).get("schemas", {}).get("Memory", {})
    for name in _TIMESTAMPS:
        if name in record.get("properties", {}):
            _date_time(record["properties"][name])
    created = paths.get("/memories", {}).get("post", {}).get("responses", {}).get("201")
    record_item = paths.get("/memories/{memory_id}", {})
    if created is not None:
        created["links"] = {
            name: {
                "operationId": record_item[method]["operationId"],
                "parameters": {"memory_id": "$response.body#/id"},
                "description": f"The created memory's `{method.upper()} /memories/{{memory_id}}`.",
            }
            for name, method in _RECORD_LINKS.items()
            if method in record_item
        }


def problem_doc(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {PROBLEM_JSON: {"schema": {"$ref": "#/components/schemas/Problem"}}},
    }


def etag_only_doc(done: str) -> dict[str, Any]:
    """The 204 a write answers a key without the `read` scope: the record's version, never the record."""
    return {
        "description": f"{done}, for a key without the `read` scope: no body, only the `ETag`.",
        "headers": {"ETag": {"description": 'The version, quoted: "3".', "schema": {"type": "string"}}},
    }


COMMON_RESPONSES: Final[dict[int | str, dict[str, Any]]] = {
    401: {
        **problem_doc("No valid API key: missing, malformed, unknown, expired or revoked."),
        "headers": {"WWW-Authenticate": {"description": "The Bearer challenge.", "schema": {"type": "string"}}},
    },
    403: problem_doc("The API key lacks the scope this route needs (`read` for GET, `write` otherwise)."),
    429: problem_doc("Throttled; retry later."),
    503: problem_doc(
        "Storage is briefly unavailable; retry after `Retry-After` seconds. Type `write-outcome-unknown`: a write was "
        "sent and never confirmed, so it may have happened; `detail` says how to retry it safely (a create with the "
        "same `Idempotency-Key`)."
    ),
}
BODY_RESPONSES: Final[dict[int | str, dict[str, Any]]] = {
    400: problem_doc("The body is not JSON."),
    413: problem_doc(f"The body is over {MAX_REQUEST_BYTES} bytes."),
    415: problem_doc("The body is not declared as JSON: send `Content-Type: application/json`."),
}
INVALID_INPUT_RESPONSES: Final[dict[int | str, dict[str, Any]]] = {
    422: problem_doc("A field breaks the contract; `errors` names each one.")
}
NOT_FOUND_RESPONSES: Final[dict[int | str, dict[str, Any]]] = {
    404: problem_doc("No such memory (missing, deleted or not numeric)."),
    422: problem_doc("Never sent by this route; declared because every route shares one error format."),
}


def json_schema_body(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema()
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}


def document_schemas(app: FastAPI) -> None:
    """Put the Problem schema that every error response refers to into the OpenAPI components, and state the
    parameters as the service reads them (handlers.http.openapi)."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = generate()
            problem = Problem.model_json_schema(ref_template="#/components/schemas/{model}")
            components = schema.setdefault("components", {}).setdefault("schemas", {})
            components.update(problem.pop("$defs", {}))
            components["Problem"] = problem
            refine_parameters(schema)
            refine_responses(schema)
        return app.openapi_schema  # type: ignore[return-value]  # set by generate()

    app.openapi = openapi  # type: ignore[method-assign]  # FastAPI's documented way to customise the schema


def retrieval_parameters(model: type[BaseModel] = RetrievalQuery) -> list[dict[str, Any]]:
    """The query parameters of `model` (a retrieval, by default), documented as its JSON Schema says (required where
    it requires them: a recall's `query`)."""
    schema = model.model_json_schema()
    required = set(schema.get("required", ()))
    return [
        {
            "name": name,
            "in": "query",
            "required": name in required,
            "description": prop.get("description", ""),
            "schema": without_null({k: v for k, v in prop.items() if k not in ("description", "title")}),
        }
        for name, prop in schema["properties"].items()
    ]
