-- 0006_storage_ceiling

-- A workspace's own ceiling, over INTAKE_WORKSPACE_STORAGE_LIMIT; NULL: none.
ALTER TABLE workspaces ADD COLUMN storage_limit INTEGER
;

-- The bytes of files each workspace's stored submissions hold, whatever
-- their status: what the commit checks the storage ceiling against.
            CREATE TABLE workspace_storage (
                workspace_id TEXT PRIMARY KEY REFERENCES workspaces (workspace_id),
                bytes        INTEGER NOT NULL CHECK (bytes >= 0)
            ) WITHOUT ROWID
;

-- The files stored before, counted once.
            INSERT INTO workspace_storage (workspace_id, bytes)
            SELECT s.workspace_id, sum(json_extract(f.value, '$.size'))
            FROM submissions AS s, json_each(s.files) AS f
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
