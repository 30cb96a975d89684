"""KeyRepository in memory, and the fence every in-memory write behind a live key checks."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator

from core.access import ApiKey
from core.clock import parse_timestamp
from core.errors import AuthenticationError, WriteConflictError
from core.repository import KEY_NOT_LIVE, LiveKey


class InMemoryKeyRepository:
    """KeyRepository in a dict, thread-safe (ApiKey is immutable, so it is stored as given)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._keys: dict[str, ApiKey] = {}

    def add(self, key: ApiKey) -> None:
        with self._lock:
            if key.key_id in self._keys:
                raise WriteConflictError(f"key id {key.key_id} is already taken; retry")
            self._keys[key.key_id] = key

    def get(self, key_id: str) -> ApiKey | None:
        with self._lock:
            return self._keys.get(key_id)

    def find(self, namespace: str | None) -> Iterator[ApiKey]:
        with self._lock:
            found = [key for key in self._keys.values() if namespace is None or key.namespace == namespace]
        return iter(found)

    def check_live(self, live_key: LiveKey, refusal: str = KEY_NOT_LIVE) -> None:
        """Refuse a write (or, with READ_KEY_NOT_LIVE, a read) behind `live_key` unless its key is stored, not revoked
        and not expired at its `now` (as the DynamoDB adapter's ConditionCheck on the key item, or its read fence)."""
        key = self.get(live_key.key_id)
        if key is None or key.state(parse_timestamp(live_key.now)) != "active":
            raise AuthenticationError(refusal)

    def erase(self, namespace: str) -> None:
        """Delete every key of the namespace, as erasing it does first (adapters.dynamodb.erasure)."""
        with self._lock:
            self._keys = {key_id: key for key_id, key in self._keys.items() if key.namespace != namespace}

    def note_use(self, key_id: str, at: str, stale_before: str) -> None:
        with self._lock:
            key = self._keys.get(key_id)
            if key is not None and (key.last_used_at is None or key.last_used_at < stale_before):
                self._keys[key_id] = dataclasses.replace(key, last_used_at=at)

    def revoke(self, key_id: str) -> ApiKey | None:
        with self._lock:
            key = self._keys.get(key_id)
            if key is None:
                return None
            self._keys[key_id] = revoked = dataclasses.replace(key, revoked=True)
            return revoked
