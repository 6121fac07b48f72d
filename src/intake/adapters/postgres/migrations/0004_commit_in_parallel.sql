-- 0004_commit_in_parallel

-- The month's count, spread over shards so that commits count beside each other
-- (repeatable/intake_commit.sql says how). Room on the page keeps the counts' updates
-- HOT (no index entries to write).
    CREATE TABLE monthly_usage_shards (
        workspace_id text COLLATE "C" NOT NULL REFERENCES workspaces (workspace_id),
        period       text COLLATE "C" NOT NULL,  -- YYYY-MM, UTC
        shard        integer NOT NULL,
        count        integer NOT NULL CHECK (count >= 0),
        PRIMARY KEY (workspace_id, period, shard)
    ) WITH (fillfactor = 50)
;

-- What was counted so far goes to shard 0; the others are made by the next
-- commit of the month, which counts exactly.
            INSERT INTO monthly_usage_shards (workspace_id, period, shard, count)
            SELECT workspace_id, period, 0, count FROM monthly_usage
;

DROP TABLE monthly_usage
;

-- A month with nothing counted has no row, as before.
    CREATE VIEW monthly_usage AS
    SELECT workspace_id, period, sum(count)::integer AS count
    FROM monthly_usage_shards
    GROUP BY workspace_id, period
    HAVING sum(count) > 0
;

-- intake_commit: its live definition is in repeatable/intake_commit.sql.
