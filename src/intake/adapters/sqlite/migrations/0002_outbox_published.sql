-- 0002_outbox_published

-- For purging published rows: only those, so the index costs nothing to a
-- commit (its row is unpublished) and the purge never reads the rest.
            CREATE INDEX outbox_published ON outbox (published_at)
                WHERE published_at IS NOT NULL
;
