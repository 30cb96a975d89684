"""Recall: ranked retrieval by meaning (CONTRACT.md, Recall): the query, the lexical and semantic parts, the
embedding port and the ranking that combines them with the lifecycle and access signals."""
