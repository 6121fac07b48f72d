"""The statements the `sql` repositories take from the PostgreSQL store, where it is
written otherwise than SQLite (sqlite/dialect.py)."""

from __future__ import annotations

from intake.adapters.sql.purge import PurgeStatements

# Purging, oldest first. The batch is chosen once (ARRAY(...) is an InitPlan) by a range
# scan of an index (idempotency_created; outbox_published, partial, of published rows
# only), then deleted row by row: a join on the batch lets the planner read the whole
# table to hash it, at every batch. SKIP LOCKED: a row another purge has taken, or a
# commit is replacing, is left to it, so two purges at once neither wait on each other
# nor deadlock, and each row is deleted and counted once.
#
# The idempotency key is two columns, so the batch is its rows' ctids (a TID scan). The
# subquery has locked them, so they stay where they are until this statement ends; a
# row changed in between (replaced by a commit) is not visible at its new ctid, and is
# not deleted.
#
# Published outbox rows: as SQLite's, but for the check of their deliveries, a seek on
# the deliveries' unique index or a read of the few pending and dead by their partial
# indexes, as the planner finds cheaper.
PURGE = PurgeStatements(
    idempotency="""
        DELETE FROM idempotency WHERE ctid = ANY (ARRAY (
            SELECT ctid FROM idempotency
            WHERE created_at <= :cutoff ORDER BY created_at LIMIT :limit
            FOR UPDATE SKIP LOCKED
        ))
    """,
    outbox="""
        DELETE FROM outbox WHERE event_id = ANY (ARRAY (
            SELECT o.event_id FROM outbox AS o
            WHERE o.published_at IS NOT NULL AND o.published_at <= :cutoff
                AND NOT EXISTS (
                    SELECT 1 FROM deliveries AS d
                    WHERE d.event_id = o.event_id
                        AND (d.next_attempt_at IS NOT NULL  -- pending
                            OR (d.state = 'dead' AND d.dead_at > :cutoff))
                )
            ORDER BY o.published_at LIMIT :limit
            FOR UPDATE OF o SKIP LOCKED
        ))
    """,
    autoresponses="""
        DELETE FROM autoresponses WHERE autoresponse_id = ANY (ARRAY (
            SELECT autoresponse_id FROM autoresponses WHERE queued_at <= :cutoff
            LIMIT :limit FOR UPDATE SKIP LOCKED
        ))
    """,
)
