"""The id segments a recall reads the digests in follow the model's dimensions: a segment of the largest digests the
allowance covers (each fixed attribute at its largest, content and tags deflated to the allowance, a vector of the
model's dimensions) stays one 1 MB page by DynamoDB's item-size rules, whatever the dimensions; and the services read
in the segments of their model's dimensions."""

from __future__ import annotations

import random

import pytest

from adapters.dynamodb.codec import COUNTER_SK, DIGEST_PREFIX, memory_partition
from adapters.dynamodb.digests import to_digest
from adapters.dynamodb.queries import DIGEST_BYTES_BESIDE_VECTOR, digest_segment_ids
from bench.capacity import PAGE_BYTES, item_size
from core.digest import Digest, Vector
from core.limits import MAX_MEMORY_ID, MAX_VERSION, TAG_MAX_CHARS
from core.model import Memory, NewMemory
from core.recall.query import RecallQuery
from core.recall.standin import StandInEmbedder
from handlers import bootstrap
from tests.conftest import Engine
from tests.listings import Queries

# The longest a namespace, and a model's name, can be (core.access, handlers.bootstrap.settings).
LONGEST_NAMESPACE = "n" * 64
LONGEST_MODEL = "m" * 200
MOMENT = "2026-04-06T14:12:00.000000Z"
CREATED = "2026-04-05T09:30:00.000000Z"
WORDS = ("green", "tea", "morning", "espresso", "lunch", "reading", "jazz", "piano", "garden", "lisbon")


def largest_digest_item(dimensions: int) -> dict[str, dict[str, object]]:
    """The largest digest item the allowance covers: every attribute but the content at its longest (a creation time
    apart from the update time), and varied words (deflate shrinks them little) up to the allowance."""
    rng = random.Random(dimensions)
    vector = Vector(bytes(rng.randrange(256) for _ in range(dimensions)), 0.012345678901234567)
    words: list[str] = []

    def digest_of(content: str) -> dict[str, dict[str, object]]:
        memory = Memory(
            id=MAX_MEMORY_ID,
            content=content,
            tags=["t" * TAG_MAX_CHARS] * 2,
            created_at=CREATED,
            updated_at=MOMENT,
            last_accessed_at=None,
            memory_type="preference",
            status="invalid",
            version=MAX_VERSION,
        )
        return to_digest(LONGEST_NAMESPACE, memory, Digest(vector, LONGEST_MODEL))

    item = digest_of("c")
    while True:
        words.append(f"{rng.choice(WORDS)}{rng.randrange(1000)}")
        longer = digest_of(" ".join(words))
        if item_size(longer) > DIGEST_BYTES_BESIDE_VECTOR + dimensions:
            return item
        item = longer


@pytest.mark.parametrize(("dimensions", "ids"), [(256, 819), (384, 744), (512, 682), (1024, 512), (3072, 256)])
def test_a_segment_holds_fewer_ids_the_more_dimensions_the_model_has(dimensions: int, ids: int) -> None:
    assert digest_segment_ids(dimensions) == ids


def test_segments_shrink_as_dimensions_grow_and_never_below_one_id() -> None:
    sizes = [digest_segment_ids(dimensions) for dimensions in (1, 64, 256, 384, 768, 1024, 1536, 3072, 8192, 10**6)]

    assert sizes == sorted(sizes, reverse=True)
    assert sizes[-1] == 1


@pytest.mark.parametrize("dimensions", [64, 256, 384, 512, 768, 1024, 1536, 3072])
def test_a_segment_of_the_largest_digests_the_allowance_covers_is_one_1_mb_page(dimensions: int) -> None:
    item = largest_digest_item(dimensions)

    assert item_size(item) <= DIGEST_BYTES_BESIDE_VECTOR + dimensions
    assert item_size(item) > DIGEST_BYTES_BESIDE_VECTOR + dimensions - 16  # the allowance is (nearly) all used
    assert digest_segment_ids(dimensions) * item_size(item) <= PAGE_BYTES


def test_the_services_read_recalls_segments_sized_for_their_models_dimensions(
    moto_engine: Engine, moto_table: str
) -> None:
    embedder = StandInEmbedder()
    services = bootstrap.build_services(bootstrap.Settings(table_name=moto_table), moto_engine.client, embedder)
    services.memories.create("alice", NewMemory.parse({"content": "the user likes green tea"}))
    # Ids drawn up to 2,000 (an import keeps its ids): the digests' range spans several segments.
    counter = {"pk": memory_partition("alice"), "sk": {"S": COUNTER_SK}}
    moto_engine.client.update_item(
        TableName=moto_table,
        Key=counter,
        UpdateExpression="SET next_id = :n",
        ExpressionAttributeValues={":n": {"N": "2000"}},
    )
    queries = Queries(moto_engine)
    assert services.recall is not None

    services.recall.recall("alice", RecallQuery.parse({"query": "tea"}), stamp=False)

    ranges = sorted(
        (int(sent[":first"]["S"][len(DIGEST_PREFIX) :]), int(sent[":last"]["S"][len(DIGEST_PREFIX) :]))
        for sent in (query["ExpressionAttributeValues"] for query in queries.sent)
        if sent.get(":first", {}).get("S", "").startswith(DIGEST_PREFIX)
    )
    size = digest_segment_ids(embedder.dimensions)
    assert ranges[:2] == [(1, size), (size + 1, 2 * size)]
