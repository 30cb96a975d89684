"""Every bound of the contract, each written once: the validators, the JSON Schemas both doors publish, the error
messages and the storage layout read them from here."""

from __future__ import annotations

from typing import Final

# The record.
ID_DIGITS: Final = 10  # ids are stored zero-padded to this width, so keys sort numerically
MAX_MEMORY_ID: Final = 10**ID_DIGITS - 1
CONTENT_MAX_CHARS: Final = 8192
TAG_MAX_CHARS: Final = 64
TAGS_MAX: Final = 20
# A version a caller names (If-Match, expected_version) has at most this many digits, as ids do.
VERSION_DIGITS: Final = ID_DIGITS
MAX_VERSION: Final = 10**VERSION_DIGITS - 1

# Idempotent creates.
IDEMPOTENCY_KEY_MAX_CHARS: Final = 255
IDEMPOTENCY_WINDOW_HOURS: Final = 24
IDEMPOTENCY_WINDOW_SECONDS: Final = IDEMPOTENCY_WINDOW_HOURS * 60 * 60

# Retrieval.
DEFAULT_LIMIT: Final = 10
MAX_LIMIT: Final = 100
Q_MAX_CHARS: Final = 256
# The largest offset: a signed 64-bit integer, the range every client language holds.
MAX_OFFSET: Final = 2**63 - 1

# OAuth (core.grants): what one client registration, and one authorization request's `state`, may hold.
MAX_CLIENT_METADATA_BYTES: Final = 8 * 1024
MAX_REDIRECT_URIS: Final = 10
MAX_REDIRECT_URI_CHARS: Final = 2000
MAX_STATE_CHARS: Final = 1024

# A request body, at either door: the largest create is far below it.
MAX_REQUEST_BYTES: Final = 128 * 1024
