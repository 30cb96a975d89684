"""The consent page of the MCP door's authorization server: where a person lets an MCP client into one namespace,
proving they may by pasting an API key of that namespace (the key never reaches the client, the page or a log).

Server-rendered HTML with no script and no third-party asset, so it works without JavaScript; protected against
cross-site forgery by a token bound to the authorization request (a random nonce in a SameSite=Strict cookie, named
`__Host-` on https; the form carries the HMAC of that nonce and of the request's fields under the server's secret,
core.tokens.consent_proof), never framed (`frame-ancestors 'none'`), and never cached. /authorize (the SDK's
handler) has already checked the client, its redirect URI and PKCE before sending the browser here; the page checks
them again on every request, since a form's fields are the sender's to change. Its Content-Security-Policy names
the redirect URI's origin as rebuilt from validated parts (core.tokens.redirect_origin), never the URI as given.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import secrets
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from mcp.server.auth.provider import construct_redirect_uri
from pydantic import AnyUrl, ValidationError
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from core.access import SCOPES
from core.clientdocs.document import document_url, is_client_id_url
from core.consent import ConsentRefusedError
from core.errors import InvalidInputError
from core.grants import GrantService
from core.limits import (
    CODE_CHALLENGE_MAX_CHARS,
    CODE_CHALLENGE_MIN_CHARS,
    MAX_CLIENT_NAME_CHARS,
    MAX_STATE_CHARS,
)
from core.tokens import consent_proof, consent_proven, redirect_origin, redirect_uri_registered
from handlers.concurrency import RunBlocking
from handlers.oauth.guard import RETRYABLE
from handlers.oauth.paths import CONSENT

# The cookie holding the form's nonce: `__Host-` on https, so no other host (a sibling subdomain) can set it; that
# prefix needs Secure, so on http (a loopback `serve`) it goes by the plain name.
CSRF_COOKIE: Final = "agent_memory_consent"
SECURE_CSRF_COOKIE: Final = f"__Host-{CSRF_COOKIE}"
CSRF_MAX_AGE_SECONDS: Final = 600
SCOPE_MEANINGS: Final = {
    "read": "search and read its memories",
    "write": "create, change, delete and restore its memories",
}
_STYLE: Final = """
body{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}
h1{font-size:1.4rem}fieldset{border:1px solid #ccc;border-radius:6px;margin:1rem 0;padding:.5rem 1rem}
label{display:block;margin:.6rem 0 .2rem}input[type=text],input[type=password]{width:100%;padding:.5rem;
box-sizing:border-box;font:inherit}.scope label{display:inline;margin:0}.scope{margin:.3rem 0}
.error{background:#fdecea;border:1px solid #e0a39d;padding:.6rem 1rem;border-radius:6px}
.buttons{display:flex;gap:1rem;margin-top:1.2rem}button{font:inherit;padding:.5rem 1.2rem;border-radius:6px;
border:1px solid #888;background:#fff;cursor:pointer}button.approve{background:#1d4ed8;color:#fff;border-color:#1d4ed8}
code{background:#f3f3f3;padding:0 .2rem}.note{color:#555;font-size:.9rem}
"""
_STYLE_HASH: Final = base64.b64encode(hashlib.sha256(_STYLE.encode()).digest()).decode()
# Unicode's strong right-to-left bidi classes (Hebrew and others; Arabic letters).
_RIGHT_TO_LEFT: Final = frozenset({"R", "AL"})


class _BadRequestError(Exception):
    """The authorization request cannot be shown or granted: it is not this server's to redirect anywhere."""


@dataclass(frozen=True)
class _Request:
    """A validated authorization request, as /authorize passed it on."""

    client_id: str
    client_name: str
    redirect_uri: str
    redirect_origin: str
    code_challenge: str
    scopes: tuple[str, ...]
    state: str | None

    def hidden_fields(self) -> dict[str, str]:
        fields = {
            "client_id": self.client_id,
            "redirect_uri": self.redirect_uri,
            "code_challenge": self.code_challenge,
            "scope": " ".join(self.scopes),
        }
        return fields | ({"state": self.state} if self.state is not None else {})

    def bound(self, resource: str) -> dict[str, str | None]:
        """What the form's anti-forgery token is bound to (core.tokens.CONSENT_BOUND)."""
        return {**self.hidden_fields(), "state": self.state, "resource": resource}


class ConsentPage:
    """The page for the authorization server protecting `resource`. Storage failing while it reads answers the
    guard's 503 (handlers.oauth.guard, with unavailable_page); only an approval it could not store shows the form
    again, as a 503, keeping what the person typed."""

    def __init__(self, grants: GrantService, resource: str, run_blocking: RunBlocking) -> None:
        self._grants = grants
        self._resource = resource
        self._run = run_blocking

    async def handle(self, request: Request) -> Response:
        params: Mapping[str, str]
        if request.method == "GET":
            params = request.query_params
        else:
            form = await request.form()
            params = {name: value for name, value in form.items() if isinstance(value, str)}
        try:
            wanted = await self._validated(params)
            secret = await self._run(self._grants.secret)
        except _BadRequestError as exc:
            return _page("This authorization request cannot be used", _paragraph(str(exc)), 400)
        if request.method == "GET":
            return self._form(wanted, request, secret)
        nonce = request.cookies.get(_cookie_name(request), "")
        if not consent_proven(secret, nonce, wanted.bound(self._resource), params.get("csrf", "")):
            detail = "This form expired or was not sent from this page. Start again from your application."
            return _page("This form cannot be sent", _paragraph(detail), 403)
        if params.get("decision") != "approve":
            return _redirect(wanted, error="access_denied", error_description="the person denied access")
        granted = [scope for scope in SCOPES if scope in wanted.scopes and params.get(f"scope_{scope}") == "on"]
        typed = params.get("namespace", "")
        try:
            code = await self._run(
                self._grants.approve,
                client_id=wanted.client_id,
                redirect_uri=wanted.redirect_uri,
                code_challenge=wanted.code_challenge,
                resource=self._resource,
                scopes=granted,
                namespace=typed,
                api_key=params.get("api_key", ""),
            )
        except ConsentRefusedError as exc:  # a valid key's own namespace offered
            return self._form(wanted, request, secret, error=str(exc), namespace=exc.namespace or typed)
        except RETRYABLE as exc:
            # The form again (its namespace kept), as a 503: nothing was granted, and the same answer may work soon.
            error = "Storage is briefly unavailable: try again shortly."
            page = self._form(wanted, request, secret, error=error, namespace=typed, status=503)
            page.headers["Retry-After"] = str(exc.retry_after_seconds)
            return page
        return _redirect(wanted, code=code)

    async def _validated(self, params: Mapping[str, str]) -> _Request:
        client_id = params.get("client_id", "")
        # A client document that cannot be used (ClientDocumentError) is the guard's 400 `invalid_client`, as at
        # /authorize, which sent the browser here: one answer for one refusal, whichever endpoint read it.
        client = await self._run(self._grants.client, client_id) if client_id else None
        if client is None:
            raise _BadRequestError("The application is not registered here (or its registration expired).")
        metadata = json.loads(client.metadata)
        try:
            redirect_uri = str(AnyUrl(params.get("redirect_uri", "")))
        except ValidationError:
            raise _BadRequestError("The redirect address is not a URL.") from None
        if not redirect_uri_registered(redirect_uri, [str(AnyUrl(uri)) for uri in metadata.get("redirect_uris", [])]):
            raise _BadRequestError("The redirect address is not one the application registered.")
        try:  # registered before the rules were what they are: it may not be one any more
            origin = redirect_origin(redirect_uri)
        except InvalidInputError:
            raise _BadRequestError("The redirect address is not one this server accepts.") from None
        challenge = params.get("code_challenge", "")
        if not CODE_CHALLENGE_MIN_CHARS <= len(challenge) <= CODE_CHALLENGE_MAX_CHARS:
            raise _BadRequestError("The request carries no valid PKCE code challenge.")
        scopes = tuple(params.get("scope", "").split())
        if not scopes or not set(scopes) <= set(SCOPES):
            raise _BadRequestError(f"The scopes asked for must be some of: {', '.join(SCOPES)}.")
        state = params.get("state")
        if state is not None and len(state) > MAX_STATE_CHARS:
            raise _BadRequestError("The request's state is too long.")
        name = _shown_name(str(metadata.get("client_name") or ""))
        if is_client_id_url(client_id):  # a name anyone may publish: say whose document it is
            name = f"{name} ({document_url(client_id).host})"
        return _Request(client_id, name, redirect_uri, origin, challenge, scopes, state)

    def _form(
        self,
        wanted: _Request,
        request: Request,
        secret: bytes,
        error: str | None = None,
        namespace: str = "",
        status: int | None = None,
    ) -> Response:
        nonce = secrets.token_urlsafe(32)
        csrf = consent_proof(secret, nonce, wanted.bound(self._resource))
        host = wanted.redirect_origin.partition("://")[2]
        scope_rows = "".join(
            f'<div class="scope"><input type="checkbox" id="scope_{scope}" name="scope_{scope}" checked>'
            f' <label for="scope_{scope}"><strong>{scope}</strong>: {SCOPE_MEANINGS[scope]}</label></div>'
            for scope in wanted.scopes
        )
        hidden = "".join(
            f'<input type="hidden" name="{name}" value="{html.escape(value)}">'
            for name, value in (wanted.hidden_fields() | {"csrf": csrf}).items()
        )
        alert = f'<p class="error" role="alert">{html.escape(error)}</p>' if error else ""
        body = f"""{alert}
<p><strong>{html.escape(wanted.client_name)}</strong> asks to use the memories of one namespace of this
agent-memory server (<code>{html.escape(self._resource)}</code>). After you answer, your browser returns to
<strong>{html.escape(host)}</strong>.</p>
<form method="post" action="{CONSENT}">{hidden}
<fieldset><legend>It may</legend>{scope_rows}</fieldset>
<label for="namespace">Namespace</label>
<input type="text" id="namespace" name="namespace" value="{html.escape(namespace)}" aria-describedby="namespace_hint"
 autocomplete="off" spellcheck="false" pattern="[a-z0-9][a-z0-9._\\-]{{0,63}}"><p class="note" id="namespace_hint">
Leave it empty for the key's own namespace (a new <code>serve</code>'s first key's is <code>default</code>).</p>
<label for="api_key">An API key of that namespace</label>
<input type="password" id="api_key" name="api_key" required autocomplete="off" spellcheck="false">
<p class="note">The key proves you may grant this; the application never sees it. It gets its own token for this
namespace, with at most the key's scopes, which stops working when the key is revoked.</p>
<div class="buttons"><button class="approve" type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny" formnovalidate>Deny</button></div>
</form>"""
        title = f"Allow {wanted.client_name} to use your memories?"
        response = _page(title, body, status or (400 if error else 200), form_target=wanted.redirect_origin)
        secure = request.url.scheme == "https"
        response.set_cookie(
            _cookie_name(request),
            nonce,
            max_age=CSRF_MAX_AGE_SECONDS,
            path="/" if secure else CONSENT,  # a `__Host-` cookie must be for the whole origin
            secure=secure,
            httponly=True,
            samesite="strict",
        )
        return response


def _shown_name(name: str) -> str:
    """A client's name as the page shows it: whatever a registration or a document says, it cannot make the page lie
    about whose it is. Sanitised here, where it is shown, rather than refused where it is read, so registrations
    stored before this rule and documents read from anywhere are shown by one rule: control and format characters
    (bidi overrides, isolates and marks, zero-width and tag characters among them: Unicode's C categories) dropped,
    every run of white space one space, at most MAX_CLIENT_NAME_CHARS, and a name holding right-to-left letters
    isolated (U+2068 ... U+2069), so the host after it is read after it."""
    shown = " ".join("".join(char for char in name if char.isspace() or not _is_control(char)).split())
    if len(shown) > MAX_CLIENT_NAME_CHARS:
        shown = shown[: MAX_CLIENT_NAME_CHARS - 1].rstrip() + "\u2026"
    if not shown:
        return "An unnamed application"
    if any(unicodedata.bidirectional(char) in _RIGHT_TO_LEFT for char in shown):
        return f"\u2068{shown}\u2069"
    return shown


def _is_control(char: str) -> bool:
    return unicodedata.category(char).startswith("C")


def _cookie_name(request: Request) -> str:
    return SECURE_CSRF_COOKIE if request.url.scheme == "https" else CSRF_COOKIE


def unavailable_page(retry_after_seconds: int) -> HTMLResponse:
    """The page's answer while storage is briefly unavailable: nothing was granted, and a reload may work soon."""
    page = _page("Try again shortly", _paragraph("Storage is briefly unavailable."), 503)
    page.headers["Retry-After"] = str(retry_after_seconds)
    return page


def _paragraph(text: str) -> str:
    return f"<p>{html.escape(text)}</p>"


def _page(title: str, body: str, status: int, form_target: str | None = None) -> HTMLResponse:
    # A form's redirect is checked against form-action too: allow this page's own origin and the client's (an
    # origin rebuilt from validated parts: nothing in it can end the directive or add a source).
    targets = "'self'" + (f" {form_target}" if form_target else "")
    document = (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="referrer" content="no-referrer"><title>{html.escape(title)}</title>'
        f"<style>{_STYLE}</style></head><body><main><h1>{html.escape(title)}</h1>{body}</main></body></html>"
    )
    headers = {
        "Content-Security-Policy": (
            f"default-src 'none'; style-src 'sha256-{_STYLE_HASH}'; form-action {targets}; "
            "frame-ancestors 'none'; base-uri 'none'"
        ),
        "X-Frame-Options": "DENY",
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-store",
    }
    return HTMLResponse(document, status_code=status, headers=headers)


def _redirect(wanted: _Request, **params: str) -> RedirectResponse:
    location = construct_redirect_uri(wanted.redirect_uri, **params, state=wanted.state)
    return RedirectResponse(location, status_code=302, headers={"Cache-Control": "no-store"})
