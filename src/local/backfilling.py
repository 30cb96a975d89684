"""`agent-memory embed`: the memories whose recall digest waits for a vector (written while the model was
unavailable, or imported) embedded until none is left, on any store; with --all, after a change of model,
every memory another model embedded first. The embedding model is the one the store's servers rank with: serve's
offline model locally, the deployed Bedrock model on AWS."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Final

from adapters.dynamodb import DynamoDBMemoryRepository
from adapters.dynamodb.digests import unembed_other_models
from core.recall.backfill import Backfill, Backfilled
from core.recall.embedding import Embedder, EmbedderUnavailableError
from handlers import bootstrap
from local.store import on_store

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

MODELS: Final = ("offline", "bedrock")


def embedder_for(args: argparse.Namespace, settings: bootstrap.Settings) -> Embedder:
    """The model `--model` names; by default the deployed one on AWS (`--aws`), else the offline one serve runs."""
    from adapters.offline import offline_embedder

    model = getattr(args, "model", None) or ("bedrock" if args.aws else "offline")
    return bootstrap.bedrock_embedder(settings) if model == "bedrock" else offline_embedder()


def _progress(stream: IO[str] = sys.stderr) -> Callable[[Backfilled], None]:
    def report(done: Backfilled) -> None:
        if stream.isatty():
            print(f"\rembedded {done.embedded}", end="", file=stream, flush=True)

    return report


def embed_store(args: argparse.Namespace) -> int:
    """`agent-memory embed [--all]`: 0 when nothing waits any more (or what still waits keeps changing), 1 when the
    model or the store cannot serve now (what was embedded stays)."""

    def run(settings: bootstrap.Settings, client: DynamoDBClient) -> None:
        embedder = embedder_for(args, settings)
        if args.all:
            marked = unembed_other_models(client, settings.table_name, embedder.model)
            print(f"{marked} memories embedded by another model wait to be embedded by {embedder.model}.")
        done = Backfill(DynamoDBMemoryRepository(client, settings.table_name), embedder).until_done(_progress())
        if sys.stderr.isatty():
            print(file=sys.stderr)
        print(f"Embedded {done.embedded} {'memory' if done.embedded == 1 else 'memories'} with {embedder.model}.")
        if done.skipped:
            print(f"{done.skipped} changed meanwhile: the next run (or the backfill) embeds them.", file=sys.stderr)

    try:
        return on_store(args, run)
    except EmbedderUnavailableError as exc:
        print(f"agent-memory: cannot embed now ({exc}); what was embedded stays: run again later", file=sys.stderr)
        return 1
