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

-- The commit of step 12 in one statement, one round trip, one transaction (see
-- PostgresSubmissions.commit). Its order:
-- 1. a live record holding the key answers the request before anything else, even when
-- the month's quota is spent, and nothing is written;
-- 2. the quota counts one only while below the ceiling (the upsert locks the month's row
-- and re-reads it, so N concurrent commits against R remaining commit min(N, R));
-- at the ceiling nothing was written yet;
-- 3. the key is claimed by the unique constraint, not by the check of step 1: a
-- concurrent claim waits for the first one's transaction and then sees its row. An
-- expired record is replaced in the same upsert. If another commit took the key
-- since step 1, the count of step 2 is given back and its record is the answer;
-- 4. the submission, its outbox row, and a wake-up for the relay (delivered at commit).
-- A refusal never raises: an error would end the transaction, but would also be logged
-- by the server for every refused submission, and a BEGIN ... EXCEPTION block would
-- cost a subtransaction per commit. Step 3's give-back is the only compensation.
    CREATE FUNCTION intake_commit(
        p_submission_id text,
        p_form_id text,
        p_workspace_id text,
        p_status text,
        p_data json,
        p_subject text,
        p_reply_to text,
        p_spam_score double precision,
        p_client_ip text,
        p_created_at timestamptz,
        p_event_id text,
        p_event_type text,
        p_event_submission_id text,
        p_event_form_id text,
        p_event_workspace_id text,
        p_payload json,
        p_event_created_at timestamptz,
        p_idem_scope text,
        p_idem_key text,
        p_idem_fingerprint text,
        p_idem_submission_id text,
        p_idem_created_at timestamptz,
        p_idem_expired_at timestamptz,
        p_quota_workspace_id text,
        p_quota_period text,
        p_quota_ceiling bigint,
        OUT outcome text,
        OUT held_fingerprint text,
        OUT held_submission_id text,
        OUT held_created_at timestamptz
    )
    LANGUAGE plpgsql
    AS $function$
    BEGIN
        IF p_idem_scope IS NOT NULL THEN
            SELECT i.fingerprint, i.submission_id, i.created_at
            INTO held_fingerprint, held_submission_id, held_created_at
            FROM idempotency AS i
            WHERE i.scope = p_idem_scope AND i.key = p_idem_key
                AND i.created_at > p_idem_expired_at;
            IF FOUND THEN
                outcome := 'idempotency_taken';
                RETURN;
            END IF;
        END IF;

        IF p_quota_workspace_id IS NOT NULL THEN
            -- The WHERE of the SELECT keeps a zero ceiling from creating the month's row.
            INSERT INTO monthly_usage AS u (workspace_id, period, count)
            SELECT p_quota_workspace_id, p_quota_period, 1 WHERE p_quota_ceiling > 0
            ON CONFLICT (workspace_id, period)
            DO UPDATE SET count = u.count + 1 WHERE u.count < p_quota_ceiling;
            IF NOT FOUND THEN
                outcome := 'quota_reached';
                RETURN;
            END IF;
        END IF;

        IF p_idem_scope IS NOT NULL THEN
            LOOP
                INSERT INTO idempotency AS i
                    (scope, key, fingerprint, submission_id, created_at)
                VALUES (
                    p_idem_scope, p_idem_key, p_idem_fingerprint, p_idem_submission_id,
                    p_idem_created_at
                )
                ON CONFLICT (scope, key) DO UPDATE
                SET fingerprint = excluded.fingerprint,
                    submission_id = excluded.submission_id,
                    created_at = excluded.created_at
                WHERE i.created_at <= p_idem_expired_at;
                EXIT WHEN FOUND;
                -- Held by a live record committed since the check above: each statement
                -- of the function reads what is committed when it starts.
                SELECT i.fingerprint, i.submission_id, i.created_at
                INTO held_fingerprint, held_submission_id, held_created_at
                FROM idempotency AS i
                WHERE i.scope = p_idem_scope AND i.key = p_idem_key;
                IF FOUND THEN
                    IF p_quota_workspace_id IS NOT NULL THEN
                        -- The month's row is still locked by this transaction: no one
                        -- has seen the count, and it goes back to what it was.
                        DELETE FROM monthly_usage
                        WHERE workspace_id = p_quota_workspace_id
                            AND period = p_quota_period AND count = 1;
                        IF NOT FOUND THEN
                            UPDATE monthly_usage SET count = count - 1
                            WHERE workspace_id = p_quota_workspace_id
                                AND period = p_quota_period;
                        END IF;
                    END IF;
                    outcome := 'idempotency_taken';
                    RETURN;
                END IF;
                -- The holder was deleted in between (a purge): the key is free again.
            END LOOP;
        END IF;

        INSERT INTO submissions (
            submission_id, form_id, workspace_id, status, data, subject, reply_to,
            spam_score, client_ip, created_at
        ) VALUES (
            p_submission_id, p_form_id, p_workspace_id, p_status, p_data, p_subject,
            p_reply_to, p_spam_score, p_client_ip, p_created_at
        );
        -- Due at once: the relay's first attempt needs no wait.
        INSERT INTO outbox (
            event_id, event_type, submission_id, form_id, workspace_id, payload,
            created_at, next_attempt_at
        ) VALUES (
            p_event_id, p_event_type, p_event_submission_id, p_event_form_id,
            p_event_workspace_id, p_payload, p_event_created_at, p_event_created_at
        );
        -- A wake-up, not a message: the relay LISTENs, then reads the outbox table.
        PERFORM pg_notify('intake_outbox', '');
        outcome := 'committed';
    END
    $function$
;
