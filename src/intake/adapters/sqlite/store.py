"""The SQLite store: the embedded default, one file, no server."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Final

from intake.adapters.form_cache import SQLITE_TTL, FormCache
from intake.adapters.relay_wakeup import RelayWakeup
from intake.adapters.sql.forms import SqlForms
from intake.adapters.sql.notes import SqlNotes
from intake.adapters.sql.secrets import SqlSealedValues, SqlSecrets
from intake.adapters.sql.spam import SqlSpamStatistics
from intake.adapters.sql.users import SqlUsers
from intake.adapters.sql.workspaces import SqlApiKeys, SqlWorkspaces, UsageStatements
from intake.adapters.sql_statements import STATUS_COUNTS
from intake.adapters.sqlite.connection import (
    DEFAULT_BUSY_TIMEOUT,
    MEMORY,
    absolute_path,
    database_path,
)
from intake.adapters.sqlite.dialect import SPAM
from intake.adapters.sqlite.executor import SqliteExecutor
from intake.adapters.sqlite.key_file import embedded_sealer
from intake.adapters.sqlite.migrations import MIGRATIONS, migrate
from intake.adapters.sqlite.submissions import SqliteSubmissions
from intake.adapters.sqlite.worker import Worker
from intake.ports.sealer import Sealer
from intake.ports.store_opening import MIGRATE_HINT, StoreNotPrepared

if TYPE_CHECKING:
    from intake.adapters.sql.activity import SqlActivity
    from intake.adapters.sql.deliveries import SqlDeliveries
    from intake.adapters.sql.destinations import SqlDestinations


_USAGE_STATEMENTS = UsageStatements(
    usage="SELECT count FROM monthly_usage WHERE workspace_id = ? AND period = ?",
    status_counts=STATUS_COUNTS,
)


class SqliteStore:
    def __init__(
        self, worker: Worker, applied_on_open: list[str] | None = None, *, sealer: Sealer
    ) -> None:
        self._worker = worker
        # Migrations applied when the store opened, reported by the first migrate() call
        # so that `intake migrate` on a fresh file says what it did.
        self._applied_on_open = list(applied_on_open or [])
        # Lookups kept briefly: a change made by another process (the `intake` command)
        # cannot be announced cheaply (adapters/form_cache.py).
        forms_cache = FormCache(SQLITE_TTL)
        forms_cache.connect()
        ex = SqliteExecutor(worker)
        self.workspaces: Final = SqlWorkspaces(ex, _USAGE_STATEMENTS, forms_cache)
        self.forms: Final = SqlForms(ex, sealer, forms_cache)
        self.api_keys: Final = SqlApiKeys(ex)
        # Commits ring it; a relay in this process waits on it.
        self._new_events = RelayWakeup()
        self.submissions: Final = SqliteSubmissions(worker, self._new_events)
        # Made when first used: most `intake` commands never reach the outbox's side,
        # whose modules (and the autoresponder's rules they load) then stay unloaded.
        self._sealer = sealer
        self._destinations: SqlDestinations | None = None
        self._deliveries: SqlDeliveries | None = None
        self.secrets: Final = SqlSecrets(ex, sealer)
        self.sealed: Final = SqlSealedValues(ex)
        self.users: Final = SqlUsers(ex)
        self.notes: Final = SqlNotes(ex, sealer)
        self._activity: SqlActivity | None = None
        self.spam: Final = SqlSpamStatistics(ex, SPAM)

    @property
    def destinations(self) -> SqlDestinations:
        if self._destinations is None:
            from intake.adapters.sql.destinations import SqlDestinations  # noqa: PLC0415

            self._destinations = SqlDestinations(SqliteExecutor(self._worker), self._sealer)
        return self._destinations

    @property
    def deliveries(self) -> SqlDeliveries:
        if self._deliveries is None:
            from intake.adapters.sql.deliveries import SqlDeliveries  # noqa: PLC0415
            from intake.adapters.sqlite.dialect_on_use import DELIVERIES  # noqa: PLC0415

            ex = SqliteExecutor(self._worker)
            self._deliveries = SqlDeliveries(ex, self._sealer, DELIVERIES)
        return self._deliveries

    @property
    def activity(self) -> SqlActivity:
        if self._activity is None:
            from intake.adapters.sql.activity import SqlActivity  # noqa: PLC0415
            from intake.adapters.sqlite.dialect_on_use import ACTIVITY  # noqa: PLC0415

            self._activity = SqlActivity(SqliteExecutor(self._worker), ACTIVITY)
        return self._activity

    @property
    def new_events(self) -> RelayWakeup:
        """Woken by this store's own commits (serve and relay in one process); another
        process's commit is found by the next poll, `seconds` at most. SQLite has no
        notifications across processes."""
        return self._new_events

    async def migrate(self) -> list[str]:
        applied = self._applied_on_open + await self._worker.run(migrate)
        self._applied_on_open = []
        return applied

    async def ping(self) -> None:
        await self._worker.run(_ping)

    async def close(self) -> None:
        await self._worker.close()


def _ping(conn: sqlite3.Connection) -> None:
    # A real read of the file, so a broken or vanished database shows here.
    conn.execute("SELECT count(*) FROM schema_migrations").fetchone()


_LEDGER_EXISTS = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"


def _check_schema(conn: sqlite3.Connection, path: str) -> list[str]:
    """Nothing applied: a database this intake cannot use yet is refused, untouched. The
    refusal names the file, as an absolute path: a relative one depends on where the
    command was run."""
    version = 0
    if conn.execute(_LEDGER_EXISTS).fetchone() is not None:
        row = conn.execute("SELECT coalesce(max(version), 0) FROM schema_migrations").fetchone()
        version = int(row[0])
    latest = MIGRATIONS[-1].version
    if version < latest:
        raise StoreNotPrepared(
            f"the database {absolute_path(path)} is not migrated (its schema is at version"
            f" {version}, this intake needs {latest}): {MIGRATE_HINT}"
        )
    return []


async def open_sqlite_store(
    url: str,
    *,
    busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
    create: bool = True,
    sealer: Sealer | None = None,
) -> SqliteStore:
    """Opens the database at a `sqlite:///` URL. With `create` (the default), makes it if
    need be (its folders 0700, its files 0600) and brings its schema up to date: the
    embedded store prepares itself. Without, it must exist and be migrated, else
    StoreNotPrepared, and nothing is made or changed. `busy_timeout` is how long, in
    seconds, to wait for another process's write lock before StorageUnavailable.
    `sealer` seals the secrets it keeps; None: the key in the file beside the database
    (adapters/sqlite/key_file.py), made if need be."""
    path = database_path(url)
    # An in-memory database is new on every open, whatever was asked: nothing to find.
    create = create or path == MEMORY
    worker = await Worker.start(path, busy_timeout=busy_timeout, create=create)
    try:
        applied = await (worker.run(migrate) if create else worker.run(_check_schema, path))
    except BaseException:
        await worker.close()
        raise
    try:
        sealer = sealer or embedded_sealer(path)
    except BaseException:
        await worker.close()
        raise
    return SqliteStore(worker, applied, sealer=sealer)
