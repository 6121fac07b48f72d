-- 0016_retention

-- Days a form keeps its submissions before the retention sweep erases them
-- (`intake form update --retention-days`); NULL: kept until an owner erases them.
-- Nullable without a default: no row is rewritten by the ALTER itself.
ALTER TABLE forms ADD COLUMN retention_days integer
    CHECK (retention_days IS NULL OR retention_days >= 1)
;

-- The retention sweep's scan of one form, oldest first: a range of this index
-- up to the form's cutoff, so a sweep never reads the rows it keeps.
CREATE INDEX submissions_form_created ON submissions (form_id, created_at)
;

-- An erasure on request finds the submissions whose reply-to is the address by
-- this index, beside those whose data holds it by the trigram index (0010).
CREATE INDEX submissions_reply_to ON submissions (lower(reply_to))
    WHERE reply_to IS NOT NULL
;

-- How far the sweep that cuts full client addresses to their networks has come
-- (INTAKE_CLIENT_IP_FULL_HOURS): every submission up to this id is done. Ids sort by
-- time, so a sweep reads only the submissions since, along the primary key. Its one
-- row is locked by a sweep's batch, so two sweeps at once take turns.
CREATE TABLE client_ip_sweep (
    only_row      boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    swept_through text COLLATE "C" NOT NULL
)
;
INSERT INTO client_ip_sweep (swept_through) VALUES ('')
;
