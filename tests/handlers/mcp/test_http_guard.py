"""The MCP endpoint's HTTP guard: CORS for allowed browser origins (and the server's own loopback origin), one
`Allow` for every method it does not serve, one 404 for `/mcp/` wherever it runs, a client that leaves mid-body,
and a problem document for every refusal the SDK's transport would answer in plain text or with a bare status."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, cast

import anyio
import httpx2
import pytest
from fastapi.testclient import TestClient
from mcp.server import MCPServer
from starlette.types import Message

from core.access import SCOPES, Principal
from core.contract import RetrievalQuery
from core.errors import AuthenticationError
from core.limits import MAX_REQUEST_BYTES
from core.memories import MemoryService
from handlers.auth import MISSING_KEY, open_access
from handlers.http.app import create_app
from handlers.mcp import create_server
from handlers.mcp.endpoint import MCPEndpoint, create_endpoint, with_mcp_endpoint
from tests.handlers.mcp.test_tools import TOOLS

pytestmark = pytest.mark.anyio

APP_ORIGIN = "https://app.example"
KEY = "Bearer am_test"
LIST_TOOLS = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
JSON_HEADERS = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": "2025-11-25",
}
PREFLIGHT = {
    "access-control-request-method": "POST",
    "access-control-request-headers": "authorization,content-type,mcp-protocol-version",
}
ALLOW = "POST, OPTIONS"
PROBLEM = "application/problem+json"
# The same listing in each protocol era: the handshake era's (2025-11-25) and the stateless one's (2026-07-28).
MODERN = "2026-07-28"
_MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
ERAS = {
    "2025-11-25": (LIST_TOOLS, JSON_HEADERS),
    MODERN: (
        {**LIST_TOOLS, "params": {"_meta": _MODERN_META}},
        {**JSON_HEADERS, "mcp-protocol-version": MODERN, "mcp-method": "tools/list"},
    ),
}


def key_required(authorization: str | None) -> Principal:
    """Admits only `KEY`, as namespace "default" with every scope: enough to tell keyed from keyless requests."""
    if authorization != KEY:
        raise AuthenticationError(MISSING_KEY, credentials_given=authorization is not None)
    return Principal("default", frozenset(SCOPES))


@pytest.fixture
def endpoint(server: MCPServer) -> MCPEndpoint:
    return create_endpoint(server, allowed_origins=[APP_ORIGIN], authenticate=key_required)


@asynccontextmanager
async def serving(endpoint: MCPEndpoint, base_url: str = "https://mcp.example") -> AsyncIterator[httpx2.AsyncClient]:
    transport = httpx2.ASGITransport(app=endpoint)
    async with endpoint.session_manager.run(), httpx2.AsyncClient(transport=transport, base_url=base_url) as http:
        yield http


def cors_headers(response: httpx2.Response) -> dict[str, str]:
    return {name: value for name, value in response.headers.items() if name.startswith("access-control-")}


async def test_a_preflight_from_an_allowed_origin_is_204_without_a_key_and_allows_the_transport_headers(
    endpoint: MCPEndpoint,
) -> None:
    async with serving(endpoint) as http:
        response = await http.options("/mcp", headers={"origin": APP_ORIGIN, **PREFLIGHT})

    assert response.status_code == 204
    assert response.content == b""
    assert response.headers["access-control-allow-origin"] == APP_ORIGIN
    assert "origin" in response.headers["vary"].lower()
    assert "POST" in response.headers["access-control-allow-methods"].split(", ")
    allowed = set(response.headers["access-control-allow-headers"].split(", "))
    assert {"authorization", "content-type", "mcp-protocol-version", "mcp-session-id", "last-event-id"} <= allowed
    assert {"mcp-method", "mcp-name"} <= allowed  # the 2026-07-28 wire's headers
    assert int(response.headers["access-control-max-age"]) > 0
    assert response.headers["allow"] == ALLOW


async def test_a_preflight_from_a_foreign_origin_is_403_problem_without_cors_headers(endpoint: MCPEndpoint) -> None:
    async with serving(endpoint) as http:
        response = await http.options("/mcp", headers={"origin": "https://attacker.example", **PREFLIGHT})

    assert response.status_code == 403
    assert response.headers["content-type"] == PROBLEM
    assert response.json()["status"] == 403
    assert "https://attacker.example" in response.json()["detail"]
    assert cors_headers(response) == {}


async def test_an_allowed_origins_post_and_its_401_both_carry_the_cors_response_headers(endpoint: MCPEndpoint) -> None:
    async with serving(endpoint) as http:
        served = await http.post(
            "/mcp", json=LIST_TOOLS, headers={**JSON_HEADERS, "origin": APP_ORIGIN, "authorization": KEY}
        )
        refused = await http.post("/mcp", json=LIST_TOOLS, headers={**JSON_HEADERS, "origin": APP_ORIGIN})

    assert served.status_code == 200
    assert len(served.json()["result"]["tools"]) == len(TOOLS)
    assert refused.status_code == 401
    assert refused.headers["content-type"] == PROBLEM
    assert refused.headers["www-authenticate"].startswith("Bearer")
    for response in (served, refused):
        assert cors_headers(response) == {
            "access-control-allow-origin": APP_ORIGIN,
            "access-control-expose-headers": "mcp-session-id, www-authenticate",
        }
        assert response.headers["vary"] == "Origin"


async def test_a_request_without_an_origin_gets_no_cors_headers(endpoint: MCPEndpoint) -> None:
    async with serving(endpoint) as http:
        response = await http.post("/mcp", json=LIST_TOOLS, headers={**JSON_HEADERS, "authorization": KEY})

    assert response.status_code == 200
    assert len(response.json()["result"]["tools"]) == len(TOOLS)
    assert cors_headers(response) == {}


async def test_a_foreign_origins_post_is_403_problem_even_with_a_valid_key(endpoint: MCPEndpoint) -> None:
    async with serving(endpoint) as http:
        response = await http.post(
            "/mcp",
            json=LIST_TOOLS,
            headers={**JSON_HEADERS, "origin": "https://attacker.example", "authorization": KEY},
        )

    assert response.status_code == 403
    assert response.headers["content-type"] == PROBLEM
    assert response.json()["title"] == "Forbidden"
    assert cors_headers(response) == {}


@pytest.mark.parametrize("host", ["127.0.0.1:8787", "localhost:8787", "[::1]:8787", "localhost"])
async def test_the_servers_own_loopback_origin_is_same_origin_and_admitted(endpoint: MCPEndpoint, host: str) -> None:
    own = f"http://{host}"
    async with serving(endpoint, base_url=own) as http:
        posted = await http.post("/mcp", json=LIST_TOOLS, headers={**JSON_HEADERS, "origin": own, "authorization": KEY})
        preflight = await http.options("/mcp", headers={"origin": own, **PREFLIGHT})

    assert posted.status_code == 200
    assert len(posted.json()["result"]["tools"]) == len(TOOLS)
    assert preflight.status_code == 204
    assert preflight.headers["access-control-allow-origin"] == own


@pytest.mark.parametrize("host", ["127.0.0.2:8787", "[0:0:0:0:0:0:0:1]:8787"])
async def test_any_loopback_address_reads_as_loopback_as_serve_reads_it(endpoint: MCPEndpoint, host: str) -> None:
    # One loopback rule (core.hosts): an address literal cannot be rebound to another machine, whichever it is.
    own = f"http://{host}"
    async with serving(endpoint, base_url=own) as http:
        posted = await http.post("/mcp", json=LIST_TOOLS, headers={**JSON_HEADERS, "origin": own, "authorization": KEY})

    assert posted.status_code == 200
    assert len(posted.json()["result"]["tools"]) == len(TOOLS)
    assert posted.headers["access-control-allow-origin"] == own


@pytest.mark.parametrize(
    ("host", "origin"),
    [
        ("evil.example.com", "http://evil.example.com"),  # a DNS-rebound name: same-origin, but not ours
        ("127.0.0.1:8787", "http://127.0.0.1:9999"),  # another port is another origin
        ("127.0.0.1:8787", "https://127.0.0.1:8787"),  # so is another scheme
        ("mcp.example", "https://mcp.example"),  # a non-loopback name must be listed to be admitted
    ],
)
async def test_an_origin_that_is_not_the_servers_own_loopback_origin_is_403(
    endpoint: MCPEndpoint, host: str, origin: str
) -> None:
    async with serving(endpoint, base_url=f"http://{host}") as http:
        response = await http.post(
            "/mcp", json=LIST_TOOLS, headers={**JSON_HEADERS, "origin": origin, "authorization": KEY}
        )

    assert response.status_code == 403


@pytest.mark.parametrize("method", ["GET", "HEAD", "DELETE", "PUT", "PATCH", "TRACE"])
async def test_every_method_but_post_and_options_is_405_problem_with_one_allow(
    endpoint: MCPEndpoint, method: str
) -> None:
    async with serving(endpoint) as http:
        response = await http.request(method, "/mcp", headers={"accept": "text/event-stream", "authorization": KEY})

    assert response.status_code == 405
    assert response.headers["allow"] == ALLOW
    assert response.headers["content-type"] == PROBLEM
    if method != "HEAD":
        assert response.json()["status"] == 405
        assert response.json()["title"] == "Method not allowed"


async def test_a_plain_options_is_204_with_the_same_allow_and_needs_no_key(endpoint: MCPEndpoint) -> None:
    async with serving(endpoint) as http:
        response = await http.options("/mcp")

    assert response.status_code == 204
    assert response.headers["allow"] == ALLOW
    assert cors_headers(response) == {}


async def test_a_trailing_slash_is_a_404_problem_naming_the_endpoint_not_a_redirect(endpoint: MCPEndpoint) -> None:
    async with serving(endpoint) as http:
        responses = [
            await http.post("/mcp/", json=LIST_TOOLS, headers={**JSON_HEADERS, "authorization": KEY}),
            await http.get("/mcp/"),
            await http.post("/", json=LIST_TOOLS, headers={**JSON_HEADERS, "authorization": KEY}),
        ]

    for response in responses:
        assert response.status_code == 404
        assert response.headers["content-type"] == PROBLEM
        assert "/mcp" in response.json()["detail"]


def test_a_trailing_slash_gets_the_same_404_beside_the_http_api_as_on_lambda(memory_service: MemoryService) -> None:
    open_ = open_access()
    server = create_server(memory_service, open_, version="test")
    app = with_mcp_endpoint(
        create_app(memory_service, open_, version="test"),
        create_endpoint(server, authenticate=open_),
    )
    alone = create_endpoint(create_server(memory_service, open_, version="test"), authenticate=open_)

    with TestClient(app) as beside, TestClient(alone) as on_lambda:
        local = beside.post("/mcp/", json=LIST_TOOLS, headers=JSON_HEADERS)
        deployed = on_lambda.post("/mcp/", json=LIST_TOOLS, headers=JSON_HEADERS)

    assert (local.status_code, local.headers["content-type"]) == (404, PROBLEM)
    assert local.json() == deployed.json()
    assert deployed.status_code == 404


@pytest.mark.parametrize("protocol_version", ["2025-11-25", "2026-07-28"])
async def test_a_client_leaving_mid_body_is_one_info_line_not_an_error(
    endpoint: MCPEndpoint, caplog: pytest.LogCaptureFixture, protocol_version: str
) -> None:
    incoming: list[Message] = [
        {"type": "http.request", "body": b'{"jsonrpc": "2.0", "id": 1, ', "more_body": True},
        {"type": "http.disconnect"},
    ]
    sent: list[Message] = []

    async def receive() -> Message:
        if incoming:
            return incoming.pop(0)
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    async def send(message: Message) -> None:
        sent.append(message)

    headers = {**JSON_HEADERS, "mcp-protocol-version": protocol_version, "authorization": KEY, "host": "mcp.example"}
    scope: dict[str, Any] = {
        "type": "http",
        "asgi": {"version": "3"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "https",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "root_path": "",
        "query_string": b"",
        "headers": [(name.encode(), value.encode()) for name, value in headers.items()],
        "client": ("203.0.113.24", 50000),
        "server": ("mcp.example", 443),
    }
    caplog.set_level(logging.INFO)

    async with endpoint.session_manager.run():
        await endpoint(scope, receive, send)

    assert sent == []  # nobody is left to answer
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
    infos = [r.getMessage() for r in caplog.records if "disconnected" in r.getMessage()]
    assert infos == ["client disconnected before its request body was complete; nothing was done"]
    assert not any(r.exc_info for r in caplog.records)


async def test_a_body_read_to_its_end_reaches_the_sdk_whole_even_in_many_chunks(endpoint: MCPEndpoint) -> None:
    body = json.dumps(LIST_TOOLS).encode()
    chunks = [body[i : i + 7] for i in range(0, len(body), 7)]

    async def chunked() -> AsyncIterator[bytes]:
        for chunk in chunks:
            yield chunk

    async with serving(endpoint) as http:
        response = await http.post("/mcp", content=chunked(), headers={**JSON_HEADERS, "authorization": KEY})

    assert response.status_code == 200
    assert len(response.json()["result"]["tools"]) == len(TOOLS)


def assert_problem(response: httpx2.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM
    problem: dict[str, Any] = response.json()
    assert problem["status"] == status
    assert problem["detail"]
    return problem


def padded(message: dict[str, Any], size: int) -> bytes:
    """`message` as JSON of exactly `size` bytes (JSON allows whitespace after the value)."""
    body = json.dumps(message).encode()
    return body + b" " * (size - len(body))


@pytest.mark.parametrize("era", ERAS)
async def test_a_body_at_the_bound_is_served(endpoint: MCPEndpoint, era: str) -> None:
    message, headers = ERAS[era]
    async with serving(endpoint) as http:
        response = await http.post(
            "/mcp", content=padded(message, MAX_REQUEST_BYTES), headers={**headers, "authorization": KEY}
        )

    assert response.status_code == 200, response.text
    assert len(response.json()["result"]["tools"]) == len(TOOLS)


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "chunked"])
@pytest.mark.parametrize("era", ERAS)
async def test_a_body_over_the_bound_is_a_413_problem_declared_or_not(
    endpoint: MCPEndpoint, era: str, declared: bool
) -> None:
    message, headers = ERAS[era]
    body = padded(message, MAX_REQUEST_BYTES + 1)

    async def chunks() -> AsyncIterator[bytes]:
        for start in range(0, len(body), 8192):
            yield body[start : start + 8192]

    async with serving(endpoint) as http:
        response = await http.post(
            "/mcp", content=body if declared else chunks(), headers={**headers, "authorization": KEY}
        )

    assert ("content-length" in response.request.headers) == declared
    assert str(MAX_REQUEST_BYTES) in assert_problem(response, 413)["detail"]


@pytest.mark.parametrize(
    "content_type",
    [None, "", "text/plain", "application/x-www-form-urlencoded", "application/json-seq", "application/jsonx", "json"],
)
@pytest.mark.parametrize("era", ERAS)
async def test_a_body_not_declared_as_json_is_a_415_problem(
    endpoint: MCPEndpoint, era: str, content_type: str | None
) -> None:
    message, headers = ERAS[era]
    sent = {name: value for name, value in headers.items() if name != "content-type"}
    if content_type is not None:
        sent["content-type"] = content_type
    async with serving(endpoint) as http:
        response = await http.post("/mcp", content=json.dumps(message), headers={**sent, "authorization": KEY})

    assert ("content-type" in response.request.headers) == (content_type is not None)
    assert "application/json" in assert_problem(response, 415)["detail"]


@pytest.mark.parametrize(
    "content_type", ["application/json; charset=utf-8", "Application/JSON", "application/vnd.example+json"]
)
@pytest.mark.parametrize("era", ERAS)
async def test_every_json_media_type_is_served_as_the_http_api_reads_it(
    endpoint: MCPEndpoint, era: str, content_type: str
) -> None:
    message, headers = ERAS[era]
    async with serving(endpoint) as http:
        response = await http.post(
            "/mcp", json=message, headers={**headers, "content-type": content_type, "authorization": KEY}
        )

    assert response.status_code == 200, response.text
    assert len(response.json()["result"]["tools"]) == len(TOOLS)


@pytest.mark.parametrize("accept", [None, "text/event-stream", "text/html", "application/xml"])
@pytest.mark.parametrize("era", ERAS)
async def test_a_client_that_does_not_accept_json_gets_a_406_problem(
    endpoint: MCPEndpoint, era: str, accept: str | None
) -> None:
    message, headers = ERAS[era]
    sent = {name: value for name, value in headers.items() if name != "accept"}
    async with serving(endpoint) as http:
        http.headers.pop("accept", None)
        response = await http.post(
            "/mcp", json=message, headers={**sent, **({"accept": accept} if accept else {}), "authorization": KEY}
        )

    assert response.request.headers.get("accept") == accept
    assert "application/json" in assert_problem(response, 406)["detail"]


@pytest.mark.parametrize("accept", ["*/*", "application/*", "application/json"])
@pytest.mark.parametrize("era", ERAS)
async def test_any_accept_that_admits_json_is_served(endpoint: MCPEndpoint, era: str, accept: str) -> None:
    message, headers = ERAS[era]
    async with serving(endpoint) as http:
        response = await http.post("/mcp", json=message, headers={**headers, "accept": accept, "authorization": KEY})

    assert response.status_code == 200, response.text
    assert len(response.json()["result"]["tools"]) == len(TOOLS)


async def test_a_bare_status_from_the_transport_reaches_the_client_as_a_problem_document(endpoint: MCPEndpoint) -> None:
    # The stateless era's transport answers a listen that cannot stream with a bare 406, no body at all.
    listen = {"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": {"_meta": _MODERN_META}}
    headers = {**ERAS[MODERN][1], "accept": "application/json", "mcp-method": "subscriptions/listen"}
    async with serving(endpoint) as http:
        response = await http.post("/mcp", json=listen, headers={**headers, "authorization": KEY})

    assert_problem(response, 406)


@pytest.mark.parametrize("era", ERAS)
async def test_a_json_rpc_error_stays_a_json_rpc_error(endpoint: MCPEndpoint, era: str) -> None:
    _, headers = ERAS[era]
    async with serving(endpoint) as http:
        response = await http.post("/mcp", content=b"{not json", headers={**headers, "authorization": KEY})

    assert response.status_code == 400
    assert response.headers["content-type"] == "application/json"
    assert response.json()["error"]["code"] == -32700


@pytest.mark.parametrize("era", ERAS)
async def test_a_key_given_twice_is_a_422_problem_naming_it_and_nothing_is_done(
    endpoint: MCPEndpoint, memory_service: MemoryService, era: str
) -> None:
    # As the HTTP door refuses such a body: JSON leaves a repeated key undefined, and the SDK would take the last.
    message, headers = ERAS[era]
    arguments = '{"content": "Tuesday", "tags": ["work"], "content": "Monday"}'
    meta = cast("dict[str, Any]", message.get("params", {}))
    params = json.dumps({**meta, "name": "create_memory"})[:-1] + f', "arguments": {arguments}}}'
    body = f'{{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {params}}}'
    sent = {**headers, "mcp-method": "tools/call", "mcp-name": "create_memory"} if era == MODERN else headers
    async with serving(endpoint) as http:
        response = await http.post("/mcp", content=body, headers={**sent, "authorization": KEY})
        unique = await http.post(
            "/mcp",
            content=body.replace('"content": "Monday"', '"memory_type": "event"'),
            headers={**sent, "authorization": KEY},
        )

    problem = assert_problem(response, 422)
    assert problem["errors"] == [{"field": "params.arguments.content", "message": "is given more than once"}]
    assert unique.status_code == 200, unique.text  # the same call with each key once is served
    stored = memory_service.search("default", RetrievalQuery.parse({}), stamp=False)
    assert [(memory.content, memory.memory_type) for memory in stored.items] == [("Tuesday", "event")]
