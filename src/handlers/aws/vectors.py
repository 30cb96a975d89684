"""The vector index's stream consumer (template.yaml `VectorSyncFunction`, only with `RecallVectorIndex` on): the
table's DynamoDB stream (NEW_IMAGE) invokes it with batches of records, and it keeps the S3 Vectors index in step with
the digests (adapters/vectorsync.py). It answers a partial batch response: the records not applied, which Lambda
retries from the first of; the rest of the table is never read."""

from collections.abc import Callable
from typing import Any

from aws_lambda_powertools import Logger

from handlers.bootstrap.vectors import StreamSync, stream_sync_on_first_use

logger = Logger()


def entrypoint(sync: StreamSync) -> Callable[[dict[str, Any], Any], dict[str, list[dict[str, str]]]]:
    """The function's handler over `sync` (handlers.bootstrap.vectors). Built once, at init (below); tests build
    their own."""

    @logger.inject_lambda_context(log_event=False)
    def handler(event: dict[str, Any], context: Any) -> dict[str, list[dict[str, str]]]:
        failed = sync(event.get("Records", []))
        if failed:
            logger.warning("records not applied to the vector index: retried", extra={"failed": len(failed)})
        return {"batchItemFailures": [{"itemIdentifier": sequence} for sequence in failed]}

    return handler


# The client is built on the first batch, from the environment (the template sets it); importing this module reads
# nothing, so tests build their own handler over a fake or stubbed index.
handler = entrypoint(stream_sync_on_first_use())
