"""The schema, as numbered migrations applied in order, each in its own transaction.
A migration, once released, is never edited: a change is a new migration."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime

from attrs import frozen

from intake.adapters.sqlite.connection import transaction
from intake.adapters.sqlite.mapping import time_text


@frozen
class Migration:
    version: int
    name: str
    # One statement each: executescript() would commit on its own, outside our transaction.
    statements: tuple[str, ...]


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "0001_initial",
        (
            """
            CREATE TABLE workspaces (
                workspace_id  TEXT PRIMARY KEY,
                name          TEXT NOT NULL,
                plan          TEXT NOT NULL,
                monthly_limit INTEGER,
                active        INTEGER NOT NULL CHECK (active IN (0, 1)),
                created_at    TEXT
            )
            """,
            """
            CREATE TABLE monthly_usage (
                workspace_id TEXT NOT NULL REFERENCES workspaces (workspace_id),
                period       TEXT NOT NULL,  -- YYYY-MM, UTC
                count        INTEGER NOT NULL CHECK (count >= 0),
                PRIMARY KEY (workspace_id, period)
            ) WITHOUT ROWID
            """,
            """
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
            """,
            # Every public submission starts with this lookup.
            "CREATE UNIQUE INDEX forms_public_form_key ON forms (public_form_key)",
            "CREATE INDEX forms_workspace ON forms (workspace_id, form_id)",
            """
            CREATE TABLE api_keys (
                key_id       TEXT PRIMARY KEY,
                workspace_id TEXT NOT NULL REFERENCES workspaces (workspace_id),
                key_hash     BLOB NOT NULL UNIQUE,
                prefix       TEXT NOT NULL,
                created_at   TEXT NOT NULL,
                revoked_at   TEXT
            )
            """,
            "CREATE INDEX api_keys_workspace ON api_keys (workspace_id, created_at, key_id)",
            """
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
            """,
            "CREATE INDEX submissions_form ON submissions (form_id, submission_id)",
            """
            CREATE INDEX submissions_form_status
                ON submissions (form_id, status, submission_id)
            """,
            # No foreign keys: the event log outlives whatever it tells about.
            """
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
            """,
            # The relay's query: what is due and neither delivered nor given up on.
            """
            CREATE INDEX outbox_unpublished ON outbox (next_attempt_at, event_id)
                WHERE published_at IS NULL AND dead_at IS NULL
            """,
            """
            CREATE TABLE idempotency (
                scope         TEXT NOT NULL,
                key           TEXT NOT NULL,
                fingerprint   TEXT NOT NULL,
                submission_id TEXT NOT NULL,
                created_at    TEXT NOT NULL,
                PRIMARY KEY (scope, key)
            ) WITHOUT ROWID
            """,
            # For purging expired keys.
            "CREATE INDEX idempotency_created ON idempotency (created_at)",
        ),
    ),
    Migration(
        2,
        "0002_outbox_published",
        (
            # For purging published rows: only those, so the index costs nothing to a
            # commit (its row is unpublished) and the purge never reads the rest.
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
                endpoint_id     TEXT PRIMARY KEY,
                form_id         TEXT NOT NULL REFERENCES forms (form_id) ON DELETE CASCADE,
                url             TEXT NOT NULL,
                secret          TEXT NOT NULL,
                include_flagged INTEGER NOT NULL CHECK (include_flagged IN (0, 1)),
                created_at      TEXT,
                disabled_at     TEXT
            )
            """,
            # A form's endpoints, for the fan-out and the listing (in its order).
            """
            CREATE INDEX webhook_endpoints_form
                ON webhook_endpoints (form_id, created_at, endpoint_id)
            """,
            # The unique index serves the fan-out's lookup by form as well.
            """
            CREATE TABLE notification_recipients (
                recipient_id TEXT PRIMARY KEY,
                form_id      TEXT NOT NULL REFERENCES forms (form_id) ON DELETE CASCADE,
                email        TEXT NOT NULL,
                created_at   TEXT,
                UNIQUE (form_id, email)
            )
            """,
            # One event on its way to one destination. The unique triple makes the
            # fan-out idempotent, and its index serves the lookups by event (retry,
            # the purge's check, the cascade). No foreign key to the destination: a
            # removed endpoint leaves its deliveries as they were. Delivery state lives
            # here: the outbox's attempts, next_attempt_at, last_error and dead_at of
            # 0001 are left unused.
            """
            CREATE TABLE deliveries (
                delivery_id     TEXT PRIMARY KEY,
                event_id        TEXT NOT NULL REFERENCES outbox (event_id) ON DELETE CASCADE,
                kind            TEXT NOT NULL CHECK (kind IN ('webhook', 'email')),
                destination_id  TEXT NOT NULL,
                state           TEXT NOT NULL
                                CHECK (state IN ('pending', 'delivered', 'dead')),
                attempts        INTEGER NOT NULL CHECK (attempts >= 0),
                next_attempt_at TEXT,
                leased_until    TEXT,
                last_error      TEXT,
                delivered_at    TEXT,
                dead_at         TEXT,
                created_at      TEXT NOT NULL,
                UNIQUE (event_id, kind, destination_id),
                CHECK ((state = 'pending') = (next_attempt_at IS NOT NULL))
            )
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
        "0004_uploads",
        (
            # A form's upload policy, as a JSON object; NULL: uploads off, as for every
            # form made before.
            "ALTER TABLE forms ADD COLUMN uploads TEXT",
            # A submission's files, a JSON array (StoredFile.to_json): the row links its
            # blobs, written in the commit's transaction. Existing rows have none. Adding
            # a column with a constant default rewrites no row.
            "ALTER TABLE submissions ADD COLUMN files TEXT NOT NULL DEFAULT '[]'",
            # Secrets the processes share, made by the first that needs one (the key
            # that signs download links).
            """
            CREATE TABLE secrets (
                name       TEXT PRIMARY KEY,
                value      BLOB NOT NULL,
                created_at TEXT NOT NULL
            ) WITHOUT ROWID
            """,
        ),
    ),
    Migration(
        5,
        "0005_honeypot_hits",
        (
            # A form's filled honeypots, counted by day: what a caught bot writes in
            # place of a submission, so that its answer costs a real commit's time.
            """
            CREATE TABLE honeypot_hits (
                form_id TEXT NOT NULL REFERENCES forms (form_id),
                day     TEXT NOT NULL,  -- YYYY-MM-DD, UTC
                count   INTEGER NOT NULL CHECK (count > 0),
                PRIMARY KEY (form_id, day)
            ) WITHOUT ROWID
            """,
        ),
    ),
    Migration(
        6,
        "0006_storage_ceiling",
        (
            # A workspace's own ceiling, over INTAKE_WORKSPACE_STORAGE_LIMIT; NULL: none.
            "ALTER TABLE workspaces ADD COLUMN storage_limit INTEGER",
            # The bytes of files each workspace's stored submissions hold, whatever
            # their status: what the commit checks the storage ceiling against.
            """
            CREATE TABLE workspace_storage (
                workspace_id TEXT PRIMARY KEY REFERENCES workspaces (workspace_id),
                bytes        INTEGER NOT NULL CHECK (bytes >= 0)
            ) WITHOUT ROWID
            """,
            # The files stored before, counted once.
            """
            INSERT INTO workspace_storage (workspace_id, bytes)
            SELECT s.workspace_id, sum(json_extract(f.value, '$.size'))
            FROM submissions AS s, json_each(s.files) AS f
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
        ),
    ),
)

_CREATE_LEDGER = """
    CREATE TABLE IF NOT EXISTS schema_migrations (
        version    INTEGER PRIMARY KEY,
        name       TEXT NOT NULL,
        applied_at TEXT NOT NULL
    )
"""


def migrate(conn: sqlite3.Connection) -> list[str]:
    """Applies the pending migrations; returns their names. Each one checks the ledger
    under the write lock, so two processes starting at once apply it once."""
    with transaction(conn):
        conn.execute(_CREATE_LEDGER)
    applied: list[str] = []
    for migration in MIGRATIONS:
        with transaction(conn) as tx:
            done = conn.execute(
                "SELECT 1 FROM schema_migrations WHERE version = ?", (migration.version,)
            ).fetchone()
            if done is not None:
                tx.discard()
                continue
            for statement in migration.statements:
                conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                (migration.version, migration.name, time_text(datetime.now(UTC))),
            )
        applied.append(migration.name)
    return applied
