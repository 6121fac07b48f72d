-- 0002_outbox_published

-- For purging published rows: only those, so a commit (its row unpublished)
-- writes no entry, and the purge never reads the rest. Not CONCURRENTLY,
-- which cannot run in the migration's transaction: commits wait while the
-- build reads the outbox once (seconds for millions of rows).
            CREATE INDEX outbox_published ON outbox (published_at)
                WHERE published_at IS NOT NULL
;
