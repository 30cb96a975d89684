"""The composition root: the one place that reads the environment and assembles the core, for every entrypoint.

Here: the settings (read once, validated), the services over one table, and the process-wide services the Lambda
functions serve. Each door is wired from those in its own module, so a function imports only its own door:
handlers.bootstrap.http (the HTTP API) and handlers.bootstrap.mcp (the MCP endpoint and its OAuth server). The
Lambda entrypoints (handlers.aws.*) and `agent-memory serve` (local.serve) both build their doors there; no door
package imports this one.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from adapters.bedrock import (
    TITAN_FLOOR,
    TITAN_RELATED_FLOOR,
    BedrockEmbedder,
    make_bedrock_client,
)
from adapters.dynamodb import (
    DynamoDBGrantRepository,
    DynamoDBKeyRepository,
    DynamoDBMemoryRepository,
    make_client,
)
from adapters.dynamodb.client import report_health
from adapters.dynamodb.usage import CapacityTally
from adapters.https import HttpsDocumentFetcher
from core.clientdocs.service import ClientDocuments
from core.clock import Clock, utc_now
from core.grants import GrantService
from core.health import StorageHealth
from core.keys import KeyService
from core.memories import MemoryService
from core.recall.backfill import Backfill
from core.recall.embedding import Embedder
from core.recall.ranking import RankingSettings
from handlers.bootstrap.settings import DEFAULT_METRICS_NAMESPACE as DEFAULT_METRICS_NAMESPACE
from handlers.bootstrap.settings import DEFAULT_REGION as DEFAULT_REGION
from handlers.bootstrap.settings import DEFAULT_TABLE as DEFAULT_TABLE
from handlers.bootstrap.settings import Settings as Settings
from handlers.bootstrap.settings import SettingsError as SettingsError
from handlers.bootstrap.settings import parse_retention_days as parse_retention_days
from handlers.bootstrap.vectors import recall_vectors
from handlers.metrics import RequestMetrics

if TYPE_CHECKING:
    from mypy_boto3_bedrock_runtime import BedrockRuntimeClient
    from mypy_boto3_dynamodb import DynamoDBClient

    from core.digest import Indexer
    from core.recall.service import RecallService
    from core.repository import GrantRepository, KeyRepository, MemoryRepository
    from core.repository.vectors import VectorSearch

# The one version string: pyproject's, read from the installed distribution (the Lambda build ships its metadata).
VERSION: Final = importlib.metadata.version("agent-memory")


def use_placeholder_credentials() -> None:
    """Local engines accept any credentials, but botocore refuses to sign without some."""
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "local")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "local")


@dataclass(frozen=True)
class Services:
    """The memory, key and OAuth grant use cases over one table, sharing one DynamoDB client, and the settings they
    were built with (the doors wired over them read theirs there); recall's ranking (None where it is not wired: the
    purge function) and the backfill that embeds what waits for its vector; the client and the embedder they share
    (what a process restored from a snapshot reconnects: handlers.bootstrap.snapshot)."""

    memories: MemoryService
    keys: KeyService
    grants: GrantService
    settings: Settings = field(default_factory=Settings)
    recall: RecallService | None = None
    backfill: Backfill | None = None
    client: DynamoDBClient | None = None
    embedder: Embedder | None = None
    # How the client's storage calls have been ending, which the HTTP door's /healthz reports.
    health: StorageHealth = field(default_factory=StorageHealth)


def bedrock_embedder(
    settings: Settings, *, make_client: Callable[[str], BedrockRuntimeClient] = make_bedrock_client
) -> BedrockEmbedder:
    """The deployed embedding model the settings name; its client is made by `make_client` (the deployed one, bounded
    like the storage calls; tests wrap it to reach the client it makes) for the settings' region, on its first
    embedding."""
    floor = TITAN_FLOOR if settings.semantic_floor is None else settings.semantic_floor
    related_floor = TITAN_RELATED_FLOOR if settings.related_floor is None else settings.related_floor
    return BedrockEmbedder(
        lambda: make_client(settings.region),
        settings.embedding_model,
        settings.embedding_dimensions,
        floor,
        related_floor=related_floor,
    )


def client_documents(settings: Settings) -> ClientDocuments:
    """Clients known by their Client ID Metadata Document, fetched over https within its bounds (and, in tests
    only, from a loopback server whose CA the settings name)."""
    return ClientDocuments(HttpsDocumentFetcher(test_loopback_ca=settings.test_only_client_metadata_ca))


def build_services(
    settings: Settings,
    client: DynamoDBClient | None = None,
    embedder: Embedder | None = None,
    *,
    clock: Clock = utc_now,
    ranking: bool = True,
    vectors: VectorSearch | None = None,
) -> Services:
    """The services over `settings`' table, through `client` (or a new one built from the settings), embedding with
    `embedder` (by default the Bedrock model the settings name), on `clock`: services_over DynamoDB's repositories.
    Without `ranking` (the purge function) neither the digests nor recall are wired: only the backfill. `vectors`:
    the vector index recall asks over large namespaces (handlers.bootstrap.vectors.recall_vectors)."""
    client = client or make_client(settings.endpoint_url, settings.region)
    health = StorageHealth()
    report_health(client, health)
    embedder = embedder or bedrock_embedder(settings)
    services = services_over(
        settings,
        # Recall's reads of the digests are sized by the bytes of the model's vectors.
        DynamoDBMemoryRepository(client, settings.table_name, dimensions=embedder.dimensions),
        DynamoDBKeyRepository(client, settings.table_name),
        DynamoDBGrantRepository(client, settings.table_name),
        embedder,
        clock=clock,
        ranking=ranking,
        vectors=vectors,
    )
    return dataclasses.replace(services, client=client, health=health)


def services_over(
    settings: Settings,
    memories: MemoryRepository,
    keys: KeyRepository,
    grants: GrantRepository,
    embedder: Embedder,
    *,
    clock: Clock = utc_now,
    ranking: bool = True,
    vectors: VectorSearch | None = None,
) -> Services:
    """The services over these repositories (DynamoDB's in a deployment, adapters.memory's in tests), embedding with
    `embedder`, on `clock`. Every change and every read of a memory (recall too) is fenced on the live key making it
    (MemoryService, RecallService), so a revoke or an erase is never outrun by a cached key in any process; every
    change computes the memory's recall digest first. Without `ranking` (the purge function) neither the digests nor
    recall are wired: only the backfill."""
    key_service = KeyService(keys, clock)
    indexer, recall = _ranking(memories, embedder, settings.ranking, clock, vectors) if ranking else (None, None)
    return Services(
        MemoryService(memories, clock, fenced=True, indexer=indexer),
        key_service,
        GrantService(grants, key_service, clock, documents=client_documents(settings)),
        settings,
        recall,
        Backfill(memories, embedder),
        embedder=embedder,
    )


def _ranking(
    repository: MemoryRepository,
    embedder: Embedder,
    settings: RankingSettings,
    clock: Clock,
    vectors: VectorSearch | None = None,
) -> tuple[Indexer, RecallService]:
    """Recall's indexer and use case, imported only where they are wired: the purge function, which writes no
    digest and ranks nothing, then loads neither the stemmer nor the vector arithmetic (recall's extra)."""
    from core.recall.indexing import RecallIndexer
    from core.recall.service import RecallService

    recall = RecallService(repository, embedder, settings, clock, fenced=True, vectors=vectors)
    return RecallIndexer(embedder), recall


# The capacity the process-wide client consumes, for the functions' metrics (one request at a time on Lambda).
CAPACITY: Final = CapacityTally()


def from_environment(
    env: Mapping[str, str] = os.environ, *, embedder: Embedder | None = None, ranking: bool = True
) -> Services:
    """A Lambda function's services, over the settings `env` gives (the process's environment: the one place a
    function reads it), built once at init by its entrypoint and reused while warm: one client, reporting the
    capacity each call consumes to CAPACITY, and `embedder` (by default the Bedrock model the settings name). A
    setting that cannot be used fails the init with SettingsError, before any request. Without `ranking`: the purge
    function's (build_services).

    Lambda always authenticates: no setting turns the key check off.
    """
    settings = Settings.from_env(env)
    client = make_client(settings.endpoint_url, settings.region)
    CAPACITY.watch(client)
    vectors = recall_vectors(env, client, settings) if ranking else None
    return build_services(settings, client, embedder, ranking=ranking, vectors=vectors)


def lambda_metrics(door: str, settings: Settings) -> RequestMetrics:
    """The metrics a Lambda entrypoint emits for each request of `door`."""
    return RequestMetrics(door, CAPACITY, settings.metrics_namespace)
