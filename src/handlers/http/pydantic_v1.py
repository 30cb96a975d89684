"""FastAPI's check for pydantic v1 models, answered without importing `pydantic.v1` where none can exist yet.

FastAPI asks of every route's models, and of every value it encodes, whether it is a pydantic v1 model (to refuse
it), and imports `pydantic.v1` to ask: some 3 % of the HTTP function's cold import (core.reaches, which lists the
FastAPI this was checked against, says how much), for an answer that is always no here. A class can derive from
pydantic.v1's `BaseModel`, and a value be an instance of one, only once `pydantic.v1` is imported, so until then the
answer is no without asking; once anything imports it, FastAPI asks as before. Importing this module wraps the
checks (handlers.http does, before any route is made); where a later FastAPI has no such check, there is nothing to
wrap, and tests/handlers/aws/test_cold_import.py says the import is back.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

import fastapi._compat
import fastapi._compat.shared
import fastapi.encoders

Check = Callable[[Any], bool]
# Where FastAPI holds its checks: the module that defines them, and those that imported them by name.
_HOLDERS: tuple[ModuleType, ...] = (fastapi._compat.shared, fastapi._compat, fastapi.encoders)
_CHECKS = ("is_pydantic_v1_model_class", "is_pydantic_v1_model_instance")


def once_imported(check: Check) -> Check:
    """`check`, asked only once `pydantic.v1` is imported; False before."""

    def checked(value: Any) -> bool:
        return "pydantic.v1" in sys.modules and check(value)

    checked.__wrapped__ = check  # type: ignore[attr-defined]  # functools' mark of a wrapper, on a plain function
    return checked


def install() -> None:
    """Wrap FastAPI's checks with once_imported (each once)."""
    for name in _CHECKS:
        for holder in _HOLDERS:
            check = getattr(holder, name, None)
            if check is not None and not hasattr(check, "__wrapped__"):
                setattr(holder, name, once_imported(check))


install()
