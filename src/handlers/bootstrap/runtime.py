"""What the local tooling reads of its own process and environment (the composition root is the one place that does):
where a running `serve` leaves word of itself for the command line (local.running), and this process's id."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final

STATE_DIR_VARIABLE: Final = "AGENT_MEMORY_STATE_DIR"


def serve_state_dir(env: Mapping[str, str] = os.environ) -> Path:
    """The directory of the running serves' state files: $AGENT_MEMORY_STATE_DIR, else $XDG_RUNTIME_DIR/agent-memory
    (per user, emptied when they log out), else ~/.cache/agent-memory."""
    if env.get(STATE_DIR_VARIABLE):
        return Path(env[STATE_DIR_VARIABLE])
    if env.get("XDG_RUNTIME_DIR"):
        return Path(env["XDG_RUNTIME_DIR"]) / "agent-memory"
    return Path.home() / ".cache" / "agent-memory"


def process_id() -> int:
    return os.getpid()
