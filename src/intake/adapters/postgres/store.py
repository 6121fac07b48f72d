"""The PostgreSQL store: the production database, shared by every process of intake.

The schema is not brought up to date on open, unlike the embedded SQLite store: with
several processes and a schema shared by all, changing it is a deployment step,
`intake migrate` (Store.migrate), run once before the new version starts serving.
Opening a store on a database that was never migrated, or migrated by an older intake,
succeeds, so that `intake migrate` can open it; but `ping()` (the readiness check)
raises StorageUnavailable saying to run `intake migrate`, and so does any operation
that meets a missing table.
"""

from __future__ import annotations

from typing import Final

from intake.adapters.form_cache import DEFAULT_TTL as DEFAULT_FORM_CACHE_TTL
from intake.adapters.form_cache import FormCache
from intake.adapters.postgres.channel_listener import ChannelListener
from intake.adapters.postgres.database import Database
from intake.adapters.postgres.dialect import ACTIVITY, DELIVERIES, SPAM
from intake.adapters.postgres.executor import PostgresExecutor
from intake.adapters.postgres.form_changes_listener import FormChangesListener
from intake.adapters.postgres.migrations import (
    LATEST_VERSION,
    migrate,
    repeatables_missing,
    schema_version,
)
from intake.adapters.postgres.submissions import PostgresSubmissions
from intake.adapters.sealing import process_sealer
from intake.adapters.sql.activity import SqlActivity
from intake.adapters.sql.deliveries import SqlDeliveries
from intake.adapters.sql.destinations import SqlDestinations
from intake.adapters.sql.forms import SqlForms
from intake.adapters.sql.notes import SqlNotes
from intake.adapters.sql.secrets import SqlSealedValues, SqlSecrets
from intake.adapters.sql.spam import SqlSpamStatistics
from intake.adapters.sql.users import SqlUsers
from intake.adapters.sql.workspaces import SqlApiKeys, SqlWorkspaces, UsageStatements
from intake.ports.sealer import Sealer
from intake.ports.store_opening import MIGRATE_HINT, StoreNotPrepared

DEFAULT_POOL_TIMEOUT = 2.0  # seconds a request may wait for a free connection
DEFAULT_OPEN_TIMEOUT = 10.0  # seconds to get the first connections on open


_USAGE_STATEMENTS = UsageStatements(
    # The month's shards added up (migrations/0004_*.sql); no row counts as nothing.
    usage="""
        SELECT coalesce(sum(count), 0) AS count FROM monthly_usage_shards
        WHERE workspace_id = ? AND period = ?
    """,
    # One range of submissions_form_created per form, whose entries hold the status
    # (migration 0022), counted as it is read (SQLite's statement reads it per status).
    status_counts="""
        SELECT f.form_id, c.accepted, c.spam, c.unverified
        FROM forms AS f CROSS JOIN LATERAL (
            SELECT count(*) FILTER (WHERE s.status = 'accepted') AS accepted,
                count(*) FILTER (WHERE s.status = 'spam') AS spam,
                count(*) FILTER (WHERE s.status = 'unverified') AS unverified
            FROM submissions AS s
            WHERE s.form_id = f.form_id AND s.created_at >= :since AND s.created_at < :until
        ) AS c
        WHERE f.workspace_id = :workspace_id AND f.deleted_at IS NULL
        ORDER BY f.form_id
    """,
)


class PostgresStore:
    def __init__(
        self, db: Database, *, sealer: Sealer, form_cache_ttl: float = DEFAULT_FORM_CACHE_TTL
    ) -> None:
        self._db = db
        # Emptied by every change to a form or workspace, by any process; serves nothing
        # while it cannot hear of them (form_changes_listener.py).
        cache: FormCache | None = None
        self._forms_listener: FormChangesListener | None = None
        if form_cache_ttl > 0:
            cache = FormCache(form_cache_ttl, wanted=self._listen_for_form_changes)
            self._forms_listener = FormChangesListener(db, cache)
        ex = PostgresExecutor(db)
        self.workspaces: Final = SqlWorkspaces(ex, _USAGE_STATEMENTS, cache)
        self.forms: Final = SqlForms(ex, sealer, cache)
        self.api_keys: Final = SqlApiKeys(ex)
        self.submissions: Final = PostgresSubmissions(db)
        self.destinations: Final = SqlDestinations(ex, sealer)
        # Connects on a relay's first wait for events only: serving needs none.
        self._outbox_listener = ChannelListener(db.url)
        self.deliveries: Final = SqlDeliveries(ex, sealer, DELIVERIES)
        self.secrets: Final = SqlSecrets(ex, sealer)
        self.sealed: Final = SqlSealedValues(ex)
        self.users: Final = SqlUsers(ex)
        self.notes: Final = SqlNotes(ex, sealer)
        self.activity: Final = SqlActivity(ex, ACTIVITY)
        self.spam: Final = SqlSpamStatistics(ex, SPAM)

    def _listen_for_form_changes(self) -> None:
        if self._forms_listener is not None:
            self._forms_listener.start()

    @property
    def new_events(self) -> ChannelListener:
        """LISTEN on a connection of its own: woken by any process's commit, at once;
        the timeout is the fallback. The first wait returns at once."""
        return self._outbox_listener

    async def migrate(self) -> list[str]:
        async with self._db.connection() as conn:
            return await migrate(conn)

    async def ping(self) -> None:
        """A real query, and the schema's version: a database that needs `intake
        migrate` cannot serve (StoreNotPrepared)."""
        async with self._db.connection() as conn:
            version = await schema_version(conn)
            missing = await repeatables_missing(conn) if version >= LATEST_VERSION else []
        if version < LATEST_VERSION:
            raise StoreNotPrepared(
                f"the database is not migrated (its schema is at version {version},"
                f" this intake needs {LATEST_VERSION}): {MIGRATE_HINT}"
            )
        if missing:
            raise StoreNotPrepared(
                f"the database lacks this intake's {', '.join(missing)}: {MIGRATE_HINT}"
            )

    async def close(self) -> None:
        try:
            if self._forms_listener is not None:
                await self._forms_listener.close()
            await self.submissions.close()
            await self._outbox_listener.close()
        finally:
            await self._db.close()


async def open_postgres_store(
    url: str,
    *,
    min_size: int = 1,
    max_size: int = 10,
    pool_timeout: float = DEFAULT_POOL_TIMEOUT,
    open_timeout: float = DEFAULT_OPEN_TIMEOUT,
    form_cache_ttl: float = DEFAULT_FORM_CACHE_TTL,
    wait_for_server: bool = False,
    require_schema: bool = False,
    sealer: Sealer | None = None,
) -> PostgresStore:
    """Opens a pool of `min_size` to `max_size` connections to a `postgresql://` URL and
    waits up to `open_timeout` seconds for the first ones (StorageUnavailable if the
    server cannot be reached), or, with `wait_for_server`, opens at once and connects
    when the server answers. A request waits up to `pool_timeout` seconds for a free
    connection, then fails with StorageUnavailable. Forms found by the submission path
    are kept until a change to them (adapters/form_cache.py), and `form_cache_ttl`
    seconds at most (0: never kept). Does not migrate (see the module); with
    `require_schema`, a database not migrated to this intake's schema is refused with
    StoreNotPrepared."""
    store = PostgresStore(
        await Database.open(
            url,
            min_size=min_size,
            max_size=max_size,
            pool_timeout=pool_timeout,
            open_timeout=open_timeout,
            wait_for_server=wait_for_server,
        ),
        form_cache_ttl=form_cache_ttl,
        # None: a key of this process alone, for a store opened by hand (tests); the
        # composition roots pass the configured one (INTAKE_SECRET_KEY).
        sealer=sealer or process_sealer(),
    )
    if require_schema:
        try:
            await store.ping()
        except BaseException:
            await store.close()
            raise
    return store
