"""What the HTTP door reads from a request: the JSON body (declared as JSON, bounded, each key given once), the
`If-Match` precondition, the retrieval query string, `Prefer: no-stamp`; and the failures only this door has
(bodies not declared as JSON, unreadable or oversized, a malformed If-Match)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Final, TypeVar

from fastapi import Header
from starlette.requests import Request
from starlette.responses import Response

from core.contract import RetrievalQuery
from core.errors import FieldError, InvalidInputError
from core.limits import MAX_REQUEST_BYTES, VERSION_DIGITS
from core.model import InputModel, Memory
from handlers.json_body import parse_json
from handlers.problem import (
    BODY_TOO_LARGE,
    BODY_TOO_LARGE_DETAIL,
    UNSUPPORTED_MEDIA_TYPE,
    declares_json,
    media_type_refusal,
)

Query = TypeVar("Query", bound=InputModel)


def entity_tag_list(tag: str) -> str:
    """The pattern of a comma-separated list of entity tags (each matching `tag`), as If-Match takes it: a list may
    hold empty elements (RFC 9110 5.6.1.2). Read by parse_if_match, and documented by handlers.http.openapi with the
    tags a client may send."""
    return rf"(?:,[ \t]*)*{tag}(?:[ \t]*,(?:[ \t]*,)*[ \t]*{tag})*(?:[ \t]*,)*"


# RFC 9110 If-Match: `*` or a list of entity tags, each `"..."` or weak `W/"..."`. The one parser is parse_if_match.
_ENTITY_TAG = re.compile(r'(?:W/)?"[\x21\x23-\x7e\x80-\xff]*"')
_IF_MATCH_LIST = re.compile(entity_tag_list(_ENTITY_TAG.pattern))
# The only tags that can match: a version in quotes, spelled as the ETag spells it (strong comparison).
_VERSION_TAG = re.compile(rf'"([1-9][0-9]{{0,{VERSION_DIGITS - 1}}})"')


class HttpProblemError(Exception):
    """A failure that exists only at the HTTP door (unreadable or oversized bodies)."""

    def __init__(self, status: int, title: str, detail: str, slug: str = "bad-request-body") -> None:
        self.status, self.title, self.detail, self.slug = status, title, detail, slug
        super().__init__(detail)


async def read_json_body(request: Request) -> object:
    """The body parsed as JSON: declared as JSON (a 415 before anything is read, or once a body came without a
    Content-Type), bounded in size before it is read whole, and refused naming any key an object holds twice
    (JSON leaves duplicates undefined; last-wins would store what a client may not have meant)."""
    content_type = request.headers.get("content-type")
    if content_type is not None and not declares_json(content_type):
        raise _unsupported(content_type)
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_REQUEST_BYTES:
        raise _too_large()
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_REQUEST_BYTES:
            raise _too_large()
    if content_type is None and body:
        raise _unsupported(None)
    try:
        return parse_json(bytes(body))
    except (ValueError, RecursionError):
        raise HttpProblemError(400, "Body is not JSON", "the body must be a JSON object") from None


def _unsupported(content_type: str | None) -> HttpProblemError:
    status, slug, title = UNSUPPORTED_MEDIA_TYPE
    return HttpProblemError(status, title, media_type_refusal(content_type), slug)


def _too_large() -> HttpProblemError:
    status, slug, title = BODY_TOO_LARGE
    return HttpProblemError(status, title, BODY_TOO_LARGE_DETAIL, slug)


def parse_if_match(header: str | None) -> frozenset[int] | None:
    """The versions an `If-Match` admits (RFC 9110 13.1.1): None for no precondition or `*` (any existing record),
    else the versions its strong tags name; any one of them matches. A weak tag never matches (If-Match compares
    strongly), nor does a tag that names no version, so a list of only such tags admits nothing (a 412). A value
    that is not `*` or a list of entity tags is refused with a 412 whose detail names the syntax."""
    if header is None:
        return None
    value = header.strip(" \t")
    if value == "*":
        return None
    if not _IF_MATCH_LIST.fullmatch(value):
        raise HttpProblemError(
            412,
            "If-Match is malformed",
            f"If-Match must be * or a comma-separated list of entity tags, each in double quotes (the ETag of a "
            f'read, e.g. "3", or "2", "3"), not {value[:40]!r}',
            slug="malformed-if-match",
        )
    return frozenset(
        int(version.group(1)) for tag in _ENTITY_TAG.finditer(value) if (version := _VERSION_TAG.fullmatch(tag.group()))
    )


def etag(memory: Memory) -> str:
    """The record's version as an entity tag: `"3"`."""
    return f'"{memory.version}"'


def query_parameters(request: Request) -> dict[str, list[str]]:
    """Every value of each query parameter, so that one given twice can be refused rather than guessed at."""
    return {name: request.query_params.getlist(name) for name in request.query_params}


def query_string(model: type[Query], params: Mapping[str, list[str]]) -> Query:
    """The query (`model`: a retrieval, a history page) a query string asks for; other parameters are ignored, and
    one of its parameters given twice is ambiguous and refused."""
    fields = tuple(model.model_fields)
    repeated = [name for name in fields if len(params.get(name, [])) > 1]
    if repeated:
        raise InvalidInputError([FieldError(name, "must be given at most once") for name in repeated])
    return model.parse({name: values[0] for name, values in params.items() if name in fields})


def retrieval_query(params: Mapping[str, list[str]]) -> RetrievalQuery:
    """The retrieval a query string asks for."""
    return query_string(RetrievalQuery, params)


NO_STAMP: Final = "no-stamp"


def prefers_no_stamp(request: Request) -> bool:
    """Whether the request says `Prefer: no-stamp` (RFC 7240: comma-separated preferences, each a token with an
    optional `=value` and `;` parameters, names compared case-insensitively, in one or several Prefer headers)."""
    for value in request.headers.getlist("prefer"):
        for preference in value.split(","):
            name = preference.split(";", 1)[0].split("=", 1)[0].strip().lower()
            if name == NO_STAMP:
                return True
    return False


# Documents the header in the OpenAPI document; prefers_no_stamp reads it (all of its values, RFC 7240).
Prefer = Annotated[
    str | None,
    Header(
        description=f"`{NO_STAMP}` (RFC 7240): read without stamping `last_accessed_at`, as a person auditing "
        f"rather than an agent using the memories; the response then says `Preference-Applied: {NO_STAMP}`.",
    ),
]


def stamps_wanted(request: Request, response: Response) -> bool:
    """Whether this read stamps; when it does not, the response says the preference was applied."""
    if prefers_no_stamp(request):
        response.headers["Preference-Applied"] = NO_STAMP
        return False
    return True
