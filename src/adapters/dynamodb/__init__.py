"""The DynamoDB adapter: the only package that talks to DynamoDB (through botocore, which boto3 is built on).

One module per kind of stored item, each alone writing and reading its items:
- `records`: memory items, as a write loads them, their changes' Puts, and their removal's steps
- `revisions`: each change's revision, a memory's history, their removal
- `accessitems`: each memory's access stamp in an item of its own, and listings by last use
- `searchcopies`: the search copies, and a `q` search over them
- `digests`: recall's digests: written with each change, read by recall and the backfill, re-embedded by `embed --all`
- `tagcopies`: a memory's copies in its tags' partitions
- `idempotency`: a create's idempotency record
- `counters`: a namespace's id counter, and the totals of a namespace and of each tag
- `changes`: a namespace's changes by time (revisions' index entries, markers), as a warm index reads them
- `changekeys`: a change's key in the change index: when the call landing it is sent, then its item's sort key
- `keys`: the API key repository
- `grants`: OAuth clients and grants
And the modules over them:
- `commit`: a memory loaded for a write, the one function assembling a commit from every kind's actions, the removal
- `memories`: the memory repository (the port's implementation)
- `client`: the client, its pool, and its failures in the domain's terms
- `provisioning`: creating the table from the template's definition
- `codec`: the table layout (its only one): prefixes, partitions and the encodings the kinds share
- `table`: consistent reads, the transaction, batch writes and pages, for every kind
- `fence`: the write and read fence on a live API key
- `listing`: query planning for a listing
- `queries`: the Queries a listing sends, and the id segments a search reads
- `totals`: a partition's stored counts, and how many rows a Query must read
- `searches`: a search read in id segments at once, the namespace's or a tag's
- `stamps`: access stamps, one or a page's in batches
- `rawitems`: recall's digest reads take their items from the answer's JSON
- `namespaces`: export and import of whole namespaces, for the command line
- `erasure`: erasing a namespace so that it stays erased
- `indexed`: the namespaces recall's vector index holds whole (a mark on the id counter), and the backfill's reads
- `usage`: consumed capacity, summed per request for the metrics
Only the composition root (handlers.bootstrap) and local tooling import it; the core never does.
"""

from adapters.dynamodb.client import POOL_CONNECTIONS, STAMP_CONCURRENCY, make_client
from adapters.dynamodb.codec import INDEXES, LISTED_ATTRIBUTES
from adapters.dynamodb.grants import DynamoDBGrantRepository
from adapters.dynamodb.keys import DynamoDBKeyRepository
from adapters.dynamodb.memories import DynamoDBMemoryRepository
from adapters.dynamodb.provisioning import ensure_table, table_exists
from adapters.dynamodb.table import TRANSACTION_ATTEMPTS

__all__ = [
    "INDEXES",
    "LISTED_ATTRIBUTES",
    "POOL_CONNECTIONS",
    "STAMP_CONCURRENCY",
    "TRANSACTION_ATTEMPTS",
    "DynamoDBGrantRepository",
    "DynamoDBKeyRepository",
    "DynamoDBMemoryRepository",
    "ensure_table",
    "make_client",
    "table_exists",
]
