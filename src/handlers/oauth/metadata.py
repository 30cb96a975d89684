"""The documents that tell a client where everything is: RFC 8414's authorization server metadata for the issuer,
and RFC 9728's protected resource metadata for /mcp, under the resource's path (§3.1) and at the root, which some
clients probe. Each is a GET (and a CORS preflight) any origin may read."""

from __future__ import annotations

from typing import Final

from mcp.server.auth.handlers.metadata import MetadataHandler, ProtectedResourceMetadataHandler
from mcp.server.auth.routes import build_metadata, cors_middleware
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from mcp.shared.auth import ProtectedResourceMetadata
from pydantic import AnyHttpUrl
from starlette.routing import Route

from core.access import SCOPES
from handlers.oauth.paths import AUTHORIZATION_SERVER_METADATA, PROTECTED_RESOURCE_METADATA, RESOURCE_METADATA

RESOURCE_NAME: Final = "agent-memory"
_METHODS: Final = ["GET", "OPTIONS"]


def metadata_routes(
    issuer: AnyHttpUrl,
    resource: AnyHttpUrl,
    registration: ClientRegistrationOptions,
    revocation: RevocationOptions,
    *,
    client_documents: bool,
) -> list[Route]:
    """The metadata of the authorization server `issuer`, with `registration` and `revocation` on (and clients
    known by their Client ID Metadata Document when `client_documents`), and of the protected resource `resource`
    it grants access to."""
    metadata = build_metadata(issuer, None, registration, revocation)
    # The SDK's metadata offers client secrets; every client here is public (GrantProvider.register_client).
    metadata.token_endpoint_auth_methods_supported = ["none"]
    metadata.revocation_endpoint_auth_methods_supported = ["none"]
    metadata.client_id_metadata_document_supported = True if client_documents else None
    protected = ProtectedResourceMetadata(
        resource=resource, authorization_servers=[issuer], scopes_supported=list(SCOPES), resource_name=RESOURCE_NAME
    )
    describe_server = cors_middleware(MetadataHandler(metadata).handle, _METHODS)
    describe_resource = cors_middleware(ProtectedResourceMetadataHandler(protected).handle, _METHODS)
    return [
        Route(AUTHORIZATION_SERVER_METADATA, describe_server, methods=_METHODS),
        Route(RESOURCE_METADATA, describe_resource, methods=_METHODS),
        Route(PROTECTED_RESOURCE_METADATA, describe_resource, methods=_METHODS),
    ]
