-- repeatable/intake_commit: a submission's commit (step 12) in one statement, one round
-- trip, one transaction. The live version, applied after the numbered migrations whenever
-- what it sends changes (README.md): a change to the commit is an edit of this file, not
-- a new migration. Its earlier versions are in the history of this file and of the
-- numbered migrations that made it before (0001, 0004, 0006, 0008, 0024).
--
-- Its steps, in order. A refusal leaves nothing written: what it counted is given back.
-- 1. The FormCheck: steps 1 and 2 may be answered from a cache (adapters/form_cache.py);
--    whether anything is stored is decided here, on the rows as they are now. The form
--    and its workspace are read, not locked: a change committed meanwhile is ordered
--    after the commit.
-- 2. A live record holding the idempotency key answers before anything else, even when
--    the month's quota is spent.
-- 3. The quota, spread over c_shards (32) rows of the month (monthly_usage_shards; the
--    view monthly_usage adds them up), so that commits flush together rather than one a
--    flush. Far from the ceiling a commit counts one on any shard no other commit holds,
--    then reads the total: at most one commit is in flight per shard, so if the total it
--    sees (its own included) leaves room for one more on every other shard, no
--    interleaving can pass the ceiling. Otherwise, and for a month whose shards are not
--    made yet, it counts exactly: one commit at a time (an advisory lock), holding every
--    shard of the month. A commit that finds itself too close only after counting gives
--    its count back and answers 'quota_exact': the caller calls again with p_quota_exact,
--    as it cannot take every shard while holding one (two such commits would wait on
--    each other). When more commits run at once than there are shards, one waits for a
--    shard, holding none meanwhile. N concurrent commits against R remaining commit
--    exactly min(N, R).
-- 4. The workspace's storage (p_storage_bytes, the files' total; p_storage_ceiling, NULL
--    for none): one row per workspace, updated only while the total stays within the
--    ceiling, so that concurrent commits with files count one after another and never
--    pass it. A commit without files does not touch it.
-- 5. The key's record, claimed by the unique constraint, not by the check of step 2: a
--    concurrent claim waits for the first one's transaction, then sees its row; an
--    expired record is replaced in the same upsert. A key taken since step 2 gives back
--    the count and the bytes, and its holder is the answer.
-- 6. The submission's row and its outbox event. The relay's wake-up is sent by the
--    serving process after its commits (relay_notifier.py), not here.
-- A refusal never raises: an error would end the transaction, but would also be logged
-- by the server for every refused submission, and a BEGIN ... EXCEPTION block would cost
-- a subtransaction per commit.
--
-- p_search_text: the data's text values, one per line, as the server process read them
-- (domain/model.py's texts_of); lowered here as a search is, so both fold case by the
-- database's rules. NULL (a server of an earlier version): 0026's trigger computes it.
-- An accepted row is charged to the month of its created_at here, as 0012's trigger
-- would charge it, which then costs the commit its WHEN test alone. The arguments added
-- since the first version default to what a server of the release before sends, so that
-- it still finds the function while the next one is deployed.

-- Every signature the released migrations made, dropped so that the live one does not
-- stand beside an earlier one (a call naming only the earlier arguments would match
-- both): a database migrated from any release ends with the live one alone.
    DROP FUNCTION IF EXISTS
        intake_commit(  -- 0001's
            text, text, text, text, json, text, text, double precision, text, timestamptz,
            text, text, text, text, text, json, timestamptz, text, text, text, text,
            timestamptz, timestamptz, text, text, bigint
        ),
        intake_commit(  -- 0004's
            text, text, text, text, json, text, text, double precision, text, timestamptz,
            text, text, text, text, text, json, timestamptz, text, text, text, text,
            timestamptz, timestamptz, text, text, bigint, text, text, boolean
        ),
        intake_commit(  -- 0006's
            text, text, text, text, json, text, text, double precision, text, timestamptz,
            text, text, text, text, text, json, timestamptz, text, text, text, text,
            timestamptz, timestamptz, text, text, bigint, text, text, boolean, jsonb
        ),
        intake_commit(  -- 0008's
            text, text, text, text, json, text, text, double precision, text, timestamptz,
            text, text, text, text, text, json, timestamptz, text, text, text, text,
            timestamptz, timestamptz, text, text, bigint, text, text, boolean, jsonb, bigint,
            bigint
        ),
        intake_commit(  -- 0024's
            text, text, text, text, json, text, text, double precision, text, timestamptz,
            text, text, text, text, text, json, timestamptz, text, text, text, text,
            timestamptz, timestamptz, text, text, bigint, text, text, boolean, jsonb, bigint,
            bigint, text
        )
;

    CREATE OR REPLACE FUNCTION intake_commit(
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
        p_check_form_id text DEFAULT NULL,
        p_check_public_key text DEFAULT NULL,
        p_quota_exact boolean DEFAULT true,
        p_files jsonb DEFAULT '[]',
        p_storage_bytes bigint DEFAULT NULL,
        p_storage_ceiling bigint DEFAULT NULL,
        p_spam_reasons text DEFAULT '[]',
        p_search_text text DEFAULT NULL,
        OUT outcome text,
        OUT held_fingerprint text,
        OUT held_submission_id text,
        OUT held_created_at timestamptz
    )
    LANGUAGE plpgsql
    AS $function$
    DECLARE
        c_shards CONSTANT integer := 32;
        v_public_key text;
        v_mode text;
        v_open boolean;
        v_shard integer;
        v_used bigint;
    BEGIN
        IF p_check_form_id IS NOT NULL THEN
            SELECT f.public_form_key, f.mode, f.enabled AND w.active
            INTO v_public_key, v_mode, v_open
            FROM forms AS f JOIN workspaces AS w ON w.workspace_id = f.workspace_id
            WHERE f.form_id = p_check_form_id;
            -- The order of steps 1 and 2: a rotated key is not found, a form turned
            -- protected is refused on the public route, then a paused form or a
            -- suspended workspace.
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
            IF p_quota_ceiling <= 0 THEN
                outcome := 'quota_reached';
                RETURN;
            END IF;
            IF NOT coalesce(p_quota_exact, true) THEN
                -- Any shard of the month that no other commit holds (none waits here).
                -- Counted by a statement of its own: its snapshot sees the version just
                -- locked, which may be newer than this statement's.
                SELECT shard INTO v_shard FROM monthly_usage_shards
                WHERE workspace_id = p_quota_workspace_id AND period = p_quota_period
                ORDER BY shard
                LIMIT 1
                FOR UPDATE SKIP LOCKED;
                IF NOT FOUND THEN
                    -- Every shard is held (more commits at once than shards): wait for
                    -- one, holding none meanwhile. Not found: not made yet.
                    SELECT shard INTO v_shard FROM monthly_usage_shards
                    WHERE workspace_id = p_quota_workspace_id AND period = p_quota_period
                        AND shard = mod(pg_backend_pid(), c_shards)
                    FOR UPDATE;
                END IF;
                IF FOUND THEN
                    UPDATE monthly_usage_shards SET count = count + 1
                    WHERE workspace_id = p_quota_workspace_id AND period = p_quota_period
                        AND shard = v_shard;
                    SELECT sum(count) INTO v_used FROM monthly_usage_shards
                    WHERE workspace_id = p_quota_workspace_id AND period = p_quota_period;
                    IF v_used + c_shards - 1 > p_quota_ceiling THEN
                        -- Too close to count beside others: give it back, count exactly.
                        UPDATE monthly_usage_shards SET count = count - 1
                        WHERE workspace_id = p_quota_workspace_id
                            AND period = p_quota_period AND shard = v_shard;
                        outcome := 'quota_exact';
                        RETURN;
                    END IF;
                END IF;
            END IF;
            IF v_shard IS NULL THEN
                -- Exactly: one such commit at a time, every shard of the month held.
                PERFORM pg_advisory_xact_lock(
                    hashtextextended(p_quota_workspace_id || ' ' || p_quota_period, 0)
                );
                INSERT INTO monthly_usage_shards (workspace_id, period, shard, count)
                SELECT p_quota_workspace_id, p_quota_period, s, 0
                FROM generate_series(0, c_shards - 1) AS s
                ON CONFLICT DO NOTHING;
                SELECT sum(count) INTO v_used FROM (
                    SELECT count FROM monthly_usage_shards
                    WHERE workspace_id = p_quota_workspace_id AND period = p_quota_period
                    ORDER BY shard
                    FOR UPDATE
                ) AS held;
                IF v_used >= p_quota_ceiling THEN
                    outcome := 'quota_reached';
                    RETURN;
                END IF;
                v_shard := 0;
                UPDATE monthly_usage_shards SET count = count + 1
                WHERE workspace_id = p_quota_workspace_id AND period = p_quota_period
                    AND shard = v_shard;
            END IF;
        END IF;

        IF coalesce(p_storage_bytes, 0) > 0 THEN
            INSERT INTO workspace_storage AS s (workspace_id, bytes)
            SELECT p_workspace_id, p_storage_bytes
            WHERE p_storage_ceiling IS NULL OR p_storage_bytes <= p_storage_ceiling
            ON CONFLICT (workspace_id) DO UPDATE SET bytes = s.bytes + excluded.bytes
            WHERE p_storage_ceiling IS NULL OR s.bytes + excluded.bytes <= p_storage_ceiling;
            IF NOT FOUND THEN
                IF v_shard IS NOT NULL THEN
                    UPDATE monthly_usage_shards SET count = count - 1
                    WHERE workspace_id = p_quota_workspace_id
                        AND period = p_quota_period AND shard = v_shard;
                END IF;
                outcome := 'storage_full';
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
                    IF v_shard IS NOT NULL THEN
                        -- The shard is still held by this transaction: no one has seen
                        -- the count, and it goes back to what it was.
                        UPDATE monthly_usage_shards SET count = count - 1
                        WHERE workspace_id = p_quota_workspace_id
                            AND period = p_quota_period AND shard = v_shard;
                    END IF;
                    IF coalesce(p_storage_bytes, 0) > 0 THEN
                        UPDATE workspace_storage SET bytes = bytes - p_storage_bytes
                        WHERE workspace_id = p_workspace_id;
                    END IF;
                    outcome := 'idempotency_taken';
                    RETURN;
                END IF;
                -- The holder was deleted in between (a purge): the key is free again.
            END LOOP;
        END IF;

        INSERT INTO submissions (
            submission_id, form_id, workspace_id, status, data, subject, reply_to,
            spam_score, client_ip, created_at, files, spam_reasons, search_text,
            charged_period
        ) VALUES (
            p_submission_id, p_form_id, p_workspace_id, p_status, p_data, p_subject,
            p_reply_to, p_spam_score, p_client_ip, p_created_at, coalesce(p_files, '[]'),
            coalesce(p_spam_reasons, '[]'), lower(p_search_text),
            CASE WHEN p_status = 'accepted'
                THEN to_char(p_created_at AT TIME ZONE 'UTC', 'YYYY-MM')
            END
        );
        -- Due at once: the relay's first attempt needs no wait.
        INSERT INTO outbox (
            event_id, event_type, submission_id, form_id, workspace_id, payload,
            created_at, next_attempt_at
        ) VALUES (
            p_event_id, p_event_type, p_event_submission_id, p_event_form_id,
            p_event_workspace_id, p_payload, p_event_created_at, p_event_created_at
        );
        outcome := 'committed';
    END
    $function$
;
