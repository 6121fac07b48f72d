"""A destination added under its form's bound (domain/destination_limits.py): counted and
inserted in one transaction that first takes the form's destination lock, so two adds
at once cannot both see room for one. An advisory lock, not the form's row: a row lock
would hold up the submissions that read the form meanwhile."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

from intake.adapters.postgres.database import Connection, Database
from intake.domain.destination_limits import LimitReached

_LOCK = "SELECT pg_advisory_xact_lock(hashtextextended('intake destinations ' || %s, 0))"


async def insert_capped(
    db: Database,
    insert: str,
    params: Mapping[str, object],
    *,
    count: str,
    form_id: str,
    at_most: int | None,
    refuse: Callable[[Connection], Awaitable[None]] | None = None,
) -> int:
    """Runs `insert` unless the form has `at_most` rows by `count` already (LimitReached),
    or `refuse`, awaited first under the same lock, raises; the rows it inserted."""
    async with db.connection() as conn, conn.transaction():
        if at_most is not None or refuse is not None:
            await conn.execute(_LOCK, (form_id,))
        if refuse is not None:
            await refuse(conn)
        if at_most is not None:
            row = await (await conn.execute(count, (form_id,))).fetchone()
            if row is not None and int(row["n"]) >= at_most:
                raise LimitReached(f"form {form_id} has {at_most} already")
        return (await conn.execute(insert, params)).rowcount
