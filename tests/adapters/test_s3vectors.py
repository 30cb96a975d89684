"""The S3 Vectors adapter (adapters/s3vectors.py) against botocore's `Stubber`, which checks every request against the
service model's shapes and answers with the documented response shape, and against the in-memory S3 Vectors
(adapters/memory/s3vectors.py), which follows the documented semantics: the same calls, the same answers read back."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from adapters.memory.s3vectors import FakeS3Vectors, FakeS3VectorsError, matches
from adapters.s3vectors import (
    FILTERABLE_BYTES,
    IndexedVector,
    S3VectorIndex,
    VectorIndexError,
    floats,
    metadata,
    query_filter,
)
from core.contract import RetrievalQuery
from core.digest import Vector
from core.model import Status
from core.recall.query import RecallQuery
from core.repository.digests import Candidate
from core.repository.vectors import VectorSearchUnavailableError

BUCKET = "agent-memory-test-vectors"
INDEX = "digests"
MODEL = "amazon.titan-embed-text-v2:0"


def _row(
    memory_id: int, codes: bytes, *, status: Status = "active", tags: tuple[str, ...] = (), content: str = "fish"
) -> Candidate:
    at = "2026-12-06T10:00:00.000000Z"
    return Candidate(memory_id, content, tags, at, at, "fact", status, 1, Vector(codes, 0.5), MODEL)


def query_request(top_k: int, *conditions: dict[str, Any]) -> dict[str, Any]:
    """The QueryVectors request for a recall of team's active memories by the vector [2, 0, -2] x 0.5, with the
    recall's other `conditions` after the namespace's and the status's."""
    return {
        "vectorBucketName": BUCKET,
        "indexName": INDEX,
        "topK": top_k,
        "queryVector": {"float32": [1.0, 0.0, -1.0]},
        "filter": {"$and": [{"namespace": {"$eq": "team"}}, {"status": {"$eq": "active"}}, *conditions]},
    }


@pytest.fixture
def stubbed() -> Iterator[tuple[S3VectorIndex, Stubber]]:
    client = boto3.client("s3vectors", region_name="us-east-1", aws_access_key_id="test", aws_secret_access_key="test")
    with Stubber(client) as stubber:
        yield S3VectorIndex(client, BUCKET, INDEX, MODEL, sizes=lambda _: 0), stubber
        stubber.assert_no_pending_responses()


@pytest.fixture
def fake() -> tuple[S3VectorIndex, FakeS3Vectors]:
    engine = FakeS3Vectors()
    engine.create_index(BUCKET, INDEX, 3)
    return S3VectorIndex(engine, BUCKET, INDEX, MODEL, sizes=lambda _: 0), engine


def test_a_digest_is_put_as_float32_values_keyed_by_namespace_and_id_with_its_filterable_metadata(
    stubbed: tuple[S3VectorIndex, Stubber],
) -> None:
    index, stubber = stubbed
    expected = {
        "vectorBucketName": BUCKET,
        "indexName": INDEX,
        "vectors": [
            {
                "key": "team#7",
                "data": {"float32": [1.0, -0.5, 63.5]},
                "metadata": {
                    "namespace": "team",
                    "status": "active",
                    "memory_type": "fact",
                    "tags": ["food"],
                    "terms": ["fish", "food"],  # a tag's words are terms too
                },
            }
        ],
    }
    stubber.add_response("put_vectors", {}, expected)
    index.put([IndexedVector("team", _row(7, bytes([2, 255, 127]), tags=("food",)))])


def test_puts_and_deletes_go_500_a_call(stubbed: tuple[S3VectorIndex, Stubber]) -> None:
    index, stubber = stubbed
    stubber.add_response(
        "delete_vectors", {}, {"vectorBucketName": BUCKET, "indexName": INDEX, "keys": [f"t#{n}" for n in range(500)]}
    )
    stubber.add_response("delete_vectors", {}, {"vectorBucketName": BUCKET, "indexName": INDEX, "keys": ["t#500"]})
    index.delete([f"t#{n}" for n in range(501)])


def test_nearest_asks_for_the_recall_filters_and_reads_the_ids_back_nearest_first(
    stubbed: tuple[S3VectorIndex, Stubber],
) -> None:
    index, stubber = stubbed
    query = RecallQuery(query="fish", tag="food", memory_type="fact")
    expected = query_request(100, {"memory_type": {"$eq": "fact"}}, {"tags": {"$eq": "food"}})
    answer = {
        "vectors": [{"key": "team#12", "distance": 0.02}, {"key": "team#3", "distance": 0.4}],
        "distanceMetric": "cosine",
    }
    stubber.add_response("query_vectors", answer, expected)
    assert index.nearest("team", Vector(bytes([2, 0, 254]), 0.5), query, 250) == [12, 3]


def test_the_fake_answers_the_same_calls_nearest_first_among_the_filters_matches(
    fake: tuple[S3VectorIndex, FakeS3Vectors],
) -> None:
    index, engine = fake
    index.put(
        [
            IndexedVector("team", _row(1, bytes([10, 0, 0]), tags=("food",))),
            IndexedVector("team", _row(2, bytes([9, 1, 0]), status="deleted", tags=("food",))),
            IndexedVector("team", _row(3, bytes([5, 5, 0]), tags=("food", "work"))),
            IndexedVector("team", _row(4, bytes([1, 10, 0]))),
            IndexedVector("solo", _row(5, bytes([10, 0, 0]), tags=("food",))),
        ]
    )
    question = Vector(bytes([10, 0, 0]), 1.0)
    assert index.nearest("team", question, RecallQuery(query="x"), 100) == [1, 3, 4]
    assert index.nearest("team", question, RecallQuery(query="x", tag="food"), 100) == [1, 3]
    assert index.nearest("team", question, RecallQuery(query="x", status="deleted"), 100) == [2]
    assert index.nearest("team", question, RecallQuery(query="x"), 1) == [1]
    index.put([IndexedVector("team", _row(1, bytes([0, 0, 10])))])  # replaces what the key held
    index.delete(["team#3", "team#404"])  # a key with no vector is no error
    assert index.nearest("team", question, RecallQuery(query="x"), 100) == [4, 1]
    assert engine.keys(BUCKET, INDEX) == {"team#1", "team#2", "team#4", "solo#5"}


def test_the_fake_refuses_what_s3_vectors_refuses(fake: tuple[S3VectorIndex, FakeS3Vectors]) -> None:
    _, engine = fake
    target: dict[str, Any] = {"vectorBucketName": BUCKET, "indexName": INDEX}
    with pytest.raises(FakeS3VectorsError):
        engine.query_vectors(**target, topK=101, queryVector={"float32": [1.0, 0.0, 0.0]})
    with pytest.raises(FakeS3VectorsError):
        engine.put_vectors(**target, vectors=[{"key": "k", "data": {"float32": [1.0]}}])
    with pytest.raises(FakeS3VectorsError):
        engine.delete_vectors(vectorBucketName=BUCKET, indexName="other", keys=["k"])


def test_a_list_metadata_value_matches_an_eq_on_any_of_its_elements() -> None:
    assert matches({"tags": {"$eq": "b"}}, {"tags": ["a", "b"]})
    assert not matches({"tags": {"$eq": "c"}}, {"tags": ["a", "b"]})
    every_status_but_deleted = query_filter("n", RetrievalQuery())
    assert matches(every_status_but_deleted, {"namespace": "n", "status": "invalid"})
    assert not matches(every_status_but_deleted, {"namespace": "n", "status": "deleted"})
    assert not matches(every_status_but_deleted, {"namespace": "other", "status": "active"})


def test_int8_codes_times_the_scale_are_the_float32_values() -> None:
    assert floats(Vector(bytes([127, 129, 0]), 0.25)) == [31.75, -31.75, 0.0]


def test_a_query_or_a_write_the_index_refuses_is_told_in_the_ports_terms_with_its_code(
    stubbed: tuple[S3VectorIndex, Stubber],
) -> None:
    index, stubber = stubbed
    stubber.add_client_error("query_vectors", "TooManyRequestsException", http_status_code=429)
    stubber.add_client_error("put_vectors", "AccessDeniedException", http_status_code=403)
    with pytest.raises(VectorSearchUnavailableError, match=r"refused the query \(TooManyRequestsException\)"):
        index.nearest("team", Vector(bytes([2, 0, 254]), 0.5), RecallQuery(query="fish"), 10)
    with pytest.raises(VectorIndexError, match=r"refused the write \(AccessDeniedException\)"):
        index.put([IndexedVector("team", _row(7, bytes([2, 255, 127])))])


def test_nearest_holding_words_asks_for_vectors_whose_terms_hold_one_of_them(
    stubbed: tuple[S3VectorIndex, Stubber],
) -> None:
    index, stubber = stubbed
    expected = query_request(33, {"$or": [{"terms": {"$eq": "lyon"}}, {"terms": {"$eq": "fish"}}]})
    stubber.add_response("query_vectors", {"vectors": [{"key": "team#4"}], "distanceMetric": "cosine"}, expected)
    query = RecallQuery(query="fish in Lyon")
    assert index.nearest("team", Vector(bytes([2, 0, 254]), 0.5), query, 33, ["lyon", "fish"]) == [4]


def test_a_vector_keeps_its_distinct_terms_in_order_as_far_as_its_filterable_metadata_holds_them(
    fake: tuple[S3VectorIndex, FakeS3Vectors],
) -> None:
    index, _ = fake
    words = tuple(f"word{n:03d}" for n in range(400))
    row = _row(1, bytes([1, 0, 0]), tags=("food",), content=" ".join(("fish", *words, "fish")))
    kept = metadata("team", row)
    assert kept["terms"][:3] == ["fish", "word000", "word001"]
    assert len(kept["terms"]) == len(set(kept["terms"])) < 401
    assert len(json.dumps(kept).encode()) <= FILTERABLE_BYTES < 2048
    index.put([IndexedVector("team", row)])
    question = Vector(bytes([1, 0, 0]), 1.0)
    assert index.nearest("team", question, RecallQuery(query="x"), 10, ["word001"]) == [1]
    assert index.nearest("team", question, RecallQuery(query="x"), 10, ["word399"]) == []  # past what it keeps
