"""The metrics each deployed function emits: one EMF line per invocation on stdout, per door and operation, read
back here as CloudWatch would read it (the events in events/, fed to the entrypoints' own handlers)."""

from __future__ import annotations

import contextvars
import json
from typing import Any
from urllib.parse import parse_qsl

import pytest
from botocore.stub import Stubber

from adapters.dynamodb import DynamoDBKeyRepository, make_client
from adapters.dynamodb.usage import CapacityTally, Consumed
from core.contract import RetrievalQuery
from handlers import bootstrap
from handlers.metrics import RequestMetrics, http_operation, is_tool_error, mcp_operation, rows_served
from tests.conftest import Engine, Handler, LambdaFunctions, store_event_key
from tests.handlers.aws.test_http_handler import CONTEXT
from tests.handlers.aws.test_http_handler import load_event as load_http_event
from tests.handlers.conftest import LambdaWorker, load_event

METRICS = {"Requests", "Latency", "ReadUnits", "WriteUnits", "RowsReturned", "RowsStamped", "Status4xx", "Status5xx"}


def emitted(out: str) -> list[dict[str, Any]]:
    """Every EMF blob printed, as {dimension or metric name: value} with the declared units alongside."""
    blobs = []
    for line in out.splitlines():
        if '"_aws"' not in line:
            continue
        blob = json.loads(line)
        (declared,) = blob["_aws"]["CloudWatchMetrics"]
        blob["units"] = {metric["Name"]: metric["Unit"] for metric in declared["Metrics"]}
        blob["dimensions"] = declared["Dimensions"]
        blobs.append(blob)
    return blobs


@pytest.mark.parametrize(
    ("event", "operation", "status", "rows"),
    [
        ("http_create", "create", 201, 0),
        ("http_create_invalid", "create", 422, 0),
        ("http_get", "get", 200, 1),
        ("http_get_missing", "get", 404, 0),
        ("http_get_unauthenticated", "get", 401, 0),
        ("http_patch", "update", 200, 0),
        ("http_search", "search", 200, 1),
        ("http_search_invalid", "search", 422, 0),
        ("http_delete", "delete", 204, 0),
        ("http_healthz", "health", 200, 0),
    ],
)
def test_each_http_request_emits_one_line_of_metrics_for_its_operation(
    lambda_functions: LambdaFunctions,
    event: str,
    operation: str,
    status: int,
    rows: int,
    capsys: pytest.CaptureFixture[str],
) -> None:
    if event not in ("http_create", "http_create_invalid", "http_get_unauthenticated", "http_healthz"):
        assert lambda_functions.http(load_http_event("http_create"), CONTEXT)["statusCode"] == 201  # memory 1
    capsys.readouterr()

    response = lambda_functions.http(load_http_event(event), CONTEXT)

    assert response["statusCode"] == status
    (blob,) = emitted(capsys.readouterr().out)
    # Per operation, and (for alarms) the door's totals.
    assert blob["dimensions"] == [["door", "operation"], ["door"]]
    assert (blob["door"], blob["operation"]) == ("http", operation)
    assert blob.keys() >= METRICS
    assert blob["Requests"] == [1.0]
    assert blob["units"]["Latency"] == "Milliseconds"
    assert blob["Latency"][0] > 0
    assert blob["RowsReturned"] == [float(rows)]
    assert blob["RowsStamped"] == [float(rows)]
    assert (blob["Status4xx"], blob["Status5xx"]) == ([float(400 <= status < 500)], [0.0])


@pytest.mark.parametrize(
    ("event", "operation", "status", "tool_error"),
    [
        ("mcp_initialize.json", "initialize", 200, 0),
        ("mcp_tools_list.json", "tools/list", 200, 0),
        ("mcp_tools_call_create.json", "create_memory", 200, 0),
        ("mcp_tools_call_search.json", "search_memories", 200, 0),
        ("mcp_tools_call_invalid.json", "search_memories", 200, 1),
        ("mcp_tools_list_unauthenticated.json", "tools/list", 401, 0),
        ("mcp_get.json", "other", 405, 0),
    ],
)
def test_each_mcp_request_emits_one_line_of_metrics_for_its_tool_or_method(
    lambda_functions: LambdaFunctions,
    event: str,
    operation: str,
    status: int,
    tool_error: int,
    lambda_worker: LambdaWorker,
    capsys: pytest.CaptureFixture[str],
) -> None:
    capsys.readouterr()

    response = lambda_worker.invoke(lambda_functions.mcp, load_event(event))

    assert response["statusCode"] == status
    (blob,) = emitted(capsys.readouterr().out)
    assert (blob["door"], blob["operation"]) == ("mcp", operation)
    assert METRICS | {"ToolErrors"} <= blob.keys()
    assert blob["ToolErrors"] == [float(tool_error)]
    assert blob["Status4xx"] == [float(400 <= status < 500)]


def test_a_search_reports_the_rows_it_returned_and_stamped(
    lambda_functions: LambdaFunctions,
    lambda_services: bootstrap.Services,
    lambda_worker: LambdaWorker,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for _ in range(3):
        lambda_worker.invoke(lambda_functions.mcp, load_event("mcp_tools_call_create.json"))
    capsys.readouterr()

    lambda_worker.invoke(lambda_functions.mcp, load_event("mcp_tools_call_search.json"))

    (blob,) = emitted(capsys.readouterr().out)
    arguments = json.loads(load_event("mcp_tools_call_search.json")["body"])["params"]["arguments"]
    found = lambda_services.memories.search("default", RetrievalQuery.parse(arguments)).items
    assert blob["RowsReturned"] == blob["RowsStamped"] == [float(len(found))]
    assert len(found) == 3


def test_on_dynamodb_the_units_each_request_consumed_are_reported(
    ddb_local_engine: Engine,
    dynamodb_local_endpoint: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    table = ddb_local_engine.new_table()
    monkeypatch.setenv("TABLE_NAME", table)
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", dynamodb_local_endpoint)
    assert ddb_local_engine.client is not None
    store_event_key(DynamoDBKeyRepository(ddb_local_engine.client, table))
    handler = LambdaFunctions.over(bootstrap.from_environment()).http
    capsys.readouterr()
    handler(load_http_event("http_create"), CONTEXT)
    handler(load_http_event("http_search"), CONTEXT)

    create, search = emitted(capsys.readouterr().out)
    assert create["WriteUnits"][0] > 0  # the memory, its totals (a transaction), and the key lookup's read
    assert create["ReadUnits"][0] > 0
    assert search["ReadUnits"][0] > 0
    # The search's stamp is a PartiQL batch, whose consumed capacity DynamoDB Local does not report (AWS does:
    # test_a_tally_adds_the_capacity_of_every_response_shape).


def test_a_tally_adds_the_capacity_of_every_response_shape() -> None:
    client: Any = make_client("http://127.0.0.1:9", "us-east-1")  # never reached: the stubber answers
    tally = CapacityTally()
    tally.watch(client)
    key = {"pk": {"S": "NS#a"}, "sk": {"S": "MEM#0000000001"}}
    statement = {"Statement": 'UPDATE "t" SET a = ? WHERE pk = ? AND sk = ?', "Parameters": [{"S": "x"}, *key.values()]}
    check = [{"ConditionCheck": {"TableName": "t", "Key": key, "ConditionExpression": "attribute_exists(pk)"}}]
    total = {"ReturnConsumedCapacity": "TOTAL"}
    stubs = Stubber(client)
    stubs.add_response(
        "get_item", {"ConsumedCapacity": {"CapacityUnits": 0.5}}, {"TableName": "t", "Key": key, **total}
    )
    two = {"ConsumedCapacity": [{"CapacityUnits": 2.0}]}
    stubs.add_response("batch_execute_statement", {"Responses": [{}], **two}, {"Statements": [statement], **total})
    four_and_two = {"ConsumedCapacity": [{"CapacityUnits": 4.0}, {"CapacityUnits": 2.0}]}
    stubs.add_response("transact_write_items", four_and_two, {"TransactItems": check, **total})
    stubs.add_response("describe_table", {}, {"TableName": "t"})  # takes no ReturnConsumedCapacity: none is asked
    with stubs:
        client.get_item(TableName="t", Key=key)
        client.batch_execute_statement(Statements=[statement])
        client.transact_write_items(TransactItems=check)
        client.describe_table(TableName="t")

    assert tally.take() == Consumed(read_units=0.5, write_units=8.0)
    assert tally.take() == Consumed()


@pytest.mark.parametrize(
    ("method", "path", "operation"),
    [
        ("POST", "/memories", "create"),
        ("GET", "/memories", "search"),
        ("GET", "/memories/7", "get"),
        ("PATCH", "/memories/7", "update"),
        ("DELETE", "/memories/7", "delete"),
        ("PUT", "/memories/7", "other"),
        ("GET", "/memories/7/x", "other"),
        ("GET", "/openapi.json", "openapi"),
        ("POST", "/openapi.json", "other"),
        ("GET", "/healthz", "health"),
        ("GET", "/memories/7/history", "history"),
        ("GET", "/memories/7/history?limit=5", "history"),
        ("POST", "/memories/7/history", "other"),
        ("POST", "/memories/7/restore", "restore"),
        ("GET", "/memories/7/restore", "other"),
        ("GET", "/memories/7/restore/x", "other"),
        ("DELETE", "/memories/7?purge=true", "purge"),
        ("DELETE", "/memories/7?purge=false", "delete"),
        ("DELETE", "/memories/7?purge=TRUE", "delete"),
        ("GET", "/memories/7?purge=true", "get"),
        ("GET", "/memories?q=x&purge=true", "search"),
        ("GET", "/key", "key"),
        ("DELETE", "/key", "other"),
        ("GET", "/changes?since=2026-12-01T00:00:00Z", "changes"),
        ("POST", "/changes", "other"),
        ("GET", "/console", "console"),
        ("GET", "/console/", "console"),
        ("HEAD", "/console/console.css", "console"),
        ("POST", "/console/", "other"),
        ("GET", "/consoles", "other"),
        ("GET", "/token", "other"),
        ("GET", "/recall", "recall"),
        ("POST", "/recall", "other"),
        ("GET", "/recall/7", "other"),
        ("", "", "other"),
    ],
)
def test_http_operations_are_a_small_fixed_set(method: str, path: str, operation: str) -> None:
    assert http_operation(method, path) == operation


@pytest.mark.parametrize(
    ("body", "operation"),
    [
        ('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_memory","arguments":{}}}', "get_memory"),
        (
            '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"recall_memories","arguments":{}}}',
            "recall_memories",
        ),
        ('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x' + "y" * 300 + '"}}', "unknown_tool"),
        ('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[]}', "unknown_tool"),
        ('{"jsonrpc":"2.0","id":1,"method":"resources/list"}', "other"),
        ('[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]', "other"),
        ("not json", "other"),
        (None, "other"),
    ],
)
def test_mcp_operations_are_a_small_fixed_set_whatever_a_client_names(body: str | None, operation: str) -> None:
    assert mcp_operation(body) == operation


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ('{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}}', True),
        ('{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":false}}', False),
        ('{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"\\"isError\\""}]}}', False),
        ('{"isError": true', False),
        (None, False),
    ],
)
def test_a_tool_error_is_told_from_the_response_body(body: str | None, error: bool) -> None:
    assert is_tool_error(body) is error


def http_request(method: str, path: str, query: str = "", headers: dict[str, str] | None = None) -> dict[str, Any]:
    """The GET event re-aimed at another route, as API Gateway would send that request."""
    event = load_http_event("http_get")
    event["rawPath"] = event["requestContext"]["http"]["path"] = path
    event["requestContext"]["http"]["method"] = method
    event["rawQueryString"] = query
    if query:
        event["queryStringParameters"] = dict(parse_qsl(query))
    event["headers"].update(headers or {})
    return event


def served(handler: Handler, event: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    """The status of the HTTP function's answer to `event`, and the one EMF line it printed for it."""
    capsys.readouterr()
    response = handler(event, CONTEXT)
    (blob,) = emitted(capsys.readouterr().out)
    return response["statusCode"], blob


@pytest.fixture
def deleted_memory(lambda_functions: LambdaFunctions) -> int:
    """Memory 1, created and deleted through the HTTP function (so it has a history and can be restored or purged)."""
    assert lambda_functions.http(load_http_event("http_create"), CONTEXT)["statusCode"] == 201
    assert lambda_functions.http(load_http_event("http_delete"), CONTEXT)["statusCode"] == 204
    return 1


@pytest.mark.parametrize(
    ("method", "path", "query", "operation", "status"),
    [
        ("GET", "/memories/1/history", "", "history", 200),
        ("POST", "/memories/1/restore", "", "restore", 200),
        ("DELETE", "/memories/1", "purge=true", "purge", 204),
        ("DELETE", "/memories/1", "purge=false", "delete", 404),
        ("GET", "/console/", "", "console", 200),
        ("GET", "/console/console.js", "", "console", 200),
        ("GET", "/key", "", "key", 200),
        ("GET", "/changes", "", "changes", 200),
        ("GET", "/openapi.json", "", "openapi", 200),
    ],
)
def test_history_restore_purge_console_key_and_openapi_each_have_their_own_operation(
    lambda_functions: LambdaFunctions,
    deleted_memory: int,
    method: str,
    path: str,
    query: str,
    operation: str,
    status: int,
    capsys: pytest.CaptureFixture[str],
) -> None:
    answered, blob = served(lambda_functions.http, http_request(method, path, query), capsys)

    assert answered == status
    assert (blob["door"], blob["operation"]) == ("http", operation)


@pytest.mark.parametrize(
    ("path", "query", "headers", "returned", "stamped"),
    [
        ("/memories", "", {}, 2, 2),
        ("/memories", "", {"Prefer": "no-stamp"}, 2, 0),
        ("/memories/1", "", {}, 1, 1),
        ("/memories/1", "", {"Prefer": "no-stamp"}, 1, 0),
        ("/memories/1/history", "", {}, 1, 0),
        ("/recall", "query=coffee", {}, 2, 2),
        ("/recall", "query=coffee", {"Prefer": "no-stamp"}, 2, 0),
    ],
)
def test_rows_stamped_counts_only_the_rows_a_request_stamped(
    lambda_functions: LambdaFunctions,
    lambda_services: bootstrap.Services,
    path: str,
    query: str,
    headers: dict[str, str],
    returned: int,
    stamped: int,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for _ in range(2):
        assert lambda_functions.http(load_http_event("http_create"), CONTEXT)["statusCode"] == 201
    before = lambda_services.memories.get("default", 1, stamp=False).last_accessed_at

    status, blob = served(lambda_functions.http, http_request("GET", path, query, headers=headers), capsys)

    assert status == 200
    assert (blob["RowsReturned"], blob["RowsStamped"]) == ([float(returned)], [float(stamped)])
    after = lambda_services.memories.get("default", 1, stamp=False).last_accessed_at
    assert (after != before) is bool(stamped)  # the figure says what happened to the stored stamp


def test_a_request_that_fails_unexpectedly_counts_as_a_5xx(
    lambda_functions: LambdaFunctions,
    lambda_services: bootstrap.Services,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    def broken(*_: object, **__: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(lambda_services.memories, "search", broken)

    status, blob = served(lambda_functions.http, load_http_event("http_search"), capsys)

    assert status == 500
    assert (blob["operation"], blob["Status5xx"], blob["Status4xx"]) == ("search", [1.0], [0.0])
    assert (blob["RowsReturned"], blob["RowsStamped"]) == ([0.0], [0.0])


@pytest.mark.parametrize(
    ("path", "operation"),
    [
        ("/.well-known/oauth-authorization-server", "oauth"),
        ("/.well-known/oauth-protected-resource/mcp", "oauth"),
        ("/token", "oauth"),
        ("/elsewhere", "other"),
    ],
)
def test_oauth_requests_to_the_mcp_function_are_their_own_operation(
    lambda_functions: LambdaFunctions,
    path: str,
    operation: str,
    lambda_worker: LambdaWorker,
    capsys: pytest.CaptureFixture[str],
) -> None:
    event = load_event("mcp_get.json")
    event["rawPath"] = event["requestContext"]["http"]["path"] = path
    capsys.readouterr()

    lambda_worker.invoke(lambda_functions.mcp, event)

    (blob,) = emitted(capsys.readouterr().out)
    assert (blob["door"], blob["operation"]) == ("mcp", operation)


def test_each_door_counts_the_rows_of_its_own_request_while_the_other_serves_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    http, mcp = RequestMetrics("http", CapacityTally(), "test"), RequestMetrics("mcp", CapacityTally(), "test")
    # Two requests in flight at once in one process (as in one asyncio loop or two threads), each in its own context.
    in_http, in_mcp = contextvars.copy_context(), contextvars.copy_context()
    capsys.readouterr()

    searching = in_http.run(http.start)
    in_http.run(rows_served, 3, stamped=False)
    getting = in_mcp.run(mcp.start)
    in_mcp.run(rows_served, 1, stamped=True)
    in_mcp.run(mcp.finish, getting, "get_memory", 200)
    in_http.run(http.finish, searching, "search", 200)

    got, searched = emitted(capsys.readouterr().out)
    assert (got["door"], got["RowsReturned"], got["RowsStamped"]) == ("mcp", [1.0], [1.0])
    assert (searched["door"], searched["RowsReturned"], searched["RowsStamped"]) == ("http", [3.0], [0.0])


def test_rows_noted_outside_a_measured_request_count_nowhere(capsys: pytest.CaptureFixture[str]) -> None:
    metrics = RequestMetrics("http", CapacityTally(), "test")
    rows_served(5, stamped=True)  # as `serve` does: it measures nothing
    capsys.readouterr()

    metrics.finish(metrics.start(), "search", 200)

    (blob,) = emitted(capsys.readouterr().out)
    assert (blob["RowsReturned"], blob["RowsStamped"]) == ([0.0], [0.0])
