"""Fixtures for the MCP door: the server over the in-memory store, function-URL events from events/, and a
Lambda-like worker."""

from __future__ import annotations

import asyncio
import base64
import copy
import json
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace
from typing import Any

import httpx2
import pytest
from mcp.client import Client
from mcp.server import MCPServer
from mcp.types import CallToolResult, TextContent

from adapters.dynamodb import DynamoDBKeyRepository, ensure_table
from core.memories import MemoryService
from core.recall.service import RecallService
from handlers import bootstrap
from handlers.auth import open_access
from handlers.mcp import create_server
from local.template import table_definition
from tests.conftest import SERVE_ROOT, Engine, LambdaFunctions, store_event_key

EVENTS = SERVE_ROOT / "events"
FUNCTION_URL_HOST = "k7x2m4q9p1r8s3t6v5w0y2z4a6b8c0d1.lambda-url.us-east-1.on.aws"

Event = dict[str, Any]
LambdaResponse = dict[str, Any]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def server(memory_service: MemoryService, recall_service: RecallService) -> MCPServer:
    """The server over the in-memory store, acting for namespace "default" with every scope;
    tests/handlers/mcp/test_auth.py covers keys."""
    return create_server(memory_service, open_access(), version="test", recall=recall_service)


def load_event(name: str) -> Event:
    event: Event = json.loads((EVENTS / name).read_text(encoding="utf-8"))
    return event


def lambda_context(request_id: str = "c6af9ac6-7b61-11e6-9a41-93e812345678") -> SimpleNamespace:
    """The attributes of a Lambda context object that Powertools and Mangum read."""
    return SimpleNamespace(
        function_name="agent-memory-mcp",
        memory_limit_in_mb=512,
        invoked_function_arn="arn:aws:lambda:us-east-1:123456789012:function:agent-memory-mcp",
        aws_request_id=request_id,
    )


def response_body(response: LambdaResponse) -> bytes:
    body: str = response.get("body") or ""
    return base64.b64decode(body) if response.get("isBase64Encoded") else body.encode()


def response_json(response: LambdaResponse) -> Any:
    return json.loads(response_body(response))


def header(response: LambdaResponse, name: str) -> str | None:
    headers: dict[str, str] = {key.lower(): value for key, value in (response.get("headers") or {}).items()}
    return headers.get(name.lower())


class LambdaWorker:
    """Invokes a handler on one thread, warm across calls, as one Lambda execution environment does."""

    def __init__(self) -> None:
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lambda")

    def invoke(self, handler: Callable[[Event, Any], LambdaResponse], event: Event) -> LambdaResponse:
        return self._thread.submit(handler, event, lambda_context()).result(timeout=30)

    async def invoke_async(self, handler: Callable[[Event, Any], LambdaResponse], event: Event) -> LambdaResponse:
        future = self._thread.submit(handler, event, lambda_context())
        return await asyncio.wrap_future(future)

    def run(self, work: Callable[[], Any]) -> Any:
        return self._thread.submit(work).result(timeout=30)

    def close(self) -> None:
        # Mangum leaves its event loop set on the thread; close it here rather than leave it to the collector.
        self._thread.submit(close_thread_loop).result(timeout=30)
        self._thread.shutdown()


def close_thread_loop() -> None:
    try:
        loop = asyncio.get_event_loop()
    except RuntimeError:
        return
    loop.close()
    asyncio.set_event_loop(None)


@pytest.fixture
def lambda_worker() -> Iterator[LambdaWorker]:
    worker = LambdaWorker()
    yield worker
    worker.close()


def tool_text(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


async def call_tool(server: MCPServer, name: str, arguments: dict[str, Any]) -> CallToolResult:
    async with Client(server) as client:
        return await client.call_tool(name, arguments)


class FunctionUrlBridge(httpx2.AsyncBaseTransport):
    """Turns each HTTP request into a function-URL event (payload 2.0: the query in `rawQueryString`, cookies in
    `cookies`), invokes the handler in `worker`, and turns its answer back (the `cookies` it sets as Set-Cookie)."""

    def __init__(self, handler: Callable[[Event, Any], LambdaResponse], worker: LambdaWorker) -> None:
        self._handler = handler
        self._worker = worker
        self._template = load_event("mcp_tools_list.json")
        self.methods: list[str] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = await request.aread()
        event = copy.deepcopy(self._template)
        headers = {k.lower(): v for k, v in request.headers.items()}
        cookies = headers.pop("cookie", None)
        event["headers"] = {**headers, "host": FUNCTION_URL_HOST}
        if cookies:
            event["cookies"] = cookies.split("; ")
        event["requestContext"]["http"]["method"] = request.method
        event["rawPath"] = event["requestContext"]["http"]["path"] = request.url.path
        event["rawQueryString"] = request.url.query.decode()
        event["body"] = base64.b64encode(body).decode()
        event["isBase64Encoded"] = True
        self.methods.append(request.method)
        response = await self._worker.invoke_async(self._handler, event)
        answer_headers = [(k, v) for k, v in (response.get("headers") or {}).items()]
        answer_headers += [("set-cookie", cookie) for cookie in response.get("cookies") or []]
        return httpx2.Response(response["statusCode"], headers=answer_headers, content=response_body(response))


@pytest.fixture
def deployed_environment(moto_engine: Engine, monkeypatch: pytest.MonkeyPatch) -> LambdaFunctions:
    """The environment the template gives the functions, over moto, and the handlers their entrypoints build from
    it (bootstrap.from_environment): the functions as deployed."""
    monkeypatch.setenv("TABLE_NAME", "agent-memory-mcp-test")
    monkeypatch.delenv("AWS_ENDPOINT_URL_DYNAMODB", raising=False)
    ensure_table(moto_engine.client, "agent-memory-mcp-test", table_definition())
    store_event_key(DynamoDBKeyRepository(moto_engine.client, "agent-memory-mcp-test"))
    return LambdaFunctions.over(bootstrap.from_environment())
