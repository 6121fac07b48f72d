-- 0012_form_usage

-- The month (YYYY-MM, UTC) a submission was charged to its workspace's quota:
-- set when it is stored accepted, and when a spam or unverified one is released
-- (to the release's month); kept when it is marked spam afterwards, since the
-- month's usage is not given back. NULL: never charged. Nullable without a
-- default: no row is rewritten by the ALTER itself.
ALTER TABLE submissions ADD COLUMN charged_period text COLLATE "C"
;

-- The submissions already stored accepted, charged to the month they came in.
            UPDATE submissions
            SET charged_period = to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM')
            WHERE status = 'accepted'
;

-- Sets charged_period as a column default would, from the row itself, so that
-- intake_commit stays as it is: an accepted row is charged to the month of its
-- created_at, the moment the pipeline charged its quota. A row given a period
-- keeps it.
    CREATE FUNCTION intake_charge_period() RETURNS trigger
    LANGUAGE plpgsql
    AS $function$
    BEGIN
        NEW.charged_period := to_char(NEW.created_at AT TIME ZONE 'UTC', 'YYYY-MM');
        RETURN NEW;
    END
    $function$
;

-- Only accepted rows without a period reach the function: the others pay for
-- the WHEN test alone.
            CREATE TRIGGER submissions_charged_period
                BEFORE INSERT ON submissions
                FOR EACH ROW
                WHEN (NEW.status = 'accepted' AND NEW.charged_period IS NULL)
                EXECUTE FUNCTION intake_charge_period()
;

-- Each form's charges in a month (GET /v1/usage): the charged rows only.
            CREATE INDEX submissions_form_charged ON submissions (form_id, charged_period)
                WHERE charged_period IS NOT NULL
;
