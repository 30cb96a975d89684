"""Bad input over every route is answered, never crashed on (CONTRACT.md, "Operations over HTTP").

Each case checks the exact status, the problem+json media type and members, and for 422 the bad fields named.
The client here hands a server error back as its 500 response instead of raising, so a crash reads as a status.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from core.memories import MemoryService
from handlers.auth import open_access
from handlers.http.app import create_app
from handlers.mcp import create_server
from handlers.mcp.endpoint import create_endpoint, with_mcp_endpoint

PROBLEM_JSON = "application/problem+json"
MAX_BODY = 128 * 1024
BODY_ROUTES = [("POST", "/memories"), ("PATCH", "/memories/1")]
ID_ROUTES = ["GET", "PATCH", "DELETE"]
READ_ONLY = ["id", "created_at", "updated_at", "last_accessed_at", "version"]


@pytest.fixture
def door(memory_service: MemoryService) -> Iterator[TestClient]:
    """The app over the in-memory store, holding memory 1, answering a crash with its 500 instead of raising it in
    the test."""
    with TestClient(
        create_app(memory_service, open_access(), version="test"),
        raise_server_exceptions=False,
    ) as client:
        assert client.post("/memories", json={"content": "the one memory"}).status_code == 201
        yield client


def send(door: TestClient, method: str, path: str, body: bytes | None = None, **kwargs: Any) -> Any:
    headers = {"content-type": "application/json"} if body is not None else {}
    return door.request(method, path, content=body, headers={**headers, **kwargs.pop("headers", {})}, **kwargs)


def as_json(body: object) -> bytes:
    return json.dumps(body).encode()


def assert_problem(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM_JSON
    problem: dict[str, Any] = response.json()
    assert {"type", "title", "status", "detail"} <= problem.keys()
    assert problem["status"] == status
    assert all(isinstance(problem[key], str) and problem[key] for key in ("type", "title", "detail"))
    return problem


def assert_invalid(response: Any, fields: set[str]) -> None:
    problem = assert_problem(response, 422)
    errors = problem["errors"]
    assert all(set(error) == {"field", "message"} and error["message"] for error in errors)
    assert {error["field"] for error in errors} == fields


# --- bodies that are not JSON: 400 ---


NOT_JSON = {
    "truncated": b'{"content": "x"',
    "missing-value": b'{"content": }',
    "bare-words": b"not json",
    "empty": b"",
    "single-quotes": b"{'content': 'x'}",
    "trailing-comma": b'{"content": "x",}',
    "nan": b"NaN",
    "nan-value": b'{"content": NaN}',
    "infinity-value": b'{"content": -Infinity}',
    "invalid-utf8": b'{"content": "\xff\xfe"}',
    "latin1-bytes": '{"content": "café"}'.encode("latin-1"),
    "lone-continuation-byte": b"\x80",
    "deep-nesting": b"[" * 100_000,
    "two-documents": b'{"content": "a"}{"content": "b"}',
}


@pytest.mark.parametrize("body", NOT_JSON.values(), ids=NOT_JSON.keys())
@pytest.mark.parametrize(("method", "path"), BODY_ROUTES)
def test_a_body_that_is_not_json_is_400(door: TestClient, method: str, path: str, body: bytes) -> None:
    assert_problem(send(door, method, path, body), 400)


# --- bodies not declared as JSON: 415, before they are read ---


NOT_JSON_MEDIA_TYPES = [
    "text/plain",
    "text/plain; charset=utf-8",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "image/png",
    "text/json",
    "application/jsonl",
    "application/json-seq",
    "application/xml",
    "application/+json",
    "json",
    "",
]
JSON_MEDIA_TYPES = [
    "application/json",
    "application/json; charset=utf-8",
    "Application/JSON",
    "application/json;charset=UTF-8",
    "application/merge-patch+json",
    "application/vnd.agent-memory.v1+json; charset=utf-8",
]


def assert_unchanged(door: TestClient) -> None:
    assert door.get("/memories", params={"status": "active"}).json()["total"] == 1
    assert door.get("/memories/1").json()["version"] == 1


@pytest.mark.parametrize("media_type", NOT_JSON_MEDIA_TYPES)
@pytest.mark.parametrize(("method", "path"), BODY_ROUTES)
def test_a_body_declared_as_anything_but_json_is_415_naming_what_is_read(
    door: TestClient, method: str, path: str, media_type: str
) -> None:
    response = send(
        door, method, path, as_json({"content": "declared otherwise"}), headers={"content-type": media_type}
    )

    problem = assert_problem(response, 415)
    assert "application/json" in problem["detail"]
    assert_unchanged(door)


@pytest.mark.parametrize(("method", "path"), BODY_ROUTES)
def test_a_body_without_a_content_type_is_415(door: TestClient, method: str, path: str) -> None:
    response = door.request(method, path, content=as_json({"content": "undeclared"}))

    assert "content-type" not in response.request.headers
    assert_problem(response, 415)
    assert_unchanged(door)


def test_a_form_as_curl_d_sends_it_is_415_not_a_memory(door: TestClient) -> None:
    assert_problem(door.post("/memories", data={"content": "from a form"}), 415)
    assert_unchanged(door)


@pytest.mark.parametrize(("method", "path"), BODY_ROUTES)
def test_the_media_type_is_checked_before_the_body_is_parsed_or_its_size_read(
    door: TestClient, method: str, path: str
) -> None:
    assert_problem(send(door, method, path, b"not json", headers={"content-type": "text/plain"}), 415)
    assert_problem(send(door, method, path, padded(MAX_BODY + 1), headers={"content-type": "text/plain"}), 415)


@pytest.mark.parametrize(("method", "path"), BODY_ROUTES)
def test_an_empty_body_without_a_content_type_is_400_as_any_body_that_is_no_json_object(
    door: TestClient, method: str, path: str
) -> None:
    assert_problem(door.request(method, path), 400)


@pytest.mark.parametrize("media_type", JSON_MEDIA_TYPES)
@pytest.mark.parametrize(("method", "path"), BODY_ROUTES)
def test_every_json_media_type_is_read(door: TestClient, method: str, path: str, media_type: str) -> None:
    response = send(door, method, path, as_json({"content": "declared as JSON"}), headers={"content-type": media_type})

    assert response.status_code in (200, 201), response.text
    assert response.json()["content"] == "declared as JSON"


def test_a_restore_reads_no_body_so_needs_no_content_type(door: TestClient) -> None:
    assert door.delete("/memories/1").status_code == 204

    response = door.post("/memories/1/restore")

    assert "content-type" not in response.request.headers
    assert response.status_code == 200, response.text


# --- a key given twice in a JSON object: 422 naming it, never last-wins ---


DUPLICATE_KEYS = {
    "content": (b'{"content": "first", "content": "second"}', {"content"}),
    "same-value": (b'{"content": "same", "content": "same"}', {"content"}),
    "escaped-spelling": (b'{"content": "a", "cont\\u0065nt": "b"}', {"content"}),
    "tags": (b'{"content": "a", "tags": ["x"], "tags": []}', {"tags"}),
    "two-keys": (b'{"content": "a", "status": "active", "content": "b", "status": "invalid"}', {"content", "status"}),
    "three-times": (b'{"tags": [], "tags": [], "tags": [], "content": "a"}', {"tags"}),
    "nested": (b'{"content": "a", "memory_type": {"k": 1, "k": 2}}', {"memory_type.k"}),
    "in-a-list": (b'{"content": "a", "tags": ["x", {"k": 1, "k": 2}]}', {"tags[1].k"}),
}


@pytest.mark.parametrize(("body", "fields"), DUPLICATE_KEYS.values(), ids=DUPLICATE_KEYS.keys())
@pytest.mark.parametrize(("method", "path"), BODY_ROUTES)
def test_a_key_given_twice_is_422_naming_it_never_last_wins(
    door: TestClient, method: str, path: str, body: bytes, fields: set[str]
) -> None:
    response = send(door, method, path, body)

    assert_invalid(response, fields)
    assert {error["message"] for error in response.json()["errors"]} == {"is given more than once"}
    assert_unchanged(door)


# --- JSON that is not an object: 422 naming the body ---


NOT_AN_OBJECT = {"array": [], "array-of-object": [{"content": "x"}], "string": "x", "number": 1, "null": None}


@pytest.mark.parametrize("body", NOT_AN_OBJECT.values(), ids=NOT_AN_OBJECT.keys())
@pytest.mark.parametrize(("method", "path"), BODY_ROUTES)
def test_json_that_is_not_an_object_is_422_naming_the_body(
    door: TestClient, method: str, path: str, body: object
) -> None:
    assert_invalid(send(door, method, path, as_json(body)), {"body"})


# --- bodies that break the record's rules: 422 naming each field ---


def _field_cases() -> list[Any]:
    """(method, path, body, fields named): each shared case on both body routes, then route-specific ones."""
    shared: list[tuple[dict[str, Any], set[str]]] = [
        # (body; POST adds a valid content when the body has none, fields named)
        ({"content": 1}, {"content"}),
        ({"content": ["x"]}, {"content"}),
        ({"content": ""}, {"content"}),
        ({"content": "   \n"}, {"content"}),
        ({"content": "x" * 8193}, {"content"}),
        ({"tags": "travel"}, {"tags"}),
        ({"tags": [1]}, {"tags[0]"}),
        ({"tags": ["ok", "-bad", "fine", "two words"]}, {"tags[1]", "tags[3]"}),
        ({"tags": ["x" * 65]}, {"tags[0]"}),
        ({"tags": [f"t{n}" for n in range(21)]}, {"tags"}),
        ({"memory_type": "note"}, {"memory_type"}),
        ({"memory_type": 3}, {"memory_type"}),
        ({"status": "deleted"}, {"status"}),
        ({"status": "archived"}, {"status"}),
        ({"colour": "red"}, {"colour"}),
        ({"namespace": "someone-else"}, {"namespace"}),
        *(({field: 1}, {field}) for field in READ_ONLY),
        ({"id": 9, "version": 3, "extra": True}, {"id", "version", "extra"}),
        ({"content": "", "memory_type": "x", "colour": 1}, {"content", "memory_type", "colour"}),
    ]
    cases: list[Any] = []
    for body, fields in shared:
        label = ",".join(sorted(fields)) + ":" + json.dumps(body)[:40]
        post_body = body if "content" in body else {"content": "x", **body}
        cases.append(pytest.param("POST", "/memories", post_body, fields, id=f"POST-{label}"))
        cases.append(pytest.param("PATCH", "/memories/1", body, fields, id=f"PATCH-{label}"))
    cases += [
        pytest.param("POST", "/memories", {}, {"content"}, id="POST-content-missing"),
        pytest.param("POST", "/memories", {"tags": ["a"]}, {"content"}, id="POST-content-missing-with-tags"),
        *(
            pytest.param("POST", "/memories", {"content": "x", field: None}, {field}, id=f"POST-null-{field}")
            for field in ("tags", "memory_type", "status")
        ),
        pytest.param("POST", "/memories", {"content": None}, {"content"}, id="POST-null-content"),
        *(
            pytest.param("PATCH", "/memories/1", {field: None}, {field}, id=f"PATCH-null-{field}")
            for field in ("content", "tags", "memory_type", "status")
        ),
        pytest.param("PATCH", "/memories/1", {"tags": None, "status": None}, {"tags", "status"}, id="PATCH-two-nulls"),
        pytest.param(
            "PATCH",
            "/memories/1",
            {"content": None, "colour": "red"},
            {"content", "colour"},
            id="PATCH-null-and-unknown",
        ),
    ]
    return cases


@pytest.mark.parametrize(("method", "path", "body", "fields"), _field_cases())
def test_a_body_breaking_the_record_rules_is_422_naming_each_bad_field(
    door: TestClient, method: str, path: str, body: dict[str, Any], fields: set[str]
) -> None:
    assert_invalid(send(door, method, path, as_json(body)), fields)


@pytest.mark.parametrize(("method", "path"), BODY_ROUTES)
def test_a_refused_body_changes_nothing(door: TestClient, method: str, path: str) -> None:
    before = door.get("/memories", params={"status": "active"}).json()
    assert_invalid(send(door, method, path, as_json({"content": "new", "id": 5})), {"id"})
    after = door.get("/memories", params={"status": "active"}).json()
    assert [(m["id"], m["content"], m["version"]) for m in after["items"]] == [
        (m["id"], m["content"], m["version"]) for m in before["items"]
    ]


# --- bodies over 128 KiB: 413 ---


def padded(size: int) -> bytes:
    """A valid body of exactly `size` bytes: JSON allows whitespace after the value."""
    core = b'{"content": "padded"}'
    return core + b" " * (size - len(core))


@pytest.mark.parametrize(("method", "path"), BODY_ROUTES)
def test_a_body_of_exactly_128_kib_is_read(door: TestClient, method: str, path: str) -> None:
    response = send(door, method, path, padded(MAX_BODY))
    assert response.status_code in (200, 201), response.text
    assert response.json()["content"] == "padded"


@pytest.mark.parametrize(("method", "path"), BODY_ROUTES)
def test_a_body_over_128_kib_with_an_honest_content_length_is_413(door: TestClient, method: str, path: str) -> None:
    assert_problem(send(door, method, path, padded(MAX_BODY + 1)), 413)


@pytest.mark.parametrize(("method", "path"), BODY_ROUTES)
def test_a_body_over_128_kib_under_a_lying_content_length_is_413(door: TestClient, method: str, path: str) -> None:
    assert_problem(send(door, method, path, padded(MAX_BODY + 1), headers={"content-length": "20"}), 413)


@pytest.mark.parametrize(("method", "path"), BODY_ROUTES)
def test_a_chunked_body_over_128_kib_without_content_length_is_413(door: TestClient, method: str, path: str) -> None:
    body = padded(MAX_BODY + 1)

    def chunks() -> Iterator[bytes]:
        for start in range(0, len(body), 8192):
            yield body[start : start + 8192]

    response = door.request(method, path, content=chunks(), headers={"content-type": "application/json"})
    assert "content-length" not in response.request.headers
    assert_problem(response, 413)


@pytest.mark.parametrize(("method", "path"), BODY_ROUTES)
def test_a_declared_content_length_over_128_kib_is_413_before_reading(door: TestClient, method: str, path: str) -> None:
    assert_problem(send(door, method, path, b'{"content": "x"}', headers={"content-length": str(MAX_BODY + 1)}), 413)


def test_an_oversized_create_stores_nothing(door: TestClient) -> None:
    assert_problem(send(door, "POST", "/memories", padded(MAX_BODY + 1)), 413)
    assert door.get("/memories").json()["total"] == 1


# --- bad query values: 422 ---


BAD_QUERIES = [
    ("limit=0", {"limit"}),
    ("limit=-1", {"limit"}),
    ("limit=abc", {"limit"}),
    ("limit=1.5", {"limit"}),
    ("limit=", {"limit"}),
    ("limit=1e3", {"limit"}),
    ("offset=-1", {"offset"}),
    ("offset=x", {"offset"}),
    ("offset=", {"offset"}),
    ("status=archived", {"status"}),
    ("status=Active", {"status"}),
    ("status=", {"status"}),
    ("memory_type=note", {"memory_type"}),
    ("sort=name", {"sort"}),
    ("sort=-id", {"sort"}),
    ("q=" + "a" * 257, {"q"}),
    ("limit=1&limit=2", {"limit"}),
    ("tag=a&tag=b", {"tag"}),
    ("q=a&q=", {"q"}),
    ("status=x&sort=y&limit=0&offset=-1&memory_type=z", {"status", "sort", "limit", "offset", "memory_type"}),
]


@pytest.mark.parametrize(("query", "fields"), BAD_QUERIES, ids=[query[:40] for query, _ in BAD_QUERIES])
def test_a_bad_query_value_is_422_naming_each_bad_field(door: TestClient, query: str, fields: set[str]) -> None:
    assert_invalid(door.get(f"/memories?{query}"), fields)


def test_a_refused_search_stamps_nothing(door: TestClient) -> None:
    assert_invalid(door.get("/memories?limit=0"), {"limit"})
    assert door.patch("/memories/1", json={}).json()["last_accessed_at"] is None


# --- routes, methods and ids ---


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/"),
        ("GET", "/nope"),
        ("GET", "/memory"),
        ("GET", "/memories/1/extra"),
        ("POST", "/nope"),
        ("DELETE", "/memories/1/tags"),
        ("GET", "/MEMORIES"),
    ],
)
def test_an_unknown_route_is_404(door: TestClient, method: str, path: str) -> None:
    assert_problem(door.request(method, path), 404)


TRAILING_SLASHES = [
    ("GET", "/memories/"),
    ("POST", "/memories/"),
    ("GET", "/memories/1/"),
    ("PATCH", "/memories/1/"),
    ("DELETE", "/memories/1/"),
    ("GET", "/memories/1/history/"),
    ("POST", "/memories/1/restore/"),
    ("GET", "/healthz/"),
]


@pytest.mark.parametrize(("method", "path"), TRAILING_SLASHES)
def test_a_trailing_slash_is_a_404_problem_never_a_redirect_to_the_host_sent(
    door: TestClient, method: str, path: str
) -> None:
    response = door.request(method, path, headers={"host": "evil.example"}, follow_redirects=False)

    assert_problem(response, 404)
    assert "location" not in response.headers
    assert "evil.example" not in response.text


@pytest.mark.parametrize(("method", "path"), TRAILING_SLASHES)
def test_a_trailing_slash_is_the_same_404_beside_the_mcp_endpoint_as_serve_runs_them(
    memory_service: MemoryService, method: str, path: str
) -> None:
    open_ = open_access()
    api = create_app(memory_service, open_, version="test")
    server = create_server(memory_service, open_, version="test")
    with TestClient(with_mcp_endpoint(api, create_endpoint(server, authenticate=open_))) as served:
        response = served.request(method, path, headers={"host": "evil.example"}, follow_redirects=False)

    assert_problem(response, 404)
    assert "location" not in response.headers


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("PUT", "/memories"),
        ("PATCH", "/memories"),
        ("DELETE", "/memories"),
        ("PUT", "/memories/1"),
        ("POST", "/memories/1"),
        ("POST", "/healthz"),
        ("DELETE", "/healthz"),
    ],
)
def test_a_wrong_method_on_a_known_route_is_405(door: TestClient, method: str, path: str) -> None:
    assert_problem(door.request(method, path, json={"content": "x"}), 405)


def test_a_405_lists_every_method_the_resource_allows(door: TestClient) -> None:
    allowed = {method.strip() for method in door.put("/memories/1").headers["allow"].split(",")}
    assert allowed == {"GET", "PATCH", "DELETE"}


NON_IDS = ["abc", "1.5", "-1", "0", "1e3", "+1", "%201", "%EF%BC%91", "%D9%A1", "99999999999", "9" * 4300]


@pytest.mark.parametrize("raw_id", NON_IDS, ids=[raw[:12] for raw in NON_IDS])
@pytest.mark.parametrize("method", ID_ROUTES)
def test_an_id_that_cannot_exist_is_404_on_every_id_route(door: TestClient, method: str, raw_id: str) -> None:
    body = as_json({"content": "x"}) if method == "PATCH" else None
    assert_problem(send(door, method, f"/memories/{raw_id}", body), 404)


@pytest.mark.parametrize("method", ID_ROUTES)
def test_an_id_of_more_than_4300_digits_is_404(door: TestClient, method: str) -> None:
    body = as_json({"content": "x"}) if method == "PATCH" else None
    assert_problem(send(door, method, "/memories/" + "9" * 4301, body), 404)


# --- text that is not valid Unicode ---


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        pytest.param("POST", "/memories", rb'{"content": "a\ud800b"}', id="POST-content"),
        pytest.param("POST", "/memories", rb'{"content": "\udfff"}', id="POST-low-surrogate"),
        pytest.param("PATCH", "/memories/1", rb'{"content": "a\ud800b"}', id="PATCH-content"),
    ],
)
def test_content_with_a_lone_surrogate_is_refused_not_crashed_on(
    door: TestClient, method: str, path: str, body: bytes
) -> None:
    response = send(door, method, path, body)
    assert response.status_code in (400, 422), response.text
    assert response.headers["content-type"] == PROBLEM_JSON


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        pytest.param("POST", "/memories", rb'{"content": "x", "tags": ["ok", "\ud800"]}', id="POST"),
        pytest.param("PATCH", "/memories/1", rb'{"tags": ["ok", "\ud800"]}', id="PATCH"),
    ],
)
def test_a_tag_with_a_lone_surrogate_is_422_naming_it(door: TestClient, method: str, path: str, body: bytes) -> None:
    assert_invalid(send(door, method, path, body), {"tags[1]"})


def test_an_escaped_surrogate_pair_is_ordinary_text(door: TestClient) -> None:
    response = send(door, "POST", "/memories", rb'{"content": "smile \ud83d\ude00"}')
    assert response.status_code == 201, response.text
    assert response.json()["content"] == "smile 😀"


@pytest.mark.parametrize("query", ["q=%ED%A0%80", "tag=%ED%A0%80", "q=%FF%FE", "tag=%C0%AF", "q=%00"])
def test_a_query_value_that_is_not_utf8_is_not_crashed_on(door: TestClient, query: str) -> None:
    response = door.get(f"/memories?{query}")
    assert response.status_code in (200, 422), response.text


def test_a_huge_integer_for_content_is_422_not_400(door: TestClient) -> None:
    assert_invalid(send(door, "POST", "/memories", b'{"content": 1' + b"0" * 4300 + b"}"), {"content"})


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        pytest.param("POST", "/memories", rb'{"content": "remember \u001b[8mthis"}', id="POST-escape"),
        pytest.param("POST", "/memories", rb'{"content": "hi \udb40\udc41 there"}', id="POST-unicode-tag-char"),
        pytest.param("PATCH", "/memories/1", rb'{"content": "carriage\rreturn"}', id="PATCH-cr"),
        pytest.param("POST", "/memories", rb'{"content": "rub\u007fout"}', id="POST-del"),
        pytest.param("POST", "/memories", b'{"content": "raw C1 \xc2\x9b31m"}', id="POST-raw-c1"),
        pytest.param("PATCH", "/memories/1", rb'{"content": "next\u0085line"}', id="PATCH-next-line"),
    ],
)
def test_content_hiding_characters_is_422_and_changes_nothing(
    door: TestClient, method: str, path: str, body: bytes
) -> None:
    assert_invalid(send(door, method, path, body), {"content"})
    assert door.get("/memories/1").json()["version"] == 1
