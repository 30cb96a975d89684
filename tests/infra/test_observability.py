"""What a deployed stack reports and watches (template.yaml): the alarms of issue 13, their optional SNS topic, and a
dashboard of the functions' own metrics (handlers/metrics.py) and their AWS resources'. The loader keeps each
intrinsic's plain value (`!Ref X` reads "X", `!Sub "s"` reads "s", `!If [c, a, b]` reads [c, a, b])."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from local.template import load_template

ALARMS = {
    "HttpApi5xxAlarm": ("AWS/ApiGateway", {"5xx", "Count"}),
    "Mcp5xxAlarm": ("agent-memory/${Stage}", {"Status5xx", "Requests"}),
    "HttpFunctionThrottlesAlarm": ("AWS/Lambda", {"Throttles"}),
    "McpFunctionThrottlesAlarm": ("AWS/Lambda", {"Throttles"}),
    "TableThrottlesAlarm": ("AWS/DynamoDB", {"ReadThrottleEvents", "WriteThrottleEvents"}),
    "TableSystemErrorsAlarm": ("AWS/DynamoDB", {"SystemErrors"}),
    # Issue 14: a failing purge breaks the retention guarantee.
    "PurgeFunctionErrorsAlarm": ("AWS/Lambda", {"Errors"}),
}


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    return load_template()


def _alarms(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        name: resource["Properties"]
        for name, resource in template["Resources"].items()
        if resource["Type"] == "AWS::CloudWatch::Alarm"
    }


def _watched(alarm: dict[str, Any]) -> tuple[set[str], set[str]]:
    """The namespaces and metric names an alarm reads, alone or in metric math."""
    if "MetricName" in alarm:
        return {alarm["Namespace"]}, {alarm["MetricName"]}
    stats = [query["MetricStat"]["Metric"] for query in alarm["Metrics"] if "MetricStat" in query]
    return {m["Namespace"] for m in stats}, {m["MetricName"] for m in stats}


def test_the_stack_has_exactly_the_alarms_the_issues_ask_for(template: dict[str, Any]) -> None:
    alarms = _alarms(template)

    assert {name: _watched(alarm) for name, alarm in alarms.items()} == {
        name: ({namespace}, metrics) for name, (namespace, metrics) in ALARMS.items()
    }


def test_every_alarm_notifies_the_topic_only_when_one_is_given(template: dict[str, Any]) -> None:
    parameter = template["Parameters"]["AlarmTopicArn"]
    assert parameter["Default"] == ""
    assert template["Conditions"]["NotifiesAlarms"] == [["AlarmTopicArn", ""]]  # !Not [!Equals [...]]
    for name, alarm in _alarms(template).items():
        for actions in ("AlarmActions", "OKActions"):
            assert alarm[actions] == ["NotifiesAlarms", ["AlarmTopicArn"], "AWS::NoValue"], (name, actions)
        assert alarm["TreatMissingData"] == "notBreaching", name  # no traffic is no alarm
        assert alarm["AlarmName"].startswith("agent-memory-${Stage}-"), name


@pytest.mark.parametrize(
    ("value", "admitted"),
    [
        ("", True),
        ("arn:aws:sns:eu-west-1:123456789012:ops-alerts", True),
        ("arn:aws:sns:us-east-1:123456789012:ops.fifo", True),
        ("arn:aws-us-gov:sns:us-gov-west-1:123456789012:alerts", True),
        ("ops-alerts", False),
        ("arn:aws:sqs:eu-west-1:123456789012:queue", False),
    ],
)
def test_the_topic_parameter_admits_an_sns_topic_arn_or_nothing(
    template: dict[str, Any], value: str, admitted: bool
) -> None:
    pattern = template["Parameters"]["AlarmTopicArn"]["AllowedPattern"]

    assert bool(re.fullmatch(pattern, value)) is admitted


def test_the_rate_alarms_divide_5xx_by_requests_and_ignore_a_trickle(template: dict[str, Any]) -> None:
    for name in ("HttpApi5xxAlarm", "Mcp5xxAlarm"):
        alarm = _alarms(template)[name]
        (expression,) = [query["Expression"] for query in alarm["Metrics"] if "Expression" in query]
        assert expression == "IF(requests >= 5, 100 * errors / requests, 0)", name
        assert (alarm["ComparisonOperator"], alarm["Threshold"]) == ("GreaterThanThreshold", 5), name


def test_the_mcp_alarm_reads_the_doors_totals_as_the_function_publishes_them(template: dict[str, Any]) -> None:
    mcp = template["Resources"]["McpFunction"]["Properties"]["Environment"]["Variables"]
    namespace = template["Globals"]["Function"]["Environment"]["Variables"]["POWERTOOLS_METRICS_NAMESPACE"]
    for query in _alarms(template)["Mcp5xxAlarm"]["Metrics"]:
        if "MetricStat" not in query:
            continue
        metric = query["MetricStat"]["Metric"]
        assert metric["Namespace"] == namespace
        # handlers.metrics publishes [door, operation(, service)] and [door(, service)]; the alarm reads the latter.
        assert metric["Dimensions"] == [
            {"Name": "door", "Value": "mcp"},
            {"Name": "service", "Value": mcp["POWERTOOLS_SERVICE_NAME"]},
        ]


def test_the_dashboard_is_valid_json_showing_the_service_metrics_and_every_alarm(template: dict[str, Any]) -> None:
    dashboard = template["Resources"]["Dashboard"]["Properties"]
    body = json.loads(dashboard["DashboardBody"])  # !Sub leaves ${...} inside strings: still JSON

    text = json.dumps(body)
    namespace = template["Globals"]["Function"]["Environment"]["Variables"]["POWERTOOLS_METRICS_NAMESPACE"]
    for metric in ("Requests", "Latency", "ReadUnits", "WriteUnits", "RowsReturned", "RowsStamped", "Status5xx"):
        assert f"{{{namespace},door" in text
        assert f'MetricName=\\"{metric}\\"' in text, metric
    (alarms,) = [widget for widget in body["widgets"] if widget["type"] == "alarm"]
    assert sorted(alarms["properties"]["alarms"]) == sorted(f"${{{name}.Arn}}" for name in ALARMS)
    assert "DashboardUrl" in template["Outputs"]
