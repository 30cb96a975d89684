"""What the in-process OAuth tests share: a client and a person's browser in front of the module's `endpoint` (each
module builds its own), and an API key of namespace alice to consent with."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx2
import pytest

from core.keys import KeyService
from handlers.mcp.endpoint import MCPEndpoint
from tests.handlers.oauth.test_oauth import ORIGIN


@pytest.fixture
async def http(endpoint: MCPEndpoint) -> AsyncIterator[httpx2.AsyncClient]:
    """The MCP client's HTTP: the endpoint served with its session manager running."""
    transport = httpx2.ASGITransport(app=endpoint)
    async with endpoint.session_manager.run(), httpx2.AsyncClient(transport=transport, base_url=ORIGIN) as client:
        yield client


@pytest.fixture
async def browser(endpoint: MCPEndpoint) -> AsyncIterator[httpx2.AsyncClient]:
    """The person's browser: its own cookie jar, following nothing by itself."""
    transport = httpx2.ASGITransport(app=endpoint)
    async with httpx2.AsyncClient(transport=transport, base_url=ORIGIN) as client:
        yield client


@pytest.fixture
def alice_key(key_service: KeyService) -> str:
    return key_service.create("alice")[1]
