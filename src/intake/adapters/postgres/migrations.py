"""The schema, as numbered migrations: one file each in migrations/, applied in the
order of their numbers. A migration, once released, is never edited: a change is a new
migration (migrations/README.md says which file holds the live version of each function).
Then the repeatable files (migrations/repeatable/): each is applied again whenever what
it sends differs from what was last applied, as schema_repeatables records.

`migrate` applies what is pending in one transaction that first takes an advisory lock,
so two processes running `intake migrate` at once apply each migration once: the second
waits for the first, then finds nothing left to do. PostgreSQL's DDL is transactional,
so a failed migration leaves the schema as it was.

The tables and indexes are the SQLite adapter's, in PostgreSQL's types. Identifiers and
keys are text COLLATE "C": they sort by code point, as in Python and SQLite, which
keeps the time-sortable ids in time order, and compare without locale rules.
"""

from __future__ import annotations

from psycopg import AsyncConnection, errors
from psycopg.rows import DictRow

from intake.adapters.sql_migrations import (
    Migration,
    Repeatable,
    load_migrations,
    load_repeatables,
)

MIGRATIONS: tuple[Migration, ...] = load_migrations("intake.adapters.postgres")
REPEATABLES: tuple[Repeatable, ...] = load_repeatables("intake.adapters.postgres")

LATEST_VERSION = MIGRATIONS[-1].version

# int.from_bytes(b"intake:m"): any constant will do, as long as it stays the same.
_LOCK = 7597137583183051373

_CREATE_LEDGER = """
    CREATE TABLE IF NOT EXISTS schema_migrations (
        version    integer PRIMARY KEY,
        name       text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
    )
"""

# Each version of a repeatable file ever applied, by its digest: the latest is the live
# one. A server is ready once its own version has been applied, so a server of the
# previous release keeps serving while the next one's `intake migrate` runs.
_CREATE_REPEATABLES = """
    CREATE TABLE IF NOT EXISTS schema_repeatables (
        name       text NOT NULL,
        digest     text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (name, digest)
    )
"""

# The tables the service writes, for tests that empty them; not schema_migrations.
TABLES = (
    "spam_tokens",
    "spam_scopes",
    "workspace_storage",
    "client_ip_sweep",
    "honeypot_hits",
    "secrets",
    "monthly_usage_shards",
    "deliveries",
    "autoresponses",
    "forward_erasures",
    "notification_recipients",
    "webhook_endpoints",
    "outbox",
    "idempotency",
    "submissions",
    "api_keys",
    "forms",
    "invitations",
    "session_notes",
    "sessions",
    "sign_in_tokens",
    "memberships",
    "users",
    "workspaces",
)


async def migrate(conn: AsyncConnection[DictRow]) -> list[str]:
    """Applies the pending migrations, then the repeatable files changed since they were
    last applied, in one transaction; returns their names."""
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
        applied += await _apply_repeatables(conn)
    return applied


async def _apply_repeatables(conn: AsyncConnection[DictRow]) -> list[str]:
    await conn.execute(_CREATE_REPEATABLES)
    # The latest version of each: a version applied before (a release rolled back, then
    # forward again) is applied again when it is not the live one.
    cursor = await conn.execute(
        "SELECT DISTINCT ON (name) name, digest FROM schema_repeatables"
        " ORDER BY name, applied_at DESC"
    )
    live = {row["name"]: row["digest"] for row in await cursor.fetchall()}
    applied: list[str] = []
    for repeatable in REPEATABLES:
        if live.get(repeatable.name) == repeatable.digest:
            continue
        for statement in repeatable.statements:
            await conn.execute(statement)
        await conn.execute(
            "INSERT INTO schema_repeatables (name, digest) VALUES (%s, %s)"
            " ON CONFLICT (name, digest) DO UPDATE SET applied_at = now()",
            (repeatable.name, repeatable.digest),
        )
        applied.append(repeatable.name)
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


async def repeatables_missing(conn: AsyncConnection[DictRow]) -> list[str]:
    """The repeatable files whose version here was never applied."""
    try:
        cursor = await conn.execute("SELECT name, digest FROM schema_repeatables")
    except errors.UndefinedTable:
        return [repeatable.name for repeatable in REPEATABLES]
    done = {(row["name"], row["digest"]) for row in await cursor.fetchall()}
    return [r.name for r in REPEATABLES if (r.name, r.digest) not in done]
