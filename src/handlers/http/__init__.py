"""The HTTP door: the FastAPI application over the core (routes by resource, input parsing, the OpenAPI document)."""

from handlers.http.app import create_app

__all__ = ["create_app"]
