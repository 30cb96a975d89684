"""How a memory is stored: the table's layout, the keys' prefixes and partitions, and the encodings every kind of item
shares; each kind of item has its own module (records.py, revisions.py, accessitems.py, tagcopies.py, searchcopies.py,
digests.py, idempotency.py, counters.py; keys.py and grants.py), which alone writes and reads it.

One table holds every namespace. Keys: `pk = "NS#<namespace>"`; in that partition a memory has
`sk = "MEM#<id:010d>"`, the id counter `sk = "COUNTER"`, the exact totals per status and type `sk = "STATS"`
(changed in the same transaction as every memory they count), and a create's idempotency record
`sk = "IDEM#<sha256 of the key>"` (with a TTL attribute, `expires_at`).

A memory item holds `content`, `tags` (one string, each tag framed by newlines, so `contains` finds a whole tag or a
substring of one), `folded` (the casefolded content, only when it differs), `memory_type`, `status`, `version`
and two sort values, `created_key` and `updated_key`: the fixed-width timestamp joined to the zero-padded id, so
DynamoDB's own order is total and ties fall by id. The timestamps and the id are read back from those keys. Each of
those two sorts has a GSI on `pk` and its sort value, projecting what a listing returns.

Access items (accessitems.py): a memory's `last_accessed_at` lives beside it, in the namespace's partition, in an
item of its own, `sk = "A#<id:010d>"`, holding `accessed_key` (the stamp as a sort value, as above) and the memory's
`status` and `memory_type`, so an access stamp rewrites about 100 bytes (1 WCU) and no index entry; ordered by last
use, a listing reads a namespace's access items. A record never holds a stamp.

Tag copies: for each of its tags, a memory has a copy in the partition `pk = "NS#<namespace>#TAG#<tag>"` (no
namespace or tag holds `#`), same `sk`, holding what a listing returns and filters on (no `accessed_key`), so the
created_at and updated_at GSIs order a tag's memories too and a tag search reads only them; the partition's `STATS`
item counts them per status and type. Copies and their counts change in the same transaction as the memory.

History: every change of a memory leaves a revision item in the namespace's partition, `sk =
"REV#<id:010d>#<n:010d>"` (n = 1, 2, ... in the memory's life), written in the same transaction as the change; the
memory counts them in `revisions`, so a history page is a key range. A deleted memory keeps the status it had in
`prior_status` and, in the sparse `by_deleted_at` index (`purge_shard`, `deleted_at`, keys only), when it was
deleted, so the purge sweep finds what is due without scanning; `purging` marks one whose purge has begun. A memory
created with an idempotency key keeps its hash in `idempotency`, so a purge removes that record too.

Recall's digests (core.digest; digests.py): beside each memory, in the namespace's partition, `sk = "RCL#<id:010d>"`
holds what recall ranks by and filters on (`terms`, space-joined and deflated; the int8 vector `vec` with `vec_scale`
and `vec_model`; `memory_type`, `status`, `tags`, `updated_at`, and the `version` it follows), written in the same
transaction as every change of its memory. A digest without a vector carries `embed_shard`, which puts it in the
sparse `by_unembedded` index (`embed_shard`, `sk`, keys only) the backfill reads.

Search copies (searchcopies.py): beside each memory, in the namespace's partition, `sk = "Q#<id:010d>"` holds what
a listing returns of it but its access stamp, compactly (`text`: the content deflated; `memory_type`, `status`,
`version`, `tags` as on the memory; `c` and `u`: the creation and update times), rewritten in the same transaction as
every change of its memory. A `q` search reads the copies, about 40 % of the records' bytes, instead of the records.

Every memory has all of these from its first write: this is the only layout there is (CHANGELOG.md).

API keys share the table in one small partition (see keys.py).
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from typing import Any, Final

from core.limits import ID_DIGITS

# Index name and sort attribute per indexed timestamp sort; `id` sorts on the table's own key, `last_accessed_at` on
# the access items (accessitems.py).
INDEXES: Final[Mapping[str, tuple[str, str]]] = {
    "created_at": ("by_created_at", "created_key"),
    "updated_at": ("by_updated_at", "updated_key"),
}
ACCESSED_KEY: Final = "accessed_key"
# Below every real timestamp, so never-accessed memories sort after accessed ones (descending) and stay indexed.
NEVER_ACCESSED: Final = "0000-00-00T00:00:00.000000Z"
TIMESTAMP_CHARS: Final = len(NEVER_ACCESSED)
NAMESPACE_PREFIX: Final = "NS#"
MEMORY_PREFIX: Final = "MEM#"
IDEMPOTENCY_PREFIX: Final = "IDEM#"
REVISION_PREFIX: Final = "REV#"
DIGEST_PREFIX: Final = "RCL#"
SEARCH_PREFIX: Final = "Q#"
ACCESS_PREFIX: Final = "A#"
CHANGE_PREFIX: Final = "CHG#"
COUNTER_SK: Final = "COUNTER"
# The id counter's attribute naming the vector index that holds the namespace whole (adapters/vectorfill.py sets it
# once the namespace's every digest is in the index; recall asks the index only for a namespace it names).
INDEXED_IN: Final = "indexed_in"
STATS_SK: Final = "STATS"
DELETED: Final = {"S": "deleted"}
# A put's condition that nothing is stored under its key yet.
ABSENT: Final = "attribute_not_exists(pk)"
TAG_PARTITION: Final = "#TAG#"
# The sparse index of deleted memories by deletion time; its partitions spread the deletes' writes.
DELETED_INDEX: Final = "by_deleted_at"
PURGE_SHARDS: Final = 16
# The sparse index of digests waiting for a vector, spread as the purge's.
UNEMBEDDED_INDEX: Final = "by_unembedded"
# The sparse index of a namespace's changes by time (changes.py): revisions written by a change, and markers.
CHANGE_INDEX: Final = "by_change"
# What a listing reads of a memory (template.yaml's indexes project exactly these): its stamp is in its access item.
LISTED_ATTRIBUTES: Final = (
    "pk",
    "sk",
    "content",
    "tags",
    "memory_type",
    "status",
    "version",
    "created_key",
    "updated_key",
)


def memory_partition(namespace: str) -> dict[str, Any]:
    return {"S": f"{NAMESPACE_PREFIX}{namespace}"}


def tag_partition(namespace: str, tag: str) -> dict[str, Any]:
    return {"S": f"{NAMESPACE_PREFIX}{namespace}{TAG_PARTITION}{tag}"}


def purge_shard(namespace: str, memory_id: int) -> dict[str, Any]:
    """One of PURGE_SHARDS partitions, by the memory's key: the purge's index and the backfill's spread by it."""
    return {"S": f"{zlib.crc32(f'{namespace}#{memory_id}'.encode()) % PURGE_SHARDS:02d}"}


def sort_value(timestamp: str | None, memory_id: int) -> dict[str, Any]:
    return {"S": f"{timestamp or NEVER_ACCESSED}#{memory_id:0{ID_DIGITS}d}"}


def item_id(item: Mapping[str, Any]) -> int:
    """The memory id in the key of a memory item (or its tag copy) or of its access item."""
    sort_key: str = item["sk"]["S"]
    return int(sort_key.rpartition("#")[2])


def timestamp_of(value: str) -> str:
    """The timestamp a sort value starts with."""
    return value[:TIMESTAMP_CHARS]


def deflated(text: str) -> bytes:
    """`text` as raw deflate (no zlib header or checksum: DynamoDB keeps the bytes as written), best compression."""
    deflate = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    return deflate.compress(text.encode()) + deflate.flush()


def inflated(data: bytes) -> str:
    return zlib.decompress(data, -zlib.MAX_WBITS).decode()


def tags_value(tags: Sequence[str]) -> str:
    # Framed by newlines (never in a tag), so `contains` finds a whole tag as "\n<tag>\n" and a substring of
    # one tag only, as long as the needle holds tag characters alone.
    return "\n" + "\n".join(tags) + "\n"
