"""The contract's text rules spelled as JSON Schema, so that both doors publish exactly what the core enforces: a
client (or a fuzzer) generating from a schema sends what the service accepts, and what the schema rules out is
refused. The core's types carry these (core.model, core.contract); the doors derive their documents from them.

The rules its validators apply after trimming (content length, hidden characters, the tag alphabet) are spelled as
patterns, in the regex syntax that Python's `re` and Rust's `regex` (the validators most OpenAPI tools use) read
alike: explicit character lists, no `\\s` (the two disagree on it), `\\uXXXX`/`\\UXXXXXXXX` escapes only.
"""

from __future__ import annotations

from typing import Annotated, Any, Final

from pydantic import BeforeValidator, Field

from core.limits import (
    CONTENT_MAX_CHARS,
    IDEMPOTENCY_KEY_MAX_CHARS,
    MAX_MEMORY_ID,
    RECALL_QUERY_MAX_CHARS,
    SUPERSEDE_MAX,
    TAG_MAX_CHARS,
    TAGS_MAX,
)


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
# What content may not hold once trimmed, the one list core.model's validator reads too: the control characters (C0
# but tab and newline, DEL, C1), and the Unicode tag characters. Some are whitespace as well (U+000D, U+0085): at
# the ends they are trimmed like any whitespace, inside they are refused.
HIDDEN_POINTS: Final = (
    *range(0x00, 0x09),
    *range(0x0B, 0x20),
    *range(0x7F, 0xA0),
    *range(0xE0000, 0xE0080),
)
HIDDEN: Final = _ranges(list(HIDDEN_POINTS))

# Content: at least one character once trimmed, none of them hidden, any whitespace around them.
CONTENT_PATTERN: Final = (
    f"^[{WHITESPACE}]*[^{WHITESPACE}{HIDDEN}](?:[^{HIDDEN}]*[^{WHITESPACE}{HIDDEN}])?[{WHITESPACE}]*$"
)
# ... and at most CONTENT_MAX_CHARS of them: content is too long when two non-whitespace characters lie that far
# apart. (Not a bounded repeat inside CONTENT_PATTERN: one of a class that large is over the size limit of Rust's
# `regex`, and `maxLength` would count the whitespace around the content too.)
CONTENT_TOO_LONG_PATTERN: Final = f"[^{WHITESPACE}][\\s\\S]{{{CONTENT_MAX_CHARS - 1},}}[^{WHITESPACE}]"
# A recall's question: like content, at least one character once trimmed and at most RECALL_QUERY_MAX_CHARS of them,
# but any character (it is asked, never stored).
RECALL_QUERY_PATTERN: Final = f"^[{WHITESPACE}]*[^{WHITESPACE}](?:[\\s\\S]*[^{WHITESPACE}])?[{WHITESPACE}]*$"
RECALL_QUERY_TOO_LONG_PATTERN: Final = f"[^{WHITESPACE}][\\s\\S]{{{RECALL_QUERY_MAX_CHARS - 1},}}[^{WHITESPACE}]"
# A tag once trimmed and lower-cased: U+212A KELVIN SIGN is the one non-ASCII character that lower-cases into the
# tag alphabet (to `k`).
_TAG_FIRST: Final = "A-Za-z0-9\\u212A"
TAG_PATTERN: Final = f"^[{WHITESPACE}]*[{_TAG_FIRST}][{_TAG_FIRST}_.:\\-]{{0,{TAG_MAX_CHARS - 1}}}[{WHITESPACE}]*$"
# An Idempotency-Key as IdempotentCreate accepts it: 1 to 255 visible ASCII characters.
IDEMPOTENCY_KEY_PATTERN: Final = f"^[!-~]{{1,{IDEMPOTENCY_KEY_MAX_CHARS}}}$"


CONTENT_SCHEMA: Final[dict[str, Any]] = {
    "type": "string",
    "minLength": 1,
    "pattern": CONTENT_PATTERN,
    "not": {"pattern": CONTENT_TOO_LONG_PATTERN},
}
RECALL_QUERY_SCHEMA: Final[dict[str, Any]] = {
    "type": "string",
    "minLength": 1,
    "pattern": RECALL_QUERY_PATTERN,
    "not": {"pattern": RECALL_QUERY_TOO_LONG_PATTERN},
}
TAG_SCHEMA: Final[dict[str, Any]] = {"type": "string", "pattern": TAG_PATTERN}
# Duplicates count once on the server; a client keeping to TAGS_MAX listed tags is always within the rule.
TAGS_SCHEMA: Final[dict[str, Any]] = {"type": "array", "items": TAG_SCHEMA, "maxItems": TAGS_MAX}
IDEMPOTENCY_KEY_SCHEMA: Final[dict[str, Any]] = {
    "type": "string",
    "minLength": 1,
    "maxLength": IDEMPOTENCY_KEY_MAX_CHARS,
    "pattern": IDEMPOTENCY_KEY_PATTERN,
}


def _integral(value: object) -> object:
    return int(value) if isinstance(value, float) and value.is_integer() else value


# JSON has one number type: 7.0 is the integer 7 (JSON Schema's `integer` admits it), so an id may be sent so.
SupersededIds = Annotated[
    list[Annotated[int, Field(ge=1, le=MAX_MEMORY_ID), BeforeValidator(_integral)]],
    Field(min_length=1, max_length=SUPERSEDE_MAX),
]
SUPERSEDES_DESCRIPTION = (
    f"Ids (1 to {SUPERSEDE_MAX}, distinct) of memories this one replaces, because what they said changed or they "
    "are merged into it: in the same atomic write each becomes invalid (version +1), its history naming this memory. "
    "A missing, deleted or repeated id refuses the whole write."
)
