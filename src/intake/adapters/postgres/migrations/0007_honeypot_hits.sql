-- 0007_honeypot_hits

-- A form's filled honeypots by day, in shards that readers add up. Room on
-- the page keeps the counts' updates HOT, as the quota's.
            CREATE TABLE honeypot_hits (
                form_id text COLLATE "C" NOT NULL REFERENCES forms (form_id),
                day     text COLLATE "C" NOT NULL,  -- YYYY-MM-DD, UTC
                shard   integer NOT NULL,
                count   bigint NOT NULL CHECK (count > 0),
                PRIMARY KEY (form_id, day, shard)
            ) WITH (fillfactor = 50)
;

-- 0007: a filled honeypot's write (PostgresSubmissions.record_honeypot), in one round
-- trip and one transaction with a WAL flush, as a commit is, so that its answer takes
-- as long: the FormCheck and the key as intake_commit has them, then one more to the
-- form's count of the day. The count is spread over shards by connection, as the quota
-- is (repeatable/intake_commit.sql): a flood of bots on one form never queues its
-- commits on one row, which would make their answers slower than real ones.
    CREATE FUNCTION intake_record_honeypot(
        p_form_id text,
        p_day text,
        p_idem_scope text,
        p_idem_key text,
        p_idem_fingerprint text,
        p_idem_submission_id text,
        p_idem_created_at timestamptz,
        p_idem_expired_at timestamptz,
        p_check_form_id text,
        p_check_public_key text,
        OUT outcome text,
        OUT held_fingerprint text,
        OUT held_submission_id text,
        OUT held_created_at timestamptz
    )
    LANGUAGE plpgsql
    AS $function$
    DECLARE
        v_public_key text;
        v_mode text;
        v_open boolean;
    BEGIN
        IF p_check_form_id IS NOT NULL THEN
            SELECT f.public_form_key, f.mode, f.enabled AND w.active
            INTO v_public_key, v_mode, v_open
            FROM forms AS f JOIN workspaces AS w ON w.workspace_id = f.workspace_id
            WHERE f.form_id = p_check_form_id;
            IF NOT FOUND
                    OR (p_check_public_key IS NOT NULL AND v_public_key <> p_check_public_key)
                    THEN
                outcome := 'form_not_found';
                RETURN;
            END IF;
            IF p_check_public_key IS NOT NULL AND v_mode <> 'public' THEN
                outcome := 'unauthorized';
                RETURN;
            END IF;
            IF NOT v_open THEN
                outcome := 'form_disabled';
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
                -- Held by a live record: nothing was written, it is the answer.
                SELECT i.fingerprint, i.submission_id, i.created_at
                INTO held_fingerprint, held_submission_id, held_created_at
                FROM idempotency AS i
                WHERE i.scope = p_idem_scope AND i.key = p_idem_key;
                IF FOUND THEN
                    outcome := 'idempotency_taken';
                    RETURN;
                END IF;
                -- The holder was deleted in between (a purge): the key is free again.
            END LOOP;
        END IF;

        INSERT INTO honeypot_hits AS h (form_id, day, shard, count)
        VALUES (p_form_id, p_day, mod(pg_backend_pid(), 32), 1)
        ON CONFLICT (form_id, day, shard) DO UPDATE SET count = h.count + 1;
        outcome := 'committed';
    END
    $function$
;
