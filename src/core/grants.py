"""OAuth grants: how an MCP client gets a token for one namespace, consented with an API key of that namespace.

Rules only, storage behind GrantRepository. A grant is born when a person approves a client on the consent page:
it holds that client's authorization code, then its current refresh token and access token, each stored only as
the SHA-256 of the token. Every token names its grant (`amc_`/`amr_`/`amt_<grant_id>_<secret>`, the secret 256
random bits), so each check is one read of one item. A grant lasts while its refresh token is used (sliding), and
never outlives the API key that consented: every token check and refresh asks whether that key is still active.
"""

from __future__ import annotations

import hmac
import secrets
import threading
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime

from core.access import Principal, Scope, hash_key
from core.cache import TtlCache
from core.clientdocs.document import is_client_id_url
from core.clientdocs.service import ClientDocuments
from core.clock import Clock, epoch_seconds, format_timestamp, utc_now
from core.consent import INVALID_KEY, ConsentRefusedError, consent
from core.errors import AuthenticationError, WriteConflictError
from core.grant_terms import (
    ACCESS_TTL,
    CODE_TTL,
    INVALID_TOKEN,
    REFRESH_TTL,
    SIGN_IN_AGAIN,
    TOKEN_CACHE_MAX_ENTRIES,
    TOKEN_CACHE_TTL,
    UNUSED_CLIENT_TTL,
    GrantError,
    Tokens,
)
from core.keys import KeyService
from core.limits import MAX_CLIENT_ID_CHARS
from core.registration import RegistrationBounds, RegistrationLimitError, check_registration
from core.repository import Client, Grant, GrantRepository, LiveKey
from core.tokens import GRANT_ID_HEX_CHARS, TokenKind, grant_of, is_access_token, new_token


@dataclass(frozen=True)
class _Verified:
    grant_id: str
    principal: Principal
    resource: str
    expires_at: int


class GrantService:
    def __init__(
        self,
        repository: GrantRepository,
        keys: KeyService,
        clock: Clock = utc_now,
        bounds: RegistrationBounds = RegistrationBounds(),  # noqa: B008  # frozen: one shared default is safe
        documents: ClientDocuments | None = None,
    ) -> None:
        self._repository = repository
        self._keys = keys
        self._clock = clock
        self._bounds = bounds
        self._documents = documents
        self._cache: TtlCache[str, _Verified] = TtlCache(TOKEN_CACHE_TTL, TOKEN_CACHE_MAX_ENTRIES, clock)
        self._lock = threading.Lock()
        self._secret: bytes | None = None

    # Registration (RFC 7591)

    def register(self, client_id: str, metadata: str, redirect_uris: Iterable[str], caller: str) -> Client:
        """Register a client for `caller` (the address the request came from), as check_registration admits it,
        within the RegistrationBounds (RegistrationLimitError). It expires UNUSED_CLIENT_TTL from now unless used."""
        check_registration(metadata, list(redirect_uris))
        now = epoch_seconds(self._clock())
        client = Client(client_id, metadata, now + int(UNUSED_CLIENT_TTL.total_seconds()))
        window = self._bounds.window(caller, now)
        refused = self._repository.add_client(client, window)
        if refused is not None:
            raise RegistrationLimitError(refused, self._bounds, window.ends_at - now)
        return client

    def forget_verified(self) -> None:
        """Trust no token and no client document verified so far (a process restored from a snapshot); the secret
        stays: it is the table's, not this process's."""
        self._cache.clear()
        if self._documents is not None:
            self._documents.forget()

    @property
    def reads_client_documents(self) -> bool:
        """Whether a client may name itself by the URL of its Client ID Metadata Document instead of registering."""
        return self._documents is not None

    def client(self, client_id: str) -> Client | None:
        """The registered client, or None when unknown or expired (DynamoDB's TTL deletes it some time later); for
        a URL, the client its metadata document describes (ClientDocumentError when it cannot be used)."""
        if is_client_id_url(client_id):
            return self._documents.client(client_id) if self._documents is not None else None
        if len(client_id) > MAX_CLIENT_ID_CHARS:
            return None
        client = self._repository.get_client(client_id)
        return client if client is not None and client.expires_at > epoch_seconds(self._clock()) else None

    # Consent and authorization codes

    def secret(self) -> bytes:
        """The authorization server's secret (the consent form's tokens are signed with it): 256 random bits made
        once per table, so every instance shares it and it survives restarts; read once per process."""
        with self._lock:
            secret = self._secret
        if secret is None:
            secret = self._repository.secret(secrets.token_bytes(32))
            with self._lock:
                self._secret = secret
        return secret

    def approve(
        self,
        *,
        client_id: str,
        redirect_uri: str,
        code_challenge: str,
        resource: str,
        scopes: Iterable[str],
        namespace: str,
        api_key: str,
    ) -> str:
        """The authorization code for a consent a person gave with `api_key`: the grant is for the key's namespace,
        which must be `namespace`, and for `scopes`, which the key must hold. ConsentRefusedError otherwise."""
        given = consent(self._keys, api_key, namespace, scopes)
        for _ in range(3):
            grant_id = secrets.token_hex(GRANT_ID_HEX_CHARS // 2)
            code = new_token("code", grant_id)
            now = self._clock()
            expires = epoch_seconds(now) + int(CODE_TTL.total_seconds())
            grant = Grant(
                grant_id=grant_id,
                client_id=client_id,
                namespace=given.namespace,
                scopes=given.scopes,
                key_id=given.key_id,
                resource=resource,
                redirect_uri=redirect_uri,
                code_challenge=code_challenge,
                code_hash=hash_key(code),
                code_expires_at=expires,
                expires_at=expires,
            )
            try:
                self._repository.add_grant(grant, LiveKey(given.key_id, format_timestamp(now)))
            except WriteConflictError:
                continue  # 64-bit grant ids practically never collide
            except AuthenticationError:
                # The key was revoked, or its namespace erased, after this process cached its verification.
                raise ConsentRefusedError(INVALID_KEY) from None
            return code
        raise WriteConflictError("could not find a free grant id; retry")

    def pending_code(self, code: str, client_id: str) -> Grant | None:
        """The grant of an unexpired, unused authorization code issued to `client_id`; None otherwise. A code
        presented again after its redemption revokes its grant (RFC 6749 §4.1.2: it was stolen, or replayed)."""
        grant = self._read(code, "code")
        if grant is None or grant.client_id != client_id or not hmac.compare_digest(grant.code_hash, hash_key(code)):
            return None
        if grant.code_used:
            self._revoke(grant.grant_id)
            return None
        return grant if grant.code_expires_at > epoch_seconds(self._clock()) and not grant.revoked else None

    def redeem(self, grant: Grant) -> Tokens:
        """Tokens for the grant of a pending code, checked by `pending_code` (and PKCE by the door); the code is
        spent in the same write, so two redemptions racing get one set of tokens and the grant revoked."""
        return self._issue(grant, grant.code_hash, spent=False, scopes=grant.scopes)

    # Refresh tokens (rotated on every use)

    def refreshable(self, refresh_token: str, client_id: str) -> Grant | None:
        """The grant whose current refresh token this is, issued to `client_id`; None otherwise. A refresh token a
        rotation already replaced revokes the whole grant: two parties hold it, and one is not the client."""
        grant = self._read(refresh_token, "refresh")
        if grant is None or grant.client_id != client_id or grant.revoked or grant.refresh_hash is None:
            return None
        digest = hash_key(refresh_token)
        if hmac.compare_digest(grant.refresh_hash, digest):
            return grant if grant.expires_at > epoch_seconds(self._clock()) else None
        if self._repository.is_spent(grant.grant_id, digest):
            self._revoke(grant.grant_id)
        return None

    def rotate(self, grant: Grant, scopes: Iterable[str]) -> Tokens:
        """New access and refresh tokens for a refreshable grant, for `scopes` (at most the grant's), replacing the
        refresh token presented, and the access token too (at once in this process, within TOKEN_CACHE_TTL in every
        other one). Refused (and the grant revoked) when the consenting key is no longer active."""
        narrowed = tuple(scope for scope in grant.scopes if scope in set(scopes))
        if not narrowed:
            raise GrantError("invalid_scope", "ask for at least one scope of the grant")
        assert grant.refresh_hash is not None  # refreshable() returns only grants with one
        return self._issue(grant, grant.refresh_hash, spent=True, scopes=narrowed)

    # Access tokens (the resource server's side)

    def verify(self, token: str, resource: str) -> Principal:
        """The principal an access token proves at `resource` (its audience must be exactly that): the grant's
        namespace and scopes, acting as the key that consented. AuthenticationError when the token is unknown,
        expired, revoked, for another resource, or its key is no longer active. A verified token is trusted
        without a read for TOKEN_CACHE_TTL (a revoke or a rotation in another process is seen here that late)."""
        digest = hash_key(token)
        now = self._clock()
        cached = self._cache.get(digest)
        if cached is None:
            cached = self._verify_stored(token, digest, now)
        if cached.expires_at <= now.timestamp():
            self._cache.discard(digest)
            raise AuthenticationError("the access token expired: refresh it", by_token=True)
        if cached.resource != resource:
            detail = f"the access token was issued for {cached.resource}, not for {resource}"
            raise AuthenticationError(detail, by_token=True)
        try:
            self._keys.principal_of(cached.principal.key_id or "")
        except AuthenticationError as exc:
            raise AuthenticationError(f"{exc}; {SIGN_IN_AGAIN}", by_token=True) from None
        return cached.principal

    def _verify_stored(self, token: str, digest: str, now: datetime) -> _Verified:
        grant = self._read(token, "access")
        if grant is None or grant.access_hash is None or not hmac.compare_digest(grant.access_hash, digest):
            raise AuthenticationError(f"{INVALID_TOKEN}; {SIGN_IN_AGAIN}", by_token=True)
        if grant.revoked:
            raise AuthenticationError(f"the access token was revoked; {SIGN_IN_AGAIN}", by_token=True)
        principal = Principal(grant.namespace, frozenset(grant.access_scopes), grant.key_id, by_token=True)
        verified = _Verified(grant.grant_id, principal, grant.resource, grant.access_expires_at)
        self._cache.put(digest, verified, read_at=now)
        return verified

    # Revocation (RFC 7009)

    def holder(self, token: str) -> Grant | None:
        """The grant whose current access or refresh token `token` is (revoked or not); None for any other."""
        kind: TokenKind = "access" if is_access_token(token) else "refresh"
        grant = self._read(token, kind)
        current = None if grant is None else grant.access_hash if kind == "access" else grant.refresh_hash
        if grant is None or current is None or not hmac.compare_digest(current, hash_key(token)):
            return None
        return grant

    def revoke(self, token: str, client_id: str) -> None:
        """Revoke the grant of an access or refresh token `client_id` holds: both stop working (at once in this
        process, within TOKEN_CACHE_TTL in every other one). An unknown token, or another client's, changes
        nothing (RFC 7009 answers 200 either way)."""
        grant = self.holder(token)
        if grant is not None and grant.client_id == client_id:
            self._revoke(grant.grant_id)

    def _revoke(self, grant_id: str) -> None:
        self._repository.revoke(grant_id)
        self._forget_grant(grant_id)

    def _forget_grant(self, grant_id: str) -> None:
        """Trust no access token of the grant without reading it again: its stored one was replaced or revoked."""
        self._cache.discard_where(lambda entry: entry.grant_id == grant_id)

    def _issue(self, grant: Grant, expected_hash: str, *, spent: bool, scopes: tuple[Scope, ...]) -> Tokens:
        try:
            self._keys.principal_of(grant.key_id)
        except AuthenticationError:
            self._revoke(grant.grant_id)
            raise GrantError(
                "invalid_grant", "the API key that consented to this grant was revoked or expired"
            ) from None
        access, refresh = new_token("access", grant.grant_id), new_token("refresh", grant.grant_id)
        now = epoch_seconds(self._clock())
        refresh_ends = now + int(REFRESH_TTL.total_seconds())
        issued = replace(
            grant,
            code_used=True,
            refresh_hash=hash_key(refresh),
            expires_at=refresh_ends,
            access_hash=hash_key(access),
            access_scopes=scopes,
            access_expires_at=now + int(ACCESS_TTL.total_seconds()),
        )
        # A client known by its metadata document has no registration to keep alive.
        client_ends = (
            None if is_client_id_url(grant.client_id) else refresh_ends + int(UNUSED_CLIENT_TTL.total_seconds())
        )
        if not self._repository.issue(issued, expected_hash, spent, client_expires_at=client_ends):
            self._revoke(grant.grant_id)
            what = "refresh token was already used" if spent else "authorization code was already used"
            raise GrantError("invalid_grant", f"the {what}: the grant is revoked")
        self._forget_grant(grant.grant_id)  # the access token this one replaces ends at once here, not in 30 s
        return Tokens(access, refresh, int(ACCESS_TTL.total_seconds()), scopes)

    def _read(self, token: str, kind: TokenKind) -> Grant | None:
        grant_id = grant_of(token, kind)
        return self._repository.get_grant(grant_id) if grant_id is not None else None
