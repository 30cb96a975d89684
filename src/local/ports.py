"""The ports `serve` listens on: the HTTP port it is given, and its DynamoDB Local's, which follows it (the next port)
unless that is taken, then any free one, so that a second serve given only `--port` starts beside the first. A port
that is given and taken stops serve before anything starts, naming its option and, for the HTTP port, one to pass
instead."""

from __future__ import annotations

import argparse
import errno
import socket

from handlers.bootstrap.runtime import serve_state_dir
from local.running import running_serves

ENGINE_HOST = "127.0.0.1"
# How far past a taken HTTP port serve looks for one to suggest (with its next port free for the engine).
SUGGESTION_SPAN = 100


def port_in_use(host: str, port: int) -> bool:
    """Whether something already listens on `host`:`port`: a bind as uvicorn and werkzeug do it fails."""
    host = host.strip("[]")
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            return exc.errno == errno.EADDRINUSE  # anything else (an unknown host) is the server's to report
    return False


def engine_port(http_port: int) -> int:
    """The loopback port for the DynamoDB Local of a serve on `http_port` given no --ddb-port: the next one when
    free (8788 beside the default 8787), else one the system finds free. Free when chosen: another program may still
    take it before the engine binds it, which the engine's start then reports."""
    following = http_port + 1
    if following <= 65535 and not port_in_use(ENGINE_HOST, following):
        return following
    with socket.socket() as sock:
        sock.bind((ENGINE_HOST, 0))
        return int(sock.getsockname()[1])


def busy_port(args: argparse.Namespace, own_engine: bool) -> str | None:
    """The refusal for a port `serve` cannot listen on, naming its option, before anything is created (--ddb-port
    None: serve picks its engine's port, engine_port)."""
    engine = [("--ddb-port", ENGINE_HOST, args.ddb_port)] if own_engine and args.ddb_port is not None else []
    for option, host, port in [("--port", args.host, args.port), *engine]:
        if port_in_use(host, port):
            return (
                f"agent-memory: port {port} on {host} ({option}) is in use by {_holder(option, port)}: stop it, or "
                f"choose another port with {option}{_suggestion(option, host, port)}"
            )
    return None


def _holder(option: str, port: int) -> str:
    """Who holds a taken port: the running serve of this user on that HTTP port, when one is announced."""
    serves = [serve for serve in running_serves(serve_state_dir()) if serve.port == port] if option == "--port" else []
    return f"the `agent-memory serve` at {serves[0].base_url} (pid {serves[0].pid})" if serves else "another program"


def _suggestion(option: str, host: str, port: int) -> str:
    """For a taken HTTP port, a free one near it whose next port is free too (the engine's); else nothing."""
    if option != "--port":
        return ""
    for candidate in range(port + 1, min(port + SUGGESTION_SPAN, 65534)):
        if not port_in_use(host, candidate) and not port_in_use(ENGINE_HOST, candidate + 1):
            return f", e.g. --port {candidate}"
    return ""
