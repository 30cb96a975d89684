"""`serve` runs uvicorn and watches the DynamoDB Local it owns. An engine that exits unasked (killed, crashed, out of
memory) took every memory and key with it (it runs in memory), so serve says so plainly on stderr, answers every
request (/healthz included) 503 from then on, and stops with ENGINE_EXITED: better than answering "briefly
unavailable" forever over data that is gone."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

    from core.health import StorageHealth
    from local.listener import Health

# serve's exit status when its DynamoDB Local exited unasked (1: could not start; 2: refused its options).
ENGINE_EXITED = 3
STARTUP_FAILED = 1
# How often the engine is checked: an exit is noticed within about this long.
POLL_SECONDS = 0.5


class Engine(Protocol):
    """What the watch needs of an engine process (local.engines.DynamoDBLocal)."""

    @property
    def pid(self) -> int | None: ...

    def exit_code(self) -> int | None: ...

    def log_tail(self) -> str: ...


def _how(code: int) -> str:
    if code < 0:
        try:
            return f"killed by signal {-code}, {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


class EngineWatch:
    """A thread polling the engine's process: on an exit nobody asked for, it reaps it, reports it and calls
    `on_exit` (once). `stop()` before stopping the engine on purpose."""

    def __init__(self, engine: Engine, on_exit: Callable[[], None], every: float = POLL_SECONDS) -> None:
        self._engine, self._on_exit, self._every = engine, on_exit, every
        self._stopped = threading.Event()
        # What `serve` said when the engine exited; None while it runs.
        self.report: str | None = None
        self._thread = threading.Thread(target=self._watch, name="engine-watch", daemon=True)

    def start(self) -> EngineWatch:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join()

    def _watch(self) -> None:
        while not self._stopped.wait(self._every):
            code = self._engine.exit_code()  # poll() reaps it: no zombie is left behind
            if code is not None:
                self._exited(code)
                return

    def _exited(self, code: int) -> None:
        tail = self._engine.log_tail()
        self.report = (
            f"agent-memory: Amazon DynamoDB Local (pid {self._engine.pid}) exited on its own ({_how(code)}). Its "
            "in-memory data is gone: every memory and API key this serve held. agent-memory serve stops now "
            f"(exit status {ENGINE_EXITED}); run it again to start over on an empty store."
            + (f"\nDynamoDB Local's log ended with:\n{tail}" if tail else "\nDynamoDB Local's log is empty.")
        )
        print(self.report, file=sys.stderr, flush=True)
        self._on_exit()


def unless_engine_exited(app: ASGIApp, watch: EngineWatch) -> ASGIApp:
    """`app`, except that once the engine has exited every HTTP request (/healthz too) gets a 503 saying so: nothing
    it could answer is true any more, and no retry helps (no Retry-After). The doors themselves know no engine."""
    from handlers.problem import problem_response  # only serve's HTTP stack loads it

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or watch.report is None:
            await app(scope, receive, send)
            return
        response = problem_response(
            503,
            "storage-exited",
            "The storage engine has exited",
            "Amazon DynamoDB Local, where this server kept its data in memory, exited: every memory and API key "
            "it held is gone, and the server is stopping",
        )
        await response(scope, receive, send)

    return guarded


def probe_answer(health: StorageHealth, watch: EngineWatch | None) -> Health:
    """/healthz as the listener answers its probes (local.listener): the app's own answer from `health`, and none
    once the engine has exited, so the app says so (unless_engine_exited)."""
    from handlers.http.app import health_answer

    def answer() -> tuple[int, bytes] | None:
        if watch is not None and watch.report is not None:
            return None
        return health_answer(health)

    return answer


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM taken as Ctrl-C while the block runs. uvicorn shuts down gracefully on either, then raises the signal
    again under the handler it found; Python's default for SIGTERM ends the process there, before any `finally`
    (the state file, the engine, the background threads) and with status -15."""
    if threading.current_thread() is not threading.main_thread():  # only the main thread may set handlers
        yield
        return

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_server(
    app: ASGIApp,
    host: str,
    port: int,
    engine: Engine | None,
    forwarded_allow_ips: str | None = None,
    health: StorageHealth | None = None,
) -> int:
    """Serve `app` with uvicorn until it is stopped (Ctrl-C, SIGTERM: 0) or `engine`, when serve owns one, exits on
    its own (ENGINE_EXITED); STARTUP_FAILED when uvicorn could not listen (it logged why). Forwarded headers are
    trusted from `forwarded_allow_ips` only; with `health`, health probes are answered by the listener, before the
    app (local.listener)."""
    import uvicorn

    from local.listener import server_config

    watch = None
    if engine is not None:

        def stop_serving() -> None:
            server.should_exit = True  # uvicorn finishes the requests in flight, then returns

        watch = EngineWatch(engine, stop_serving)
        app = unless_engine_exited(app, watch)
    answer = probe_answer(health, watch) if health is not None else None
    server = uvicorn.Server(server_config(app, host, port, forwarded_allow_ips, answer))
    if watch is not None:
        watch.start()
    try:
        with _sigterm_as_interrupt():
            server.run()
    except KeyboardInterrupt:
        pass  # uvicorn re-raises the Ctrl-C or SIGTERM it shut down on: a normal stop, as uvicorn.run takes it
    except SystemExit:
        # uvicorn exits (with 3, which is ENGINE_EXITED here) when it cannot listen or the app cannot start; it
        # logged why.
        return STARTUP_FAILED
    finally:
        if watch is not None:
            watch.stop()
    if watch is not None and watch.report is not None:
        return ENGINE_EXITED
    return 0 if server.started else STARTUP_FAILED
