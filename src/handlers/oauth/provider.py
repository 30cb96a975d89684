"""What the `mcp` SDK's OAuth handlers (RFC 7591 registration, /authorize with PKCE, /token) leave to a provider,
kept in the core's GrantService: GrantProvider. /authorize sends the browser on to the consent page
(handlers.oauth.consent), which approves the grant.

Imported on the first OAuth request only (handlers.oauth.routes), so a cold start serving /mcp never pays for it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    IdentityAssertionParams,
    RefreshToken,
    TokenError,
)
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyUrl

from core.access import SCOPES
from core.errors import InvalidInputError
from core.grant_terms import GrantError, Tokens
from core.grants import GrantService
from core.limits import MAX_STATE_CHARS
from core.repository import Grant
from core.tokens import is_access_token, redirect_uri_registered
from handlers.concurrency import RunBlocking
from handlers.oauth.guard import caller, registration_error, token_error
from handlers.oauth.paths import CONSENT, names_resource


class _Client(OAuthClientInformationFull):
    """A client whose redirect URIs are matched by the core's rule (core.tokens.redirect_uri_registered) rather than
    the SDK's exact one: a loopback redirect URI comes back on whatever port its client got (RFC 8252 §7.3)."""

    def validate_redirect_uri(self, redirect_uri: AnyUrl | None) -> AnyUrl:
        registered = [str(uri) for uri in self.redirect_uris or []]
        if redirect_uri is not None and redirect_uri_registered(str(redirect_uri), registered):
            return redirect_uri
        return super().validate_redirect_uri(redirect_uri)


class _Code(AuthorizationCode):
    grant: Grant


class _Refresh(RefreshToken):
    grant: Grant


class GrantProvider:
    """The SDK's OAuthAuthorizationServerProvider over GrantService, for the issuer `issuer` whose protected
    resource is `resource` (this server's /mcp URL). Every blocking call goes through `run_blocking`."""

    def __init__(self, grants: GrantService, issuer: str, resource: str, run_blocking: RunBlocking) -> None:
        self._grants = grants
        self._issuer = issuer
        self._resource = resource
        self._run = run_blocking

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        """A registered client, or the one a Client ID Metadata Document describes when `client_id` is its URL (one
        that cannot be used raises the core's ClientDocumentError, which the guard answers)."""
        client = await self._run(self._grants.client, client_id)
        return _Client.model_validate_json(client.metadata) if client is not None else None

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
            await self._run(self._grants.register, client_info.client_id or "", metadata, uris, caller())
        except InvalidInputError as exc:
            raise registration_error(exc) from None

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        if not params.redirect_uri_provided_explicitly:
            raise AuthorizeError("invalid_request", "send the redirect_uri (OAuth 2.1 requires it)")
        if params.resource is not None and not names_resource(params.resource, self._resource):
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
        return f"{self._issuer}{CONSENT}?{urlencode(query)}"

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> _Code | None:
        grant = await self._run(self._grants.pending_code, authorization_code, client.client_id or "")
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
        return _token_response(await self._tokens(self._grants.redeem, authorization_code.grant))

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> _Refresh | None:
        grant = await self._run(self._grants.refreshable, refresh_token, client.client_id or "")
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
        return _token_response(await self._tokens(self._grants.rotate, refresh_token.grant, scopes))

    async def load_access_token(self, token: str) -> AccessToken | None:
        """The protocol's view of a live access token. The SDK's routes used here never ask for it: /mcp checks
        tokens in its own guard (GrantService.verify), and /revoke is Revocation's."""
        grant = await self._run(self._grants.holder, token) if is_access_token(token) else None
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
        await self._run(self._grants.revoke, token, client_id)

    async def exchange_identity_assertion(
        self, client: OAuthClientInformationFull, params: IdentityAssertionParams
    ) -> OAuthToken:
        raise TokenError("unsupported_grant_type", "only the authorization code and refresh token grants are served")

    async def _tokens(self, issue: Callable[..., Tokens], *args: Any) -> Tokens:
        try:
            tokens: Tokens = await self._run(issue, *args)
        except GrantError as exc:
            raise token_error(exc) from None
        return tokens


def _token_response(tokens: Tokens) -> OAuthToken:
    return OAuthToken(
        access_token=tokens.access_token,
        token_type="Bearer",  # noqa: S106
        expires_in=tokens.expires_in,
        scope=" ".join(tokens.scopes),
        refresh_token=tokens.refresh_token,
    )
