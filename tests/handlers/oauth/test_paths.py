"""The paths the MCP endpoint hands to its authorization server (handlers.oauth.paths, a leaf it imports without the
routes) are the paths the routes serve: the SDK's own among them, whose names are written down again there."""

from __future__ import annotations

from collections import Counter

from adapters.memory import InMemoryGrantRepository
from core.grants import GrantService
from core.keys import KeyService
from handlers.concurrency import inline
from handlers.oauth.paths import PATHS
from handlers.oauth.routes import authorization_routes


def test_the_authorization_server_has_one_route_for_each_path_the_endpoint_sends_it(key_service: KeyService):
    grants = GrantService(InMemoryGrantRepository(), key_service)

    routes = authorization_routes(grants, "https://memory.example.com", inline)

    assert Counter(route.path for route in routes) == Counter(PATHS)
