"""The knowledge base: documents uploaded to S3, ingested by a queue-fed function into chunks with embeddings and
full text (Postgres + pgvector), searched hybrid (reciprocal rank fusion) within the caller's org and collections.
See docs/knowledge.md."""
