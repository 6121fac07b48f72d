-- 0001_initial

            CREATE TABLE workspaces (
                workspace_id  text COLLATE "C" PRIMARY KEY,
                name          text NOT NULL,
                plan          text NOT NULL,
                monthly_limit integer,
                active        boolean NOT NULL,
                created_at    timestamptz
            )
;

-- Updated by every accepted submission: room on the page keeps the updates
-- HOT (no index entries to write).
            CREATE TABLE monthly_usage (
                workspace_id text COLLATE "C" NOT NULL REFERENCES workspaces (workspace_id),
                period       text COLLATE "C" NOT NULL,  -- YYYY-MM, UTC
                count        integer NOT NULL CHECK (count >= 0),
                PRIMARY KEY (workspace_id, period)
            ) WITH (fillfactor = 50)
;

            CREATE TABLE forms (
                form_id            text COLLATE "C" PRIMARY KEY,
                workspace_id       text COLLATE "C" NOT NULL
                                   REFERENCES workspaces (workspace_id),
                public_form_key    text COLLATE "C" NOT NULL,
                name               text NOT NULL,
                mode               text NOT NULL,
                enabled            boolean NOT NULL,
                allowed_origins    jsonb NOT NULL,  -- array of origins
                rules              jsonb NOT NULL,  -- array of {field, kind, limit}
                spam_threshold     double precision NOT NULL,
                challenge_provider text,
                challenge_secret   text,
                redirect_url       text,
                created_at         timestamptz,
                CHECK ((challenge_provider IS NULL) = (challenge_secret IS NULL))
            )
;

-- Every public submission starts with this lookup.
CREATE UNIQUE INDEX forms_public_form_key ON forms (public_form_key)
;

CREATE INDEX forms_workspace ON forms (workspace_id, form_id)
;

            CREATE TABLE api_keys (
                key_id       text COLLATE "C" PRIMARY KEY,
                workspace_id text COLLATE "C" NOT NULL REFERENCES workspaces (workspace_id),
                key_hash     bytea NOT NULL UNIQUE,
                prefix       text NOT NULL,
                created_at   timestamptz NOT NULL,
                revoked_at   timestamptz
            )
;

CREATE INDEX api_keys_workspace ON api_keys (workspace_id, created_at, key_id)
;

-- data is json, not jsonb: it keeps the fields' order and numbers as sent.
            CREATE TABLE submissions (
                submission_id text COLLATE "C" PRIMARY KEY,  -- time-sortable: the order
                form_id       text COLLATE "C" NOT NULL REFERENCES forms (form_id),
                workspace_id  text COLLATE "C" NOT NULL REFERENCES workspaces (workspace_id),
                status        text COLLATE "C" NOT NULL,
                data          json NOT NULL,  -- object
                subject       text,
                reply_to      text,
                spam_score    double precision NOT NULL,
                client_ip     text,
                created_at    timestamptz NOT NULL
            )
;

CREATE INDEX submissions_form ON submissions (form_id, submission_id)
;

            CREATE INDEX submissions_form_status
                ON submissions (form_id, status, submission_id)
;

-- No foreign keys: the event log outlives whatever it tells about.
            CREATE TABLE outbox (
                event_id        text COLLATE "C" PRIMARY KEY,
                event_type      text NOT NULL,
                submission_id   text COLLATE "C" NOT NULL,
                form_id         text COLLATE "C" NOT NULL,
                workspace_id    text COLLATE "C" NOT NULL,
                payload         json NOT NULL,  -- object
                created_at      timestamptz NOT NULL,
                published_at    timestamptz,
                attempts        integer NOT NULL DEFAULT 0,
                next_attempt_at timestamptz NOT NULL,
                last_error      text,
                dead_at         timestamptz
            )
;

-- The relay's query: what is due and neither delivered nor given up on.
            CREATE INDEX outbox_unpublished ON outbox (next_attempt_at, event_id)
                WHERE published_at IS NULL AND dead_at IS NULL
;

            CREATE TABLE idempotency (
                scope         text COLLATE "C" NOT NULL,
                key           text COLLATE "C" NOT NULL,
                fingerprint   text NOT NULL,
                submission_id text COLLATE "C" NOT NULL,
                created_at    timestamptz NOT NULL,
                PRIMARY KEY (scope, key)
            )
;

-- For purging expired keys.
CREATE INDEX idempotency_created ON idempotency (created_at)
;

-- intake_commit: its live definition is in repeatable/intake_commit.sql.
