"""Every place our code reaches into a dependency's private API, in one list: the packages, the versions it was
checked against, where it is and why. Data only (it imports nothing of ours and no framework), so any layer names it.

tests/infra/test_private_reaches.py scans src/ for private names of code that is not ours (a name starting with `_`
imported from, or read, written or looked up on, a dependency) and fails on one not listed here, on a listed one it no
longer finds, and when an installed version of a listed package differs from the one checked: an upgrade fails the
tests until each reach into it is checked again (or replaced by a public way, and its entry dropped).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True)
class Reach:
    """One module's reach into private API: what it touches (as the scan names it: an import's dotted path, or an
    attribute's private name; none for a reach the scan cannot see), the packages and versions it was checked
    against, and why no public way serves."""

    module: str
    names: tuple[str, ...]
    checked_with: dict[str, str]
    why: str


# A saving below is the import's instructions with the reach against without it (cachegrind, `import handlers.aws.mcp`
# or `handlers.aws.http`, on the versions checked), and the milliseconds those are at the bench's own rate for that
# import (docs/performance.json: cold). A reach kept for cold start must save more than 20 ms.
REACHES: Final = (
    Reach(
        module="handlers.aws.models",
        names=("pydantic._internal._config", "_defer_build", "patch TypeAdapter._defer_build"),
        checked_with={"pydantic": "2.14.4"},
        why="building models and type adapters on first use: pydantic's `defer_build` default (config_defaults) and "
        "the property through which a type adapter reads it; a public `defer_build` is per model, and the SDK's and "
        "FastAPI's models are not ours to configure. Saves 490 M instructions of the MCP function's import (12 %, "
        "about 130 ms) and 170 M of the HTTP function's (6 %, about 47 ms)",
    ),
    Reach(
        module="handlers.http.pydantic_v1",
        names=("fastapi._compat", "fastapi._compat.shared", "_compat"),
        checked_with={"fastapi": "0.165.0"},
        why="FastAPI's pydantic v1 checks, answered no until `pydantic.v1` is imported: FastAPI imports it to ask, "
        "and has no setting to skip the question. Saves 100 M instructions of the HTTP function's import (3.4 %, "
        "about 28 ms)",
    ),
    Reach(
        module="handlers.aws.sdk",
        names=(),
        checked_with={"mcp": "2.3.0", "sse-starlette": "3.7.1"},
        why="importing the SDK's server without the `mcp` package's __init__ (its client side), uvicorn (which "
        "sse_starlette imports when installed) and httpx2 until first used: relies on how the SDK's modules import "
        "each other, none of it the SDK's API. Saves 520 M instructions of the MCP function's import (13 %, about "
        "137 ms)",
    ),
    Reach(
        module="handlers.mcp.server",
        names=("_lowlevel_server", "_request_handlers"),
        checked_with={"mcp": "2.3.0"},
        why="serving tools only: MCPServer always registers prompt and resource handlers, and advertises a capability "
        "for each; no public API removes one (the low-level Server would, at the price of the tools' own dispatch)",
    ),
    Reach(
        module="local.listener",
        names=(),
        checked_with={"uvicorn": "0.54.0", "h11": "0.16.0"},
        why="answering a request uvicorn cannot read, and health probes where they are read: overrides of "
        "H11Protocol.send_400_response and data_received that read and drive its connection, transport, server "
        "state and access logger, and end a request as its on_response_complete does, none of them uvicorn's public "
        "API (serve only, never on Lambda)",
    ),
)
