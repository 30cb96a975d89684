"""The purge function's entrypoint (template.yaml `PurgeFunction`): an EventBridge schedule runs it every hour to
purge the memories deleted longer than the retention window ago (`DELETED_RETENTION_DAYS`). It reads only the
sparse index of deleted memories, never the table; a run stopped half-way (a timeout) is finished by the next."""

from datetime import timedelta
from typing import Any

from aws_lambda_powertools import Logger

from handlers import bootstrap

logger = Logger()

# The settings, the DynamoDB client and services are built at import, in the init phase.
bootstrap.default_services()


@logger.inject_lambda_context(log_event=False)
def handler(event: dict[str, Any], context: Any) -> dict[str, int]:
    services = bootstrap.default_services()
    purged = services.memories.purge_expired(timedelta(days=services.settings.deleted_retention_days))
    logger.info("purged the memories deleted before the retention window", extra={"purged": purged})
    return {"purged": purged}
