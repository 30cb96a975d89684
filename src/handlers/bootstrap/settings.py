"""The settings a process is configured with: read from the environment once, validated, each bad value named by
its variable (part of the composition root, the one reader of the environment)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import ErrorDetails

from adapters.bedrock import DEFAULT_DIMENSIONS, TITAN_DIMENSIONS, TITAN_V2
from core.history import DEFAULT_RETENTION_DAYS
from core.hosts import is_loopback, parse_host
from core.limits import MAX_RETENTION_DAYS, MIN_RETENTION_DAYS
from core.recall.ranking import RankingSettings
from handlers.bootstrap.recall import RANKING_VARIABLES, ranking_from_env

DEFAULT_TABLE = "agent-memory"
DEFAULT_REGION = "us-east-1"
DEFAULT_METRICS_NAMESPACE = "agent-memory"


class SettingsError(ValueError):
    """A setting in the environment that cannot be used; the message names the variable and what it must be."""


def parse_retention_days(text: str) -> int:
    """Days a deleted memory stays restorable, as DELETED_RETENTION_DAYS and `serve --deleted-retention-days` give
    them: a whole number from MIN_RETENTION_DAYS to MAX_RETENTION_DAYS (the template's bounds)."""
    if not text.strip().isdigit() or not MIN_RETENTION_DAYS <= int(text) <= MAX_RETENTION_DAYS:
        raise ValueError(f"{text!r} is not a number of days from {MIN_RETENTION_DAYS} to {MAX_RETENTION_DAYS}")
    return int(text)


class Settings(BaseModel):
    """What a process is configured with, validated once, when it starts (Settings.from_env)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    table_name: str = DEFAULT_TABLE
    region: str = DEFAULT_REGION
    endpoint_url: str | None = None
    # Browser origins the MCP endpoint admits; a request carrying any other Origin header gets 403.
    mcp_allowed_origins: tuple[str, ...] = ()
    # The CloudWatch namespace of the functions' metrics (handlers.metrics).
    metrics_namespace: str = DEFAULT_METRICS_NAMESPACE
    # Days a deleted memory stays restorable before the purge removes it for good.
    deleted_retention_days: int = Field(DEFAULT_RETENTION_DAYS, ge=MIN_RETENTION_DAYS, le=MAX_RETENTION_DAYS)
    # Whether the MCP door hosts its OAuth authorization server (handlers.oauth), and the issuer it answers as when
    # not the origin each request reached (a custom domain in front of the function URL).
    oauth_enabled: bool = True
    oauth_issuer: str | None = None
    # TESTS ONLY, never set in a deployment: a CA file (PEM) trusted for Client ID Metadata Documents instead of the
    # system's, and loopback addresses admitted, so a test's own https server can serve them (adapters.https).
    test_only_client_metadata_ca: str | None = None
    # The Amazon Bedrock model that embeds memories when they are written and recall's questions, and the dimensions
    # of its vectors (Titan Text Embeddings V2: 256, 512 or 1,024).
    embedding_model: str = Field(TITAN_V2, pattern=r"^[A-Za-z0-9][A-Za-z0-9.:_-]{0,199}$")
    embedding_dimensions: int = DEFAULT_DIMENSIONS
    # The cosine at or below which the Bedrock model's vectors say two texts are unrelated (recall's semantic part is
    # what lies above it); None: the model's own (adapters.bedrock).
    semantic_floor: float | None = Field(None, ge=-1, lt=1)
    # The cosine above which the Bedrock model's vectors take two memories as versions or repeats of one fact (related
    # memories); None: the model's own (adapters.bedrock: unmeasured, to be measured and set here).
    related_floor: float | None = Field(None, ge=-1, lt=1)
    # Recall's weights, half-lives and type priors (core.recall.ranking's defaults unless set).
    ranking: RankingSettings = Field(default_factory=RankingSettings)

    @field_validator("embedding_dimensions")
    @classmethod
    def _dimensions_the_model_answers_in(cls, value: int) -> int:
        if value not in TITAN_DIMENSIONS:
            raise ValueError(f"{value} is not one of {', '.join(map(str, TITAN_DIMENSIONS))}")
        return value

    @field_validator("oauth_issuer")
    @classmethod
    def _issuer_is_an_origin(cls, value: str | None) -> str | None:
        if value is not None and not _is_issuer(value):
            raise ValueError(
                f"{value!r} is not an origin this server can issue tokens as: https://host[:port] (or http on a "
                "loopback host), with no path, query or fragment"
            )
        return value

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> Settings:
        """The settings the environment gives; SettingsError naming the variable when a value cannot be used."""
        raw: dict[str, Any] = {
            "table_name": env.get("TABLE_NAME") or DEFAULT_TABLE,
            "region": env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or DEFAULT_REGION,
            "endpoint_url": env.get("AWS_ENDPOINT_URL_DYNAMODB") or None,
            "mcp_allowed_origins": _comma_separated(env.get("MCP_ALLOWED_ORIGINS", "")),
            "metrics_namespace": env.get("POWERTOOLS_METRICS_NAMESPACE") or DEFAULT_METRICS_NAMESPACE,
            "oauth_issuer": env.get("OAUTH_ISSUER") or None,
            "test_only_client_metadata_ca": env.get("TEST_ONLY_CLIENT_METADATA_CA") or None,
            "embedding_model": env.get("EMBEDDING_MODEL") or TITAN_V2,
            "embedding_dimensions": env.get("EMBEDDING_DIMENSIONS") or DEFAULT_DIMENSIONS,
            "semantic_floor": (env.get("RECALL_SEMANTIC_FLOOR") or "").strip() or None,
            "related_floor": (env.get("RECALL_RELATED_FLOOR") or "").strip() or None,
        }
        raw["ranking"], problems = ranking_from_env(env)
        retention = env.get("DELETED_RETENTION_DAYS") or ""
        try:
            raw["deleted_retention_days"] = parse_retention_days(retention) if retention else DEFAULT_RETENTION_DAYS
        except ValueError as exc:
            problems.append(f"DELETED_RETENTION_DAYS: {exc}")
        enabled = (env.get("OAUTH_ENABLED") or "true").strip().lower()
        if enabled not in ("true", "false"):
            problems.append(f"OAUTH_ENABLED: {enabled!r} is neither true nor false")
        raw["oauth_enabled"] = enabled != "false"
        try:
            settings = cls.model_validate(raw)
        except ValidationError as exc:
            problems.extend(f"{_variable(error['loc'])}: {_reason(error)}" for error in exc.errors())
        if problems:
            raise SettingsError("cannot start with these settings: " + "; ".join(problems))
        return settings


_VARIABLES: Final = {
    "oauth_issuer": "OAUTH_ISSUER",
    "deleted_retention_days": "DELETED_RETENTION_DAYS",
    "embedding_model": "EMBEDDING_MODEL",
    "embedding_dimensions": "EMBEDDING_DIMENSIONS",
    "semantic_floor": "RECALL_SEMANTIC_FLOOR",
    "related_floor": "RECALL_RELATED_FLOOR",
}


def _variable(loc: tuple[int | str, ...]) -> str:
    return RANKING_VARIABLES[str(loc[1])] if loc[0] == "ranking" else _VARIABLES[str(loc[0])]


def _reason(error: ErrorDetails) -> str:
    # A validator's own ValueError says it in full; pydantic's message would prefix it with "Value error, ".
    return str(error["ctx"]["error"]) if error["type"] == "value_error" else error["msg"]


def _comma_separated(value: str) -> tuple[str, ...]:
    # An origin never ends in "/", so a trailing one in the setting is a typo that would match nothing.
    return tuple(item.strip().rstrip("/") for item in value.split(",") if item.strip())


def _is_issuer(value: str) -> bool:
    # The OAuth routes and metadata live at the origin's root, so an issuer is an origin (a trailing "/" is dropped).
    try:
        parts = urlsplit(value.rstrip("/"))
    except ValueError:
        return False
    host = parse_host(parts.netloc) if "@" not in parts.netloc else None
    if host is None or parts.path or parts.query or parts.fragment or "?" in value or "#" in value:
        return False
    return parts.scheme == "https" or (parts.scheme == "http" and is_loopback(host[0]))
