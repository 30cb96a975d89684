"""`agent-memory vectors backfill`: puts the digests a table held before recall's vector index was turned on
(`RecallVectorIndex`) into the index, namespace by namespace, and marks each namespace done, so recall asks the index
for it from then on (adapters/vectorfill.py). The operator runs it once after turning the index on, with AWS
credentials that may read the table and write the index, and the deployment's EMBEDDING_MODEL and EMBEDDING_DIMENSIONS
if they are not the defaults. A command rather than a function: a large table takes longer than a Lambda invocation
may run, and no deployed function needs the rights it takes (the doors only query the index, the stream consumer
only writes it)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import IO, TYPE_CHECKING

from adapters.dynamodb.indexed import IndexedNamespaces
from adapters.s3vectors import S3VectorIndex, S3VectorsClient, VectorIndexError, index_label, make_s3vectors_client
from adapters.vectorfill import Cursor, CursorError, VectorBackfill
from handlers import bootstrap
from local.store import on_store

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


def _cursor(text: str) -> Cursor:
    try:
        return Cursor.parse(text)
    except CursorError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_vectors_commands(
    vectors: argparse.ArgumentParser,
    store_options: Callable[[argparse.ArgumentParser], None],
    namespace: Callable[[str], str],
) -> None:
    """The `vectors` commands on their parser; `store_options` adds the options naming the table, `namespace` reads
    a namespace argument (both local.cli's, as every command's)."""
    commands = vectors.add_subparsers(dest="vectors_command", required=True)
    backfill = commands.add_parser(
        "backfill",
        help="put every namespace's digests in recall's vector index (Amazon S3 Vectors) and mark it done; resumable "
        "(--after) and idempotent; writes no memory",
    )
    backfill.add_argument(
        "--bucket", required=True, help="the vector bucket (the stack's agent-memory-<stage>-<account>-vectors)"
    )
    backfill.add_argument("--index", default="digests", help="the vector index (default digests, the template's)")
    backfill.add_argument(
        "--namespace",
        type=namespace,
        action="append",
        default=None,
        help="only this namespace (repeat for more; default every namespace of the table, read by a scan)",
    )
    backfill.add_argument("--after", type=_cursor, default=None, help="resume from a cursor a run printed")
    backfill.add_argument(
        "--again", action="store_true", help="also the namespaces a run has marked done for this index already"
    )
    store_options(backfill)


def backfill_vectors(
    args: argparse.Namespace,
    vectors_client: Callable[[str], S3VectorsClient] = make_s3vectors_client,
    err: IO[str] | None = None,
) -> int:
    """`agent-memory vectors backfill`: 0 when every namespace it passed is marked; 1 when one is left unmarked (erased
    meanwhile, or still changing: run again) or the index refused a write (run again from the last cursor printed).
    `vectors_client`: the S3 Vectors client for a region; `err`: where cursors and failures go (standard error)."""
    err = err or sys.stderr
    left: list[str] = []

    def run(settings: bootstrap.Settings, client: DynamoDBClient) -> None:
        model = settings.embedding_model
        index = S3VectorIndex(vectors_client(settings.region), args.bucket, args.index, model, sizes=lambda _: 0)
        label = index_label(args.bucket, args.index, model, settings.embedding_dimensions)
        last: list[Cursor] = [args.after] if args.after else []

        def told(cursor: Cursor) -> None:
            last[:] = [cursor]
            print(f"cursor {cursor.text()}", file=err, flush=True)

        backfill = VectorBackfill(IndexedNamespaces(client, settings.table_name), index, label, told)
        try:
            filled = backfill.run(args.namespace, resume=args.after, again=args.again)
        except VectorIndexError as exc:
            resume = f"; resume with --after {last[0].text()}" if last else ""
            left.append(f"{exc}{resume}")
            return
        print(
            f"Marked {_counted(filled.marked, 'namespace')} as held by {args.bucket}/{args.index} "
            f"({_counted(filled.put, 'vector')} put, {_counted(filled.deleted, 'key')} deleted; "
            f"{filled.skipped} marked before, skipped)."
        )
        if filled.unmarked:
            left.append(
                "left unmarked, recalled without the index until a run marks them (no memory written yet, erased "
                f"meanwhile, or still changing): {', '.join(filled.unmarked)}"
            )

    code = on_store(args, run)
    for reason in left:
        print(f"agent-memory: {reason}", file=err)
    return code or (1 if left else 0)


def _counted(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"
