"""What each door is wired with, HTTP and MCP alike: the service it serves, how a request is authenticated, and how
every blocking service and key call runs (the entrypoint's concurrency policy, handlers.concurrency)."""

from __future__ import annotations

from dataclasses import dataclass

from core.memories import MemoryService
from handlers.auth import Authenticator
from handlers.concurrency import RunBlocking


@dataclass(frozen=True)
class Door:
    memories: MemoryService
    authenticate: Authenticator
    run_blocking: RunBlocking
