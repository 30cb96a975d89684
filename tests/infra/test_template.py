"""Checks on template.yaml that cfn-lint cannot make: it must match what the code reads and queries."""

from __future__ import annotations

import importlib
from typing import Any

import pytest

from core.repository.dynamodb import INDEXES
from handlers.local import TABLE_RESOURCE, load_template, table_definition


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    return load_template()


def _functions(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        name: resource["Properties"]
        for name, resource in template["Resources"].items()
        if resource["Type"] == "AWS::Serverless::Function"
    }


def test_table_gsis_are_exactly_the_ones_the_repository_queries():
    definition = table_definition()
    declared = {
        gsi["IndexName"]: [(k["AttributeName"], k["KeyType"]) for k in gsi["KeySchema"]]
        for gsi in definition["GlobalSecondaryIndexes"]
    }
    expected = {index: [("pk", "HASH"), (attribute, "RANGE")] for index, attribute in INDEXES.values()}
    assert declared == expected


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


def test_every_function_handler_is_importable_and_callable(template: dict[str, Any]):
    for properties in _functions(template).values():
        module_name, _, attribute = properties["Handler"].rpartition(".")
        assert callable(getattr(importlib.import_module(module_name), attribute))


def test_functions_run_python313_on_arm64_within_api_gateway_timeout(template: dict[str, Any]):
    globals_ = template["Globals"]["Function"]
    assert globals_["Runtime"] == "python3.13"
    assert globals_["Architectures"] == ["arm64"]
    for properties in _functions(template).values():
        assert properties.get("Timeout", globals_.get("Timeout", 3)) < 30


def test_the_mcp_function_url_defaults_to_none_because_the_function_authenticates_and_still_offers_aws_iam(
    template: dict[str, Any],
):
    parameter = template["Parameters"]["McpAuthType"]
    assert parameter["Default"] == "NONE"
    assert set(parameter["AllowedValues"]) == {"NONE", "AWS_IAM"}
    assert "API key" in parameter["Description"]
    assert template["Resources"]["McpFunction"]["Properties"]["FunctionUrlConfig"]["AuthType"] == "McpAuthType"


def test_no_function_is_given_a_setting_that_turns_authentication_off(template: dict[str, Any]):
    for properties in [template["Globals"]["Function"], *_functions(template).values()]:
        variables = properties.get("Environment", {}).get("Variables", {})
        assert not [name for name in variables if "AUTH" in name.upper()]
