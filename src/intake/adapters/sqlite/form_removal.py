"""A form's deletion in SQLite (FormRepository.mark_deleted, .deleted, .remove_deleted).
Functions run on the worker thread, as the repositories'."""

from __future__ import annotations

import sqlite3
from datetime import datetime

from intake.adapters import sql_statements as sql
from intake.adapters.sqlite import mapping
from intake.adapters.sqlite.connection import transaction


def mark_deleted(conn: sqlite3.Connection, form_id: str, at: datetime) -> bool:
    with transaction(conn):
        changed = conn.execute(sql.MARK_FORM_DELETED, (mapping.time_text(at), False, form_id))
        return changed.rowcount > 0


def deleted(conn: sqlite3.Connection, after: str, limit: int) -> list[str]:
    return [row["form_id"] for row in conn.execute(sql.DELETED_FORMS, (after, limit))]


def remove_deleted(conn: sqlite3.Connection, form_id: str) -> bool:
    # Under the write lock: nothing is committed for the form between the check and the
    # removal.
    with transaction(conn) as tx:
        if conn.execute(sql.FORM_REMOVABLE, (form_id,)).fetchone() is None:
            tx.discard()
            return False
        conn.execute(sql.REMOVE_FORM_HONEYPOT_HITS, (form_id,))
        conn.execute(sql.REMOVE_FORM, (form_id,))
    return True
