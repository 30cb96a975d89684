"""The settings (handlers.bootstrap.Settings): read from the environment once, validated, and a value that cannot be
used stops the process at start with a message naming the variable, never a traceback at the first request."""

from __future__ import annotations

import json

import pytest

from adapters.bedrock import TITAN_FLOOR, TITAN_RELATED_FLOOR
from core.recall.ranking import DEFAULT_WEIGHTS, RankingSettings
from core.recall.standin import StandInEmbedder
from handlers import bootstrap
from handlers.bootstrap import Settings, SettingsError
from handlers.bootstrap.recall import RANKING_VARIABLES
from local import cli
from tests.conftest import Engine


def test_an_empty_environment_gives_the_defaults() -> None:
    assert Settings.from_env({}) == Settings()


def test_every_variable_is_read_into_its_setting() -> None:
    env = {
        "TABLE_NAME": "memories",
        "AWS_REGION": "eu-west-1",
        "AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:8000",
        "MCP_ALLOWED_ORIGINS": " https://a.example/ , https://b.example",
        "POWERTOOLS_METRICS_NAMESPACE": "team-memory",
        "DELETED_RETENTION_DAYS": " 7 ",
        "OAUTH_ENABLED": "FALSE",
        "OAUTH_ISSUER": "https://memory.example.com/",
        "EMBEDDING_MODEL": "amazon.titan-embed-text-v2:0",
        "EMBEDDING_DIMENSIONS": "1024",
    }

    assert Settings.from_env(env) == Settings(
        table_name="memories",
        region="eu-west-1",
        endpoint_url="http://127.0.0.1:8000",
        mcp_allowed_origins=("https://a.example", "https://b.example"),
        metrics_namespace="team-memory",
        deleted_retention_days=7,
        oauth_enabled=False,
        oauth_issuer="https://memory.example.com/",
        embedding_model="amazon.titan-embed-text-v2:0",
        embedding_dimensions=1024,
    )


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"DELETED_RETENTION_DAYS": "abc"}, "DELETED_RETENTION_DAYS: 'abc' is not a number of days from 1 to 3650"),
        ({"DELETED_RETENTION_DAYS": "0"}, "DELETED_RETENTION_DAYS: '0' is not a number of days from 1 to 3650"),
        ({"DELETED_RETENTION_DAYS": "3651"}, "DELETED_RETENTION_DAYS: '3651' is not a number of days"),
        ({"DELETED_RETENTION_DAYS": "-1"}, "DELETED_RETENTION_DAYS: '-1' is not a number of days"),
        ({"OAUTH_ENABLED": "no"}, "OAUTH_ENABLED: 'no' is neither true nor false"),
        ({"OAUTH_ISSUER": "memory.example.com"}, "OAUTH_ISSUER: 'memory.example.com' is not an origin"),
        ({"OAUTH_ISSUER": "http://memory.example.com"}, "OAUTH_ISSUER: 'http://memory.example.com'"),
        ({"OAUTH_ISSUER": "https://memory.example.com/mcp"}, "OAUTH_ISSUER: 'https://memory.example"),
        ({"OAUTH_ISSUER": "https://user@memory.example.com"}, "OAUTH_ISSUER: 'https://user@memory"),
        ({"OAUTH_ISSUER": "https://memory.example.com?x=1"}, "OAUTH_ISSUER: 'https://memory.example"),
        ({"EMBEDDING_DIMENSIONS": "300"}, "EMBEDDING_DIMENSIONS: 300 is not one of 256, 512, 1024"),
        ({"EMBEDDING_DIMENSIONS": "many"}, "EMBEDDING_DIMENSIONS: Input should be a valid integer"),
        ({"EMBEDDING_MODEL": "titan v2"}, "EMBEDDING_MODEL: String should match pattern"),
        ({"RECALL_SEMANTIC_FLOOR": "1"}, "RECALL_SEMANTIC_FLOOR: Input should be less than 1"),
        ({"RECALL_SEMANTIC_FLOOR": "high"}, "RECALL_SEMANTIC_FLOOR: Input should be a valid number"),
        ({"RECALL_RELATED_FLOOR": "1"}, "RECALL_RELATED_FLOOR: Input should be less than 1"),
        ({"RECALL_WEIGHTS": "lexical=1"}, "RECALL_WEIGHTS: 'lexical=1' is not a JSON object"),
        ({"RECALL_WEIGHTS": "[0.5, 0.5]"}, "RECALL_WEIGHTS: '[0.5, 0.5]' is not a JSON object"),
        (
            {"RECALL_WEIGHTS": '{"lexical": 1}'},
            "RECALL_WEIGHTS: must give each of lexical, semantic, recency, use, type",
        ),
        ({"RECALL_TYPE_PRIORS": '{"fact": 2}'}, "RECALL_TYPE_PRIORS: must give each of preference, fact, identity"),
        ({"RECALL_RECENCY_HALF_LIFE_DAYS": "0"}, "RECALL_RECENCY_HALF_LIFE_DAYS: Input should be greater than 0"),
        ({"RECALL_USE_HALF_LIFE_DAYS": "inf"}, "RECALL_USE_HALF_LIFE_DAYS: Input should be a finite number"),
    ],
)
def test_a_value_that_cannot_be_used_is_refused_naming_its_variable(env: dict[str, str], named: str) -> None:
    with pytest.raises(SettingsError, match=r"^cannot start with these settings: ") as refused:
        Settings.from_env(env)

    assert named in str(refused.value)


def test_recalls_settings_are_read_into_the_ranking_and_the_models_floor(moto_engine: Engine) -> None:
    weights = {"lexical": 0.5, "semantic": 0.3, "recency": 0.1, "use": 0.1, "type": 0.0}
    priors = {"identity": 1.0, "preference": 0.9, "fact": 0.6, "event": 0.3}
    env = {
        "RECALL_WEIGHTS": json.dumps(weights),
        "RECALL_TYPE_PRIORS": f" {json.dumps(priors)} ",
        "RECALL_RECENCY_HALF_LIFE_DAYS": "30",
        "RECALL_USE_HALF_LIFE_DAYS": "7.5",
        "RECALL_SEMANTIC_FLOOR": "0.25",
        "RECALL_RELATED_FLOOR": "0.75",
    }

    settings = Settings.from_env(env)

    assert settings.ranking == RankingSettings(
        weights=weights, type_priors=priors, recency_half_life_days=30, use_half_life_days=7.5
    )
    assert settings.semantic_floor == 0.25
    assert bootstrap.bedrock_embedder(settings).floor == 0.25
    assert bootstrap.bedrock_embedder(settings).related_floor == 0.75
    recall = bootstrap.build_services(settings, moto_engine.client, StandInEmbedder()).recall
    assert recall is not None
    assert recall.settings == settings.ranking


def test_recalls_settings_left_empty_keep_the_documented_defaults() -> None:
    empty = dict.fromkeys((*RANKING_VARIABLES.values(), "RECALL_SEMANTIC_FLOOR", "RECALL_RELATED_FLOOR"), " ")

    settings = Settings.from_env(empty)

    assert settings.ranking == RankingSettings()
    assert settings.ranking.weights == DEFAULT_WEIGHTS
    assert settings.semantic_floor is None
    assert bootstrap.bedrock_embedder(settings).floor == TITAN_FLOOR
    assert bootstrap.bedrock_embedder(settings).related_floor == TITAN_RELATED_FLOOR


def test_every_unusable_value_is_named_at_once() -> None:
    with pytest.raises(SettingsError) as refused:
        Settings.from_env({"DELETED_RETENTION_DAYS": "abc", "OAUTH_ENABLED": "maybe", "OAUTH_ISSUER": "ftp://x"})

    assert [part.split(":")[0] for part in str(refused.value).split(": ", 1)[1].split("; ")] == [
        "DELETED_RETENTION_DAYS",
        "OAUTH_ENABLED",
        "OAUTH_ISSUER",
    ]


@pytest.mark.parametrize(
    "issuer", ["https://memory.example.com", "https://memory.example.com:8443", "http://127.0.0.1:8787"]
)
def test_an_issuer_that_is_an_https_or_loopback_origin_is_accepted(issuer: str) -> None:
    assert Settings.from_env({"OAUTH_ISSUER": issuer}).oauth_issuer == issuer


def test_the_lambda_services_fail_at_init_on_an_unusable_setting() -> None:
    with pytest.raises(SettingsError, match="DELETED_RETENTION_DAYS: 'abc' is not a number of days"):
        bootstrap.from_environment({"DELETED_RETENTION_DAYS": "abc"})


def test_the_command_line_refuses_an_unusable_setting_with_status_2_and_its_reason(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DELETED_RETENTION_DAYS", "abc")

    code = cli.main(["keys", "list"])

    assert code == 2
    assert capsys.readouterr().err == (
        "agent-memory: cannot start with these settings: DELETED_RETENTION_DAYS: 'abc' is not a number of days "
        "from 1 to 3650\n"
    )
