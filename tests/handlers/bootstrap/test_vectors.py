"""The composition of recall's vector index (handlers.bootstrap.vectors): wired only when the environment names the
index (the template's RecallVectorIndex), and asking the table's id counter how many memories a namespace holds."""

from __future__ import annotations

from adapters.dynamodb.provisioning import ensure_table
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


def test_the_index_counts_a_namespace_from_the_tables_id_counter(moto_engine: Engine) -> None:
    settings = bootstrap.Settings(table_name="agent-memory-vectors-test")
    ensure_table(moto_engine.client, settings.table_name, table_definition())
    memories = bootstrap.build_services(settings, moto_engine.client, StandInEmbedder()).memories
    for number in range(3):
        memories.create("team", NewMemory.parse({"content": f"memory {number}"}))
    vectors = recall_vectors(ON, moto_engine.client, settings)
    assert vectors is not None
    assert vectors.holds("team") == 3
    assert vectors.holds("nobody") == 0
