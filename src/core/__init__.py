"""agent-memory's core: the memory record, retrieval and the use cases, free of any web, MCP or cloud framework."""
