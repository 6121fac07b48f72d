"""The purge of expired idempotency records and of published outbox rows past their
retention, over the pool: batches of one statement, each its own transaction."""

from __future__ import annotations

from datetime import datetime, timedelta

from intake.adapters.postgres import mapping
from intake.adapters.postgres.database import Database
from intake.ports.submissions import PurgeCounts, PurgeCutoffs

# Purging: one batch per statement, each in its own transaction (autocommit), oldest
# first. The batch is chosen once (ARRAY(...) is an InitPlan) by a range scan of an
# index (idempotency_created; outbox_published, partial, of published rows only), then
# deleted row by row: a join on the batch lets the planner read the whole table to hash
# it, at every batch. SKIP LOCKED: a row another purge has taken, or a commit is
# replacing, is left to it, so two purges at once neither wait on each other nor
# deadlock, and each row is deleted and counted once.
#
# The idempotency key is two columns, so the batch is its rows' ctids (a TID scan). The
# subquery has locked them, so they stay where they are until this statement ends; a
# row changed in between (replaced by a commit) is not visible at its new ctid, and is
# not deleted.
_PURGE_IDEMPOTENCY = """
    DELETE FROM idempotency WHERE ctid = ANY (ARRAY (
        SELECT ctid FROM idempotency
        WHERE created_at <= %(cutoff)s ORDER BY created_at LIMIT %(limit)s
        FOR UPDATE SKIP LOCKED
    ))
"""
# `published_at IS NOT NULL` is implied by the comparison; written out all the same, as
# the rule it is (an unpublished row is never deleted) and as the partial index's term.
# A row stays while a delivery of it is pending, or was parked as dead after the cutoff
# (kept for `intake outbox retry` as long as a published row is); its deliveries go
# with it (ON DELETE CASCADE). The check is a seek on the deliveries' unique index, or
# a read of the few pending and dead by their partial indexes (pending said as the
# deliveries_due index says it), as the planner finds cheaper.
_PURGE_OUTBOX = """
    DELETE FROM outbox WHERE event_id = ANY (ARRAY (
        SELECT o.event_id FROM outbox AS o
        WHERE o.published_at IS NOT NULL AND o.published_at <= %(cutoff)s
            AND NOT EXISTS (
                SELECT 1 FROM deliveries AS d
                WHERE d.event_id = o.event_id
                    AND (d.next_attempt_at IS NOT NULL  -- pending
                        OR (d.state = 'dead' AND d.dead_at > %(cutoff)s))
            )
        ORDER BY o.published_at LIMIT %(limit)s
        FOR UPDATE OF o SKIP LOCKED
    ))
"""

# Few rows (a form queues at most its hourly limit an hour), read without an index.
_PURGE_AUTORESPONSES = """
    DELETE FROM autoresponses WHERE autoresponse_id = ANY (ARRAY (
        SELECT autoresponse_id FROM autoresponses WHERE queued_at <= %(cutoff)s
        LIMIT %(limit)s FOR UPDATE SKIP LOCKED
    ))
"""


async def purge_expired(
    db: Database, now: datetime, outbox_retention: timedelta, batch_size: int
) -> PurgeCounts:
    cutoffs = PurgeCutoffs.at(now, outbox_retention, batch_size)
    return PurgeCounts(
        idempotency=await _purge(db, _PURGE_IDEMPOTENCY, cutoffs.idempotency, batch_size),
        outbox=await _purge(db, _PURGE_OUTBOX, cutoffs.outbox, batch_size),
        autoresponses=await _purge(db, _PURGE_AUTORESPONSES, cutoffs.autoresponses, batch_size),
    )


async def _purge(db: Database, query: str, cutoff: datetime, batch_size: int) -> int:
    """A connection per batch, given back in between. A short batch means nothing
    was left to take: rows skipped as locked belong to a statement that is deleting
    (or replacing) them, and a row changed meanwhile is the next purge's."""
    total = 0
    while True:
        params = {"cutoff": mapping.moment(cutoff), "limit": batch_size}
        deleted = await db.execute(query, params)
        total += deleted
        if deleted < batch_size:
            return total
