"""The storage port: what the service needs from a store, whatever the engine behind it."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from core.access import ApiKey, Scope
from core.contract import RetrievalQuery
from core.digest import Digest, Indexer
from core.history import Revision
from core.model import IdempotentCreate, Memory, MemoryChanges
from core.repository.digests import DigestReads
from core.repository.fence import KEY_NOT_LIVE as KEY_NOT_LIVE
from core.repository.fence import READ_KEY_NOT_LIVE as READ_KEY_NOT_LIVE
from core.repository.fence import LiveKey as LiveKey
from core.repository.fence import fence_of as fence_of


@dataclass(frozen=True)
class PriorCreate:
    """What an earlier create with the same idempotency key left: enough to answer its retry exactly."""

    memory_id: int
    created_at: str
    fingerprint: str


class IdempotencyKeyTakenError(Exception):
    """`add` found the idempotency key already used within its window; `prior` is that create."""

    def __init__(self, prior: PriorCreate) -> None:
        self.prior = prior
        super().__init__(f"idempotency key already used for memory {prior.memory_id}")


@dataclass(frozen=True)
class Matches:
    """One page of the memories a retrieval matches, and the number of matches before paging. `stored_stamps`: each
    row's `last_accessed_at` is the stored one (else it is None: the store did not read it)."""

    items: list[Memory]
    total: int
    stored_stamps: bool = False


@dataclass(frozen=True)
class Revisions:
    """One page of a memory's revisions, newest first, and how many it has."""

    items: list[Revision]
    total: int


class MemoryRepository(DigestReads, Protocol):
    """Memories of many namespaces; every method is confined to the namespace it is given.

    Each namespace keeps exact totals per `status` and `memory_type`, changed in the same atomic write as the
    memories they count, so a listing without `q` or `tag` never has to read the namespace to count it. Every
    method raises the domain's errors (core.errors); concurrent writers are retried here, a bounded number of
    times, never by the caller.

    Every change of a memory (create, a PATCH that changes it, delete, restore) stores its revision in the same
    atomic write (numbered 1, 2, ... in the memory's life), recording `key_id`, the API key that made it.

    Every write that can create or change a memory takes `live_key`: with one, the write lands only while that key
    is live (LiveKey), else AuthenticationError and nothing is written; None writes unfenced (an open server, the
    command line, tests). A read for a keyed caller is fenced by `confirm_live` after its data reads (`read` takes
    the LiveKey and does so itself, between its read and its stamp).

    Beside each memory is its digest (core.digest), what recall ranks by, written in the same atomic write as every
    change: `add` stores the one it is given; `apply` stores a new one computed by `indexer` when the content or tags
    change, and otherwise, as delete and restore do, carries the memory's status, type, `updated_at` and version
    into the stored one; `purge` removes it. Every memory has its digest from its first write: without one (`digest`
    or `indexer` None; MemoryService always computes one) the store keeps a digest without terms, waiting for the
    backfill to embed it.
    """

    def next_id(self, namespace: str, live_key: LiveKey | None = None) -> int:
        """A fresh id from the namespace's atomic counter; ids may have gaps but never repeat. The counter is only
        ever created behind `live_key`, so a namespace's first id (1 again after an erase) needs a live key."""
        ...

    def add(
        self,
        namespace: str,
        memory: Memory,
        idempotency: IdempotentCreate | None = None,
        key_id: str | None = None,
        live_key: LiveKey | None = None,
        digest: Digest | None = None,
    ) -> None:
        """Store a new memory, its digest, and count it, atomically; never overwrites an existing id.

        With `idempotency`, the key is recorded in the same write for IDEMPOTENCY_WINDOW_SECONDS; when the key is
        already recorded, nothing is written and IdempotencyKeyTakenError names the earlier create. An identical
        request still in flight is a WriteConflictError.
        """
        ...

    def read(self, namespace: str, memory_id: int, accessed_at: str | None, live_key: LiveKey | None = None) -> Memory:
        """Stamp a visible memory's `last_accessed_at` with `accessed_at` (never backwards) and return it, in one
        round trip; with None, return it as stored, stamping nothing. MemoryNotFoundError when the memory is
        missing or deleted; a missing memory is never created.

        With `live_key`, the memory is read first, then `confirm_live(live_key)` is checked (a refused key stamps
        nothing and learns nothing, not even that the memory is missing), and only then is it stamped: one step after
        another, not one round trip.
        """
        ...

    def confirm_live(self, live_key: LiveKey) -> None:
        """The read fence: AuthenticationError (READ_KEY_NOT_LIVE) unless the key of `live_key` is live exactly as a
        fenced write requires (stored, not revoked, not expired at its `now`), by a strongly consistent read of the
        key (one read unit), never a cache. Every read made for a keyed caller calls it after reading its data and
        before stamping or answering (LiveKey)."""
        ...

    def apply(
        self,
        namespace: str,
        memory_id: int,
        changes: MemoryChanges,
        expected_versions: frozenset[int] | None,
        now: str,
        key_id: str | None = None,
        live_key: LiveKey | None = None,
        indexer: Indexer | None = None,
    ) -> Memory:
        """Apply one PATCH and return the stored memory.

        `expected_versions` None admits any version; otherwise the stored version must be one of them (an empty
        set admits none), else VersionMismatchError names the current version, even when the PATCH would change
        nothing. MemoryNotFoundError when the memory is missing or deleted. When no given field actually changes,
        the stored memory comes back unchanged (same version, same `updated_at`); otherwise every given field is
        written with `updated_at = now` and the next version, and the memory moves between totals when its
        status or type changes, all in one atomic write conditional on the version it was computed from. A
        memory that keeps changing under the write is a WriteConflictError; one at MAX_VERSION that would change is
        a VersionExhaustedError.
        """
        ...

    def delete(
        self, namespace: str, memory_id: int, now: str, key_id: str | None = None, live_key: LiveKey | None = None
    ) -> None:
        """Mark a visible memory deleted at `now`, leaving `version` and `updated_at` and keeping the status it had
        for a restore, and move it between totals.

        MemoryNotFoundError when the memory is missing or already deleted.
        """
        ...

    def restore(
        self, namespace: str, memory_id: int, now: str, key_id: str | None = None, live_key: LiveKey | None = None
    ) -> Memory:
        """Give a deleted memory back the status it had before the delete (`version` and `updated_at` stay), move
        it between totals, and return it. MemoryNotFoundError when it is missing, not deleted or being purged."""
        ...

    def history(self, namespace: str, memory_id: int, limit: int, offset: int) -> Revisions:
        """The memory's revisions, newest first, `limit` of them after skipping `offset`, and how many there are;
        deleted memories too. MemoryNotFoundError when it never existed or is purged (or being purged)."""
        ...

    def purge(self, namespace: str, memory_id: int) -> None:
        """Remove a deleted memory for good: the record, its revisions, its tag copies, its digest and its idempotency
        record, with the totals moved; a tag it leaves with no memory at all keeps no totals. MemoryNotFoundError
        when it is missing or not deleted."""
        ...

    def purge_deleted(self, deleted_before: str) -> int:
        """Purge every memory deleted before `deleted_before` without reading any other (no scan); how many."""
        ...

    def find(self, namespace: str, query: RetrievalQuery) -> Matches:
        """The page `query` asks for, in the contract's total order, and the exact number of matches.

        Rows come back as stored, except `last_accessed_at`, which is None unless the page says `stored_stamps` (a
        listing that stamps its rows needs none, so a store need not read them: `records` reads them when wanted).
        Without `status`, deleted memories are left out.
        """
        ...

    def stamp(self, namespace: str, memory_ids: Sequence[int], accessed_at: str) -> None:
        """Set `last_accessed_at` on each listed memory concurrently (deleted ones too, when a listing asked for
        them: a stamp never changes `status`); never creates a memory or moves the stamp back."""
        ...


class KeyRepository(Protocol):
    """The API keys of every namespace, by key id."""

    def add(self, key: ApiKey) -> None:
        """Store a new key; never overwrites an existing key id (WriteConflictError instead)."""
        ...

    def get(self, key_id: str) -> ApiKey | None:
        """The stored key by a strongly consistent read, so a revoke is seen at once; None when unknown."""
        ...

    def find(self, namespace: str | None) -> Iterator[ApiKey]:
        """Every key (revoked and expired ones included), or only one namespace's."""
        ...

    def revoke(self, key_id: str) -> ApiKey | None:
        """Mark the key revoked (again, harmlessly, if it already is) and return it; None when unknown."""
        ...


@dataclass(frozen=True)
class Client:
    """A registered OAuth client: its RFC 7591 metadata as JSON (what the door validated), and until when the
    registration lasts unless used (epoch seconds)."""

    client_id: str
    metadata: str
    expires_at: int


@dataclass(frozen=True)
class Grant:
    """What one consent granted one client, and the hashes of the tokens it issued. Times are epoch seconds."""

    grant_id: str
    client_id: str
    namespace: str
    scopes: tuple[Scope, ...]
    key_id: str
    resource: str
    redirect_uri: str
    code_challenge: str
    code_hash: str
    code_expires_at: int
    code_used: bool = False
    refresh_hash: str | None = None
    expires_at: int = 0  # when the grant ends unless refreshed: the code's expiry until it is redeemed
    access_hash: str | None = None
    access_scopes: tuple[Scope, ...] = ()
    access_expires_at: int = 0
    revoked: bool = False


# Which bound refused a registration: its caller's, or everyone's together.
RegistrationBound = Literal["caller", "total"]


@dataclass(frozen=True)
class RegistrationWindow:
    """The fixed window a new client registration is counted in (epoch seconds, `starts_at` to `ends_at`): once for
    its caller (`caller`, a hash: never the address itself) and once in total, each at most `per_caller` and `total`
    registrations. The counts last until the window ends."""

    caller: str
    starts_at: int
    ends_at: int
    per_caller: int
    total: int


class GrantRepository(Protocol):
    """Clients and grants, by id. Reads are strongly consistent, so a revoke or a rotation is seen at once."""

    def add_client(self, client: Client, window: RegistrationWindow) -> RegistrationBound | None:
        """Count the registration in `window` for its caller, then in total, then store the client; each count is
        conditional, so none passes its bound. When one would, nothing more is counted or stored and that bound is
        returned (a registration the total refuses still counts for its caller: it tried). Never overwrites a client
        (WriteConflictError)."""
        ...

    def get_client(self, client_id: str) -> Client | None: ...

    def add_grant(self, grant: Grant, live_key: LiveKey) -> None:
        """Store a new grant, only while its consenting key is live (LiveKey: AuthenticationError and nothing
        written otherwise, so a consent racing a namespace erase leaves no grant behind); never overwrites one
        (WriteConflictError instead)."""
        ...

    def get_grant(self, grant_id: str) -> Grant | None: ...

    def issue(self, issued: Grant, expected_hash: str, spent: bool, client_expires_at: int | None) -> bool:
        """Store `issued` (new refresh and access token hashes) in place of the stored grant, only if that grant is
        not revoked and still holds `expected_hash`: its unused code (`spent=False`: a redemption) or its current
        refresh token (`spent=True`: a rotation, which also remembers that refresh token as spent). Extends the
        client's registration to `client_expires_at`, which must then be stored; None for a client that has none
        (known by its metadata document). False when the condition failed and nothing was written."""
        ...

    def is_spent(self, grant_id: str, refresh_hash: str) -> bool:
        """Whether `refresh_hash` is a refresh token of the grant that a rotation replaced."""
        ...

    def revoke(self, grant_id: str) -> None:
        """Mark the grant revoked (harmlessly again if it is); nothing when there is no such grant."""
        ...

    def secret(self, candidate: bytes) -> bytes:
        """The authorization server's secret: the one stored, or `candidate` stored now when there is none (never
        overwriting one another instance stored first), so every instance gets the same one, across restarts."""
        ...
