"""`serve`'s purge: the memories deleted longer than the retention window ago, purged now and then in a thread,
as the stack's hourly PurgeFunction does on AWS."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from datetime import timedelta

from core.errors import DomainError
from core.memories import MemoryService

# How often `serve` purges the memories deleted longer than the retention window ago, as the stack's purge does.
PURGE_EVERY = timedelta(hours=1)
# Longer than one storage call's worst case (local.serve's client: 3 attempts of 2 s + 5 s, plus backoff).
PURGE_STOP_SECONDS = 30


def start_purging(memories: MemoryService, retention: timedelta, every: timedelta) -> Callable[[], None]:
    """Purge the memories deleted longer than `retention` ago now and then `every` so often, in a thread; the
    function returned stops it and waits for a run under way. A failed run (the store briefly away) is reported
    and tried again later."""
    stop = threading.Event()

    def run() -> None:
        while not stop.is_set():
            try:
                purged = memories.purge_expired(retention)
            except DomainError as exc:
                if not stop.is_set():
                    print(f"purge of deleted memories failed, tried again in {every}: {exc}", file=sys.stderr)
            else:
                if purged:
                    print(f"purged {purged} memories deleted more than {retention.days} days ago", flush=True)
            stop.wait(every.total_seconds())

    thread = threading.Thread(target=run, name="purge", daemon=True)
    thread.start()

    def stopped() -> None:
        stop.set()
        thread.join(timeout=PURGE_STOP_SECONDS)

    return stopped
