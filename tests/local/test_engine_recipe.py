"""The recipe of docs/operations.md for a DynamoDB Local you run yourself (#42 item 12) runs as written: it installs
the engine apart from what `make serve` installs (so the next `make serve` does not install again), and the engine it
starts listens on loopback only, as serve's own does, never on every interface."""

from __future__ import annotations

import ipaddress
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "operations.md"
LISTENING = "0A"  # a TCP socket's state in /proc/net/tcp*: LISTEN
# How long the engine may take to listen: seconds on a quiet machine (java compiles the launcher first), a minute or
# more on a loaded one; this only ends a start that hangs.
ENGINE_STARTUP_SECONDS = 180


def recipe() -> list[str]:
    """The recipe's commands, one a line: the bash block of docs/operations.md that ends by running serve over the
    engine it started."""
    blocks = re.findall(r"```bash\n(.*?)```", PAGE.read_text(), flags=re.DOTALL)
    (block,) = [block for block in blocks if 'make serve ARGS="--endpoint-url' in block]
    return [line for line in block.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def the_line(commands: list[str], starting: str) -> str:
    (line,) = [command for command in commands if command.startswith(starting)]
    return line


def makes_installs() -> list[str]:
    """Where the Makefile installs its npm packages (NODE_TOOLS), `make serve`'s DynamoDB Local among them."""
    tools = re.search(r"^NODE_TOOLS := (.*)$", (ROOT / "Makefile").read_text(), flags=re.MULTILINE)
    assert tools is not None
    return tools.group(1).split()


def test_the_recipe_installs_its_engine_apart_from_what_make_installs() -> None:
    (install,) = [command for command in recipe() if command.startswith("npm ")]
    (prefix,) = re.findall(r"--prefix (\S+)", install)
    ours = Path(prefix)

    assert "tests/dynamodb_local" in makes_installs()
    for path in map(Path, makes_installs()):
        assert ours != path
        assert path not in ours.parents
        assert ours not in path.parents


def test_the_recipe_starts_its_engine_through_the_loopback_launcher() -> None:
    java = the_line(recipe(), "java ")

    assert "src/local/LoopbackDynamoDBLocal.java" in java
    assert "-jar" not in java.split()  # the jar's own main listens on every interface


def listening_addresses(port: int) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """The addresses a socket listens on at `port`, as Linux lists them."""
    found: list[ipaddress.IPv4Address | ipaddress.IPv6Address] = []
    for table in ("tcp", "tcp6"):
        for row in Path(f"/proc/net/{table}").read_text().splitlines()[1:]:
            local, state = row.split()[1], row.split()[3]
            address, hex_port = local.split(":")
            if state == LISTENING and int(hex_port, 16) == port:
                # Each 32-bit word of the address is written in the machine's order (little-endian here).
                words = [bytes.fromhex(address[i : i + 8])[::-1] for i in range(0, len(address), 8)]
                found.append(ipaddress.ip_address(b"".join(words)))
    return found


def is_loopback(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
    return address.is_loopback or (mapped is not None and mapped.is_loopback)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """What the recipe reads of a clone: the engine's npm package and lock, and the launcher."""
    for path in ("tests/dynamodb_local/package.json", "tests/dynamodb_local/package-lock.json"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / path, tmp_path / path)
    (tmp_path / "src/local").mkdir(parents=True)
    shutil.copy(ROOT / "src/local/LoopbackDynamoDBLocal.java", tmp_path / "src/local")
    return tmp_path


@pytest.fixture
def engine_started_by_the_recipe(clone: Path) -> Iterator[tuple[int, int, Path]]:
    """The recipe run in `clone` as written, on a free port instead of 8000, but for its last line (`make serve`,
    which would install the whole runtime): the port, the engine's pid (the recipe's background java command) once
    the recipe's wait for it has ended, and what the recipe printed."""
    if not all(shutil.which(tool) for tool in ("npm", "java", "curl")):
        pytest.skip("the recipe needs npm, java and curl (make install needs the first two too)")
    commands = recipe()
    java = the_line(commands, "java ")
    assert java.endswith(" &")
    assert the_line(commands, "make serve ") == 'make serve ARGS="--endpoint-url http://127.0.0.1:8000"'
    assert commands[-1].startswith("make serve ")
    port = free_port()
    ran = [command.replace("-port 8000", f"-port {port}").replace(":8000", f":{port}") for command in commands[:-1]]
    # The engine's pid once the recipe's commands have run; the script then waits, the engine its child.
    script = "\n".join(["set -eu", *ran, 'echo "engine pid $!"', "wait"])
    log = clone / "recipe.log"
    with log.open("wb") as output:
        recipe_run = subprocess.Popen(["bash", "-c", script], cwd=clone, stdout=output, stderr=subprocess.STDOUT)
    engine: int | None = None
    try:
        deadline = time.monotonic() + ENGINE_STARTUP_SECONDS
        while (found := re.search(r"^engine pid (\d+)$", log.read_text(errors="replace"), re.M)) is None:
            if recipe_run.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the recipe did not start its engine; it said:\n{log.read_text(errors='replace')}")
            time.sleep(0.2)
        engine = int(found.group(1))
        yield port, engine, log
    finally:
        if engine is not None:
            os.kill(engine, signal.SIGTERM)
        recipe_run.terminate()
        recipe_run.wait(timeout=30)


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads the listening sockets from Linux's /proc/net")
def test_the_recipe_runs_as_written_its_engine_on_loopback_only_and_leaves_makes_install_alone(
    engine_started_by_the_recipe: tuple[int, int, Path], clone: Path
) -> None:
    port, _, log = engine_started_by_the_recipe
    deadline = time.monotonic() + ENGINE_STARTUP_SECONDS
    while not (addresses := listening_addresses(port)):  # at once: the recipe waits until it listens
        if time.monotonic() > deadline:
            pytest.fail(f"the recipe's engine did not listen on {port}; it said:\n{log.read_text(errors='replace')}")
        time.sleep(0.2)

    assert [address for address in addresses if not is_loopback(address)] == []
    assert not (clone / "tests/dynamodb_local/node_modules").exists()  # the next `make serve` finds its own install
