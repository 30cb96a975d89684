"""The MCP door's OAuth 2.1 authorization server: metadata, registration, authorization, tokens, revocation, consent."""
