"""The HTTP door wired: the FastAPI app over the services, for the HTTP function and for `serve`. Never imports
the MCP SDK (the HTTP function's artifact does not ship it)."""

from __future__ import annotations

from fastapi import FastAPI

from handlers.auth import Authenticator, key_authenticator
from handlers.bootstrap import VERSION, Services, Settings
from handlers.concurrency import RunBlocking, inline
from handlers.http import create_app


def http_app(
    services: Services, settings: Settings, *, authenticate: Authenticator, run_blocking: RunBlocking
) -> FastAPI:
    """The HTTP API over `services`, authenticating with `authenticate`, its blocking calls run by `run_blocking`."""
    return create_app(
        services.memories,
        authenticate,
        version=VERSION,
        run_blocking=run_blocking,
        retention_days=settings.deleted_retention_days,
        recall=services.recall,
        health=services.health,
        keys=services.keys,
    )


def lambda_app(services: Services) -> FastAPI:
    """The HTTP function's app over `services`: API keys always, and one request per execution environment, so
    blocking calls run inline (handlers.concurrency). The entrypoint builds it once, at init (handlers.aws.http)."""
    authenticate = key_authenticator(services.keys)
    return http_app(services, services.settings, authenticate=authenticate, run_blocking=inline)
