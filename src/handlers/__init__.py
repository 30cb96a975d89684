"""The doors of agent-memory: thin translations between wire formats and the core."""
