-- 0010_form_usage

-- The month (YYYY-MM, UTC) a submission was charged to its workspace's quota:
-- set when it is stored accepted, and when a spam or unverified one is released
-- (to the release's month); kept when it is marked spam afterwards, since the
-- month's usage is not given back. NULL: never charged.
ALTER TABLE submissions ADD COLUMN charged_period TEXT
;

-- The submissions already stored accepted, charged to the month they came in
-- (created_at is ISO 8601 in UTC: its first seven characters are the month).
            UPDATE submissions SET charged_period = substr(created_at, 1, 7)
            WHERE status = 'accepted'
;

-- Sets charged_period as a column default would, from the row itself, so that
-- the commit's INSERT stays as it is: an accepted row is charged to the month of
-- its created_at, the moment the pipeline charged its quota. A row given a
-- period keeps it.
            CREATE TRIGGER submissions_charged_period
                AFTER INSERT ON submissions
                FOR EACH ROW
                WHEN NEW.status = 'accepted' AND NEW.charged_period IS NULL
            BEGIN
                UPDATE submissions SET charged_period = substr(NEW.created_at, 1, 7)
                WHERE submission_id = NEW.submission_id;
            END
;

-- Each form's charges in a month (GET /v1/usage): the charged rows only.
            CREATE INDEX submissions_form_charged ON submissions (form_id, charged_period)
                WHERE charged_period IS NOT NULL
;
