"""Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document; the MCP 2025-11-25 authorization
specification's recommended way for a client to identify itself): a client whose `client_id` is an https URL serves
its metadata at that URL, and the authorization server reads it there instead of a registration. The rules
(document), the cached reading over a fetcher port (service) and the fetcher over the network (https)."""
