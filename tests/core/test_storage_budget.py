"""One budget per request (core.budget): the DynamoDB and Bedrock adapters send no attempt that could outlast it, a
budget opened inside another ends no later, the budget reaches the worker threads `serve` runs storage calls in, and
both doors open one around every request."""

from __future__ import annotations

import io
import json
from typing import Any

import anyio
import pytest
from botocore.awsrequest import AWSResponse

import core.budget
from adapters.bedrock import CONNECT_TIMEOUT_SECONDS, READ_TIMEOUT_SECONDS, BedrockEmbedder, make_bedrock_client
from adapters.dynamodb import DynamoDBKeyRepository, DynamoDBMemoryRepository
from core.budget import REQUEST_STORAGE_SECONDS, seconds_left, storage_budget
from core.contract import RetrievalQuery
from core.errors import StorageUnavailableError
from core.memories import MemoryService
from core.model import NewMemory
from core.recall.embedding import EmbedderUnavailableError
from core.recall.indexing import RecallIndexer
from core.recall.query import RecallQuery
from core.recall.service import RecallService
from core.recall.standin import StandInEmbedder
from handlers.concurrency import in_worker_thread
from tests.conftest import Engine

# make_client's defaults: one attempt waits at most its 2 s connect and 5 s read timeouts.
ATTEMPT_SECONDS = 2 + 5


class SentAttempts:
    """Counts the attempts botocore actually sends (after every check before sending)."""

    def __init__(self, client: Any) -> None:
        self.count = 0
        client.meta.events.register_last("before-send.dynamodb", self._sent)

    def _sent(self, **_: Any) -> None:
        self.count += 1


@pytest.fixture
def now(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    clock = [1000.0]
    monkeypatch.setattr(core.budget, "clock", lambda: clock[0])
    return clock


@pytest.mark.parametrize(("left", "sent"), [(ATTEMPT_SECONDS, 1), (ATTEMPT_SECONDS - 0.1, 0)])
def test_an_attempt_is_sent_only_while_its_worst_case_fits_in_what_is_left_of_the_budget(
    moto_engine: Engine, now: list[float], left: float, sent: int
) -> None:
    keys = DynamoDBKeyRepository(moto_engine.client, moto_engine.new_table())
    attempts = SentAttempts(moto_engine.client)

    with storage_budget(left):
        if sent:
            assert keys.get("0123456789ab") is None
        else:
            with pytest.raises(StorageUnavailableError, match="too slowly"):
                keys.get("0123456789ab")

    assert attempts.count == sent


def test_outside_any_budget_nothing_is_refused(moto_engine: Engine, now: list[float]) -> None:
    keys = DynamoDBKeyRepository(moto_engine.client, moto_engine.new_table())

    assert seconds_left() is None
    assert keys.get("0123456789ab") is None


def test_the_budget_reaches_the_worker_threads_serve_runs_storage_calls_in(now: list[float]) -> None:
    async def left_in_a_worker() -> float | None:
        with storage_budget():
            now[0] += 1
            return await in_worker_thread(seconds_left)

    assert anyio.run(left_in_a_worker) == REQUEST_STORAGE_SECONDS - 1


def test_a_budget_opened_inside_another_ends_no_later_than_it(now: list[float]) -> None:
    with storage_budget(10):
        with storage_budget():
            assert seconds_left() == 10
        now[0] += 4
        with storage_budget(2):
            assert seconds_left() == 2
        assert seconds_left() == 6
    assert seconds_left() is None


class Answered:
    """Answers every InvokeModel with a 256-dimension embedding before it leaves the client, counting the attempts."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, request: Any, **_: Any) -> AWSResponse:
        self.count += 1
        raw = io.BytesIO(json.dumps({"embedding": [0.0625] * 256, "inputTextTokenCount": 3}).encode())
        raw.stream = lambda **_: iter([raw.getvalue()])  # type: ignore[attr-defined]
        return AWSResponse(request.url, 200, {}, raw)  # type: ignore[arg-type]


# A write embeds its memory, then stores it: the embedding takes from the same budget, so the storage calls after it
# get what is left, and the request still ends within the budget (tests/infra/test_bedrock_bounds.py).
@pytest.mark.parametrize(
    ("left", "sent"),
    [(CONNECT_TIMEOUT_SECONDS + READ_TIMEOUT_SECONDS, 1), (CONNECT_TIMEOUT_SECONDS + READ_TIMEOUT_SECONDS - 0.1, 0)],
)
def test_an_embedding_is_asked_only_while_its_worst_case_fits_in_what_is_left_of_the_budget(
    now: list[float], monkeypatch: pytest.MonkeyPatch, left: float, sent: int
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    client = make_bedrock_client("us-east-1")
    answered = Answered()
    client.meta.events.register_last("before-send.bedrock-runtime", answered)  # type: ignore[arg-type]
    embedder = BedrockEmbedder(client)

    with storage_budget(left):
        if sent:
            assert len(embedder.embed(["The user is vegetarian."], "passage")) == 1
        else:
            with pytest.raises(EmbedderUnavailableError, match="within this request's budget"):
                embedder.embed(["The user is vegetarian."], "passage")

    assert answered.count == sent


class SeeingEmbedder(StandInEmbedder):
    """The stand-in model, noting what each embedding saw left of the budget."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[float | None] = []

    def embed(self, texts: Any, kind: Any) -> Any:
        self.seen.append(seconds_left())
        return super().embed(texts, kind)


def test_the_reads_stamps_and_embedding_a_request_hands_to_thread_pools_keep_its_budget(
    ddb_local_engine: Engine,
) -> None:
    # A search reads its totals and segments in the read pool and stamps in the stamp pool; a recall embeds its
    # question in a pool of its own while it reads the digests in the read pool: none may escape the budget.
    store = DynamoDBMemoryRepository(ddb_local_engine.client, ddb_local_engine.new_table())
    embedder = SeeingEmbedder()
    memories = MemoryService(store, indexer=RecallIndexer(embedder))
    for n in range(27):  # a page of 27 stamps in two batches, in the stamp pool
        memories.create("alice", NewMemory.parse({"content": f"the user drinks tea, note {n}", "tags": ["tea"]}))
    seen: list[float | None] = []
    client: Any = ddb_local_engine.client

    def note(**_: Any) -> None:
        seen.append(seconds_left())

    client.meta.events.register_last("before-send.dynamodb", note)
    embedder.seen.clear()

    with storage_budget():
        found = memories.search("alice", RetrievalQuery.parse({"q": "tea", "limit": 27}))
        recalled = RecallService(store, embedder).recall(
            "alice", RecallQuery.parse({"query": "what does the user drink?"})
        )

    client.meta.events.unregister("before-send.dynamodb", note)
    assert (len(found.items), recalled.total) == (27, 27)
    assert len(seen) >= 4
    assert None not in seen, seen
    assert embedder.seen
    assert None not in embedder.seen
