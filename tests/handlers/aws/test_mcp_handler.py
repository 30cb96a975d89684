"""The Lambda `handler` fed function-URL events (payload 2.0) from events/, warm across invocations, and the real
SDK client talking to it through those events. The events carry tests.conftest.EVENT_API_KEY, stored in the table
by the fixtures as `keys create` would."""

from __future__ import annotations

import asyncio
import copy
import importlib.metadata
import json
from collections.abc import Callable
from typing import Any

import httpx2
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from core.contract import RetrievalQuery
from core.keys import KeyService
from core.memories import MemoryService
from core.recall.service import RecallService
from core.repository import KeyRepository
from handlers.auth import Authenticator, key_authenticator
from handlers.aws.events import UNINTERPRETABLE_EVENT
from handlers.mcp import create_server
from handlers.mcp.endpoint import create_handler
from tests.conftest import EVENT_API_KEY, LambdaFunctions, store_event_key
from tests.handlers.conftest import (
    EVENTS,
    FUNCTION_URL_HOST,
    Event,
    FunctionUrlBridge,
    LambdaResponse,
    LambdaWorker,
    close_thread_loop,
    header,
    load_event,
    response_body,
    response_json,
)

Handler = Callable[[Event, Any], LambdaResponse]

# Every events/mcp_*.json with the status the handler must answer it with; a file missing here fails the suite.
EXPECTED_STATUS: dict[str, int] = {
    "mcp_initialize.json": 200,
    "mcp_initialized_notification.json": 202,
    "mcp_tools_list.json": 200,
    "mcp_tools_call_create.json": 200,
    "mcp_tools_call_create_base64.json": 200,
    "mcp_tools_call_search.json": 200,
    "mcp_tools_call_recall.json": 200,
    "mcp_tools_call_invalid.json": 200,
    "mcp_server_discover_modern.json": 200,
    "mcp_tools_call_modern.json": 200,
    "mcp_get.json": 405,
    "mcp_delete.json": 405,
    "mcp_options.json": 204,
    "mcp_tools_list_trailing_slash.json": 404,
    "mcp_tools_list_foreign_origin.json": 403,
    "mcp_tools_list_unauthenticated.json": 401,
}
EVENT_FILES = sorted(path.name for path in EVENTS.glob("mcp_*.json"))
WARM_ROUNDS = 5


@pytest.fixture
def event_key(api_keys: KeyRepository, key_service: KeyService) -> Authenticator:
    """An authenticator over the in-memory key store, which holds the events' key."""
    store_event_key(api_keys)
    return key_authenticator(key_service)


@pytest.fixture
def handler(memory_service: MemoryService, recall_service: RecallService, event_key: Authenticator) -> Handler:
    return create_handler(
        create_server(memory_service, event_key, version="test", recall=recall_service),
        authenticate=event_key,
    )


def test_every_mcp_event_file_has_an_expected_status_and_every_expectation_a_file() -> None:
    assert set(EVENT_FILES) == set(EXPECTED_STATUS)


@pytest.mark.parametrize("name", EVENT_FILES)
def test_each_mcp_event_gets_its_expected_status(handler: Handler, lambda_worker: LambdaWorker, name: str) -> None:
    if name not in EXPECTED_STATUS:
        pytest.fail(f"events/{name} has no expected status in EXPECTED_STATUS")

    response = lambda_worker.invoke(handler, load_event(name))

    assert response["statusCode"] == EXPECTED_STATUS[name], response_body(response)


def test_the_handler_stays_correct_across_warm_invocations(
    handler: Handler, lambda_worker: LambdaWorker, memory_service: MemoryService
) -> None:
    for _ in range(WARM_ROUNDS):
        for name in EVENT_FILES:
            response = lambda_worker.invoke(handler, load_event(name))

            assert response["statusCode"] == EXPECTED_STATUS[name], (name, response_body(response))
            assert header(response, "mcp-session-id") is None
            if response["statusCode"] == 200:
                assert (header(response, "content-type") or "").startswith("application/json")

    creates = sum(1 for name in EVENT_FILES if name.startswith("mcp_tools_call_create"))
    assert memory_service.search("default", RetrievalQuery.parse({"q": "dark roast"})).total == creates * WARM_ROUNDS


def test_the_session_manager_starts_once_and_keeps_running_across_warm_invocations(
    memory_service: MemoryService,
    event_key: Authenticator,
    lambda_worker: LambdaWorker,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    runs: list[StreamableHTTPSessionManager] = []
    real_run = StreamableHTTPSessionManager.run

    def counted_run(self: StreamableHTTPSessionManager) -> Any:
        runs.append(self)
        return real_run(self)

    monkeypatch.setattr(StreamableHTTPSessionManager, "run", counted_run)
    server = create_server(memory_service, event_key, version="test")
    handler = create_handler(server, authenticate=event_key)

    statuses = [
        lambda_worker.invoke(handler, load_event(name))["statusCode"]
        for name in ["mcp_tools_list.json", "mcp_tools_call_create.json", "mcp_tools_call_invalid.json"] * 3
    ]

    assert statuses == [200] * 9
    assert len(runs) == 1  # entered once, on the first invocation, and still open
    # After the invocation loop was closed (another library's asyncio.run), a new session manager starts on the
    # new loop, once.
    lambda_worker.run(close_thread_loop)
    for _ in range(3):
        assert lambda_worker.invoke(handler, load_event("mcp_tools_list.json"))["statusCode"] == 200
    assert len(runs) == 2


def test_a_get_is_answered_at_once_with_405_allowing_post(handler: Handler, lambda_worker: LambdaWorker) -> None:
    response = lambda_worker.invoke(handler, load_event("mcp_get.json"))

    assert response["statusCode"] == 405
    assert header(response, "allow") == "POST, OPTIONS"
    assert header(response, "content-type") == "application/problem+json"
    assert response_json(response)["status"] == 405


def test_a_trailing_slash_is_a_404_problem_not_a_redirect(handler: Handler, lambda_worker: LambdaWorker) -> None:
    response = lambda_worker.invoke(handler, load_event("mcp_tools_list_trailing_slash.json"))

    assert response["statusCode"] == 404
    assert header(response, "location") is None
    assert header(response, "content-type") == "application/problem+json"
    assert "/mcp" in response_json(response)["detail"]


def test_a_browser_from_an_allowed_origin_gets_its_preflight_and_one_allow_origin_on_each_response(
    lambda_worker: LambdaWorker, memory_service: MemoryService, event_key: Authenticator
) -> None:
    origin = "https://app.example"
    handler = create_handler(
        create_server(memory_service, event_key, version="test"),
        [origin],
        authenticate=event_key,
    )
    preflight = load_event("mcp_options.json")
    preflight["headers"] |= {
        "origin": origin,
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization,content-type,mcp-protocol-version",
    }
    listing = load_event("mcp_tools_list.json")
    listing["headers"]["origin"] = origin
    keyless = copy.deepcopy(listing)
    del keyless["headers"]["authorization"]

    answered = lambda_worker.invoke(handler, preflight)
    listed = lambda_worker.invoke(handler, listing)
    refused = lambda_worker.invoke(handler, keyless)

    assert (answered["statusCode"], listed["statusCode"], refused["statusCode"]) == (204, 200, 401)
    assert "authorization" in (header(answered, "access-control-allow-headers") or "")
    for response in (answered, listed, refused):
        assert header(response, "access-control-allow-origin") == origin
        assert not response.get("multiValueHeaders")
    assert header(refused, "access-control-expose-headers") == "mcp-session-id, www-authenticate"


def test_a_foreign_origin_is_refused_even_with_a_valid_request(
    handler: Handler, lambda_worker: LambdaWorker, memory_service: MemoryService, event_key: Authenticator
) -> None:
    event = load_event("mcp_tools_list_foreign_origin.json")
    assert event["headers"]["origin"] == "https://attacker.example"

    refused = lambda_worker.invoke(handler, event)
    server = create_server(memory_service, event_key, version="test")
    allowed = lambda_worker.invoke(create_handler(server, ["https://attacker.example"], authenticate=event_key), event)

    assert refused["statusCode"] == 403
    assert allowed["statusCode"] == 200
    assert "create_memory" in {tool["name"] for tool in response_json(allowed)["result"]["tools"]}


def test_a_modern_tool_call_returns_the_prime_envelope(handler: Handler, lambda_worker: LambdaWorker) -> None:
    lambda_worker.invoke(handler, load_event("mcp_tools_call_create.json"))

    response = lambda_worker.invoke(handler, load_event("mcp_tools_call_modern.json"))

    result = response_json(response)["result"]
    assert result["isError"] is False
    assert result["structuredContent"]["limit"] == 20
    assert result["structuredContent"]["items"][0]["content"] == "The user prefers dark roast coffee without sugar"


def test_a_recall_tool_call_returns_the_ranked_envelope(handler: Handler, lambda_worker: LambdaWorker) -> None:
    lambda_worker.invoke(handler, load_event("mcp_tools_call_create.json"))

    response = lambda_worker.invoke(handler, load_event("mcp_tools_call_recall.json"))

    result = response_json(response)["result"]
    assert result["isError"] is False
    page = result["structuredContent"]
    assert (page["total"], page["limit"], page["ranking"]["semantic"]) == (1, 5, True)
    assert page["items"][0]["memory"]["content"] == "The user prefers dark roast coffee without sugar"


def test_a_base64_body_is_decoded_like_a_plain_one(handler: Handler, lambda_worker: LambdaWorker) -> None:
    plain = response_json(lambda_worker.invoke(handler, load_event("mcp_tools_call_create.json")))
    encoded = response_json(lambda_worker.invoke(handler, load_event("mcp_tools_call_create_base64.json")))

    assert plain["result"]["structuredContent"]["id"] == 1
    assert encoded["result"]["structuredContent"]["id"] == 2
    assert encoded["result"]["structuredContent"]["content"] == plain["result"]["structuredContent"]["content"]


def test_invalid_arguments_are_a_tool_error_in_the_http_422_words(
    handler: Handler, lambda_worker: LambdaWorker
) -> None:
    response = lambda_worker.invoke(handler, load_event("mcp_tools_call_invalid.json"))

    result = response_json(response)["result"]
    assert result["isError"] is True
    assert result["content"][0]["text"] == (
        "sort: must be one of 'id', 'created_at', 'updated_at' or 'last_accessed_at'; limit: must be 1 or more"
    )


def test_the_handler_recovers_when_something_cleared_the_threads_event_loop(
    handler: Handler, lambda_worker: LambdaWorker
) -> None:
    lambda_worker.invoke(handler, load_event("mcp_tools_list.json"))
    # Another library's asyncio.run() leaves the thread without a current loop (after closing Mangum's, politely).
    lambda_worker.run(close_thread_loop)
    lambda_worker.run(lambda: asyncio.run(asyncio.sleep(0)))

    response = lambda_worker.invoke(handler, load_event("mcp_tools_list.json"))

    assert response["statusCode"] == 200
    assert "create_memory" in {tool["name"] for tool in response_json(response)["result"]["tools"]}


def test_the_handler_built_from_the_environment_serves_every_event_warm(
    deployed_environment: LambdaFunctions, lambda_worker: LambdaWorker
) -> None:
    for _ in range(WARM_ROUNDS):
        for name in EVENT_FILES:
            response = lambda_worker.invoke(deployed_environment.mcp, load_event(name))

            assert response["statusCode"] == EXPECTED_STATUS[name], (name, response_body(response))


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_sdk_client_works_through_function_url_events(
    handler: Handler, lambda_worker: LambdaWorker, mode: str
) -> None:
    bridge = FunctionUrlBridge(handler, lambda_worker)
    async with httpx2.AsyncClient(transport=bridge, headers={"authorization": f"Bearer {EVENT_API_KEY}"}) as http:
        url = f"https://{FUNCTION_URL_HOST}/mcp"
        async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
            created = await client.call_tool("create_memory", {"content": "The user is left-handed"})
            primed = await client.call_tool("prime_memory_context", {})
            refused = await client.call_tool("update_memory", {"id": 1, "expected_version": 7, "content": "x"})

    assert created.structured_content is not None
    assert created.structured_content["id"] == 1
    assert primed.structured_content is not None
    assert primed.structured_content["total"] == 1
    assert refused.is_error
    assert json.dumps(refused.content[0].model_dump()).count("is at version 1") == 1
    assert set(bridge.methods) == {"POST"}


def test_a_request_without_a_key_is_refused_with_401_before_any_tool_runs(
    handler: Handler, lambda_worker: LambdaWorker, memory_service: MemoryService
) -> None:
    event = load_event("mcp_tools_call_create.json")
    del event["headers"]["authorization"]

    response = lambda_worker.invoke(handler, event)

    assert response["statusCode"] == 401
    assert header(response, "www-authenticate") == 'Bearer realm="agent-memory"'
    assert header(response, "content-type") == "application/problem+json"
    assert response["isBase64Encoded"] is False  # problem+json leaves the function as text
    assert response_json(response)["status"] == 401
    assert memory_service.search("default", RetrievalQuery.parse({})).total == 0


def test_the_handler_built_from_the_environment_refuses_a_request_without_a_key(
    deployed_environment: LambdaFunctions, lambda_worker: LambdaWorker
) -> None:
    response = lambda_worker.invoke(deployed_environment.mcp, load_event("mcp_tools_list_unauthenticated.json"))

    assert response["statusCode"] == 401
    # The function URL's own origin is the issuer: the challenge points at its resource metadata.
    metadata = f"https://{FUNCTION_URL_HOST}/.well-known/oauth-protected-resource/mcp"
    assert header(response, "www-authenticate") == (
        f'Bearer realm="agent-memory", scope="read write", resource_metadata="{metadata}"'
    )


# --- events no function URL would send: every one answered, none raises ---

PROBLEM_JSON = "application/problem+json"


def test_a_preflight_answers_204_with_no_body_and_no_content_type(
    handler: Handler, lambda_worker: LambdaWorker
) -> None:
    response = lambda_worker.invoke(handler, load_event("mcp_options.json"))

    assert response["statusCode"] == 204
    assert response["headers"] == {"allow": "POST, OPTIONS"}
    assert response_body(response) == b""


def test_a_body_marked_base64_that_is_not_base64_is_a_400_problem_and_runs_no_tool(
    handler: Handler, lambda_worker: LambdaWorker, memory_service: MemoryService
) -> None:
    event = load_event("mcp_tools_call_create_base64.json")
    event["body"] = event["body"][:-1]

    response = lambda_worker.invoke(handler, event)

    assert response["statusCode"] == 400
    assert response["headers"] == {"content-type": PROBLEM_JSON}
    assert response_json(response) == {
        "type": "urn:agent-memory:problem:bad-request-body",
        "title": "Body is not readable",
        "status": 400,
        "detail": "the body is marked `isBase64Encoded` but is not base64",
    }
    assert memory_service.search("default", RetrievalQuery.parse({})).total == 0


def _drop_source_ip(event: Event) -> None:
    del event["requestContext"]["http"]["sourceIp"]


def _drop_version(event: Event) -> None:
    del event["version"]


def _list_header(event: Event) -> None:
    event["headers"]["accept"] = ["application/json"]


@pytest.mark.parametrize("mutate", [_drop_source_ip, _drop_version, _list_header], ids=lambda f: f.__name__[1:])
def test_an_event_the_function_cannot_interpret_is_a_500_uninterpretable_event_problem(
    handler: Handler, lambda_worker: LambdaWorker, mutate: Callable[[Event], None]
) -> None:
    event = load_event("mcp_tools_list.json")
    mutate(event)

    response = lambda_worker.invoke(handler, event)

    assert response["statusCode"] == 500
    assert response["headers"] == {"content-type": PROBLEM_JSON}
    problem = response_json(response)
    assert (problem["type"], problem["status"]) == (UNINTERPRETABLE_EVENT, 500)
    assert "payload 2.0" in problem["detail"]


def test_a_raw_path_holding_a_lone_surrogate_is_a_404_problem(handler: Handler, lambda_worker: LambdaWorker) -> None:
    event = load_event("mcp_tools_list.json")
    event["rawPath"] = event["requestContext"]["http"]["path"] = "/mcp/\ud800"

    response = lambda_worker.invoke(handler, event)

    assert response["statusCode"] == 404
    assert response["headers"] == {"content-type": PROBLEM_JSON}
    assert response_json(response)["type"] == "urn:agent-memory:problem:http-error"


# --- the key presented once, in the header its scheme says ---

SIGV4 = (
    "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261202/us-east-1/lambda/aws4_request, SignedHeaders=host, Signature=0"
)


@pytest.mark.parametrize(
    ("headers", "detail"),
    [
        ({"authorization": f"Bearer {EVENT_API_KEY},Bearer {EVENT_API_KEY}"}, "header, not several"),
        (
            {"authorization": f"{SIGV4},{SIGV4}", "x-agent-memory-authorization": f"Bearer {EVENT_API_KEY}"},
            "header, not several",
        ),
        (
            {"authorization": "AWS4-HMAC-SHA256garbage", "x-agent-memory-authorization": f"Bearer {EVENT_API_KEY}"},
            "Bearer scheme",
        ),
    ],
    ids=["a key twice", "two signatures", "a sigv4 lookalike"],
)
def test_two_keys_joined_in_one_header_or_a_sigv4_lookalike_is_401_before_any_tool_runs(
    handler: Handler, lambda_worker: LambdaWorker, headers: dict[str, str], detail: str
) -> None:
    event = load_event("mcp_tools_list.json")
    event["headers"] |= headers

    response = lambda_worker.invoke(handler, event)

    assert response["statusCode"] == 401
    assert header(response, "www-authenticate") == 'Bearer realm="agent-memory"'
    assert header(response, "content-type") == PROBLEM_JSON
    assert detail in response_json(response)["detail"]


def test_a_signed_call_with_its_key_in_the_agent_memory_header_is_served(
    handler: Handler, lambda_worker: LambdaWorker
) -> None:
    event = load_event("mcp_tools_list.json")
    event["headers"] |= {"authorization": SIGV4, "x-agent-memory-authorization": f"Bearer {EVENT_API_KEY}"}

    response = lambda_worker.invoke(handler, event)

    assert response["statusCode"] == 200
    assert "create_memory" in {tool["name"] for tool in response_json(response)["result"]["tools"]}


def test_the_deployed_handler_reports_the_projects_version_from_its_metadata(
    deployed_environment: LambdaFunctions, lambda_worker: LambdaWorker
) -> None:
    response = lambda_worker.invoke(deployed_environment.mcp, load_event("mcp_initialize.json"))

    assert response_json(response)["result"]["serverInfo"]["version"] == importlib.metadata.version("agent-memory")
