"""The DynamoDB adapter: the only package that talks to DynamoDB (through botocore, which boto3 is built on).

One module per job:
- `client`: the client, its pool, and its failures in the domain's terms
- `provisioning`: creating the table from the template's definition
- `codec`: keys, items and the table layout (its only one)
- `expressions`: update expressions, the totals' and idempotency actions, and the conditions writes share
- `stored`: a memory item as writes read it, and the transaction they share
- `fence`: the write and read fence on a live API key
- `memories`: the memory repository (the port's implementation)
- `lifecycle`: revisions, restore, history and purge
- `listing`: query planning for a listing
- `queries`: the Queries a listing sends, and the id segments a search reads
- `totals`: a partition's stored counts, and how many rows a Query must read
- `searches`: a search read in id segments at once, the namespace's or a tag's
- `searchcopies`: a `q` search over the search copies
- `accessitems`: each memory's access stamp in an item of its own, and listings by last use
- `stamps`: access stamps, one or a page's in batches
- `digests`: recall's digests: written with each change, read by recall and the backfill, re-embedded by `embed --all`
- `rawitems`: recall's digest reads take their items from the answer's JSON
- `keys`: the API key repository
- `grants`: OAuth clients and grants
- `namespaces`: export and import of whole namespaces, for the command line
- `erasure`: erasing a namespace so that it stays erased
- `usage`: consumed capacity, summed per request for the metrics
Only the composition root (handlers.bootstrap) and local tooling import it; the core never does.
"""

from adapters.dynamodb.client import POOL_CONNECTIONS, STAMP_CONCURRENCY, make_client
from adapters.dynamodb.codec import INDEXES, LISTED_ATTRIBUTES
from adapters.dynamodb.grants import DynamoDBGrantRepository
from adapters.dynamodb.keys import DynamoDBKeyRepository
from adapters.dynamodb.memories import UPDATE_ATTEMPTS, DynamoDBMemoryRepository
from adapters.dynamodb.provisioning import ensure_table, table_exists
from adapters.dynamodb.stored import TRANSACTION_ATTEMPTS

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
    "ensure_table",
    "make_client",
    "table_exists",
]
