"""What the HTTP door answers for what it does not route: the methods a path allows (405) and the routes that exist
(404), this app's and those of an app served beside it."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.routing import APIRoute
from starlette.types import Scope as AsgiScope


def allowed_methods(app: FastAPI, scope: AsgiScope) -> list[str]:
    methods: set[str] = set()
    for route in app.routes:
        if isinstance(route, APIRoute) and route.methods and route.path_regex.fullmatch(scope["path"]):
            methods |= route.methods
    return sorted(methods)


def no_route(app: FastAPI, request: Request) -> str:
    """The 404 detail of a path no route serves, naming the routes that exist: this app's, and those of an app
    it is served beside (`serve` puts /mcp beside it; the outermost router is the scope's `router`)."""
    routers = [app.router, request.scope.get("router", app.router)]
    paths = {
        route.path
        for router in routers
        for route in getattr(router, "routes", [])
        if isinstance(getattr(route, "path", None), str) and not route.path.endswith("/")
    }
    # A path is text the client sent, possibly with lone surrogates, which JSON cannot carry as they are.
    path = request.scope["path"][:200].encode("utf-8", "backslashreplace").decode("utf-8")
    return f"no route {request.method} {path}; the routes are {', '.join(sorted(paths))}"
