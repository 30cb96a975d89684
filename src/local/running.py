"""The running `serve`s of this user, as the command line finds them: each `serve` writes a small state file (its
HTTP address, the DynamoDB it serves over, its table and region, its pid) when it starts serving and removes it when
it stops, Ctrl-C included; it holds an exclusive lock on the file meanwhile, so a file left by a serve that was
killed outright (the lock goes with its process, a reused pid does not fool it) is known stale and ignored."""

from __future__ import annotations

import contextlib
import fcntl
import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO


@dataclass(frozen=True)
class RunningServe:
    """What a running serve tells the command line: where it serves, and the store (endpoint_url None: AWS)."""

    base_url: str
    endpoint_url: str | None
    table: str
    region: str
    pid: int

    def describe(self) -> str:
        return f"{self.base_url} (pid {self.pid}) over {self.endpoint_url or 'AWS DynamoDB'}, table {self.table}"


def state_file(directory: Path, port: int) -> Path:
    """The state file of the serve on HTTP `port` (one serve listens on a port at a time)."""
    return directory / f"serve-{port}.json"


@contextlib.contextmanager
def announced(directory: Path, port: int, serve: RunningServe) -> Iterator[Path]:
    """While the block runs, `serve` is findable (running_serves); its file is removed when the block ends, however
    it ends. A directory that cannot be written only makes the serve unfindable: serving does not depend on it."""
    path = state_file(directory, port)
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        held: IO[str] | None = path.open("a+", encoding="utf-8")
    except OSError:
        held = None
    try:
        if held is not None:
            fcntl.flock(held, fcntl.LOCK_EX)  # the port is ours: no live serve holds it
            held.seek(0)
            held.truncate()
            held.write(json.dumps(asdict(serve)))
            held.flush()
        yield path
    finally:
        if held is not None:
            path.unlink(missing_ok=True)  # before the lock goes, so no reader finds it unlocked and half-gone
            held.close()


def running_serves(directory: Path) -> list[RunningServe]:
    """The serves whose state file is held by a live serve, by port; stale and unreadable files are passed over."""
    found = []
    for path in sorted(directory.glob("serve-*.json")) if directory.is_dir() else []:
        with contextlib.suppress(OSError, ValueError, TypeError), path.open(encoding="utf-8") as file:
            if not _held_by_another(file):
                continue  # its serve is gone without removing it (killed outright)
            found.append(RunningServe(**json.loads(file.read())))
    return found


def _held_by_another(file: IO[str]) -> bool:
    try:
        fcntl.flock(file, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    fcntl.flock(file, fcntl.LOCK_UN)
    return False
