"""The MCP door's OAuth 2.1 authorization server, one module per concern, each importing only those below it:
server (the issuer per request, the token check at /mcp) > routes (assembled on the first OAuth request) >
metadata, revocation, consent (the page) > provider (GrantProvider over GrantService) > guard (405/503/429, the
storage budget, the one table of domain errors to OAuth answers) > paths (all /mcp's endpoint needs to know)."""

from handlers.oauth.server import OAuthServer

__all__ = ["OAuthServer"]
