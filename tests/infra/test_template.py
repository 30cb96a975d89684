"""Checks on template.yaml that cfn-lint cannot make: it must match what the code reads, calls and queries.

The loader keeps each intrinsic's plain value: `!Ref X` reads as "X", `!GetAtt T.Arn` as "T.Arn", `!Sub "s"` as "s".
"""

from __future__ import annotations

import ast
import importlib
import inspect
import io
import json
import pkgutil
import re
import time
from pathlib import Path
from typing import Any

import pytest
from aws_lambda_powertools.shared import constants as powertools_constants
from botocore.awsrequest import AWSResponse
from botocore.exceptions import ClientError

from adapters import dynamodb
from adapters.bedrock import TITAN_DIMENSIONS
from adapters.dynamodb import INDEXES, LISTED_ATTRIBUTES, make_client
from adapters.dynamodb.changes import WINDOW_SECONDS
from adapters.dynamodb.codec import CHANGE_INDEX, DELETED_INDEX, UNEMBEDDED_INDEX
from handlers import bootstrap
from handlers.bootstrap.recall import RANKING_VARIABLES
from lambda_package import ROOT, closure
from local.template import TABLE_RESOURCE, load_template, table_definition

API_GATEWAY_INTEGRATION_LIMIT_S = 30
# Set by the Lambda runtime itself; a template may not set them.
RUNTIME_PROVIDED_ENV = {"AWS_REGION", "AWS_DEFAULT_REGION"}
# Only for local runs against another DynamoDB; setting it on Lambda would send the data elsewhere.
LOCAL_ONLY_ENV = {"AWS_ENDPOINT_URL_DYNAMODB"}
# Only for tests: a CA trusted for Client ID Metadata Documents, and loopback servers let through; never deployed.
TEST_ONLY_ENV = {"TEST_ONLY_CLIENT_METADATA_CA"}
# What each function must be told; TABLE_NAME's fallback would silently name a table the stack does not own.
# POWERTOOLS_METRICS_NAMESPACE: its fallback would mix the stages' metrics, and the alarms read the stage's own.
# DELETED_RETENTION_DAYS: its fallback would ignore the stack's DeletedRetentionDays.
# EMBEDDING_MODEL and EMBEDDING_DIMENSIONS: every function embeds (what is written, asked, or waits for a vector), and
# the fallbacks would embed with another model than the one the stack is granted.
EMBEDDING_ENV = {"EMBEDDING_MODEL", "EMBEDDING_DIMENSIONS"}
# Recall's ranking settings, each from a template parameter (empty: its documented default): the two doors rank, and
# without them a deployment's tuning would silently not apply.
RANKING_ENV = {*RANKING_VARIABLES.values(), "RECALL_SEMANTIC_FLOOR", "RECALL_RELATED_FLOOR"}
RANKING_PARAMETERS = {
    "RECALL_WEIGHTS": "RecallWeights",
    "RECALL_TYPE_PRIORS": "RecallTypePriors",
    "RECALL_RECENCY_HALF_LIFE_DAYS": "RecallRecencyHalfLifeDays",
    "RECALL_USE_HALF_LIFE_DAYS": "RecallUseHalfLifeDays",
    "RECALL_SEMANTIC_FLOOR": "RecallSemanticFloor",
    "RECALL_RELATED_FLOOR": "RecallRelatedFloor",
}
# The vector index recall asks (RecallVectorIndex), empty when it is off.
VECTOR_ENV = {"VECTOR_BUCKET", "VECTOR_INDEX"}
REQUIRED_ENV = {
    "HttpFunction": {
        "TABLE_NAME",
        "DELETED_RETENTION_DAYS",
        "POWERTOOLS_METRICS_NAMESPACE",
        *EMBEDDING_ENV,
        *RANKING_ENV,
        *VECTOR_ENV,
    },
    "McpFunction": {
        "TABLE_NAME",
        "MCP_ALLOWED_ORIGINS",
        "OAUTH_ENABLED",
        "OAUTH_ISSUER",
        "POWERTOOLS_METRICS_NAMESPACE",
        *EMBEDDING_ENV,
        *RANKING_ENV,
        *VECTOR_ENV,
    },
    "PurgeFunction": {"TABLE_NAME", "DELETED_RETENTION_DAYS", "POWERTOOLS_METRICS_NAMESPACE", *EMBEDDING_ENV},
    # The vector index's stream consumer (RecallVectorIndex): the index it writes, and the model whose vectors it keeps.
    "VectorSyncFunction": {*VECTOR_ENV, *EMBEDDING_ENV},
}
# The functions over the table (the vector index's consumer reads the stream, never the table, and embeds nothing).
TABLE_FUNCTIONS = ("HttpFunction", "McpFunction", "PurgeFunction")
EMBEDDING_MODEL_ARN = "arn:${AWS::Partition}:bedrock:${AWS::Region}::foundation-model/${EmbeddingModel}"
# The functions that answer requests (behind API Gateway or a function URL), not a schedule.
DOORS = ("HttpFunction", "McpFunction")
POWERTOOLS_SETTINGS = {"POWERTOOLS_SERVICE_NAME", "POWERTOOLS_LOG_LEVEL", "POWERTOOLS_METRICS_NAMESPACE"}
LAMBDA_ENTRIES = ("handlers.aws.http", "handlers.aws.mcp", "handlers.aws.purge")
TABLE_ARN = f"{TABLE_RESOURCE}.Arn"
INDEX_ARNS = f"${{{TABLE_ARN}}}/index/*"


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    return load_template()


def _functions(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each function's properties with the template's Globals applied (environment variables merged, as SAM does)."""
    globals_ = template["Globals"]["Function"]
    merged = {}
    for name, resource in template["Resources"].items():
        if resource["Type"] != "AWS::Serverless::Function":
            continue
        properties = {**globals_, **resource["Properties"]}
        properties["Environment"] = {
            "Variables": {
                **globals_.get("Environment", {}).get("Variables", {}),
                **resource["Properties"].get("Environment", {}).get("Variables", {}),
            }
        }
        merged[name] = properties
    return merged


def _resources_of_type(template: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {name: resource for name, resource in template["Resources"].items() if resource["Type"] == kind}


def _environment_names_bootstrap_reads() -> set[str]:
    """Every `env.get("NAME")` / `env["NAME"]` in bootstrap, the one package that reads the environment."""
    names = set()
    package = Path(inspect.getfile(bootstrap)).parent
    # runtime.py reads where a local serve keeps its state files: a machine's setting, never a function's.
    modules = [path for path in sorted(package.glob("*.py")) if path.name != "runtime.py"]
    nodes = (node for path in modules for node in ast.walk(ast.parse(path.read_text())))
    for node in nodes:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            argument = node.args[0] if node.args else None
        elif isinstance(node, ast.Subscript):
            argument = node.slice
        else:
            continue
        if isinstance(argument, ast.Constant) and isinstance(argument.value, str) and argument.value.isupper():
            names.add(argument.value)
    # Recall's ranking settings are read by name from this table (handlers.bootstrap.recall).
    return names | set(RANKING_VARIABLES.values())


# IAM has no TransactWriteItems action: it authorises each action of a transaction as that item call.
_TRANSACTION_ACTIONS = {
    "Put": "dynamodb:PutItem",
    "Update": "dynamodb:UpdateItem",
    "Delete": "dynamodb:DeleteItem",
    "ConditionCheck": "dynamodb:ConditionCheckItem",
}
# Nor a BatchExecuteStatement action: it authorises each PartiQL statement by its verb.
_PARTIQL_CALLS = {"dynamodb:BatchExecuteStatement", "dynamodb:ExecuteStatement"}
_PARTIQL_STATEMENT = re.compile(r'^(SELECT|INSERT|UPDATE|DELETE) .*"\{table\}"')


def _shipped_adapter_modules() -> list[str]:
    """The adapter's modules some function's artifact carries (its entrypoint's import closure): the command
    line's own (export, import, erase: namespaces and erasure; the vector index's backfill: indexed) ship in none, so
    no function is granted their calls."""
    shipped = set().union(*(closure(entry, ROOT / "src") for entry in LAMBDA_ENTRIES))
    modules = [module.name for module in pkgutil.iter_modules(dynamodb.__path__, f"{dynamodb.__name__}.")]
    own = {"namespaces", "erasure", "indexed"}
    assert set(modules) - shipped == {f"{dynamodb.__name__}.{name}" for name in own}
    return [module for module in modules if module in shipped]


def _dynamodb_actions_the_repository_calls() -> set[str]:
    """IAM action names of every `self._client.<operation>` the adapter's shipped modules call (the repositories
    and their listing; provisioning calls a bare `client`), and of every action kind (`{"Put": ...}`,
    `{"Update": ...}`) their transactions hold."""
    actions = set()
    for module in _shipped_adapter_modules():
        tree = ast.parse(inspect.getsource(importlib.import_module(module)))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Attribute)
                and node.value.attr == "_client"
                and isinstance(node.value.value, ast.Name)
                and node.value.value.id == "self"
            ):
                actions.add("dynamodb:" + "".join(part.title() for part in node.attr.split("_")))
            if isinstance(node, ast.Dict):
                keys = {key.value for key in node.keys if isinstance(key, ast.Constant) and isinstance(key.value, str)}
                actions |= {_TRANSACTION_ACTIONS[key] for key in keys & _TRANSACTION_ACTIONS.keys()}
            statement = (
                isinstance(node, ast.Constant) and isinstance(node.value, str) and _PARTIQL_STATEMENT.match(node.value)
            )
            if statement:
                actions.add("dynamodb:PartiQL" + statement.group(1).title())
    transactions = "dynamodb:TransactWriteItems"
    assert transactions in actions
    assert actions & _PARTIQL_CALLS, "the access stamps are PartiQL batches"
    return actions - {transactions} - _PARTIQL_CALLS


def _statements(properties: dict[str, Any], service: str = "dynamodb") -> list[dict[str, Any]]:
    """The function's inline policy statements granting actions of `service` (a conditional one aside:
    `_conditional_statements`)."""
    statements: list[dict[str, Any]] = []
    for policy in properties["Policies"]:
        assert set(policy) == {"Statement"}, f"only inline statements, no managed or template policies: {policy}"
        statements.extend(statement for statement in policy["Statement"] if isinstance(statement, dict))
    return [s for s in statements if all(a.startswith(f"{service}:") for a in _as_list(s["Action"]))]


def _conditional_statements(properties: dict[str, Any]) -> list[list[Any]]:
    """The function's statements under a condition (`!If [condition, statement, !Ref AWS::NoValue]`)."""
    return [
        statement
        for policy in properties["Policies"]
        for statement in policy["Statement"]
        if isinstance(statement, list)
    ]


def _as_list(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


# --- the table ---------------------------------------------------------------------------------------------------


def test_table_gsis_are_exactly_the_ones_the_repository_queries():
    definition = table_definition()
    declared = {
        gsi["IndexName"]: [(k["AttributeName"], k["KeyType"]) for k in gsi["KeySchema"]]
        for gsi in definition["GlobalSecondaryIndexes"]
    }
    expected = {index: [("pk", "HASH"), (attribute, "RANGE")] for index, attribute in INDEXES.values()}
    expected[DELETED_INDEX] = [("purge_shard", "HASH"), ("deleted_at", "RANGE")]
    expected[UNEMBEDDED_INDEX] = [("embed_shard", "HASH"), ("sk", "RANGE")]
    expected[CHANGE_INDEX] = [("pk", "HASH"), ("change_key", "RANGE")]
    assert declared == expected


@pytest.mark.parametrize("index", [DELETED_INDEX, UNEMBEDDED_INDEX, CHANGE_INDEX])
def test_the_purge_and_backfill_indexes_hold_only_keys(index: str):
    # The sweep needs only which memories are due, the backfill which digests wait: each reads the rest itself.
    (sparse,) = [gsi for gsi in table_definition()["GlobalSecondaryIndexes"] if gsi["IndexName"] == index]
    assert sparse["Projection"] == {"ProjectionType": "KEYS_ONLY"}


def test_indexes_project_what_listings_read_and_filter_on_and_none_holds_the_access_stamp():
    # A stamp writes the memory's access item alone: no index is keyed on the stamp or holds it, so it moves no
    # index entry (an order by last use reads the access items instead).
    wanted = {*LISTED_ATTRIBUTES, "folded"} - {"pk", "sk"}
    for gsi in table_definition()["GlobalSecondaryIndexes"]:
        if gsi["IndexName"] in (DELETED_INDEX, UNEMBEDDED_INDEX, CHANGE_INDEX):
            continue
        own_key = gsi["KeySchema"][1]["AttributeName"]
        assert gsi["Projection"]["ProjectionType"] == "INCLUDE"
        assert set(gsi["Projection"]["NonKeyAttributes"]) == wanted - {own_key}, gsi["IndexName"]
        assert "accessed_key" not in gsi["Projection"]["NonKeyAttributes"]
    keys = {key["AttributeName"] for gsi in table_definition()["GlobalSecondaryIndexes"] for key in gsi["KeySchema"]}
    assert "accessed_key" not in keys


def test_idempotency_records_expire_by_ttl(template: dict[str, Any]):
    table = template["Resources"][TABLE_RESOURCE]["Properties"]
    assert table["TimeToLiveSpecification"] == {"AttributeName": "expires_at", "Enabled": True}


def test_table_key_is_namespace_partition_and_record_sort_key():
    assert table_definition()["KeySchema"] == [
        {"AttributeName": "pk", "KeyType": "HASH"},
        {"AttributeName": "sk", "KeyType": "RANGE"},
    ]


def test_table_is_a_retained_on_demand_dynamodb_table(template: dict[str, Any]):
    table = template["Resources"][TABLE_RESOURCE]
    assert table["Type"] == "AWS::DynamoDB::Table"
    assert table["DeletionPolicy"] == "Retain"
    assert table["UpdateReplacePolicy"] == "Retain"
    assert table["Properties"]["BillingMode"] == "PAY_PER_REQUEST"
    assert "ProvisionedThroughput" not in table["Properties"]
    assert all("ProvisionedThroughput" not in gsi for gsi in table["Properties"]["GlobalSecondaryIndexes"])


def test_table_survives_operator_error_with_pitr_deletion_protection_and_encryption():
    definition = table_definition()
    assert definition["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    assert definition["DeletionProtectionEnabled"] is True
    assert definition["SSESpecification"]["SSEEnabled"] is True


def test_template_declares_the_memory_table_and_no_other_table(template: dict[str, Any]):
    tables = {
        name
        for name, resource in template["Resources"].items()
        if resource["Type"] in {"AWS::DynamoDB::Table", "AWS::Serverless::SimpleTable"}
    }
    assert tables == {TABLE_RESOURCE}


# --- the functions -----------------------------------------------------------------------------------------------


def test_the_template_has_the_http_the_mcp_the_purge_and_the_vector_index_function(template: dict[str, Any]):
    assert set(_functions(template)) == set(REQUIRED_ENV)


def test_the_purge_runs_every_hour_with_the_retention_parameter(template: dict[str, Any]):
    purge = _functions(template)["PurgeFunction"]
    assert purge["Events"]["Hourly"]["Type"] == "ScheduleV2"
    assert purge["Events"]["Hourly"]["Properties"]["ScheduleExpression"] == "rate(1 hour)"
    assert purge["Environment"]["Variables"]["DELETED_RETENTION_DAYS"] == "DeletedRetentionDays"
    assert template["Parameters"]["DeletedRetentionDays"]["Default"] == 30
    assert purge["Timeout"] <= 900


def test_the_purge_function_runs_one_sweep_at_a_time(template: dict[str, Any]):
    assert _functions(template)["PurgeFunction"]["ReservedConcurrentExecutions"] == 1


def test_every_function_handler_is_importable_and_callable(template: dict[str, Any]):
    for properties in _functions(template).values():
        module_name, _, attribute = properties["Handler"].rpartition(".")
        assert callable(getattr(importlib.import_module(module_name), attribute))


def test_every_function_runs_python313_on_arm64_from_the_source_folder(template: dict[str, Any]):
    for name, properties in _functions(template).items():
        assert properties["Runtime"] == "python3.13", name
        assert properties["Architectures"] == ["arm64"], name
        assert properties["CodeUri"] == "src/", name


# boto3's retry guide: standard mode backs off exponentially "by a base factor of 2 for a maximum backoff time of 20
# seconds", from 1 s for throttling errors (its largest base scale), with jitter below that bound.
def _documented_backoff_bound_s(retry: int) -> float:
    return float(min(2**retry, 20))


class _Throttled:
    """Answers every GetItem with a throttling error before it leaves the client, counting the attempts."""

    def __init__(self) -> None:
        self.attempts = 0

    def __call__(self, request: Any, **_: Any) -> AWSResponse:
        self.attempts += 1
        body = json.dumps({"__type": "com.amazonaws.dynamodb.v20120810#ThrottlingException", "message": "slow down"})
        raw = io.BytesIO(body.encode())
        raw.stream = lambda **_: iter([raw.getvalue()])  # type: ignore[attr-defined]
        return AWSResponse(request.url, 400, {"x-amzn-ErrorType": "ThrottlingException"}, raw)  # type: ignore[arg-type]


def test_every_timeout_is_under_api_gateways_limit_and_above_the_dynamodb_clients_worst_case(
    template: dict[str, Any], monkeypatch: pytest.MonkeyPatch
):
    sleeps: list[float] = []
    monkeypatch.setattr(time, "sleep", sleeps.append)  # the one botocore.endpoint sleeps with
    for _ in range(10):  # the backoff is jittered: every draw must stay within the documented bound
        client = make_client("http://127.0.0.1:9", "us-east-1")
        throttled = _Throttled()
        client.meta.events.register_first("before-send.dynamodb.GetItem", throttled)  # type: ignore[arg-type]
        sleeps.clear()
        with pytest.raises(ClientError, match="ThrottlingException"):
            client.get_item(TableName="t", Key={"pk": {"S": "x"}})
        attempts = client.meta.config.retries["total_max_attempts"]  # type: ignore[attr-defined]
        assert throttled.attempts == attempts == 3
        assert len(sleeps) == attempts - 1
        assert all(0 <= slept <= _documented_backoff_bound_s(i) for i, slept in enumerate(sleeps)), sleeps
    config: Any = client.meta.config  # botocore-stubs declare no option attributes on Config
    backoff = sum(_documented_backoff_bound_s(i) for i in range(attempts - 1))
    worst_case = attempts * (config.connect_timeout + config.read_timeout) + backoff
    assert worst_case == 24
    for name, properties in _functions(template).items():
        assert worst_case < properties["Timeout"], name
        if name in DOORS:
            assert properties["Timeout"] < API_GATEWAY_INTEGRATION_LIMIT_S, name
    # A change is timed when the call landing it is sent (each attempt of a transaction again) and lands within that
    # call at worst: a warm index reading changes from its mark less the window reads every one (adapters.dynamodb.
    # changes), with three fifths of the window left for the index's propagation and the clocks' skew.
    assert worst_case * 5 <= WINDOW_SECONDS * 2


def test_every_function_has_memory_between_512_mb_and_one_vcpu(template: dict[str, Any]):
    for name, properties in _functions(template).items():
        assert 512 <= properties["MemorySize"] <= 1769, name


def test_mcp_function_url_auth_is_none_or_aws_iam_and_defaults_to_none(template: dict[str, Any]):
    url = template["Resources"]["McpFunction"]["Properties"]["FunctionUrlConfig"]
    assert url["AuthType"] == "McpAuthType"
    parameter = template["Parameters"]["McpAuthType"]
    assert set(parameter["AllowedValues"]) == {"NONE", "AWS_IAM"}
    assert parameter["Default"] == "NONE"
    assert url["InvokeMode"] == "BUFFERED"


def test_the_mcp_function_url_leaves_cors_to_the_function(template: dict[str, Any]):
    # The function answers CORS for McpAllowedOrigins; a URL Cors block would add a second Access-Control-Allow-Origin.
    url = template["Resources"]["McpFunction"]["Properties"]["FunctionUrlConfig"]
    assert "Cors" not in url
    assert template["Resources"]["McpFunction"]["Properties"]["Environment"]["Variables"]["MCP_ALLOWED_ORIGINS"] == (
        "McpAllowedOrigins"
    )


def test_a_public_mcp_url_is_granted_both_public_invoke_permissions_only_when_auth_is_none(
    template: dict[str, Any],
):
    # SAM adds these grants itself only for a literal AuthType: NONE; with a parameter, a NONE URL would answer 403.
    permissions = _resources_of_type(template, "AWS::Lambda::Permission")
    granted = {
        (permission["Properties"]["Action"], permission.get("Condition"))
        for permission in permissions.values()
        if permission["Properties"]["FunctionName"] == "McpFunction.Alias"
        and permission["Properties"]["Principal"] == "*"
    }
    assert granted == {("lambda:InvokeFunctionUrl", "McpUrlIsPublic"), ("lambda:InvokeFunction", "McpUrlIsPublic")}
    assert template["Conditions"]["McpUrlIsPublic"] == ["McpAuthType", "NONE"]
    for permission in permissions.values():
        properties = permission["Properties"]
        if properties["Action"] == "lambda:InvokeFunctionUrl":
            assert properties["FunctionUrlAuthType"] == "NONE"
        elif properties["FunctionName"] == "McpFunction.Alias":
            assert properties["InvokedViaFunctionUrl"] is True


def test_the_doors_serve_through_an_alias_of_a_published_version_and_snapstart_is_a_parameter(
    template: dict[str, Any],
):
    # The API's integration and the function URL (SAM wires both to the alias) call a published version, with
    # SnapStart on or off; the purge, a scheduled job with nobody waiting on its cold start, has neither.
    functions = _functions(template)
    for name in ("HttpFunction", "McpFunction"):
        assert functions[name]["AutoPublishAlias"] == "live", name
        assert functions[name]["SnapStart"] == {"ApplyOn": "SnapStart"}, name
    assert "SnapStart" not in functions["PurgeFunction"]
    assert "AutoPublishAlias" not in functions["PurgeFunction"]
    parameter = template["Parameters"]["SnapStart"]
    assert parameter["AllowedValues"] == ["PublishedVersions", "None"]
    # The default docs/operations.md derives from the price: a snapshot costs more than the cold starts it saves.
    assert parameter["Default"] == "None"


def test_no_grant_names_the_mcp_function_unqualified_when_its_url_is_the_aliases(template: dict[str, Any]):
    permissions = _resources_of_type(template, "AWS::Lambda::Permission")
    assert {permission["Properties"]["FunctionName"] for permission in permissions.values()} == {"McpFunction.Alias"}


def test_only_the_mcp_function_has_a_function_url(template: dict[str, Any]):
    with_url = {name for name, properties in _functions(template).items() if "FunctionUrlConfig" in properties}
    assert with_url == {"McpFunction"}


def test_http_function_serves_every_path_and_method_of_the_http_api(template: dict[str, Any]):
    events = template["Resources"]["HttpFunction"]["Properties"]["Events"]
    assert events == {
        "Api": {"Type": "HttpApi", "Properties": {"ApiId": "HttpApi", "Path": "/{proxy+}", "Method": "ANY"}}
    }


def test_both_functions_reserve_concurrency_from_a_parameter_where_minus_one_reserves_none(template: dict[str, Any]):
    for function, parameter, condition in [
        ("HttpFunction", "HttpReservedConcurrency", "ReserveHttpConcurrency"),
        ("McpFunction", "McpReservedConcurrency", "ReserveMcpConcurrency"),
    ]:
        reserved = template["Resources"][function]["Properties"]["ReservedConcurrentExecutions"]
        assert reserved == [condition, parameter, "AWS::NoValue"], function
        assert template["Conditions"][condition] == [[parameter, -1]], function
        assert template["Parameters"][parameter]["Default"] > 0, function
        assert template["Parameters"][parameter]["MinValue"] == -1, function


def test_tracing_is_a_parameter_choosing_active_or_passthrough(template: dict[str, Any]):
    assert set(template["Parameters"]["Tracing"]["AllowedValues"]) == {"Active", "PassThrough"}
    for name, properties in _functions(template).items():
        assert properties["Tracing"] == "Tracing", name


# --- environment -------------------------------------------------------------------------------------------------


def test_bootstrap_reads_the_settings_this_file_classifies():
    # A setting added to bootstrap must be classified here (and set by the template when required).
    required = set().union(*REQUIRED_ENV.values())
    assert _environment_names_bootstrap_reads() == required | RUNTIME_PROVIDED_ENV | LOCAL_ONLY_ENV | TEST_ONLY_ENV


def test_every_function_is_given_every_setting_the_code_requires(template: dict[str, Any]):
    for name, properties in _functions(template).items():
        assert REQUIRED_ENV[name] <= set(properties["Environment"]["Variables"]), name


def test_every_environment_variable_the_template_sets_is_read_by_the_code_or_by_powertools(template: dict[str, Any]):
    powertools_reads = {
        value
        for value in vars(powertools_constants).values()
        if isinstance(value, str) and value.startswith("POWERTOOLS_")
    }
    assert powertools_reads >= POWERTOOLS_SETTINGS
    code_reads = _environment_names_bootstrap_reads() - RUNTIME_PROVIDED_ENV - LOCAL_ONLY_ENV - TEST_ONLY_ENV
    for name, properties in _functions(template).items():
        assert set(properties["Environment"]["Variables"]) <= code_reads | powertools_reads, name


def test_every_function_sets_powertools_service_log_level_and_metrics_namespace(template: dict[str, Any]):
    services = set()
    for name, properties in _functions(template).items():
        variables = properties["Environment"]["Variables"]
        assert set(variables) >= POWERTOOLS_SETTINGS, name
        assert variables["POWERTOOLS_LOG_LEVEL"] == "LogLevel", name
        services.add(variables["POWERTOOLS_SERVICE_NAME"])
    assert len(services) == len(REQUIRED_ENV), "each door logs under its own service name"


def test_every_function_reads_the_stacks_own_table(template: dict[str, Any]):
    for name, properties in _functions(template).items():
        assert properties["Environment"]["Variables"]["TABLE_NAME"] == TABLE_RESOURCE, name


# --- permissions -------------------------------------------------------------------------------------------------


def test_the_repository_calls_only_item_query_and_partiql_update_actions():
    # Guards the parse above: a new call (a Scan, a batch write) must be granted on purpose.
    assert _dynamodb_actions_the_repository_calls() == {
        "dynamodb:GetItem",
        "dynamodb:BatchGetItem",
        "dynamodb:PutItem",
        "dynamodb:DeleteItem",
        "dynamodb:BatchWriteItem",
        "dynamodb:UpdateItem",
        "dynamodb:Query",
        "dynamodb:PartiQLUpdate",
        "dynamodb:ConditionCheckItem",
    }


def test_functions_may_call_exactly_the_dynamodb_actions_the_repository_uses(template: dict[str, Any]):
    used = _dynamodb_actions_the_repository_calls()
    for name in TABLE_FUNCTIONS:
        properties = _functions(template)[name]
        granted = {action for statement in _statements(properties) for action in _as_list(statement["Action"])}
        assert granted == used, name


def test_every_function_may_invoke_the_embedding_model_and_nothing_else_beyond_its_table(template: dict[str, Any]):
    for name in TABLE_FUNCTIONS:
        properties = _functions(template)[name]
        statements = [s for service in ("dynamodb", "bedrock") for s in _statements(properties, service)]
        unconditional = [s for policy in properties["Policies"] for s in policy["Statement"] if isinstance(s, dict)]
        assert len(unconditional) == len(statements), name
        (bedrock,) = _statements(properties, "bedrock")
        assert (bedrock["Effect"], _as_list(bedrock["Action"])) == ("Allow", ["bedrock:InvokeModel"]), name
        assert _as_list(bedrock["Resource"]) == [EMBEDDING_MODEL_ARN], name
        variables = properties["Environment"]["Variables"]
        assert (variables["EMBEDDING_MODEL"], variables["EMBEDDING_DIMENSIONS"]) == (
            "EmbeddingModel",
            "EmbeddingDimensions",
        ), name


def test_the_embedding_parameters_default_to_the_settings_defaults(template: dict[str, Any]):
    parameters = template["Parameters"]
    settings = bootstrap.Settings()
    assert parameters["EmbeddingModel"]["Default"] == settings.embedding_model
    assert parameters["EmbeddingDimensions"]["Default"] == settings.embedding_dimensions
    assert parameters["EmbeddingDimensions"]["AllowedValues"] == list(TITAN_DIMENSIONS)


def test_the_ranking_parameters_default_to_empty_which_keeps_the_settings_defaults(template: dict[str, Any]):
    parameters = template["Parameters"]
    empty = {variable: parameters[parameter]["Default"] for variable, parameter in RANKING_PARAMETERS.items()}

    settings = bootstrap.Settings.from_env(empty)

    assert set(empty.values()) == {""}
    assert (settings.ranking, settings.semantic_floor, settings.related_floor) == (
        bootstrap.Settings().ranking,
        None,
        None,
    )
    for name in DOORS:
        variables = _functions(template)[name]["Environment"]["Variables"]
        assert {variable: variables[variable] for variable in RANKING_ENV} == RANKING_PARAMETERS, name


@pytest.mark.parametrize(
    ("parameter", "value", "accepted"),
    [
        ("RecallRecencyHalfLifeDays", "30", True),
        ("RecallRecencyHalfLifeDays", "7.5", True),
        ("RecallUseHalfLifeDays", "-1", False),
        ("RecallUseHalfLifeDays", "ninety", False),
        ("RecallSemanticFloor", "0.25", True),
        ("RecallSemanticFloor", "-0.1", True),
        ("RecallSemanticFloor", "high", False),
    ],
)
def test_the_ranking_number_parameters_take_only_numbers(
    template: dict[str, Any], parameter: str, value: str, accepted: bool
):
    assert bool(re.fullmatch(template["Parameters"][parameter]["AllowedPattern"], value)) == accepted


def test_function_policies_name_only_this_table_and_query_only_its_indexes(template: dict[str, Any]):
    for name, properties in _functions(template).items():
        for statement in _statements(properties):
            assert statement["Effect"] == "Allow", name
            resources = _as_list(statement["Resource"])
            assert "*" not in "".join(resources).replace("/index/*", ""), (name, resources)
            assert set(resources) <= {TABLE_ARN, INDEX_ARNS}, (name, resources)
            if INDEX_ARNS in resources:
                assert _as_list(statement["Action"]) == ["dynamodb:Query"], name


# --- the HTTP API, logs and outputs ------------------------------------------------------------------------------


def test_http_api_throttles_every_route_from_parameters(template: dict[str, Any]):
    routes = template["Resources"]["HttpApi"]["Properties"]["DefaultRouteSettings"]
    assert routes == {"ThrottlingRateLimit": "ThrottlingRateLimit", "ThrottlingBurstLimit": "ThrottlingBurstLimit"}
    parameters = template["Parameters"]
    assert 0 < parameters["ThrottlingRateLimit"]["Default"] <= parameters["ThrottlingBurstLimit"]["Default"]


def test_http_api_writes_access_logs_without_headers_to_its_log_group(template: dict[str, Any]):
    settings = template["Resources"]["HttpApi"]["Properties"]["AccessLogSettings"]
    assert settings["DestinationArn"] == "ApiAccessLogGroup.Arn"
    assert "$context.requestId" in settings["Format"]
    assert "header" not in settings["Format"].lower()


def test_every_log_group_keeps_logs_for_the_retention_parameter(template: dict[str, Any]):
    groups = _resources_of_type(template, "AWS::Logs::LogGroup")
    assert set(groups) == {
        "ApiAccessLogGroup",
        "HttpFunctionLogGroup",
        "McpFunctionLogGroup",
        "PurgeFunctionLogGroup",
        "VectorSyncFunctionLogGroup",
    }
    for name, group in groups.items():
        assert group["Properties"]["RetentionInDays"] == "LogRetentionDays", name
    assert (
        template["Parameters"]["LogRetentionDays"]["Default"]
        in template["Parameters"]["LogRetentionDays"]["AllowedValues"]
    )


def test_every_function_logs_to_its_own_log_group_named_after_it(template: dict[str, Any]):
    for name, properties in _functions(template).items():
        group = template["Resources"][properties["LoggingConfig"]["LogGroup"]]
        assert group["Properties"]["LogGroupName"] == f"/aws/lambda/{properties['FunctionName']}", name


def test_stage_names_every_function_and_log_group(template: dict[str, Any]):
    for name, properties in _functions(template).items():
        assert "${Stage}" in properties["FunctionName"], name
        assert properties["Tags"]["stage"] == "Stage", name
    for name, group in _resources_of_type(template, "AWS::Logs::LogGroup").items():
        assert "${Stage}" in group["Properties"]["LogGroupName"], name


def test_outputs_give_the_api_url_the_mcp_url_and_the_table_name(template: dict[str, Any]):
    outputs = template["Outputs"]
    assert set(outputs) == {"ApiUrl", "McpUrl", "TableName", "DashboardUrl"}
    assert outputs["ApiUrl"]["Value"].startswith("https://${HttpApi}.execute-api.")
    assert outputs["McpUrl"]["Value"] == "${McpFunctionUrl.FunctionUrl}mcp"
    assert outputs["TableName"]["Value"] == TABLE_RESOURCE


def test_no_function_is_given_a_setting_that_turns_authentication_off(template: dict[str, Any]):
    for properties in [template["Globals"]["Function"], *_functions(template).values()]:
        variables = properties.get("Environment", {}).get("Variables", {})
        # OAUTH_* add a way to authenticate (tokens beside API keys); none removes the need to.
        assert not [name for name in variables if "AUTH" in name.upper() and not name.startswith("OAUTH_")]


# --- recall's vector index (RecallVectorIndex) --------------------------------------------------------------------


VECTOR_RESOURCES = {"RecallVectorBucket", "RecallVectors", "VectorSyncFunction", "VectorSyncFunctionLogGroup"}


def test_the_vector_index_is_off_by_default_and_all_of_it_comes_only_with_it(template: dict[str, Any]):
    assert template["Parameters"]["RecallVectorIndex"]["Default"] == "Disabled"
    assert template["Conditions"]["VectorIndexEnabled"] == ["RecallVectorIndex", "Enabled"]
    conditioned = {
        name for name, resource in template["Resources"].items() if resource.get("Condition") == "VectorIndexEnabled"
    }
    assert conditioned == VECTOR_RESOURCES
    stream = template["Resources"][TABLE_RESOURCE]["Properties"]["StreamSpecification"]
    assert stream == ["VectorIndexEnabled", {"StreamViewType": "NEW_IMAGE"}, "AWS::NoValue"]


def test_the_vector_index_has_the_models_dimensions_cosine_and_the_name_the_consumer_is_given(template: dict[str, Any]):
    index = template["Resources"]["RecallVectors"]["Properties"]
    assert (index["DataType"], index["Dimension"], index["DistanceMetric"]) == (
        "float32",
        "EmbeddingDimensions",
        "cosine",
    )
    assert "MetadataConfiguration" not in index  # every metadata key filterable: namespace, status, memory_type, tags
    variables = _functions(template)["VectorSyncFunction"]["Environment"]["Variables"]
    bucket = template["Resources"]["RecallVectorBucket"]["Properties"]["VectorBucketName"]
    assert (variables["VECTOR_BUCKET"], variables["VECTOR_INDEX"]) == (bucket, index["IndexName"])


def test_the_consumer_may_only_write_and_delete_the_one_vector_index(template: dict[str, Any]):
    consumer = _functions(template)["VectorSyncFunction"]
    (statement,) = [s for policy in consumer["Policies"] for s in policy["Statement"]]
    assert statement["Effect"] == "Allow"
    assert sorted(_as_list(statement["Action"])) == ["s3vectors:DeleteVectors", "s3vectors:PutVectors"]
    assert statement["Resource"] == "RecallVectors.IndexArn"


def test_the_consumer_reads_only_digest_records_of_the_tables_stream_and_reports_failures_per_record(
    template: dict[str, Any],
):
    (event,) = _functions(template)["VectorSyncFunction"]["Events"].values()
    properties = event["Properties"]
    assert (event["Type"], properties["Stream"]) == ("DynamoDB", f"{TABLE_RESOURCE}.StreamArn")
    assert properties["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    (pattern,) = [json.loads(found["Pattern"]) for found in properties["FilterCriteria"]["Filters"]]
    assert pattern == {"dynamodb": {"Keys": {"sk": {"S": [{"prefix": "RCL#"}]}}}}
    assert properties["BatchSize"] <= 500 * 2  # two calls at most a batch: puts and deletes take 500 a call


def test_the_doors_may_only_query_the_one_vector_index_and_only_with_it_on(template: dict[str, Any]):
    for name in DOORS:
        properties = _functions(template)[name]
        ((condition, statement, otherwise),) = _conditional_statements(properties)
        assert (condition, otherwise) == ("VectorIndexEnabled", "AWS::NoValue"), name
        assert statement["Effect"] == "Allow", name
        assert sorted(_as_list(statement["Action"])) == ["s3vectors:GetVectors", "s3vectors:QueryVectors"], name
        assert statement["Resource"] == "RecallVectors.IndexArn", name
        variables = properties["Environment"]["Variables"]
        consumer = _functions(template)["VectorSyncFunction"]["Environment"]["Variables"]
        assert variables["VECTOR_BUCKET"] == ["VectorIndexEnabled", consumer["VECTOR_BUCKET"], ""], name
        assert variables["VECTOR_INDEX"] == ["VectorIndexEnabled", consumer["VECTOR_INDEX"], ""], name
    assert not _conditional_statements(_functions(template)["PurgeFunction"])
