"""What each door is wired with, HTTP and MCP alike: the services it serves (the memories, and recall's ranking), how
a request is authenticated, and how every blocking service and key call runs (the entrypoint's concurrency policy,
handlers.concurrency)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.keys import KeyService
from core.memories import MemoryService
from handlers.auth import Authenticator
from handlers.concurrency import RunBlocking

if TYPE_CHECKING:
    from core.recall.service import RecallService


class RecallNotWiredError(RuntimeError):
    """A door built without a RecallService was asked to recall: a wiring mistake (every deployed or served door has
    one, handlers.bootstrap), never the caller's, so it is a 500 and not a domain error."""


@dataclass(frozen=True)
class Door:
    memories: MemoryService
    authenticate: Authenticator
    run_blocking: RunBlocking
    # None only where a door is built for tests of other operations.
    recall_service: RecallService | None = None
    # The API keys the namespace's keys are listed and revoked through; None on a door without keys (an open local
    # server, tests of other operations): it lists none.
    keys: KeyService | None = None

    @property
    def recall(self) -> RecallService:
        if self.recall_service is None:
            raise RecallNotWiredError("this door was built without a RecallService (handlers.bootstrap wires one)")
        return self.recall_service
