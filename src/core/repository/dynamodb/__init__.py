"""The DynamoDB adapter: the only package that talks to DynamoDB (through botocore, which boto3 is built on).

One module per job: `client` (the client, its pool and error translation), `provisioning` (creating the table),
`codec` (keys, items and the table layout), `expressions` (update expressions and shared conditions), `listing`
(query planning for `find`, with `queries` and `totals`), `stamps` (access stamps), `stored` (a memory item as
writes read it, and the transaction they share), `memories` (the memory repository), `lifecycle` (revisions,
restore, history and purge), `keys` (the API key repository),
`grants` (OAuth clients and grants), `migration` (bringing stored memories up to this
version's layout) and `usage` (consumed capacity).
Only the composition root (handlers.bootstrap) and local tooling import it; the core never does.
"""

from core.repository.dynamodb.client import POOL_CONNECTIONS, STAMP_CONCURRENCY, make_client
from core.repository.dynamodb.codec import INDEXES, LISTED_ATTRIBUTES
from core.repository.dynamodb.grants import DynamoDBGrantRepository
from core.repository.dynamodb.keys import DynamoDBKeyRepository
from core.repository.dynamodb.memories import UPDATE_ATTEMPTS, DynamoDBMemoryRepository
from core.repository.dynamodb.migration import Migrated, migrate
from core.repository.dynamodb.provisioning import ensure_table, table_exists
from core.repository.dynamodb.stored import TRANSACTION_ATTEMPTS

__all__ = [
    "INDEXES",
    "LISTED_ATTRIBUTES",
    "POOL_CONNECTIONS",
    "STAMP_CONCURRENCY",
    "TRANSACTION_ATTEMPTS",
    "UPDATE_ATTEMPTS",
    "DynamoDBGrantRepository",
    "DynamoDBKeyRepository",
    "DynamoDBMemoryRepository",
    "Migrated",
    "ensure_table",
    "make_client",
    "migrate",
    "table_exists",
]
