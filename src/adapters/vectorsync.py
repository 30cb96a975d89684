"""The table's stream read into the vector index (adapters/s3vectors.py): DynamoDB stays the source of truth, and the
index follows it. A stream rather than the write path: every way a digest changes (a write's transaction, the
backfill's embedding, an import, a purge, an erasure) reaches the stream without one more call on any of those paths,
a write never waits for S3 Vectors or fails because of it, and a failed batch is retried by Lambda in order.

Only digests are read (`sk` begins with `RCL#`, adapters/dynamodb/codec.py): an INSERT or MODIFY whose new image has a
vector of the ranking model puts it (a put replaces what its key held: retried records are harmless); a REMOVE, or a
digest without such a vector, deletes its key. The stream's view is NEW_IMAGE. Records are applied in order, the
last for a key winning; a call that fails reports the records of its keys (the partial batch response), and Lambda
retries from the first of them.
"""

from __future__ import annotations

import base64
import logging
import zlib
from collections.abc import Mapping, Sequence
from typing import Any, Final

from adapters.dynamodb.codec import DIGEST_PREFIX, NAMESPACE_PREFIX
from adapters.dynamodb.digests import to_candidate
from adapters.s3vectors import IndexedVector, S3VectorIndex, vector_key

_CHANGED: Final = ("INSERT", "MODIFY")

logger = logging.getLogger(__name__)


def _image(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """A stream image as the table's reads give it: binary values arrive base64-encoded in the event's JSON."""
    return {name: {"B": base64.b64decode(value["B"])} if "B" in value else value for name, value in attributes.items()}


def _digest_key(record: Mapping[str, Any]) -> tuple[str, int] | None:
    keys = record["dynamodb"]["Keys"]
    partition: str = keys["pk"]["S"]
    sort_key: str = keys["sk"]["S"]
    if not sort_key.startswith(DIGEST_PREFIX) or not partition.startswith(NAMESPACE_PREFIX):
        return None
    return partition[len(NAMESPACE_PREFIX) :], int(sort_key[len(DIGEST_PREFIX) :])


def sync(index: S3VectorIndex, records: Sequence[Mapping[str, Any]]) -> list[str]:
    """Apply a batch of stream records to the index; the sequence numbers of the records not applied (a record that
    cannot be read is one: it is logged, and Lambda retries from it)."""
    latest: dict[str, tuple[IndexedVector | None, list[str]]] = {}
    unread: list[str] = []
    for record in records:
        sequence = record["dynamodb"]["SequenceNumber"]
        try:
            found = _read(index, record)
        except (KeyError, TypeError, ValueError, zlib.error):
            logger.exception("a digest's stream record cannot be read: reported for a retry")
            unread.append(sequence)
            continue
        if found is not None:
            key, vector = found
            latest[key] = (vector, [*latest.get(key, (None, []))[1], sequence])
    puts = [vector for vector, _ in latest.values() if vector is not None]
    deletes = [key for key, (vector, _) in latest.items() if vector is None]
    failed = unread
    if puts:
        failed += _applied(
            lambda: index.put(puts), [vector_key(v.namespace, v.candidate.memory_id) for v in puts], latest
        )
    if deletes:
        failed += _applied(lambda: index.delete(deletes), deletes, latest)
    return failed


def _read(index: S3VectorIndex, record: Mapping[str, Any]) -> tuple[str, IndexedVector | None] | None:
    """A digest record's key and what the index keeps of its new image (None: its vector goes); None for another
    item's record."""
    found = _digest_key(record)
    if found is None:
        return None
    namespace, memory_id = found
    if record["eventName"] not in _CHANGED:
        return vector_key(namespace, memory_id), None
    candidate = to_candidate(_image(record["dynamodb"]["NewImage"]))
    return vector_key(namespace, memory_id), IndexedVector(namespace, candidate) if index.keeps(candidate) else None


def _applied(call: Any, keys: list[str], latest: Mapping[str, tuple[IndexedVector | None, list[str]]]) -> list[str]:
    """Make the call; on failure, the sequence numbers of every record of its keys."""
    try:
        call()
    except Exception:  # any failure of the call is reported per record: Lambda retries them
        logger.exception("the vector index refused a call: its records are reported for a retry")
        return [sequence for key in keys for sequence in latest[key][1]]
    return []
