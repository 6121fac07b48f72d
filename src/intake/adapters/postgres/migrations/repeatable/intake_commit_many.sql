-- repeatable/intake_commit_many: a group of commits in one transaction, set-based. The
-- live version, applied after the numbered migrations whenever what it sends changes
-- (README.md).
--
-- p_items: a JSON array of intake_commit's arguments (without their p_ prefix), every
-- value as its text or null, as commit_batch.py sends them. The group commit sends it
-- only commits that carry no idempotency key, no file to count against the storage
-- ceiling and no exact quota: those take intake_commit one by one. Each answers what
-- intake_commit would have answered in the array's order, one row each, in that order:
--
-- - the FormCheck of every item, in one statement;
-- - the quota, once per workspace's month: one shard locked as intake_commit locks it,
--   the month's count read once, each item in turn counted beside others under its
--   ceiling (`quota_exact` for those too near it, as intake_commit answers them), and
--   the shard raised by the count taken. A month whose shards are not made yet takes
--   intake_commit for each of its items, which counts exactly and makes them;
-- - one INSERT of every committed item's row, one of their outbox rows.
--
-- Statements a group rather than statements a commit: each statement a PL/pgSQL
-- function runs costs its start and end and its locks, and one row of the shards a
-- group rather than one version a commit.
    CREATE OR REPLACE FUNCTION intake_commit_many(p_items jsonb)
    RETURNS TABLE (
        outcome text,
        held_fingerprint text,
        held_submission_id text,
        held_created_at timestamptz
    )
    LANGUAGE plpgsql
    AS $function$
    DECLARE
        c_shards CONSTANT integer := 32;
        v_outcome text[];
        v_held_fingerprint text[] := '{}';
        v_held_submission_id text[] := '{}';
        v_held_created_at timestamptz[] := '{}';
        v_month record;
        v_alone record;
        v_shard integer;
        v_used bigint;
        v_taken bigint;
        v_k integer;
        v_i integer;
        v_p jsonb;
    BEGIN
        -- Steps 1 and 2, in intake_commit's order, then a ceiling of none.
        SELECT array_agg(
            CASE
                WHEN a.p ->> 'check_form_id' IS NOT NULL AND (
                    f.form_id IS NULL OR (
                        a.p ->> 'check_public_key' IS NOT NULL
                        AND f.public_form_key <> a.p ->> 'check_public_key'
                    )
                ) THEN 'form_not_found'
                WHEN a.p ->> 'check_form_id' IS NOT NULL
                    AND a.p ->> 'check_public_key' IS NOT NULL AND f.mode <> 'public'
                    THEN 'unauthorized'
                WHEN a.p ->> 'check_form_id' IS NOT NULL AND NOT f.open
                    THEN 'form_disabled'
                WHEN a.p ->> 'quota_workspace_id' IS NOT NULL
                    AND (a.p ->> 'quota_ceiling')::bigint <= 0
                    THEN 'quota_reached'
            END
            ORDER BY a.i
        )
        INTO v_outcome
        FROM jsonb_array_elements(p_items) WITH ORDINALITY AS a(p, i)
        LEFT JOIN (
            SELECT f.form_id, f.public_form_key, f.mode, f.enabled AND w.active AS open
            FROM forms AS f JOIN workspaces AS w ON w.workspace_id = f.workspace_id
        ) AS f ON f.form_id = a.p ->> 'check_form_id';

        -- The months in the order the group commit locks them (commit_batch.py).
        FOR v_month IN
            SELECT a.p ->> 'quota_workspace_id' AS workspace_id,
                a.p ->> 'quota_period' AS period,
                array_agg(a.i::integer ORDER BY a.i) AS items,
                array_agg((a.p ->> 'quota_ceiling')::bigint ORDER BY a.i) AS ceilings
            FROM jsonb_array_elements(p_items) WITH ORDINALITY AS a(p, i)
            WHERE a.p ->> 'quota_workspace_id' IS NOT NULL
                AND v_outcome[a.i::integer] IS NULL
            GROUP BY a.p ->> 'quota_workspace_id', a.p ->> 'quota_period'
            ORDER BY (a.p ->> 'quota_workspace_id') COLLATE "C",
                (a.p ->> 'quota_period') COLLATE "C"
        LOOP
            v_shard := NULL;
            SELECT shard INTO v_shard FROM monthly_usage_shards
            WHERE workspace_id = v_month.workspace_id AND period = v_month.period
            ORDER BY shard
            LIMIT 1
            FOR UPDATE SKIP LOCKED;
            IF NOT FOUND THEN
                SELECT shard INTO v_shard FROM monthly_usage_shards
                WHERE workspace_id = v_month.workspace_id AND period = v_month.period
                    AND shard = mod(pg_backend_pid(), c_shards)
                FOR UPDATE;
            END IF;
            IF v_shard IS NULL THEN
                -- Not made yet: each item as if alone, which writes its own rows.
                FOREACH v_i IN ARRAY v_month.items LOOP
                    v_p := p_items -> (v_i - 1);
                    SELECT c.* INTO v_alone FROM intake_commit(
                        p_submission_id => v_p ->> 'submission_id',
                        p_form_id => v_p ->> 'form_id',
                        p_workspace_id => v_p ->> 'workspace_id',
                        p_status => v_p ->> 'status',
                        p_data => (v_p ->> 'data')::json,
                        p_subject => v_p ->> 'subject',
                        p_reply_to => v_p ->> 'reply_to',
                        p_spam_score => (v_p ->> 'spam_score')::double precision,
                        p_client_ip => v_p ->> 'client_ip',
                        p_created_at => (v_p ->> 'created_at')::timestamptz,
                        p_event_id => v_p ->> 'event_id',
                        p_event_type => v_p ->> 'event_type',
                        p_event_submission_id => v_p ->> 'event_submission_id',
                        p_event_form_id => v_p ->> 'event_form_id',
                        p_event_workspace_id => v_p ->> 'event_workspace_id',
                        p_payload => (v_p ->> 'payload')::json,
                        p_event_created_at => (v_p ->> 'event_created_at')::timestamptz,
                        p_idem_scope => v_p ->> 'idem_scope',
                        p_idem_key => v_p ->> 'idem_key',
                        p_idem_fingerprint => v_p ->> 'idem_fingerprint',
                        p_idem_submission_id => v_p ->> 'idem_submission_id',
                        p_idem_created_at => (v_p ->> 'idem_created_at')::timestamptz,
                        p_idem_expired_at => (v_p ->> 'idem_expired_at')::timestamptz,
                        p_quota_workspace_id => v_p ->> 'quota_workspace_id',
                        p_quota_period => v_p ->> 'quota_period',
                        p_quota_ceiling => (v_p ->> 'quota_ceiling')::bigint,
                        p_check_form_id => v_p ->> 'check_form_id',
                        p_check_public_key => v_p ->> 'check_public_key',
                        p_quota_exact => (v_p ->> 'quota_exact')::boolean,
                        p_files => (v_p ->> 'files')::jsonb,
                        p_storage_bytes => (v_p ->> 'storage_bytes')::bigint,
                        p_storage_ceiling => (v_p ->> 'storage_ceiling')::bigint,
                        p_spam_reasons => v_p ->> 'spam_reasons',
                        p_search_text => v_p ->> 'search_text'
                    ) AS c;
                    v_outcome[v_i] := v_alone.outcome;
                    v_held_fingerprint[v_i] := v_alone.held_fingerprint;
                    v_held_submission_id[v_i] := v_alone.held_submission_id;
                    v_held_created_at[v_i] := v_alone.held_created_at;
                END LOOP;
                CONTINUE;
            END IF;
            -- The month's count as intake_commit reads it after its own: a statement
            -- of its own, whose snapshot sees the version just locked.
            SELECT sum(count) INTO v_used FROM monthly_usage_shards
            WHERE workspace_id = v_month.workspace_id AND period = v_month.period;
            v_taken := 0;
            FOR v_k IN 1 .. cardinality(v_month.items) LOOP
                IF v_used + v_taken + c_shards > v_month.ceilings[v_k] THEN
                    -- Too close to count beside others: counted exactly, alone.
                    v_outcome[v_month.items[v_k]] := 'quota_exact';
                ELSE
                    v_taken := v_taken + 1;
                END IF;
            END LOOP;
            IF v_taken > 0 THEN
                UPDATE monthly_usage_shards SET count = count + v_taken
                WHERE workspace_id = v_month.workspace_id AND period = v_month.period
                    AND shard = v_shard;
            END IF;
        END LOOP;

        -- Every item not refused (nor written above): its row, charged as intake_commit
        -- charges it, and its outbox event, due at once.
        INSERT INTO submissions (
            submission_id, form_id, workspace_id, status, data, subject, reply_to,
            spam_score, client_ip, created_at, files, spam_reasons, search_text,
            charged_period
        )
        SELECT s.submission_id, s.form_id, s.workspace_id, s.status, s.data, s.subject,
            s.reply_to, s.spam_score, s.client_ip, s.created_at, s.files, s.spam_reasons,
            lower(s.search_text),
            CASE WHEN s.status = 'accepted'
                THEN to_char(s.created_at AT TIME ZONE 'UTC', 'YYYY-MM')
            END
        FROM (
            SELECT a.i, a.p ->> 'submission_id' AS submission_id,
                a.p ->> 'form_id' AS form_id, a.p ->> 'workspace_id' AS workspace_id,
                a.p ->> 'status' AS status, (a.p ->> 'data')::json AS data,
                a.p ->> 'subject' AS subject, a.p ->> 'reply_to' AS reply_to,
                (a.p ->> 'spam_score')::double precision AS spam_score,
                a.p ->> 'client_ip' AS client_ip,
                (a.p ->> 'created_at')::timestamptz AS created_at,
                coalesce((a.p ->> 'files')::jsonb, '[]') AS files,
                coalesce(a.p ->> 'spam_reasons', '[]') AS spam_reasons,
                a.p ->> 'search_text' AS search_text
            FROM jsonb_array_elements(p_items) WITH ORDINALITY AS a(p, i)
            WHERE v_outcome[a.i::integer] IS NULL
        ) AS s
        ORDER BY s.i;
        INSERT INTO outbox (
            event_id, event_type, submission_id, form_id, workspace_id, payload,
            created_at, next_attempt_at
        )
        SELECT a.p ->> 'event_id', a.p ->> 'event_type', a.p ->> 'event_submission_id',
            a.p ->> 'event_form_id', a.p ->> 'event_workspace_id',
            (a.p ->> 'payload')::json, (a.p ->> 'event_created_at')::timestamptz,
            (a.p ->> 'event_created_at')::timestamptz
        FROM jsonb_array_elements(p_items) WITH ORDINALITY AS a(p, i)
        WHERE v_outcome[a.i::integer] IS NULL
        ORDER BY a.i;

        RETURN QUERY
        SELECT coalesce(v_outcome[n], 'committed'), v_held_fingerprint[n],
            v_held_submission_id[n], v_held_created_at[n]
        FROM generate_series(1, jsonb_array_length(p_items)) AS n
        ORDER BY n;
    END
    $function$
;
