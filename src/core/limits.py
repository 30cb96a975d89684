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

# An import (core.portable): ids and versions at most these, so about nine billion new memories after the highest id
# and changes after the highest version stay addressable below MAX_MEMORY_ID and MAX_VERSION.
IMPORT_MAX_ID: Final = 999_999_999
IMPORT_MAX_VERSION: Final = 999_999_999
# The longest line an import parses (characters): a memory's record and every revision of its history. A revision is
# at most about 50,000 characters (8,192 of content, each escaped to at most six); typical memories' histories of
# thousands of changes fit, and no line can make the parser build more than a few hundred MB.
IMPORT_MAX_LINE_CHARS: Final = 10_000_000
# How far a change's time may precede the change before it: overlapping requests land in either order, each with the
# time it arrived, and none outlives API Gateway's 30 s (serve's requests get the same margin, doubled).
IMPORT_CHANGED_AT_SLACK_SECONDS: Final = 60

# An API key's optional name (core.access): what a person calls it, shown in key listings and the console.
KEY_NAME_MAX_CHARS: Final = 64

# How long a deleted memory may be kept restorable (days): the template's DeletedRetentionDays and serve's option.
MIN_RETENTION_DAYS: Final = 1
MAX_RETENTION_DAYS: Final = 3650

# Idempotent creates.
IDEMPOTENCY_KEY_MAX_CHARS: Final = 255
IDEMPOTENCY_WINDOW_HOURS: Final = 24
IDEMPOTENCY_WINDOW_SECONDS: Final = IDEMPOTENCY_WINDOW_HOURS * 60 * 60

# Superseding (core.changes.superseded): the most memories one write supersedes.
SUPERSEDE_MAX: Final = 10

# Retrieval.
DEFAULT_LIMIT: Final = 10
MAX_LIMIT: Final = 100
Q_MAX_CHARS: Final = 256
# The largest offset: a signed 64-bit integer, the range every client language holds.
MAX_OFFSET: Final = 2**63 - 1
# Recall (ranked retrieval by meaning).
RECALL_MAX_LIMIT: Final = 50
RECALL_QUERY_MAX_CHARS: Final = 1000
# Related memories (GET /memories/{id}/related, related_memories): how many by default, and at most; a create's or a
# content update's answer at the MCP door names up to the default.
RELATED_DEFAULT_LIMIT: Final = 3
RELATED_MAX_LIMIT: Final = 10
# MCP's prime_context: the memories it returns unless asked for fewer or more (up to MAX_LIMIT).
PRIME_LIMIT: Final = 20
# The most digits an integer may be written with in a query string or a body: int() refuses more than 4,300 (a guard
# against quadratic parsing), and no field takes a number anywhere near that size anyway.
MAX_INTEGER_DIGITS: Final = 4000

# OAuth (core.grants): what one client registration, and one authorization request's `state`, may hold.
MAX_CLIENT_METADATA_BYTES: Final = 8 * 1024
MAX_REDIRECT_URIS: Final = 10
MAX_REDIRECT_URI_CHARS: Final = 2000
MAX_STATE_CHARS: Final = 1024
# The longest client id looked up (ours are 36-character UUIDs; anything longer is no registration of ours).
MAX_CLIENT_ID_CHARS: Final = 128
# A client id that is a URL (a Client ID Metadata Document, core.clientdocs), and the document fetched from it.
MAX_CLIENT_ID_URL_CHARS: Final = 2000
MAX_DOCUMENT_BYTES: Final = 16 * 1024
# How deeply a document may nest (its object is level 1): json's parser recurses once a level, and 16 KiB of brackets
# passes Python's recursion limit; a real document nests 4 at most (a `jwks`: the object, its keys, a key, a list).
MAX_DOCUMENT_DEPTH: Final = 32
# Documents fetched at once by one process, in all and per host; one more is refused at once ("retry"). A fetch holds
# a worker thread for up to its 5 s, and `serve`'s storage calls share those threads (anyio's 40): at most 8 leaves
# them 32 whatever URLs are named. One authorization fetches its document once, so two at once from one host is two
# people starting one client together; more is a flood (of URLs that stall, to hold every fetch).
MAX_DOCUMENT_FETCHES: Final = 8
MAX_DOCUMENT_FETCHES_PER_HOST: Final = 2
# The client name the consent page shows, in characters (longer ones are cut, with an ellipsis): a product's name
# fits, and the page stays one that says whose document it is (its host) right after the name.
MAX_CLIENT_NAME_CHARS: Final = 100
# A PKCE code challenge (RFC 7636 §4.2): the S256 of a verifier, 43 to 128 characters.
CODE_CHALLENGE_MIN_CHARS: Final = 43
CODE_CHALLENGE_MAX_CHARS: Final = 128
# Dynamic client registration, counted per fixed window in the store (every Lambda instance shares the counts). A
# client registers once per installation, so one address (an IPv6 /64) registering more than this an hour is a
# script, while an office behind one NAT still fits; the total bounds what addresses together can store (an unused
# registration is kept a day: at most 24 x 1,000 of at most 8 KiB each).
REGISTRATION_WINDOW_SECONDS: Final = 60 * 60
REGISTRATIONS_PER_CALLER: Final = 20
REGISTRATIONS_IN_TOTAL: Final = 1000

# A request body, at either door: the largest create is far below it.
MAX_REQUEST_BYTES: Final = 128 * 1024
