"""GrantRepository in memory: clients, their registration counts, grants and spent refresh tokens."""

from __future__ import annotations

import dataclasses
import threading

from adapters.memory.keys import InMemoryKeyRepository
from core.errors import WriteConflictError
from core.repository import Client, Grant, LiveKey, RegistrationBound, RegistrationWindow


class InMemoryGrantRepository:
    """GrantRepository in dicts, thread-safe, with the adapter's conditions (Client and Grant are immutable).

    `keys`, when given, is the key store of the same "table": a grant is then stored only while its consenting key is
    live there (without it, as in door tests that build their own key service, grants are stored unfenced)."""

    def __init__(self, keys: InMemoryKeyRepository | None = None) -> None:
        self._keys = keys
        self._lock = threading.Lock()
        self.clients: dict[str, Client] = {}
        self.grants: dict[str, Grant] = {}
        self.spent: set[tuple[str, str]] = set()
        # Registrations counted per (caller hash, or None for the total; window start).
        self.registrations: dict[tuple[str | None, int], int] = {}
        self.stored_secret: bytes | None = None

    def add_client(self, client: Client, window: RegistrationWindow) -> RegistrationBound | None:
        counts: list[tuple[tuple[str | None, int], int, RegistrationBound]] = [
            ((window.caller, window.starts_at), window.per_caller, "caller"),
            ((None, window.starts_at), window.total, "total"),
        ]
        with self._lock:
            for counter, bound, name in counts:
                if self.registrations.get(counter, 0) >= bound:
                    return name
                self.registrations[counter] = self.registrations.get(counter, 0) + 1
            if client.client_id in self.clients:
                raise WriteConflictError(f"client id {client.client_id} is already taken; retry")
            self.clients[client.client_id] = client
            return None

    def get_client(self, client_id: str) -> Client | None:
        with self._lock:
            return self.clients.get(client_id)

    def add_grant(self, grant: Grant, live_key: LiveKey) -> None:
        if self._keys is not None:
            self._keys.check_live(live_key)
        with self._lock:
            if grant.grant_id in self.grants:
                raise WriteConflictError(f"grant id {grant.grant_id} is already taken; retry")
            self.grants[grant.grant_id] = grant

    def get_grant(self, grant_id: str) -> Grant | None:
        with self._lock:
            return self.grants.get(grant_id)

    def issue(self, issued: Grant, expected_hash: str, spent: bool, client_expires_at: int | None) -> bool:
        with self._lock:
            stored = self.grants.get(issued.grant_id)
            client = self.clients.get(issued.client_id)
            if stored is None or (client is None and client_expires_at is not None) or stored.revoked:
                return False
            held = stored.refresh_hash if spent else (None if stored.code_used else stored.code_hash)
            if held != expected_hash:
                return False
            self.grants[issued.grant_id] = issued
            if client is not None and client_expires_at is not None:
                self.clients[client.client_id] = dataclasses.replace(client, expires_at=client_expires_at)
            if spent:
                self.spent.add((issued.grant_id, expected_hash))
            return True

    def is_spent(self, grant_id: str, refresh_hash: str) -> bool:
        with self._lock:
            return (grant_id, refresh_hash) in self.spent

    def revoke(self, grant_id: str) -> None:
        with self._lock:
            grant = self.grants.get(grant_id)
            if grant is not None:
                self.grants[grant_id] = dataclasses.replace(grant, revoked=True)

    def secret(self, candidate: bytes) -> bytes:
        with self._lock:
            if self.stored_secret is None:
                self.stored_secret = candidate
            return self.stored_secret
