"""What `intake serve` does before its workers start: bring the schema up to date once,
and open everything a worker opens, so that a bad setting is said plainly, once.

PostgreSQL may start after intake (a fresh host, containers started together): then the
server starts anyway, not ready, and the schema is brought up to date in the background
as soon as the database answers, as it would have been at start."""

from __future__ import annotations

import asyncio
import logging
import threading
import time

from intake.config import Settings
from intake.domain.errors import StorageUnavailable
from intake.entrypoints.cli.runner import opened_schema, opened_serve_runtime

log = logging.getLogger("intake.cli")

RETRY_SECONDS = 1.0  # between attempts to reach a database that did not answer


def prepare(settings: Settings) -> None:
    """Migrates now, or, on a PostgreSQL server that cannot be reached yet, in a
    background thread once it answers. A SQLite file that cannot be opened will not
    mend itself: its StorageUnavailable is raised."""
    try:
        asyncio.run(_migrate(settings))
    except StorageUnavailable as error:
        if not settings.is_postgres:
            raise
        log.warning(
            "the database cannot be reached; serving, not ready (/readyz 503) until it"
            " answers, and migrating it then",
            extra={"error": str(error)},
        )
        _migrate_later(settings)
    asyncio.run(_open_once(settings))


async def _migrate(settings: Settings) -> None:
    # The store alone: the rest of a runtime would read tables not made yet.
    async with opened_schema(settings) as schema:
        applied = await schema.migrate()
        sealed = await schema.seal_plain_secrets()
    for name in applied:
        log.info("applied migration %s", name)
    if sealed.resealed:
        log.info("sealed %d secret(s) kept plain by an older version", sealed.resealed)


async def _open_once(settings: Settings) -> None:
    async with opened_serve_runtime(settings):
        pass


def _migrate_later(settings: Settings) -> None:
    def attempts() -> None:
        while True:
            time.sleep(RETRY_SECONDS)
            try:
                asyncio.run(_migrate(settings))
            except StorageUnavailable:
                continue
            log.info("the database answers; its schema is up to date")
            return

    # A daemon: it must not keep a stopping server alive. A migration cut short is
    # rolled back with its transaction.
    threading.Thread(target=attempts, name="intake-migrate", daemon=True).start()
