"""The composition of recall's vector index (handlers.bootstrap.vectors): wired only when the environment names the
index (the template's RecallVectorIndex), and asking the table's id counter how many memories a namespace holds, for
a namespace a backfill has marked as held whole by that index (adapters/vectorfill.py) and for no other."""

from __future__ import annotations

from adapters.dynamodb.indexed import IndexedNamespaces
from adapters.dynamodb.provisioning import ensure_table
from adapters.s3vectors import index_label
from core.model import NewMemory
from core.recall.standin import StandInEmbedder
from handlers import bootstrap
from handlers.bootstrap.vectors import recall_vectors
from local.template import table_definition
from tests.conftest import Engine

ON = {"VECTOR_BUCKET": "agent-memory-test-123456789012-vectors", "VECTOR_INDEX": "digests"}


def test_no_vector_index_is_asked_unless_the_environment_names_one(moto_engine: Engine) -> None:
    settings = bootstrap.Settings()
    assert recall_vectors({}, moto_engine.client, settings) is None
    assert recall_vectors({"VECTOR_BUCKET": "", "VECTOR_INDEX": ""}, moto_engine.client, settings) is None
    assert recall_vectors({"VECTOR_BUCKET": ON["VECTOR_BUCKET"]}, moto_engine.client, settings) is None


def _team_of_three(engine: Engine, settings: bootstrap.Settings) -> None:
    ensure_table(engine.client, settings.table_name, table_definition())
    memories = bootstrap.build_services(settings, engine.client, StandInEmbedder()).memories
    for number in range(3):
        memories.create("team", NewMemory.parse({"content": f"memory {number}"}))


def test_a_namespace_no_backfill_has_marked_is_held_by_no_index_and_read_whole(moto_engine: Engine) -> None:
    settings = bootstrap.Settings(table_name="agent-memory-vectors-test")
    _team_of_three(moto_engine, settings)
    vectors = recall_vectors(ON, moto_engine.client, settings)
    assert vectors is not None
    assert vectors.holds("team") == 0


def test_the_index_counts_a_namespace_it_holds_whole_from_the_tables_id_counter(moto_engine: Engine) -> None:
    settings = bootstrap.Settings(table_name="agent-memory-vectors-test")
    _team_of_three(moto_engine, settings)
    table = IndexedNamespaces(moto_engine.client, settings.table_name)
    label = index_label(
        ON["VECTOR_BUCKET"], ON["VECTOR_INDEX"], settings.embedding_model, settings.embedding_dimensions
    )
    assert table.mark("team", _epoch(moto_engine, settings.table_name), label)
    vectors = recall_vectors(ON, moto_engine.client, settings)
    assert vectors is not None
    assert vectors.holds("team") == 3
    assert vectors.holds("nobody") == 0


def test_a_mark_of_another_index_or_model_dimension_counts_for_nothing(moto_engine: Engine) -> None:
    settings = bootstrap.Settings(table_name="agent-memory-vectors-test")
    _team_of_three(moto_engine, settings)
    table = IndexedNamespaces(moto_engine.client, settings.table_name)
    stale = index_label(ON["VECTOR_BUCKET"], ON["VECTOR_INDEX"], settings.embedding_model, 1024)
    assert table.mark("team", _epoch(moto_engine, settings.table_name), stale)
    vectors = recall_vectors(ON, moto_engine.client, settings)
    assert vectors is not None
    assert vectors.holds("team") == 0


def test_a_mark_is_refused_once_the_namespace_was_erased_and_started_again(moto_engine: Engine) -> None:
    settings = bootstrap.Settings(table_name="agent-memory-vectors-test")
    _team_of_three(moto_engine, settings)
    table = IndexedNamespaces(moto_engine.client, settings.table_name)
    assert not table.mark("team", "an-epoch-gone-by", "any index")
    assert not table.mark("nobody", "an-epoch-gone-by", "any index")
    assert table.indexed_in("team") is None


def _epoch(engine: Engine, table: str) -> str:
    key = {"pk": {"S": "NS#team"}, "sk": {"S": "COUNTER"}}
    return str(engine.client.get_item(TableName=table, Key=key, ConsistentRead=True)["Item"]["born"]["S"])
