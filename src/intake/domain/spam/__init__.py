"""The learning spam filter: tokens, their keyed hashes, the statistics owners teach, and
the classifier that reads them. Pure: no I/O (docs/scoring.md)."""
