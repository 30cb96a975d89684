"""The MCP SDK's server for the MCP function, imported without what a Lambda function never runs (about a tenth of
its cold import): the `mcp` package's `__init__`, which imports the SDK's client side (and, through it, the whole
server again); uvicorn and its click, which sse_starlette imports when installed only to hook a uvicorn server's
shutdown; and httpx2, with which the SDK's HTTP resources fetch (this server serves none). The type adapters the SDK
makes as it imports are built on first use (handlers.aws.models).

Nothing is taken away: the `mcp` package runs its `__init__` on the first lookup of a name it does not hold yet (so
`from mcp import Client` still works), the SDK's `httpx2` is the real module from its first use, and uvicorn imports
as usual afterwards. Importing this module does it, first thing in the entrypoint (handlers.aws.mcp); `serve` and the
tests import the SDK as it is. It relies on how the SDK's modules import each other, none of it the SDK's API:
core.reaches lists the versions it was checked against, and another fails the tests until it is checked again.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from typing import Any

from handlers.aws import models


class PackageInitOnFirstLookup(types.ModuleType):
    """A package bound without running its `__init__`; the first lookup of a name it lacks runs it, in place."""

    def __getattr__(self, name: str) -> Any:
        # An ordinary module from here on: the lookups its __init__ makes of itself find no hook.
        object.__setattr__(self, "__class__", types.ModuleType)
        spec = self.__spec__
        if spec is None or spec.loader is None:
            raise AttributeError(name)
        spec.loader.exec_module(self)
        return getattr(self, name)


class ModuleOnFirstUse(types.ModuleType):
    """Stands in for a module that is imported, as a whole, on the first lookup of any of its names."""

    def __getattr__(self, name: str) -> Any:
        object.__setattr__(self, "__class__", types.ModuleType)
        if sys.modules.get(self.__name__) is self:  # looked up while still bound in its place
            del sys.modules[self.__name__]
        self.__dict__.update(vars(importlib.import_module(self.__name__)))
        return getattr(self, name)


def bind_without_init(name: str) -> None:
    """Bind the installed package `name` without running its `__init__` (nothing when it is imported already, or is
    no installed package)."""
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None or spec.submodule_search_locations is None:
        return
    package = importlib.util.module_from_spec(spec)
    package.__class__ = PackageInitOnFirstLookup
    sys.modules[name] = package


def import_server() -> None:
    """Import `mcp.server` as the module docstring says (once; nothing to do when the SDK is already imported)."""
    if "mcp" in sys.modules:
        return
    bind_without_init("mcp")
    placeholders: dict[str, types.ModuleType | None] = {
        "uvicorn": None,  # an import of it fails, as where it is not installed
        "httpx2": ModuleOnFirstUse("httpx2"),
    }
    bound = {name: placeholder for name, placeholder in placeholders.items() if name not in sys.modules}
    sys.modules.update(bound)  # type: ignore[arg-type]  # None is how sys.modules spells "cannot be imported"
    try:
        with models.adapters_deferred():
            importlib.import_module("mcp.server")
    finally:
        for name, placeholder in bound.items():
            if name in sys.modules and sys.modules[name] is placeholder:
                del sys.modules[name]


import_server()
