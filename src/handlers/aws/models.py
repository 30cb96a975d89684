"""Pydantic models (and the MCP SDK's type adapters) built on first use in the door functions, so a cold start pays
only for those its requests use.

Pydantic builds the validator and serializer of a model when its class is made, and of a type adapter when it is
made. The MCP function's import makes about 1,000 models (the SDK's version-free types and the wire types of both
protocol eras, of which a session uses a few dozen) and the SDK's adapters over their unions; the HTTP function's
makes FastAPI's OpenAPI models, which only the OpenAPI document uses. Between `defer_builds()` (importing this module
does it, first thing in each entrypoint) and `resume_builds()`, pydantic's own `defer_build` is on for every model
made, and inside `adapters_deferred()` (around the SDK's import, handlers.aws.sdk) for every adapter made: each is
built, the same, on its first use. Only the setting's default changes; a model that sets `defer_build` itself keeps
its choice.

A function with SnapStart builds them all before its snapshot (`build_deferred()`, from its warm-up), so a copy
restored from it builds none.

The default lives in pydantic's internals (`config_defaults`, and the `_defer_build` property through which a type
adapter reads its configuration). Where a later pydantic has neither, everything is built at import as before, and
tests/handlers/aws/test_models.py fails to say so; core.reaches lists the pydantic this was checked against (and what
it saves), and another fails the tests until it is checked again.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pydantic import BaseModel, TypeAdapter

try:
    from pydantic._internal._config import config_defaults as _defaults
except ImportError:  # pragma: no cover  # a later pydantic: everything is built at import, as before
    _defaults: dict[str, Any] = {}  # type: ignore[no-redef]  # the stand-in for the name the try imports

_SETTING = "defer_build"
# The adapters made inside adapters_deferred(), each built by build_deferred() or on its first use.
_adapters: list[TypeAdapter[Any]] = []
_deferring_adapters = False


def _adapter_defers(original: property) -> property:
    """TypeAdapter's `_defer_build` (read once, as an adapter is made), also true inside adapters_deferred()."""

    def defers(adapter: TypeAdapter[Any]) -> bool:
        if _deferring_adapters:
            _adapters.append(adapter)
            return True
        return bool(original.fget(adapter))  # type: ignore[misc]  # _install passes only a property whose fget is set

    return property(defers)


def _install() -> None:
    original = TypeAdapter.__dict__.get("_defer_build")
    if isinstance(original, property) and original.fget is not None and _SETTING in _defaults:
        # A private reach, pinned (pyproject.toml: pydantic==2.14.4): core.reaches names the pydantic it was checked
        # against, and tests/infra/test_private_reaches.py fails on any other (pydantic has no public default for
        # adapters, and FastAPI makes its own).
        TypeAdapter._defer_build = _adapter_defers(original)  # type: ignore[method-assign,assignment]  # a property over pydantic's, on purpose


def defer_builds() -> None:
    """Models made from now on, until resume_builds(), are built on first use."""
    if _SETTING in _defaults:
        _defaults[_SETTING] = True  # type: ignore[literal-required]  # a ConfigDict key, named once in _SETTING


def resume_builds() -> None:
    """Models made from now on are built when made, pydantic's default."""
    if _SETTING in _defaults:
        _defaults[_SETTING] = False  # type: ignore[literal-required]  # a ConfigDict key, named once in _SETTING


@contextmanager
def adapters_deferred() -> Iterator[None]:
    """Type adapters made inside are built on first use too. Only around code that builds no adapter under a warnings
    filter of its own (FastAPI does: its adapters, built later, would warn), so only around the MCP SDK's import."""
    global _deferring_adapters  # one switch, read by every adapter made
    _deferring_adapters = True
    try:
        yield
    finally:
        _deferring_adapters = False


def _subclasses(root: type[BaseModel]) -> set[type[BaseModel]]:
    found: set[type[BaseModel]] = set()
    pending = [root]
    while pending:
        for subclass in type.__subclasses__(pending.pop()):
            if subclass not in found:
                found.add(subclass)
                pending.append(subclass)
    return found


def deferred() -> tuple[list[type[BaseModel]], list[TypeAdapter[Any]]]:
    """The models and the adapters made so far that are not built yet."""
    models = [model for model in _subclasses(BaseModel) if not model.__pydantic_complete__]
    return models, [adapter for adapter in _adapters if not adapter.pydantic_complete]


def build_deferred() -> int:
    """Build every model and adapter not built yet, as its first use would; how many it built. One that cannot be
    built (a name it uses is not defined) stays as it is, and fails on its use as it would have anyway."""
    models, adapters = deferred()
    built = sum(model.model_rebuild(raise_errors=False) is True for model in models)
    built += sum(adapter.rebuild(raise_errors=False) is True for adapter in adapters)
    _adapters[:] = [adapter for adapter in _adapters if not adapter.pydantic_complete]
    return built


_install()
defer_builds()
