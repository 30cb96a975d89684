"""Amazon S3 Vectors as recall's vector search engine (core.repository.vectors.VectorSearch), and the writes that keep
its copy of the digests' vectors in step (adapters/vectorsync.py reads them off the table's stream).

One vector index holds every namespace, `namespace` a filterable metadata key beside `status`, `memory_type`, `tags`
and `terms` (lists: `$eq` matches a vector whose list holds the value); a vector's key is `<namespace>#<memory id>` (no
namespace holds `#`). One index rather than one a namespace: a vector bucket holds at most 10,000 indexes and
namespaces are not bounded; the template creates the one index, so the functions' IAM names that index alone and none
of them may create one; and an ENHANCED index (the default of a vector bucket created since 30 September 2026) applies
the filter before the search, so a namespace that is a small share of the index keeps its recall. Erasing a namespace
deletes its digests, whose REMOVE records delete their vectors as any other removal does.

Vectors are float32 in S3 Vectors: a digest's int8 codes times its scale (core.digest.Vector); cosine is the index's
metric, as recall's (core.recall.vectors). Only the vectors of the ranking model are kept: another model's (during a
change of model) have other dimensions, and wait for the backfill to embed them again.
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Final, Protocol, cast

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from core.digest import Vector
from core.repository.digests import Candidate, CandidateFilter
from core.repository.vectors import HOLDING_MOST, NEAREST_MOST, VectorSearchUnavailableError

# PutVectors and DeleteVectors take at most 500 vectors a call.
BATCH: Final = 500
# A vector's filterable metadata is at most 2 KB (S3 Vectors' limits); this leaves a margin for how it is counted.
FILTERABLE_BYTES: Final = 1900
KEY_SEPARATOR: Final = "#"


class VectorIndexError(Exception):
    """The vector index refused a write or could not be reached (its error code in the message)."""


class S3VectorsClient(Protocol):
    """What this adapter calls of a boto3 `s3vectors` client (botocore's service model has the shapes)."""

    def put_vectors(self, **kwargs: Any) -> dict[str, Any]: ...

    def delete_vectors(self, **kwargs: Any) -> dict[str, Any]: ...

    def query_vectors(self, **kwargs: Any) -> dict[str, Any]: ...


@dataclass(frozen=True)
class IndexedVector:
    """A memory's vector as the index keeps it."""

    namespace: str
    candidate: Candidate


def make_s3vectors_client(region: str) -> S3VectorsClient:
    """One client per process, with bounded retries and timeouts (a stream batch is retried by Lambda anyway)."""
    config = Config(region_name=region, retries={"mode": "standard", "total_max_attempts": 3}, connect_timeout=2)
    return cast("S3VectorsClient", boto3.client("s3vectors", config=config))


def vector_key(namespace: str, memory_id: int) -> str:
    return f"{namespace}{KEY_SEPARATOR}{memory_id}"


def index_label(bucket: str, index: str, model: str, dimensions: int) -> str:
    """What names one index's copy of the digests on the namespaces it holds whole (adapters/vectorfill.py marks
    them): another bucket, index, model or dimension (a replaced index: the template replaces it when they change)
    holds none of them until a backfill passes."""
    return f"{bucket}/{index} {model} {dimensions}"


def memory_id_of(key: str) -> int:
    return int(key.rpartition(KEY_SEPARATOR)[2])


def floats(vector: Vector) -> list[float]:
    """The float32 values an int8 vector stands for."""
    return [code * vector.scale for code in array("b", vector.codes)]


def query_filter(namespace: str, filters: CandidateFilter, holding: Sequence[str] = ()) -> dict[str, Any]:
    """The metadata filter of a recall's filters, as the store's own read filters: a status (None: every status but
    deleted), a type, a whole tag; and with `holding`, a vector whose `terms` hold one of them (`$eq` on a list)."""
    status = {"$eq": filters.status} if filters.status is not None else {"$ne": "deleted"}
    conditions: list[dict[str, Any]] = [{"namespace": {"$eq": namespace}}, {"status": status}]
    if filters.memory_type is not None:
        conditions.append({"memory_type": {"$eq": filters.memory_type}})
    if filters.tag is not None:
        conditions.append({"tags": {"$eq": filters.tag}})
    if holding:
        conditions.append({"$or": [{"terms": {"$eq": term}} for term in holding[:HOLDING_MOST]]})
    return {"$and": conditions}


def metadata(namespace: str, candidate: Candidate) -> dict[str, Any]:
    """A vector's filterable metadata: its namespace, status, type and tags, and its distinct terms in order of first
    use (`terms`, what recall's lexical candidates are found by) as many as keep the whole within FILTERABLE_BYTES as
    JSON (a memory of a few hundred words keeps its first ones)."""
    found: dict[str, Any] = {"namespace": namespace, "status": candidate.status, "memory_type": candidate.memory_type}
    if candidate.tags:
        found["tags"] = list(candidate.tags)
    room = FILTERABLE_BYTES - len(json.dumps(found).encode()) - len(', "terms": []')
    terms: list[str] = []
    for term in candidate.term_counts:  # in order of first use
        room -= len(json.dumps(term).encode()) + (2 if terms else 0)
        if room < 0:
            break
        terms.append(term)
    if terms:
        found["terms"] = terms
    return found


class S3VectorIndex:
    """One vector index of a vector bucket, for one embedding model."""

    def __init__(
        self, client: S3VectorsClient, bucket: str, index: str, model: str, sizes: Callable[[str], int]
    ) -> None:
        """`model`: the ranking model, whose vectors alone are kept. `sizes`: how many memories a namespace holds
        (the table's id counter: one read unit)."""
        self._client = client
        self._target = {"vectorBucketName": bucket, "indexName": index}
        self._model = model
        self._sizes = sizes

    def holds(self, namespace: str) -> int:
        return self._sizes(namespace)

    def nearest(
        self, namespace: str, vector: Vector, filters: CandidateFilter, k: int, holding: Sequence[str] = ()
    ) -> list[int]:
        try:
            answer = self._client.query_vectors(
                **self._target,
                topK=min(k, NEAREST_MOST),
                queryVector={"float32": floats(vector)},
                filter=query_filter(namespace, filters, holding),
            )
        except (ClientError, BotoCoreError) as exc:
            raise VectorSearchUnavailableError(_why(exc, "the query")) from exc
        return [memory_id_of(found["key"]) for found in answer["vectors"]]

    def keeps(self, candidate: Candidate) -> bool:
        """Whether the index keeps a vector for this digest: one of the ranking model's."""
        return candidate.vector is not None and candidate.model == self._model

    def put(self, vectors: Sequence[IndexedVector]) -> None:
        """Write these vectors (each replacing what its key held: idempotent), 500 a call. VectorIndexError when a
        call is refused (the calls before it stay done)."""
        for start in range(0, len(vectors), BATCH):
            entries = [self._entry(vector) for vector in vectors[start : start + BATCH]]
            _written(partial(self._client.put_vectors, **self._target, vectors=entries))

    def delete(self, keys: Sequence[str]) -> None:
        """Delete these keys' vectors (a key with none is no error), 500 a call; VectorIndexError as `put`."""
        for start in range(0, len(keys), BATCH):
            batch = list(keys[start : start + BATCH])
            _written(partial(self._client.delete_vectors, **self._target, keys=batch))

    def _entry(self, vector: IndexedVector) -> dict[str, Any]:
        candidate = vector.candidate
        if candidate.vector is None:
            raise ValueError("a digest without a vector has no place in the index")
        return {
            "key": vector_key(vector.namespace, candidate.memory_id),
            "data": {"float32": floats(candidate.vector)},
            "metadata": metadata(vector.namespace, candidate),
        }


def _written(write: Callable[[], object]) -> None:
    try:
        write()
    except (ClientError, BotoCoreError) as exc:
        raise VectorIndexError(_why(exc, "the write")) from exc


def _why(exc: ClientError | BotoCoreError, what: str) -> str:
    """Why a call failed, in words and the service's error code (never its message text)."""
    if isinstance(exc, ClientError):
        return f"Amazon S3 Vectors refused {what} ({exc.response.get('Error', {}).get('Code', 'an error')})"
    return f"Amazon S3 Vectors could not be reached for {what} ({type(exc).__name__})"
