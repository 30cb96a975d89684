"""The composition root: the one place that reads the environment and assembles the core, for every entrypoint.

The Lambda entry modules (handlers.aws.http, handlers.aws.mcp, handlers.aws.purge) and `agent-memory
serve`/`keys` (local.*) take their settings, services, authenticator and version from here and pass them to the
door factories explicitly; no door module imports this one.
"""

from __future__ import annotations

import functools
import importlib.metadata
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from core.grants import GrantService
from core.history import DEFAULT_RETENTION_DAYS
from core.keys import KeyService
from core.memories import MemoryService
from core.repository.dynamodb import (
    DynamoDBGrantRepository,
    DynamoDBKeyRepository,
    DynamoDBMemoryRepository,
    make_client,
)
from core.repository.dynamodb.usage import CapacityTally
from handlers.auth import Authenticator, key_authenticator
from handlers.metrics import RequestMetrics

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

DEFAULT_TABLE = "agent-memory"
DEFAULT_REGION = "us-east-1"
DEFAULT_METRICS_NAMESPACE = "agent-memory"
# The one version string: pyproject's, read from the installed distribution (the Lambda build ships its metadata).
VERSION: Final = importlib.metadata.version("agent-memory")


@dataclass(frozen=True)
class Settings:
    table_name: str = DEFAULT_TABLE
    region: str = DEFAULT_REGION
    endpoint_url: str | None = None
    # Browser origins the MCP endpoint admits; a request carrying any other Origin header gets 403.
    mcp_allowed_origins: tuple[str, ...] = ()
    # The CloudWatch namespace of the functions' metrics (handlers.metrics).
    metrics_namespace: str = DEFAULT_METRICS_NAMESPACE
    # Days a deleted memory stays restorable before the purge removes it for good.
    deleted_retention_days: int = DEFAULT_RETENTION_DAYS
    # Whether the MCP door hosts its OAuth authorization server (handlers.oauth.server), and the issuer it answers as
    # when not the origin each request reached (a custom domain in front of the function URL).
    oauth_enabled: bool = True
    oauth_issuer: str | None = None


def settings_from_env(env: Mapping[str, str] = os.environ) -> Settings:
    return Settings(
        table_name=env.get("TABLE_NAME") or DEFAULT_TABLE,
        region=env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or DEFAULT_REGION,
        endpoint_url=env.get("AWS_ENDPOINT_URL_DYNAMODB") or None,
        mcp_allowed_origins=_comma_separated(env.get("MCP_ALLOWED_ORIGINS", "")),
        metrics_namespace=env.get("POWERTOOLS_METRICS_NAMESPACE") or DEFAULT_METRICS_NAMESPACE,
        deleted_retention_days=int(env.get("DELETED_RETENTION_DAYS") or DEFAULT_RETENTION_DAYS),
        oauth_enabled=(env.get("OAUTH_ENABLED") or "true").strip().lower() != "false",
        oauth_issuer=env.get("OAUTH_ISSUER") or None,
    )


def _comma_separated(value: str) -> tuple[str, ...]:
    # An origin never ends in "/", so a trailing one in the setting is a typo that would match nothing.
    return tuple(item.strip().rstrip("/") for item in value.split(",") if item.strip())


def use_placeholder_credentials() -> None:
    """Local engines accept any credentials, but botocore refuses to sign without some."""
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "local")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "local")


@dataclass(frozen=True)
class Services:
    """The memory, key and OAuth grant use cases over one table, sharing one DynamoDB client."""

    memories: MemoryService
    keys: KeyService
    grants: GrantService


def build_services(settings: Settings, client: DynamoDBClient | None = None) -> Services:
    """The services over `settings`' table, through `client` (or a new one built from the settings). Every change
    of a memory is fenced on the live key making it (MemoryService), so a revoke or an erase is never outrun by a
    cached key in any process."""
    client = client or make_client(settings.endpoint_url, settings.region)
    keys = KeyService(DynamoDBKeyRepository(client, settings.table_name))
    return Services(
        MemoryService(DynamoDBMemoryRepository(client, settings.table_name), fenced=True),
        keys,
        GrantService(DynamoDBGrantRepository(client, settings.table_name), keys),
    )


# The capacity the process-wide client consumes, for the functions' metrics (one request at a time on Lambda).
CAPACITY: Final = CapacityTally()


@functools.cache
def default_services() -> Services:
    """The process-wide services for Lambda: one client, created at init and reused while warm, reporting the
    capacity each call consumes to CAPACITY.

    Lambda always authenticates: no setting turns the key check off.
    """
    settings = settings_from_env()
    client = make_client(settings.endpoint_url, settings.region)
    CAPACITY.watch(client)
    return build_services(settings, client)


def lambda_metrics(door: str) -> RequestMetrics:
    """The metrics a Lambda entrypoint emits for each request of `door`."""
    return RequestMetrics(door, CAPACITY, settings_from_env().metrics_namespace)


def lambda_authenticator() -> Authenticator:
    """API keys checked against the process-wide services' table; the services are built on the first request."""
    return key_authenticator(lambda: default_services().keys)
