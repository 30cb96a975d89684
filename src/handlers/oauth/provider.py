"""The MCP door's authorization server for one issuer: the `mcp` SDK's OAuth routes (RFC 8414 metadata, RFC 7591
registration, /authorize with PKCE, /token, RFC 7009 revocation, RFC 9728 resource metadata) over GrantProvider,
which keeps what the SDK leaves to a provider in the core's GrantService; and the consent page (handlers.oauth.consent).

Imported on the first OAuth request only (handlers.oauth.server), so a cold start serving /mcp never pays for it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlencode

from mcp.server.auth.handlers.metadata import MetadataHandler, ProtectedResourceMetadataHandler
from mcp.server.auth.middleware.client_auth import AuthenticationError as ClientAuthenticationError
from mcp.server.auth.middleware.client_auth import ClientAuthenticator
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    IdentityAssertionParams,
    RefreshToken,
    RegistrationError,
    RegistrationErrorCode,
    TokenError,
)
from mcp.server.auth.routes import (
    REVOCATION_PATH,
    build_metadata,
    cors_middleware,
    create_auth_routes,
    create_protected_resource_routes,
)
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken, ProtectedResourceMetadata
from pydantic import AnyHttpUrl, AnyUrl, ConfigDict, TypeAdapter
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route, Router
from starlette.types import ASGIApp

from core.access import SCOPES
from core.errors import InvalidInputError
from core.grants import GrantError, GrantService, Tokens
from core.limits import MAX_STATE_CHARS
from core.repository import Grant
from core.tokens import is_access_token
from handlers.concurrency import RunBlocking
from handlers.oauth.consent import CONSENT_PATH, ConsentPage
from handlers.oauth.guard import Guarded, caller, failing_fast
from handlers.oauth.server import AUTHORIZATION_SERVER_METADATA, PROTECTED_RESOURCE_METADATA

RESOURCE_NAME = "agent-memory"
# URLs as given: an issuer is compared as a string (RFC 8414 §3.3), so `https://host` must not become `https://host/`.
_URL: Final = TypeAdapter(AnyHttpUrl, config=ConfigDict(url_preserve_empty_path=True))


class _Code(AuthorizationCode):
    grant: Grant


class _Refresh(RefreshToken):
    grant: Grant


class GrantProvider:
    """The SDK's OAuthAuthorizationServerProvider over GrantService, for the issuer `issuer` whose protected
    resource is `resource` (this server's /mcp URL). Every blocking call goes through `run_blocking`."""

    def __init__(
        self, grants: Callable[[], GrantService], issuer: str, resource: str, run_blocking: RunBlocking
    ) -> None:
        self._grants = grants
        self._issuer = issuer
        self._resource = resource
        self._run = run_blocking

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        client = await self._run(self._grants().client, client_id)
        return OAuthClientInformationFull.model_validate_json(client.metadata) if client is not None else None

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        # Every client is public, its PKCE verifier its proof (RFC 7591 §3.2.1 lets a server replace requested
        # metadata): a client asking for a secret (Claude's connectors do) is told `none` and gets no secret, so
        # no client secret is ever stored. One sending a secret anyway is not refused: `none` ignores it.
        client_info.token_endpoint_auth_method = "none"  # noqa: S105
        client_info.client_secret = None
        client_info.client_secret_expires_at = None
        metadata = client_info.model_dump_json(exclude_none=True)
        uris = [str(uri) for uri in client_info.redirect_uris or []]
        try:
            await self._run(self._grants().register, client_info.client_id or "", metadata, uris, caller())
        except InvalidInputError as exc:
            error: RegistrationErrorCode = (
                "invalid_redirect_uri" if exc.errors[0].field == "redirect_uris" else "invalid_client_metadata"
            )
            raise RegistrationError(error, "; ".join(f"{e.field} {e.message}" for e in exc.errors)) from None

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        if not params.redirect_uri_provided_explicitly:
            raise AuthorizeError("invalid_request", "send the redirect_uri (OAuth 2.1 requires it)")
        if params.resource is not None and params.resource.rstrip("/") != self._resource:
            raise AuthorizeError("invalid_target", f"this server grants access to {self._resource} only")
        if params.state is not None and len(params.state) > MAX_STATE_CHARS:
            raise AuthorizeError("invalid_request", f"state must be at most {MAX_STATE_CHARS} characters")
        query = {
            "client_id": client.client_id or "",
            "redirect_uri": str(params.redirect_uri),
            "code_challenge": params.code_challenge,
            "scope": " ".join(params.scopes or SCOPES),
        }
        if params.state is not None:
            query["state"] = params.state
        return f"{self._issuer}{CONSENT_PATH}?{urlencode(query)}"

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> _Code | None:
        grant = await self._run(self._grants().pending_code, authorization_code, client.client_id or "")
        if grant is None:
            return None
        return _Code(
            code=authorization_code,
            scopes=list(grant.scopes),
            expires_at=float(grant.code_expires_at),
            client_id=grant.client_id,
            code_challenge=grant.code_challenge,
            redirect_uri=AnyUrl(grant.redirect_uri),
            redirect_uri_provided_explicitly=True,
            resource=grant.resource,
            grant=grant,
        )

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: _Code
    ) -> OAuthToken:
        return _token_response(await self._tokens(self._grants().redeem, authorization_code.grant))

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> _Refresh | None:
        grant = await self._run(self._grants().refreshable, refresh_token, client.client_id or "")
        if grant is None:
            return None
        return _Refresh(
            token=refresh_token,
            client_id=grant.client_id,
            scopes=list(grant.scopes),
            expires_at=grant.expires_at,
            resource=grant.resource,
            grant=grant,
        )

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: _Refresh, scopes: list[str]
    ) -> OAuthToken:
        return _token_response(await self._tokens(self._grants().rotate, refresh_token.grant, scopes))

    async def load_access_token(self, token: str) -> AccessToken | None:
        """The protocol's view of a live access token. The SDK's routes used here never ask for it: /mcp checks
        tokens in its own guard (GrantService.verify), and /revoke is Revocation's."""
        grant = await self._run(self._grants().holder, token) if is_access_token(token) else None
        if grant is None or grant.revoked:
            return None
        return AccessToken(
            token=token,
            client_id=grant.client_id,
            scopes=list(grant.access_scopes),
            expires_at=grant.access_expires_at,
            resource=grant.resource,
        )

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        await self.revoke(token.token, token.client_id)

    async def revoke(self, token: str, client_id: str) -> None:
        """Revoke the grant of `token` if `client_id` holds it; nothing otherwise (RFC 7009 §2.2)."""
        await self._run(self._grants().revoke, token, client_id)

    async def exchange_identity_assertion(
        self, client: OAuthClientInformationFull, params: IdentityAssertionParams
    ) -> OAuthToken:
        raise TokenError("unsupported_grant_type", "only the authorization code and refresh token grants are served")

    async def _tokens(self, issue: Callable[..., Tokens], *args: Any) -> Tokens:
        try:
            tokens: Tokens = await self._run(issue, *args)
        except GrantError as exc:
            raise TokenError(exc.error, exc.description) from None
        return tokens


def _token_response(tokens: Tokens) -> OAuthToken:
    return OAuthToken(
        access_token=tokens.access_token,
        token_type="Bearer",  # noqa: S106
        expires_in=tokens.expires_in,
        scope=" ".join(tokens.scopes),
        refresh_token=tokens.refresh_token,
    )


@dataclass(frozen=True)
class Revocation:
    """RFC 7009 revocation for public clients. The SDK's handler requires a `client_secret` field, which a public
    client never sends (its form cannot carry the None it would accept), so every public client's revocation got
    400; this one authenticates the client as the SDK does and takes `token` (and ignores `token_type_hint`)."""

    provider: GrantProvider
    clients: ClientAuthenticator

    async def handle(self, request: Request) -> Response:
        headers = {"Cache-Control": "no-store", "Pragma": "no-cache"}
        try:
            client = await self.clients.authenticate_request(request)
        except ClientAuthenticationError as exc:
            body = {"error": "invalid_client", "error_description": exc.message}
            return JSONResponse(body, status_code=401, headers=headers)
        token = (await request.form()).get("token")
        if not isinstance(token, str) or not token:
            body = {"error": "invalid_request", "error_description": "send the token to revoke as `token`"}
            return JSONResponse(body, status_code=400, headers=headers)
        await self.provider.revoke(token, client.client_id or "")
        return Response(status_code=200, headers=headers)


def authorization_server(
    grants: Callable[[], GrantService], issuer: str, resource: str, run_blocking: RunBlocking
) -> ASGIApp:
    """The authorization server for `issuer`, protecting `resource`: its routes behind handlers.oauth.guard."""
    routes = authorization_routes(grants, issuer, resource, failing_fast(run_blocking))
    methods = {route.path: frozenset(route.methods or ()) for route in routes if isinstance(route, Route)}
    return Guarded(Router(routes=routes), methods)


def authorization_routes(
    grants: Callable[[], GrantService], issuer: str, resource: str, run_blocking: RunBlocking
) -> list[BaseRoute]:
    """Every route of the authorization server for `issuer`, protecting `resource`."""
    provider = GrantProvider(grants, issuer, resource, run_blocking)
    issuer_url, resource_url = _URL.validate_python(issuer), _URL.validate_python(resource)
    registration = ClientRegistrationOptions(enabled=True, valid_scopes=list(SCOPES), default_scopes=list(SCOPES))
    revocation = RevocationOptions(enabled=True)
    methods = ["GET", "OPTIONS"]
    # The SDK's metadata offers client secrets; every client here is public (GrantProvider.register_client).
    metadata = build_metadata(issuer_url, None, registration, revocation)
    metadata.token_endpoint_auth_methods_supported = ["none"]
    metadata.revocation_endpoint_auth_methods_supported = ["none"]
    routes: list[BaseRoute] = [
        Route(
            AUTHORIZATION_SERVER_METADATA, cors_middleware(MetadataHandler(metadata).handle, methods), methods=methods
        )
    ]
    routes += [
        route
        for route in create_auth_routes(
            provider, issuer_url, client_registration_options=registration, revocation_options=revocation
        )
        if getattr(route, "path", None) not in (AUTHORIZATION_SERVER_METADATA, REVOCATION_PATH)
    ]
    revoke = cors_middleware(Revocation(provider, ClientAuthenticator(provider)).handle, ["POST", "OPTIONS"])
    routes.append(Route(REVOCATION_PATH, revoke, methods=["POST", "OPTIONS"]))
    routes += create_protected_resource_routes(
        resource_url, [issuer_url], scopes_supported=list(SCOPES), resource_name=RESOURCE_NAME
    )
    # Some clients probe the root too (RFC 9728 §3.1 places it under the resource's path: /mcp's is above).
    root = ProtectedResourceMetadata(
        resource=resource_url,
        authorization_servers=[issuer_url],
        scopes_supported=list(SCOPES),
        resource_name=RESOURCE_NAME,
    )
    handler = ProtectedResourceMetadataHandler(root).handle
    routes.append(Route(PROTECTED_RESOURCE_METADATA, cors_middleware(handler, methods), methods=methods))
    page = ConsentPage(grants, resource, run_blocking)
    routes.append(Route(CONSENT_PATH, page.handle, methods=["GET", "POST"]))
    return routes
