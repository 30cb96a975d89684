"""The storage ports (core.repository) in memory: the fake every door test runs on, and the bench's in-memory store.

It runs the repository contract suite beside moto and DynamoDB Local (tests/integration), so it cannot drift from
them. Plain on purpose: one lock per repository, copies in and out, the contract's order written once. No
entrypoint imports it, so no function ships it (an import-linter contract keeps the doors off it).
"""

from adapters.memory.grants import InMemoryGrantRepository
from adapters.memory.keys import InMemoryKeyRepository
from adapters.memory.memories import InMemoryMemoryRepository

__all__ = ["InMemoryGrantRepository", "InMemoryKeyRepository", "InMemoryMemoryRepository"]
