"""`serve`'s access log names a request by its path, never its query string: a client may put a credential there
(RFC 6750 §2.3's `access_token`, which this server refuses but would otherwise have written down), and a log file
must never hold one. The path alone is the safest choice: no list of parameter names to keep complete."""

from __future__ import annotations

import copy
import logging
from typing import Any

# uvicorn's access line: client address, method, path with query string, HTTP version, status.
_ACCESS_ARGS = 5
_PATH = 2


class PathOnly(logging.Filter):
    """Drops the query string from uvicorn's access line; a line not in the shape this filter knows is not written,
    rather than written with whatever it holds."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if not isinstance(args, tuple) or len(args) != _ACCESS_ARGS:
            return False
        path = args[_PATH]
        if not isinstance(path, str):
            return False
        record.args = (*args[:_PATH], path.partition("?")[0], *args[_PATH + 1 :])
        return True


def log_config() -> dict[str, Any]:
    """uvicorn's own logging configuration, its access log through PathOnly."""
    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config.setdefault("filters", {})["path_only"] = {"()": PathOnly}
    config["loggers"]["uvicorn.access"]["filters"] = ["path_only"]
    return config
