"""A destination added under its form's bound (domain/destination_limits.py): counted and
inserted in one transaction, whose write lock (BEGIN IMMEDIATE) keeps two adds at once
from both seeing room for one."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping

from intake.adapters.sqlite.connection import transaction
from intake.domain.destination_limits import LimitReached


def insert_capped(
    conn: sqlite3.Connection,
    insert: str,
    params: Mapping[str, object],
    *,
    count: str,
    form_id: str,
    at_most: int | None,
    refuse: Callable[[sqlite3.Connection], None] | None = None,
) -> int:
    """Runs `insert` unless the form has `at_most` rows by `count` already (LimitReached),
    or `refuse`, called first in the same transaction, raises; the rows it inserted."""
    with transaction(conn):
        if refuse is not None:
            refuse(conn)
        if at_most is not None and int(conn.execute(count, (form_id,)).fetchone()["n"]) >= at_most:
            raise LimitReached(f"form {form_id} has {at_most} already")
        return conn.execute(insert, params).rowcount
