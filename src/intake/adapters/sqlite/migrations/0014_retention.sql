-- 0014_retention

-- Days a form keeps its submissions before the retention sweep erases them
-- (`intake form update --retention-days`); NULL: kept until an owner erases them.
ALTER TABLE forms ADD COLUMN retention_days INTEGER
    CHECK (retention_days IS NULL OR retention_days >= 1)
;

-- The retention sweep's scan of one form, oldest first: a range of this index
-- up to the form's cutoff, so a sweep never reads the rows it keeps.
CREATE INDEX submissions_form_created ON submissions (form_id, created_at)
;

-- How far the sweep that cuts full client addresses to their networks has come
-- (INTAKE_CLIENT_IP_FULL_HOURS): every submission up to this id is done. Ids sort by
-- time, so a sweep reads only the submissions since, along the primary key.
CREATE TABLE client_ip_sweep (
    only_row      INTEGER PRIMARY KEY CHECK (only_row = 1),
    swept_through TEXT NOT NULL
)
;
INSERT INTO client_ip_sweep (only_row, swept_through) VALUES (1, '')
;
