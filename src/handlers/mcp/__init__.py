"""The MCP door: the server and its tools, and the guarded Streamable HTTP endpoint that serves them."""
