"""What the HTTP door answers for what it does not route: the methods a path allows (405) and the routes that exist
(404), this app's and those of an app served beside it.

Routes included from routers are walked with FastAPI's `iter_route_contexts` (public since 0.137.2, when
`include_router` stopped copying routes into `app.routes`): it yields every route as the app serves it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from fastapi import FastAPI, Request
from fastapi.routing import APIRoute, iter_route_contexts
from starlette.routing import BaseRoute
from starlette.types import Scope as AsgiScope


def allowed_methods(app: FastAPI, scope: AsgiScope) -> list[str]:
    methods: set[str] = set()
    for route in iter_route_contexts(app.routes):
        if isinstance(route.original_route, APIRoute) and route.methods and route.path_regex.fullmatch(scope["path"]):
            methods |= route.methods
    return sorted(methods)


def no_route(app: FastAPI, request: Request) -> str:
    """The 404 detail of a path no route serves, naming the routes that exist: this app's, and those of an app
    it is served beside (`serve` puts /mcp beside it; the outermost router is the scope's `router`)."""
    routers = [app.router, request.scope.get("router", app.router)]
    paths = {path for router in routers for path in _paths(getattr(router, "routes", [])) if not path.endswith("/")}
    # A path is text the client sent, possibly with lone surrogates, which JSON cannot carry as they are.
    path = request.scope["path"][:200].encode("utf-8", "backslashreplace").decode("utf-8")
    return f"no route {request.method} {path}; the routes are {', '.join(sorted(paths))}"


def _paths(routes: Sequence[BaseRoute]) -> Iterable[str]:
    return (route.path for route in iter_route_contexts(routes) if isinstance(route.path, str))
