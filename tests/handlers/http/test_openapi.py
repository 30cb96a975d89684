"""The OpenAPI document states what the service accepts, exactly: schemathesis (tests/integration/
test_schemathesis.py) generates requests from it and holds the service to it both ways, so each finding it made
is pinned here: a bound or pattern missing from the document, or one that disagrees with the core's validation."""

from __future__ import annotations

import re
import sys
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import example, given, settings
from hypothesis import strategies as st

from core.errors import InvalidInputError
from core.limits import CONTENT_MAX_CHARS
from core.model import IdempotentCreate, NewMemory, normalize_tag
from core.schema import (
    CONTENT_PATTERN,
    CONTENT_TOO_LONG_PATTERN,
    IDEMPOTENCY_KEY_PATTERN,
    TAG_PATTERN,
    WHITESPACE_POINTS,
)
from handlers.http.input import HttpProblemError, parse_if_match
from handlers.http.openapi import IF_MATCH_PATTERN

# Text that leans on what the rules are about: whitespace of every kind, hidden characters, the tag alphabet.
_EDGY = st.sampled_from(
    [chr(point) for point in WHITESPACE_POINTS] + ["\x00", "\x07", "\x7f", "\U000e0041", "\u212a", "\u0130", "a", "-"]
)
_TEXT = st.lists(st.one_of(_EDGY, st.characters(exclude_categories=["Cs"])), max_size=12).map("".join)


def _content_accepted(content: str) -> bool:
    try:
        NewMemory.parse({"content": content})
    except InvalidInputError:
        return False
    return True


def _content_documented(content: str) -> bool:
    return bool(re.search(CONTENT_PATTERN, content)) and not re.search(CONTENT_TOO_LONG_PATTERN, content)


def _tag_accepted(tag: str) -> bool:
    try:
        normalize_tag(tag)
    except ValueError:
        return False
    return True


def test_whitespace_is_exactly_what_strip_removes() -> None:
    assert set(WHITESPACE_POINTS) == {point for point in range(sys.maxunicode + 1) if chr(point).isspace()}


@settings(max_examples=200, deadline=None)
@given(_TEXT)
@example("")  # found by schemathesis: the document allowed empty content
@example(" \x1c x \x1f\r\n")
@example("a\x0bb")
@example("x\U000e0001y")
@example("a\x7fb")
@example("\x85a\x85")
@example("a\x85b")
@example(" \x80")
@example("\x9f")
def test_the_content_pattern_accepts_what_the_core_accepts(content: str) -> None:
    assert _content_documented(content) == _content_accepted(content)


@pytest.mark.parametrize(
    "content",
    [
        "a" * CONTENT_MAX_CHARS,
        " \u3000" + "a" * CONTENT_MAX_CHARS + "\n\n",
        # Found by schemathesis: with `maxLength` the document refused this, yet the service trims and accepts it.
        " \xa0\n\x1e" + "*" * (CONTENT_MAX_CHARS - 4) + "\u2004",
        "a" * (CONTENT_MAX_CHARS + 1),
        "a" + " " * (CONTENT_MAX_CHARS - 1) + "b",
    ],
)
def test_the_content_length_rule_counts_what_is_left_after_trimming(content: str) -> None:
    assert _content_documented(content) == _content_accepted(content)


@settings(max_examples=200, deadline=None)
@given(_TEXT)
@example("\x0c0\x1b")  # found by schemathesis: the document allowed any string as a tag
@example(" \u212aelvin ")
@example("\u0130stanbul")
@example("a" * 64)
@example("a" * 65)
def test_the_tag_pattern_accepts_what_the_core_accepts(tag: str) -> None:
    assert bool(re.search(TAG_PATTERN, tag)) == _tag_accepted(tag)


def _if_match_accepted(header: str) -> bool:
    try:
        parse_if_match(header)
    except HttpProblemError:
        return False
    return True


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(['"', "W/", "w/", ",", " ", "\t", "*", "1", "x", ";", "\\", '"3"']), max_size=8))
@example(['"3"'])
@example([" ", '"3"', " "])
@example(["*"])
@example(['"3"', ",", " ", "W/", '"4"'])
@example([",", '"3"', ",", ","])
def test_the_if_match_pattern_is_the_syntax_the_service_reads(parts: list[str]) -> None:
    header = "".join(parts)
    assert bool(re.search(IF_MATCH_PATTERN, header)) == _if_match_accepted(header)


@pytest.mark.parametrize(
    ("header", "versions"),
    [("*", None), ('"3"', {3}), ('"1", "2"', {1, 2}), ('W/"3"', set()), ('W/"3", "4"', {4}), ('"03", "x"', set())],
)
def test_if_match_admits_the_versions_of_its_strong_tags(header: str, versions: set[int] | None) -> None:
    assert parse_if_match(header) == versions


@pytest.fixture
def document(http: TestClient) -> dict[str, Any]:
    return http.get("/openapi.json").json()  # type: ignore[no-any-return]


def _parameters(document: dict[str, Any], path: str, method: str) -> dict[str, dict[str, Any]]:
    return {parameter["name"]: parameter["schema"] for parameter in document["paths"][path][method]["parameters"]}


def test_retrieval_parameters_carry_the_cores_bounds_and_no_null(document: dict[str, Any]) -> None:
    # Found by schemathesis: `limit=-355` and `offset=-394` were valid by the document, and `null` was a value.
    parameters = _parameters(document, "/memories", "get")

    assert parameters["limit"]["minimum"] == 1
    assert parameters["offset"]["minimum"] == 0
    assert parameters["q"] == {"type": "string", "maxLength": 256}
    assert parameters["tag"] == {"type": "string"}
    assert parameters["status"] == {"type": "string", "enum": ["active", "invalid", "deleted"]}


def test_if_match_is_a_string_of_the_etag_syntax(document: dict[str, Any]) -> None:
    # Found by schemathesis: `anyOf: [string, null]` made it send `If-Match: null`, which is a 412.
    schema = _parameters(document, "/memories/{memory_id}", "patch")["if-match"]

    assert schema["type"] == "string"
    assert schema["pattern"] == IF_MATCH_PATTERN
    assert "anyOf" not in schema


@pytest.mark.parametrize(("path", "method"), [("/memories", "post"), ("/memories/{memory_id}", "patch")])
def test_both_bodies_carry_the_content_and_tag_rules(document: dict[str, Any], path: str, method: str) -> None:
    body = document["paths"][path][method]["requestBody"]["content"]["application/json"]["schema"]["properties"]

    assert body["content"]["pattern"] == CONTENT_PATTERN
    assert body["content"]["not"] == {"pattern": CONTENT_TOO_LONG_PATTERN}
    assert body["tags"]["items"] == {"type": "string", "pattern": TAG_PATTERN}
    assert body["tags"]["maxItems"] == 20


@given(st.text(alphabet=st.characters(max_codepoint=0x2FF), max_size=260))
@example("x" * 255)
@example("x" * 256)
@example("a b")
def test_the_idempotency_key_pattern_accepts_what_the_core_accepts(key: str) -> None:
    try:
        IdempotentCreate.of(key, NewMemory.parse({"content": "x"}), "Idempotency-Key")
        accepted = True
    except InvalidInputError:
        accepted = False
    # JSON Schema patterns are ECMA-262: `$` ends the input, where Python's also matches before a final newline.
    assert bool(re.search(IDEMPOTENCY_KEY_PATTERN.removesuffix("$") + r"\Z", key)) == accepted


def test_the_idempotency_key_header_carries_its_syntax(document: dict[str, Any]) -> None:
    # Found by schemathesis: any string was a valid key by the document, and the service answered 422.
    schema = _parameters(document, "/memories", "post")["Idempotency-Key"]

    assert (schema["type"], schema["pattern"]) == ("string", IDEMPOTENCY_KEY_PATTERN)
    assert "anyOf" not in schema


def _headers(document: dict[str, Any], path: str, method: str, status: str) -> dict[str, dict[str, Any]]:
    headers: dict[str, dict[str, Any]] = document["paths"][path][method]["responses"][status].get("headers", {})
    return headers


@pytest.mark.parametrize(
    ("path", "method", "status"),
    [("/memories", "post", "201"), ("/memories/{memory_id}", "get", "200"), ("/memories/{memory_id}", "patch", "200")],
)
def test_every_response_carrying_a_record_declares_its_etag(
    document: dict[str, Any], path: str, method: str, status: str
) -> None:
    etag = _headers(document, path, method, status)["ETag"]
    assert etag["required"] is True
    assert etag["schema"] == {"type": "string", "pattern": '^"[1-9][0-9]*"$'}


def test_a_412_declares_the_current_etag_which_a_malformed_if_match_does_not_get(document: dict[str, Any]) -> None:
    etag = _headers(document, "/memories/{memory_id}", "patch", "412")["ETag"]
    assert etag["schema"]["type"] == "string"
    assert not etag.get("required", False)


def test_a_create_declares_its_location(document: dict[str, Any]) -> None:
    location = _headers(document, "/memories", "post", "201")["Location"]
    assert (location["required"], location["schema"]["pattern"]) == (True, "^/memories/[1-9][0-9]*$")


def test_exactly_the_operations_that_read_a_body_document_415(document: dict[str, Any]) -> None:
    for path, item in document["paths"].items():
        for method, operation in item.items():
            reads_a_body = "requestBody" in operation
            assert ("415" in operation["responses"]) == reads_a_body, (method, path)
            if reads_a_body:
                assert list(operation["requestBody"]["content"]) == ["application/json"]


def test_every_409_429_and_503_declares_retry_after(document: dict[str, Any]) -> None:
    declared = [
        (path, method, status, "Retry-After" in response.get("headers", {}))
        for path, item in document["paths"].items()
        for method, operation in item.items()
        for status, response in operation["responses"].items()
        if status in ("409", "429", "503")
    ]
    assert len(declared) >= 12  # 429 and 503 on all five operations, 409 on POST and PATCH
    assert all(present for *_, present in declared), declared


def test_a_records_timestamps_are_date_times(document: dict[str, Any]) -> None:
    properties = document["components"]["schemas"]["Memory"]["properties"]
    assert properties["created_at"]["format"] == "date-time"
    assert properties["updated_at"]["format"] == "date-time"
    assert {"type": "string", "format": "date-time"} in properties["last_accessed_at"]["anyOf"]


def test_a_create_links_to_the_created_records_get_patch_and_delete(document: dict[str, Any]) -> None:
    links = document["paths"]["/memories"]["post"]["responses"]["201"]["links"]
    record = document["paths"]["/memories/{memory_id}"]
    assert {name: link["operationId"] for name, link in links.items()} == {
        "GetMemory": record["get"]["operationId"],
        "UpdateMemory": record["patch"]["operationId"],
        "DeleteMemory": record["delete"]["operationId"],
    }
    assert all(link["parameters"] == {"memory_id": "$response.body#/id"} for link in links.values())


def test_the_server_sends_the_headers_the_document_declares(http: TestClient) -> None:
    created = http.post("/memories", json={"content": "x"})
    read = http.get(created.headers["location"])
    stale = http.patch(created.headers["location"], json={"content": "y"}, headers={"If-Match": '"9"'})

    assert (created.status_code, created.headers["etag"], created.headers["location"]) == (201, '"1"', "/memories/1")
    assert (read.status_code, read.headers["etag"]) == (200, '"1"')
    assert (stale.status_code, stale.headers["etag"]) == (412, '"1"')
