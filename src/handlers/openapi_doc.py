"""The OpenAPI document's schemas made as exact as the rules the core enforces, so that a client (or a fuzzer)
generating from the document sends what the service accepts, and what the document rules out is refused.

Pydantic derives only types and enums from the core's models; the rules its validators apply after trimming
(content length, hidden characters, the tag alphabet) are spelled here as patterns. Each pattern is written in
the regex syntax that Python's `re` and Rust's `regex` (the validators most OpenAPI tools use) read alike: explicit
character lists, no `\\s` (the two disagree on it), `\\uXXXX`/`\\UXXXXXXXX` escapes only.
"""

from __future__ import annotations

import copy
from typing import Any, Final

from core.contract import MAX_OFFSET, Q_MAX_CHARS
from core.model import CONTENT_MAX_CHARS, ID_DIGITS, IDEMPOTENCY_KEY_MAX_CHARS, TAG_MAX_CHARS, TAGS_MAX


def _escape(code_point: int) -> str:
    return f"\\u{code_point:04X}" if code_point <= 0xFFFF else f"\\U{code_point:08X}"


def _ranges(code_points: list[int]) -> str:
    """A character-class body for the given code points, runs collapsed to ranges."""
    parts: list[str] = []
    start = previous = code_points[0]
    for point in [*code_points[1:], -1]:
        if point == previous + 1:
            previous = point
            continue
        parts.append(_escape(start) if start == previous else f"{_escape(start)}-{_escape(previous)}")
        start = previous = point
    return "".join(parts)


# What `str.strip()` removes: the code points for which `str.isspace()` holds (a unit test keeps this list exact).
WHITESPACE_POINTS: Final = (
    *range(0x09, 0x0E),
    *range(0x1C, 0x21),
    0x85,
    0xA0,
    0x1680,
    *range(0x2000, 0x200B),
    0x2028,
    0x2029,
    0x202F,
    0x205F,
    0x3000,
)
WHITESPACE: Final = _ranges(list(WHITESPACE_POINTS))
# What content may not hold once trimmed (core.model's hidden characters): C0 controls but tab and newline, and the
# Unicode tag characters.
HIDDEN: Final = _ranges([*range(0x00, 0x09), *range(0x0B, 0x20), *range(0xE0000, 0xE0080)])

# Content: at least one character once trimmed, none of them hidden, any whitespace around them.
CONTENT_PATTERN: Final = (
    f"^[{WHITESPACE}]*[^{WHITESPACE}{HIDDEN}](?:[^{HIDDEN}]*[^{WHITESPACE}{HIDDEN}])?[{WHITESPACE}]*$"
)
# ... and at most CONTENT_MAX_CHARS of them: content is too long when two non-whitespace characters lie that far
# apart. (Not a bounded repeat inside CONTENT_PATTERN: one of a class that large is over the size limit of Rust's
# `regex`, and `maxLength` would count the whitespace around the content too.)
CONTENT_TOO_LONG_PATTERN: Final = f"[^{WHITESPACE}][\\s\\S]{{{CONTENT_MAX_CHARS - 1},}}[^{WHITESPACE}]"
# A tag once trimmed and lower-cased: U+212A KELVIN SIGN is the one non-ASCII character that lower-cases into the
# tag alphabet (to `k`).
_TAG_FIRST: Final = "A-Za-z0-9\\u212A"
TAG_PATTERN: Final = f"^[{WHITESPACE}]*[{_TAG_FIRST}][{_TAG_FIRST}_.:\\-]{{0,{TAG_MAX_CHARS - 1}}}[{WHITESPACE}]*$"
# RFC 9110 If-Match as the service reads it: `*` or one strong ETag (the version in quotes).
IF_MATCH_PATTERN: Final = f'^[{WHITESPACE}]*(?:\\*|"[0-9]{{1,{ID_DIGITS}}}")[{WHITESPACE}]*$'
# An Idempotency-Key as IdempotentCreate accepts it: 1 to 255 visible ASCII characters.
IDEMPOTENCY_KEY_PATTERN: Final = f"^[!-~]{{1,{IDEMPOTENCY_KEY_MAX_CHARS}}}$"

# Retrieval query parameters: bounds the core checks that pydantic's schema does not carry.
_QUERY_BOUNDS: Final[dict[str, dict[str, Any]]] = {
    "limit": {"minimum": 1},
    "offset": {"minimum": 0, "maximum": MAX_OFFSET},
    "q": {"maxLength": Q_MAX_CHARS},
}


def request_body_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A create or PATCH body's schema (a model's JSON schema) with the content and tag rules added."""
    refined = copy.deepcopy(schema)
    properties = refined.get("properties", {})
    if "content" in properties:
        properties["content"]["pattern"] = CONTENT_PATTERN
        properties["content"]["not"] = {"pattern": CONTENT_TOO_LONG_PATTERN}
    if "tags" in properties:
        properties["tags"]["items"] = {"type": "string", "pattern": TAG_PATTERN}
        # Duplicates count once on the server; a client keeping to 20 listed tags is always within the rule.
        properties["tags"]["maxItems"] = TAGS_MAX
    return refined


def _without_null(schema: dict[str, Any]) -> dict[str, Any]:
    """`X | None` of an optional parameter as just `X`: a parameter is left out by not sending it, and the text
    `null` is no value of it."""
    alternatives = schema.get("anyOf")
    if isinstance(alternatives, list):
        kept = [alternative for alternative in alternatives if alternative != {"type": "null"}]
        if len(kept) == 1 and len(kept) < len(alternatives):
            rest = {key: value for key, value in schema.items() if key != "anyOf"}
            return {**kept[0], **rest}
    return schema


def query_parameter_schema(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """A retrieval parameter's schema without its `null` alternative and with the core's bounds."""
    return {**_without_null(schema), **_QUERY_BOUNDS.get(name, {})}


def refine_parameters(openapi: dict[str, Any]) -> None:
    """Every optional header or query parameter without a `null` alternative; If-Match and Idempotency-Key with
    their syntax."""
    for path_item in openapi.get("paths", {}).values():
        for operation in path_item.values():
            for parameter in operation.get("parameters", []) if isinstance(operation, dict) else []:
                if parameter.get("in") in ("header", "query") and not parameter.get("required", False):
                    parameter["schema"] = _without_null(parameter["schema"])
                if parameter.get("in") == "header" and parameter["name"].lower() == "if-match":
                    parameter["schema"]["pattern"] = IF_MATCH_PATTERN
                if parameter.get("in") == "header" and parameter["name"].lower() == "idempotency-key":
                    parameter["schema"]["pattern"] = IDEMPOTENCY_KEY_PATTERN
