"""The domain's error tree. Each door maps these to its own wire format in one place; none carries a status code."""

from __future__ import annotations

from dataclasses import dataclass

from core.limits import MAX_MEMORY_ID, MAX_VERSION


@dataclass(frozen=True)
class FieldError:
    """One rule broken by one input field, in words both doors show unchanged."""

    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"


class DomainError(Exception):
    """Base of every error the core raises on purpose."""


class InvalidInputError(DomainError):
    """The input breaks the contract's rules; `errors` names each bad field."""

    def __init__(self, errors: list[FieldError]) -> None:
        self.errors = tuple(errors)
        super().__init__("; ".join(str(e) for e in self.errors))


class MemoryNotFoundError(DomainError):
    """No memory with this id is visible: it never existed, is deleted, or belongs to another namespace."""

    def __init__(self, memory_id: int | str, reason: str = "does not exist") -> None:
        self.memory_id = memory_id
        # An id as sent that would vanish or blur in the sentence (empty, spaces) is quoted.
        plain = isinstance(memory_id, int) or (memory_id.isprintable() and memory_id and " " not in memory_id)
        super().__init__(f"memory {memory_id if plain else repr(memory_id)} {reason}")


class VersionMismatchError(DomainError):
    """The caller's expected version is no longer the memory's current version."""

    def __init__(self, memory_id: int, current_version: int) -> None:
        self.memory_id = memory_id
        self.current_version = current_version
        super().__init__(
            f"memory {memory_id} is at version {current_version}; read it again and retry with that version"
        )


class NamespaceFullError(DomainError):
    """The namespace has drawn every id up to MAX_MEMORY_ID: no id is left that the API could address."""

    def __init__(self) -> None:
        super().__init__(
            f"this namespace has used every memory id up to {MAX_MEMORY_ID}, so it can hold no new memory; nothing "
            "was stored"
        )


class VersionExhaustedError(DomainError):
    """The memory is at MAX_VERSION: a change would take its version past what a caller can name."""

    def __init__(self, memory_id: int) -> None:
        self.memory_id = memory_id
        super().__init__(
            f"memory {memory_id} is at version {MAX_VERSION}, the highest a version can be; nothing was changed: "
            "store the change as a new memory"
        )


class WriteConflictError(DomainError):
    """Concurrent writers kept colliding with this write (or an identical request is still in flight); it changed
    nothing and may be retried after `retry_after_seconds`."""

    def __init__(self, detail: str, retry_after_seconds: int = 1) -> None:
        self.retry_after_seconds = retry_after_seconds
        super().__init__(detail)


class StorageUnavailableError(DomainError):
    """The store is briefly unavailable (throttled or failing); nothing was half-written, retry later."""

    def __init__(self, detail: str, retry_after_seconds: int = 1) -> None:
        self.retry_after_seconds = retry_after_seconds
        super().__init__(detail)


class WriteOutcomeUnknownError(StorageUnavailableError):
    """Storage failed after a write was sent (no answer in time, the connection lost, a server error): the write may
    have happened or not. `cause` says what failed; `advice` how to retry this write without doing it twice (an
    idempotency key for a create, the expected version for an update) or to learn whether it happened."""

    def __init__(
        self,
        cause: str,
        advice: str = "read what it would have changed before retrying it",
        retry_after_seconds: int = 1,
    ) -> None:
        self.cause = cause
        self.advice = advice
        super().__init__(
            f"storage failed after the write was sent ({cause}), so it may have happened; {advice}", retry_after_seconds
        )

    def advising(self, advice: str) -> WriteOutcomeUnknownError:
        """The same failure, with the advice that fits the write that failed."""
        return WriteOutcomeUnknownError(self.cause, advice, self.retry_after_seconds)


class TableMissingError(StorageUnavailableError):
    """The table does not exist: deleted, or lost when an in-memory engine restarted. An operator's error, not the
    caller's; nothing was changed. `agent-memory serve` recreates its own table; a deployed one needs its operator."""

    def __init__(self, table_name: str, retry_after_seconds: int = 1) -> None:
        self.table_name = table_name
        super().__init__(
            "the storage table is missing (deleted, or lost when an in-memory engine restarted); nothing was "
            "changed; retry once it is created again",
            retry_after_seconds,
        )


class AuthenticationError(DomainError):
    """No valid API key (or OAuth access token) came with the request: missing, malformed, unknown, expired or revoked.

    `credentials_given` tells a request that presented a bearer key (which was refused) from one that did not;
    `by_token`, one that presented an access token, whose holder signs in again rather than sends a key.
    """

    def __init__(self, detail: str, credentials_given: bool = True, *, by_token: bool = False) -> None:
        self.credentials_given = credentials_given
        self.by_token = by_token
        super().__init__(detail)


class PermissionDeniedError(DomainError):
    """The API key (or the OAuth access token it consented to, `by_token`) is valid but lacks the scope the operation
    needs. A token's holder gets the scope by signing in again and granting it, not from another key."""

    def __init__(self, scope: str, *, by_token: bool = False) -> None:
        self.scope = scope
        self.by_token = by_token
        if by_token:
            super().__init__(
                f"this access token lacks the '{scope}' scope, which this operation needs; sign in again and grant it"
            )
        else:
            super().__init__(f"this API key lacks the '{scope}' scope, which this operation needs")


class KeyNotFoundError(DomainError):
    """No API key has this id."""

    def __init__(self, key_id: str) -> None:
        self.key_id = key_id
        super().__init__(f"API key {key_id[:40]} does not exist")
