"""The write side of the storage port: what a write loads, and the one commit that persists what the service decided
(core.changes decides, core.writes orchestrates). A store persists a commit and knows no rule of the contract."""

from __future__ import annotations

from dataclasses import dataclass

from core.digest import Digest
from core.history import Revision
from core.model import IdempotentCreate, Memory, Status
from core.repository.fence import LiveKey


@dataclass(frozen=True)
class Deletion:
    """What a deleted memory keeps for a restore and the purge: the status it had, and when it was deleted."""

    prior_status: Status
    deleted_at: str


@dataclass(frozen=True)
class Loaded:
    """A stored memory as a write reads it (strongly consistent): the record with its stored stamp, how many revisions
    it has (0 for one imported without its history), its deletion when it is deleted, whether its removal has begun
    (a store that purges in steps marks it first), and `token`, which only the store that loaded it reads: a commit
    of a change computed from it lands only while the memory is still as loaded."""

    memory: Memory
    revisions: int
    deletion: Deletion | None
    purging: bool
    token: object


@dataclass(frozen=True)
class Change:
    """One memory's change, decided: the memory as loaded (None: it is created), the record after, its revision, its
    deletion after (None: not deleted), and its digest (None: the stored digest follows the record's status, type,
    `updated_at` and version, its text being unchanged). A create may carry its idempotency key."""

    before: Loaded | None
    after: Memory
    revision: Revision
    deletion: Deletion | None
    digest: Digest | None
    idempotency: IdempotentCreate | None = None


@dataclass(frozen=True)
class Commit:
    """One write of a namespace: its changes (each memory at most once), with their revisions, digests and the
    namespace's totals, all or nothing; only while each of `checks` (memories it reads but does not change) is still as
    loaded; behind `live_key`'s fence when there is one (AuthenticationError, nothing written, when the key is not
    live)."""

    namespace: str
    changes: tuple[Change, ...]
    live_key: LiveKey | None = None
    checks: tuple[Loaded, ...] = ()


class StaleLoadError(Exception):
    """A commit's memory is no longer as it was loaded (another write got in between); nothing was written. The
    service loads again and decides again; it never reaches a door."""

    def __init__(self, memory_id: int) -> None:
        self.memory_id = memory_id
        super().__init__(f"memory {memory_id} changed since it was loaded")


class CommitTooLargeError(Exception):
    """A commit holds more than its store writes in one atomic write (`items` of at most `limit`); nothing was sent. The
    service tells its caller to write less at once."""

    def __init__(self, items: int, limit: int) -> None:
        self.items = items
        self.limit = limit
        super().__init__(f"a commit of {items} items, where one atomic write holds at most {limit}")
