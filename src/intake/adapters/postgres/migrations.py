"""The schema, as numbered migrations. A migration, once released, is never edited: a
change is a new migration.

`migrate` applies what is pending in one transaction that first takes an advisory lock,
so two processes running `intake migrate` at once apply each migration once: the second
waits for the first, then finds nothing left to do. PostgreSQL's DDL is transactional,
so a failed migration leaves the schema as it was.

The tables and indexes are the SQLite adapter's, in PostgreSQL's types. Identifiers and
keys are text COLLATE "C": they sort by code point, as in Python and SQLite, which
keeps the time-sortable ids in time order, and compare without locale rules.
"""

from __future__ import annotations

from attrs import frozen
from psycopg import AsyncConnection, errors
from psycopg.rows import DictRow


@frozen
class Migration:
    version: int
    name: str
    statements: tuple[str, ...]


# int.from_bytes(b"intake:m"): any constant will do, as long as it stays the same.
_LOCK = 7597137583183051373

_CREATE_LEDGER = """
    CREATE TABLE IF NOT EXISTS schema_migrations (
        version    integer PRIMARY KEY,
        name       text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
    )
"""

# The commit of step 12 in one statement, one round trip, one transaction (see
# PostgresSubmissions.commit). Its order:
# 1. a live record holding the key answers the request before anything else, even when
#    the month's quota is spent, and nothing is written;
# 2. the quota counts one only while below the ceiling (the upsert locks the month's row
#    and re-reads it, so N concurrent commits against R remaining commit min(N, R));
#    at the ceiling nothing was written yet;
# 3. the key is claimed by the unique constraint, not by the check of step 1: a
#    concurrent claim waits for the first one's transaction and then sees its row. An
#    expired record is replaced in the same upsert. If another commit took the key
#    since step 1, the count of step 2 is given back and its record is the answer;
# 4. the submission, its outbox row, and a wake-up for the relay (delivered at commit).
# A refusal never raises: an error would end the transaction, but would also be logged
# by the server for every refused submission, and a BEGIN ... EXCEPTION block would
# cost a subtransaction per commit. Step 3's give-back is the only compensation.
_COMMIT_FUNCTION = """
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
"""

# 0004: the commit without its two serial points, and confirming the form.
#
# Every commit used to take two locks that it held through its WAL flush: the month's
# single usage row, and (for pg_notify) the database's notification queue. So commits
# flushed one at a time, never several per flush, and a workspace took no more commits
# a second than the disk took flushes. Now:
#
# - The month's count is spread over QUOTA_SHARDS rows (monthly_usage_shards; the view
#   monthly_usage adds them up for readers). Far from the ceiling, a commit counts one
#   on any shard no other commit holds, then reads the total: at most one commit is in
#   flight per shard, so if the total it sees (its own count included) leaves room for
#   one more on every other shard, no interleaving can pass the ceiling. Otherwise, and
#   for a month whose shards are not made yet, it counts exactly: one commit at a time
#   (an advisory lock), holding every shard of the month, so none is in flight beside
#   it. A commit that finds itself too close only after counting gives its count back
#   and answers 'quota_exact': the caller calls again with p_quota_exact, as it cannot
#   take every shard while holding one (two such commits would wait on each other).
#   When more commits run at once than there are shards, one waits for a shard, holding
#   none meanwhile. N concurrent commits against R remaining still commit exactly
#   min(N, R).
# - The relay's wake-up is no longer sent by the commit: each serving process sends one
#   after its commits, at most every few milliseconds (PostgresSubmissions' waker).
#
# And first, the form (FormCheck): steps 1 and 2 may be answered from a cache
# (adapters/form_cache.py); whether anything is stored is decided here, on the
# rows as they are now. The form and its workspace are read, not locked: a change
# committed while this runs is ordered after it.
#
# The new arguments default to what a server of the previous version expects (no form
# check, the exact count), so that it still finds the function during a rolling
# deployment; the relay finds its commits by its poll until it is replaced.
QUOTA_SHARDS = 32

_COMMIT_FUNCTION_SHARDED = """
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
        p_check_form_id text DEFAULT NULL,
        p_check_public_key text DEFAULT NULL,
        p_quota_exact boolean DEFAULT true,
        OUT outcome text,
        OUT held_fingerprint text,
        OUT held_submission_id text,
        OUT held_created_at timestamptz
    )
    LANGUAGE plpgsql
    AS $function$
    DECLARE
        c_shards CONSTANT integer := %(shards)s;
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
        outcome := 'committed';
    END
    $function$
""".replace("%(shards)s", str(QUOTA_SHARDS))

# 0001's signature, to drop it: with the new one beside it, a call naming only the old
# arguments would match both.
_DROP_COMMIT_FUNCTION = """
    DROP FUNCTION intake_commit(
        text, text, text, text, json, text, text, double precision, text, timestamptz,
        text, text, text, text, text, json, timestamptz, text, text, text, text,
        timestamptz, timestamptz, text, text, bigint
    )
"""

# Room on the page keeps the counts' updates HOT (no index entries to write).
_CREATE_USAGE_SHARDS = """
    CREATE TABLE monthly_usage_shards (
        workspace_id text COLLATE "C" NOT NULL REFERENCES workspaces (workspace_id),
        period       text COLLATE "C" NOT NULL,  -- YYYY-MM, UTC
        shard        integer NOT NULL,
        count        integer NOT NULL CHECK (count >= 0),
        PRIMARY KEY (workspace_id, period, shard)
    ) WITH (fillfactor = 50)
"""

# A month with nothing counted has no row, as before.
_CREATE_USAGE_VIEW = """
    CREATE VIEW monthly_usage AS
    SELECT workspace_id, period, sum(count)::integer AS count
    FROM monthly_usage_shards
    GROUP BY workspace_id, period
    HAVING sum(count) > 0
"""


def _replace_once(text: str, old: str, new: str) -> str:
    """`text` with `old`, which it holds exactly once, replaced: how a migration states
    its function as an earlier one's plus a change."""
    if text.count(old) != 1:
        raise AssertionError(f"expected one {old!r}")
    return text.replace(old, new)


# 0006: the commit writes the submission's files too (p_files, a JSON array of
# StoredFile.to_json(), into the new column), in the same transaction as the rest: the
# row links its blobs. Otherwise 0004's, word for word. p_files defaults to none, so
# that a server of the previous version still finds the function during a rolling
# deployment.
_COMMIT_FUNCTION_FILES = _COMMIT_FUNCTION_SHARDED
for _old, _new in (
    (
        "p_quota_exact boolean DEFAULT true,\n",
        "p_quota_exact boolean DEFAULT true,\n" + " " * 8 + "p_files jsonb DEFAULT '[]',\n",
    ),
    ("spam_score, client_ip, created_at\n", "spam_score, client_ip, created_at, files\n"),
    ("p_client_ip, p_created_at\n", "p_client_ip, p_created_at, coalesce(p_files, '[]')\n"),
):
    _COMMIT_FUNCTION_FILES = _replace_once(_COMMIT_FUNCTION_FILES, _old, _new)

# 0004's signature, to drop it before making 0006's (as 0004 dropped 0001's).
_DROP_COMMIT_FUNCTION_SHARDED = """
    DROP FUNCTION intake_commit(
        text, text, text, text, json, text, text, double precision, text, timestamptz,
        text, text, text, text, text, json, timestamptz, text, text, text, text,
        timestamptz, timestamptz, text, text, bigint, text, text, boolean
    )
"""

# 0007: a filled honeypot's write (PostgresSubmissions.record_honeypot), in one round
# trip and one transaction with a WAL flush, as a commit is, so that its answer takes
# as long: the FormCheck and the key as intake_commit has them, then one more to the
# form's count of the day. The count is spread over shards by connection, as the quota
# is (0004): a flood of bots on one form never queues its commits on one row, which
# would make their answers slower than real ones.
_HONEYPOT_SHARDS = 32
_RECORD_HONEYPOT_FUNCTION = """
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
        VALUES (p_form_id, p_day, mod(pg_backend_pid(), %(shards)s), 1)
        ON CONFLICT (form_id, day, shard) DO UPDATE SET count = h.count + 1;
        outcome := 'committed';
    END
    $function$
""".replace("%(shards)s", str(_HONEYPOT_SHARDS))

# 0008: the commit counts the submission's files against its workspace's storage
# ceiling (p_storage_bytes, their total; p_storage_ceiling, NULL for none), whatever its
# status, after the quota and before the key is claimed: one row per workspace, updated
# only while the total stays within the ceiling, so that concurrent commits with files
# count one after another and never pass it (a commit without files does not touch it).
# Past the ceiling the month's count is given back and nothing is written; a key lost
# afterwards gives the bytes back as it gives back the count. Otherwise 0006's, word for
# word; the new arguments default to a server of the previous version's call.
_STORAGE_CHARGE = """
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
"""
_STORAGE_GIVE_BACK = """
                    END IF;
                    IF coalesce(p_storage_bytes, 0) > 0 THEN
                        UPDATE workspace_storage SET bytes = bytes - p_storage_bytes
                        WHERE workspace_id = p_workspace_id;
                    END IF;
                    outcome := 'idempotency_taken';
"""
_COMMIT_FUNCTION_STORAGE = _COMMIT_FUNCTION_FILES
for _old, _new in (
    (
        "p_files jsonb DEFAULT '[]',\n",
        "p_files jsonb DEFAULT '[]',\n"
        + " " * 8
        + "p_storage_bytes bigint DEFAULT NULL,\n"
        + " " * 8
        + "p_storage_ceiling bigint DEFAULT NULL,\n",
    ),
    ("\n        IF p_idem_scope IS NOT NULL THEN\n            LOOP\n", _STORAGE_CHARGE),
    (
        "\n                    END IF;\n                    outcome := 'idempotency_taken';\n",
        _STORAGE_GIVE_BACK,
    ),
):
    _COMMIT_FUNCTION_STORAGE = _replace_once(_COMMIT_FUNCTION_STORAGE, _old, _new)

# 0006's signature, to drop it before making 0008's.
_DROP_COMMIT_FUNCTION_FILES = """
    DROP FUNCTION intake_commit(
        text, text, text, text, json, text, text, double precision, text, timestamptz,
        text, text, text, text, text, json, timestamptz, text, text, text, text,
        timestamptz, timestamptz, text, text, bigint, text, text, boolean, jsonb
    )
"""

MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "0001_initial",
        (
            """
            CREATE TABLE workspaces (
                workspace_id  text COLLATE "C" PRIMARY KEY,
                name          text NOT NULL,
                plan          text NOT NULL,
                monthly_limit integer,
                active        boolean NOT NULL,
                created_at    timestamptz
            )
            """,
            # Updated by every accepted submission: room on the page keeps the updates
            # HOT (no index entries to write).
            """
            CREATE TABLE monthly_usage (
                workspace_id text COLLATE "C" NOT NULL REFERENCES workspaces (workspace_id),
                period       text COLLATE "C" NOT NULL,  -- YYYY-MM, UTC
                count        integer NOT NULL CHECK (count >= 0),
                PRIMARY KEY (workspace_id, period)
            ) WITH (fillfactor = 50)
            """,
            """
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
            """,
            # Every public submission starts with this lookup.
            "CREATE UNIQUE INDEX forms_public_form_key ON forms (public_form_key)",
            "CREATE INDEX forms_workspace ON forms (workspace_id, form_id)",
            """
            CREATE TABLE api_keys (
                key_id       text COLLATE "C" PRIMARY KEY,
                workspace_id text COLLATE "C" NOT NULL REFERENCES workspaces (workspace_id),
                key_hash     bytea NOT NULL UNIQUE,
                prefix       text NOT NULL,
                created_at   timestamptz NOT NULL,
                revoked_at   timestamptz
            )
            """,
            "CREATE INDEX api_keys_workspace ON api_keys (workspace_id, created_at, key_id)",
            # data is json, not jsonb: it keeps the fields' order and numbers as sent.
            """
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
            """,
            "CREATE INDEX submissions_form ON submissions (form_id, submission_id)",
            """
            CREATE INDEX submissions_form_status
                ON submissions (form_id, status, submission_id)
            """,
            # No foreign keys: the event log outlives whatever it tells about.
            """
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
            """,
            # The relay's query: what is due and neither delivered nor given up on.
            """
            CREATE INDEX outbox_unpublished ON outbox (next_attempt_at, event_id)
                WHERE published_at IS NULL AND dead_at IS NULL
            """,
            """
            CREATE TABLE idempotency (
                scope         text COLLATE "C" NOT NULL,
                key           text COLLATE "C" NOT NULL,
                fingerprint   text NOT NULL,
                submission_id text COLLATE "C" NOT NULL,
                created_at    timestamptz NOT NULL,
                PRIMARY KEY (scope, key)
            )
            """,
            # For purging expired keys.
            "CREATE INDEX idempotency_created ON idempotency (created_at)",
            _COMMIT_FUNCTION,
        ),
    ),
    Migration(
        2,
        "0002_outbox_published",
        (
            # For purging published rows: only those, so a commit (its row unpublished)
            # writes no entry, and the purge never reads the rest. Not CONCURRENTLY,
            # which cannot run in the migration's transaction: commits wait while the
            # build reads the outbox once (seconds for millions of rows).
            """
            CREATE INDEX outbox_published ON outbox (published_at)
                WHERE published_at IS NOT NULL
            """,
        ),
    ),
    Migration(
        3,
        "0003_delivery",
        (
            # A form's destinations go with the form.
            """
            CREATE TABLE webhook_endpoints (
                endpoint_id     text COLLATE "C" PRIMARY KEY,
                form_id         text COLLATE "C" NOT NULL
                                REFERENCES forms (form_id) ON DELETE CASCADE,
                url             text NOT NULL,
                secret          text NOT NULL,
                include_flagged boolean NOT NULL,
                created_at      timestamptz,
                disabled_at     timestamptz
            )
            """,
            # A form's endpoints, for the fan-out and the listing (in its order).
            """
            CREATE INDEX webhook_endpoints_form
                ON webhook_endpoints (form_id, created_at NULLS FIRST, endpoint_id)
            """,
            # The unique index serves the fan-out's lookup by form as well.
            """
            CREATE TABLE notification_recipients (
                recipient_id text COLLATE "C" PRIMARY KEY,
                form_id      text COLLATE "C" NOT NULL
                             REFERENCES forms (form_id) ON DELETE CASCADE,
                email        text NOT NULL,
                created_at   timestamptz,
                UNIQUE (form_id, email)
            )
            """,
            # One event on its way to one destination. The unique triple makes the
            # fan-out idempotent, and its index serves the lookups by event (retry,
            # the purge's check, the cascade). No foreign key to the destination: a
            # removed endpoint leaves its deliveries as they were. Delivery state lives
            # here: the outbox's attempts, next_attempt_at, last_error and dead_at of
            # 0001 are left unused. Room on the page keeps a lease, which changes no
            # indexed column, a HOT update (no index entries to write).
            """
            CREATE TABLE deliveries (
                delivery_id     text COLLATE "C" PRIMARY KEY,
                event_id        text COLLATE "C" NOT NULL
                                REFERENCES outbox (event_id) ON DELETE CASCADE,
                kind            text COLLATE "C" NOT NULL
                                CHECK (kind IN ('webhook', 'email')),
                destination_id  text COLLATE "C" NOT NULL,
                state           text COLLATE "C" NOT NULL
                                CHECK (state IN ('pending', 'delivered', 'dead')),
                attempts        integer NOT NULL CHECK (attempts >= 0),
                next_attempt_at timestamptz,
                leased_until    timestamptz,
                last_error      text,
                delivered_at    timestamptz,
                dead_at         timestamptz,
                created_at      timestamptz NOT NULL,
                UNIQUE (event_id, kind, destination_id),
                CHECK ((state = 'pending') = (next_attempt_at IS NOT NULL))
            ) WITH (fillfactor = 80)
            """,
            # The relay's claim: pending deliveries, earliest due first. Partial, so the
            # delivered and dead (most rows, soon) cost it nothing. Said by
            # next_attempt_at, which is set exactly when pending (the CHECK above), not
            # by state: a query then asks one column, `next_attempt_at <= now`, and the
            # planner estimates its rows right (two correlated columns it would
            # multiply, and sort a large backlog rather than read it in order).
            """
            CREATE INDEX deliveries_due ON deliveries (next_attempt_at, delivery_id)
                WHERE next_attempt_at IS NOT NULL
            """,
            # `intake outbox list --dead`, newest first.
            """
            CREATE INDEX deliveries_dead ON deliveries (created_at, delivery_id)
                WHERE state = 'dead'
            """,
        ),
    ),
    Migration(
        4,
        "0004_commit_in_parallel",
        (
            _DROP_COMMIT_FUNCTION,
            _CREATE_USAGE_SHARDS,
            # What was counted so far goes to shard 0; the others are made by the next
            # commit of the month, which counts exactly.
            """
            INSERT INTO monthly_usage_shards (workspace_id, period, shard, count)
            SELECT workspace_id, period, 0, count FROM monthly_usage
            """,
            "DROP TABLE monthly_usage",
            _CREATE_USAGE_VIEW,
            _COMMIT_FUNCTION_SHARDED,
        ),
    ),
    Migration(
        5,
        "0005_form_changes",
        (
            # Every serving process keeps its form lookups until it hears of a change
            # (adapters/form_cache.py). Once per statement: one notification for a
            # statement that changes many rows, and the same payload within one
            # transaction is sent once. Only the rare admin changes pay for it: a
            # submission's commit writes neither table.
            """
            CREATE FUNCTION intake_forms_changed() RETURNS trigger
            LANGUAGE plpgsql AS $function$
            BEGIN
                PERFORM pg_notify('intake_forms', '');
                RETURN NULL;
            END
            $function$
            """,
            """
            CREATE TRIGGER forms_changed
                AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON forms
                FOR EACH STATEMENT EXECUTE FUNCTION intake_forms_changed()
            """,
            """
            CREATE TRIGGER workspaces_changed
                AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON workspaces
                FOR EACH STATEMENT EXECUTE FUNCTION intake_forms_changed()
            """,
        ),
    ),
    Migration(
        6,
        "0006_uploads",
        (
            # A form's upload policy, as a JSON object; NULL: uploads off, as for every
            # form made before. jsonb, as the form's other small values.
            "ALTER TABLE forms ADD COLUMN uploads jsonb",
            # A submission's files, a JSON array (StoredFile.to_json): the row links its
            # blobs. Existing rows have none. A constant default is kept in the catalog:
            # no row is rewritten, the table is locked only for the change itself.
            "ALTER TABLE submissions ADD COLUMN files jsonb NOT NULL DEFAULT '[]'::jsonb",
            _DROP_COMMIT_FUNCTION_SHARDED,
            _COMMIT_FUNCTION_FILES,
            # Secrets the processes share, made by the first that needs one (the key
            # that signs download links).
            """
            CREATE TABLE secrets (
                name       text COLLATE "C" PRIMARY KEY,
                value      bytea NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now()
            )
            """,
        ),
    ),
    Migration(
        7,
        "0007_honeypot_hits",
        (
            # A form's filled honeypots by day, in shards that readers add up. Room on
            # the page keeps the counts' updates HOT, as the quota's.
            """
            CREATE TABLE honeypot_hits (
                form_id text COLLATE "C" NOT NULL REFERENCES forms (form_id),
                day     text COLLATE "C" NOT NULL,  -- YYYY-MM-DD, UTC
                shard   integer NOT NULL,
                count   bigint NOT NULL CHECK (count > 0),
                PRIMARY KEY (form_id, day, shard)
            ) WITH (fillfactor = 50)
            """,
            _RECORD_HONEYPOT_FUNCTION,
        ),
    ),
    Migration(
        8,
        "0008_storage_ceiling",
        (
            # A workspace's own ceiling, over INTAKE_WORKSPACE_STORAGE_LIMIT; NULL: none.
            # Nullable without a default: no row is rewritten.
            "ALTER TABLE workspaces ADD COLUMN storage_limit bigint",
            # The bytes of files each workspace's stored submissions hold, whatever
            # their status. Room on the page keeps its updates HOT, as the quota's.
            """
            CREATE TABLE workspace_storage (
                workspace_id text COLLATE "C" PRIMARY KEY
                    REFERENCES workspaces (workspace_id),
                bytes        bigint NOT NULL CHECK (bytes >= 0)
            ) WITH (fillfactor = 50)
            """,
            # The files stored before, counted once.
            """
            INSERT INTO workspace_storage (workspace_id, bytes)
            SELECT s.workspace_id, sum((f.value ->> 'size')::bigint)
            FROM submissions AS s, jsonb_array_elements(s.files) AS f
            GROUP BY s.workspace_id
            """,
            # Spam retention's scan, oldest first: the flagged rows only, so that an
            # accepted submission's commit pays nothing for it.
            """
            CREATE INDEX submissions_flagged ON submissions (created_at, submission_id)
                WHERE status IN ('spam', 'unverified')
            """,
            # A submission's events, for spam retention's check and delete.
            "CREATE INDEX outbox_submission ON outbox (submission_id)",
            _DROP_COMMIT_FUNCTION_FILES,
            _COMMIT_FUNCTION_STORAGE,
        ),
    ),
)

LATEST_VERSION = MIGRATIONS[-1].version

# The tables the service writes, for tests that empty them; not schema_migrations.
TABLES = (
    "workspace_storage",
    "honeypot_hits",
    "secrets",
    "monthly_usage_shards",
    "deliveries",
    "notification_recipients",
    "webhook_endpoints",
    "outbox",
    "idempotency",
    "submissions",
    "api_keys",
    "forms",
    "workspaces",
)


async def migrate(conn: AsyncConnection[DictRow]) -> list[str]:
    """Applies the pending migrations in one transaction; returns their names."""
    applied: list[str] = []
    async with conn.transaction():
        # Held to the end of the transaction: a second `intake migrate` waits here, then
        # reads the ledger this one wrote.
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK,))
        await conn.execute(_CREATE_LEDGER)
        cursor = await conn.execute("SELECT version FROM schema_migrations")
        done = {row["version"] for row in await cursor.fetchall()}
        for migration in MIGRATIONS:
            if migration.version in done:
                continue
            for statement in migration.statements:
                await conn.execute(statement)
            await conn.execute(
                "INSERT INTO schema_migrations (version, name) VALUES (%s, %s)",
                (migration.version, migration.name),
            )
            applied.append(migration.name)
    return applied


async def schema_version(conn: AsyncConnection[DictRow]) -> int:
    """The last migration applied; 0 for a database never migrated."""
    try:
        cursor = await conn.execute("SELECT max(version) AS version FROM schema_migrations")
    except errors.UndefinedTable:
        # In autocommit the failed statement ends there; the connection stays usable.
        return 0
    row = await cursor.fetchone()
    return 0 if row is None or row["version"] is None else int(row["version"])
