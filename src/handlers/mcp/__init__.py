"""The MCP door: the server and its tools, and the guarded Streamable HTTP endpoint that serves them."""

from handlers.mcp.endpoint import MCPEndpoint, create_endpoint, with_mcp_endpoint
from handlers.mcp.server import create_server

__all__ = ["MCPEndpoint", "create_endpoint", "create_server", "with_mcp_endpoint"]
