"""The purge of expired idempotency records and of published outbox rows past their
retention, over one SQLite connection: batches of one statement, each its own transaction."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta

from intake.adapters.sqlite import mapping
from intake.adapters.sqlite.connection import transaction, truncate_wal
from intake.adapters.sqlite.worker import Worker
from intake.ports.submissions import PurgeCounts, PurgeCutoffs

# Purging: one batch per statement, oldest first, each a range scan of an index
# (idempotency_created; outbox_published, partial, of published rows only). SQLite's
# DELETE takes no LIMIT unless so compiled, hence the subquery.
_PURGE_IDEMPOTENCY = """
    DELETE FROM idempotency WHERE (scope, key) IN (
        SELECT scope, key FROM idempotency
        WHERE created_at <= :cutoff ORDER BY created_at LIMIT :limit
    )
"""
# `published_at IS NOT NULL` is implied by the comparison; written out all the same, as
# the rule it is (an unpublished row is never deleted) and as the partial index's term.
# A row stays while a delivery of it is pending, or was parked as dead after the cutoff
# (kept for `intake outbox retry` as long as a published row is); its deliveries go
# with it (ON DELETE CASCADE). The check is a seek on the deliveries' unique index;
# pending is said as the deliveries_due index says it.
_PURGE_OUTBOX = """
    DELETE FROM outbox WHERE event_id IN (
        SELECT event_id FROM outbox
        WHERE published_at IS NOT NULL AND published_at <= :cutoff
            AND NOT EXISTS (
                SELECT 1 FROM deliveries AS d
                WHERE d.event_id = outbox.event_id
                    AND (d.next_attempt_at IS NOT NULL  -- pending
                        OR (d.state = 'dead' AND d.dead_at > :cutoff))
            )
        ORDER BY published_at LIMIT :limit
    )
"""


# Few rows (a form queues at most its hourly limit an hour), read without an index.
_PURGE_AUTORESPONSES = """
    DELETE FROM autoresponses WHERE autoresponse_id IN (
        SELECT autoresponse_id FROM autoresponses WHERE queued_at <= :cutoff LIMIT :limit
    )
"""


def _purge_batch(conn: sqlite3.Connection, query: str, cutoff: datetime, limit: int) -> int:
    with transaction(conn):
        return conn.execute(query, {"cutoff": mapping.time_text(cutoff), "limit": limit}).rowcount


async def purge_expired(
    worker: Worker, now: datetime, outbox_retention: timedelta, batch_size: int
) -> PurgeCounts:
    cutoffs = PurgeCutoffs.at(now, outbox_retention, batch_size)
    counts = PurgeCounts(
        idempotency=await _purge(worker, _PURGE_IDEMPOTENCY, cutoffs.idempotency, batch_size),
        outbox=await _purge(worker, _PURGE_OUTBOX, cutoffs.outbox, batch_size),
        autoresponses=await _purge(worker, _PURGE_AUTORESPONSES, cutoffs.autoresponses, batch_size),
    )
    # Outbox rows carry a copy of the data: none may stay behind in the log.
    if counts.idempotency or counts.outbox or counts.autoresponses:
        await worker.run(truncate_wal)
    return counts


async def _purge(worker: Worker, query: str, cutoff: datetime, batch_size: int) -> int:
    """One batch per hop to the worker, so this process's submissions are served
    between them, and another process waits for the write lock one batch at most.
    A short batch means none was left (another purge may have taken some)."""
    total = 0
    while True:
        deleted = await worker.run(_purge_batch, query, cutoff, batch_size)
        total += deleted
        if deleted < batch_size:
            return total
