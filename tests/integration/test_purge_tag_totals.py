"""A purge leaves no totals behind for a tag no memory has any more (on request and by the sweep), on Amazon
DynamoDB Local: the in-memory store keeps no tag totals."""

from __future__ import annotations

from datetime import timedelta

import pytest

from core.contract import RetrievalQuery
from core.memories import MemoryService
from core.model import NewMemory
from tests.conftest import Engine, FakeClock
from tests.copies import assert_copies_mirror, scan

NS = "alice"


def tag_totals(engine: Engine, table: str) -> dict[str, dict[str, int]]:
    """Each of NS's tags that has a STATS item, and its counters that are not 0."""
    prefix = f"NS#{NS}#TAG#"
    return {
        item["pk"]["S"][len(prefix) :]: {
            name: int(value["N"]) for name, value in item.items() if name.startswith("n_") and value["N"] != "0"
        }
        for item in scan(engine, table)
        if item["pk"]["S"].startswith(prefix) and item["sk"]["S"] == "STATS"
    }


@pytest.mark.parametrize("purge", ["request", "sweep"])
def test_a_purge_removes_the_totals_of_tags_no_memory_has_and_keeps_the_others(
    ddb_local_engine: Engine, ddb_local_table: str, ddb_local_service: MemoryService, clock: FakeClock, purge: str
) -> None:
    service = ddb_local_service
    service.create(NS, NewMemory.parse({"content": "gone for good", "tags": ["solo", "shared", "retagged"]}))
    service.create(NS, NewMemory.parse({"content": "stays", "tags": ["shared"], "memory_type": "event"}))
    service.delete(NS, 1)

    if purge == "request":
        service.purge(NS, 1)
    else:
        clock.advance(days=31)
        assert service.purge_expired(timedelta(days=30)) == 1

    assert tag_totals(ddb_local_engine, ddb_local_table) == {"shared": {"n_active_event": 1}}
    assert service.search(NS, RetrievalQuery.parse({"tag": "solo", "status": "deleted"})).total == 0
    assert service.search(NS, RetrievalQuery.parse({"tag": "shared"})).total == 1
    assert_copies_mirror(ddb_local_engine, ddb_local_table, NS)
    # A tag counted again after its totals went starts them anew.
    service.create(NS, NewMemory.parse({"content": "back", "tags": ["solo"]}))
    assert tag_totals(ddb_local_engine, ddb_local_table)["solo"] == {"n_active_fact": 1}
