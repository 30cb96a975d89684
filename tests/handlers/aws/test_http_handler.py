"""The Lambda door end to end: the API Gateway HTTP API 2.0 payloads in events/ fed to the HTTP function's handler
as its entrypoint (handlers.aws.http.entrypoint) builds it: over in-memory services (`handler`), and from the
environment over Amazon DynamoDB Local (`deployed_env` and from_environment: moto cannot run the access stamps'
PartiQL batches). The events carry tests.conftest.EVENT_API_KEY, which both fixtures store as `keys create`
would."""

from __future__ import annotations

import base64
import copy
import gzip
import importlib.metadata
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from adapters.dynamodb import DynamoDBKeyRepository
from core.keys import KeyService
from handlers import bootstrap
from handlers.aws import http as lambda_http
from handlers.aws.events import UNINTERPRETABLE_EVENT
from handlers.bootstrap.http import lambda_app
from handlers.http import app as http_api
from tests.conftest import EVENT_API_KEY, SERVE_ROOT, Engine, Handler, LambdaFunctions, store_event_key

REGION = "us-east-1"
EVENTS_DIR = SERVE_ROOT / "events"
EVENT_FILES = sorted(EVENTS_DIR.glob("http_*.json"))
PROBLEM_JSON = "application/problem+json"

# Each event's status when it arrives after the `seeded` fixture has created memory 1 at version 1.
EXPECTED_STATUS = {
    "http_create": 201,
    "http_create_base64": 201,
    "http_create_invalid": 422,
    "http_create_not_json": 400,
    "http_delete": 204,
    "http_get": 200,
    "http_get_missing": 404,
    "http_get_unauthenticated": 401,
    "http_healthz": 200,
    "http_console": 200,
    "http_patch": 200,
    "http_patch_stale": 412,
    "http_search": 200,
    "http_search_invalid": 422,
    "http_recall": 200,
}


@dataclass(frozen=True)
class FakeLambdaContext:
    """The attributes Powertools' `inject_lambda_context` reads from the real LambdaContext."""

    function_name: str = "agent-memory-HttpFunction-Q3xV9kLmN2pR"
    memory_limit_in_mb: int = 512
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:123456789012:function:agent-memory-HttpFunction-Q3xV9kLmN2pR"
    aws_request_id: str = "6f3c2a1e-8b4d-4e5f-9a0b-1c2d3e4f5a6b"


CONTEXT = FakeLambdaContext()


def load_event(name: str) -> dict[str, Any]:
    event: dict[str, Any] = json.loads((EVENTS_DIR / f"{name}.json").read_text(encoding="utf-8"))
    return event


def invoke(handler: Handler, event: dict[str, Any]) -> dict[str, Any]:
    return handler(event, CONTEXT)


def body_of(response: dict[str, Any]) -> Any:
    """The body as the client receives it: API Gateway decodes a base64 body before sending it on."""
    raw = response["body"]
    text = base64.b64decode(raw).decode() if response.get("isBase64Encoded") else raw
    return json.loads(text)


def for_memory(event: dict[str, Any], memory_id: int, request_id: str, if_match: str | None = None) -> dict[str, Any]:
    """A copy of an event aimed at another memory, as API Gateway would deliver it."""
    changed = copy.deepcopy(event)
    path = f"/memories/{memory_id}"
    changed["rawPath"] = changed["requestContext"]["http"]["path"] = path
    changed["pathParameters"] = {"proxy": path.lstrip("/")}
    changed["requestContext"]["requestId"] = request_id
    if if_match is not None:
        changed["headers"]["if-match"] = if_match
    return changed


@pytest.fixture
def handler(lambda_functions: LambdaFunctions) -> Handler:
    """The function's handler as its entrypoint builds it, over in-memory services holding the events' key
    (tests/conftest.py lambda_functions)."""
    return lambda_functions.http


def from_environment() -> Handler:
    """The function's handler as its entrypoint builds it at init, from the environment (deployed_env's)."""
    services = bootstrap.from_environment()
    return lambda_http.entrypoint(lambda_app(services), services.settings)


@pytest.fixture
def deployed_env(ddb_local_engine: Engine, dynamodb_local_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh table of the template's definition, and the environment the deployed function gets: a handler built
    from it (from_environment) is the function's own wiring end to end."""
    table = ddb_local_engine.new_table()
    monkeypatch.setenv("AWS_REGION", REGION)
    monkeypatch.setenv("TABLE_NAME", table)
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", dynamodb_local_endpoint)
    assert ddb_local_engine.client is not None
    store_event_key(DynamoDBKeyRepository(ddb_local_engine.client, table))


@pytest.fixture
def seeded(handler: Handler) -> dict[str, Any]:
    """Memory 1 at version 1, created through the create event itself."""
    response = invoke(handler, load_event("http_create"))
    assert response["statusCode"] == 201, response
    memory: dict[str, Any] = body_of(response)
    assert (memory["id"], memory["version"]) == (1, 1)
    return memory


def test_every_event_file_has_an_expected_status_and_every_expectation_has_a_file() -> None:
    assert {path.stem for path in EVENT_FILES} == set(EXPECTED_STATUS)


@pytest.mark.parametrize("path", EVENT_FILES, ids=lambda path: path.stem)
def test_each_event_file_gets_its_expected_status_from_the_handler(
    path: Path, handler: Handler, seeded: dict[str, Any]
) -> None:
    assert path.stem in EXPECTED_STATUS, f"events/{path.name} has no expected status in EXPECTED_STATUS"
    event = json.loads(path.read_text(encoding="utf-8"))
    response = invoke(handler, event)
    assert response["statusCode"] == EXPECTED_STATUS[path.stem], response


def test_the_console_reaches_a_browser_through_api_gateway_gzipped_in_base64(handler: Handler) -> None:
    response = invoke(handler, load_event("http_console"))

    assert response["headers"]["content-encoding"] == "gzip"
    assert response["isBase64Encoded"] is True  # API Gateway decodes it and sends the browser the gzip bytes
    page = gzip.decompress(base64.b64decode(response["body"]))
    assert page == (SERVE_ROOT / "src" / "handlers" / "console" / "static" / "index.html").read_bytes()


def test_warm_invocations_reuse_one_service_across_five_rounds_of_the_whole_lifecycle(deployed_env: None) -> None:
    handler = from_environment()
    create, get, patch = load_event("http_create"), load_event("http_get"), load_event("http_patch")
    search, recall, delete = load_event("http_search"), load_event("http_recall"), load_event("http_delete")
    for round_ in range(1, 6):
        created = invoke(handler, create)
        assert created["statusCode"] == 201, created
        memory_id = body_of(created)["id"]
        assert memory_id == round_

        read = invoke(handler, for_memory(get, memory_id, f"get-{round_}"))
        assert (read["statusCode"], body_of(read)["id"]) == (200, memory_id)

        patched = invoke(handler, for_memory(patch, memory_id, f"patch-{round_}", if_match=read["headers"]["etag"]))
        assert (patched["statusCode"], patched["headers"]["etag"]) == (200, '"2"'), patched

        found = invoke(handler, search)
        assert found["statusCode"] == 200, found
        # Earlier rounds' memories are deleted, so only this round's is left to find.
        assert [item["id"] for item in body_of(found)["items"]] == [memory_id]
        recalled = invoke(handler, recall)
        assert recalled["statusCode"] == 200, recalled
        assert [item["memory"]["id"] for item in body_of(recalled)["items"]] == [memory_id]

        deleted = invoke(handler, for_memory(delete, memory_id, f"delete-{round_}"))
        assert deleted["statusCode"] == 204, deleted
        gone = invoke(handler, for_memory(get, memory_id, f"gone-{round_}"))
        assert gone["statusCode"] == 404, gone


def test_create_answers_201_with_location_etag_and_the_stored_record(handler: Handler) -> None:
    response = invoke(handler, load_event("http_create"))
    assert response["statusCode"] == 201
    assert response["headers"]["content-type"] == "application/json"
    assert response["headers"]["location"] == "/memories/1"
    assert response["headers"]["etag"] == '"1"'
    assert response["isBase64Encoded"] is False
    memory = body_of(response)
    assert memory["content"] == "Prefers dark roast coffee, no sugar"
    assert memory["tags"] == ["preference", "food"]
    assert (memory["memory_type"], memory["status"], memory["version"]) == ("preference", "active", 1)


def test_a_base64_encoded_create_stores_the_same_record_as_a_plain_one(handler: Handler) -> None:
    plain = body_of(invoke(handler, load_event("http_create")))
    encoded = invoke(handler, load_event("http_create_base64"))
    assert encoded["statusCode"] == 201
    assert encoded["headers"]["location"] == "/memories/2"
    memory = body_of(encoded)
    for field in ("content", "tags", "memory_type", "status", "version"):
        assert memory[field] == plain[field]


def test_get_answers_the_record_with_its_etag_and_no_location(handler: Handler, seeded: dict[str, Any]) -> None:
    response = invoke(handler, load_event("http_get"))
    assert response["statusCode"] == 200
    assert response["headers"]["content-type"] == "application/json"
    assert response["headers"]["etag"] == '"1"'
    assert "location" not in response["headers"]
    assert body_of(response)["id"] == 1


def test_patch_with_the_current_etag_answers_the_next_version(handler: Handler, seeded: dict[str, Any]) -> None:
    response = invoke(handler, load_event("http_patch"))
    assert response["statusCode"] == 200
    assert response["headers"]["etag"] == '"2"'
    memory = body_of(response)
    assert memory["version"] == 2
    assert memory["content"] == "Prefers dark roast coffee with oat milk"


def test_patch_with_a_stale_etag_answers_412_with_the_current_etag(handler: Handler, seeded: dict[str, Any]) -> None:
    response = invoke(handler, load_event("http_patch_stale"))
    assert response["statusCode"] == 412
    assert response["headers"]["content-type"] == PROBLEM_JSON
    assert response["headers"]["etag"] == '"1"'
    assert body_of(response)["type"] == "urn:agent-memory:problem:version-mismatch"


def test_delete_answers_204_with_an_empty_body_and_no_content_type(handler: Handler, seeded: dict[str, Any]) -> None:
    response = invoke(handler, load_event("http_delete"))
    assert response["statusCode"] == 204
    assert response["body"] == ""
    assert response["headers"] == {}
    assert invoke(handler, load_event("http_get"))["statusCode"] == 404


def test_search_answers_the_page_envelope(handler: Handler, seeded: dict[str, Any]) -> None:
    response = invoke(handler, load_event("http_search"))
    assert response["statusCode"] == 200
    assert response["headers"]["content-type"] == "application/json"
    page = body_of(response)
    assert [item["id"] for item in page["items"]] == [1]
    assert (page["total"], page["limit"], page["offset"], page["has_more"]) == (1, 5, 0, False)


def test_recall_answers_the_ranked_envelope(handler: Handler, seeded: dict[str, Any]) -> None:
    response = invoke(handler, load_event("http_recall"))
    assert response["statusCode"] == 200
    assert response["headers"]["content-type"] == "application/json"
    page = body_of(response)
    assert [(item["memory"]["id"], set(item["parts"])) for item in page["items"]] == [
        (1, {"lexical", "semantic", "recency", "use", "type", "newer"})
    ]
    assert (page["total"], page["limit"], page["offset"], page["has_more"]) == (1, 5, 0, False)
    assert page["ranking"]["model"] == "stand-in:hashed-words-256"


def test_healthz_answers_ok(handler: Handler) -> None:
    response = invoke(handler, load_event("http_healthz"))
    assert response["statusCode"] == 200
    assert body_of(response) == {"status": "ok"}


@pytest.mark.parametrize(
    "name", sorted(name for name, status in EXPECTED_STATUS.items() if status >= 400), ids=lambda name: name
)
def test_error_responses_are_problem_documents_with_the_same_status(
    name: str, handler: Handler, seeded: dict[str, Any]
) -> None:
    response = invoke(handler, load_event(name))
    assert response["headers"]["content-type"] == PROBLEM_JSON
    problem = body_of(response)
    assert problem["status"] == response["statusCode"] == EXPECTED_STATUS[name]
    assert problem["type"].startswith("urn:agent-memory:problem:")
    assert problem["title"]
    assert problem["detail"]


def test_invalid_fields_are_each_named_in_the_problem(handler: Handler) -> None:
    problem = body_of(invoke(handler, load_event("http_create_invalid")))
    assert {error["field"] for error in problem["errors"]} == {"content", "memory_type"}


def test_problem_documents_leave_the_function_as_text_not_base64(handler: Handler) -> None:
    response = invoke(handler, load_event("http_get_missing"))
    assert response["isBase64Encoded"] is False


def test_the_logger_carries_the_request_id_as_correlation_id(handler: Handler, seeded: dict[str, Any]) -> None:
    # A successful request logs nothing, so this checks the state every log line of the invocation would carry.
    event = load_event("http_get")
    invoke(handler, event)
    assert http_api.logger.get_correlation_id() == event["requestContext"]["requestId"]


def test_an_unexpected_failure_is_logged_with_the_correlation_id_and_answers_500(
    handler: Handler, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The Powertools handler bound sys.stdout at import, before capsys replaced it.
    monkeypatch.setattr(http_api.logger.registered_handler, "stream", sys.stdout)

    def crash(*args: object) -> None:
        raise RuntimeError("an unforeseen failure")

    monkeypatch.setattr(KeyService, "authenticate", crash)
    event = load_event("http_get")

    response = invoke(handler, event)

    assert response["statusCode"] == 500
    assert response["headers"]["content-type"] == PROBLEM_JSON
    assert body_of(response)["type"] == "urn:agent-memory:problem:internal-error"
    records = log_records(capsys.readouterr().out)
    assert records, "the unhandled error was not logged"
    assert records[-1]["level"] == "ERROR"
    assert records[-1]["correlation_id"] == event["requestContext"]["requestId"]
    assert records[-1]["function_request_id"] == CONTEXT.aws_request_id


def test_a_request_without_a_key_answers_401_with_a_bearer_challenge(handler: Handler) -> None:
    response = invoke(handler, load_event("http_get_unauthenticated"))

    assert response["statusCode"] == 401
    assert response["headers"]["www-authenticate"] == 'Bearer realm="agent-memory"'
    assert response["headers"]["content-type"] == PROBLEM_JSON
    assert body_of(response)["type"] == "urn:agent-memory:problem:unauthenticated"


def test_a_key_the_table_does_not_hold_answers_401(handler: Handler) -> None:
    event = load_event("http_get")
    event["headers"]["authorization"] = "Bearer am_0123456789ab_" + "x" * 43

    response = invoke(handler, event)

    assert response["statusCode"] == 401
    assert response["headers"]["www-authenticate"] == 'Bearer realm="agent-memory", error="invalid_token"'


def test_healthz_needs_no_key(handler: Handler) -> None:
    event = load_event("http_healthz")
    assert "authorization" not in event["headers"]

    assert invoke(handler, event)["statusCode"] == 200


# --- events no API Gateway would send: every one answered, none raises ---


def log_records(out: str) -> list[dict[str, Any]]:
    """The Powertools log records among what a handler printed (its EMF metric lines left out)."""
    records = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return [record for record in records if "_aws" not in record]


def logged_records(capsys: pytest.CaptureFixture[str]) -> tuple[str, list[dict[str, Any]]]:
    out = capsys.readouterr().out
    return out, log_records(out)


@pytest.mark.parametrize(
    "body", ["not base64!", "eyJ", "\u00e9t\u00e9"], ids=["bad characters", "bad padding", "not ascii"]
)
def test_a_body_marked_base64_that_is_not_base64_is_a_400_problem_and_stores_nothing(
    body: str, handler: Handler
) -> None:
    event = load_event("http_create_base64")
    event["body"] = body

    response = invoke(handler, event)

    assert response["statusCode"] == 400
    assert response["headers"] == {"content-type": PROBLEM_JSON}
    assert body_of(response) == {
        "type": "urn:agent-memory:problem:bad-request-body",
        "title": "Body is not readable",
        "status": 400,
        "detail": "the body is marked `isBase64Encoded` but is not base64",
    }
    assert body_of(invoke(handler, load_event("http_search")))["total"] == 0


def test_a_body_holding_a_lone_surrogate_is_a_400_problem(handler: Handler) -> None:
    event = load_event("http_create")
    event["body"] = '{"content": "\ud800"}'

    response = invoke(handler, event)

    assert response["statusCode"] == 400
    assert response["headers"] == {"content-type": PROBLEM_JSON}
    assert body_of(response)["detail"] == "the body is not text: it holds a lone surrogate"


def _drop_source_ip(event: dict[str, Any]) -> None:
    del event["requestContext"]["http"]["sourceIp"]


def _drop_version(event: dict[str, Any]) -> None:
    del event["version"]


def _number_header(event: dict[str, Any]) -> None:
    event["headers"]["accept"] = 7


def _payload_1(event: dict[str, Any]) -> None:
    event["version"] = "1.0"


UNINTERPRETABLE = {
    "no sourceIp": (_drop_source_ip, "`requestContext.http.sourceIp` is missing or not a string"),
    "no version": (_drop_version, '`version` is not "2.0"'),
    "a header that is a number": (_number_header, "`headers` holds a value that is not a string"),
    "payload format 1.0": (_payload_1, '`version` is not "2.0"'),
}


@pytest.mark.parametrize("case", sorted(UNINTERPRETABLE))
def test_an_event_the_function_cannot_interpret_is_a_logged_500_problem_that_never_logs_the_key(
    case: str, handler: Handler, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(http_api.logger.registered_handler, "stream", sys.stdout)
    mutate, reason = UNINTERPRETABLE[case]
    event = load_event("http_get")
    mutate(event)

    response = invoke(handler, event)

    assert response["statusCode"] == 500
    assert response["headers"] == {"content-type": PROBLEM_JSON}
    problem = body_of(response)
    assert (problem["type"], problem["status"]) == (UNINTERPRETABLE_EVENT, 500)
    assert reason in problem["detail"]
    out, records = logged_records(capsys)
    assert [(r["level"], r["message"]) for r in records] == [("ERROR", f"cannot interpret the Lambda event: {reason}")]
    assert records[0]["correlation_id"] == event["requestContext"]["requestId"]
    assert EVENT_API_KEY.rsplit("_", 1)[1] not in out


@pytest.mark.parametrize("field", ["rawPath", "path"])
def test_a_path_holding_a_lone_surrogate_is_a_404_problem(field: str, handler: Handler) -> None:
    event = load_event("http_get")
    if field == "rawPath":
        event["rawPath"] = "/memories/\ud800"
    else:
        event["requestContext"]["http"]["path"] = "/memories/\ud800"

    response = invoke(handler, event)

    assert response["statusCode"] == 404
    assert response["headers"] == {"content-type": PROBLEM_JSON}
    problem = body_of(response)
    assert (problem["type"], problem["status"]) == ("urn:agent-memory:problem:http-error", 404)
    assert "lone surrogate" in problem["detail"]


# --- the key presented once, in the header its scheme says ---

SIGV4 = (
    "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261202/us-east-1/lambda/aws4_request, SignedHeaders=host, Signature=0"
)


@pytest.mark.parametrize(
    "headers",
    [
        {"authorization": f"Bearer {EVENT_API_KEY},Bearer {EVENT_API_KEY}"},
        {"authorization": f"Bearer {EVENT_API_KEY}, Bearer am_0123456789ab_{'a' * 43}"},
        {"authorization": f"{SIGV4},{SIGV4}", "x-agent-memory-authorization": f"Bearer {EVENT_API_KEY}"},
        {"authorization": SIGV4, "x-agent-memory-authorization": f"Bearer {EVENT_API_KEY},Bearer {EVENT_API_KEY}"},
    ],
    ids=["the same key twice", "two keys", "two signatures", "the signed key header twice"],
)
def test_a_key_header_api_gateway_joined_from_two_is_401(
    headers: dict[str, str], handler: Handler, seeded: dict[str, Any]
) -> None:
    event = load_event("http_get")
    event["headers"] |= headers

    response = invoke(handler, event)

    assert response["statusCode"] == 401
    assert response["headers"]["www-authenticate"] == 'Bearer realm="agent-memory"'
    problem = body_of(response)
    assert problem["type"] == "urn:agent-memory:problem:unauthenticated"
    assert "header, not several" in problem["detail"]


def test_a_sigv4_authorization_with_its_commas_still_hands_over_to_the_signed_key_header(
    handler: Handler,
    seeded: dict[str, Any],
) -> None:
    event = load_event("http_get")
    event["headers"] |= {"authorization": SIGV4.lower(), "x-agent-memory-authorization": f"Bearer {EVENT_API_KEY}"}

    response = invoke(handler, event)

    assert response["statusCode"] == 200, response
    assert body_of(response)["id"] == 1


@pytest.mark.parametrize("authorization", ["AWS4-HMAC-SHA256garbage", "AWS4-HMAC-SHA256", "AWS4-HMAC-SHA2560 x=y"])
def test_an_authorization_merely_starting_like_sigv4_is_not_taken_as_sigv4(
    authorization: str, handler: Handler, seeded: dict[str, Any]
) -> None:
    event = load_event("http_get")
    event["headers"] |= {"authorization": authorization, "x-agent-memory-authorization": f"Bearer {EVENT_API_KEY}"}

    response = invoke(handler, event)

    assert response["statusCode"] == 401
    assert response["headers"]["www-authenticate"] == 'Bearer realm="agent-memory"'
    assert "Bearer scheme" in body_of(response)["detail"]


def test_a_missing_table_answers_503_table_missing_logged_once_with_the_correlation_id(
    deployed_env: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(http_api.logger.registered_handler, "stream", sys.stdout)
    monkeypatch.setenv("TABLE_NAME", "no-such-table")
    handler = from_environment()
    event = load_event("http_get")

    response = invoke(handler, event)

    assert response["statusCode"] == 503
    assert response["headers"]["content-type"] == PROBLEM_JSON
    assert response["headers"]["retry-after"] == "1"
    assert body_of(response)["type"] == "urn:agent-memory:problem:table-missing"
    records = log_records(capsys.readouterr().out)
    (record,) = records
    assert record["level"] == "ERROR"
    assert record["message"] == "table no-such-table does not exist: answered 503 until it is created again"
    assert record["correlation_id"] == event["requestContext"]["requestId"]


def test_the_deployed_openapi_document_reports_the_projects_version_from_its_metadata(handler: Handler) -> None:
    event = load_event("http_healthz")
    event["rawPath"] = event["requestContext"]["http"]["path"] = "/openapi.json"
    response = invoke(handler, event)

    assert response["statusCode"] == 200
    assert json.loads(response["body"])["info"]["version"] == importlib.metadata.version("agent-memory")
