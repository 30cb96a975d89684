"""Amazon DynamoDB Local on a free loopback port for one bench part, as the tests run it, stopped when it ends."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO

REGION = "us-east-1"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def dynamodb_local(log: IO[bytes]) -> Iterator[str]:
    """DynamoDB Local (1 GiB heap) started and answering; yields its endpoint URL."""
    import boto3
    from botocore.config import Config

    from local.engines import DynamoDBLocal

    local = DynamoDBLocal(free_port(), log, heap="1g")
    probe = boto3.client(
        "dynamodb",
        endpoint_url=local.endpoint_url,
        region_name=REGION,
        config=Config(retries={"total_max_attempts": 1}, connect_timeout=1, read_timeout=2),
    )
    local.start(probe.list_tables)
    try:
        yield local.endpoint_url
    finally:
        local.stop()
