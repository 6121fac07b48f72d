"""A form's deletion in PostgreSQL (FormRepository.mark_deleted, .deleted,
.remove_deleted), each one transaction on one connection of the pool."""

from __future__ import annotations

from datetime import datetime

from intake.adapters import sql_statements as sql
from intake.adapters.postgres.database import Database
from intake.adapters.sql_statements import for_psycopg

_MARK_DELETED = for_psycopg(sql.MARK_FORM_DELETED)
_DELETED = for_psycopg(sql.DELETED_FORMS)
# The form's row locked first: two removals at once take turns, and the second finds
# nothing to remove.
_LOCK_FORM = "SELECT 1 FROM forms WHERE form_id = %s FOR UPDATE"
_REMOVABLE = for_psycopg(sql.FORM_REMOVABLE)
_REMOVE_HONEYPOT_HITS = for_psycopg(sql.REMOVE_FORM_HONEYPOT_HITS)
_REMOVE_FORM = for_psycopg(sql.REMOVE_FORM)


async def mark_deleted(db: Database, form_id: str, at: datetime) -> bool:
    return await db.execute(_MARK_DELETED, (at, False, form_id)) > 0


async def deleted(db: Database, after: str, limit: int) -> list[str]:
    return [row["form_id"] for row in await db.fetch_all(_DELETED, (after, limit))]


async def remove_deleted(db: Database, form_id: str) -> bool:
    async with db.connection() as conn, conn.transaction():
        await conn.execute(_LOCK_FORM, (form_id,))
        cursor = await conn.execute(_REMOVABLE, (form_id,))
        if await cursor.fetchone() is None:
            return False
        await conn.execute(_REMOVE_HONEYPOT_HITS, (form_id,))
        await conn.execute(_REMOVE_FORM, (form_id,))
    return True
