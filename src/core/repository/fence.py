"""The fence a keyed caller's writes and reads are made behind (LiveKey), and what a refused one answers; each store
checks it its own way (adapters.dynamodb.fence, adapters.memory)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

# What a write refused by its LiveKey's fence answers (AuthenticationError).
KEY_NOT_LIVE: Final = "the API key was revoked or has expired, or its namespace was erased; nothing was written"
# What a read refused by its LiveKey's fence answers (AuthenticationError).
READ_KEY_NOT_LIVE: Final = "the API key was revoked or has expired, or its namespace was erased; nothing was read"


@dataclass(frozen=True)
class LiveKey:
    """The fence a keyed caller's write or read is made behind: it holds only while the API key `key_id` is stored,
    not revoked and not expired at `now`, whatever any cache believes.

    A write checks it in the same atomic write. A read checks it by a strongly consistent read of the key
    (`confirm_live`) after reading the data and before stamping or answering anything: erasing a namespace deletes
    its keys before its data, so a key still live after the data was read means the erase had not ended when it was
    read, and a key gone means nothing read is answered. A revoke stops the key's reads and writes at once
    everywhere."""

    key_id: str
    now: str


def fence_of(key_id: str | None, now: str, *, fenced: bool) -> LiveKey | None:
    """The fence a use case works behind: the caller's key at `now` when the service is `fenced` (as every deployed
    or served one is). No key (an open server) means no fence: there is no key to revoke and no namespace to erase
    under it."""
    return LiveKey(key_id, now) if fenced and key_id is not None else None
