"""Amazon DynamoDB Local listens on loopback only: the engine `serve` starts and the ones the tests start
(local.engines.DynamoDBLocal, through its launcher local/LoopbackDynamoDBLocal.java) accept connections on 127.0.0.1
and refuse them through the machine's own network address and on IPv6. A DynamoDB Local the launcher cannot fence is
never started."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from local.engines import DYNAMODB_LOCAL_LIB, LAUNCHER, NOT_FENCED
from tests.conftest import free_port, missing_test_peer

WAIT = 60  # seconds: a generous ceiling on every wait, never a speed claim


def non_loopback_ipv4() -> str | None:
    """An IPv4 address of this machine other than loopback: the source address of its default route (a UDP
    connect sends nothing), else one its host name resolves to."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # TEST-NET-1: never answers, only picks the outgoing interface
            candidates = [probe.getsockname()[0]]
        except OSError:
            candidates = []
    with contextlib.suppress(OSError):
        candidates += [info[4][0] for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)]
    return next((address for address in candidates if not address.startswith("127.")), None)


def ipv6_loopback_connects(port: int) -> bool:
    try:
        socket.create_connection(("::1", port), timeout=WAIT).close()
    except OSError:  # refused, or no IPv6 loopback at all
        return False
    return True


def assert_loopback_only(port: int) -> None:
    socket.create_connection(("127.0.0.1", port), timeout=WAIT).close()  # it answers where its clients reach it
    address = non_loopback_ipv4()
    if address is None:
        print("no non-loopback IPv4 address on this machine: only IPv6 is checked")
    else:
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection((address, port), timeout=WAIT).close()
    assert not ipv6_loopback_connects(port)


def test_the_dynamodb_local_the_tests_start_listens_on_loopback_only(dynamodb_local_endpoint: str) -> None:
    port = urlsplit(dynamodb_local_endpoint).port
    assert port is not None
    assert_loopback_only(port)


def test_the_dynamodb_local_serve_starts_listens_on_loopback_only(shared_serve_engine: tuple[str, str, int]) -> None:
    _, _, ddb_port = shared_serve_engine
    assert_loopback_only(ddb_port)


# A DynamoDBProxyServer built differently from the one the launcher knows (no `server` field): started, it would
# listen on every interface.
UNFENCEABLE = """
package software.amazon.dynamodb.services.local.server;

public class DynamoDBProxyServer {
    private final int port;

    public DynamoDBProxyServer(int port, AbstractLocalDynamoDBServerHandler handler) {
        this.port = port;
    }

    public void safeStart() throws Exception {
        new java.net.ServerSocket(port);
        Thread.sleep(600_000);
    }
}
"""


@pytest.mark.slow
def test_a_dynamodb_local_the_launcher_cannot_bind_to_loopback_is_never_started(tmp_path: Path) -> None:
    java = shutil.which("java")
    jars = sorted(DYNAMODB_LOCAL_LIB.glob("dynamodb_local_*/DynamoDBLocal.jar"))
    if java is None or not jars:
        missing_test_peer("DynamoDB Local", "no java or no jar", "run `make test`, which installs it")
    source = tmp_path / "software/amazon/dynamodb/services/local/server/DynamoDBProxyServer.java"
    source.parent.mkdir(parents=True)
    source.write_text(UNFENCEABLE)
    compiler = [java, "-m", "jdk.compiler/com.sun.tools.javac.Main", "-d", str(tmp_path), "-cp", str(jars[-1])]
    subprocess.run([*compiler, str(source)], check=True, timeout=WAIT)
    port = free_port()
    classes = f"{tmp_path}:{jars[-1]}"  # the stand-in first: it shadows the jar's own class

    ran = subprocess.run(
        [java, "-cp", classes, str(LAUNCHER), "-inMemory", "-sharedDb", "-disableTelemetry", "-port", str(port)],
        capture_output=True,
        text=True,
        timeout=WAIT,
    )

    assert ran.returncode == NOT_FENCED, ran.stderr
    assert "cannot bind DynamoDB Local to 127.0.0.1 only" in ran.stderr
    assert "not starting it" in ran.stderr
