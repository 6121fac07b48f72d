-- 0008_storage_ceiling

-- A workspace's own ceiling, over INTAKE_WORKSPACE_STORAGE_LIMIT; NULL: none.
-- Nullable without a default: no row is rewritten.
ALTER TABLE workspaces ADD COLUMN storage_limit bigint
;

-- The bytes of files each workspace's stored submissions hold, whatever
-- their status. Room on the page keeps its updates HOT, as the quota's.
            CREATE TABLE workspace_storage (
                workspace_id text COLLATE "C" PRIMARY KEY
                    REFERENCES workspaces (workspace_id),
                bytes        bigint NOT NULL CHECK (bytes >= 0)
            ) WITH (fillfactor = 50)
;

-- The files stored before, counted once.
            INSERT INTO workspace_storage (workspace_id, bytes)
            SELECT s.workspace_id, sum((f.value ->> 'size')::bigint)
            FROM submissions AS s, jsonb_array_elements(s.files) AS f
            GROUP BY s.workspace_id
;

-- Spam retention's scan, oldest first: the flagged rows only, so that an
-- accepted submission's commit pays nothing for it.
            CREATE INDEX submissions_flagged ON submissions (created_at, submission_id)
                WHERE status IN ('spam', 'unverified')
;

-- A submission's events, for spam retention's check and delete.
CREATE INDEX outbox_submission ON outbox (submission_id)
;

-- intake_commit: its live definition is in repeatable/intake_commit.sql.
