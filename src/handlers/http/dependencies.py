"""What the HTTP door's routes depend on: the door's collaborators (the memory service and the policy for its blocking
calls), and the caller (a principal allowed `read` or `write`). create_app puts the collaborators on the app
(`app.state`); the dependencies read them from the request's app, so a route holds no closure and a test swaps them by
building another app.

Every dependency is a coroutine, like the routes: FastAPI would run a plain function in a worker thread, a hop costing
more than the rest of a warm request.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, FastAPI, Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from core.access import Principal, Scope
from handlers.auth import authorize, presented_credentials
from handlers.door import Door


def install(app: FastAPI, door: Door) -> None:
    app.state.door = door


def _door(request: Request) -> Door:
    door: Door = request.app.state.door
    return door


# One dependency for the service and its policy (ThisDoor): each dependency FastAPI resolves costs a warm request
# about 10 µs.
async def http_door(request: Request) -> Door:
    return _door(request)


API_KEY_SCHEME = HTTPBearer(
    scheme_name="ApiKey",
    bearerFormat="am_<key id>_<secret>",
    description="An agent-memory API key. Its namespace is the only one the request sees; its scopes decide "
    "what it may do (`read`: GET routes, `write`: POST, PATCH and DELETE).",
    # Declares the scheme in the OpenAPI document; the key itself is read and checked by `authorize`.
    auto_error=False,
)
# The credentials as the OpenAPI document declares them; `authorize` reads the headers itself.
_Declared = Annotated[HTTPAuthorizationCredentials | None, Security(API_KEY_SCHEME)]


async def _caller(request: Request, scope: Scope) -> Principal:
    door = _door(request)
    return await door.run_blocking(authorize, door.authenticate, presented_credentials(request.headers), scope)


async def anyone(request: Request, _: _Declared) -> Principal:
    """Any caller with a valid key, whatever its scopes (a key may always learn what it is)."""
    door = _door(request)
    return await door.run_blocking(door.authenticate, presented_credentials(request.headers))


async def reader(request: Request, _: _Declared) -> Principal:
    return await _caller(request, "read")


async def writer(request: Request, _: _Declared) -> Principal:
    return await _caller(request, "write")


ThisDoor = Annotated[Door, Depends(http_door)]
# The namespace of every route comes from the key alone, never from the request.
Anyone = Annotated[Principal, Depends(anyone)]
Reader = Annotated[Principal, Depends(reader)]
Writer = Annotated[Principal, Depends(writer)]
