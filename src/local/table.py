"""`serve` owns its table: a service call that finds it missing (deleted, or an in-memory engine restarted) has it
recreated empty, as on startup."""

from __future__ import annotations

import functools
import sys
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from adapters.dynamodb import ensure_table
from core.errors import DomainError, TableMissingError

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

T = TypeVar("T")


class _Recreating:
    """Stands in for a service of `serve`: a call that finds the table missing calls `recreate`, then fails as
    before (503: the data it looked for is gone)."""

    def __init__(self, target: object, recreate: Callable[[], None]) -> None:
        self._target = target
        self._recreate = recreate

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._target, name)
        if not callable(attribute):
            return attribute

        @functools.wraps(attribute)
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return attribute(*args, **kwargs)
            except TableMissingError:
                self._recreate()
                raise

        return call


class OwnTable:
    """`serve` owns its table: when it goes missing (deleted, or an in-memory engine restarted), recreate it empty
    and, as on startup, give it a first key. Once per disappearance: concurrent finders wait and find it there."""

    def __init__(
        self,
        client: DynamoDBClient,
        table_name: str,
        definition: Mapping[str, Any],
        on_recreated: Callable[[], None],
    ) -> None:
        self._client, self._table, self._definition = client, table_name, definition
        self._on_recreated = on_recreated
        self._lock = threading.Lock()

    def guard(self, service: T) -> T:
        return cast("T", _Recreating(service, self.recreate))

    def recreate(self) -> None:
        with self._lock:
            try:
                if not ensure_table(self._client, self._table, self._definition):
                    return
            except DomainError as exc:
                print(f"table {self._table} is missing and could not be recreated yet: {exc}", file=sys.stderr)
                return
            print(f"table {self._table} was missing (deleted, or its engine restarted): recreated it empty", flush=True)
            self._on_recreated()
