"""Driving the MCP door's OAuth flow as a client and a person would: the `mcp` SDK's OAuthClientProvider for the
client, and a scripted browser that reads the consent page's form and submits it."""

from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

REDIRECT_URI = "http://127.0.0.1:53682/callback"


class MemoryTokenStorage:
    """The SDK's TokenStorage in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


class _Form(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hidden: dict[str, str] = {}
        self.checkboxes: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        if tag == "input" and named.get("type") == "hidden":
            self.hidden[named["name"] or ""] = named.get("value") or ""
        if tag == "input" and named.get("type") == "checkbox":
            self.checkboxes.append(named["name"] or "")


def form_of(page: str) -> tuple[dict[str, str], list[str]]:
    """The hidden fields and the checkbox names of the consent page's form."""
    parser = _Form()
    parser.feed(page)
    return parser.hidden, parser.checkboxes


@dataclass
class Person:
    """Answers the consent page in a browser (an httpx client with its own cookie jar): with `key` for `namespace`,
    approving or denying, granting every scope offered or only `scopes`."""

    browser: httpx2.AsyncClient
    namespace: str
    key: str
    decision: str = "approve"
    scopes: list[str] | None = None
    pages: list[httpx2.Response] = field(default_factory=list)
    redirect: str | None = None

    async def open(self, authorization_url: str) -> httpx2.Response:
        """Follow /authorize to the consent page and submit it; the answer to the submission."""
        answer = await self.browser.get(authorization_url)
        assert answer.status_code == 302, answer.text
        page = await self.browser.get(answer.headers["location"])
        self.pages.append(page)
        assert page.status_code == 200, page.text
        hidden, offered = form_of(page.text)
        chosen = offered if self.scopes is None else [f"scope_{scope}" for scope in self.scopes]
        fields = {**hidden, "namespace": self.namespace, "api_key": self.key, "decision": self.decision}
        submitted = await self.browser.post("/consent", data=fields | dict.fromkeys(chosen, "on"))
        self.pages.append(submitted)
        if submitted.status_code == 302:
            self.redirect = submitted.headers["location"]
        return submitted

    async def redirect_handler(self, authorization_url: str) -> None:
        await self.open(authorization_url)

    async def callback_handler(self) -> AuthorizationCodeResult:
        assert self.redirect is not None, self.pages[-1].text
        query = parse_qs(urlsplit(self.redirect).query)
        assert "code" in query, self.redirect
        return AuthorizationCodeResult(code=query["code"][0], state=query.get("state", [None])[0])


def client_metadata(**overrides: Any) -> OAuthClientMetadata:
    return OAuthClientMetadata.model_validate(
        {
            "client_name": "Test Client",
            "redirect_uris": [REDIRECT_URI],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "client_secret_post",
            **overrides,
        }
    )


def oauth_client(server_url: str, person: Person, storage: MemoryTokenStorage | None = None) -> OAuthClientProvider:
    return OAuthClientProvider(
        server_url=server_url,
        client_metadata=client_metadata(),
        storage=storage or MemoryTokenStorage(),
        redirect_handler=person.redirect_handler,
        callback_handler=person.callback_handler,
    )


def pkce() -> tuple[str, str]:
    """A PKCE (verifier, S256 challenge)."""
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    return verifier, challenge
