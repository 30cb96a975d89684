"""The running `serve`s of this user, as the command line finds them: each `serve` writes a small state file (its
HTTP address, the DynamoDB it serves over, its table and region, its pid) when it starts serving and removes it when
it stops, Ctrl-C included; it holds an exclusive lock on the file meanwhile, so a file left by a serve that was
killed outright (the lock goes with its process, a reused pid does not fool it) is known stale and ignored. A state
directory another user may write in is neither written nor read: whoever can write there could point this user's
commands at a store of their choosing, or plant a link for serve to overwrite a file through."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sys
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Final
from urllib.parse import urlsplit


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

    @property
    def port(self) -> int | None:
        """Its HTTP port, which names it to the command line (`--port`); None in a base URL without one."""
        try:
            return urlsplit(self.base_url).port
        except ValueError:  # a port out of range: serve never writes one
            return None


def state_file(directory: Path, port: int) -> Path:
    """The state file of the serve on HTTP `port` (one serve listens on a port at a time)."""
    return directory / f"serve-{port}.json"


@contextlib.contextmanager
def announced(directory: Path, port: int, serve: RunningServe) -> Iterator[Path]:
    """While the block runs, `serve` is findable (running_serves); its file is removed when the block ends, however
    it ends. A directory that cannot be written only makes the serve unfindable: serving does not depend on it."""
    path = state_file(directory, port)
    held: IO[str] | None = None
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        with _private(directory) as found:
            if found is None:
                print(
                    f"agent-memory: {directory} may be written by other users: no state file is kept there, so "
                    "the command line will not find this serve",
                    file=sys.stderr,
                )
            else:
                flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
                held = open(os.open(path.name, flags, 0o600, dir_fd=found), "r+", encoding="utf-8")  # noqa: SIM115
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
    found: list[RunningServe] = []
    with contextlib.suppress(OSError), _private(directory) as private:
        if private is None:
            return found
        for name in sorted(
            name for name in os.listdir(private) if name.startswith("serve-") and name.endswith(".json")
        ):
            flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
            with (
                contextlib.suppress(OSError, ValueError),
                open(os.open(name, flags, dir_fd=private), encoding="utf-8") as file,
            ):
                if not _held_by_another(file):
                    continue  # its serve is gone without removing it (killed outright)
                found.append(_announced_serve(json.loads(file.read())))
    return found


@contextlib.contextmanager
def _private(directory: Path) -> Iterator[int | None]:
    """The directory open (its descriptor, so that what was checked is what is used), or None when it belongs to
    another user or its group or anyone may write in it."""
    descriptor = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        info = os.fstat(descriptor)
        yield descriptor if info.st_uid == os.getuid() and not info.st_mode & 0o022 else None
    finally:
        os.close(descriptor)


def _announced_serve(data: object) -> RunningServe:
    """The serve a state file describes; ValueError when it is not one serve wrote."""
    if not isinstance(data, dict) or data.keys() != _SHAPE.keys():
        raise ValueError("not a state file")
    if not all(type(data[name]) in kinds for name, kinds in _SHAPE.items()):
        raise ValueError("not a state file")
    return RunningServe(**data)


# What a state file holds: each field of RunningServe and the types serve writes it as.
_SHAPE: Final[dict[str, set[type]]] = {
    "base_url": {str},
    "endpoint_url": {str, type(None)},
    "table": {str},
    "region": {str},
    "pid": {int},
}


def _held_by_another(file: IO[str]) -> bool:
    try:
        fcntl.flock(file, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    fcntl.flock(file, fcntl.LOCK_UN)
    return False
