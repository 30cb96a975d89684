"""The MCP door's authorization server for one issuer, assembled: the metadata documents (handlers.oauth.metadata),
the `mcp` SDK's /authorize (PKCE), /token and RFC 7591 /register over GrantProvider (handlers.oauth.provider), RFC
7009 /revoke for public clients (handlers.oauth.revocation) and the consent page (handlers.oauth.consent), all behind
the guard (handlers.oauth.guard). One route for each of handlers.oauth.paths.PATHS.

Imported on the first OAuth request only (handlers.oauth.server), so a cold start serving /mcp never pays for it.
"""

from __future__ import annotations

from typing import Final

from mcp.server.auth.middleware.client_auth import ClientAuthenticator
from mcp.server.auth.routes import cors_middleware, create_auth_routes
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from pydantic import AnyHttpUrl, ConfigDict, TypeAdapter
from starlette.routing import Route, Router
from starlette.types import ASGIApp

from core.access import SCOPES
from core.grants import GrantService
from handlers.concurrency import RunBlocking
from handlers.oauth.consent import ConsentPage, unavailable_page
from handlers.oauth.endpoints import endpoint_routes
from handlers.oauth.guard import Guarded, failing_fast
from handlers.oauth.metadata import metadata_routes
from handlers.oauth.paths import AUTHORIZATION_SERVER_METADATA, AUTHORIZE, CONSENT, REVOKE, TOKEN, resource_url
from handlers.oauth.provider import GrantProvider
from handlers.oauth.revocation import Revocation

# URLs as given: an issuer is compared as a string (RFC 8414 §3.3), so `https://host` must not become `https://host/`.
_URL: Final = TypeAdapter(AnyHttpUrl, config=ConfigDict(url_preserve_empty_path=True))
# The SDK's routes we serve otherwise: its metadata offers client secrets, its revocation requires one, and its
# /authorize and /token are served with what handlers.oauth.endpoints adds.
_REPLACED: Final = frozenset({AUTHORIZATION_SERVER_METADATA, REVOKE, AUTHORIZE, TOKEN})


def authorization_server(grants: GrantService, issuer: str, run_blocking: RunBlocking) -> ASGIApp:
    """The authorization server for `issuer`, protecting its /mcp: its routes behind handlers.oauth.guard."""
    routes = authorization_routes(grants, issuer, failing_fast(run_blocking))
    methods = {route.path: frozenset(route.methods or ()) for route in routes}
    return Guarded(Router(routes=routes), methods, pages={CONSENT: unavailable_page})


def authorization_routes(grants: GrantService, issuer: str, run_blocking: RunBlocking) -> list[Route]:
    """Every route of the authorization server for `issuer`, protecting its /mcp."""
    resource = resource_url(issuer)
    provider = GrantProvider(grants, issuer, resource, run_blocking)
    issuer_url, resource_at = _URL.validate_python(issuer), _URL.validate_python(resource)
    registration = ClientRegistrationOptions(enabled=True, valid_scopes=list(SCOPES), default_scopes=list(SCOPES))
    revocation = RevocationOptions(enabled=True)
    endpoints = create_auth_routes(
        provider, issuer_url, client_registration_options=registration, revocation_options=revocation
    )
    revoke = cors_middleware(Revocation(provider, ClientAuthenticator(provider)).handle, ["POST", "OPTIONS"])
    consent = ConsentPage(grants, resource, run_blocking)
    return [
        *metadata_routes(
            issuer_url, resource_at, registration, revocation, client_documents=grants.reads_client_documents
        ),
        *(route for route in endpoints if route.path not in _REPLACED),
        *endpoint_routes(provider, resource),
        Route(REVOKE, revoke, methods=["POST", "OPTIONS"]),
        Route(CONSENT, consent.handle, methods=["GET", "POST"]),
    ]
