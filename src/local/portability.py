"""`agent-memory export`, `import` and `namespace erase`: a namespace's memories out to a file and back in, or
removed for good, on any store (a running `serve`'s DynamoDB Local, DynamoDB Local, AWS)."""

from __future__ import annotations

import argparse
import hashlib
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING

from adapters.dynamodb.namespaces import Namespaces
from core.clock import format_timestamp, utc_now
from core.limits import IMPORT_MAX_LINE_CHARS
from core.portable import BadLineError, ExportHeader, header_line, parse_export
from core.recall.indexing import RecallIndexer
from handlers import bootstrap
from local.store import on_store

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

# A progress line on a terminal at most this often (in items), so a large namespace shows it moving.
PROGRESS_EVERY = 500


def progress(verb: str, stream: IO[str] = sys.stderr) -> Callable[[Counter[str]], None]:
    """Report running counts on `stream` when it is a terminal, in place, every PROGRESS_EVERY items."""
    shown = [0]

    def report(counts: Counter[str]) -> None:
        done = sum(counts.values())
        if stream.isatty() and done - shown[0] >= PROGRESS_EVERY:
            shown[0] = done
            parts = ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items()))
            print(f"\r{verb} {parts}", end="", file=stream, flush=True)

    return report


def end_progress(stream: IO[str] = sys.stderr) -> None:
    """End a terminal's progress line, so what is printed next starts a line of its own."""
    if stream.isatty():
        print(file=stream)


def export_namespace(args: argparse.Namespace, out: IO[str] = sys.stdout) -> int:
    """`agent-memory export`: the header line, then one line per memory, to standard output."""

    def run(settings: bootstrap.Settings, client: DynamoDBClient) -> None:
        header = ExportHeader(
            namespace=args.namespace,
            exported_at=format_timestamp(utc_now()),
            include_deleted=args.include_deleted,
            history=args.history,
        )
        print(header_line(header), file=out)
        report, count = progress("exported"), Counter[str]()
        exported = Namespaces(client, settings.table_name).export(
            args.namespace, include_deleted=args.include_deleted, history=args.history
        )
        too_long: list[str] = []
        for memory in exported:
            line = memory.line()
            if len(line) > IMPORT_MAX_LINE_CHARS:
                too_long.append(str(memory.memory.id))
            print(line, file=out)
            count["memories"] += 1
            report(count)
        out.flush()
        end_progress()
        print(f"Exported {count['memories']} memories of namespace {args.namespace!r}.", file=sys.stderr)
        if too_long:
            print(
                f"agent-memory: warning: the lines of memories {', '.join(too_long)} are longer than an import takes "
                f"({IMPORT_MAX_LINE_CHARS} characters); export without --history to move them",
                file=sys.stderr,
            )

    return on_store(args, run)


def import_namespace(args: argparse.Namespace) -> int:
    """`agent-memory import`: validate every line first, then write into an empty namespace (or finish the same
    import that stopped half-way)."""
    path: Path = args.file
    began = format_timestamp(utc_now())  # the import's own time: no line may record a time after it
    try:
        data = path.read_bytes()
        memories = parse_export(data.decode("utf-8"), began)
    except (OSError, UnicodeDecodeError) as exc:
        print(f"agent-memory: cannot read {path}: {exc}", file=sys.stderr)
        return 1
    except BadLineError as exc:
        print(f"agent-memory: {path}: nothing imported: {exc}", file=sys.stderr)
        return 1
    digest = hashlib.sha256(data).hexdigest()

    def run(settings: bootstrap.Settings, client: DynamoDBClient) -> None:
        namespaces = Namespaces(client, settings.table_name)
        resumed = namespaces.begin_import(args.namespace, digest)
        if resumed:
            print(f"Resuming the import of {path} into {args.namespace!r} where it stopped.", file=sys.stderr)
        # An export carries no vectors: the digests are written with their terms, and the backfill embeds them.
        namespaces.load(args.namespace, memories, progress("imported"), RecallIndexer(None))
        namespaces.finish_import(args.namespace, memories)
        end_progress()
        print(f"Imported {len(memories)} memories into namespace {args.namespace!r}.")
        if memories:
            print("Their recall vectors: `agent-memory embed` now, or the backfill (serve, the hourly purge) later.")

    return on_store(args, run)


def erase_namespace(args: argparse.Namespace, ask: Callable[[str], str] = input) -> int:
    """`agent-memory namespace erase`: everything of the namespace, after a confirmation unless --yes. The receipt is
    printed only once a scan of the table found nothing of the namespace left; its writers with cached keys are
    refused from the moment its keys are gone (the write fence)."""
    if not args.yes:
        try:
            answer = ask(
                f"Erase everything of namespace {args.namespace!r} (memories, history, keys, OAuth grants) for good? "
                "Type the namespace to confirm: "
            )
        except EOFError:
            answer = ""
        if answer.strip() != args.namespace:
            print("agent-memory: not erased", file=sys.stderr)
            return 1

    def run(settings: bootstrap.Settings, client: DynamoDBClient) -> None:
        removed = Namespaces(client, settings.table_name).erase(args.namespace, progress("removed"))
        end_progress()
        if not removed:
            print(f"Namespace {args.namespace!r} holds nothing: nothing removed.")
            return
        print(f"Erased namespace {args.namespace!r}:")
        for kind, count in sorted(removed.items()):
            print(f"  {count:>8}  {kind}")

    return on_store(args, run)
