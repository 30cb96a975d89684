"""The HTTP door: the FastAPI application over the core (routes by resource, input parsing, the OpenAPI document)."""

# First: FastAPI's check for pydantic v1 models without importing pydantic.v1, before any route is made.
import handlers.http.pydantic_v1  # noqa: F401
from handlers.http.app import create_app

__all__ = ["create_app"]
