"""The ports' implementations (core.repository, core.recall.embedding, core.clientdocs): DynamoDB (`dynamodb`, the only
boto3 importer), the in-memory store the tests and the bench run on (`memory`), Amazon Bedrock's embedding model
(`bedrock`), the offline model `serve` runs (`offline`) and the HTTPS fetcher of client documents (`https`). Only the
composition root (handlers.bootstrap) and local tooling import them."""
