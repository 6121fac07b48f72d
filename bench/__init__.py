"""`make bench`: intake under load against the ceilings of its framework and its storage,
on the same machine, with the targets it is held to (docs/performance.md)."""
