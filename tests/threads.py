"""Proving a background worker stopped by finding its thread ended, never by waiting a while and seeing nothing
happen (which passes on a slow machine whether or not the worker stopped)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def threads_started() -> Iterator[set[threading.Thread]]:
    """The threads started while the block runs and still running when it ends (filled in as it ends)."""
    before = set(threading.enumerate())
    started: set[threading.Thread] = set()
    yield started
    started.update(set(threading.enumerate()) - before)


def all_ended(threads: set[threading.Thread]) -> bool:
    """Every one of `threads` has ended: none of them can do anything more."""
    return not any(thread.is_alive() for thread in threads)
