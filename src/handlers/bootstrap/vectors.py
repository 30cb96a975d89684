"""The composition of recall's vector index (the template's `RecallVectorIndex`): the index the template creates, named
by the environment (`VECTOR_BUCKET`, `VECTOR_INDEX`), for the ranking model (`EMBEDDING_MODEL`); its stream consumer
(handlers.aws.vectors) writes it, the doors' recall asks it (core.recall.large)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from adapters.dynamodb.counters import namespace_sizes
from adapters.s3vectors import S3VectorIndex, S3VectorsClient, index_label, make_s3vectors_client
from adapters.vectorsync import sync
from handlers.bootstrap.settings import Settings, SettingsError

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

    from core.repository.vectors import VectorSearch

StreamSync = Callable[[Sequence[Mapping[str, Any]]], list[str]]


def stream_sync(client: S3VectorsClient, bucket: str, index: str, model: str) -> StreamSync:
    """What applies a batch of the table's stream records to the index: the sequence numbers not applied."""
    vectors = S3VectorIndex(client, bucket, index, model, sizes=lambda _: 0)  # the consumer never asks for sizes
    return lambda records: sync(vectors, records)


def stream_sync_from_environment(env: Mapping[str, str] = os.environ) -> StreamSync:
    settings = Settings.from_env(env)
    bucket, index = env.get("VECTOR_BUCKET", ""), env.get("VECTOR_INDEX", "")
    if not bucket or not index:
        raise SettingsError("cannot start with these settings: VECTOR_BUCKET and VECTOR_INDEX name the vector index")
    return stream_sync(make_s3vectors_client(settings.region), bucket, index, settings.embedding_model)


def stream_sync_on_first_use(env: Mapping[str, str] = os.environ) -> StreamSync:
    """`stream_sync_from_environment`, built on the first batch and kept for the process's life."""
    built: list[StreamSync] = []

    def apply(records: Sequence[Mapping[str, Any]]) -> list[str]:
        if not built:
            built.append(stream_sync_from_environment(env))
        return built[0](records)

    return apply


def recall_vectors(env: Mapping[str, str], table_client: DynamoDBClient, settings: Settings) -> VectorSearch | None:
    """The vector index recall asks for the candidates of a large namespace (core.recall.large), when the environment
    names one (`VECTOR_BUCKET` and `VECTOR_INDEX`: the template's `RecallVectorIndex`); None: every recall reads its
    namespace. It holds only the namespaces a backfill has marked for it (adapters/vectorfill.py): the others are
    read whole."""
    bucket, index = env.get("VECTOR_BUCKET", ""), env.get("VECTOR_INDEX", "")
    if not bucket or not index:
        return None
    label = index_label(bucket, index, settings.embedding_model, settings.embedding_dimensions)
    sizes = namespace_sizes(table_client, settings.table_name, label)
    return S3VectorIndex(make_s3vectors_client(settings.region), bucket, index, settings.embedding_model, sizes)
