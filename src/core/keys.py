"""The API key use cases: create (the plaintext shown once), authenticate, list and revoke, over a KeyRepository."""

from __future__ import annotations

import contextlib
import hmac
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

from core.access import (
    INVALID_KEY,
    SCOPES,
    ApiKey,
    Principal,
    expired,
    hash_key,
    is_key_id,
    key_id_of,
    may_revoke,
    new_key,
    parse_scopes,
    validate_key_name,
    validate_namespace,
)
from core.cache import TtlCache
from core.clock import Clock, format_timestamp, utc_now
from core.errors import (
    AuthenticationError,
    FieldError,
    InvalidInputError,
    KeyNotFoundError,
    StorageUnavailableError,
    WriteConflictError,
)
from core.repository import KeyRepository

# How long a verified key (its hash check and principal) is trusted without asking the store again: a revoke elsewhere
# refuses the key outright within this long. Whether it may still read or write is never the cache's to say: every
# read and write is fenced on the key's item in the store (core.repository.LiveKey), which a revoke ends at once.
CACHE_TTL: Final = timedelta(seconds=30)
# Only keys that verified are cached, so this bounds memory by the number of live keys, not by what callers send.
CACHE_MAX_ENTRIES: Final = 1024
CREATE_ATTEMPTS: Final = 3
# How stale a key's `last_used_at` may grow: a use is written only when the stored one is older than this, so a busy
# key costs at most one conditional write an hour (per process that reads it then, and only one of those succeeds).
LAST_USED_EVERY: Final = timedelta(hours=1)


@dataclass(frozen=True)
class _Verified:
    principal: Principal
    expires_at: str | None


class KeyService:
    def __init__(
        self,
        repository: KeyRepository,
        clock: Clock = utc_now,
        cache_ttl: timedelta = CACHE_TTL,
        cache_max_entries: int = CACHE_MAX_ENTRIES,
    ) -> None:
        self._repository = repository
        self._clock = clock
        # Keyed by the SHA-256 of the presented key, never by the key itself.
        self._cache: TtlCache[str, _Verified] = TtlCache(cache_ttl, cache_max_entries, clock)
        # Keyed by key id: the keys that consented to OAuth grants (principal_of).
        self._by_id: TtlCache[str, _Verified] = TtlCache(cache_ttl, cache_max_entries, clock)

    def create(
        self,
        namespace: str,
        scopes: Iterable[str] = SCOPES,
        expires_in: timedelta | None = None,
        name: str | None = None,
    ) -> tuple[ApiKey, str]:
        """A new key and its plaintext, which exists only in this return value: show it once, never store it. `name`
        is what a person calls it (listings and the console show it)."""
        namespace = validate_namespace(namespace)
        name = validate_key_name(name) if name is not None else None
        granted = parse_scopes(scopes)
        if expires_in is not None and expires_in <= timedelta(0):
            raise InvalidInputError([FieldError("expires_in", "must be a positive duration")])
        now = self._clock()
        expires_at = format_timestamp(now + expires_in) if expires_in is not None else None
        for _ in range(CREATE_ATTEMPTS):
            key_id, token = new_key()
            key = ApiKey(key_id, namespace, granted, format_timestamp(now), expires_at, False, hash_key(token), name)
            try:
                self._repository.add(key)
            except WriteConflictError:
                continue  # 48-bit key ids practically never collide; when one does, draw another
            return key, token
        raise WriteConflictError("could not find a free key id; retry")

    def authenticate(self, token: str) -> Principal:
        """The principal a presented key proves, or AuthenticationError when it is malformed, unknown, revoked
        or expired. A verified key is cached for `cache_ttl`; its expiry is checked on every use."""
        key_id = key_id_of(token)
        digest = hash_key(token)
        now = self._clock()
        cached = self._cache.get(digest)
        if cached is not None:
            self._refuse_if_expired(cached.expires_at, now, digest)
            return cached.principal
        key = self._repository.get(key_id)
        if key is None or not hmac.compare_digest(key.secret_hash, digest):
            raise AuthenticationError(INVALID_KEY)
        if key.revoked:
            self._forget(digest)
            raise AuthenticationError("the API key has been revoked")
        self._refuse_if_expired(key.expires_at, now, digest)
        principal = key.principal()
        self._cache.put(digest, _Verified(principal, key.expires_at), read_at=now)
        self._note_use(key, now)
        return principal

    def principal_of(self, key_id: str) -> Principal:
        """The principal of the key `key_id` while it is active (what an OAuth grant it consented to acts as);
        AuthenticationError once it is unknown, revoked or expired. Cached for `cache_ttl` as `authenticate` is."""
        now = self._clock()
        cached = self._by_id.get(key_id)
        if cached is None:
            key = self._repository.get(key_id) if is_key_id(key_id) else None
            if key is None or key.revoked:
                raise AuthenticationError("the API key that consented to this grant was revoked")
            cached = _Verified(key.principal(), key.expires_at)
            self._by_id.put(key_id, cached, read_at=now)
            self._note_use(key, now)
        if expired(cached.expires_at, now):
            raise AuthenticationError(f"the API key that consented to this grant expired at {cached.expires_at}")
        return cached.principal

    def list(self, namespace: str | None = None) -> tuple[ApiKey, ...]:
        """Every key, or one namespace's, oldest first; revoked and expired ones included."""
        if namespace is not None:
            validate_namespace(namespace)
        return tuple(sorted(self._repository.find(namespace), key=lambda key: (key.created_at, key.key_id)))

    def of_namespace(self, principal: Principal) -> tuple[ApiKey, ...]:
        """The keys of the principal's namespace, oldest first (what GET /keys lists; any reader may ask)."""
        return self.list(principal.namespace)

    def revoke_as(self, principal: Principal, key_id: str) -> ApiKey:
        """Revoke `key_id` for `principal`: itself always, another key of its namespace only with the `keys` scope
        (PermissionDeniedError first, whatever the id); a key of another namespace is KeyNotFoundError, as an unknown
        one is, so that a caller never learns it exists."""
        may_revoke(principal, key_id)
        key = self._repository.get(key_id) if is_key_id(key_id) else None
        if key is None or key.namespace != principal.namespace:
            raise KeyNotFoundError(key_id)
        return self.revoke(key_id)

    def revoke(self, key_id: str) -> ApiKey:
        """Revoke a key: at once in this process, within `cache_ttl` in every other one; its fenced reads and writes
        stop at once everywhere (core.repository.LiveKey)."""
        revoked = self._repository.revoke(key_id) if is_key_id(key_id) else None
        if revoked is None:
            raise KeyNotFoundError(key_id)
        self._cache.discard_where(lambda entry: entry.principal.key_id == key_id)
        self._by_id.discard(key_id)
        return revoked

    def forget_verified(self) -> None:
        """Trust no key verified so far: the next use of each is read from the store again (a process restored from
        a snapshot, whose cached verifications are as old as the snapshot, not as their stamps say)."""
        self._cache.clear()
        self._by_id.clear()

    def now(self) -> datetime:
        """Now by this service's clock (what a key's state is told at)."""
        return self._clock()

    def _note_use(self, key: ApiKey, now: datetime) -> None:
        """Record that `key` proved a request now, when its stored use is older than LAST_USED_EVERY: read on the
        cache miss that verified it, so a fresh one costs nothing. Best effort: a store that cannot take the write
        now never fails the request (the next cache miss tries again)."""
        stale_before = format_timestamp(now - LAST_USED_EVERY)
        if key.last_used_at is not None and key.last_used_at >= stale_before:
            return
        # A use not written only leaves "last used" up to an hour older than it is.
        with contextlib.suppress(StorageUnavailableError):
            self._repository.note_use(key.key_id, format_timestamp(now), stale_before)

    def _refuse_if_expired(self, expires_at: str | None, now: datetime, digest: str) -> None:
        if expired(expires_at, now):
            self._forget(digest)
            raise AuthenticationError(f"the API key expired at {expires_at}")

    def _forget(self, digest: str) -> None:
        self._cache.discard(digest)
