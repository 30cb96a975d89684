"""Fixtures of the integration tests."""

from __future__ import annotations

import pytest

from adapters.dynamodb import DynamoDBMemoryRepository
from adapters.memory import InMemoryMemoryRepository
from core.memories import MemoryService
from tests.conftest import FakeClock


@pytest.fixture
def twins(ddb_local_repository: DynamoDBMemoryRepository, clock: FakeClock) -> tuple[MemoryService, MemoryService]:
    """The same memories stored twice, on DynamoDB Local (ddb_local_repository, in ddb_local_table) and in memory,
    written through the same calls."""
    return MemoryService(ddb_local_repository, clock), MemoryService(InMemoryMemoryRepository(), clock)
