"""A destination added under its form's bound (domain/destination_limits.py): counted and
inserted in one transaction that two adds at once take in turn, so that they cannot both
see room for one."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

from intake.adapters.sql.executor import Executor, Transaction
from intake.domain.destination_limits import LimitReached

# PostgreSQL: the form's destination lock, an advisory lock rather than the form's row,
# whose lock would hold up the submissions that read the form meanwhile. SQLite's
# transaction holds the write lock from its start (BEGIN IMMEDIATE) and needs none.
_LOCK = "SELECT pg_advisory_xact_lock(hashtextextended('intake destinations ' || ?, 0))"


async def insert_capped(
    ex: Executor,
    insert: str,
    params: Mapping[str, object],
    *,
    count: str,
    form_id: str,
    at_most: int | None,
    refuse: Callable[[Transaction], Awaitable[None]] | None = None,
) -> int:
    """Runs `insert` unless the form has `at_most` rows by `count` already (LimitReached),
    or `refuse`, awaited first in the same transaction, raises; the rows it inserted."""

    async def steps(tx: Transaction) -> int:
        if tx.locks_rows and (at_most is not None or refuse is not None):
            await tx.execute(_LOCK, (form_id,))
        if refuse is not None:
            await refuse(tx)
        if at_most is not None:
            row = await tx.fetch_one(count, (form_id,))
            if row is not None and int(row["n"]) >= at_most:
                raise LimitReached(f"form {form_id} has {at_most} already")
        return await tx.execute(insert, params)

    return await ex.transaction(steps)
