"""The vector index's stream consumer (handlers.aws.vectors) invoked with a DynamoDB Streams batch as Lambda delivers
it (events/dynamodb_stream_digests.json: NEW_IMAGE, binary values base64-encoded): it acts on digests only, puts the
last image of a digest with a vector of the ranking model, deletes a removed digest's or one without a vector, and
answers a partial batch response naming the records of a call that failed. Against the in-memory S3 Vectors and
against botocore's Stubber (the real request shapes)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import boto3
from botocore.stub import Stubber

from adapters.memory.s3vectors import FakeS3Vectors
from handlers.aws import vectors
from handlers.bootstrap.vectors import stream_sync

EVENT: dict[str, Any] = json.loads(
    (Path(__file__).resolve().parents[3] / "events" / "dynamodb_stream_digests.json").read_text(encoding="utf-8")
)
CONTEXT = SimpleNamespace(
    function_name="agent-memory-test-vector-sync",
    memory_limit_in_mb=256,
    invoked_function_arn="arn:aws:lambda:us-east-1:123456789012:function:agent-memory-test-vector-sync",
    aws_request_id="5f1c2d7e-7b61-11e6-9a41-93e812345678",
)
BUCKET, INDEX, MODEL = "agent-memory-test-vectors", "digests", "amazon.titan-embed-text-v2:0"
TARGET = {"vectorBucketName": BUCKET, "indexName": INDEX}
# The last image of digest 7: invalid since its first.
PUT = {
    "key": "team#7",
    "data": {"float32": [1.0, -0.5, 63.5]},
    "metadata": {
        "namespace": "team",
        "status": "invalid",
        "memory_type": "fact",
        "tags": ["food"],
        "terms": ["user", "eat", "fish", "friday", "food"],  # counted from the image's text and tags
    },
}


def _stubbed() -> tuple[Any, Stubber]:
    client = boto3.client("s3vectors", region_name="us-east-1", aws_access_key_id="test", aws_secret_access_key="test")
    return client, Stubber(client)


def test_a_batch_puts_the_last_image_of_each_embedded_digest_and_deletes_the_rest_in_two_calls() -> None:
    client, stubber = _stubbed()
    stubber.add_response("put_vectors", {}, {**TARGET, "vectors": [PUT]})
    stubber.add_response("delete_vectors", {}, {**TARGET, "keys": ["team#8", "team#9"]})
    with stubber:
        answer = vectors.entrypoint(stream_sync(client, BUCKET, INDEX, MODEL))(EVENT, CONTEXT)
        stubber.assert_no_pending_responses()
    assert answer == {"batchItemFailures": []}


def test_the_index_follows_the_table_and_a_batch_applied_twice_changes_nothing() -> None:
    engine = FakeS3Vectors()
    engine.create_index(BUCKET, INDEX, 3)
    engine.put_vectors(**TARGET, vectors=[{"key": "team#9", "data": {"float32": [1.0, 0.0, 0.0]}}])
    handler = vectors.entrypoint(stream_sync(engine, BUCKET, INDEX, MODEL))
    for _ in range(2):
        assert handler(EVENT, CONTEXT) == {"batchItemFailures": []}
        assert engine.keys(BUCKET, INDEX) == {"team#7"}


def test_a_digest_of_another_model_is_taken_out_of_the_index() -> None:
    engine = FakeS3Vectors()
    engine.create_index(BUCKET, INDEX, 3)
    handler = vectors.entrypoint(stream_sync(engine, BUCKET, INDEX, "another-model"))
    assert handler(EVENT, CONTEXT) == {"batchItemFailures": []}
    assert engine.keys(BUCKET, INDEX) == set()


def test_a_refused_call_reports_every_record_of_its_keys_for_a_retry() -> None:
    client, stubber = _stubbed()
    stubber.add_client_error("put_vectors", "ServiceUnavailableException", http_status_code=503)
    stubber.add_response("delete_vectors", {}, {**TARGET, "keys": ["team#8", "team#9"]})
    with stubber:
        answer = vectors.entrypoint(stream_sync(client, BUCKET, INDEX, MODEL))(EVENT, CONTEXT)
    digest_7 = [
        {"itemIdentifier": record["dynamodb"]["SequenceNumber"]}
        for record in EVENT["Records"]
        if record["dynamodb"]["Keys"]["sk"]["S"] == "RCL#0000000007"
    ]
    assert len(digest_7) == 2
    assert answer == {"batchItemFailures": digest_7}


def test_a_record_that_cannot_be_read_is_reported_and_the_others_are_applied() -> None:
    engine = FakeS3Vectors()
    engine.create_index(BUCKET, INDEX, 3)
    broken = json.loads(json.dumps(EVENT["Records"][0]))
    del broken["dynamodb"]["NewImage"]["updated_at"]
    broken["dynamodb"]["SequenceNumber"] = "4421584500000000017450439090"
    handler = vectors.entrypoint(stream_sync(engine, BUCKET, INDEX, MODEL))
    answer = handler({"Records": [broken, *EVENT["Records"]]}, CONTEXT)
    assert answer == {"batchItemFailures": [{"itemIdentifier": "4421584500000000017450439090"}]}
    assert engine.keys(BUCKET, INDEX) == {"team#7"}
