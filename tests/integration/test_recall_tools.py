"""Recall's digests through the command line and the whole-table tools, on Amazon DynamoDB Local: a service without a
model writes digests of terms only, `import` writes digests that wait for the backfill (an export carries no
vectors), `embed` embeds what waits (and, after a change of model, what another model embedded), and an erase counts
the digests it removed."""

from __future__ import annotations

import io
import json
import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from adapters.dynamodb import DynamoDBMemoryRepository
from adapters.dynamodb.digests import unembed_other_models
from adapters.dynamodb.namespaces import Namespaces
from adapters.offline import offline_embedder
from core.contract import RetrievalQuery
from core.digest import Vector
from core.memories import MemoryService
from core.model import NewMemory
from core.recall.backfill import Backfill
from core.recall.embedding import EmbedderUnavailableError, Kind
from core.recall.indexing import RecallIndexer
from core.recall.standin import StandInEmbedder
from local import cli
from local.portability import export_namespace
from tests.conftest import Engine, FakeClock

NS = "alice"


class Unavailable(StandInEmbedder):
    def embed(self, texts: Sequence[str], kind: Kind) -> list[Vector]:
        raise EmbedderUnavailableError("Amazon Bedrock refused the embedding (AccessDeniedException)")


class Renamed(StandInEmbedder):
    """Another model, as far as the store can tell."""

    model = "stand-in:renamed"


class AccessDenied(BaseHTTPRequestHandler):
    """Amazon Bedrock refusing every call as it refuses a role without access to the model."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["content-length"]))
        body = json.dumps({"message": "You don't have access to the model with the specified model ID."}).encode()
        self.send_response(403)
        self.send_header("x-amzn-ErrorType", "AccessDeniedException")
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # the base class names it so
        return


@pytest.fixture
def access_denied() -> Iterator[str]:
    """The address of a loopback Bedrock that refuses every embedding."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), AccessDenied)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join()


@pytest.fixture
def indexed(ddb_local_repository: DynamoDBMemoryRepository, clock: FakeClock) -> MemoryService:
    return MemoryService(ddb_local_repository, clock, indexer=RecallIndexer(StandInEmbedder()))


def run(endpoint: str, table: str, capsys: pytest.CaptureFixture[str], *arguments: str) -> tuple[int, str, str]:
    code = cli.main([*arguments, "--endpoint-url", endpoint, "--table", table])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def waiting(repository: DynamoDBMemoryRepository) -> set[tuple[str, int]]:
    return {(entry.namespace, entry.memory_id) for entry in repository.unembedded(100)}


def test_a_service_without_a_model_writes_digests_of_terms_only_and_embed_embeds_them(
    dynamodb_local_endpoint: str,
    ddb_local_table: str,
    ddb_local_service: MemoryService,
    ddb_local_repository: DynamoDBMemoryRepository,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # ddb_local_service has no indexer: its digests hold their records, and wait for a vector.
    made = [ddb_local_service.create(NS, NewMemory.parse({"content": f"note {n}", "tags": ["t"]})) for n in range(3)]
    ddb_local_service.delete(NS, made[2].id)

    found = {c.memory_id: c for c in ddb_local_repository.recall_candidates(NS, RetrievalQuery())}
    assert {i: (c.record(), c.vector) for i, c in found.items()} == {m.id: (m, None) for m in made[:2]}
    assert waiting(ddb_local_repository) == {(NS, m.id) for m in made}

    code, out, _ = run(dynamodb_local_endpoint, ddb_local_table, capsys, "embed")

    model = offline_embedder().model
    assert (code, out) == (0, f"Embedded 3 memories with {model}.\n")
    assert waiting(ddb_local_repository) == set()
    assert {c.model for c in ddb_local_repository.recall_candidates(NS, RetrievalQuery(status="deleted"))} == {model}


def test_import_writes_digests_that_wait_for_the_backfill_and_the_export_carries_no_vectors(
    dynamodb_local_endpoint: str,
    ddb_local_table: str,
    indexed: MemoryService,
    ddb_local_repository: DynamoDBMemoryRepository,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    made = [indexed.create(NS, NewMemory.parse({"content": f"trip {n}", "tags": ["travel"]})) for n in range(2)]
    written = io.StringIO()
    arguments = ["export", "--namespace", NS, "--endpoint-url", dynamodb_local_endpoint, "--table", ddb_local_table]
    assert export_namespace(cli.build_parser().parse_args(arguments), written) == 0
    exported = written.getvalue()
    assert exported.count("\n") == 3
    assert "vec" not in exported
    (tmp_path / "alice.ndjson").write_text(exported)

    code, out, _ = run(
        dynamodb_local_endpoint, ddb_local_table, capsys, "import", "--namespace", "bob", str(tmp_path / "alice.ndjson")
    )

    assert code == 0, out
    assert "agent-memory embed" in out
    imported = ddb_local_repository.recall_candidates("bob", RetrievalQuery(tag="travel"))
    assert sorted((c.memory_id, c.content, c.tags, c.vector) for c in imported) == [
        (m.id, m.content, tuple(m.tags), None) for m in made
    ]
    assert waiting(ddb_local_repository) == {("bob", m.id) for m in made}
    assert Backfill(ddb_local_repository, StandInEmbedder()).until_done().embedded == 2
    by_id = {c.memory_id: c for c in ddb_local_repository.recall_candidates(NS, RetrievalQuery())}
    assert {c.memory_id: c.vector for c in ddb_local_repository.recall_candidates("bob", RetrievalQuery())} == {
        m.id: by_id[m.id].vector for m in made
    }


def test_after_a_change_of_model_every_digest_another_model_embedded_is_embedded_again(
    ddb_local_engine: Engine,
    ddb_local_table: str,
    indexed: MemoryService,
    ddb_local_repository: DynamoDBMemoryRepository,
) -> None:
    made = [indexed.create(NS, NewMemory.parse({"content": f"note {n}"})) for n in range(3)]
    assert waiting(ddb_local_repository) == set()

    marked = unembed_other_models(ddb_local_engine.client, ddb_local_table, Renamed.model)

    assert marked == 3
    assert waiting(ddb_local_repository) == {(NS, m.id) for m in made}
    assert {c.model for c in ddb_local_repository.recall_candidates(NS, RetrievalQuery())} == {StandInEmbedder.model}
    assert Backfill(ddb_local_repository, Renamed()).until_done().embedded == 3
    assert {c.model for c in ddb_local_repository.recall_candidates(NS, RetrievalQuery())} == {Renamed.model}
    assert unembed_other_models(ddb_local_engine.client, ddb_local_table, Renamed.model) == 0


def test_embed_says_so_when_the_model_cannot_embed_and_leaves_the_memories_waiting(
    dynamodb_local_endpoint: str,
    ddb_local_table: str,
    ddb_local_repository: DynamoDBMemoryRepository,
    clock: FakeClock,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    access_denied: str,
) -> None:
    outage = MemoryService(ddb_local_repository, clock, indexer=RecallIndexer(Unavailable()))
    created = outage.create(NS, NewMemory.parse({"content": "written while the model was down"}))
    # The deployed model's client, as the command makes it, sent to a Bedrock that refuses (botocore's own setting).
    monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", access_denied)

    code, out, err = run(dynamodb_local_endpoint, ddb_local_table, capsys, "embed", "--model", "bedrock")

    assert (code, out) == (1, "")
    assert "cannot embed now (Amazon Bedrock refused the embedding (AccessDeniedException))" in err
    assert waiting(ddb_local_repository) == {(NS, created.id)}


def test_an_erase_counts_the_recall_digests_it_removed(
    ddb_local_engine: Engine, ddb_local_table: str, indexed: MemoryService
) -> None:
    for n in range(2):
        indexed.create(NS, NewMemory.parse({"content": f"note {n}"}))

    removed = Namespaces(ddb_local_engine.client, ddb_local_table).erase(NS, lambda counts: None)

    assert removed == Counter(
        {
            "memories": 2,
            "recall digests": 2,
            "search copies": 2,
            "access items": 2,
            "revisions": 2,
            "id counters": 1,
            "totals": 1,
        }
    )
