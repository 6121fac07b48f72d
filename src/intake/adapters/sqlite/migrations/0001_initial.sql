-- 0001_initial

            CREATE TABLE workspaces (
                workspace_id  TEXT PRIMARY KEY,
                name          TEXT NOT NULL,
                plan          TEXT NOT NULL,
                monthly_limit INTEGER,
                active        INTEGER NOT NULL CHECK (active IN (0, 1)),
                created_at    TEXT
            )
;

            CREATE TABLE monthly_usage (
                workspace_id TEXT NOT NULL REFERENCES workspaces (workspace_id),
                period       TEXT NOT NULL,  -- YYYY-MM, UTC
                count        INTEGER NOT NULL CHECK (count >= 0),
                PRIMARY KEY (workspace_id, period)
            ) WITHOUT ROWID
;

            CREATE TABLE forms (
                form_id            TEXT PRIMARY KEY,
                workspace_id       TEXT NOT NULL REFERENCES workspaces (workspace_id),
                public_form_key    TEXT NOT NULL,
                name               TEXT NOT NULL,
                mode               TEXT NOT NULL,
                enabled            INTEGER NOT NULL CHECK (enabled IN (0, 1)),
                allowed_origins    TEXT NOT NULL,  -- JSON array of origins
                rules              TEXT NOT NULL,  -- JSON array of {field, kind, limit}
                spam_threshold     REAL NOT NULL,
                challenge_provider TEXT,
                challenge_secret   TEXT,
                redirect_url       TEXT,
                created_at         TEXT,
                CHECK ((challenge_provider IS NULL) = (challenge_secret IS NULL))
            )
;

-- Every public submission starts with this lookup.
CREATE UNIQUE INDEX forms_public_form_key ON forms (public_form_key)
;

CREATE INDEX forms_workspace ON forms (workspace_id, form_id)
;

            CREATE TABLE api_keys (
                key_id       TEXT PRIMARY KEY,
                workspace_id TEXT NOT NULL REFERENCES workspaces (workspace_id),
                key_hash     BLOB NOT NULL UNIQUE,
                prefix       TEXT NOT NULL,
                created_at   TEXT NOT NULL,
                revoked_at   TEXT
            )
;

CREATE INDEX api_keys_workspace ON api_keys (workspace_id, created_at, key_id)
;

            CREATE TABLE submissions (
                submission_id TEXT PRIMARY KEY,  -- time-sortable: the listing order
                form_id       TEXT NOT NULL REFERENCES forms (form_id),
                workspace_id  TEXT NOT NULL REFERENCES workspaces (workspace_id),
                status        TEXT NOT NULL,
                data          TEXT NOT NULL,  -- JSON object
                subject       TEXT,
                reply_to      TEXT,
                spam_score    REAL NOT NULL,
                client_ip     TEXT,
                created_at    TEXT NOT NULL
            )
;

CREATE INDEX submissions_form ON submissions (form_id, submission_id)
;

            CREATE INDEX submissions_form_status
                ON submissions (form_id, status, submission_id)
;

-- No foreign keys: the event log outlives whatever it tells about.
            CREATE TABLE outbox (
                event_id        TEXT PRIMARY KEY,
                event_type      TEXT NOT NULL,
                submission_id   TEXT NOT NULL,
                form_id         TEXT NOT NULL,
                workspace_id    TEXT NOT NULL,
                payload         TEXT NOT NULL,  -- JSON object
                created_at      TEXT NOT NULL,
                published_at    TEXT,
                attempts        INTEGER NOT NULL DEFAULT 0,
                next_attempt_at TEXT NOT NULL,
                last_error      TEXT,
                dead_at         TEXT
            )
;

-- The relay's query: what is due and neither delivered nor given up on.
            CREATE INDEX outbox_unpublished ON outbox (next_attempt_at, event_id)
                WHERE published_at IS NULL AND dead_at IS NULL
;

            CREATE TABLE idempotency (
                scope         TEXT NOT NULL,
                key           TEXT NOT NULL,
                fingerprint   TEXT NOT NULL,
                submission_id TEXT NOT NULL,
                created_at    TEXT NOT NULL,
                PRIMARY KEY (scope, key)
            ) WITHOUT ROWID
;

-- For purging expired keys.
CREATE INDEX idempotency_created ON idempotency (created_at)
;
