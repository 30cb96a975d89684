"""A write whose outcome storage left unknown (core.errors.WriteOutcomeUnknownError), told to the caller with the
one safe way to retry that write: each use case knows what makes its retry harmless (an idempotency key for a create,
the expected version for an update) or what a retry answers when the first call did happen."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

from core.errors import WriteOutcomeUnknownError
from core.model import IdempotentCreate

DELETE: Final = "retry it: if the first call deleted the memory, the retry answers that it does not exist"
RESTORE: Final = "retry it: if the first call restored the memory, the retry answers that it is not deleted"
SUPERSEDE: Final = (
    "read the listed memories before retrying: if they are invalid and their history's last change is 'superseded' "
    "by this memory, the first call landed; a retry would record a second supersede"
)
PURGE: Final = "retry it: if the first call purged the memory, the retry answers that it does not exist"


def create(idempotency: IdempotentCreate | None) -> str:
    if idempotency is None:
        return (
            "a retry could store it twice: search for the memory before creating it again, and send an idempotency "
            "key with every create so that a retry is safe"
        )
    return (
        f"retry with the same {idempotency.field} and the same fields: it returns the memory if the first call stored "
        "it, and stores it once if not"
    )


def update(expected: frozenset[int] | None) -> str:
    if expected is None:
        return "retrying it is safe: a change the first call already made changes nothing the second time"
    return (
        "retry it with the same expected version: if the first call changed the memory, the retry is refused as a "
        "version mismatch naming its new version"
    )


@contextmanager
def advised(advice: str) -> Iterator[None]:
    """A write whose outcome storage left unknown is reported with `advice`, how to retry it."""
    try:
        yield
    except WriteOutcomeUnknownError as exc:
        raise exc.advising(advice) from exc
