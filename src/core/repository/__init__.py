"""The storage port: what the service needs from a store, whatever the engine behind it."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from core.access import ApiKey, Scope
from core.contract import RetrievalQuery
from core.history import Revision
from core.model import Memory
from core.repository.commit import Commit as Commit
from core.repository.commit import Loaded as Loaded
from core.repository.digests import DigestReads, StoredStamp
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
    """Memories of many namespaces; every method is confined to the namespace it is given. A store persists and
    reads; it decides nothing (core.changes decides every change; core.writes loads, commits, and retries a stale one).

    Each namespace keeps exact totals per `status` and `memory_type`, changed in the same atomic write as the
    memories they count, so a listing without `q` or `tag` never has to read the namespace to count it. Every
    method raises the domain's errors (core.errors).

    A write is `load`, then one `commit` (core.repository.commit) of what was decided: the records, their revisions,
    their digests (what recall ranks by, core.digest), behind the caller's LiveKey when there is one (None writes
    unfenced: an open server, the command line, tests). A read for a keyed caller is fenced by `confirm_live` after
    its data reads (`read` takes the LiveKey and does so itself, between its read and its stamp).
    """

    def next_id(self, namespace: str, live_key: LiveKey | None = None) -> int:
        """A fresh id from the namespace's atomic counter; ids may have gaps but never repeat. The counter is only
        ever created behind `live_key`, so a namespace's first id (1 again after an erase) needs a live key."""
        ...

    def load(self, namespace: str, memory_id: int) -> Loaded | None:
        """The memory as a write reads it (deleted ones, and ones whose removal has begun, too), by a strongly
        consistent read; None when there is none."""
        ...

    def load_all(self, namespace: str, memory_ids: Sequence[int]) -> list[Loaded | None]:
        """`load` of each of `memory_ids` (None where there is none), in their order, read together."""
        ...

    def commit(self, commit: Commit) -> None:
        """Persist `commit` whole or not at all: each change's record, its revision, its digest (or the stored one
        following the record), its idempotency record, and the namespace's totals, in one atomic write that holds only
        while each loaded memory (and each of its `checks`) is still as loaded and each created one has no record yet.

        StaleLoadError when a loaded memory changed meanwhile; CommitTooLargeError when the store cannot write this
        much in one atomic write (nothing sent); for a create, IdempotencyKeyTakenError when its key is
        recorded (live) for an earlier create, WriteConflictError when its id is taken or the same key's create is
        still in flight; AuthenticationError behind a key that is not live. Nothing is written in any of these.
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

    def history(self, namespace: str, memory_id: int, limit: int, offset: int) -> Revisions:
        """The memory's revisions, newest first, `limit` of them after skipping `offset`, and how many there are;
        deleted memories too. MemoryNotFoundError when it never existed or is purged (or being purged)."""
        ...

    def changes(self, namespace: str, since: str, limit: int, offset: int) -> Revisions:
        """The revisions of the namespace's memories logged at or after `since` (a change's own time, as the store
        logged it), newest first, `limit` of them after skipping `offset`, and how many there are; a purged memory's
        are gone with it. Eventually consistent: a change of the last moments may be missing."""
        ...

    def remove(self, namespace: str, loaded: Loaded) -> bool:
        """Remove a loaded memory for good: the record, its revisions, its digest, its idempotency record and every
        copy, with the totals moved (a tag left with no memory keeps no totals). False, removing nothing, when it is no
        longer as loaded; a removal interrupted half-way is finished by the next one."""
        ...

    def deleted_before(self, deleted_before: str) -> Iterator[tuple[str, int]]:
        """The namespace and id of every memory deleted before `deleted_before`, found without reading any other."""
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

    def stamp_with_prior(self, namespace: str, memory_ids: Sequence[int], accessed_at: str) -> dict[int, StoredStamp]:
        """Stamp each listed memory that is not deleted, as `stamp` does, and say what each held before: its status
        and stored `last_accessed_at` (a memory another reader stamped later meanwhile keeps that later stamp, and
        says it; a deleted one is not stamped and says its status). Ids with nothing stored are left out. What recall
        learns the `use` of its page from, without reading the stamps first: one write a memory, as `stamp`."""
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

    def note_use(self, key_id: str, at: str, stale_before: str) -> None:
        """Set the key's `last_used_at` to `at` if it is unset or older than `stale_before`; otherwise, or when the key
        is unknown, change nothing (one conditional write, never a new item)."""
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
