"""An Amazon S3 Vectors client in memory, following the documented semantics of the calls adapters/s3vectors.py makes
(PutVectors, DeleteVectors, QueryVectors on one index): a put replaces what its key held, deleting a missing key is no
error, a query returns at most `topK` (1 to 100) keys nearest first by the index's metric (cosine: 1 - cosine
similarity; euclidean), among the vectors the filter matches (an ENHANCED index filters before the search, so the
fake's exact search is what a filtered query approximates). Filter operators: `$eq` (on a list: any element equals),
`$ne`, `$in`, `$and`, `$or`, and a bare value for `$eq`. Not shipped: the tests' and the bench's.
"""

from __future__ import annotations

import math
import threading
from typing import Any, Final

_TOP_K_MOST: Final = 100
_BATCH_MOST: Final = 500


class FakeS3VectorsError(ValueError):
    """A request S3 Vectors would refuse (400 ValidationException, 404 NotFoundException)."""


class FakeS3Vectors:
    """One vector bucket's indexes, each of fixed dimension and metric."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._indexes: dict[tuple[str, str], tuple[int, str]] = {}
        self._vectors: dict[tuple[str, str], dict[str, tuple[list[float], dict[str, Any]]]] = {}

    def create_index(self, bucket: str, index: str, dimension: int, metric: str = "cosine") -> None:
        with self._lock:
            self._indexes[(bucket, index)] = (dimension, metric)
            self._vectors[(bucket, index)] = {}

    def keys(self, bucket: str, index: str) -> set[str]:
        with self._lock:
            return set(self._vectors[(bucket, index)])

    # Keyword arguments as a boto3 client takes them (the API's own names), read as the service reads a request.
    def put_vectors(self, **request: Any) -> dict[str, Any]:
        bucket, index = request["vectorBucketName"], request["indexName"]
        vectors: list[dict[str, Any]] = request["vectors"]
        dimension, _ = self._index(bucket, index)
        if not 1 <= len(vectors) <= _BATCH_MOST:
            raise FakeS3VectorsError(f"a PutVectors call takes 1 to {_BATCH_MOST} vectors")
        if any(len(vector["data"]["float32"]) != dimension for vector in vectors):
            raise FakeS3VectorsError(f"the index's vectors have {dimension} dimensions")
        with self._lock:
            stored = self._vectors[(bucket, index)]
            for vector in vectors:
                stored[vector["key"]] = (
                    [float(value) for value in vector["data"]["float32"]],
                    vector.get("metadata", {}),
                )
        return {}

    def delete_vectors(self, **request: Any) -> dict[str, Any]:
        bucket, index = request["vectorBucketName"], request["indexName"]
        keys: list[str] = request["keys"]
        self._index(bucket, index)
        if not 1 <= len(keys) <= _BATCH_MOST:
            raise FakeS3VectorsError(f"a DeleteVectors call takes 1 to {_BATCH_MOST} keys")
        with self._lock:
            for key in keys:
                self._vectors[(bucket, index)].pop(key, None)
        return {}

    def query_vectors(self, **request: Any) -> dict[str, Any]:
        bucket, index, top_k = request["vectorBucketName"], request["indexName"], request["topK"]
        condition: dict[str, Any] | None = request.get("filter")
        dimension, metric = self._index(bucket, index)
        if not 1 <= top_k <= _TOP_K_MOST:
            raise FakeS3VectorsError(f"topK is 1 to {_TOP_K_MOST}")
        query: list[float] = request["queryVector"]["float32"]
        if len(query) != dimension:
            raise FakeS3VectorsError(f"the index's vectors have {dimension} dimensions")
        with self._lock:
            stored = list(self._vectors[(bucket, index)].items())
        found = [
            (_distance(metric, query, values), key)
            for key, (values, metadata) in stored
            if condition is None or matches(condition, metadata)
        ]
        found.sort()
        return {"vectors": [{"key": key} for _, key in found[:top_k]], "distanceMetric": metric}

    def _index(self, bucket: str, index: str) -> tuple[int, str]:
        with self._lock:
            if (bucket, index) not in self._indexes:
                raise FakeS3VectorsError(f"no index {index} in vector bucket {bucket}")
            return self._indexes[(bucket, index)]


def _distance(metric: str, left: list[float], right: list[float]) -> float:
    if metric == "euclidean":
        return math.dist(left, right)
    norms = math.sqrt(sum(value * value for value in left) * sum(value * value for value in right))
    return 1 - (sum(a * b for a, b in zip(left, right, strict=True)) / norms if norms else 0.0)


def matches(condition: dict[str, Any], metadata: dict[str, Any]) -> bool:
    """Whether a vector's metadata matches a filter (the operators the module's docstring lists)."""
    results = []
    for name, test in condition.items():
        if name == "$and":
            results.append(all(matches(part, metadata) for part in test))
        elif name == "$or":
            results.append(any(matches(part, metadata) for part in test))
        elif name.startswith("$"):
            raise FakeS3VectorsError(f"unsupported operator {name}")
        else:
            results.append(_holds(test if isinstance(test, dict) else {"$eq": test}, metadata.get(name)))
    return all(results)


def _holds(test: dict[str, Any], value: Any) -> bool:
    values = value if isinstance(value, list) else [value]
    ((operator, operand),) = test.items()
    if operator == "$eq":
        return operand in values
    if operator == "$ne":
        return value is not None and operand not in values
    if operator == "$in":
        return any(element in operand for element in values)
    raise FakeS3VectorsError(f"unsupported operator {operator}")
