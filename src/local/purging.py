"""`serve`'s background work, each in a thread of its own, as the stack's hourly PurgeFunction does it on AWS: the
memories deleted longer than the retention window ago purged now and then, and the recall digests still waiting for
their vector (written while the model was unavailable, or imported) embedded every few seconds."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from datetime import timedelta

from core.errors import DomainError
from core.memories import MemoryService
from core.recall.backfill import Backfill
from core.recall.embedding import EmbedderUnavailableError

# How often `serve` purges the memories deleted longer than the retention window ago, as the stack's purge does.
PURGE_EVERY = timedelta(hours=1)
# How often `serve` embeds what waits for a vector: a local model is at hand, so a memory waits seconds, not an hour.
EMBED_EVERY = timedelta(seconds=10)
# Longer than one storage call's worst case (local.serve's client: 3 attempts of 2 s + 5 s, plus backoff).
PURGE_STOP_SECONDS = 30


def start_purging(memories: MemoryService, retention: timedelta, every: timedelta) -> Callable[[], None]:
    """Purge the memories deleted longer than `retention` ago now and then `every` so often, in a thread; the
    function returned stops it and waits for a run under way. A failed run (the store briefly away) is reported
    and tried again later."""

    def purge() -> None:
        if purged := memories.purge_expired(retention):
            print(f"purged {purged} memories deleted more than {retention.days} days ago", flush=True)

    return _repeated("purge", "purge of deleted memories", purge, every)


def start_embedding(backfill: Backfill, every: timedelta) -> Callable[[], None]:
    """Embed the digests waiting for a vector now and then `every` so often, in a thread, until none waits; the
    function returned stops it. A run the model or the store cannot serve now is reported and tried again later."""

    def embed() -> None:
        if embedded := backfill.until_done().embedded:
            print(f"embedded {embedded} memories waiting for their recall vector ({backfill.model})", flush=True)

    return _repeated("embed", "embedding of waiting memories", embed, every)


def _repeated(name: str, what: str, job: Callable[[], None], every: timedelta) -> Callable[[], None]:
    stop = threading.Event()

    def run() -> None:
        while not stop.is_set():
            try:
                job()
            except (DomainError, EmbedderUnavailableError) as exc:
                if not stop.is_set():
                    print(f"{what} failed, tried again in {every}: {exc}", file=sys.stderr)
            stop.wait(every.total_seconds())

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()

    def stopped() -> None:
        stop.set()
        thread.join(timeout=PURGE_STOP_SECONDS)

    return stopped
