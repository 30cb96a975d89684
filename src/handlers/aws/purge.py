"""The purge function's entrypoint (template.yaml `PurgeFunction`): an EventBridge schedule runs it every hour to
purge the memories deleted longer than the retention window ago (`DELETED_RETENTION_DAYS`), then to embed the recall
digests still waiting for their vector (core.recall.backfill), a batch a run. It reads only the sparse indexes of
deleted memories and of waiting digests, never the table; a run stopped half-way (a timeout) is finished by the next.
It wires no recall ranking (bootstrap.services_over), so it ships without the stemmer."""

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from aws_lambda_powertools import Logger

from core.recall.embedding import EmbedderUnavailableError
from handlers import bootstrap

logger = Logger()


def entrypoint(services: bootstrap.Services) -> Callable[[dict[str, Any], Any], dict[str, int]]:
    """The function's handler over `services` (built without ranking: handlers.bootstrap.from_environment). Built
    once, at init (below); tests build their own."""

    @logger.inject_lambda_context(log_event=False)
    def handler(event: dict[str, Any], context: Any) -> dict[str, int]:
        purged = services.memories.purge_expired(timedelta(days=services.settings.deleted_retention_days))
        logger.info("purged the memories deleted before the retention window", extra={"purged": purged})
        return {"purged": purged, "embedded": _backfill(services)}

    return handler


def _backfill(services: bootstrap.Services) -> int:
    """Embed a batch of waiting digests; an unavailable model is no failure of the run (the purge, whose alarm is
    the retention guarantee's, succeeded): they wait for the next one."""
    if services.backfill is None:
        return 0
    try:
        done = services.backfill.run()
    except EmbedderUnavailableError as exc:
        logger.warning(
            "the embedding model is unavailable: waiting digests wait for the next run", extra={"why": str(exc)}
        )
        return 0
    logger.info("embedded waiting recall digests", extra={"embedded": done.embedded, "skipped": done.skipped})
    return done.embedded


# The settings, the DynamoDB client and services are built once, at import, in the init phase, from the environment.
handler = entrypoint(bootstrap.from_environment(ranking=False))
