"""The statements the `sql` repositories take from the SQLite store, where it is written
otherwise than PostgreSQL (postgres/dialect.py says why each differs)."""

from __future__ import annotations

from intake.adapters.sql.purge import PurgeStatements

# Purging: a range scan of an index each (idempotency_created; outbox_published, partial,
# of published rows only). SQLite's DELETE takes no LIMIT unless so compiled, hence the
# subquery. `published_at IS NOT NULL` is implied by the comparison; written out all the
# same, as the rule it is (an unpublished row is never deleted) and as the partial
# index's term. A row stays while a delivery of it is pending, or was parked as dead
# after the cutoff (kept for `intake outbox retry` as long as a published row is); its
# deliveries go with it (ON DELETE CASCADE). The check is a seek on the deliveries'
# unique index; pending is said as the deliveries_due index says it. The autoresponder's
# records are few (a form queues at most its hourly limit an hour), read without an index.
PURGE = PurgeStatements(
    idempotency="""
        DELETE FROM idempotency WHERE (scope, key) IN (
            SELECT scope, key FROM idempotency
            WHERE created_at <= :cutoff ORDER BY created_at LIMIT :limit
        )
    """,
    outbox="""
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
    """,
    autoresponses="""
        DELETE FROM autoresponses WHERE autoresponse_id IN (
            SELECT autoresponse_id FROM autoresponses WHERE queued_at <= :cutoff LIMIT :limit
        )
    """,
)
