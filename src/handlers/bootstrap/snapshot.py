"""What a process restored from a Lambda SnapStart snapshot must not keep of the snapshot: every copy restored from
one snapshot starts with the same memory, so whatever in it is random, connected or timed would be shared by all of
them (handlers.aws.snapstart registers this after each restore).

The keys, key ids, grant ids and tokens the services issue come from the `secrets` module (the kernel's generator,
which Lambda makes unique per restored copy); what lives in the process's own memory is made fresh here."""

from __future__ import annotations

import random

from adapters.bedrock import BedrockEmbedder
from handlers.bootstrap import Services


def restored(services: Services) -> None:
    """Make a restored copy its own: re-seed `random` (the retries' jitter: copies backing off in step would retry
    in step), drop the pooled connections of the DynamoDB and Bedrock clients (one TLS session must not serve two
    copies; new ones open on the next call), and forget every verification cached with a time (keys, tokens, client
    documents), since a snapshot's cache entries are as old as the snapshot, not as their stamps say."""
    random.seed()
    if services.client is not None:
        services.client.close()
    if isinstance(services.embedder, BedrockEmbedder):
        services.embedder.reconnect()
    services.keys.forget_verified()
    services.grants.forget_verified()
