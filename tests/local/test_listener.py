"""How `serve` listens (local.listener): a forwarded address is the caller's only when `--forwarded-allow-ips` names
the proxy that sent it; without the option the peer's own address is, loopback's too."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from starlette.types import Receive, Scope, Send

from local.cli import build_parser
from local.listener import server_config

PROXY = ("127.0.0.1", 40000)


def caller_seen(forwarded_allow_ips: str | None) -> Any:
    """The ASGI `client` the app sees for a request from PROXY saying `X-Forwarded-For: 203.0.113.9`."""
    seen: list[Any] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        seen.append(scope["client"])

    config = server_config(app, "127.0.0.1", 8787, forwarded_allow_ips)
    config.load()
    scope = {
        "type": "http",
        "client": PROXY,
        "scheme": "http",
        "headers": [(b"x-forwarded-for", b"203.0.113.9"), (b"x-forwarded-proto", b"https")],
    }

    async def call() -> None:
        await config.loaded_app(scope, None, None)

    anyio.run(call)
    return seen[0]


def test_without_the_option_no_forwarded_header_is_trusted_not_even_from_loopback() -> None:
    assert tuple(caller_seen(None)) == PROXY


@pytest.mark.parametrize("allowed", ["127.0.0.1", "127.0.0.0/8,10.0.0.1", "*"])
def test_with_the_option_a_proxy_it_names_gives_the_callers_address(allowed: str) -> None:
    host, _ = caller_seen(allowed)

    assert host == "203.0.113.9"


def test_a_proxy_the_option_does_not_name_is_not_trusted() -> None:
    assert tuple(caller_seen("10.0.0.1")) == PROXY


def test_serve_takes_the_proxies_to_trust_as_an_option_off_by_default() -> None:
    parser = build_parser()

    assert parser.parse_args(["serve"]).forwarded_allow_ips is None
    assert parser.parse_args(["serve", "--forwarded-allow-ips", "10.0.0.1"]).forwarded_allow_ips == "10.0.0.1"
