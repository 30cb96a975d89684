"""What runs on a developer's or operator's machine, never on Lambda: `agent-memory serve` (both doors in one
process over DynamoDB Local), the `keys` commands, the local DynamoDB engines and the template reader."""
