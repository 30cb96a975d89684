"""The HTTP door: the FastAPI application over the core (routes by resource, input parsing, the OpenAPI document)."""
